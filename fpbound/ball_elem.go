package fpbound

import (
	"math"
	"math/big"
	"math/bits"
	"sort"
	"sync"

	"github.com/tlcheck/tlcheck/spec"
)

// The elementary functions over Ball (doc.go, "The ball centre"). Each
// f(X) for X = [m ± r] is f's value at the exact point m, computed by a
// series in ball arithmetic at a working precision above the ball
// precision with the series' remainder added to the radius, plus L·r,
// where L bounds |f′| over X (the mean value theorem).

// guard is the working precision's margin over the ball precision.
const guard = 32

// bigFar is 2^20: beyond it exp's argument is outside every ball the
// evaluation needs (e^(−2^20) < 2^-1074).
const bigFar = 1 << 20

// expPoint encloses e^x for an exact x: e^x = (e^y)^(2^s) with y = x/2^s,
// |y| < 2^-8, and e^y = Σ_{k≤N} y^k/k! + R, |R| ≤ |y|^(N+1)/(N+1)!·e^|y| <
// 2·2^(−8(N+1)) (Taylor's theorem with Lagrange's remainder); the sum and
// the s squarings run in ball arithmetic, which charges every rounding.
// |x| ≥ 2^20: [0 ± 2^-1074] below (e^x < 2^-1074), the whole line above.
func expPoint(x *big.Float, p uint) Ball {
	if x.Sign() == 0 {
		return Ball{m: newF(p).SetInt64(1)}
	}
	e := x.MantExp(nil)
	if e > 21 {
		if x.Sign() < 0 {
			return Ball{r: 0x1p-1074}
		}
		return whole
	}
	s := max(0, e+8)
	ey := e - s // |y| < 2^ey ≤ 2^-8
	wp := p + uint(s) + guard
	y := Ball{m: new(big.Float).SetMantExp(x, -s)}
	// N with 1 + ey·(N+1) ≤ −(wp+2): the remainder is below 2^-(wp+2).
	n := int(wp+3)/(-ey) + 1
	one := Ball{m: newF(wp).SetInt64(1)}
	sum, term := one, one
	for k := 1; k <= n; k++ {
		term = term.mul(y, wp).div(Ball{m: newF(64).SetInt64(int64(k))}, wp)
		sum = sum.add(term, wp)
	}
	sum.r = addUp(sum.r, pow2Up(1+ey*(n+1)))
	for range s {
		sum = sum.mul(sum, wp)
	}
	return sum
}

// Exp encloses e^X: e^m ± e^m·(e^r − 1), with e^r − 1 ≤ 2r for r ≤ ½
// (e^r − 1 ≤ r·e^r) and e^r − 1 bounded by expPoint(r) otherwise; a ball
// entirely below −2^20 is [0 ± 2^-1074].
func (x Ball) Exp() (Ball, error) {
	if x.unbounded() {
		return whole, nil
	}
	p := bprec()
	if _, hi := x.ends(p); hi.Cmp(big.NewFloat(-bigFar)) < 0 {
		return Ball{r: 0x1p-1074}, nil
	}
	f := expPoint(x.mid(), p)
	if x.r == 0 || f.unbounded() {
		return f, nil
	}
	var em1 float64
	if x.r <= 0.5 {
		em1 = mulUp(2, x.r)
	} else {
		er := expPoint(new(big.Float).SetFloat64(x.r), 64)
		if er.unbounded() {
			return whole, nil
		}
		em1 = addUp(magUp(er.mid()), er.r) // e^r − 1 < e^r
	}
	f.r = addUp(f.r, mulUp(addUp(magUp(f.mid()), f.r), em1))
	return f, nil
}

