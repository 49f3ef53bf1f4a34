package spec

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// Interval is an outward-rounded closed interval [Lo, Hi] of reals with
// float64 endpoints. float64 endpoints are deliberately tighter than the
// binary32 values they usually enclose (a binary32 execution can be checked
// against them value by value) and every endpoint is still an exact
// dyadic rational, so containment is checkable exactly (Contains).
//
// Meaning and invariant: the interval denotes the set of reals x with
// Lo ≤ x ≤ Hi, where an infinite endpoint means "unbounded on that side";
// Lo ≤ Hi, Lo ≠ +∞, Hi ≠ −∞, and NaN never appears. An operation that would
// produce NaN returns the whole line [−∞, +∞]. Zero endpoints are always
// +0, so Same is meaningful. The zero value is [0, 0]. The operations
// assume valid operands; build intervals with NewInterval, Point,
// FromInt or FromRat when the endpoints are not known to be valid.
//
// Soundness: for every operation, the exact real result of the operation
// applied to any reals in the operand intervals lies in the result.
//   - Add and Sub compute each endpoint with one rounding to nearest and
//     use the Fast2Sum error-free transformation (operands ordered by
//     magnitude, so no intermediate can overflow) to move only an endpoint
//     whose rounding went inward, by one ulp. Overflow to ±∞ on the
//     outward side is kept; an inward overflow becomes ±MaxFloat64.
//   - Mul takes the four corner products (0·∞ = 0: an infinite endpoint
//     is a bound, not a member), each checked with math.FMA for its
//     rounding error; results below 2^-960 in magnitude (where the FMA
//     residual may underflow) are widened by one ulp on both sides, but
//     never across 0, since the sign of the exact product is known.
//   - Div returns the whole line when the divisor contains 0 (§7), else
//     the four corner quotients, each checked with the residual
//     fma(−q, b, a); tiny operands or results are widened by one ulp as
//     for Mul, and ∞/∞ gives the whole line.
//   - Sqrt clips the operand to [0, ∞) (a DomainError when Hi < 0) and
//     checks the residual fma(−s, s, x).
//   - Max, Min, Abs, Neg, Sign and Step are exact.
//
// Trusted boundary: Exp, Log, Log1p, Tanh, Sin and Cos use Go's float64
// math library, which is not correctly rounded. Its error is assumed to be at
// most 2 ulps of the result (the FreeBSD/Cephes/SLEEF algorithms it
// derives from document about 1 ulp; against a 320-bit reference the
// tests observe up to ~1.5 ulps for the amd64 assembly Exp and ~1.4 for
// Sin/Cos, and fail if any observed error exceeds half of what is
// allowed). Each endpoint is computed from the monotone pieces of the
// function and widened outward by 4 ulps (ivTransUlps), then clamped to the
// function's range (exp ≥ 0; tanh, sin, cos ∈ [−1, 1]; log1p(v) ≤ v and
// has the sign of v, which makes tiny arguments exact at the upper end).
// Sin and Cos additionally absorb the absolute error of Go's argument
// reduction, |x|·2^-90 for |x| < 2^29 (Cody–Waite with a three-part π/4)
// and 2^-40 beyond (Payne–Hanek followed by a subtraction that can cancel),
// and include ±1 whenever a maximum or minimum may lie in the interval
// (decided with generous slack, so a doubtful extremum is included).
// Exact special points are kept exact: exp(0) = 1, log(1) = 0, log1p(0) =
// tanh(0) = sin(0) = 0, cos(0) = 1. Go's math.Log1p is pure Go (no
// assembly on amd64 or arm64) and returns v itself for |v| < 2^-54, so
// subnormal arguments need no scaling.
//
// Go's amd64 math.Log mishandles subnormal inputs (golang/go#56600), so
// Log evaluates it only at normal arguments, scaling a subnormal endpoint
// by 2^54 and subtracting an enclosure of 54·ln 2.
//
// Log is defined only for Lo > 0 (and Log1p only for Lo > −1): an interval
// reaching 0 (−1) or below is a DomainError rather than an enclosure with
// a −∞ endpoint, since the enclosed value might lie outside the domain.
type Interval struct{ Lo, Hi float64 }

// ivTransUlps is how many ulps the endpoints of Exp, Log, Log1p, Tanh, Sin
// and Cos are widened outward.
const ivTransUlps = 4

