package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/spec"
)

// Ball is a midpoint–radius enclosure of a real number: the set [m − r,
// m + r] with m a math/big.Float of high precision and r a float64 upper
// bound (doc.go, "The ball centre"). r = +∞ is the whole line (m is then
// 0). The zero value is the exact 0. Ball implements spec.Scalar, so the
// registry's own forward rules run over it unchanged (irsem.DenoteAll):
// every operation returns a ball that contains the exact result of the
// operation applied to any reals of its operands' balls. Results are
// rounded to the precision set by ballCentre (ballPrec); operands of any
// precision are accepted.
type Ball struct {
	m *big.Float // nil: 0
	r float64
}

// ballPrec is the midpoint precision, in bits, of the ball operations; set
// by ballCentre around one evaluation (serialised by ballMu).
var ballPrec atomic.Uint32

// defaultBallPrec is ballPrec's value outside an evaluation.
const defaultBallPrec = 128

func init() { ballPrec.Store(defaultBallPrec) }

func bprec() uint { return uint(ballPrec.Load()) }

var bigZero = new(big.Float)

// whole is the unbounded ball.
var whole = Ball{r: inf}

func (x Ball) mid() *big.Float {
	if x.m == nil {
		return bigZero
	}
	return x.m
}

func (x Ball) unbounded() bool { return math.IsInf(x.r, 1) || math.IsNaN(x.r) }

func newF(p uint) *big.Float { return new(big.Float).SetPrec(p) }

// pow2Up is 2^k as a float64 upper bound: 2^-1074 below the subnormal
// range, +∞ above the float64 range.
func pow2Up(k int) float64 {
	switch {
	case k < -1074:
		return 0x1p-1074
	case k > 1023:
		return inf
	}
	return math.Ldexp(1, k)
}

// errOf bounds |m − exact| for m the rounding to nearest of an exact
// result at m's precision p: 0 when exact, else ulp(m) = 2^(e−p) (m =
// f·2^e, ½ ≤ |f| < 1), twice the rounding's half ulp (an exact result
// just below 2^(e−1) that rounded up to it has a half ulp of 2^(e−p−2)).
func errOf(m *big.Float, acc big.Accuracy) float64 {
	if acc == big.Exact || m.Sign() == 0 {
		return 0
	}
	return pow2Up(m.MantExp(nil) - int(m.Prec()))
}

// magUp is a float64 ≥ |m|; magDown a float64 in [0, |m|].
func magUp(m *big.Float) float64 {
	f, acc := new(big.Float).Abs(m).Float64()
	if acc == big.Below {
		f = up(f)
	}
	return f
}

func magDown(m *big.Float) float64 {
	f, acc := new(big.Float).Abs(m).Float64()
	if acc == big.Above {
		f = down(f)
	}
	return max(f, 0)
}

// ends returns big.Float endpoints lo ≤ m − r and hi ≥ m + r (outward
// rounding at precision p); x must be bounded.
func (x Ball) ends(p uint) (lo, hi *big.Float) {
	r := new(big.Float).SetFloat64(x.r)
	lo = newF(p).SetMode(big.ToNegativeInf).Sub(x.mid(), r)
	hi = newF(p).SetMode(big.ToPositiveInf).Add(x.mid(), r)
	return lo.SetMode(big.ToNearestEven), hi.SetMode(big.ToNearestEven)
}

// fromEnds is a ball containing [lo, hi] (lo ≤ hi): the midpoint
// fl(lo + hi)/2 and the radius (hi − lo)/2 plus that rounding, rounded up.
func fromEnds(lo, hi *big.Float, p uint) Ball {
	s := newF(p)
	acc := s.Add(lo, hi).Acc()
	e := errOf(s, acc)
	m := s.SetMantExp(s, -1)
	w := newF(64).SetMode(big.ToPositiveInf).Sub(hi, lo)
	half := mulUp(magUp(w), 0.5)
	return Ball{m: m, r: addUp(half, e)}
}

// Interval is the outward float64 rounding of x: the closed interval
// [m − r, m + r] with its endpoints rounded down and up.
func (x Ball) Interval() spec.Interval {
	if x.unbounded() {
		return spec.Interval{Lo: math.Inf(-1), Hi: inf}
	}
	lo, hi := x.ends(64)
	l, acc := lo.Float64()
	if acc == big.Above {
		l = down(l)
	}
	h, acc := hi.Float64()
	if acc == big.Below {
		h = up(h)
	}
	if l == 0 {
		l = 0 // +0, the interval's spelling
	}
	if h == 0 {
		h = 0
	}
	return spec.Interval{Lo: l, Hi: h}
}

