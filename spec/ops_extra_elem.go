package spec

import (
	"fmt"
	"math"
)

// The elementwise primitives added for the ops people use that tlcheck
// lacked (issue 25): asinh and pow with a tensor exponent. Both are
// compositions of the Scalar interface's own operations, so every scalar
// (Rat, the floats, Interval, Dual, and the algebras of other packages:
// fpbound's rounding-error bound, ranges' binary32 intervals, the
// obligations' interval duals) runs them without a method of its own, and
// each is sound over Interval because every step is.
//
// asinh. y = asinh x = ln(x + √(x²+1)), ∂y/∂x = 1/√(1+x²). The rule is the
// branch-free identity, valid for every real x,
//
//	asinh x = g(max(x, 0)) − g(−min(x, 0)),
//	g(t) = log1p(t + t²/(1 + √(1 + t²)))   (= ln(t + √(t²+1)) since
//	                                         √(1+t²) − 1 = t²/(1 + √(1+t²)))
//
// one of whose two terms is exactly g(0) = log1p(0) = 0. g is evaluated
// only at t ≥ 0, where it has no cancellation (t + t²/(1+√(1+t²)) is a
// sum of non-negative terms and log1p keeps the digits of a small
// argument), so the float value is asinh |x| with the sign of x to within
// a few roundings, for x near 0 and for x ≪ 0 alike (ln(x + √(x²+1))
// itself cancels catastrophically for x ≪ 0). Over Dual the tie of max
// and min at x = 0 gives each term half the tangent, ½·g′(0) + ½·g′(0) =
// 1 = asinh′(0), so forward mode through the rule agrees with the
// declared derivative everywhere. Over Interval the registry calls
// Interval.Asinh, the enclosure of the increasing function asinh by its
// endpoints (the formula over intervals is sound but loose, since t
// appears twice); every other scalar runs the formula. asinh is odd,
// increasing, zero-preserving (its derivative is at most 1) and has no
// exact rational value (log1p over Rat is a DomainError), like exp.
//
// pow. z = x^y = exp(y·ln x) elementwise for x > 0 and any y (PyTorch's
// torch.pow(x, y) and ONNX's Pow with both parents tensors of one shape;
// broadcast explicitly first). The partial derivatives are
//
//	∂z/∂x = y·z/x,   ∂z/∂y = z·ln x,
//
// so the JVP is y·z/x·dx + z·ln x·dy and the VJP (δ·y·z/x, δ·z·ln x).
// The domain is x > 0, where both partials exist and are finite: at
// x = 0 the derivative in y is z·ln 0 (0·∞ for y > 0, undefined) and x < 0
// has no real value for non-integer y, so a base that is not decided > 0
// (≤ 0, NaN, or an interval reaching 0) is refused with an error naming
// the value, as raw log refuses it. Integer powers of any base are the
// registry's square, mul and div; pow is for a real exponent. pow is not
// exact (ln over Rat is a DomainError) and not zero-preserving (z
// overflows as exp does).

// AsinhOf is asinh x: x's own Asinh when its scalar has one (Interval),
// else the registry's formula (see the asinh primitive).
func AsinhOf[T Scalar[T]](x T) (T, error) {
	if a, ok := any(x).(interface{ Asinh() (T, error) }); ok {
		return a.Asinh()
	}
	z := x.FromInt(0)
	p, err := asinhNonNeg(x.Max(z))
	if err != nil {
		return p, err
	}
	m, err := asinhNonNeg(x.Min(z).Neg())
	if err != nil {
		return m, err
	}
	return p.Sub(m), nil
}

// asinhNonNeg is g(t) = log1p(t + t²/(1 + √(1 + t²))) = asinh t, used at
// t ≥ 0 only.
func asinhNonNeg[T Scalar[T]](t T) (T, error) {
	one := t.FromInt(1)
	t2 := t.Mul(t)
	s, err := one.Add(t2).Sqrt()
	if err != nil {
		return s, err
	}
	q, err := t2.Div(one.Add(s))
	if err != nil {
		return q, err
	}
	return t.Add(q).Log1p()
}

