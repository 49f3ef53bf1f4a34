package spec

import (
	"math"
	"math/big"
)

// sinc is the UNNORMALISED sinc, y = sin(x)/x with y(0) = 1 (numpy's and
// torch's sinc are the normalised sin(πx)/(πx); torch.sinc(x) is
// sinc(π·x) here, a scale of the input that the graph spells as a mul by
// a constant). The normalised form is not written as one primitive because
// π is not a constant of the registry's scalars: FromRat would round it
// for floats, and over Rat and Interval a rational stand-in for π would
// be a different function (not sin(πx)/(πx) at any point but 0), so the
// rule would be wrong by definition, not by rounding. sin(x)/x has no such
// constant.
//
//	sinc x  = sin x / x              (x ≠ 0),   sinc 0  = 1
//	sinc′ x = (cos x − sinc x) / x   (x ≠ 0),   sinc′ 0 = 0
//	sinc″ x = −sinc x − 2·sinc′ x / x (x ≠ 0),  sinc″ 0 = −1/3
//
// x = 0 is a removable singularity: sinc is entire (sinc x = ∫₀¹ cos(xt) dt),
// even, 1 at 0 with derivative 0 there. The rule never divides by an x that
// is not decided ≠ 0: at an x decided = 0 it returns the constants above
// (so Dual's forward mode gives the tangent 0 = sinc′ 0), and at an x
// whose sign is undecided it asks the scalar's own Sinc/SincDeriv method
// (Interval, Dual over such a scalar, and the obligations' dual interval),
// else it falls back to the quotient, whose division by an interval
// reaching 0 is refused or unbounded (sound, never silently narrow).
//
// Interval. From sinc x = ∫₀¹ cos(xt) dt, sinc′ x = −∫₀¹ t·sin(xt) dt and
// sinc″ x = −∫₀¹ t²·cos(xt) dt, with 1 − u²/2 ≤ cos u ≤ 1 − u²/2 + u⁴/24
// and u − u³/6 ≤ sin u ≤ u for u ≥ 0, for EVERY real x:
//
//	1 − x²/6 ≤ sinc x ≤ min(1, 1 − x²/6 + x⁴/120),   sinc x ≥ −0.2173
//	sinc′ x = −x/3 + θ·x³/30 for some θ ∈ [0, 1],  |sinc′ x| ≤ 1/2
//	−1/3 ≤ sinc″ x ≤ min(1/3, −1/3 + x²/10)
//
// (the global minimum of sinc is −0.21723… at x ≈ 4.4934). Interval.Sinc
// and Interval.SincDeriv take these Taylor enclosures with their
// remainders, intersected, where the interval excludes 0, with the
// quotient's enclosure (each sound, so the meet is). sinc is Smooth, even,
// zero-preserving (its derivative is bounded, |sinc′| ≤ ½, so δ = 0 gives
// 0) and not exact over Rat (sin is a DomainError), like sin. ONNX has no
// Sinc: no import maps to it.

// SincOf is sinc x = sin x / x with sinc 0 = 1 (see above).
func SincOf[T Scalar[T]](x T) (T, error) {
	if s, ok := any(x).(interface{ Sinc() (T, error) }); ok {
		return s.Sinc()
	}
	if c, ok := x.Compare(x.FromInt(0)); ok && c == 0 {
		return x.FromInt(1), nil
	}
	s, err := x.Sin()
	if err != nil {
		return s, err
	}
	return s.Div(x)
}

// SincDerivOf is sinc′ x = (cos x − sinc x)/x with sinc′ 0 = 0.
func SincDerivOf[T Scalar[T]](x T) (T, error) {
	if s, ok := any(x).(interface{ SincDeriv() (T, error) }); ok {
		return s.SincDeriv()
	}
	if c, ok := x.Compare(x.FromInt(0)); ok && c == 0 {
		return x.FromInt(0), nil
	}
	sc, err := SincOf(x)
	if err != nil {
		return sc, err
	}
	co, err := x.Cos()
	if err != nil {
		return co, err
	}
	return co.Sub(sc).Div(x)
}

// sincDeriv2Of is sinc″ x = −sinc x − 2·sinc′ x / x with sinc″ 0 = −1/3,
// the tangent of Dual's SincDeriv.
func sincDeriv2Of[T Scalar[T]](x T) (T, error) {
	if s, ok := any(x).(interface{ SincDeriv2() (T, error) }); ok {
		return s.SincDeriv2()
	}
	if c, ok := x.Compare(x.FromInt(0)); ok && c == 0 {
		return x.FromRat(big.NewRat(-1, 3)), nil
	}
	sc, err := SincOf(x)
	if err != nil {
		return sc, err
	}
	d, err := SincDerivOf(x)
	if err != nil {
		return d, err
	}
	q, err := d.Add(d).Div(x)
	if err != nil {
		return q, err
	}
	return sc.Neg().Sub(q), nil
}

// The float scalars have their own SincDeriv: (cos x − sinc x)/x cancels
// catastrophically for small |x| (at x = 1e-8 it gives 0, not −x/3), so
// for |x| < 1/2 they evaluate the Maclaurin series of sinc′ (Horner, to
// x¹⁵; the first omitted term is below 2e-21 there, under a float64
// rounding of the sum) in float64, the quotient elsewhere. Only floats do:
// over Rat the rule must stay inexact, and the interval scalars enclose.

