package ranges

import (
	"fmt"
	"math"
	"math/big"
	"strconv"

	"github.com/tlcheck/tlcheck/spec"
)

// Interval32 is a closed interval [Lo, Hi] with binary32 endpoints (§7's
// Interval32). It is valid when both endpoints are finite and Lo ≤ Hi;
// every operation of this package rejects an invalid operand and fails
// rather than return an invalid or unbounded result, so a trace never
// contains an infinite endpoint.
//
// Canonical form: a zero endpoint is always +0 (the results of every
// operation, and of NewInterval32, are canonical), so two enclosures are
// the same exactly when their endpoint bit patterns agree, which is what a
// range certificate compares.
//
// # Outward rounding
//
// An operation is computed in two steps. First spec.Interval, whose
// float64 operations are outward rounded and sound (for every reals a, b
// in the operands, the exact real a∘b lies in the float64 result), encloses
// the exact real result set R = {a∘b : a ∈ x, b ∈ y}. Then each float64
// endpoint is rounded outward to the binary32 grid: Lo down (RoundDown32),
// Hi up (RoundUp32). Rounding an enclosure outward again still encloses R.
//
// # Why a rule encloses the binary32 execution too
//
// A binary32 operation (spec.Binary32: + − × ÷ sqrt, and the trusted
// elementary functions) returns round-to-nearest of the exact operation
// on its binary32 operands: v = RN32(a∘b). Suppose, by induction over the
// graph, that the binary32 operands a, b lie in the operand enclosures x,
// y. Then a∘b ∈ R ⊆ [lo64, hi64], and since RN32 is monotone and
// RoundDown32(lo64), RoundUp32(hi64) are binary32 numbers bracketing
// [lo64, hi64], RN32(a∘b) lies in [RoundDown32(lo64), RoundUp32(hi64)] —
// the result enclosure. The same holds for the exact real execution (the
// exact operands lie in x and y, so their exact result lies in R). So one
// enclosure per value covers both executions, provided the enclosure
// follows the binary32 execution operation by operation: a reduction is
// enclosed only when its summation order is the one the enclosure folds
// in (a fixed left fold from +0), because a binary32 sum in another order
// rounds different partial sums.
//
// Some rules need no rounding at all: Relu, Abs, Max, Min and Neg return one
// of their operands' values (or its negation), exactly, in binary32 as over
// the reals, so their results are exact images of the operand enclosures;
// rearrangements (permute, transpose, broadcast_to, reshape, flatten,
// concat, detach) copy values, so they copy enclosures. A few rules use
// what binary32 and the reals share beyond the operation itself: a value
// times itself is ≥ 0 in both (Square), a value minus itself is 0 in both,
// and softmax and sigmoid results lie in [0, 1] in both (see the rules).
//
// The elementary functions (Exp, Log, Tanh, Sin, Cos) rest on spec's stated
// trusted boundary: spec.Interval widens Go's math library by 4 ulps, and
// spec.Binary32 rounds the same library's float64 result to binary32, so
// the binary32 value is enclosed as long as the library stays within the
// 2 ulps that spec.Interval assumes.
//
// Binary32 signed zeros, infinities and NaN need no special case: −0 has
// value 0, and a finite enclosure cannot contain an infinity or a NaN, so
// a binary32 execution that overflows or produces a NaN is outside every
// trace and the checker's replay rejects it.
type Interval32 struct {
	Lo, Hi float32
}

// Interval32Tensor is a tensor of enclosures, one per element: the input
// box of a trace, say.
type Interval32Tensor = spec.Tensor[Interval32]

// NewInterval32 returns the canonical [lo, hi] (a −0 endpoint becomes +0),
// or an error when an endpoint is not finite or lo > hi.
func NewInterval32(lo, hi float32) (Interval32, error) {
	x := Interval32{Lo: lo, Hi: hi}
	if err := x.Valid(); err != nil {
		return Interval32{}, err
	}
	return x.canon(), nil
}

// Point32 returns the degenerate interval [f, f], or an error when f is
// not finite.
func Point32(f float32) (Interval32, error) { return NewInterval32(f, f) }

// Valid reports why x is not a valid enclosure (an endpoint NaN or
// infinite, or Lo > Hi), or returns nil.
func (x Interval32) Valid() error {
	if !finite32(x.Lo) || !finite32(x.Hi) {
		return fmt.Errorf("interval %s has a non-finite endpoint", x)
	}
	if x.Lo > x.Hi {
		return fmt.Errorf("interval %s has lo > hi", x)
	}
	return nil
}