// ivTinyFMA bounds the magnitudes below which an FMA residual may underflow
// and lose its sign; such results are widened on both sides instead.
var ivTinyFMA = math.Ldexp(1, -960)

var (
	ivPosInf = math.Inf(1)
	ivNegInf = math.Inf(-1)
	ivWhole  = Interval{ivNegInf, ivPosInf}
)

// NewInterval returns [lo, hi], or an error when an endpoint is NaN, lo >
// hi, lo = +∞ or hi = −∞ (an empty set of reals).
func NewInterval(lo, hi float64) (Interval, error) {
	if lo != lo || hi != hi || lo > hi || math.IsInf(lo, 1) || math.IsInf(hi, -1) {
		return Interval{}, &DomainError{Op: "new", Scalar: "interval",
			Reason: fmt.Sprintf("[%v, %v] is not a non-empty interval", lo, hi)}
	}
	return mkInterval(lo, hi), nil
}

// Point returns the degenerate interval [f, f]. Because an Interval
// encloses reals, Point(+∞) is [MaxFloat64, +∞] (every real beyond the
// largest float), Point(−∞) is [−∞, −MaxFloat64] and Point(NaN) is the
// whole line.
func Point(f float64) Interval {
	switch {
	case f != f:
		return ivWhole
	case math.IsInf(f, 1):
		return Interval{math.MaxFloat64, ivPosInf}
	case math.IsInf(f, -1):
		return Interval{ivNegInf, -math.MaxFloat64}
	}
	return mkInterval(f, f)
}

// Hull returns the smallest interval containing a and b.
func Hull(a, b Interval) Interval { return Interval{min(a.Lo, b.Lo), max(a.Hi, b.Hi)} }

// mkInterval builds a result: zero endpoints become +0, and anything
// invalid (NaN, crossed endpoints) becomes the whole line.
func mkInterval(lo, hi float64) Interval {
	if !(lo <= hi) {
		return ivWhole
	}
	if lo == 0 {
		lo = 0
	}
	if hi == 0 {
		hi = 0
	}
	return Interval{lo, hi}
}

func ivDown(f float64) float64 { return math.Nextafter(f, ivNegInf) }

func ivUp(f float64) float64 { return math.Nextafter(f, ivPosInf) }

func ivFinite(f float64) bool { return !math.IsInf(f, 0) && f == f }

// ivAddBounds returns a lower and an upper bound of the exact a+b, using
// an error-free transformation when the rounded sum is finite. a and b
// are not infinities of opposite sign.
func ivAddBounds(a, b float64) (lo, hi float64) {
	s := a + b
	if math.IsInf(s, 0) {
		if math.IsInf(a, 0) || math.IsInf(b, 0) {
			return s, s // an unbounded end stays unbounded
		}
		if s > 0 { // overflow: the exact sum exceeds MaxFloat64
			return math.MaxFloat64, s
		}
		return s, -math.MaxFloat64
	}
	// Fast2Sum with |a| ≥ |b| is error-free and, unlike TwoSum, cannot
	// overflow in its intermediate s − a (which is exact).
	if math.Abs(a) < math.Abs(b) {
		a, b = b, a
	}
	err := b - (s - a)
	switch {
	case !ivFinite(err): // spurious intermediate overflow: give up one ulp
		return ivDown(s), ivUp(s)
	case err < 0:
		return ivDown(s), s
	case err > 0:
		return s, ivUp(s)
	}
	return s, s
}

// ivMulBounds returns a lower and an upper bound of the exact a·b, with the
// convention 0·∞ = 0 for corner products.
func ivMulBounds(a, b float64) (lo, hi float64) {
	if a == 0 || b == 0 {
		return 0, 0
	}
	p := a * b
	if math.IsInf(p, 0) {
		if math.IsInf(a, 0) || math.IsInf(b, 0) {
			return p, p
		}
		if p > 0 {
			return math.MaxFloat64, p
		}
		return p, -math.MaxFloat64
	}
	if math.Abs(p) < ivTinyFMA {
		return ivSignedWiden(p, (a > 0) == (b > 0))
	}
	switch e := math.FMA(a, b, -p); {
	case e < 0:
		return ivDown(p), p
	case e > 0:
		return p, ivUp(p)
	}
	return p, p
}

// ivSignedWiden widens a rounded-to-nearest, non-zero-exact result v by one
// ulp on each side, but not across 0: the exact value is positive when pos
// holds and negative otherwise.
func ivSignedWiden(v float64, pos bool) (lo, hi float64) {
	if pos {
		return max(ivDown(v), 0), ivUp(v)
	}
	return ivDown(v), min(ivUp(v), 0)
}