// sincDerivF64 is sinc′ v in float64 (see above).
func sincDerivF64(v float64) float64 {
	if math.Abs(v) < 0.5 {
		u := v * v
		return v * (-1.0/3 + u*(1.0/30+u*(-1.0/840+u*(1.0/45360+u*(-1.0/3991680+u*(1.0/518918400+u*(-1.0/93405312000+u*(1.0/22230464256000))))))))
	}
	return (math.Cos(v) - math.Sin(v)/v) / v
}

// SincDeriv is sinc′ x in float64 (series near 0), rounded to float32.
func (x F32) SincDeriv() (F32, error) { return F32(float32(sincDerivF64(float64(x)))), nil }

// SincDeriv is sinc′ x (series near 0).
func (x F64) SincDeriv() (F64, error) { return F64(sincDerivF64(float64(x))), nil }

// SincDeriv is sinc′ x in float64 (series near 0) rounded to binary32.
func (x Binary32) SincDeriv() (Binary32, error) { return x.elementary(sincDerivF64), nil }

// ivMeet intersects two enclosures of one quantity; an empty meet (which
// sound enclosures cannot give) keeps the first.
func ivMeet(a, b Interval) Interval {
	lo, hi := max(a.Lo, b.Lo), min(a.Hi, b.Hi)
	if !(lo <= hi) {
		return a
	}
	return mkInterval(lo, hi)
}

func ivRat(n, d int64) Interval { return ivEnclose(big.NewRat(n, d)) }

// ivHasZero reports whether 0 ∈ x (or x is not a proper interval).
func ivHasZero(x Interval) bool { return !(x.Lo > 0 || x.Hi < 0) }

// Sinc encloses sinc over x (see above): the Taylor enclosure with its
// remainder everywhere, met with [−0.2173, 1] and, away from 0, with the
// quotient sin x / x.
func (x Interval) Sinc() (Interval, error) {
	x2 := x.Mul(x)
	base := Point(1).Sub(x2.Mul(ivRat(1, 6)))
	taylor := mkInterval(base.Lo, base.Add(x2.Mul(x2).Mul(ivRat(1, 120))).Hi)
	r := ivMeet(ivMeet(mkInterval(-0.2173, 1), taylor), mkInterval(base.Lo, math.Inf(1)))
	if !ivHasZero(x) {
		s, _ := x.Sin()
		if q, err := s.Div(x); err == nil {
			r = ivMeet(r, q)
		}
	}
	return r, nil
}

// SincDeriv encloses sinc′ over x: −x/3 + [0, 1]·x³/30 met with
// [−1/2, 1/2] and, away from 0, with (cos x − sinc x)/x.
func (x Interval) SincDeriv() (Interval, error) {
	lin := x.Mul(ivRat(-1, 3))
	cub := x.Mul(x).Mul(x).Mul(ivRat(1, 30)).Mul(mkInterval(0, 1))
	r := ivMeet(mkInterval(-0.5, 0.5), lin.Add(cub))
	if !ivHasZero(x) {
		sc, _ := x.Sinc()
		co, _ := x.Cos()
		if q, err := co.Sub(sc).Div(x); err == nil {
			r = ivMeet(r, q)
		}
	}
	return r, nil
}

// SincDeriv2 encloses sinc″ over x: [−1/3, min(1/3, −1/3 + x²/10)].
func (x Interval) SincDeriv2() (Interval, error) {
	third := ivRat(1, 3)
	hi := third.Neg().Add(x.Mul(x).Mul(ivRat(1, 10))).Hi
	return mkInterval(-third.Hi, min(hi, third.Hi)), nil
}

// Dual's Sinc and SincDeriv differentiate the quotient by Dual's own
// chain rule (sin, cos and ÷) wherever the primal's sign is decided ≠ 0,
// so forward mode through the forward rule stays independent of the
// registry's derivative rule there; only at a primal decided = 0 (the
// constants sinc′ 0 = 0, sinc″ 0 = −1/3) and at an undecided one (an
// interval reaching 0: the enclosures above) do they use the stated
// derivatives.

// Sinc is (sinc a, sinc′(a)·a').
func (x Dual[T]) Sinc() (Dual[T], error) {
	if c, ok := x.Re.Compare(x.Re.FromInt(0)); ok && c != 0 {
		s, err := x.Sin()
		if err != nil {
			return s, err
		}
		return s.Div(x)
	}
	y, err := SincOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	d, err := SincDerivOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{y, d.Mul(x.Du)}, nil
}

// SincDeriv is (sinc′ a, sinc″(a)·a').
func (x Dual[T]) SincDeriv() (Dual[T], error) {
	if c, ok := x.Re.Compare(x.Re.FromInt(0)); ok && c != 0 {
		sc, err := x.Sinc()
		if err != nil {
			return sc, err
		}
		co, err := x.Cos()
		if err != nil {
			return co, err
		}
		return co.Sub(sc).Div(x)
	}
	d, err := SincDerivOf(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	d2, err := sincDeriv2Of(x.Re)
	if err != nil {
		return Dual[T]{}, err
	}
	return Dual[T]{d, d2.Mul(x.Du)}, nil
}

// sincPrim is the sinc primitive (no IR tag: ONNX has no Sinc, and the
// IR spells what tlcheck imports).
func sincPrim[T Scalar[T]]() *Prim[T] {
	return unaryPrim[T](&OpInfo{Name: "sinc", ZeroPreserving: true, Smooth: true,
		Doc: "unnormalised sinc x = sin x / x, 1 at 0 (a removable singularity; torch.sinc(x) is sinc(πx)); derivative (cos x − sinc x)/x, 0 at 0"},
		func(_ *Attrs, x T) (T, error) { return SincOf(x) },
		func(_ *Attrs, x, _ T) (T, error) { return SincDerivOf(x) })
}
