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
//
// # Window primitives
//
// conv, conv_transpose, max_pool, max_pool_nd, avg_pool and avg_pool_nd
// (geometry in Attrs.Window, a Window) all work over the trailing r = len(Kernel)
// axes of their input (the spatial axes); conv and conv_transpose read
// the channel axis just before them (a 2-D convolution reads NCHW, or
// CHW), pools treat it as one more leading axis, and every axis before
// that is mapped independently (a batch).
//
// Geometry.
//
// Along one spatial axis with kernel k, stride s, dilation d, pads pb
// (begin) and pe (end), the effective window is e = d·(k−1)+1. Output
// position o of a window op and kernel position j read input position
//
//	i = o·s − pb + j·d,
//
// which is a real element when 0 ≤ i < n and a padding position when
// −pb ≤ i < 0 or n ≤ i < n+pe. The output extent is
//
//	floor mode:  m = floor((n + pb + pe − e)/s) + 1      (needs n+pb+pe ≥ e)
//	ceil mode:   m = ceil((n + pb + pe − e)/s) + 1, minus one when the last
//	             window starts in the end padding, (m−1)·s ≥ n + pb
//
// (ONNX MaxPool/AveragePool and PyTorch's pooling output rule: the window
// a ceil rounds up to must start inside the input or the begin padding).
// A ceil-mode window may reach past n+pe: those positions are neither
// elements nor padding.
//
// conv_transpose is the adjoint of conv in x: input position i and kernel
// position j write output position o = i·s − pb + j·d, 0 ≤ o < m, with
//
//	m = (n−1)·s − pb − pe + e + output_padding     (needs m ≥ 1)
//
// (ONNX ConvTranspose with explicit pads, PyTorch's ConvTranspose).
//
// The three index sets of one axis, (small, j, big) with big = small·s −
// pb + j·d and 0 ≤ big < B, are the one relation every rule below walks:
// small is the output of conv and the pools and the input of
// conv_transpose, big the other side. An N-D relation is the product of
// the axes' relations, walked in row-major order of the remaining
// coordinate (relIndex).
//
// Rules.
//
// conv (parents x [L…, C, n…], W [C_out, C/g, k…], optional b [C_out]),
// with g groups, Cg = C/g and Cog = C_out/g, co in group q = co / Cog:
//
//	y[l, co, o] = (Σ_{ci<Cg} Σ_j x[l, q·Cg+ci, o·s−pb+j·d] · W[co, ci, j]) + b[co]
//
// a left fold from 0 (ci outer, j row-major inner, padding positions
// skipped: they are zeros), the bias added last. It is bilinear in (x, W)
// plus b, so its JVP is conv(dx, W) + conv(x, dW) + db, and its VJP is
//
//	dx[l, q·Cg+ci, i] = Σ_{co'<Cog} Σ_{(j,o): o·s−pb+j·d = i} dy[l, q·Cog+co', o] · W[q·Cog+co', ci, j]
//	dW[co, ci, j]     = Σ_l Σ_o dy[l, co, o] · x[l, q·Cg+ci, o·s−pb+j·d]
//	db[co]            = Σ_l Σ_o dy[l, co, o]
//
// each a left fold from 0 in the order written: every pair (o, j) that
// reads input i contributes to dx[i] — overlapping windows accumulate.
//
// conv_transpose (parents x [L…, C, n…], W [C, C_out/g, k…], optional b
// [C_out]), ci = q·Cg + ci', co = q·Cog + co':
//
//	y[l, co, o] = (Σ_{ci'<Cg} Σ_{(j,i): i·s−pb+j·d = o} x[l, ci, i] · W[ci, co', j]) + b[co]
//
// with VJP dx[l, ci, i] = Σ_{co'} Σ_j dy[l, co, i·s−pb+j·d]·W[ci, co', j]
// (a conv of dy), dW[ci, co', j] = Σ_l Σ_i x[l, ci, i]·dy[l, co,
// i·s−pb+j·d], db[co] = Σ dy[l, co, ·], and JVP as for conv.
//
// avg_pool_nd: y[l, o] = (Σ_{j real} x[l, o·s−pb+j·d]) / D(o), the sum a
// left fold from 0 over the real positions in row-major j order, D(o) =
// the number of kernel positions inside the padded input [−pb, n+pe) when
// count_include_pad (so never the positions a ceil mode adds), else the
// number of real positions. Linear: JVP = the same average of dx, VJP
// dx[i] = Σ_{(o,j) reading i} dy[o]/D(o) (accumulated over overlapping
// windows). avg_pool (TorchLean) is avg_pool_nd with dilation 1, floor
// mode and count_include_pad, which gives D = Πk.
//
// max_pool_nd: y[l, o] = the maximum of x over the real positions of the
// window (a left fold of Max from the first in row-major j order;
// padding positions are ignored, PyTorch's −∞ padding). Ties: with P(o)
// the real positions attaining the maximum and t = |P(o)|, the JVP is
// (Σ_{p∈P(o)} dx[p])/t and the VJP adds dy[o]/t to each dx[p], p ∈ P(o),
// accumulating over overlapping windows — the equal split that
// generalises max/min's 0.5/0.5, exact over Rat. The maximum and its ties
// are decided with Compare; an order Compare cannot decide (overlapping
// intervals, NaN) is an error naming the output element. A window without
// a real element is a shape error. max_pool (TorchLean) is max_pool_nd
// with dilation 1 and floor mode.
//
// # The package's name
//
// Issue 29 asked whether "spec" should be renamed, since tools read a
// folder called spec as a test folder. Decision: it keeps its name for
// now. The package holds the semantics every path is checked against —
// the registry of primitives and the scalar algebras its rules run over —
// and "spec" says that; the candidates ("prim", "registry", "semantics")
// each name one half of it. A rename touches every package of the module
// (326 files import it) and the adapters module, so it cannot be
// made in a behaviour-preserving step beside the other moves of that
// issue; if it is made, it should be made alone, with the old import path
// forwarded for one release.
package spec