// atanhSeries encloses 2·atanh(z) = 2·Σ_j z^(2j+1)/(2j+1) for a ball z
// with |z| < 2^ez ≤ ½: the sum to j = N in ball arithmetic and the
// remainder 2·Σ_{j>N} |z|^(2j+1)/(2j+1) ≤ 2·|z|^(2N+3)/(1 − z²) ≤
// 4·2^(ez(2N+3)) below 2^-(wp+2).
func atanhSeries(z Ball, ez int, wp uint) Ball {
	n := max((int(wp+4)/(-ez)-3)/2+1, 0)
	z2 := z.mul(z, wp)
	pw := z
	sum := z
	for j := 1; j <= n; j++ {
		pw = pw.mul(z2, wp)
		sum = sum.add(pw.div(Ball{m: newF(64).SetInt64(int64(2*j + 1))}, wp), wp)
	}
	sum = sum.add(sum, wp)
	sum.r = addUp(sum.r, pow2Up(2+ez*(2*n+3)))
	return sum
}

// ln2 encloses ln 2 = 2·atanh(1/3), cached per working precision.
var (
	ln2Mu    sync.Mutex
	ln2Cache = map[uint]Ball{}
)

func ln2(wp uint) Ball {
	ln2Mu.Lock()
	defer ln2Mu.Unlock()
	if b, ok := ln2Cache[wp]; ok {
		return b
	}
	third := Ball{m: newF(wp).SetInt64(1)}.div(Ball{m: newF(wp).SetInt64(3)}, wp)
	b := atanhSeries(third, -1, wp)
	ln2Cache[wp] = b
	return b
}

// logPoint encloses ln x for an exact x > 0: x = f·2^k with f ∈ [½, 1),
// doubled (k − 1) below 0.707 so f ∈ [0.707, 1.415); ln x = k·ln 2 +
// 2·atanh(z), z = (f − 1)/(f + 1), |z| < 0.1716 < 2^-2.
func logPoint(x *big.Float, p uint) Ball {
	f := new(big.Float)
	k := x.MantExp(f)
	if f.Cmp(big.NewFloat(0.707)) < 0 {
		f.SetMantExp(f, 1)
		k--
	}
	wp := p + guard + uint(bits.Len(uint(max(k, -k))))
	fb := Ball{m: f}
	one := Ball{m: newF(wp).SetInt64(1)}
	z := fb.add(one.Neg(), wp).div(fb.add(one, wp), wp)
	l := atanhSeries(z, -2, wp)
	if k != 0 {
		l = l.add(ln2(wp).mul(Ball{m: newF(64).SetInt64(int64(k))}, wp), wp)
	}
	return l
}

// Log encloses ln X for a ball with lo > 0: ln m ± r/lo (|ln′| ≤ 1/lo on
// X); a ball reaching 0 is a DomainError, as over spec.Interval.
func (x Ball) Log() (Ball, error) {
	if x.unbounded() {
		return whole, &spec.DomainError{Op: "log", Scalar: "ball", Reason: "unbounded range"}
	}
	p := bprec()
	lo, _ := x.ends(p)
	if lo.Sign() <= 0 {
		return whole, &spec.DomainError{Op: "log", Scalar: "ball", Reason: "range " + x.String() + " reaches 0 or below"}
	}
	if x.mid().Cmp(big.NewFloat(1)) == 0 && x.r == 0 {
		return Ball{}, nil
	}
	f := logPoint(x.mid(), p)
	if x.r > 0 {
		f.r = addUp(f.r, divUp(x.r, magDown(lo)))
	}
	return f, nil
}

// Log1p is ln(1 + X) (1 + X computed in ball arithmetic); lo ≤ −1 is a
// DomainError, as over spec.Interval.
func (x Ball) Log1p() (Ball, error) {
	if x.IsZero() {
		return Ball{}, nil
	}
	y := x.add(Ball{m: newF(64).SetInt64(1)}, bprec()+guard)
	r, err := y.Log()
	if err != nil {
		return whole, &spec.DomainError{Op: "log1p", Scalar: "ball", Reason: "range " + x.String() + " reaches −1 or below"}
	}
	return r, nil
}

