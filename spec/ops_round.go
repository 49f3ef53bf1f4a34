package spec

import (
	"fmt"
	"math"
	"math/big"
)

// The rounding primitives round_f16, round_bf16 and round_f32: a cast of
// a real value to a narrower binary floating-point format (ONNX Cast and
// CastLike from FLOAT to FLOAT16 or BFLOAT16, from DOUBLE to FLOAT,
// FLOAT16 or BFLOAT16).
//
//	y = round_T(x) = the value of T nearest x, ties to even, with gradual
//	    underflow (IEEE 754 §4.3.1, roundTiesToEven, as the conversion
//	    operations of §5.4.2 and ONNX's Cast, whose saturate attribute
//	    concerns the float8 types only)
//
// for T one of
//
//	            p (precision)   emin    emax   Ω (overflow threshold)
//	binary16    11              −14     15     2^16 − 2^4 = 65520
//	bfloat16    8               −126    127    2^128 − 2^119
//	binary32    24              −126    127    2^128 − 2^103
//
// The value is exact over Rat: for x ≠ 0 with 2^e ≤ |x| < 2^(e+1), let
// k = max(e, emin) − p + 1 (the quantum of x's binade, the subnormal
// quantum below 2^emin); then round_T(x) = sign(x)·n·2^k with n the
// integer nearest |x|·2^−k, the even one at a tie. When n·2^k ≥
// 2^(emax+1) the conversion overflows (exactly when |x| ≥ Ω = (2 −
// 2^−p)·2^emax: the largest finite value has an odd significand, so the
// tie at Ω goes up), and IEEE 754 gives ±∞: no real value, so over Rat and
// Interval that is a DomainError (the primitive is Partial); over the
// float scalars it is the IEEE ±∞. round_T is monotone non-decreasing and
// odd, so over Interval it is [round_T(lo), round_T(hi)] exactly (every
// endpoint is a float64 and every value of T is one). It is the identity
// on T, round_T(0) = 0 (zero-preserving), and it keeps the sign of a zero
// over the float scalars (IEEE: a negative value that underflows is −0).
//
// Derivative. round_T is piecewise constant: its derivative is 0 wherever
// it exists (everywhere but the rounding boundaries, the midpoints between
// adjacent values of T, where it jumps), and the registry's convention at
// the jumps is 0 as well, as sign′(0) := 0: JVP and VJP are zero. This is
// a decision: PyTorch's autograd (the backward of Tensor.to) and JAX's
// convert_element_type pass a cotangent through a dtype cast unchanged —
// the derivative of the identity the cast approximates, a straight-through
// convention, not the derivative of the function. The registry keeps the
// true derivative (it is what the derivative obligation and its Clarke-set
// part prove a JVP against, and what fpbound's first-order bound takes
// Clarke Jacobians of), so a gradient taken through a narrowing cast of a
// computed value is 0 here, and a runtime's straight-through gradient
// there differs from it.

// FloatFormat is a binary floating-point format with gradual underflow:
// P significant bits, least normal exponent Emin, greatest exponent Emax.
type FloatFormat struct {
	Name       string // the format's name: "binary16", "bfloat16", "binary32"
	P          int    // precision, in bits, the implicit one included
	Emin, Emax int    // the least and greatest exponent of a normal value
	// IntLo and IntHi, when set, make the format an integer range instead
	// (see trunc_int, ops_trunc.go): the conversion is truncation toward
	// zero, defined when the truncated value lies in [IntLo, IntHi]; P,
	// Emin and Emax are then unused.
	IntLo, IntHi *big.Rat
	// Quant, when set, makes the format an integer rounding instead:
	// round_int or quant_int (ops_quant.go), rne to the integers or to a
	// quantization grid, every value defined; P, Emin, Emax, IntLo and
	// IntHi are then unused.
	Quant *QuantGrid
}

// The formats of the rounding primitives.
var (
	FormatBinary16 = FloatFormat{Name: "binary16", P: 11, Emin: -14, Emax: 15}
	FormatBFloat16 = FloatFormat{Name: "bfloat16", P: 8, Emin: -126, Emax: 127}
	FormatBinary32 = FloatFormat{Name: "binary32", P: 24, Emin: -126, Emax: 127}
)