// ivDivBounds returns a lower and an upper bound of the exact a/b for b ≠ 0,
// with a/±∞ = 0 for a finite a (the infimum or supremum of the corner);
// ∞/∞ gives the whole line.
func ivDivBounds(a, b float64) (lo, hi float64) {
	switch {
	case math.IsInf(a, 0) && math.IsInf(b, 0):
		return ivNegInf, ivPosInf
	case a == 0 || math.IsInf(b, 0):
		return 0, 0
	}
	q := a / b
	switch {
	case math.IsInf(a, 0):
		return q, q
	case math.IsInf(q, 1):
		return math.MaxFloat64, q
	case math.IsInf(q, -1):
		return q, -math.MaxFloat64
	case math.Abs(q) < ivTinyFMA || math.Abs(a) < ivTinyFMA:
		return ivSignedWiden(q, (a > 0) == (b > 0))
	}
	// a/b − q = r/b with r = a − q·b, exact in sign.
	r := math.FMA(-q, b, a)
	switch {
	case r == 0:
		return q, q
	case (r > 0) == (b > 0):
		return q, ivUp(q)
	}
	return ivDown(q), q
}

// ivSqrtBounds returns a lower and an upper bound of √v for v ≥ 0.
func ivSqrtBounds(v float64) (lo, hi float64) {
	if v == 0 || math.IsInf(v, 1) {
		return v, v
	}
	s := math.Sqrt(v)
	if v < ivTinyFMA {
		return max(ivDown(s), 0), ivUp(s)
	}
	switch r := math.FMA(-s, s, v); {
	case r < 0:
		return ivDown(s), s
	case r > 0:
		return s, ivUp(s)
	}
	return s, s
}

// Add returns an enclosure of {a+b : a ∈ x, b ∈ y}.
func (x Interval) Add(y Interval) Interval {
	lo, _ := ivAddBounds(x.Lo, y.Lo)
	_, hi := ivAddBounds(x.Hi, y.Hi)
	return mkInterval(lo, hi)
}

// Sub returns an enclosure of {a−b : a ∈ x, b ∈ y}.
func (x Interval) Sub(y Interval) Interval { return x.Add(y.Neg()) }

// Mul returns an enclosure of {a·b : a ∈ x, b ∈ y} from the four corners.
func (x Interval) Mul(y Interval) Interval {
	l1, h1 := ivMulBounds(x.Lo, y.Lo)
	l2, h2 := ivMulBounds(x.Lo, y.Hi)
	l3, h3 := ivMulBounds(x.Hi, y.Lo)
	l4, h4 := ivMulBounds(x.Hi, y.Hi)
	return mkInterval(min(l1, l2, l3, l4), max(h1, h2, h3, h4))
}

// Neg returns [−Hi, −Lo] (exact).
func (x Interval) Neg() Interval { return mkInterval(-x.Hi, -x.Lo) }

// Div returns an enclosure of {a/b : a ∈ x, b ∈ y}; when y contains 0 the
// result is the whole line [−∞, +∞]. It never fails.
func (x Interval) Div(y Interval) (Interval, error) {
	if y.Lo <= 0 && y.Hi >= 0 {
		return ivWhole, nil
	}
	l1, h1 := ivDivBounds(x.Lo, y.Lo)
	l2, h2 := ivDivBounds(x.Lo, y.Hi)
	l3, h3 := ivDivBounds(x.Hi, y.Lo)
	l4, h4 := ivDivBounds(x.Hi, y.Hi)
	return mkInterval(min(l1, l2, l3, l4), max(h1, h2, h3, h4)), nil
}

// Abs returns {|a| : a ∈ x} (exact), splitting on the sign of the range.
func (x Interval) Abs() Interval {
	switch {
	case x.Lo >= 0:
		return x
	case x.Hi <= 0:
		return x.Neg()
	}
	return mkInterval(0, max(-x.Lo, x.Hi))
}

// Max returns {max(a,b) : a ∈ x, b ∈ y} (exact).
func (x Interval) Max(y Interval) Interval { return mkInterval(max(x.Lo, y.Lo), max(x.Hi, y.Hi)) }

// Min returns {min(a,b) : a ∈ x, b ∈ y} (exact).
func (x Interval) Min(y Interval) Interval { return mkInterval(min(x.Lo, y.Lo), min(x.Hi, y.Hi)) }