// Contains reports lo ≤ v ≤ hi (false for a NaN). Comparing two binary32
// numbers is exact, so this is the exact rational comparison.
func (x Interval32) Contains(v float32) bool { return x.Lo <= v && v <= x.Hi }

// ContainsRat reports lo ≤ r ≤ hi in exact rational arithmetic.
func (x Interval32) ContainsRat(r *big.Rat) bool {
	if r == nil {
		return false
	}
	return x.Wide().Contains(r)
}

// Wide returns x as a float64 spec.Interval (exactly: binary32 endpoints
// are float64 numbers), with zero endpoints as +0.
func (x Interval32) Wide() spec.Interval {
	return spec.Interval{Lo: float64(x.Lo) + 0, Hi: float64(x.Hi) + 0}
}

// Bits returns the endpoints' IEEE 754 binary32 encodings.
func (x Interval32) Bits() Bits32 {
	return Bits32{Lo: math.Float32bits(x.Lo), Hi: math.Float32bits(x.Hi)}
}

// Same reports that both endpoints are bit-identical (so +0 and −0 differ).
func (x Interval32) Same(y Interval32) bool { return x.Bits() == y.Bits() }

// String prints "[lo, hi]" with shortest round-tripping decimals.
func (x Interval32) String() string {
	return "[" + strconv.FormatFloat(float64(x.Lo), 'g', -1, 32) + ", " +
		strconv.FormatFloat(float64(x.Hi), 'g', -1, 32) + "]"
}

// canon turns zero endpoints into +0.
func (x Interval32) canon() Interval32 {
	if x.Lo == 0 {
		x.Lo = 0
	}
	if x.Hi == 0 {
		x.Hi = 0
	}
	return x
}

func finite32(f float32) bool { return !math.IsInf(float64(f), 0) && f == f }

// RoundDown32 returns the largest binary32 number ≤ f (−Inf when f is
// below −MaxFloat32, NaN for NaN). Within the binary32 range Go's
// conversion rounds to nearest, ties to even (the Go specification
// requires IEEE 754 rounding), and the result is stepped down by one ulp
// when the rounding went up; the overflow cases are decided explicitly,
// since the specification leaves them to the implementation.
func RoundDown32(f float64) float32 {
	switch {
	case f != f:
		return float32(math.NaN())
	case f > math.MaxFloat32:
		return math.MaxFloat32
	case f < -math.MaxFloat32:
		return float32(math.Inf(-1))
	}
	r := float32(f)
	if float64(r) > f {
		r = math.Nextafter32(r, float32(math.Inf(-1)))
	}
	return r
}

// RoundUp32 returns the smallest binary32 number ≥ f (+Inf when f is above
// MaxFloat32, NaN for NaN); see RoundDown32.
func RoundUp32(f float64) float32 {
	switch {
	case f != f:
		return float32(math.NaN())
	case f > math.MaxFloat32:
		return float32(math.Inf(1))
	case f < -math.MaxFloat32:
		return -math.MaxFloat32
	}
	r := float32(f)
	if float64(r) < f {
		r = math.Nextafter32(r, float32(math.Inf(1)))
	}
	return r
}

// Round32 rounds a float64 enclosure outward to the binary32 grid:
// [RoundDown32(Lo), RoundUp32(Hi)]. It fails when the result has a
// non-finite endpoint (the enclosure is unbounded, or beyond the binary32
// range, where a binary32 execution would overflow).
func Round32(v spec.Interval) (Interval32, error) {
	if v.Lo != v.Lo || v.Hi != v.Hi || v.Lo > v.Hi {
		return Interval32{}, fmt.Errorf("enclosure %s is not an interval", v)
	}
	x := Interval32{Lo: RoundDown32(v.Lo), Hi: RoundUp32(v.Hi)}
	if !finite32(x.Lo) || !finite32(x.Hi) {
		return Interval32{}, fmt.Errorf("enclosure %s is not bounded within the binary32 range", v)
	}
	return x.canon(), nil
}

// EncloseRat returns the tightest Interval32 containing the exact rational
// r: a point when r is a binary32 number, else the two neighbours around
// it, so that it holds both r and its binary32 rounding (how payload
// values and constants enter a trace). It fails beyond the binary32 range.
func EncloseRat(r *big.Rat) (Interval32, error) {
	if r == nil {
		return Interval32{}, fmt.Errorf("missing rational")
	}
	if num, den := r.Num(), r.Denom(); num.IsInt64() && den.IsInt64() {
		if p, q := num.Int64(), den.Int64(); -maxExact <= p && p <= maxExact && q <= maxExact {
			return Round32(encloseQuotient(float64(p), float64(q)))
		}
	}
	var iv spec.Interval
	return Round32(iv.FromRat(r))
}

