// Package harness checks other autodiff engines against tlcheck's exact
// rules. An engine adapter (package gorgonia, spago, gomlx beside this
// one) maps registry primitives to the engine's operations and runs the
// engine's own forward and reverse mode in float64; the harness supplies
// engine-independent cases and judges every value the engine returns.
//
// # Obligations
//
// For each case (a one-op graph, or a small DAG with fan-out and shared
// leaves) at exact dyadic inputs, with a non-trivial cotangent c and the
// loss Σ(y ⊙ c), on each machine of the engine:
//
//	forward      y against the registry's forward value;
//	vjp          (path_sum for DAGs) every input gradient against the
//	             registry's VJP of the loss, the exact reverse-mode value;
//	adjoint      ⟨g, v⟩ for the engine's gradient g and a tangent v,
//	             computed exactly from the engine's floats, against
//	             ⟨c, J·v⟩ from the registry's JVP (forward mode), within
//	             Σ|vᵢ|·Eᵢ; at a tie (mass) v moves every tied argument
//	             together, a direction along which the function is
//	             differentiable, so every valid subgradient satisfies it:
//	             ⟨vjp(1), 1⟩-style mass conservation;
//	subgradient  at the kinks of a one-op elementwise case, the engine's
//	             local derivative g/c lies in the op's Clarke
//	             subdifferential (relu at 0: [0, 1]; abs at 0: [−1, 1]);
//	zero         a zero cotangent gives exact zero gradients wherever the
//	             bound proves it (every local derivative bounded at the
//	             point: the reference is exactly 0 with bound 0);
//	machines     two machines of one engine agree bit for bit, or both
//	             within the bound.
//
// Only "fails" is a finding. An engine's tie convention that differs from
// tlcheck's is declared by its adapter as an equivalent graph in registry
// primitives (Convention); the engine is then held to it within the bound
// and the row says "convention". The convention does not excuse the
// subgradient and mass obligations: a result that is no valid subgradient
// is a finding whatever the engine documents.
//
// # The bound
//
// The exact value and the bound of every element come from evaluating
// the registry's rules over fpbound.Err (its package doc states the model
// and proves the theorem): x lies in the enclosure X, and every
// evaluation of the registry's formulas in binary32 arithmetic with any
// summation order, any contraction into fused multiply-adds, and library
// functions within ULPs binary32 ulps is within E of x. The engines
// compute in binary64, and the same theorem covers them: every step of
// its proof uses only |δ| ≤ u = 2⁻²⁴ and |η| ≤ 2⁻¹⁵⁰ for one rounding
// fl(r) = r(1+δ) + η, which binary64 satisfies with room to spare
// (u = 2⁻⁵³, η ≤ 2⁻¹⁰⁷⁵); a binary64 library function within ULPs
// binary64 ulps is within as many binary32 ulps; correctly rounded binary64
// square roots are within u₃₂ relative; every input here is a small dyadic,
// held exactly in both formats, and a constant c the formulas use is held
// as fl64(c), at least as close to c as fl32(c) (every binary32 number is
// a binary64 number); binary64 overflows later than the binary32 Ω the
// bound assumes, so where the bound is finite no binary64 value overflows
// either. So E bounds every binary64 evaluation of the same formulas: a
// "fails" (a value outside [X.Lo − E, X.Hi + E], decided in exact rational
// arithmetic) means no evaluation of the registry's formula produces the
// engine's value. The bound is loose by about 2²⁹ for binary64, which
// costs sensitivity to last-bit errors, never soundness. As in fpbound,
// an engine whose formula differs from the registry's (sigmoid as
// 1/(1+e⁻ˣ), softmax without the max shift) is judged relative to the
// registry's formula; such differences are of the order of the binary64
// rounding, far below E.
//
// # Ties: the selection model
//
// At a tie the registry's formulas branch on a difference that the bound
// cannot prove nonzero, so the bound of a tied element is as large as the
// cotangent's share, and a sum of such bounds cannot decide mass
// conservation. The mass obligation therefore rests on one more
// assumption, about the engines rather than the registry's formulas:
//
//	S  At a tie of a piecewise-linear primitive (max, min, max pooling),
//	   on inputs held exactly, the engine's comparisons are exact and each
//	   gradient element it returns is the cotangent times the engine's
//	   weight for that argument, computed with at most eight binary64
//	   roundings: |ĝᵢ − gᵢ| ≤ 2⁻⁴⁹·|ĝᵢ| + 2⁻¹⁰⁷¹, where g is a valid
//	   subgradient's value under the engine's weights.
//
// Every valid subgradient satisfies ⟨g, v⟩ = ⟨c, J·v⟩ exactly along a
// direction v that moves all tied arguments together (the function is
// linear along it, and the JVP along it does not depend on the tie
// convention), so under S, |⟨ĝ, v⟩ − ⟨c, J·v⟩| ≤ Σ|vᵢ|·(2⁻⁴⁹·|ĝᵢ| + 2⁻¹⁰⁷¹),
// decided exactly; a larger gap (both tied arguments given the whole
// cotangent) is a finding under S.
//
// The cases' inputs are multiples of 1/4 with magnitude at most 3, with
// zeros on the kinks and equal values on the ties on purpose; where every
// primitive is polynomial the enclosures are exact points.
package harness

// ULPs is the library accuracy assumed of an engine's exp, log, tanh, sin
// and cos, in binary32 ulps (fpbound.Options.ULPs): generous, since the
// engines' binary64 libraries are within a few binary64 ulps.
const ULPs = 4
