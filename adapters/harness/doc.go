// Package harness checks other autodiff engines against tlcheck's exact
// rules. An engine adapter (package gorgonia, spago, gomlx beside this
// one) maps registry primitives to the engine's operations and runs the
// engine's own forward and reverse mode in float64; the harness supplies
// engine-independent cases and judges every value the engine returns.
// Engines outside Go (PyTorch, JAX, ONNX Runtime, engines/python) speak
// the tlcheck.engine.v1 protocol (Protocol; docs/engines.md) and are run
// the same way, with float32 machines and forward mode besides.
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
//	             within the bound;
//	jvp          (an engine with forward mode, JVPEngine) J·v along the
//	             case's tangents, element by element, against the
//	             registry's JVP — only where the case gives tangents,
//	             directions along which the function is differentiable;
//	             inconclusive at a singular element;
//	run          the engine returned an error (or panicked) on a graph
//	             its adapter maps: it failed to compute a well-defined
//	             value, a finding; a graph the adapter cannot express at
//	             its shapes (ErrUnsupported) is skipped instead.
//
// Random cases (RandomCases) get the same obligations, with one rule
// more: where a random graph is not provably smooth at its inputs (an
// argument of relu, abs, clamp, max or min may sit on its kink or tie), a
// finite gradient that differs from tlcheck's convention is
// inconclusive, since another valid convention may give it and the
// Clarke set of a DAG is not enumerated; NaN and ±∞ still fail.
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
// The exact value and the bounds of every element come from evaluating
// the registry's rules twice, over fpbound.Err64 and over fpbound.Err
// (fpbound's package doc states the model and proves the theorem for
// each format): the exact value x lies in the enclosure X, and every
// evaluation of the registry's formulas with any summation order, any
// contraction into fused multiply-adds, and library functions within ULPs
// ulps of the format is within E64 of x in binary64, and within E32 of x in
// binary32. E32 bounds binary64 evaluations too: every step of fpbound's
// proof uses only |δ| ≤ u = 2⁻²⁴ and |η| ≤ 2⁻¹⁵⁰ for one rounding fl(r) =
// r(1+δ) + η, which binary64 satisfies with room to spare; a binary64
// library within ULPs binary64 ulps is within as many binary32 ulps; every
// input here is a small dyadic held exactly in both formats, and a
// constant c is held as fl64(c), at least as close to c as fl32(c);
// binary64 overflows later than the binary32 Ω the bound assumes. So
// every binary32 or binary64 evaluation of the registry's formula is
// within E32, and every binary64 one within E64 (E64 ≈ 2⁻²⁹·E32).
//
// An engine's formula need not be the registry's (sigmoid as 1/(1+e⁻ˣ),
// softmax without the max shift, layer norm through a reciprocal square
// root); such formulas differ by a few binary64 roundings, comparable to
// E64, and by 2²⁹ times less than E32. The verdict of one value v
// (decided in exact rational arithmetic against [X.Lo − E, X.Hi + E]):
//
//	holds         within E64 (or within E32 where E64 cannot decide);
//	fails         outside E32: no binary32 or binary64 evaluation of the
//	              registry's formula gives v, and v is farther from x than
//	              2²⁹ binary64 bounds of it — far beyond any formula
//	              difference of rounding size: a finding;
//	suspect       outside E64 only: consistent with another formula's
//	              rounding in binary32 but not with the registry's in
//	              binary64 — a formula difference or an error below
//	              binary32 resolution (spago's gelu′ with six-digit
//	              constants); reported, never a finding;
//	inconclusive  no finite bound (or an enclosure too wide) at v.
//
// # The sharp bound
//
// The forward values (obligation forward) are judged against the sharp
// bound: per element and per format, the least of the classic E above and
// fpbound's first-order bound F (fpbound's doc, "First-order bound"),
// computed by fpbound.SharpBounds64 and fpbound.SharpBounds on the case's
// graph converted to the canonical IR (one input vector; input k is its
// slice, reshaped: moves of exact values). F keeps the cancellations
// the classic bound loses (x/x, x − x, a softmax's shift, signed sums
// through a matmul), which on random DAGs of several ops makes it up to
// 10⁷ times smaller. The conversion is checked, not trusted: the IR
// graph's evaluation over spec.Interval, and its classic bounds over
// fpbound.Err64 and fpbound.Err, must equal, bit for bit on every element,
// those of the case's forward pass evaluated node by node, else the case
// keeps the classic bound (Reference.Sharp says why; the hand-written cases of linear, conv, layer_norm and the pools,
// whose IR tags take weights or geometry the case passes otherwise, are
// such, and each is one primitive on exact inputs, where F equals the
// classic bound: nothing propagates). A bound that is +∞ claims nothing,
// its enclosure included, so the element's enclosure is the intersection
// of the finite ones'.
//
// F32 (F for binary32) bounds binary64 evaluations as E32 does, by the
// same argument: F's proof uses the local errors ē_j, each the classic
// bound of one node on points of the boxes (which covers binary64 by the
// argument above), boxes built from the classic bound, from forward
// enclosures widened by ē_j and from F itself (each covering binary64 by
// induction), and the telescoping sum of the exact node functions, which
// involves no format at all.
//
// A forward detail names the bound that decided where it is the
// first-order one ("bound 6e-08 (binary32, first-order)"). Gradients and
// tangents keep the classic bound: the reverse pass is fpbound.GradErr's
// (issue 21, point 3).
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
// # Float32 machines
//
// A machine of a Formatted engine whose format is Float32 receives only
// cases whose every value is a binary32 number, and is judged against
// Reference.Binary32: the same exact enclosure X, with E32 (fpbound.Err,
// whose theorem covers every binary32 evaluation of the registry's
// formula, M1–M3 with ULPs library accuracy) as the tight bound and
// F32Slack·E32 = 1024·E32 as the loose one. So a value holds within E32,
// is suspect between E32 and 1024·E32, and fails farther than 1024·E32
// from every point of X. "Fails" rests on one premise about engines, as
// the binary64 verdict rests on formula differences being of rounding
// size: an engine's own binary32 formula for a primitive (another
// summation tree, a fused kernel, a rational approximation of a library
// function) is within 1024 times the registry formula's a-priori bound;
// the a-priori bound is a worst case that typical evaluations undercut
// by orders of magnitude, so a value 1024 bounds away is a wrong formula
// or a wrong derivative, not rounding. tlcheck's own rules evaluated in
// binary32 hold on every case (TestFloat32Machine). At a tie the
// selection model S becomes S32 for a float32 machine: |ĝᵢ − gᵢ| ≤
// 2⁻²⁰·|ĝᵢ| + 2⁻¹⁴⁶, eight binary32 roundings ((1 + 2⁻²⁴)⁸ − 1 < 2⁻²⁰)
// and their underflow (8·2⁻¹⁵⁰). Machines are compared only with a
// machine of the same format.
//
// The cases' inputs are multiples of 1/4 with magnitude at most 3, with
// zeros on the kinks and equal values on the ties on purpose; where every
// primitive is polynomial the enclosures are exact points.
package harness

// ULPs is the library accuracy assumed of an engine's exp, log, tanh, sin
// and cos, in ulps of the bound's format (fpbound.Options.ULPs): Go's math
// package documents under 1 ulp for exp and log and at most 2.25 ulps for
// tanh and sin (fpbound's doc, M3), and every engine here computes in Go.
const ULPs = 4
