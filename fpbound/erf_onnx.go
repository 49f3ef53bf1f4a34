package fpbound

import (
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// Erf is an elementary function of M3 like tanh (the error function of
// ONNX's Erf and exact GELU): a library erf within k ulps of the real
// function (glibc documents ≤ 1–2 ulps for erff and erf, SLEEF's erf_u10
// 1.0 ulp, CUDA's erff 2 ulps; Go's math.Erf is FreeBSD msun's), and erf
// is Lipschitz with constant sup |erf′| = erf′(0) = 2/√π < 1.1283791670955127,
// so the propagated error is bounded as for the other elementary
// functions (elementary's argument, with that Lipschitz constant).
func (v ErrOf[F]) Erf() (ErrOf[F], error) {
	a := v.close()
	x, _ := a.x.Erf()
	fh, _ := a.hull().Erf()
	return elementary[F](x, fh, erfLip, a.e), nil
}

// erfLip is a float64 upper bound of 2/√π.
var erfLip = math.Nextafter(1.1283791670955126, 2)

// ErfDeriv is erf′ = c·e^(−x²), c = 2/√π, evaluated as the product of
// the constant and exp of −x·x, each rounded as the model's operations
// are. The constant is closed with enclosure [c⁻, c⁺] ∋ c (adjacent
// float64 values) and bound |fl(c) − c| ≤ |fl(c̃) − c̃| + (c⁺ − c⁻), c̃ the
// float64 nearest c (M1: the runtime holds fl(c), the format's value
// nearest c; fl(c̃) is within c⁺ − c⁻ of it, and c̃ within that of c).
func (v ErrOf[F]) ErfDeriv() (ErrOf[F], error) {
	e, err := v.Mul(v).Neg().Exp()
	if err != nil {
		return e, err
	}
	var fm F
	ct := 1.1283791670955126
	lo, hi := math.Nextafter(ct, 0), math.Nextafter(ct, 2)
	d := math.Abs(fm.nearest(new(big.Rat).SetFloat64(ct))-ct) + (hi - lo)
	c := ErrOf[F]{x: spec.Interval{Lo: lo, Hi: hi}, e: up(2 * d)}
	return c.Mul(e), nil
}