// Sign returns the hull of the signs over the range: [sign(Lo), sign(Hi)].
func (x Interval) Sign() Interval { return mkInterval(fsign(x.Lo), fsign(x.Hi)) }

func ivStep64(f float64) float64 {
	if f > 0 {
		return 1
	}
	return 0
}

// Step returns [step(Lo), step(Hi)]: [0,1] when the range straddles 0 or
// touches it from above, exact otherwise (Step([0,0]) = [0,0]).
func (x Interval) Step() Interval { return mkInterval(ivStep64(x.Lo), ivStep64(x.Hi)) }

// Sqrt returns [sqrtDown(max(Lo,0)), sqrtUp(Hi)]: the part of the range
// below 0 is outside the domain and ignored; Hi < 0 is a DomainError.
func (x Interval) Sqrt() (Interval, error) {
	if x.Hi < 0 {
		return Interval{}, &DomainError{Op: "sqrt", Scalar: "interval", Reason: "negative range " + x.String()}
	}
	lo, _ := ivSqrtBounds(max(x.Lo, 0))
	_, hi := ivSqrtBounds(x.Hi)
	return mkInterval(lo, hi), nil
}

func ivWidenDown(f float64, n int) float64 {
	for range n {
		f = ivDown(f)
	}
	return f
}

func ivWidenUp(f float64, n int) float64 {
	for range n {
		f = ivUp(f)
	}
	return f
}

// monotoneUp encloses an increasing f over x, widening by ivTransUlps except
// where exact(v) supplies an exactly known value.
func (x Interval) monotoneUp(f func(float64) float64, exact func(float64) (float64, bool)) (lo, hi float64) {
	if v, ok := exact(x.Lo); ok {
		lo = v
	} else {
		lo = ivWidenDown(f(x.Lo), ivTransUlps)
	}
	if v, ok := exact(x.Hi); ok {
		hi = v
	} else {
		hi = ivWidenUp(f(x.Hi), ivTransUlps)
	}
	return lo, hi
}

// Exp returns an enclosure of e^x (trusted boundary: see Interval).
func (x Interval) Exp() (Interval, error) {
	lo, hi := x.monotoneUp(math.Exp, func(v float64) (float64, bool) {
		switch {
		case v == 0:
			return 1, true
		case math.IsInf(v, 0):
			return math.Exp(v), true // 0 or +∞
		}
		return 0, false
	})
	return mkInterval(max(lo, 0), hi), nil
}

// ivLogBounds returns a lower and an upper bound of ln v for v > 0. A
// subnormal v is scaled by 2^54 first (exactly), and 54·ln 2 is subtracted
// with outward rounding: Go's amd64 math.Log does not normalise subnormal
// inputs (log(5e-324) gives −709.09 instead of −744.44; golang/go#56600).
func ivLogBounds(v float64) (lo, hi float64) {
	switch {
	case v == 1:
		return 0, 0
	case math.IsInf(v, 1):
		return v, v
	case v >= 0x1p-1022:
		l := math.Log(v)
		return ivWidenDown(l, ivTransUlps), ivWidenUp(l, ivTransUlps)
	}
	l := math.Log(v * 0x1p54)
	// ln 2 lies in [Ln2, ivUp(Ln2)]: the float64 constant is below it.
	klo, _ := ivMulBounds(54, math.Ln2)
	_, khi := ivMulBounds(54, ivUp(math.Ln2))
	lo, _ = ivAddBounds(ivWidenDown(l, ivTransUlps), -khi)
	_, hi = ivAddBounds(ivWidenUp(l, ivTransUlps), -klo)
	return lo, hi
}

// Log returns an enclosure of ln x (trusted boundary: see Interval); an
// interval with Lo ≤ 0 is a DomainError.
func (x Interval) Log() (Interval, error) {
	if !(x.Lo > 0) {
		return Interval{}, &DomainError{Op: "log", Scalar: "interval", Reason: "range " + x.String() + " reaches 0 or below"}
	}
	lo, _ := ivLogBounds(x.Lo)
	_, hi := ivLogBounds(x.Hi)
	return mkInterval(lo, hi), nil
}

