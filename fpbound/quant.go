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
// A per-axis or blocked scale (opset 21's block_size; branch quant38) is
// the same chain with s moved onto x's shape by a reshape/broadcast or a
// gather of ⌊j/B⌋ along the axis — moves of exact values, so each
// element's H_s is an enclosure of its own scale element and the proof
// holds element by element.
// So a recorded code one off a decided element FAILS (the bound being 0),
// and an element whose x/s lies within the enclosures' width of a tie is
// inconclusive, never a FAIL — cmd/tlcheck's
// TestCompareQuantizeComputedParams checks both (400 inputs near ties,
// every decided element planted one code off is caught). Where fl32(x/s)
// overflows, ONNX saturates but round_f32 over Rat has no value: the
// element is never decided.

// Selections of computed integers (ONNX Max, Min, ReduceMax, ReduceMin of
// a quantized code; branch quant38). No primitive of its own: the
// importer (onnx/quantize_select.go) emits max_elem/min_elem (a constant
// integer operand as a const node) and max_pool_nd over the reduced axes
// (ReduceMin as −max(−x)), as for floats.
//
// Corollary (a selection of decided codes is decided). Let the operands be
// computed integers with bounds E_i ∈ {0, +∞} (the theorems above). The
// bound of the selection is max_i E_i: 0 when every operand is decided,
// and then the computed value equals the exact one.
// Proof. max and min are 1-Lipschitz in the sup norm, |max(a) − max(b)| ≤
// maxᵢ |aᵢ − bᵢ|, and round nothing in IEEE 754 (the result is one of the
// operands; −x is exact), so max_elem's and max_pool_nd's bound is the
// largest of their operands' (no rounding charge); with every Eᵢ = 0 each
// computed operand is its exact value, hence so is the selection. Where
// some Eᵢ = +∞ the bound is +∞: inconclusive, never a FAIL, even when the
// undecided operand could not be selected (not tightened). ∎ A constant
// operand is exact (E = 0).
//
// DynamicQuantizeLinear of a computed x (branch quant38; the chain is in
// onnx/quantize_dynamic.go, dynamicQuantizeComputed):
//
//	M = max(0, max x);  m = min(0, min x)
//	s = round_f32(round_f32(M − m)·(1/255))
//	z = round_int(clamp(−round_f32(m/s), 0, 255))
//	y = clamp(round_int(round_int(round_f32(round_f32(x)/s)) + z), 0, 255)
//
// Corollary (DynamicQuantizeLinear's code and zero point are decided only
// where one code is possible). Every node of the chain is a registry
// primitive with its own theorem: max_pool_nd and the clamps (1-Lipschitz,
// no rounding), sub and scale then round_f32 (the classic bounds and the
// casts' theorem, round_cast.go), div (its theorem; s > 0 is required —
// an s whose enclosure holds 0 gives div no finite bound), round_int (the
// theorem above: bound 0 exactly when rne maps the hull to one integer,
// else +∞). So z's bound is 0 only when every m̂/ŝ the enclosures allow
// rounds, after the clamp, to one integer; y's is then the computed-scale
// corollary above with s and z as computed. Its proof applies unchanged:
// it used of s only that H_s is an enclosure of the exact and every
// modelled runtime scale, and of zp only that its bound is 0 or +∞. The
// rne of the text's zero point after saturation equals the reference's
// (clamp then rne; with integer bounds 0 and 255 the order does not matter:
// rne is monotone and fixes integers). ∎ The scale output is a float with
// the bound of its round_f32 (judged as any float output).

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
