package spec

import (
	"fmt"
	"math/big"
)

// The elementwise primitives sign and shrink (tlcheck.ir.v1 superset
// tags, for imported ONNX models).
//
// sign(x) ∈ {−1, 0, 1} is piecewise constant: its derivative is 0 on
// x ≠ 0, and at the jump x = 0 the convention is sign′(0) := 0, so the JVP
// and VJP are zero everywhere.
//
// shrink (ONNX Shrink) with threshold λ ≥ 0 and bias b is
//
//	y = x − b  for x > λ,   y = x + b  for x < −λ,   y = 0  for −λ ≤ x ≤ λ,
//
// computed as up·(x − b) + dn·(x + b) with up = step(x − λ) and
// dn = step(−λ − x) (step(t) = 1 for t > 0, else 0), and its derivative
// is up + dn: 1 strictly outside [−λ, λ] and 0 inside, including at the
// kinks x = ±λ (the convention of clamp, which is 0 at its bounds).

// shrinkParams returns λ and b as T: the Lambd and Bias attributes, ONNX's
// defaults 1/2 and 0 when nil; λ < 0 is refused (the two branches would
// overlap).
func shrinkParams[T Scalar[T]](a *Attrs) (lam, b T, err error) {
	l := attrRat(a.Lambd, big.NewRat(1, 2))
	if l.Sign() < 0 {
		return lam, b, fmt.Errorf("shrink threshold lambd = %s must be ≥ 0", l.RatString())
	}
	return rc[T](l), rc[T](attrRat(a.Bias, new(big.Rat))), nil
}

func signShrinkPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{
		unaryPrim[T](&OpInfo{Name: "sign", Exact: true, ZeroPreserving: true, Ties: "sign′(x) := 0 everywhere, including the jump at x = 0",
			IR:  &IRForm{Tag: "sign", Superset: true, Doc: "−1, 0 or 1"},
			Doc: "sign(x) ∈ {−1, 0, 1}; derivative 0 everywhere (sign′(0) := 0)"},
			func(_ *Attrs, x T) (T, error) { return x.Sign(), nil },
			func(_ *Attrs, x, _ T) (T, error) { return x.FromInt(0), nil }),
		unaryPrim[T](&OpInfo{Name: "shrink", Exact: true, ZeroPreserving: true, Attrs: []string{"Lambd", "Bias"},
			Ties: "shrink′ = 1 strictly outside [−λ, λ], 0 inside and at x = ±λ",
			IR:   &IRForm{Tag: "shrink", Attrs: []string{"lambd", "bias"}, Superset: true, Doc: "ONNX Shrink: x−bias for x > lambd, x+bias for x < −lambd, else 0"},
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				if _, _, err := shrinkParams[F64](a); err != nil {
					return nil, err
				}
				return in[0].Clone(), nil
			},
			Doc: "ONNX Shrink(λ = Lambd ≥ 0, default 1/2; b = Bias, default 0); derivative 1 strictly outside [−λ, λ], 0 inside and at ±λ"},
			func(a *Attrs, x T) (T, error) {
				lam, b, err := shrinkParams[T](a)
				if err != nil {
					return x, err
				}
				up, dn := x.Sub(lam).Step(), lam.Neg().Sub(x).Step()
				return up.Mul(x.Sub(b)).Add(dn.Mul(x.Add(b))), nil
			},
			func(a *Attrs, x, _ T) (T, error) {
				lam, _, err := shrinkParams[T](a)
				if err != nil {
					return x, err
				}
				return x.Sub(lam).Step().Add(lam.Neg().Sub(x).Step()), nil
			}),
	}
}