// asinhDeriv is asinh′(x) = 1/√(1 + x²).
func asinhDeriv[T Scalar[T]](x T) (T, error) {
	one := x.FromInt(1)
	s, err := one.Add(x.Mul(x)).Sqrt()
	if err != nil {
		return s, err
	}
	return one.Div(s)
}

// Asinh encloses asinh over x by its endpoints (asinh is increasing),
// each widened outward by ivTransUlps ulps: the same trusted boundary as
// Log (Go's math.Asinh is FreeBSD msun's s_asinh.c, built on log1p and
// within an ulp or two). asinh(±0) = 0 and asinh(±∞) = ±∞ are exact.
func (x Interval) Asinh() (Interval, error) {
	lo, hi := x.monotoneUp(math.Asinh, func(v float64) (float64, bool) {
		if v == 0 || math.IsInf(v, 0) {
			return v, true
		}
		return 0, false
	})
	return mkInterval(lo, hi), nil
}

// powBase checks pow's domain: the base must be decided > 0.
func powBase[T Scalar[T]](x T) error {
	if c, decided := x.Compare(x.FromInt(0)); !decided || c <= 0 {
		return fmt.Errorf("pow base %s: pow with a tensor exponent requires a base > 0 (x^y = exp(y·ln x)); use square/mul for integer powers of other bases", x)
	}
	return nil
}

// powParts returns ln x and z = exp(y·ln x) for a base x > 0.
func powParts[T Scalar[T]](x, y T) (l, z T, err error) {
	if err := powBase(x); err != nil {
		return x, x, err
	}
	if l, err = x.Log(); err != nil {
		return l, l, err
	}
	z, err = y.Mul(l).Exp()
	return l, z, err
}

// extraElemPrims lists asinh and pow.
func extraElemPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{
		unaryPrim[T](&OpInfo{Name: "asinh", IR: &IRForm{Tag: "asinh", Superset: true, Doc: "the inverse hyperbolic sine asinh x (ONNX Asinh, torch.asinh)"}, ZeroPreserving: true, Smooth: true,
			Doc: "asinh x = ln(x + √(x²+1)) as g(max(x,0)) − g(−min(x,0)), g(t) = log1p(t + t²/(1+√(1+t²))); derivative 1/√(1+x²)"},
			func(_ *Attrs, x T) (T, error) { return AsinhOf(x) },
			func(_ *Attrs, x, _ T) (T, error) { return asinhDeriv(x) }),
		binaryPrim[T](&OpInfo{Name: "pow", IR: &IRForm{Tag: "pow", Superset: true, Doc: "x^y elementwise with a tensor exponent, base x > 0 (ONNX Pow, torch.pow)"}, Partial: true, Smooth: true,
			Doc: "x^y = exp(y·ln x) elementwise, equal shapes, base x > 0 (refused otherwise); ∂/∂x = y·x^y/x, ∂/∂y = x^y·ln x"},
			func(x, y T) (T, error) {
				_, z, err := powParts(x, y)
				return z, err
			},
			func(x, y, _, dx, dy T) (T, error) {
				l, z, err := powParts(x, y)
				if err != nil {
					return z, err
				}
				gx, err := y.Mul(z).Div(x)
				if err != nil {
					return gx, err
				}
				return gx.Mul(dx).Add(z.Mul(l).Mul(dy)), nil
			},
			func(x, y, _, d T) (T, T, error) {
				l, z, err := powParts(x, y)
				if err != nil {
					return z, z, err
				}
				gx, err := y.Mul(z).Div(x)
				if err != nil {
					return gx, gx, err
				}
				return d.Mul(gx), d.Mul(z.Mul(l)), nil
			}),
	}
}

// extraPrims lists the primitives of the ops_extra_*.go files, in
// registration order.
func extraPrims[T Scalar[T]]() []*Prim[T] {
	return append(extraElemPrims[T](), reduceProdPrim[T](), bcePrim[T](), tilePrim[T](), scatterPrim[T](), l2NormalizePrim[T](), sincPrim[T](), renormPrim[T]())
}