// Tanh encloses tanh X: at m, sign(m)·(1 − E)/(1 + E) with E = e^(−2|m|)
// (exact scaling, expPoint), plus r (|tanh′| ≤ 1); the whole line gives
// [−1, 1].
func (x Ball) Tanh() (Ball, error) {
	if x.unbounded() {
		return fromEnds(big.NewFloat(-1), big.NewFloat(1), 64), nil
	}
	if x.mid().Sign() == 0 && x.r == 0 {
		return Ball{}, nil
	}
	p := bprec()
	wp := p + guard
	a := new(big.Float).Abs(x.mid())
	e := expPoint(new(big.Float).SetMantExp(new(big.Float).Neg(a), 1), wp)
	one := Ball{m: newF(wp).SetInt64(1)}
	t := one.add(e.Neg(), wp).div(one.add(e, wp), wp)
	if x.mid().Sign() < 0 {
		t = t.Neg()
	}
	t.r = addUp(t.r, x.r)
	return t, nil
}

// sqrtPoint encloses √x for an exact x ≥ 0: s = big.Float's root, and
// |√x − s| = |x − s²|/(√x + s) ≤ |x − s²|/s, the residual computed
// rounded up.
func sqrtPoint(x *big.Float, p uint) Ball {
	if x.Sign() == 0 {
		return Ball{}
	}
	s := newF(p).Sqrt(x)
	sq := new(big.Float).SetPrec(2*p+2).Mul(s, s) // exact: 2p bits suffice
	d := newF(64).SetMode(big.AwayFromZero).Sub(x, sq)
	return Ball{m: s, r: divUp(magUp(d), magDown(s))}
}

// Sqrt encloses √X: a ball with lo > 0 is √m ± r/(2√lo); one reaching 0
// is the hull [0, √hi] (|√a − √b| ≤ √|a − b|), a ball below 0 a
// DomainError, as over spec.Interval.
func (x Ball) Sqrt() (Ball, error) {
	if x.unbounded() {
		return whole, nil
	}
	p := bprec()
	lo, hi := x.ends(p)
	switch {
	case hi.Sign() < 0:
		return whole, &spec.DomainError{Op: "sqrt", Scalar: "ball", Reason: "negative range " + x.String()}
	case lo.Sign() <= 0:
		h := sqrtPoint(hi, p)
		top := newF(p).SetMode(big.ToPositiveInf).Add(h.mid(), new(big.Float).SetFloat64(h.r))
		return fromEnds(bigZero, top, p), nil
	}
	f := sqrtPoint(x.mid(), p)
	if x.r > 0 {
		rl := down(math.Sqrt(magDown(lo)))
		f.r = addUp(f.r, divUp(x.r, mulUp(2, rl)))
		if !(rl > 0) {
			f.r = inf
		}
	}
	return f, nil
}

// atanSeries encloses atan z = Σ_j (−1)^j z^(2j+1)/(2j+1) for a ball z
// with |z| < 2^ez ≤ ½: the alternating series' terms decrease, so the
// remainder after j = N is at most |z|^(2N+3)/(2N+3) < 2^(ez(2N+3)).
func atanSeries(z Ball, ez int, wp uint) Ball {
	n := max((int(wp+2)/(-ez)-3)/2+1, 0)
	z2 := z.mul(z, wp).Neg()
	pw, sum := z, z
	for j := 1; j <= n; j++ {
		pw = pw.mul(z2, wp)
		sum = sum.add(pw.div(Ball{m: newF(64).SetInt64(int64(2*j + 1))}, wp), wp)
	}
	sum.r = addUp(sum.r, pow2Up(ez*(2*n+3)))
	return sum
}

// pi encloses π = 16·atan(1/5) − 4·atan(1/239) (Machin), cached per
// working precision.
var (
	piMu    sync.Mutex
	piCache = map[uint]Ball{}
)