// pow2Rat returns 2^k exactly.
func pow2Rat(k int) *big.Rat {
	if k >= 0 {
		return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(k)))
	}
	return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-k)))
}

// RoundRat returns round_T(r) exactly (see the rounding primitives), and
// false when the conversion overflows (|r| ≥ Ω: IEEE gives ±∞).
func (f FloatFormat) RoundRat(r *big.Rat) (*big.Rat, bool) {
	if f.Quant != nil {
		return f.Quant.quantRat(r), true
	}
	if f.IsInt() {
		return f.truncRat(r)
	}
	if r.Sign() == 0 {
		return new(big.Rat), true
	}
	a := new(big.Rat).Abs(r)
	// e = ⌊log₂ |r|⌋: the bit lengths give e or e + 1.
	e := a.Num().BitLen() - a.Denom().BitLen()
	if a.Cmp(pow2Rat(e)) < 0 {
		e--
	}
	k := max(e, f.Emin) - f.P + 1
	x := new(big.Rat).Mul(a, pow2Rat(-k))
	n, m := new(big.Int).QuoRem(x.Num(), x.Denom(), new(big.Int))
	switch c := new(big.Int).Lsh(m, 1).Cmp(x.Denom()); {
	case c > 0, c == 0 && n.Bit(0) == 1:
		n.Add(n, big.NewInt(1))
	}
	y := new(big.Rat).Mul(new(big.Rat).SetInt(n), pow2Rat(k))
	if y.Cmp(pow2Rat(f.Emax+1)) >= 0 {
		return nil, false
	}
	if r.Sign() < 0 {
		y.Neg(y)
	}
	return y, true
}

// RoundFloat64 is round_T(x) for a float64 x with IEEE 754's special
// cases: NaN is NaN, ±∞ is ±∞, an overflow is ±∞, and a zero result keeps
// x's sign. Every result is a float64 exactly.
func (f FloatFormat) RoundFloat64(x float64) float64 {
	if f.Quant != nil {
		return f.Quant.quantFloat64(x)
	}
	if f.IsInt() {
		return f.truncFloat64(x)
	}
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return x
	}
	y, ok := f.RoundRat(new(big.Rat).SetFloat64(x))
	if !ok {
		return math.Inf(int(math.Copysign(1, x)))
	}
	v, _ := y.Float64() // exact: T's values are float64 values
	if v == 0 {
		return math.Copysign(0, x)
	}
	return v
}

// roundName is the primitive's name for format f.
func roundName(f FloatFormat) string {
	switch {
	case f.Quant != nil && f.Quant.Scale == nil:
		return "round_int"
	case f.Quant != nil:
		return "quant_int"
	}
	if f.IsInt() {
		return "trunc_int"
	}
	switch f.Name {
	case "binary16":
		return "round_f16"
	case "bfloat16":
		return "round_bf16"
	}
	return "round_f32"
}

// IsFloatCast reports whether op is one of the registry's casts into a
// binary floating-point format (round_f16, round_bf16, round_f32): a
// rounding whose derivative is 0 almost everywhere, where PyTorch and JAX
// pass the cotangent through unchanged. trunc_int is not one.
func IsFloatCast(op string) bool {
	_, ok := FloatCastFormat(op)
	return ok
}

// FloatCastFormat is the target format of the registry's cast op into a
// binary floating-point format (round_f16, round_bf16, round_f32), and
// false for any other op.
func FloatCastFormat(op string) (FloatFormat, bool) {
	for _, f := range []FloatFormat{FormatBinary16, FormatBFloat16, FormatBinary32} {
		if op == roundName(f) {
			return f, true
		}
	}
	return FloatFormat{}, false
}

// overflow is the DomainError of a conversion past Ω over scalar kind s.
func (f FloatFormat) overflow(s string) error {
	if f.Quant != nil {
		return &DomainError{Op: roundName(f), Scalar: s, Reason: "an endpoint is infinite or NaN"}
	}
	if f.IsInt() {
		return &DomainError{Op: "trunc_int", Scalar: s, Reason: fmt.Sprintf("the truncated value is outside %s, or the value is NaN or infinite (ONNX: undefined)", f.Name)}
	}
	return &DomainError{Op: roundName(f), Scalar: s, Reason: fmt.Sprintf("the value reaches %s's overflow threshold (IEEE 754 gives ±∞)", f.Name)}
}

