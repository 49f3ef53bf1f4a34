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

// Computed scale and zero point (ONNX QuantizeLinear whose scale s or zero
// point zp is itself computed, e.g. DynamicQuantizeLinear's function body;
// branch qdyn37). No primitive of its own: the importer
// (onnx/quantize_params.go) emits the chain
//
//	t = round_f32(div(round_f32(x), round_f32(s)))
//	k = round_int(t);  m = round_int(k + zp);  y = clamp(m, lo, hi)
//
// whose exact value is ONNX's saturate(rne(fl32(x/s)) + zp) (rne(t) + zp is
// an integer, so the outer round_int is the identity over the reals).
//
// Corollary (the code of a computed-scale quantization is decided only
// where one code is possible). Let x, s and zp be closed, with enclosures
// H_x, H_s, H_zp ∋ the exact and every modelled runtime value (each node's
// bound above). The bound of m is 0 or +∞; where it is 0 so is y's, and
// every (x̂, ŝ, ẑp) the enclosures allow gives the exact code.
// Proof. By the casts' theorem (round_cast.go) and div's, every modelled
// t̂ lies in H_t ∋ t. By the theorem above, k's bound is 0 exactly when
// rne maps all of H_t to one integer k₀ — then k̂ = k = k₀ — and +∞
// otherwise. ẑp = zp = z₀ likewise (zp's own round_int/trunc_int, or a
// constant). add's theorem bounds |fl(k̂ + ẑp) − (k₀ + z₀)|; if that bound
// is below 1/2 the hull of m lies in (k₀ + z₀ − 1/2, k₀ + z₀ + 1/2) and the
// outer round_int's bound is 0 by the theorem above, else +∞. The actual
// runtime's QuantizeLinear computes rne(t̂) + ẑp with no outer rne and no
// float add; its value equals the modelled one after the clamp: for
// |k̂| < 2^24 the binary32 sum of two integers below 2^24 + 2^16 is an
// integer whose rne is itself — exact up to 2^24, and above it every
// binary32 is an integer past [lo, hi] (|lo|, |hi| ≤ 2^16) — and for
// |k̂| ≥ 2^24 both k̂ + ẑp and fl(k̂ + ẑp) lie past the same end of
// [lo, hi], so the clamp maps both to it. clamp is 1-Lipschitz:
// bound 0 stays 0. If any step's hull holds a jump (x/s within the
// enclosure's width of a tie, or the enclosure of s too wide) a bound is
// +∞ and stays +∞ through the add, round_int and clamp: inconclusive. ∎
// So a recorded code one off a decided element FAILS (the bound being 0),
// and an element whose x/s lies within the enclosures' width of a tie is
// inconclusive, never a FAIL — cmd/tlcheck's
// TestCompareQuantizeComputedParams checks both (400 inputs near ties,
// every decided element planted one code off is caught). Where fl32(x/s)
// overflows, ONNX saturates but round_f32 over Rat has no value: the
// element is never decided.

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
