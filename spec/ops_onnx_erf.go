package spec

import (
	"fmt"
	"math"
)

// erf, the primitive of ONNX's Erf and of exact GELU (x·(1 + erf(x/√2))/2,
// BERT's and ViT's activation), which no composition of the other
// primitives gives.
//
//	y = erf x = (2/√π) ∫₀ˣ e^(−t²) dt,   ∂y/∂x = (2/√π)·e^(−x²)
//
// JVP D⊙dx and VJP D⊙δ with D the derivative, as for every unary
// primitive. erf is odd, increasing, erf 0 = 0 (zero-preserving) and
// |erf x| < 1; its derivative is at most 2/√π ≈ 1.128 (at 0), so erf is
// 2/√π-Lipschitz. It has no exact rational value except at 0: over Rat it
// is inexact (a DomainError), like exp.
//
// Scalars. Erf and ErfDeriv are methods of the scalars that have them
// (F32, F64, Binary32, Interval, Rat, Dual[T] over such a T, and the
// rounding-error algebra of package fpbound); the registry's rules call
// them through ErfOf and ErfDerivOf, which return an error naming the
// scalar kind for a scalar without them (so a new scalar fails loudly,
// never silently). Over floats erf is math.Erf rounded to the format.
// Over Interval the enclosure rests on the trusted boundary of Interval
// (Go's float64 math library within a few ulps: math.Erf is FreeBSD
// msun's s_erf.c, whose documented approximation errors are below 2^-57
// relative): erf being increasing, [erf lo, erf hi] widened outward by
// ivTransUlps ulps and clamped to [−1, 1]; the derivative's enclosure is
// [c⁻, c⁺]·e^(−X²) with c⁻ < 2/√π < c⁺ adjacent float64 values and X² the
// enclosure of the square.

// twoOverSqrtPi brackets 2/√π = 1.12837916709551257389615890312…: the
// float64 nearest it and its neighbours below and above.
var (
	twoOverSqrtPi   = 1.1283791670955126 // float64(2/√π)
	twoOverSqrtPiLo = math.Nextafter(twoOverSqrtPi, 0)
	twoOverSqrtPiHi = math.Nextafter(twoOverSqrtPi, 2)
)

// ErfOf is erf x over any scalar that has it (see the erf primitive).
func ErfOf[T Scalar[T]](x T) (T, error) {
	if e, ok := any(x).(interface{ Erf() (T, error) }); ok {
		return e.Erf()
	}
	return x, fmt.Errorf("erf is not defined over scalar %s", x.Kind())
}

// ErfDerivOf is erf′(x) = (2/√π)·e^(−x²) over any scalar that has it.
func ErfDerivOf[T Scalar[T]](x T) (T, error) {
	if e, ok := any(x).(interface{ ErfDeriv() (T, error) }); ok {
		return e.ErfDeriv()
	}
	return x, fmt.Errorf("the derivative of erf is not defined over scalar %s", x.Kind())
}

// Erf is math.Erf rounded to float32.
func (x F32) Erf() (F32, error) { return F32(float32(math.Erf(float64(x)))), nil }

// ErfDeriv is (2/√π)·e^(−x²) in float64, rounded to float32.
func (x F32) ErfDeriv() (F32, error) {
	v := float64(x)
	return F32(float32(twoOverSqrtPi * math.Exp(-v*v))), nil
}

// Erf is math.Erf.
func (x F64) Erf() (F64, error) { return F64(math.Erf(float64(x))), nil }

// ErfDeriv is (2/√π)·e^(−x²).
func (x F64) ErfDeriv() (F64, error) {
	v := float64(x)
	return F64(twoOverSqrtPi * math.Exp(-v*v)), nil
}

// Erf is math.Erf in float64 rounded to binary32 (trusted, not claimed
// correctly rounded).
func (x Binary32) Erf() (Binary32, error) { return x.elementary(math.Erf), nil }

// ErfDeriv is (2/√π)·e^(−x²) in float64 rounded to binary32.
func (x Binary32) ErfDeriv() (Binary32, error) {
	return x.elementary(func(v float64) float64 { return twoOverSqrtPi * math.Exp(-v*v) }), nil
}

