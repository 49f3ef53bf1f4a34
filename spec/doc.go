// Package spec is the bottom of tlcheck: shapes, tensors, the scalar
// algebras the whole engine is generic over, and the primitive registry
// that every execution path (tape, typed graph, IR, providers) takes its
// forward, JVP and VJP rules from. The registry is also the one source of
// every other per-op fact (OpInfo: IR form, exactness and partiality,
// smoothness and ties, zero preservation, polynomiality, accumulation,
// generator hints, providers); every other package derives its per-op
// tables from Infos. RegisterElementwise adds a unary elementwise
// primitive whose rules are Expr values, evaluated generically over every
// scalar, so that one entry serves every execution path.
//
// Go cannot index a type by a value, so TorchLean's shape-indexed
// Tensor α s becomes a Tensor[T] that carries its Shape at run time, and
// every consumer checks it. The shape-erased SomeTensor[T] exists for
// heterogeneous collections (parameter packs, model state); recovering a
// Tensor from it requires a successful Cast, the runtime analogue of
// Lean's `value.shape = shape` evidence.
//
// # Shared rules
//
// A few facts every path needs are stated here once, so that no path
// restates them: NodeError, the one error of a node-located failure, with
// one wording ("node 3 (inv): element 0: …") and the node id of the
// user's graph (AtNode locates a kernel's error, Relocate moves a lowered
// graph's internal id to the user's); FirstDiff, the one tensor
// comparison; RequiresGrad, DropTangent and StopTangent, the stop-gradient
// rules; DefaultNormEps, the normalization ε default.
//
// # Numerics of softplus and safe_log
//
// The registry evaluates softplus, safe_log and their derivatives in the
// forms below (softplusScalar, SafeLogScalar, safeLogDeriv), over every
// scalar alike; u is the unit roundoff of the format (2^-53 for F64 and
// Interval endpoints, 2^-24 for F32 and Binary32), and the elementary
// functions exp, log, log1p are within about an ulp (the trusted
// boundary of Interval). Over Rat they have no exact value: exp fails
// first, with a DomainError.
//
// softplus(x) = log(1+e^x) = relu(x) + log1p(e^−|x|) for every real x
// (x ≥ 0: log(1+e^x) = x + log(e^−x + 1); x < 0: −|x| = x). e^−|x| ∈ (0, 1]
// never overflows, log1p(t) for t ∈ (0, 1] has condition number at most 1,
// and relu(x) ≥ 0 adds a term of the same sign, so the float result has a
// relative error of a few u at every x, including x ≪ 0 where log(1+e^x)
// rounds to 0. Its derivative σ(x) is 1/(1+e^−x) for x ≥ 0 and e^x/(1+e^x)
// for x < 0, neither of which overflows. Being an identity, the form is
// sound over Interval for any operand; at a point it is tight. Where the
// sign of x is decided the rule uses the analytic branch of the identity
// (x + log1p(e^−x) for x ≥ 0, log1p(e^x) for x < 0), which gives the same
// floats but lets the chain rule over Dual see σ(x) at x = 0 instead of
// the kinks of relu and |x|.
//
// log softplus. Let a(x) = log(softplus(x)) and, for x ≤ −40, t = e^x ≤
// e^−40 < 2^-57. The alternating series gives 1 − t/2 ≤ log1p(t)/t ≤
// 1 − t/2 + t²/3 < 1, and log(1−s) > −2s for 0 < s ≤ 1/2, so
//
//	a(x) = x + log(log1p(t)/t) ∈ (x − t, x)        (x ≤ −40).
//
// It is evaluated as x − t/2. Over floats |x| ≥ 40 makes the spacing at x
// at least 2^-47 (2^-18 for binary32), more than twice t, so the result
// rounds to x, which is then the correctly rounded a(x). Over Interval the
// subtraction rounds each endpoint outward to the adjacent float, so the
// result is [pred(X.Lo), X.Hi] (the upper bound of e^X is positive after
// widening, the lower one may be 0), which contains (X.Lo − t, X.Hi) and
// hence a(X), a being increasing. For x > −40, a(x) = log(softplus(x))
// directly: softplus(x) > 4·10^-18 is a normal number in every format.
//
// safe_log(x) = log(softplus(x) + ε). Unless x ≤ −40 is decided (and the
// sign of ε decided), it is log(softplus(x) + ε) directly: for ε ≥ 0 the
// sum adds terms of one sign, so |Δy| is a few u plus log's own ulp; for
// ε < 0 the cancellation multiplies the error of the sum by
// (softplus+|ε|)/(softplus+ε), which is the condition of the problem. For
// x ≤ −40, where softplus(x) underflows relative to ε (and below −745
// to 0), it is computed from a = x − t/2 and b:
//
//	ε > 0:  b = log ε,    y = max(a,b) + log1p(e^(min(a,b) − max(a,b)))
//	ε = 0:                y = a
//	ε < 0:  b = log(−ε),  y = a + log1p(−e^(b−a)),  requires a > b
//
// each an identity for every real a and b (log(e^a + e^b), log e^a,
// log(e^a − e^b)), with exponentials of non-positive arguments only; over
// Interval, Max and Min are exact hulls, so the forms stay sound. So
// safe_log(−37) with ε = 1e-30 is −37.000 (the naive form gave −69.08) and
// safe_log(−745) with ε = 0 is −745 (the naive form gave log 0).
//
// Domain. softplus(x) + ε > 0 for every real x when ε ≥ 0; for ε < 0 it
// holds iff x > log(e^−ε − 1). Where ε ≤ 0 is possible (decided, or an
// Interval ε straddling 0) and the computed argument (softplus + ε, or
// a > b in the tail) is not decidedly positive, safe_log returns a
// *DomainError naming x and ε, and tensor rules add the element index;
// over floats that includes a NaN x, and x = −∞ when ε < 0. With ε = 0 a
// float −∞ gives the limit −∞, and with ε > 0 a NaN x gives NaN.
//
// The derivative D = σ(x)/(softplus(x) + ε) is computed directly outside
// the tail. In the tail it is D0·s with D0 = σ/softplus and
// s = softplus/(softplus+ε). From log1p(t) ∈ (t − t²/2, t),
//
//	D0 = t/((1+t)·log1p(t)) ∈ (1/(1+t), 1/(1 + t/2 − t²/2)) ⊂ (1 − t, 1),
//
// evaluated as 1 − t/2, which rounds to 1 over floats (t/2 is below half
// the spacing 2^-53 under 1) and gives [pred(1), 1] ⊃ (1 − t, 1) over
// Interval, by the same argument as for a. s is σ(a − b) with b = log ε for
// ε > 0, 1 for ε = 0, and 1/(1 − e^(b−a)) with b = log(−ε) for ε < 0. In
// the tail with ε > 0, D ≈ e^(x − log ε) is as sensitive to rounding as
// an exponential of an argument of magnitude max(|x|, |log ε|): a relative
// error of that many u is inherent to any float evaluation, and the tests
// allow it.
//
// An Interval operand straddling −40 takes the direct form, which is sound
// but, when it also reaches below about −745, encloses softplus by an
// interval reaching 0: with ε = 0 that is a DomainError of Log and the
// derivative the whole line — sound, not tight.
package spec