func pi(wp uint) Ball {
	piMu.Lock()
	defer piMu.Unlock()
	if b, ok := piCache[wp]; ok {
		return b
	}
	one := Ball{m: newF(wp).SetInt64(1)}
	inv := func(n int64) Ball { return one.div(Ball{m: newF(64).SetInt64(n)}, wp) }
	a := atanSeries(inv(5), -2, wp).mul(Ball{m: newF(64).SetInt64(16)}, wp)
	b := atanSeries(inv(239), -7, wp).mul(Ball{m: newF(64).SetInt64(4)}, wp)
	v := a.add(b.Neg(), wp)
	piCache[wp] = v
	return v
}

// maxTrigExp bounds the arguments sin and cos reduce: |x| < 2^40.
const maxTrigExp = 40

// sinCosPoint encloses sin x and cos x for an exact x with |x| < 2^40:
// k = x/(π/2) rounded to an integer, t = x − k·π/2 in ball arithmetic
// (|t| < 0.8), the Taylor series of sin t and cos t, alternating with
// decreasing terms for |t| < 1, each with the remainder bounded by its
// next term; then the quadrant k mod 4.
func sinCosPoint(x *big.Float, p uint) (sin, cos Ball) {
	e := x.MantExp(nil)
	wp := p + guard + uint(max(e, 0))
	half := pi(wp)
	half = Ball{m: new(big.Float).SetMantExp(half.mid(), -1), r: mulUp(half.r, 0.5)}
	q := newF(uint(max(e, 0))+64).Quo(x, half.mid())
	if q.Sign() >= 0 {
		q.Add(q, big.NewFloat(0.5))
	} else {
		q.Sub(q, big.NewFloat(0.5))
	}
	k, _ := q.Int(nil)
	kb := Ball{m: newF(uint(k.BitLen()) + 64).SetInt(k)}
	t := Ball{m: x}.add(half.mul(kb, wp).Neg(), wp)
	t2 := t.mul(t, wp).Neg()
	series := func(first Ball, from int64) Ball {
		term, sum := first, first
		for j := from; ; j += 2 {
			term = term.mul(t2, wp).div(Ball{m: newF(64).SetInt64(j * (j + 1))}, wp)
			if b := addUp(magUp(term.mid()), term.r); b < pow2Up(-int(wp)-4) || j > 4*int64(wp) {
				sum.r = addUp(sum.r, b)
				return sum
			}
			sum = sum.add(term, wp)
		}
	}
	s := series(t, 2)
	c := series(Ball{m: newF(wp).SetInt64(1)}, 1)
	switch new(big.Int).And(k, big.NewInt(3)).Int64() {
	case 1:
		return c, s.Neg()
	case 2:
		return s.Neg(), c.Neg()
	case 3:
		return c.Neg(), s
	}
	return s, c
}

// Sin encloses sin X: sin m ± r (|sin′| ≤ 1), clamped to [−1, 1] by
// the whole line; |m| ≥ 2^40 evaluates over spec.Interval (a fallback).
func (x Ball) Sin() (Ball, error) { return x.trig(false) }

// Cos: see Sin.
func (x Ball) Cos() (Ball, error) { return x.trig(true) }

func (x Ball) trig(cos bool) (Ball, error) {
	switch {
	case x.unbounded():
		return fromEnds(big.NewFloat(-1), big.NewFloat(1), 64), nil
	case x.mid().Sign() != 0 && x.mid().MantExp(nil) > maxTrigExp:
		if cos {
			return x.fallback("cos", spec.Interval.Cos)
		}
		return x.fallback("sin", spec.Interval.Sin)
	}
	s, c := sinCosPoint(x.mid(), bprec())
	if cos {
		s = c
	}
	s.r = addUp(s.r, x.r)
	return s, nil
}