// Erf has no exact rational value (erf 0 = 0 excepted, but the rule does
// not special-case it, as exp does not).
func (x Rat) Erf() (Rat, error) { return x.inexact("erf") }

// ErfDeriv has no exact rational value.
func (x Rat) ErfDeriv() (Rat, error) { return x.inexact("erf′") }

// Erf encloses erf over x (see the erf primitive).
func (x Interval) Erf() (Interval, error) {
	lo, hi := x.monotoneUp(math.Erf, func(v float64) (float64, bool) {
		switch {
		case v == 0:
			return 0, true
		case math.IsInf(v, 0):
			return math.Erf(v), true // ±1
		}
		return 0, false
	})
	return mkInterval(max(lo, -1), min(hi, 1)), nil
}

// ErfDeriv encloses (2/√π)·e^(−x²) over x.
func (x Interval) ErfDeriv() (Interval, error) {
	e, err := x.Mul(x).Neg().Exp()
	if err != nil {
		return e, err
	}
	return mkInterval(twoOverSqrtPiLo, twoOverSqrtPiHi).Mul(e), nil
}

// Erf is (erf a, erf′(a)·a').
func (x Dual[T]) Erf() (Dual[T], error) {
	y, err := ErfOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	d, err := ErfDerivOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{y, d.Mul(x.Du)}, nil
}

// ErfDeriv is (erf′(a), −2a·erf′(a)·a'), since erf″(x) = −2x·erf′(x).
func (x Dual[T]) ErfDeriv() (Dual[T], error) {
	d, err := ErfDerivOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{d, x.Re.FromInt(-2).Mul(x.Re).Mul(d).Mul(x.Du)}, nil
}

// erf_deriv, erf's derivative as a primitive of its own (grad35): the
// step of erf's VJP dx = dy·erf′(x) that the combined first-order gradient
// bound (package fpbound) writes as an IR node, since its constant 2/√π is
// not rational and so no const node holds it.
//
//	y = erf′ x = (2/√π)·e^(−x²),   ∂y/∂x = erf″ x = −2x·erf′ x
//
// JVP D⊙dx and VJP D⊙δ as for every unary primitive, with D = −2x·erf′ x
// evaluated as (−2·x)·ErfDerivOf(x) (−2 exact in every scalar).
// Zero-preserving (|erf″| ≤ 2/√π·√(2/e) < 1: δ = 0 gives 0); 0 < erf′ x
// ≤ 2/√π, so y is never 0 and erf′ 0 = 2/√π; inexact over Rat
// (a DomainError, as erf). Over Interval its enclosure is ErfDeriv's
// ([c⁻, c⁺]·e^(−X²), see erf), so a range rule and the sweeps' scalars
// need nothing new: every scalar with erf's derivative has it.

// onnxPrims lists the primitives added for ONNX models: erf, erf_deriv.
func onnxPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{
		unaryPrim[T](&OpInfo{Name: "erf", IR: &IRForm{Tag: "erf", Superset: true, Doc: "the error function erf x (ONNX Erf)"}, ZeroPreserving: true, Smooth: true,
			Doc: "erf x = (2/√π)∫₀ˣ e^(−t²) dt; derivative (2/√π)·e^(−x²)"},
			func(_ *Attrs, x T) (T, error) { return ErfOf(x) },
			func(_ *Attrs, x, _ T) (T, error) { return ErfDerivOf(x) }),
		unaryPrim[T](&OpInfo{Name: "erf_deriv", IR: &IRForm{Tag: "erf_deriv", Superset: true, Doc: "erf′ x = (2/√π)·e^(−x²), the step of erf's VJP"}, ZeroPreserving: true, Smooth: true,
			Doc: "erf′ x = (2/√π)·e^(−x²); derivative −2x·erf′ x"},
			func(_ *Attrs, x T) (T, error) { return ErfDerivOf(x) },
			func(_ *Attrs, x, _ T) (T, error) {
				d, err := ErfDerivOf(x)
				if err != nil {
					return d, err
				}
				return x.FromInt(-2).Mul(x).Mul(d), nil
			}),
	}
}
