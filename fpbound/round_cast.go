package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Casts (the registry's round_f16, round_bf16, round_f32: ONNX Cast to a
// narrower float format T). The exact value of the node is y = R(x),
// R = round_T, the nearest value of T to the exact x, ties to even; the
// runtime computes R(x̂) of the value x̂ it holds, IEEE 754's conversion,
// correctly rounded: the cast adds no rounding of its own to the model
// (M2: the node's formula is the one operation R, and the conversion
// performs it exactly). Write u_T = 2^-p_T, η_T = 2^(emin_T − p_T) (half
// the least subnormal of T) and Ω_T for T's overflow threshold.
//
// Lemma. For every real t with |t| < Ω_T, |R(t) − t| ≤ max(u_T·|t|, η_T):
// in T's normal range R(t) is within half an ulp of t and ulp(t)/2 ≤
// 2^-p_T·|t|; below 2^emin_T, within half the subnormal spacing,
// 2^(emin_T − p_T). (This is the standard model of the format, fl(t) =
// t(1+δ) + η, |δ| ≤ u_T, |η| ≤ η_T, δ·η = 0.)
//
// Theorem (the case Cast of doc.go's proof). Let the operand be closed,
// (X, E): x ∈ X and every modelled x̂ satisfies |x̂ − x| ≤ E, so x̂ ∈ H =
// [X.Lo − E, X.Hi + E]. Then R(x) ∈ R(X) := [R(X.Lo), R(X.Hi)] (R is
// monotone non-decreasing), and, unless H reaches Ω_T in magnitude (then
// some x̂ may convert to ±∞: no bound, +∞), every R(x̂) is finite and
//
//	|R(x̂) − R(x)| ≤ E′ = min(E + u_T·(mag X + mag H) + 2η_T,
//	                         max(R(H.Hi) − R(X.Lo), R(X.Hi) − R(H.Lo))),
//
// and E′ = 0 when E = 0 (then x̂ = x, so R(x̂) = R(x) exactly).
// Proof. The first term: |R(x̂) − R(x)| ≤ |R(x̂) − x̂| + |x̂ − x| + |x − R(x)|
// and the lemma at x̂ and at x (|x̂| ≤ mag H, |x| ≤ mag X). The second:
// R(x̂) ∈ R(H) and R(x) ∈ R(X), both intervals by monotonicity, and the
// distance of two points of two intervals is at most the larger of the two
// end-to-end differences. ∎ Ties, overflow and subnormals are inside the
// lemma: R is discontinuous at each midpoint of adjacent values of T, so
// an x̂ and an x on either side of one convert one ulp of T apart however
// close they are — the u_T·|·| and η_T terms charge that jump, which is why
// the bound is not E alone; at x̂ near Ω_T the overflow test refuses, and
// below 2^emin_T the lemma's absolute η_T takes over from the relative
// term. The float64 arithmetic on bounds rounds upward (round.go); every
// R of a float64 is a float64 exactly (spec.FloatFormat.RoundFloat64).
//
// Formats. The other cases of the proof assume that every closed value is
// a value of the evaluation's format F (a sum in F's subnormal range is
// exact; a product by ±2^k is exact unless subnormal). R(x̂) is a value of
// F when T's values are values of F (binary16 and bfloat16 in binary32 and
// binary64, binary32 in binary64), and when F's values are values of T (a
// binary16 value converted to binary32 is itself). binary16 and bfloat16
// nest neither way (binary16 has 3 more significand bits, bfloat16 a wider
// range): a round_bf16 in a binary16 evaluation, or round_f16 in a
// bfloat16 one, gets no bound (+∞).
//
// First-order bound (doc.go, "First-order bound"). The node's local error
// is the Err algebra's at bound 0: E′ = 0, since the node's exact function
// is R itself and the runtime computes exactly R of what it holds. Its
// Jacobian is the registry's VJP rule, 0 (R is piecewise constant). That
// is a Clarke Jacobian only where R is constant: on an input box whose
// image R(box) is one point, R — and every Φ_k through it — is constant on
// the box, so the adjoints through the node are exactly 0; on a box that
// straddles a midpoint R jumps, the mean value argument does not apply,
// and adj.RoundTo records the discontinuity, which voids the first-order
// bound of the evaluation (the classic bound above still decides).

// castConsts are T's u_T, η_T, least subnormal and Ω_T, as float64 values
// (each exact for the formats of spec: p ≤ 24, emin ≥ −126, emax ≤ 127).
type castConsts struct{ u, eta, sub, omega float64 }

func castConstsOf(f spec.FloatFormat) castConsts {
	return castConsts{
		u:     math.Ldexp(1, -f.P),
		eta:   math.Ldexp(1, f.Emin-f.P),
		sub:   math.Ldexp(1, f.Emin-f.P+1),
		omega: math.Ldexp(2-math.Ldexp(1, -f.P), f.Emax),
	}
}

// nests reports that the values of T are values of F or those of F are
// values of T (see "Formats" above): precision, least subnormal and
// overflow threshold all ordered the same way.
func (t castConsts) nests(c *consts) bool {
	tInF := t.u >= c.u && t.sub >= c.sub && t.omega <= c.omega
	fInT := c.u >= t.u && c.sub >= t.sub && c.omega <= t.omega
	return tInF || fInT
}

// RoundTo bounds the cast R = round_T of v (see the theorem above).
func (v ErrOf[F]) RoundTo(f spec.FloatFormat) (ErrOf[F], error) {
	a := v.close()
	x, err := a.x.RoundTo(f)
	if err != nil {
		// The exact enclosure reaches Ω_T: no claim on the value (an exact
		// value that overflows has no real semantics, and the exact
		// evaluation refuses it).
		return unbounded[F](spec.Interval{Lo: math.Inf(-1), Hi: inf}), nil
	}
	if f.Quant != nil {
		return quantBound(a, x, f), nil // quant.go
	}
	if f.IsInt() {
		return truncBound(a, x, f), nil
	}
	t := castConstsOf(f)
	switch {
	case !t.nests(constsOf[F]()), math.IsInf(a.e, 1):
		return unbounded[F](x), nil
	case a.e == 0:
		return ErrOf[F]{x: x}, nil
	}
	h := a.hull()
	rh, err := h.RoundTo(f)
	if err != nil {
		return unbounded[F](x), nil // a computed value may convert to ±∞
	}
	lip := addUp(a.e, addUp(mulUp(t.u, addUp(mag(a.x), mag(h))), 2*t.eta))
	hull := max(0, up(rh.Hi-x.Lo), up(x.Hi-rh.Lo))
	return ErrOf[F]{x: x, e: min(lip, hull)}, nil
}

// Casts to an integer type (the registry's trunc_int: ONNX Cast from a
// float type to INT8 … UINT64). The exact value is y = trunc(x), truncation
// toward zero, defined when it lies in the type's range [lo, hi]; the
// runtime computes trunc(x̂) of the value x̂ it holds (an exact operation:
// the truncation of a value of F is a value of F and of the integer type
// whenever it is in range). trunc is discontinuous at every non-zero
// integer, so no error bound of the form E + c holds across one: x̂ and x
// on either side of an integer convert one apart however close they are.
//
// Theorem (the integer cast). Let the operand be closed, (X, E), and H =
// [X.Lo − E, X.Hi + E] ⊇ X. If trunc(H.Lo) = trunc(H.Hi) = k and lo ≤ k ≤
// hi, then trunc(x̂) = trunc(x) = k for every modelled x̂, and E′ = 0.
// Proof: trunc is monotone non-decreasing, so it maps H, which holds x and
// every x̂, onto the one point k. ∎ Otherwise — H straddles an integer
// (trunc jumps inside it), or reaches past [lo, hi] where ONNX leaves the
// conversion undefined — there is no claim: E′ = +∞, and compare's verdict
// on the element is inconclusive, never holds within a bound that a jump
// would make meaningless. When E = 0, x̂ = x and E′ = 0 (the exact
// evaluation refuses a value outside [lo, hi] itself). In the first-order
// bound the Jacobian is 0 on a box whose image is one point (R constant
// there), and a box that straddles a jump voids it, as for the float
// casts (adj.RoundTo below serves both).

// truncBound is the integer cast's bound (see above), for a closed operand a
// whose exact enclosure's truncation x is already computed.
func truncBound[F format](a ErrOf[F], x spec.Interval, f spec.FloatFormat) ErrOf[F] {
	if a.e == 0 {
		return ErrOf[F]{x: x}
	}
	if math.IsInf(a.e, 1) {
		return unbounded[F](x)
	}
	rh, err := a.hull().RoundTo(f)
	if err != nil || rh.Lo != rh.Hi {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x}
}

// RoundTo is spec.Interval's enclosure [R(lo), R(hi)]; a box whose image
// is not one point straddles a jump of R, which voids the mean value
// argument (see "First-order bound" above).
func (a adj) RoundTo(f spec.FloatFormat) (adj, error) {
	r, err := a.iv.RoundTo(f)
	if err != nil {
		return adj{iv: r}, err
	}
	if r.Lo != r.Hi {
		jump()
	}
	return adj{iv: r}, nil
}
