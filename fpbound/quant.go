package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

// Rounding to an integer grid (the registry's round_int, ONNX Round of a
// computed value, and quant_int, ONNX QuantizeLinear of a computed FLOAT
// value with a known scale; branch q36). The exact value is y = Q(x) with
//
//	round_int: Q(x) = rne(x)
//	quant_int: Q(x) = clamp(rne(fl32(fl32(x)/c)) + zp, lo, hi), c > 0
//
// (spec/ops_quant.go), and the runtime computes Q(x̂) of the value x̂ it
// holds — the model of a runtime that implements the operator as ONNX
// defines it (x̂ is a binary32 value, so fl32(x̂) = x̂, then one binary32
// division, rne, the zero point and the saturation). Q jumps at every tie
// of its grid, so, as for trunc_int, no error bound of the form E + c holds
// across one: x̂ and x on either side of a tie give codes one apart however
// close they are.
//
// Theorem (rounding to an integer grid). Let the operand be closed, (X,
// E), and H = [X.Lo − E, X.Hi + E] ⊇ X. If Q(H.Lo) = Q(H.Hi) = k, then
// Q(x̂) = Q(x) = k for every modelled x̂, and E′ = 0: the computed code
// equals the exact one.
// Proof: rne, fl32, division by c > 0, + zp and the clamp are each
// non-decreasing over the extended reals (fl32 rounds to nearest with
// overflow to ±∞, and ±∞ saturates to lo or hi), so Q is, and it maps H —
// which holds x and every modelled x̂ — into [Q(H.Lo), Q(H.Hi)] = {k}. ∎
// Otherwise H holds a jump of Q — a tie of rne inside, or at an endpoint
// that is itself a tie, which rne decides only at the point — and there is
// no claim: E′ = +∞, the element is inconclusive, never a FAIL across a
// jump. round_int of an infinite endpoint (Round keeps ±∞) is +∞ too. When
// E = 0, x̂ = x and E′ = 0. The element's decision is the same as
// onnx.QuantizeEnclosure's on H for a FLOAT scale (both division
// precisions are binary32 there; no test compares the two yet). In the
// first-order bound the Jacobian is 0 on a
// box whose image is one point, and a box that straddles a jump voids it
// (adj.RoundTo, round_cast.go), as for the casts.

// quantBound is the bound of an integer rounding (see above), for a closed
// operand a whose exact enclosure's image x is already computed.
func quantBound[F format](a ErrOf[F], x spec.Interval, f spec.FloatFormat) ErrOf[F] {
	switch {
	case a.e == 0:
		return ErrOf[F]{x: x}
	case math.IsInf(a.e, 1):
		return unbounded[F](x)
	}
	rh, err := a.hull().RoundTo(f)
	if err != nil || rh.Lo != rh.Hi {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x}
}