// twoOverSqrtPi encloses 2/√π from π's ball: √ by sqrtPoint at the
// midpoint plus r_π/(2√3) ≤ r_π/2 (π > 3), then the ball quotient.
func twoOverSqrtPi(wp uint) Ball {
	pb := pi(wp)
	s := sqrtPoint(pb.mid(), wp)
	s.r = addUp(s.r, mulUp(pb.r, 0.5))
	return Ball{m: newF(wp).SetInt64(2)}.div(s, wp)
}

// maxErfArg bounds the arguments erf's series is summed at: |x| ≤ 4.
const maxErfArg = 4

// erfPoint encloses erf x for an exact |x| ≤ 4: (2/√π)·Σ_n (−1)^n
// x^(2n+1)/(n!·(2n+1)). The terms' ratio is below x²/(n+1), so from n ≥
// x² on they decrease and the alternating remainder is at most the first
// omitted term; the largest term, below e^(x²) < 2^24, sets the extra
// working precision.
func erfPoint(x *big.Float, p uint) Ball {
	if x.Sign() == 0 {
		return Ball{}
	}
	wp := p + guard + 24
	xb := Ball{m: x}
	x2 := xb.mul(xb, wp).Neg()
	x2f, _ := x.Float64()
	x2f *= x2f
	pw, sum := xb, xb
	for n := int64(1); ; n++ {
		pw = pw.mul(x2, wp).div(Ball{m: newF(64).SetInt64(n)}, wp)
		term := pw.div(Ball{m: newF(64).SetInt64(2*n + 1)}, wp)
		if b := addUp(magUp(term.mid()), term.r); float64(n) >= x2f+1 && b < pow2Up(-int(wp)-4) {
			sum.r = addUp(sum.r, b)
			break
		}
		sum = sum.add(term, wp)
	}
	return sum.mul(twoOverSqrtPi(wp), wp)
}

// Erf encloses erf X: erf m ± (2/√π)·r (|erf′| ≤ 2/√π < 1.1284); |m| > 4
// evaluates over spec.Interval (a fallback, named in Centre.Fallback).
func (x Ball) Erf() (Ball, error) {
	if x.unbounded() {
		return fromEnds(big.NewFloat(-1), big.NewFloat(1), 64), nil
	}
	if new(big.Float).Abs(x.mid()).Cmp(big.NewFloat(maxErfArg)) > 0 {
		return x.fallback("erf", spec.Interval.Erf)
	}
	f := erfPoint(x.mid(), bprec())
	f.r = addUp(f.r, mulUp(1.1284, x.r))
	return f, nil
}

// ErfDeriv is (2/√π)·e^(−X²) in ball arithmetic.
func (x Ball) ErfDeriv() (Ball, error) {
	e, err := x.Mul(x).Neg().Exp()
	if err != nil {
		return whole, err
	}
	return e.Mul(twoOverSqrtPi(bprec() + guard)), nil
}

// fallbacks counts the elements a function was evaluated over float64
// intervals; ballEval clears and reads it around one evaluation (under
// ballMu), fbMu guards it against Ball used elsewhere.
var (
	fbMu      sync.Mutex
	fallbacks = map[string]int{}
)

func (x Ball) fallback(name string, f func(spec.Interval) (spec.Interval, error)) (Ball, error) {
	fbMu.Lock()
	fallbacks[name]++
	fbMu.Unlock()
	iv, err := f(x.Interval())
	if err != nil {
		return whole, err
	}
	return fromInterval(iv, bprec()), nil
}

// clearFallbacks empties the counts.
func clearFallbacks() {
	fbMu.Lock()
	clear(fallbacks)
	fbMu.Unlock()
}

// fallbackNames lists the counted fallbacks, sorted.
func fallbackNames() []string {
	fbMu.Lock()
	defer fbMu.Unlock()
	var s []string
	for k := range fallbacks {
		s = append(s, k)
	}
	sort.Strings(s)
	return s
}