// RoundOf is round_T(x) over any scalar that has it (a method
// RoundTo(FloatFormat) (T, error)); a scalar without it is an error naming
// its kind, never a silent fallback.
func RoundOf[T Scalar[T]](x T, f FloatFormat) (T, error) {
	if r, ok := any(x).(interface {
		RoundTo(FloatFormat) (T, error)
	}); ok {
		return r.RoundTo(f)
	}
	return x, fmt.Errorf("%s is not defined over scalar %s", roundName(f), x.Kind())
}

// RoundTo is round_T(x) exactly; an overflow is a DomainError.
func (x Rat) RoundTo(f FloatFormat) (Rat, error) {
	y, ok := f.RoundRat(x.Big())
	if !ok {
		return Rat{}, f.overflow("rat")
	}
	return RatFromBig(y), nil
}

// RoundTo is the IEEE conversion of x to f (±∞ past Ω), held as a
// float32 exactly when f is no wider than binary32 (every format here is).
func (x F32) RoundTo(f FloatFormat) (F32, error) {
	return F32(float32(f.RoundFloat64(float64(x)))), nil
}

// RoundTo is the IEEE conversion of x to f (±∞ past Ω).
func (x F64) RoundTo(f FloatFormat) (F64, error) { return F64(f.RoundFloat64(float64(x))), nil }

// RoundTo is the IEEE conversion of x to f (±∞ past Ω, a quiet NaN for a
// NaN); the result is a binary32 value exactly.
func (x Binary32) RoundTo(f FloatFormat) (Binary32, error) {
	if x.isNaN() {
		return x | b32QuietBit, nil
	}
	return binary32FromFloat64(f.RoundFloat64(x.widen64())), nil
}

// RoundTo is [round_T(lo), round_T(hi)]: round_T is monotone, so it
// encloses round_T of every point of x; an endpoint at or past Ω (or
// infinite) is a DomainError.
func (x Interval) RoundTo(f FloatFormat) (Interval, error) {
	lo, hi := f.RoundFloat64(x.Lo), f.RoundFloat64(x.Hi)
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
		return ivWhole, f.overflow("interval")
	}
	return mkInterval(lo+0, hi+0), nil // +0: no −0 endpoint
}

// RoundTo is (round_T(a), 0): the derivative is 0 (see the rounding
// primitives).
func (x Dual[T]) RoundTo(f FloatFormat) (Dual[T], error) {
	y, err := RoundOf(x.Re, f)
	if err != nil {
		return Dual[T]{}, err
	}
	var z T
	return Dual[T]{y, z}, nil
}

// roundPrims lists the rounding primitives (see above).
func roundPrims[T Scalar[T]]() []*Prim[T] {
	var ps []*Prim[T]
	for _, f := range []FloatFormat{FormatBinary16, FormatBFloat16, FormatBinary32} {
		name := roundName(f)
		ps = append(ps, unaryPrim[T](&OpInfo{Name: name, Exact: true, Partial: true, ZeroPreserving: true,
			Ties: "round′ := 0 everywhere: the true derivative off the rounding boundaries (piecewise constant) and 0 at the jumps by convention; not the straight-through 1 of PyTorch's and JAX's casts",
			IR:   &IRForm{Tag: name, Superset: true, Doc: "the nearest " + f.Name + " value, ties to even (ONNX Cast to a narrower float type)"},
			Doc: fmt.Sprintf("round to the nearest %s value (p = %d, emin = %d, emax = %d), ties to even, gradual underflow; |x| ≥ Ω overflows (a domain error); derivative 0",
				f.Name, f.P, f.Emin, f.Emax)},
			func(_ *Attrs, x T) (T, error) { return RoundOf(x, f) },
			func(_ *Attrs, x, _ T) (T, error) { return x.FromInt(0), nil }))
	}
	return ps
}
