// Package ranges holds range certificates: per-node enclosure traces of
// canonical IR graphs, and their checker.
//
// Given an irsem.Graph, its payload and an input box (one binary32
// interval per input element), Trace computes one Interval32 per element
// of every node by outward-rounded interval propagation, with one range
// rule per IR tag (Rules lists them). Every enclosure holds, for every
// binary32 input point in the box, both the node's exact real value and
// the value the binary32 execution computes (irsem.DenoteAll over
// spec.Binary32, which the checker replays).
//
// # Soundness: the registry's rules over an enclosing scalar
//
// Almost every range rule is the registry's own forward rule, run over
// Interval32 as a spec.Scalar (the unexported scalar32, in scalar32.go):
// the node's irsem application (irsem.Applications: the tag's primitive,
// or its short list of primitives, with the payload's parameters) is
// evaluated step by step on the parents' enclosures. The binary32
// execution runs the same generic rule code over spec.Binary32, and the
// exact execution over the reals, so the argument is an induction along
// the rule's scalar operations:
//
//  1. every scalar32 operation encloses both the exact real result and
//     the spec.Binary32 result of the same operation for all operands in
//     its operands' enclosures: + − × ÷ √ are computed with spec.Interval
//     (float64, outward rounded) and rounded outward to binary32, and
//     Binary32 rounds the exact result to nearest, which stays between
//     those bounds (see Interval32); Max, Min, Abs, Relu, Clamp, Sign,
//     Step and Neg are exact images; constants (FromInt, FromRat) are the
//     tightest binary32 enclosures of the exact rationals, which contain
//     their binary32 roundings; exp, log, tanh, sin, cos rest on spec's
//     trusted boundary (Go's math library within 2 ulps, widened by
//     spec.Interval);
//  2. a comparison that the enclosures decide is decided the same way by
//     every concrete execution, since its operands lie in them; one that
//     they do not decide is forced, run after run, to each outcome some
//     pair of values has, and the runs' results are joined (enclosePaths)
//     — the run with a concrete execution's outcomes follows it operation
//     by operation and encloses its result;
//  3. an operation that would leave the binary32 range, divide by an
//     enclosure containing 0, take the log of one reaching 0 or the
//     square root of one reaching below 0 fails the node, and a failure is
//     sticky (a rule that discarded the failed value still fails): no rule
//     ever widens to [−inf, inf].
//
// An elementwise primitive (one with a spec.Prim.Unary or Binary rule) is
// evaluated element by element, so forced outcomes multiply only within
// an element; a unary one whose comparison was undecided is evaluated
// again separately on the binary32 points of its operand below 0, at 0
// and above 0, and joined — how the sign-split sigmoid, softplus and
// safe_log keep each branch on its own side (every binary32 input lies in
// one part). Any other primitive runs its Forward on the whole tensors
// (reductions, matmul, linear, rearrangements; they do not compare).
//
// The argument holds only when the enclosure follows the binary32
// execution operation by operation, so a reduction (sum, reduce_sum,
// reduce_mean, matmul, linear, mse_loss, softmax, layernorm) is propagated
// only when the capsule its kernel plan selects promises reduction policy
// fixed-left (the registry's own order: a left fold from +0); under an
// implementation-defined capsule the trace fails, as it does at a tag
// without a rule.
//
// # No a-priori rounding bound decides here
//
// A range certificate rests on no a-priori rounding bound — neither
// fpbound's classic bound nor its first-order one, which bound every
// evaluation order and every fusion at once: each enclosure contains the
// binary32 result of the one order the trace follows because every
// scalar32 operation rounds its interval outward past the round-to-nearest
// result (step 1 above), not because a bound on |v̂ − x| was charged. So
// there is no choice of bound to make sharper and none to record: a range
// certificate has no rounding_bound field (package certificates, format
// v3), and the checker's containment tests compare enclosures with exact
// rational values and with the replayed binary32 bits alone. Where a
// trace is too wide, the fix is a hand-written rule (below), not a
// sharper error bound.
//
// # Hand-written rules, and why
//
// A rule is hand-written only where it knows something that the registry
// rule evaluated operation by operation over intervals cannot: that two
// operands are one value, or a range the intervals lose.
//
//	tag                         rule             why
//	input, const, rand_uniform  source           the box; payload values and draws as exact rationals
//	sub (one parent twice)      selfDifference   x − x = 0 (intervals give [lo−hi, hi−lo])
//	mul_elem (one parent twice) square           x·x ≥ 0 (intervals multiply corners)
//	mse_loss                    mseLeft          (a−b)² ≥ 0, then the registry's fold and ÷N
//	layernorm                   layerNormLeft    (x−μ)² ≥ 0 in σ², and σ²+ε ≥ 0 checked before √
//	softmax                     softmaxUnit      every output in [0, 1] (x−max and the sum are not independent)
//	sigmoid                     registry:sigmoid cut to [0, 1] (exp near 0 widens past 1 by an ulp)
//
// Every other tag with a registry primitive has the rule registry:TAG
// (registry:add, registry:softplus, registry:safe_log, registry:matmul,
// …); sub and mul_elem with two different parents are registry:sub and
// registry:mul_elem. The handWritten and knownRange tables in rules.go
// hold the list above; a tag added to the registry and to irsem gets a
// range rule without an edit here.
//
// Unsupported (a trace fails at them): the tags irsem evaluates with its
// own rules and the registry lacks — conv, max_pool, avg_pool.
//
// A Certificate records the graph, payload, box, profile name, capsule
// and rule names and the trace as bit patterns. Check trusts none of it:
// it re-plans the kernels against the named profile, rebuilds the trace
// and compares it bit for bit, and replays the binary32 execution
// (irsem.DenoteAll over spec.Binary32) at the box's corners, its centre
// and seeded pseudo-random points, confirming that every value of every
// node lies in its enclosure.
package ranges