// Log1p returns an enclosure of ln(1+x) (trusted boundary: see Interval);
// an interval with Lo ≤ −1 is a DomainError. The widened endpoints are
// clamped with two exact facts about the real function: log1p(v) ≤ v for
// every v > −1, and log1p(v) has the sign of v.
func (x Interval) Log1p() (Interval, error) {
	if !(x.Lo > -1) {
		return Interval{}, &DomainError{Op: "log1p", Scalar: "interval", Reason: "range " + x.String() + " reaches −1 or below"}
	}
	lo, hi := x.monotoneUp(math.Log1p, func(v float64) (float64, bool) {
		if v == 0 || math.IsInf(v, 1) {
			return v, true
		}
		return 0, false
	})
	hi = min(hi, x.Hi)
	if x.Lo >= 0 {
		lo = max(lo, 0)
	}
	if x.Hi <= 0 {
		hi = min(hi, 0)
	}
	return mkInterval(lo, hi), nil
}

// Tanh returns an enclosure of tanh x within [−1, 1] (trusted boundary:
// see Interval).
func (x Interval) Tanh() (Interval, error) {
	lo, hi := x.monotoneUp(math.Tanh, func(v float64) (float64, bool) {
		switch {
		case v == 0:
			return 0, true
		case math.IsInf(v, 0):
			return math.Tanh(v), true // ±1
		}
		return 0, false
	})
	return mkInterval(max(lo, -1), min(hi, 1)), nil
}

// ivTrigSlack is the absolute error allowed for Go's sin/cos argument
// reduction at |v| (see Interval).
func ivTrigSlack(v float64) float64 {
	a := math.Abs(v)
	if a < 1<<29 {
		return math.Ldexp(a, -90)
	}
	return math.Ldexp(1, -40)
}

// ivMayContain reports whether some offset + 2πk lies in [lo, hi] for a
// finite interval; it errs towards true.
func ivMayContain(lo, hi, offset float64) bool {
	const twoPi = 2 * math.Pi
	tlo, thi := (lo-offset)/twoPi, (hi-offset)/twoPi
	slack := 1e-9 + 1e-12*max(math.Abs(tlo), math.Abs(thi))
	return math.Ceil(tlo-slack) <= thi+slack
}

// trig encloses sin (cos=false) or cos (cos=true) over x.
func (x Interval) trig(cos bool) Interval {
	f, maxAt, minAt := math.Sin, math.Pi/2, -math.Pi/2
	if cos {
		f, maxAt, minAt = math.Cos, 0, math.Pi
	}
	if x.Lo == 0 && x.Hi == 0 {
		if cos {
			return Interval{1, 1}
		}
		return Interval{}
	}
	// A range of 6 or more contains a whole period up to rounding slack.
	if !ivFinite(x.Lo) || !ivFinite(x.Hi) || x.Hi-x.Lo >= 6 {
		return Interval{-1, 1}
	}
	bound := func(v float64) (lo, hi float64) {
		y, s := f(v), ivTrigSlack(v)
		return ivDown(ivWidenDown(y, ivTransUlps) - s), ivUp(ivWidenUp(y, ivTransUlps) + s)
	}
	l1, h1 := bound(x.Lo)
	l2, h2 := bound(x.Hi)
	lo, hi := min(l1, l2), max(h1, h2)
	if ivMayContain(x.Lo, x.Hi, maxAt) {
		hi = 1
	}
	if ivMayContain(x.Lo, x.Hi, minAt) {
		lo = -1
	}
	return mkInterval(max(lo, -1), min(hi, 1))
}

// Sin returns an enclosure of sin x within [−1, 1] (trusted boundary: see
// Interval).
func (x Interval) Sin() (Interval, error) { return x.trig(false), nil }

// Cos returns an enclosure of cos x within [−1, 1] (trusted boundary: see
// Interval).
func (x Interval) Cos() (Interval, error) { return x.trig(true), nil }

// Compare is decided only when the intervals do not overlap (−1 or 1) or
// both are the same single point (0).
func (x Interval) Compare(y Interval) (int, bool) {
	switch {
	case x.Hi < y.Lo:
		return -1, true
	case x.Lo > y.Hi:
		return 1, true
	case x.Lo == x.Hi && y.Lo == y.Hi && x.Lo == y.Lo:
		return 0, true
	}
	return 0, false
}

// IsZero reports x = [0, 0].
func (x Interval) IsZero() bool { return x.Lo == 0 && x.Hi == 0 }

// Same reports that both endpoints are bit-identical.
func (x Interval) Same(y Interval) bool {
	return math.Float64bits(x.Lo) == math.Float64bits(y.Lo) && math.Float64bits(x.Hi) == math.Float64bits(y.Hi)
}

