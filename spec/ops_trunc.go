package spec

import (
	"fmt"
	"math"
	"math/big"
)

// The primitive trunc_int: a cast of a real value to an integer type (ONNX
// Cast and CastLike from FLOAT, DOUBLE, FLOAT16 or BFLOAT16 to INT8 …
// INT64, UINT8 … UINT64), with the type's range as the rational attributes
// lo and hi:
//
//	y = trunc_int(x; lo, hi) = trunc(x) = sign(x)·⌊|x|⌋   when lo ≤ trunc(x) ≤ hi
//	                           undefined (a DomainError)  otherwise
//
// Truncation toward zero is the conversion of C (C11 §6.3.1.4), of NumPy's
// astype (ONNX's reference implementation) and of every runtime's
// float-to-integer instruction (cvttss2si, cvt.rzi); ONNX's Cast text
// says "fixed point: undefined if OOR" (out of range) for a float source,
// and a NaN or infinite source has no integer value either, so those are
// domain errors, never a guessed value (the primitive is Partial). lo ≤ 0
// ≤ hi is required (the shape rule refuses otherwise), so trunc_int(0) = 0
// (zero-preserving). The value is exact over Rat (an integer); trunc is
// odd and monotone non-decreasing, so over Interval it is
// [trunc(lo′), trunc(hi′)] of the endpoints exactly (the truncation of a
// float64 is a float64), a domain error when an endpoint's truncation
// leaves [lo, hi]. Over the float scalars, which model a runtime, an
// undefined conversion is NaN.
//
// Derivative. trunc is piecewise constant, with a jump at every non-zero
// integer: its derivative is 0 wherever it exists, and the registry's
// convention at the jumps is 0 as for the rounding primitives (JVP and
// VJP are zero; a gradient through a cast to an integer type is 0, which
// is also what PyTorch and JAX give: an integer tensor carries no
// gradient).
//
// Cast to BOOL is not this primitive (x ≠ 0 is not monotone); a constant
// is folded at import.

// IsInt reports that f is an integer range (trunc_int's) or an integer
// rounding (round_int's, quant_int's), not a float format.
func (f FloatFormat) IsInt() bool { return f.IntLo != nil || f.Quant != nil }

// IntFormat is the integer range [lo, hi] of trunc_int; the name spells
// the range.
func IntFormat(lo, hi *big.Rat) FloatFormat {
	return FloatFormat{Name: fmt.Sprintf("the integer range [%s, %s]", lo.RatString(), hi.RatString()), IntLo: lo, IntHi: hi}
}

// IntTypeRange is the range of a two's-complement (signed) or unsigned
// integer type of bits bits: [−2^(bits−1), 2^(bits−1) − 1] or [0,
// 2^bits − 1].
func IntTypeRange(bits int, signed bool) (lo, hi *big.Rat) {
	one := big.NewInt(1)
	if signed {
		m := new(big.Int).Lsh(one, uint(bits-1))
		return new(big.Rat).SetInt(new(big.Int).Neg(m)), new(big.Rat).SetInt(new(big.Int).Sub(m, one))
	}
	return new(big.Rat), new(big.Rat).SetInt(new(big.Int).Sub(new(big.Int).Lsh(one, uint(bits)), one))
}

// truncRat is trunc(r) exactly, and false when it leaves [IntLo, IntHi].
func (f FloatFormat) truncRat(r *big.Rat) (*big.Rat, bool) {
	q := new(big.Int).Quo(r.Num(), r.Denom()) // Go's Quo truncates toward zero
	y := new(big.Rat).SetInt(q)
	if y.Cmp(f.IntLo) < 0 || y.Cmp(f.IntHi) > 0 {
		return nil, false
	}
	return y, true
}

// truncFloat64 is trunc(x) for a float64 x, NaN when undefined (x NaN or
// infinite, or trunc(x) outside the range); a zero result is +0 (an
// integer has no sign of zero).
func (f FloatFormat) truncFloat64(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return math.NaN()
	}
	y, ok := f.truncRat(new(big.Rat).SetFloat64(x))
	if !ok {
		return math.NaN()
	}
	v, _ := y.Float64() // exact: the truncation of a float64 is one
	return v + 0
}

// truncRange is the integer range of trunc_int's attributes: both given,
// lo ≤ 0 ≤ hi.
func truncRange(a *Attrs) (FloatFormat, error) {
	if a == nil || a.Lo == nil || a.Hi == nil {
		return FloatFormat{}, fmt.Errorf("trunc_int needs both lo and hi")
	}
	if a.Lo.Sign() > 0 || a.Hi.Sign() < 0 {
		return FloatFormat{}, fmt.Errorf("trunc_int needs lo ≤ 0 ≤ hi, got lo=%s, hi=%s", a.Lo.RatString(), a.Hi.RatString())
	}
	return IntFormat(a.Lo, a.Hi), nil
}

// truncPrim is trunc_int (see above).
func truncPrim[T Scalar[T]]() *Prim[T] {
	return roundingPrim[T](&OpInfo{Name: "trunc_int", Exact: true, Partial: true, ZeroPreserving: true, Attrs: []string{"Lo", "Hi"},
		Ties: "trunc′ := 0 everywhere: the true derivative off the integers (piecewise constant) and 0 at the jumps by convention",
		IR:   &IRForm{Tag: "trunc_int", Attrs: []string{"lo", "hi"}, Superset: true, Doc: "truncation toward zero to an integer in [lo, hi] (ONNX Cast from a float to an integer type; outside the range, NaN or ±∞: undefined, a domain error)"},
		Doc:  "trunc(x) = sign(x)·⌊|x|⌋ when lo ≤ trunc(x) ≤ hi (lo ≤ 0 ≤ hi), else a domain error; derivative 0",
	}, truncRange)
}

// roundingPrim is a unary primitive x ↦ RoundOf(x, f) whose format f is
// read from its attributes by fmtOf (trunc_int's range, quant_int's
// scale, zero point and range): its Shape checks the attributes and
// keeps the input's shape, and its derivative is 0 (info.Ties states the
// convention at the jumps).
func roundingPrim[T Scalar[T]](info *OpInfo, fmtOf func(*Attrs) (FloatFormat, error)) *Prim[T] {
	info.Shape = func(a *Attrs, in []Shape) (Shape, error) {
		if _, err := fmtOf(a); err != nil {
			return nil, err
		}
		return in[0].Clone(), nil
	}
	return unaryPrim[T](info,
		func(a *Attrs, x T) (T, error) {
			f, err := fmtOf(a)
			if err != nil {
				return x, err
			}
			return RoundOf(x, f)
		},
		func(_ *Attrs, x, _ T) (T, error) { return x.FromInt(0), nil })
}
