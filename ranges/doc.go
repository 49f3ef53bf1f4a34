// Package ranges holds range certificates: per-node enclosure traces of
// canonical IR graphs, and their checker.
//
// Given an irsem.Graph, its payload and an input box (one binary32
// interval per input element), Trace computes one Interval32 per element
// of every node by outward-rounded interval propagation, with one range
// rule per IR tag (Rules lists them). Every enclosure holds both the
// node's exact real value and the value a binary32 execution computes, for
// every input point in the box: each rule computes the exact-real
// enclosure with spec.Interval (float64, outward rounded, sound) and rounds
// it outward to the binary32 grid, and a binary32 operation rounds its
// exact result to nearest, which stays inside (see Interval32).
//
// That argument holds only when the enclosure follows the binary32
// execution operation by operation, so a reduction (sum, reduce_sum,
// reduce_mean, matmul, linear, mse_loss, softmax, layernorm) is propagated
// only when the capsule its kernel plan selects promises reduction policy
// fixed-left; under an implementation-defined capsule the trace fails, as
// it does at a tag without a rule and at an operation whose enclosure
// would be unbounded: no rule ever widens to [−inf, inf].
//
// A Certificate records the graph, payload, box, profile name, capsule
// and rule names and the trace as bit patterns. Check trusts none of it:
// it re-plans the kernels against the named profile, rebuilds the trace
// and compares it bit for bit, and replays the binary32 execution
// (irsem.DenoteAll over spec.Binary32) at the box's corners, its centre
// and seeded pseudo-random points, confirming that every value of every
// node lies in its enclosure.
//
// # Rules
//
//	tag                         rule             fixed-left capsule
//	input, const, rand_uniform  source           —
//	add, sub                    add, sub         —   (a parent minus itself: [0, 0])
//	mul_elem                    mul              —   (a parent times itself: square, ≥ 0)
//	max_elem, min_elem          hull             —
//	abs, relu                   abs, relu        —
//	sqrt                        sqrtNonnegative  —   (sqrt(max(x,0)), as the registry)
//	inv                         inv              —   (fails when 0 ∈ x)
//	exp, log                    expMonotone, logPositive  — (trusted math library)
//	tanh                        signedUnitBound  —   (monotone, within [−1, 1])
//	sigmoid                     unitBound        —   (sign-split forward, within [0, 1])
//	sin, cos                    trig             —
//	matmul                      matmulLeft       required
//	linear                      linearLeft       required (acc=0; acc += x_k·W[j,k]; then + b_j)
//	sum, reduce_sum             sumLeft          required
//	reduce_mean                 meanLeft         required
//	mse_loss                    mseLeft          required
//	softmax                     softmaxUnit      required (every output in [0, 1])
//	layernorm                   layerNormLeft    required
//	permute, transpose, broadcast_to, reshape, flatten, concat
//	                            rearrange        —
//	detach                      identity         —
//
// Unsupported (a trace fails at them): bernoulli_mask, softplus, safe_log,
// hard_masked_softmax, batch_norm_eval, conv, max_pool, avg_pool.
//
// The elementary functions rest on spec's stated trusted boundary (Go's
// math library within 2 ulps, widened by spec.Interval); everything else
// is exact arithmetic on binary32 and float64 numbers.
package ranges