// fromInterval is the ball of a float64 interval (unbounded when an
// endpoint is infinite).
func fromInterval(iv spec.Interval, p uint) Ball {
	if math.IsInf(iv.Lo, 0) || math.IsInf(iv.Hi, 0) || math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) {
		return whole
	}
	if iv.Lo == iv.Hi {
		return Ball{m: newF(p).SetFloat64(iv.Lo)}
	}
	return fromEnds(new(big.Float).SetFloat64(iv.Lo), new(big.Float).SetFloat64(iv.Hi), p)
}

// Add is the ball sum: m = fl(m₁ + m₂), r = r₁ + r₂ + the rounding of m.
func (x Ball) Add(y Ball) Ball { return x.add(y, bprec()) }

func (x Ball) add(y Ball, p uint) Ball {
	if x.unbounded() || y.unbounded() {
		return whole
	}
	m := newF(p)
	acc := m.Add(x.mid(), y.mid()).Acc()
	return Ball{m: m, r: addUp(addUp(x.r, y.r), errOf(m, acc))}
}

// Sub is x + (−y).
func (x Ball) Sub(y Ball) Ball { return x.add(y.Neg(), bprec()) }

// Neg is exact.
func (x Ball) Neg() Ball {
	if x.m == nil {
		return x
	}
	return Ball{m: new(big.Float).Neg(x.m), r: x.r}
}

// Mul is the ball product: m = fl(m₁m₂), r = |m₁|r₂ + |m₂|r₁ + r₁r₂ + the
// rounding of m ((m₁+a)(m₂+b) − m₁m₂ = m₁b + m₂a + ab). An exact zero
// times anything is an exact zero.
func (x Ball) Mul(y Ball) Ball { return x.mul(y, bprec()) }

func (x Ball) mul(y Ball, p uint) Ball {
	if x.IsZero() || y.IsZero() {
		return Ball{}
	}
	if x.unbounded() || y.unbounded() {
		return whole
	}
	m := newF(p)
	acc := m.Mul(x.mid(), y.mid()).Acc()
	r := addUp(mulUp(magUp(x.mid()), y.r), mulUp(magUp(y.mid()), x.r))
	r = addUp(addUp(r, mulUp(x.r, y.r)), errOf(m, acc))
	return Ball{m: m, r: r}
}

// Div is the ball quotient: for a divisor ball that excludes 0 (|m₂| >
// r₂), m = fl(m₁/m₂) and, with a = m₁ + α, b = m₂ + β, a/b − m₁/m₂ = (α −
// (m₁/m₂)β)/b, so r = (r₁ + |m₁/m₂|·r₂)/(|m₂| − r₂) + the rounding of m. A
// divisor that may be 0 gives the whole line (as spec.Interval does); it
// is never an error.
func (x Ball) Div(y Ball) (Ball, error) { return x.div(y, bprec()), nil }

func (x Ball) div(y Ball, p uint) Ball {
	if y.unbounded() || !(magDown(y.mid()) > y.r) {
		return whole
	}
	if x.IsZero() {
		return Ball{}
	}
	if x.unbounded() {
		return whole
	}
	m := newF(p)
	acc := m.Quo(x.mid(), y.mid()).Acc()
	e := errOf(m, acc)
	q := addUp(magUp(m), e)
	den := down(magDown(y.mid()) - y.r)
	if !(den > 0) {
		return whole
	}
	return Ball{m: m, r: addUp(divUp(addUp(x.r, mulUp(q, y.r)), den), e)}
}

// Compare is decided when the balls are disjoint (checked with the
// difference of the midpoints rounded toward 0's side, against the sum
// of the radii rounded up) or both are the same exact point.
func (x Ball) Compare(y Ball) (int, bool) {
	if x.unbounded() || y.unbounded() {
		return 0, false
	}
	if x.r == 0 && y.r == 0 {
		return x.mid().Cmp(y.mid()), true
	}
	s := new(big.Float).SetFloat64(addUp(x.r, y.r))
	d := newF(64).SetMode(big.ToNegativeInf).Sub(y.mid(), x.mid())
	if d.Cmp(s) > 0 {
		return -1, true
	}
	d = newF(64).SetMode(big.ToNegativeInf).Sub(x.mid(), y.mid())
	if d.Cmp(s) > 0 {
		return 1, true
	}
	return 0, false
}