// maxExact is 2^53: integers up to it in magnitude are float64 numbers.
const maxExact = 1 << 53

// encloseQuotient encloses p/q for integers |p| ≤ 2^53 and 0 < q ≤ 2^53
// (both exact float64 numbers): d = RN64(p/q), and the sign of the
// residual p − d·q (exactly representable for a correctly rounded quotient,
// and computed by one fused multiply-add, so its sign is the exact one)
// says on which side of d the quotient lies.
func encloseQuotient(p, q float64) spec.Interval {
	d := p / q
	switch r := math.FMA(-d, q, p); {
	case r > 0: // p/q > d
		return spec.Interval{Lo: d + 0, Hi: math.Nextafter(d, math.Inf(1)) + 0}
	case r < 0:
		return spec.Interval{Lo: math.Nextafter(d, math.Inf(-1)) + 0, Hi: d + 0}
	}
	return spec.Interval{Lo: d + 0, Hi: d + 0}
}

// EncloseInt returns the tightest Interval32 containing the integer n.
func EncloseInt(n int64) (Interval32, error) {
	var iv spec.Interval
	return Round32(iv.FromInt(n))
}

func validate(xs ...Interval32) error {
	for _, x := range xs {
		if err := x.Valid(); err != nil {
			return err
		}
	}
	return nil
}

// Add encloses {a+b : a ∈ x, b ∈ y}, rounded outward to binary32.
func (x Interval32) Add(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Round32(x.Wide().Add(y.Wide()))
}

// Sub encloses {a−b : a ∈ x, b ∈ y}, rounded outward to binary32.
func (x Interval32) Sub(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Round32(x.Wide().Sub(y.Wide()))
}

// Mul encloses {a·b : a ∈ x, b ∈ y} from the four corner products, rounded
// outward to binary32.
func (x Interval32) Mul(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Round32(x.Wide().Mul(y.Wide()))
}

// Square encloses {a·a : a ∈ x}: the product of one value with itself,
// never negative, so it is tighter than x.Mul(x) when x straddles 0. It is
// the rule for a product whose two factors are the same binary32 value
// (mul_elem with one parent twice, the squares of mse_loss and layernorm).
func (x Interval32) Square() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	a := x.Wide().Abs() // exact: [min |a|, max |a|]
	return Round32(a.Mul(a))
}

// Div encloses {a/b : a ∈ x, b ∈ y}, rounded outward to binary32. A
// divisor that contains 0 is a failure, not the whole line: a range rule
// never widens to [−inf, inf].
func (x Interval32) Div(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	if y.Lo <= 0 && 0 <= y.Hi {
		return Interval32{}, fmt.Errorf("divisor %s contains 0", y)
	}
	q, err := x.Wide().Div(y.Wide())
	if err != nil {
		return Interval32{}, err
	}
	return Round32(q)
}

// Inv encloses {1/a : a ∈ x}; it fails when x contains 0.
func (x Interval32) Inv() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	if x.Lo <= 0 && 0 <= x.Hi {
		return Interval32{}, fmt.Errorf("operand %s of 1/x contains 0", x)
	}
	return Interval32{Lo: 1, Hi: 1}.Div(x)
}

// Neg returns [−Hi, −Lo] (exact).
func (x Interval32) Neg() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	return Interval32{Lo: -x.Hi, Hi: -x.Lo}.canon(), nil
}

// Relu returns [max(Lo,0), max(Hi,0)] (exact).
func (x Interval32) Relu() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	return Interval32{Lo: max(x.Lo, 0), Hi: max(x.Hi, 0)}.canon(), nil
}

// Abs returns {|a| : a ∈ x}, splitting on the sign (exact).
func (x Interval32) Abs() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	switch {
	case x.Lo >= 0:
		return x.canon(), nil
	case x.Hi <= 0:
		return Interval32{Lo: -x.Hi, Hi: -x.Lo}.canon(), nil
	}
	return Interval32{Lo: 0, Hi: max(-x.Lo, x.Hi)}, nil
}

// Max returns {max(a,b) : a ∈ x, b ∈ y} = [max(Lo), max(Hi)] (exact).
func (x Interval32) Max(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Interval32{Lo: max(x.Lo, y.Lo), Hi: max(x.Hi, y.Hi)}.canon(), nil
}