// ivEnclose returns the tightest float64 interval containing r: a point when
// r is a float64, else the two neighbouring floats (with ±MaxFloat64 and
// an infinity beyond the float range).
//
// The exactness of the nearest float is decided by an exact comparison,
// not by big.Rat.Float64's exact flag: that flag wrongly reports true for
// values far below the subnormal range whose quotient has no remainder
// (121/2^1842 gives (0, true) with Go 1.26; see golang/go#56164).
func ivEnclose(r *big.Rat) Interval {
	f, _ := r.Float64()
	switch {
	case math.IsInf(f, 1):
		return Interval{math.MaxFloat64, ivPosInf}
	case math.IsInf(f, -1):
		return Interval{ivNegInf, -math.MaxFloat64}
	}
	switch new(big.Rat).SetFloat64(f).Cmp(r) {
	case 0:
		return mkInterval(f, f)
	case -1:
		return mkInterval(f, ivUp(f))
	}
	return mkInterval(ivDown(f), f)
}

// FromInt returns the tightest float64 enclosure of n (a point when
// |n| ≤ 2^53).
func (Interval) FromInt(n int64) Interval {
	if n >= -1<<53 && n <= 1<<53 {
		return mkInterval(float64(n), float64(n))
	}
	return ivEnclose(new(big.Rat).SetInt64(n))
}

// FromRat returns the tightest float64 enclosure of r.
func (Interval) FromRat(r *big.Rat) Interval { return ivEnclose(r) }

// FromSmallFrac is FromRat(p/q) for a dyadic p/q (q > 0 a power of two,
// |p| < 2^53): p/q is then a float64 exactly (p has at most 53 bits and
// |p/q| ≥ 2^-62 is normal), so its tightest enclosure is the point p/q;
// it reports false otherwise (irsem.SmallFracer: the payload of an
// interval evaluation — every binary32 weight is such a fraction —
// converts without a big.Rat per element, which was half of compare's
// samples on resnet18 64×64 once its exact centre fell back to intervals).
func (Interval) FromSmallFrac(p, q int64) (Interval, bool) {
	if q <= 0 || q&(q-1) != 0 || p <= -1<<53 || p >= 1<<53 {
		return Interval{}, false
	}
	f := float64(p) / float64(q) // exact: p has ≤ 53 bits, q a power of two
	return mkInterval(f, f), true
}

// Contains reports lo ≤ r ≤ hi in exact arithmetic (an infinite endpoint
// bounds nothing).
func (x Interval) Contains(r *big.Rat) bool {
	if x.Lo != x.Lo || x.Hi != x.Hi || math.IsInf(x.Lo, 1) || math.IsInf(x.Hi, -1) {
		return false
	}
	if !math.IsInf(x.Lo, -1) && new(big.Rat).SetFloat64(x.Lo).Cmp(r) > 0 {
		return false
	}
	return math.IsInf(x.Hi, 1) || new(big.Rat).SetFloat64(x.Hi).Cmp(r) >= 0
}

// Width returns an upper bound of Hi − Lo (rounded up; +∞ when unbounded).
func (x Interval) Width() float64 {
	_, w := ivAddBounds(x.Hi, -x.Lo)
	return w
}

// Float64 returns the midpoint: 0 for the whole line and the infinite
// endpoint for a half-unbounded interval.
func (x Interval) Float64() float64 {
	switch {
	case math.IsInf(x.Lo, -1) && math.IsInf(x.Hi, 1):
		return 0
	case math.IsInf(x.Lo, 0):
		return x.Lo
	case math.IsInf(x.Hi, 0):
		return x.Hi
	case x.Lo == x.Hi:
		return x.Lo
	}
	m := x.Lo/2 + x.Hi/2 // no overflow; may lose a bit for subnormals
	return min(max(m, x.Lo), x.Hi)
}

// String prints "[lo, hi]" with shortest decimals.
func (x Interval) String() string {
	return "[" + strconv.FormatFloat(x.Lo, 'g', -1, 64) + ", " + strconv.FormatFloat(x.Hi, 'g', -1, 64) + "]"
}

// Kind is "interval".
func (Interval) Kind() string { return "interval" }

// Relu is max(x, 0).
func (x Interval) Relu() Interval { return x.Max(Interval{}) }

// Clamp is min(max(x, lo), hi).
func (x Interval) Clamp(lo, hi Interval) Interval { return x.Max(lo).Min(hi) }