// Max is the operand that is decided larger, else the hull of the
// maximum's range, [max(lo₁, lo₂), max(hi₁, hi₂)].
func (x Ball) Max(y Ball) Ball {
	if c, ok := x.Compare(y); ok {
		if c >= 0 {
			return x
		}
		return y
	}
	if x.unbounded() || y.unbounded() {
		return whole
	}
	p := bprec()
	l1, h1 := x.ends(p)
	l2, h2 := y.ends(p)
	return fromEnds(bigMax(l1, l2), bigMax(h1, h2), p)
}

// Min mirrors Max.
func (x Ball) Min(y Ball) Ball { return x.Neg().Max(y.Neg()).Neg() }

func bigMax(a, b *big.Float) *big.Float {
	if a.Cmp(b) >= 0 {
		return a
	}
	return b
}

// Abs is exact on a ball of one sign, else the hull [0, |m| + r].
func (x Ball) Abs() Ball {
	if x.unbounded() {
		return whole
	}
	if c, ok := x.Compare(Ball{}); ok {
		if c >= 0 {
			return x
		}
		return x.Neg()
	}
	p := bprec()
	h := newF(p).SetMode(big.ToPositiveInf).Add(new(big.Float).Abs(x.mid()), new(big.Float).SetFloat64(x.r))
	return fromEnds(bigZero, h, p)
}

// Relu is max(x, 0).
func (x Ball) Relu() Ball { return x.Max(Ball{}) }

// Clamp is min(max(x, lo), hi).
func (x Ball) Clamp(lo, hi Ball) Ball { return x.Max(lo).Min(hi) }

// Sign is exact where the sign is decided, else the hull of the signs the
// ball holds.
func (x Ball) Sign() Ball {
	if x.IsZero() {
		return Ball{}
	}
	if c, ok := x.Compare(Ball{}); ok {
		return x.FromInt(int64(c))
	}
	return x.signHull(-1)
}

// Step is 1 on a ball decided > 0, 0 on one decided ≤ 0, else [0, 1].
func (x Ball) Step() Ball {
	if c, ok := x.Compare(Ball{}); ok {
		if c > 0 {
			return x.FromInt(1)
		}
		return Ball{}
	}
	if !x.unbounded() {
		if _, hi := x.ends(bprec()); hi.Sign() <= 0 {
			return Ball{}
		}
	}
	return x.signHull(0)
}

// signHull is [lo, 1] for lo ∈ {−1, 0}, narrowed to [−1, 0] or [0, 1]
// when an endpoint of x is 0 (a bounded x).
func (x Ball) signHull(lo int64) Ball {
	a, b := big.NewFloat(float64(lo)), big.NewFloat(1)
	if !x.unbounded() && lo < 0 {
		l, h := x.ends(bprec())
		if l.Sign() >= 0 {
			a = bigZero
		}
		if h.Sign() <= 0 {
			b = bigZero
		}
	}
	return fromEnds(a, b, 64)
}

// Join is the hull of x and y (spec.Encloser).
func (x Ball) Join(y Ball) Ball {
	if x.unbounded() || y.unbounded() {
		return whole
	}
	p := bprec()
	l1, h1 := x.ends(p)
	l2, h2 := y.ends(p)
	lo := l1
	if l2.Cmp(l1) < 0 {
		lo = l2
	}
	return fromEnds(lo, bigMax(h1, h2), p)
}

// IsZero reports the exact 0.
func (x Ball) IsZero() bool { return x.r == 0 && x.mid().Sign() == 0 }

// Same reports equal midpoints and bit-equal radii.
func (x Ball) Same(y Ball) bool {
	return math.Float64bits(x.r) == math.Float64bits(y.r) && x.mid().Cmp(y.mid()) == 0
}

// FromInt is n rounded to the current precision (exact below 2^p).
func (Ball) FromInt(n int64) Ball {
	m := newF(bprec())
	acc := m.SetInt64(n).Acc()
	return Ball{m: m, r: errOf(m, acc)}
}

// FromRat is q rounded to nearest at the current precision, the radius
// its rounding (0 for a dyadic q of at most p bits: every float32 and
// float64 value).
func (Ball) FromRat(q *big.Rat) Ball {
	m := newF(bprec())
	acc := m.SetRat(q).Acc()
	return Ball{m: m, r: errOf(m, acc)}
}

// Float64 is the midpoint rounded to nearest.
func (x Ball) Float64() float64 {
	if x.unbounded() {
		return 0
	}
	f, _ := x.mid().Float64()
	return f
}

// String prints the midpoint (20 digits) and the radius.
func (x Ball) String() string {
	if x.unbounded() {
		return "[−∞, +∞]"
	}
	return fmt.Sprintf("%s±%.3g", x.mid().Text('g', 20), x.r)
}

// Kind is "ball".
func (Ball) Kind() string { return "ball" }