// Min returns {min(a,b) : a ∈ x, b ∈ y} = [min(Lo), min(Hi)] (exact).
func (x Interval32) Min(y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Interval32{Lo: min(x.Lo, y.Lo), Hi: min(x.Hi, y.Hi)}.canon(), nil
}

// Hull returns the smallest interval containing x and y.
func Hull(x, y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	return Interval32{Lo: min(x.Lo, y.Lo), Hi: max(x.Hi, y.Hi)}.canon(), nil
}

// Intersect returns x ∩ y, or an error when they are disjoint.
func Intersect(x, y Interval32) (Interval32, error) {
	if err := validate(x, y); err != nil {
		return Interval32{}, err
	}
	r := Interval32{Lo: max(x.Lo, y.Lo), Hi: min(x.Hi, y.Hi)}
	if r.Lo > r.Hi {
		return Interval32{}, fmt.Errorf("intervals %s and %s are disjoint", x, y)
	}
	return r.canon(), nil
}

// Sqrt encloses the registry's sqrt(max(a, 0)) for a ∈ x:
// [sqrtDown(max(Lo,0)), sqrtUp(max(Hi,0))], so the part of x below 0 maps
// to 0 as the registry's forward rule does (§7 sqrt = [sqrtDown, sqrtUp]).
func (x Interval32) Sqrt() (Interval32, error) {
	r, err := x.Relu()
	if err != nil {
		return Interval32{}, err
	}
	s, err := r.Wide().Sqrt()
	if err != nil {
		return Interval32{}, err
	}
	return Round32(s)
}

// Exp encloses e^a for a ∈ x (monotone, widened by spec.Interval's trusted
// boundary), rounded outward to binary32; it fails when the enclosure
// leaves the binary32 range.
func (x Interval32) Exp() (Interval32, error) {
	return x.elementary((spec.Interval).Exp)
}

// Log encloses ln a for a ∈ x; it fails unless Lo > 0.
func (x Interval32) Log() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	if !(x.Lo > 0) {
		return Interval32{}, fmt.Errorf("log operand %s is not > 0", x)
	}
	return x.elementary((spec.Interval).Log)
}

// Log1p encloses ln(1+a) for a ∈ x; it fails unless lo > −1 (the
// enclosure is spec.Interval's outward Log1p, rounded out to binary32).
func (x Interval32) Log1p() (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	if !(x.Lo > -1) {
		return Interval32{}, fmt.Errorf("log1p operand %s is not > -1", x)
	}
	return x.elementary((spec.Interval).Log1p)
}

// Tanh encloses tanh a for a ∈ x, within [−1, 1].
func (x Interval32) Tanh() (Interval32, error) {
	return x.elementary((spec.Interval).Tanh)
}

// Sin encloses sin a for a ∈ x, within [−1, 1].
func (x Interval32) Sin() (Interval32, error) {
	return x.elementary((spec.Interval).Sin)
}

// Cos encloses cos a for a ∈ x, within [−1, 1].
func (x Interval32) Cos() (Interval32, error) {
	return x.elementary((spec.Interval).Cos)
}

func (x Interval32) elementary(f func(spec.Interval) (spec.Interval, error)) (Interval32, error) {
	if err := validate(x); err != nil {
		return Interval32{}, err
	}
	v, err := f(x.Wide())
	if err != nil {
		return Interval32{}, err
	}
	return Round32(v)
}

// Bits32 is an Interval32 as its endpoints' binary32 bit patterns: the form
// in which a certificate records a box or a trace (signed zeros count).
type Bits32 struct {
	Lo, Hi uint32
}

// Interval returns the enclosure the bit patterns encode, or an error when
// it is not a valid Interval32. A −0 endpoint is kept as it is (so that a
// certificate's bits are compared, not normalised).
func (b Bits32) Interval() (Interval32, error) {
	x := Interval32{Lo: math.Float32frombits(b.Lo), Hi: math.Float32frombits(b.Hi)}
	if err := x.Valid(); err != nil {
		return Interval32{}, err
	}
	return x, nil
}

// String prints the two patterns as 0x%08x.
func (b Bits32) String() string { return fmt.Sprintf("[0x%08x, 0x%08x]", b.Lo, b.Hi) }

// TraceBits returns the bit patterns of a trace, node by node.
func TraceBits(trace [][]Interval32) [][]Bits32 {
	out := make([][]Bits32, len(trace))
	for i, es := range trace {
		out[i] = make([]Bits32, len(es))
		for j, e := range es {
			out[i][j] = e.Bits()
		}
	}
	return out
}
