// Package fpbound computes an a-priori bound on the rounding error of a
// whole canonical IR graph evaluated in IEEE 754 binary32 (Err, Bounds,
// GradErr) or binary64 (Err64, Bounds64, GradErr64), valid for every
// evaluation order the model below allows, and judges a runtime's
// recorded float32 outputs against it with a sound verdict (tlcheck
// compare).
//
// The bound is computed by evaluating the graph with irsem.DenoteAll over
// the scalar algebra Err (Err64). Both implement spec.Scalar, so the
// registry's own
// rules — the same ones that define the exact semantics over spec.Rat and
// spec.Interval — run over it unchanged: there is no per-op table here, and
// a primitive added to the registry (conv, pools, normalisations, …) is
// bounded with no edit to this package. The bound is therefore the bound
// of the registry's formula for every primitive.
//
// # Formats
//
// Err and Err64 are one algebra, ErrOf[F], over two formats F; the model,
// the theorem and the proof below are one text, written with the format's
// constants (where a statement gives numbers they are binary32's):
//
//	                                          binary32        binary64
//	p      precision (significant bits)       24              53
//	u      unit roundoff 2^-p                 2^-24           2^-53
//	η_F    underflow of one rounding          2^-150          2^-1075, charged as 2^-1074
//	2η_F   least positive subnormal           2^-149          2^-1074
//	       ulp(y) ≤ 2^(1−p)·|y|, y normal     2^-23           2^-52
//	Ω      round to nearest overflows at      2^128 − 2^103   2^1024 − 2^970
//	       γ_k finite for k ≤ 2^(p−1)         2^23            2^52
//	       integers held exactly up to 2^p    2^24            2^53
//
// What changes with the format is exactly what names these constants: the
// rounding fl of M1 (to the nearest value of the format) and the
// arithmetic of M2; the ulps of M3 (Options.ULPs counts ulps of the
// format); the standard model (u, η_F, Ω); the Sums cut-off n ≤ 2^(p−1)
// and the dot-product corollary; the underflow terms of Products and
// Quotients; the ulp term of the elementary functions; the u of Sqrt; the
// M1 error of a constant. The other cases — Abs, Max, Min, Relu, Clamp,
// Sign, Step, Compare and the tensor operations that only move values —
// use no constant of the format and hold in either as written.
//
// Bounds16 and BoundsBF16 (SharpBounds16, SharpBoundsBF16) are the same
// text for IEEE 754 binary16 (p = 11, emin = −14, u = 2^-11, Ω = 2^16 − 2^4)
// and bfloat16 (p = 8, emin = −126, u = 2^-8, Ω = 2^128 − 2^119); their
// full column of constants is in format16.go.
//
// Two binary64 constants are not float64 values, and the bound arithmetic
// uses float64 upper bounds of them: η_F = 2^-1075 is charged as 2^-1074
// (a larger η only enlarges a bound), and Ω = 2^1024 − 2^970 lies above
// MaxFloat64 = 2^1024 − 2^971, so for a float64 upper bound M of a
// magnitude the test M < Ω is M ≤ MaxFloat64 (M finite); a magnitude
// whose upper bound overflows float64 is rounded up to +∞ and gives no
// bound, as in binary32.
//
// # Model
//
// The theorem is about every evaluation of the graph in the format
// (binary32 for Err, binary64 for Err64) that satisfies these assumptions,
// and about nothing else:
//
//	M1  Data. The input and every payload value or constant c the formulas
//	    use is held as fl(c), the value of the format nearest c (ties to
//	    even); for data of the format (recorded float32 inputs and weights
//	    in binary32, any float32 or float64 data in binary64) that is c
//	    itself.
//	M2  Formulas. Each node is computed by its registry formula (the rule
//	    irsem.DenoteAll runs), each scalar operation of the formula in IEEE
//	    754 arithmetic of the format with round to nearest, ties to even,
//	    and gradual underflow, with exactly two freedoms:
//	      (a) reassociation: every sum — a maximal expression of additions
//	          and subtractions whose intermediate results nothing else
//	          reads, across node boundaries too (a matmul and the bias
//	          added after it) — may be evaluated in any order and
//	          parenthesisation, with any number of partial accumulators;
//	      (b) contraction: a product that is a term of such a sum may be
//	          fused with one addition of it (fused multiply-add, rounded
//	          once).
//	M3  Library. exp, log, log1p, tanh, sin and cos return a value of the
//	    format within k ulps (of the format) of the real function at their
//	    argument, k = Options.ULPs (DefaultULPs = 4. Binary32: glibc
//	    documents ≤ 1–2 ulps for its binary32 functions, SLEEF's u10
//	    functions that PyTorch vectorises 1.0 ulp, and CUDA's
//	    single-precision expf/logf/tanhf/sinf/cosf ≤ 2 ulps. Binary64:
//	    Go's math package, which the pure-Go engines call, states errors
//	    below 1 ulp for Exp, Log and Log1p (FreeBSD msun's error analysis,
//	    math/exp.go, log.go, log1p.go) and Cephes's measured peak relative
//	    errors 2.5·10⁻¹⁶ for Tanh and 2.1·10⁻¹⁶ for Sin and Cos
//	    (math/tanh.go, sin.go), at most 2.25 binary64 ulps); sqrt is
//	    correctly rounded (IEEE 754), whatever k.
//
// "Exact" is the real-number value of the same registry formulas on the
// exact data (spec.Rat where the graph is rational, enclosed by
// spec.Interval otherwise — in Compare intersected with the high-precision
// ball centre, "The ball centre"; the interval enclosures of exp, log, …
// rest on spec.Interval's documented trusted boundary, Go's float64 math
// library within 2 ulps).
//
// Where a runtime uses another formula, the verdict is relative to this
// model, not to that runtime: PyTorch's eval-mode batch norm folds
// γ/√(σ²+ε) into one scale and shift, its sigmoid is 1/(1+e^−x) for every
// x (the registry splits on the sign), its layer norm multiplies by a
// reciprocal square root, its LRN raises to −β with pow where the registry
// composes exp and log, and ONNX's Shrink selects by comparison where the
// registry multiplies by steps. Those differ from the registry's formulas by
// amounts of the order of the bound itself, so a Fails on such a node says
// "no evaluation of the registry's formula gives this value" — a theorem —
// and is evidence, not proof, about that runtime.
//
// # Theorem
//
// For every output element, Bounds (Bounds64) returns an interval X and a
// bound E. If E is finite then (i) the exact value x lies in X, and (ii)
// every evaluation satisfying M1–M3 produces a finite value v̂ of the
// format (binary32; binary64) with |v̂ − x| ≤ E. (E = +∞ claims nothing;
// X is then reported for information only.) The same holds for every
// value GradErr (GradErr64) returns and for every Err (Err64) value that
// code run under Evaluate computes.
//
// # Proof
//
// Write u = 2^-p (2^-24 for binary32), γ_k = k·u/(1 − k·u), Ω the
// format's overflow threshold (2^128 − 2^103 for binary32: round to
// nearest overflows exactly when the exact result has magnitude ≥ Ω),
// mag X = max |X|, mig X = min |X| (0 when 0 ∈ X). The numbers below are
// binary32's; for binary64 read them through the table of Formats:
// 2^-150 = η_F becomes 2^-1075 (charged 2^-1074), 2^-149 = 2η_F becomes
// 2^-1074, 2^-148 becomes 2^-1073, 2^-23 becomes 2^-52 and 2^23 becomes
// 2^52. The standard model of a binary format with gradual underflow: for
// every operation whose exact result r has |r| < Ω, fl(r) = r(1+δ) + η
// with |δ| ≤ u, |η| ≤ η_F (2^-150) and δ·η = 0, and η = 0 for additions
// and subtractions (a sum of two values of the format that falls in the
// subnormal range is exact; Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed., §2.2 and Thm 2.2).
//
// The proof is by induction over the scalar operations the registry's
// formulas perform over Err, in evaluation order. Every Err value is
// either closed or a pending sum, with the invariants
//
//	closed (X, E):   x ∈ X, and every modelled evaluation holds a finite
//	                 value v̂ with |v̂ − x| ≤ E (so v̂ ∈ H = [X.Lo − E,
//	                 X.Hi + E], the hull);
//	pending (X, E, S, n), x = t₁ + … + tₙ:  x ∈ X, and every modelled
//	                 evaluation holds terms t̃ᵢ — closed values,
//	                 or, for a product term it fuses, the exact product âb̂
//	                 of two closed values — with
//	                 Σ|t̃ᵢ − tᵢ| + 2^-149·(number of fused terms) ≤ E
//	                 and Σ|t̃ᵢ| ≤ S; and, when B > 0 is recorded, for
//	                 some term i*, |t̃_{i*}| ≤ B and Σ_{i≠i*}|t̃ᵢ| ≤ S − B.
//
// Every float64 computed on bounds is rounded upward (round.go: the
// float64 operation rounds to nearest, and the next float64 towards +∞ is
// at least the exact result; enclosures use spec.Interval's outward
// rounding), so each step below computes an upper bound of the quantity it
// names. The cases:
//
// Constants (FromRat, FromInt, M1). X encloses c; E = |c − fl(c)|,
// computed exactly in big.Rat and rounded up (0 when c is a value of the
// format: binary32 dyadics for Err; every float64, and more, for Err64).
//
// Add, Sub, Neg (Sums). A closed operand enters as one term: (X, E,
// mag X + E, 1) with B = S satisfies the pending invariant since |t̃ − t|
// ≤ E and |t̃| ≤ |t| + E. Adding two values concatenates their term lists:
// X₁ + X₂ (interval sum) encloses the exact sum, and the E's and S's add;
// B = max(B₁, B₂) (if B₁ is the larger, i* = i₁* and the rest is at most
// (S₁ − B₁) + S₂ ≤ S − B; a side without B contributes none).
// Negation negates every term exactly. An exact-zero operand (X = [0,0],
// E = 0) is dropped: the runtime's 0 + v̂ is v̂ exactly (and a fused 0·ŵ
// adds exactly 0 for a finite ŵ). Under M2(a) the runtime sums the
// terms t̃ᵢ (whatever the node boundaries) by some binary tree; M2(b) lets
// some internal nodes be fused multiply-adds. Closing the sum — when any
// operation other than Add, Sub, Neg consumes it, and at the output —
// charges E' = E + γ_{n−1}·S:
//
//	Expanding the tree, ŝ = Σ t̃ᵢ·Πⱼ(1+δⱼ) + Σ_f η_f·Πⱼ(1+δⱼ), where each
//	leaf's product runs over the at most n−1 internal nodes above it and
//	η_f (|η_f| ≤ 2^-150) occurs only at fused nodes. By Higham's Lemma 3.1,
//	|Π(1+δⱼ) − 1| ≤ γ_{n−1}, so |ŝ − Σt̃ᵢ| ≤ γ_{n−1}·Σ|t̃ᵢ| +
//	Σ_f 2^-150·(1+u)^{n−2}, and (1+u)^{n−2} ≤ e^{1/2} < 2 for n ≤ 2^23,
//	i.e. n·u ≤ 1/2 (beyond that γ is taken as +∞). Hence |ŝ − x| ≤ Σ|t̃ᵢ − tᵢ| +
//	2^-149·(fused) + γ_{n−1}·S ≤ E + γ_{n−1}·S.
//
// Overflow, and the top of the range. The expansion needs every addition
// of the tree to have an exact result (the sum of its two operands as
// computed) of magnitude < Ω. The operands of an addition are the partial
// sums of two disjoint sets of leaves, k₁ + k₂ ≤ n of them, each computed
// by at most kᵢ − 1 roundings, so the exact result is at most
// (1+u)^{n−2}·S ≤ (1+γ_{n−2})·S (plus η terms of at most 2^-149 each,
// which vanish beside the float64 spacing of Ω); that below Ω suffices.
// That test cannot admit an additive mask: torch.finfo(float32).min =
// −(2^128 − 2^104) plus a score x has S ≥ 2^128 − 2^104 + |x|, and
// (1+γ₁)·S ≥ Ω for n ≥ 3 (the softmax's x + m − max), although no tree
// overflows. The sharper test: when B is recorded, one operand of any
// addition contains no leaf i* (it is bounded by (1+γ_{n−2})·(S − B)) and
// the other is either the leaf i* (|t̃_{i*}| ≤ B) or a rounded partial sum,
// which, its own addition not overflowing (induction from the leaves up),
// is a finite value of the format, |·| ≤ maxFinite = 2^128 − 2^104. So
// every exact result is at most max(B, maxFinite) + (1+γ_{n−2})·(S − B),
// and that below Ω suffices as well. Ω is exact: round to nearest gives
// ±∞ exactly from 2^128 − 2^103 (the midpoint between maxFinite and 2^128,
// which ties to the even 2^128) on, so a result of magnitude in
// [maxFinite, Ω) rounds to ±maxFinite, within ½ulp = 2^103 ≤ u·|r|: the
// standard model holds up to Ω, and γ_{n−1}·S is the charge for every
// tree. Otherwise the bound is +∞. (A computed −finfo.min + x is thus
// within u·2^128 ≈ 2·10³¹ of its exact value: a large absolute bound, but
// a finite one, and the masked softmax turns it into nothing, below.)
//
// This is the classical bound for any summation order (Higham §4.2, and
// for inner products with or without FMA §3.1, Lemmas 3.1 and 3.3): a dot product
// of n values of the format gets Σ(u|pᵢ| + 2^-149) + γ_{n−1}·Σ(|pᵢ| + Eᵢ) ≤
// γ_n·Σ|pᵢ| + n·2^-148, since (1+u)(1+γ_{n−1}) ≤ 1+γ_n.
//
// Mul (Products). For closed a, b: â = a + e_a, b̂ = b + e_b, so
// âb̂ − ab = a·e_b + b·e_a + e_a·e_b and |âb̂ − ab| ≤ P = mag X_a·E_b +
// mag X_b·E_a + E_a·E_b. The exact product on the computed operands has
// magnitude ≤ M = mag(X_a·X_b) + P; if M < Ω the rounded product is within
// u·M + 2^-150 of it, so E = P + u·M + 2^-149 bounds it (twice the
// 2^-150 of one rounding). A product that the runtime fuses into an
// addition is not rounded at all: it contributes |âb̂ − ab| ≤ P =
// E − u·M − 2^-149 to Σ|t̃ᵢ − tᵢ|, which leaves the 2^-149 that the pending
// invariant credits to each fused term for its η_f (see Sums). M ≥ Ω
// gives +∞. A factor exactly ±1 (E = 0) is exact,
// and an exact zero times a finite value is an exact zero. A factor known
// exactly to be ±2^k (E = 0) makes the rounding exact unless the result
// is subnormal: E = P + 2^-149 (u·M dropped; overflow still gives +∞).
//
// Div (Quotients). If every modelled divisor satisfies |b̂| ≥ m =
// mig X_b − E_b > 0: â/b̂ − a/b = (e_a·b − a·e_b)/(b·b̂) = e_a/b̂ −
// (a/b)·e_b/b̂, so |â/b̂ − a/b| ≤ P = (E_a + mag(X_a/X_b)·E_b)/m; then one
// rounding, u·(mag X + P) + 2^-150, as for products (only 2^-150 for an
// exact divisor ±2^k). m ≤ 0 (a divisor that may be 0) gives +∞.
//
// Abs, Max, Min, Relu, Clamp. They are exact in either format and 1-Lipschitz
// in the maximum norm (|max(â,b̂) − max(a,b)| ≤ max(|â−a|, |b̂−b|)), so
// E = the largest operand bound; X is the interval image. When the hulls
// of Max's (Min's) operands are ordered, H_a.Lo ≥ H_b.Hi, the exact and
// every computed maximum are a's, and the result is a with its own bound:
// so a relu whose hull lies in (−∞, 0] is an exact zero (E = 0), and a
// relu that is surely active keeps x's bound (Relu is Max with an exact 0,
// Clamp is Max then Min).
//
// Sign, Step. The exact result lies in Sign(X) (Step(X)), the computed one
// in Sign(H); E = max(Sign(H).Hi − Sign(X).Lo, Sign(X).Hi − Sign(H).Lo),
// which is 0 when H lies on one side of 0 and at most 2 (1) otherwise. The
// discontinuity is bounded, not decided. (An unbounded argument gives an
// unbounded result: its computed value may be NaN.)
//
// Cast (round_f16, round_bf16, round_f32: a conversion R to a narrower
// format T, correctly rounded, so the node adds no rounding beyond R
// itself). With u_T, η_T and Ω_T the constants of T: R(x) ∈ [R(X.Lo),
// R(X.Hi)] (R is monotone); E = 0 stays 0; otherwise, unless the hull
// reaches Ω_T (+∞), E' = 0 where R(H) is one point, else max(E, min(E +
// u_T·(mag X + mag H) + 2η_T, the largest distance between R(H) and R(X)))
// — the u_T and η_T terms charge the jump of R at a tie that x̂ and x may
// straddle. T and F must nest (binary16 and bfloat16 do not: +∞). The
// lemma, the proof and the first-order treatment (a cast node whose box
// straddles a jump is the identity plus the fixed offset R(x) − x, with a
// local error of twice a rounding's: "Casts in the first-order bound",
// cast37) are in round_cast.go.
//
// Cast to an integer type (trunc_int: truncation toward zero into the
// type's range). E = 0 stays 0; otherwise E' = 0 when trunc maps the whole
// hull H to one integer of the range (then trunc(x̂) = trunc(x)), and +∞
// when H straddles an integer or leaves the range: truncation jumps there,
// so the element is inconclusive, not held within a bound. The theorem is
// in round_cast.go.
//
// Rounding to an integer grid (round_int: ONNX Round; quant_int: ONNX
// QuantizeLinear of a computed FLOAT value, clamp(rne(fl32(fl32(x)/c)) +
// zp, lo, hi)). E = 0 stays 0; otherwise E' = 0 when the map sends the
// whole hull H to one code (it is monotone, so then the computed code
// equals the exact one), and +∞ when H holds a jump (a tie of the grid):
// inconclusive. The theorem is in quant.go.
//
// Elementary functions f ∈ {exp, log, log1p, tanh, sin, cos} (M3). x and
// x̂ both lie in H, so by the mean value theorem |f(x̂) − f(x)| ≤ L·E with
// L ≥ sup_H |f′| (exp: e^{H.Hi}; log: 1/H.Lo; log1p: 1/(1+H.Lo); tanh:
// 1 − tanh²(mig H); sin, cos: 1), and the library's value is within k ulps
// of f(x̂), where ulp(y) ≤ 2^-23·|y| + 2^-149 and |f(x̂)| ≤ mag f(H):
// E = L·E_x + k·(2^-23·mag f(H) + 2^-149). log (log1p) with H reaching 0
// (−1), and a result that may reach Ω, give +∞.
//
// The masked softmax. A softmax over scores with an additive finfo.min
// mask computes, for a masked entry, exp(x̂ − m̂) with x̂ − m̂ a three-term
// sum bounded as above: its hull H lies below −2^127 (−maxFinite plus a
// score, minus the row maximum, within γ₂·2^128 < 2^106 of that). So
// L = e^{H.Hi} is below the least float64 (the bound arithmetic rounds it
// up to 2^-1074), and the library's value is within k ulps of a real
// number below 2^-149/2: it lies in [0, k·2^-149], and E ≤ 2^-1074·E_x +
// k·(2^-23·2^-1074 + 2^-149). That is what M3 says of it — not that it is
// 0 (a library within k > ½ ulp may return a subnormal), though every
// library M3 cites returns 0 — and the bound charges it: the sum of the
// row's exponentials and each quotient then carry an absolute k·2^-149
// per masked entry, against values of order 1.
//
// Sqrt. |√p − √q| ≤ min(|p − q|/(2√H.Lo), √|p − q|) for p, q ∈ H ⊆ [0, ∞),
// and the root is correctly rounded and never subnormal (√(2^-149) and
// √(2^-1074) are normal): E = min(E_x/(2√H.Lo),
// √E_x) + u·mag √H. H reaching below 0 (the runtime might take the root of
// a negative number) gives +∞.
//
// Squares and lower bounds. Two facts that the intervals alone lose,
// which make layer norm's divisor √(σ² + ε) bounded away from 0 when the
// hull of σ² reaches below 0 (the deviations' hulls straddle 0). (a)
// Identity: every Add (Sub) result gets a fresh id, which copies of it
// keep (a tensor operation that moves it, a second consumer, closing
// it); Neg and every other operation make a value without one. Under
// M2 each scalar operation of a formula is performed once and its value
// read by each consumer, so two operands with the same id are one
// runtime value â, and their product is â·â: its exact value lies in
// the square's range [mig X², mag X²] (not X·X, whose lower end is
// negative when X contains 0), and every computed value (fl(â²), or the
// fused â² itself) is ≥ 0. (b) Lower bounds: a value may record lb ≤
// every computed value. Mul records 0 for a square and for factors whose
// computed values are ≥ 0 (fl is monotone, fl(0) = 0); Abs records 0; Div
// records 0 for â ≥ 0 over b̂ > 0. A sum whose every term t has a lower
// bound L_t ≥ 0 (the hull's X.Lo − E or lb) records max_t ℓ_t, ℓ_t =
// max(0, L_t·(1 − u) − η): every partial sum of every tree is ≥ 0 (a
// rounding of a non-negative value is non-negative), so each addition
// fl(p + q) with q ≥ 0 is ≥ fl(p), and the root is ≥ fl(t) ≥ ℓ_t for each
// leaf t (a closed value is its own rounding; a fused product enters as
// fl(âb̂ + q) ≥ fl(âb̂) ≥ âb̂(1 − u) − η). So σ² + ε̂ is ≥ ε̂(1 − u) − η.
// Sqrt records √l·(1 − u) for an argument ≥ l (correctly rounded,
// monotone), and uses l in place of the hull's lower end: the computed
// arguments lie in [l, H.Hi], the exact one in X (required ≥ 0), so the
// mean value theorem runs over [min(X.Lo, l), H.Hi]. Div uses a
// divisor's lower bound l > 0 as m (when X_b excludes 0): every computed
// divisor has |b̂| ≥ l. A value whose bound is +∞ has no lower bound (its
// computed value may be NaN). The first-order sweep's interval scalar applies
// (a) as well (adj: the square of one box value is its square's range).
//
// Compare (branches). The registry's rules branch on comparisons (raw
// log's domain check, sigmoid's sign split, softplus's, safe_log's tail).
// Compare is decided only when the hulls do not overlap, or both values
// are the same exact point; then the exact values and every modelled
// evaluation are ordered alike, so the branch taken over Err is the
// runtime's. Otherwise it returns "undecided" and counts it; the rule
// either fails (raw log: an evaluation error) or takes one branch, which
// the runtime might not take. Bounds therefore reports every element of
// an evaluation with an undecided comparison, or with a failed one, as
// unbounded (+∞, with the reason), so it is Inconclusive, never a verdict.
// (The count is package state read around the evaluation; evaluations
// are serialised by a mutex.)
//
// Tensor operations that only move values (reshape, permute, broadcast,
// concat, slices, detach) move Err values unchanged, a pending sum
// included: where a value is stored does not change it. A value read by
// several consumers is one runtime value, and each consumer's case above
// holds for it separately.
//
// By induction every output element satisfies its invariant after being
// closed, which is the theorem. ∎
//
// # Verdicts
//
// Compare (and Judge) decide each recorded value r against (X, E) in
// exact rational arithmetic on the float64 endpoints:
//
//	Fails         min_{x∈X} |r − x| > E: by (i) and (ii) no modelled
//	              evaluation produces r;
//	Holds         max_{x∈X} |r − x| ≤ E: |r − x| ≤ E for the exact x;
//	Inconclusive  otherwise, and whenever E = +∞.
//
// A NaN or infinite r fails wherever E is finite (every modelled
// evaluation is finite then) and is inconclusive otherwise. Summary.MaxErr
// encloses max |r − x| over the elements (rounded outward). Judge takes a
// recorded float32; an Enclosure of Err64 judges a recorded float64 by
// the same three cases (the adapters harness does so).
//
// # Tightness
//
// The bound is a worst case over every order and every rounding, and it
// propagates errors through magnitudes: a linear layer turns input errors
// Eᵢ into Σ|wᵢ|·Eᵢ, ignoring the cancellation that the signs of the
// weights bring. It is within a small factor of the classical γ_n bound
// for one layer, and grows by about Σ|wᵢ| per layer. On random binary32
// 16-64×L-10 tanh MLPs (weights N(0, 1/fan-in)) the largest observed
// error over ten evaluators is a fraction 8·10⁻³ (L = 1), 1.3·10⁻³
// (L = 2), 5·10⁻⁵ (L = 4) of the bound (TestTightness), and the bound is
// worth 5·10⁻⁵, 4·10⁻⁴, 1.3·10⁻² of the value: deep networks get a bound
// that is sound but weak (at L = 8 it exceeds the value). On the single
// layers of ONNX's PyTorch-converted backend tests (tlcheck compare), the
// recorded PyTorch outputs lie at a median 0.07 and at most 0.71 of the
// bound (LeakyReLU's single rounded product), batch norm at 0.3–0.4
// although PyTorch folds its formula differently. The first-order bound
// below keeps the cancellation; SharpBounds and Compare use the smaller of
// the two. On width-64 MLPs (TestFigures, docs/bounds.md) it stays at a
// median 2–3·10³ × the actual error to depth 16 for ReLU, to depth 8 for
// tanh; beyond, the radius of the interval adjoints grows like the classic
// bound (the wrapping effect: tanh′ over a box of width w is an interval of
// width ≈ w, multiplied by |W| per layer).
//
// Err64 bounds are those of Err with every term scaled by the binary64
// constants: on the MLPs and dot products of TestErr64TighterThanErr the
// binary64 bound is 2^-29 of the binary32 one (the test asserts ≤ 2^-28),
// and on one rounded binary64 product, sum, square or quotient of random
// 53-bit operands the largest observed error is 0.88–0.96 of the bound
// (TestSound64RandomGraphs).
//
// # First-order bound
//
// SharpBounds (and Compare, which decides with it) adds a second sound
// bound, in the manner of Satire (Das et al., SC'20) and of FPTaylor's
// first-order term (Solovyev et al., TOPLAS'18), under the same model
// M1–M3; per element the verdict uses the smaller of the two. It is a
// theorem of the same form as above: for every output element with finite
// first-order bound F, every evaluation satisfying M1–M3 produces a value
// within F of the exact value, which lies in Exact.
//
// Nodes and local errors. Number the nodes j = 0 … N in id order, f_j the
// exact function of node j of its parents' values (its registry steps,
// irsem.Applications), v_j the exact values and v̂_j the values an
// evaluation holds. The local error of node j is e_j = v̂_j − f_j(v̂ of its
// parents) (for the input and const nodes: the M1 error fl(c) − c). Given
// boxes B_q that hold every value v̂_q (see below), e_j is bounded per
// element by evaluating f_j over Err on the parents' boxes with bound 0:
// the theorem above, applied to one node whose inputs are known exactly to
// be some point of B_q, says every modelled evaluation of f_j at that
// point is within the resulting bound ē_j of f_j at that point. A sum is
// one pending Err value, so it is charged γ_{n−1}·Σ|t| once, for every
// order and every fusion (M2). Reassociation across a node boundary (M2(a):
// a matmul node whose only consumer adds the bias) is kept: a node whose
// only child consumes it and whose value is a pending sum is fused into
// that child — its local error is 0, the child's is computed over Err
// from the fused node's pending terms, so it bounds the runtime's sum of
// all the terms in any order (fl of the matmul then + b is one such
// order). The fused node's v̂ is then the exact f_j of its computed inputs
// (a virtual value the proof uses; no runtime value is claimed for it).
// Overflow, underflow and library terms are those of the cases above.
//
// Telescoping and the mean value theorem. Let T_k be the evaluation whose
// nodes ≤ k take their computed values (each v̂_j = f_j(·) + e_j) and whose
// later nodes are exact functions of them; T_{−1} is exact, T_N the
// modelled evaluation. Write Φ_k for the output element y as a function of
// node k's value with the nodes before k fixed at their computed values and
// the nodes after k exact. Then T_k and T_{k−1} differ only in node k's
// value, f_k(v̂) + e_k against f_k(v̂), so
//
//	ŷ − y = Σ_k [Φ_k(f_k(v̂) + e_k) − Φ_k(f_k(v̂))].
//
// Φ_k is a composition of the registry's primitives. Where it is locally
// Lipschitz on the boxes, Lebourg's mean value theorem (Clarke, Optimization
// and Nonsmooth Analysis, 1983, Thm 2.3.7) gives each bracket as ⟨ξ, e_k⟩
// with ξ in Clarke's generalized gradient of Φ_k at a point of the
// segment, and Clarke's chain rule (Thm 2.6.6) puts ξ in the convex hull of
// the products of the local generalized Jacobians along the graph. The
// reverse sweep computes exactly such products in interval arithmetic: it
// seeds the output element with 1 and runs every node's steps' VJP rules
// (the registry's, over spec.Interval; no per-op table) on the boxes, so
// each resulting adjoint interval A_k contains ξ, whatever the point of
// the segment. Hence |ŷ − y| ≤ Σ_k Σ_i mag(A_{k,i})·ē_{k,i} = F, summed
// with upward rounding. There is no second-order remainder: the adjoints
// are enclosures over boxes, not values at the exact point.
//
// Kinks and discontinuities. relu, abs, max, min and clamp are Lipschitz;
// their VJP rules take derivatives through Step and Sign, whose interval
// values on a box that contains the kink are [0, 1] and [−1, 1], the hull
// of the one-sided derivatives, which contains Clarke's gradient. A
// discontinuity voids the argument: in a primitive the registry does not
// mark Smooth, a Sign or Step of a straddling box in its forward formula,
// or an undecided comparison in its forward or VJP formula (max_pool's
// argmax, a tie rule), makes the first-order bound +∞ for the evaluation
// (the classic bound still decides), unless the primitive states
// spec.OpInfo.HullsUndecided (below). In a Smooth primitive a comparison
// only chooses between formulas of the same function (sigmoid's two stable
// forms), and either encloses it on the box. A cast node (round_f16,
// round_bf16, round_f32 of one parent) whose box straddles a rounding
// midpoint does not void it: its exact function is taken to be v ↦ v +
// δ(x), δ(x) = R(x) − x at the exact operand x, affine with Jacobian 1,
// which gives the exact R(x) at x, and its local error is bounded by twice
// a rounding's (round_cast.go, "Casts in the first-order bound", cast37). A derivative that is
// unbounded on a box (sqrt or a divisor at 0) gives F = +∞. A primitive
// whose derivative rule is zero by definition (detach, keep_mask) but whose
// value depends on a parent gives F = +∞ as well.
//
// Max-pool ties on boxes (unet36). Model: f(x)_o = max_{i∈W(o)} x_i over
// each window W(o) (max_pool, max_pool_nd), with the registry's VJP rule
// over an Encloser scalar: where the order of a window cannot be decided
// on the boxes, every candidate c ∈ P(o) — an element that no element of
// the window is decidedly greater than — receives hull(0, dy_o), every
// other element 0 (spec, poolTies); the forward rule is the left fold of
// Max, which compares nothing. Such a primitive states HullsUndecided, and
// adj neither watches its comparisons nor refuses them (adj is an
// Encloser: Join is the hull). Theorem: for x, x̂ in the product B of the
// boxes, f(x̂)_o − f(x)_o = Σ_i λ_i·(x̂_i − x_i) with λ in the interval row
// the rule returns for the one-hot cotangent e_o. Proof: φ(t) = f(x +
// t(x̂ − x))_o is a maximum of affine functions of t, hence Lipschitz and
// piecewise affine; on each of its finitely many pieces its slope is
// x̂_i − x_i for an i attaining the maximum at an interior point z of that
// piece, and z ∈ B (B is convex). A maximiser at a point of B is decidedly
// below no element of the window (a comparison decided on the boxes holds
// at every point of B), so i ∈ P(o). Hence φ(1) − φ(0) = Σ_pieces
// (length)·(x̂_i − x_i) = Σ_{i∈P(o)} λ_i (x̂_i − x_i) with λ_i ≥ 0, Σλ_i = 1:
// each λ_i ∈ [0, 1] = hull(0, 1), the rule's entry. A window whose order
// is decided has a unique maximiser m on all of B (or exact ties, where
// the rule's 1/t split is the registry's convention and the Clarke
// gradient's barycentre), and f_o = x_m there. So the interval Jacobian
// holds a matrix giving the difference exactly, which is what the mean
// value step above needs (Clarke's gradient of a max is the hull of the
// maximisers' unit vectors, as for relu and abs). TestMaxPoolTiesOnBoxes
// checks it on windows with exact ties: finite bounds (+∞ without the
// fact), every float32 evaluation within them, a planted 10⁻⁶ relative
// error caught.
//
// Boxes. The argument needs boxes B_j that hold node j's value in every
// T_k and on every segment above, i.e. the values of evaluations whose
// local errors are a subset of the e_k, one of them scaled by t ∈ [0, 1].
// They are built in id order, each from sound facts only: (a) the classic
// bound, X_j ± E_j (its induction uses only |δ| ≤ u, |η| ≤ η_F per
// operation, so it also covers a rounding scaled by t or absent); (b) the
// forward enclosure f_j(parents' boxes) ± ē_j, computed by the registry's
// forward rules over spec.Interval; (c) X_j ± F_j, where F_j is the
// first-order bound of node j's own elements, computed by the sweep above
// from node j — it uses only the boxes of nodes before j, which hold by
// induction, and bounds every partial evaluation because each of its local
// errors is at most ē_k in magnitude. B_j is the intersection. So the one
// pass in id order is the fixed point of "a tighter bound gives tighter
// boxes": no later bound can change an earlier box. Sweeps from
// intermediate nodes cost one reverse pass per element;
// Options.SweepWork caps them (a node past the cap gets the fallback
// sweep of "Cuts" from an allowance of its own, half the cap, and past
// that keeps boxes (a) ∩ (b), still sound), and caps the output's own
// sweeps at twice that in all (an output element past the cap has no
// first-order bound).
//
// Undecided classic comparisons. The classic evaluation may meet a
// comparison it cannot decide (sigmoid's sign split on a hull that
// straddles 0, deep in a stack whose classic bound has grown): its rule
// then takes one branch, which the runtime might not take, so the
// classic value of that node, and of every node that reads it directly
// or through others, is not covered by the Theorem ("Compare"). The
// induction of the Theorem still holds node by node for every other
// node: its value is computed from parents whose values satisfy the
// invariant, by a formula whose comparisons were all decided. So boxes
// (a) are kept for the nodes outside the set T of nodes that met an
// undecided comparison and their descendants (found by evaluating over
// Err node by node and reading the comparison count around each node),
// and a node of T gets the whole line as its box (a), with its exact
// enclosure not intersected with the classic X. Its box is then (b) ∩
// (c): (b) reads only the parents' boxes and node j's local error ē_j,
// which is computed over Err on those boxes and voids the first-order
// bound itself if a comparison there is undecided; (c) reads X_j (the
// Rat, ball or interval enclosure, each sound alone) and F_j. Neither
// reads a classic value of T, so every box still holds every partially
// perturbed value, and the theorem of this section holds as stated; the
// classic bound of an output in T stays +∞, and the element is decided
// by F alone.
//
// Sums closed before a repeated read. Fusing node j's pending sum into
// its one child c (above) is sound in every case, but it is only needed
// where M2(a) lets the runtime reassociate across the boundary, and it
// can be much looser than closing: torch's GroupNorm imports as conv,
// reshape, instance_norm, and fused into the norm's mean the conv's 19
// terms per output and the mean's 50 (in the tests; the UNet's 28 and
// 512) became one sum charged γ_949·Σ|t| (γ_14335 in the UNet) in place
// of γ_18 and γ_49 applied in turn. Model: a "read" of an element of q by
// c's formula is one operand slot, of one scalar operation of c's
// registry formula, that holds that element or a copy of it (moves
// perform no operation). Lemma (the sum ends at j): if c's formula reads
// every element of j in no slot or in two or more, then in every
// modelled evaluation each element of j is rounded at j, as a sum of
// j's own terms alone. Proof: under M2 each scalar operation of a
// formula is performed once and its value read by every slot that names
// it. An element v̂ of j read in two slots is an intermediate result that
// two operations read; a sum of M2(a) is a maximal expression whose
// intermediate results nothing else reads, and in an expression tree each
// intermediate fills exactly one slot, so no sum of the model contains
// both v̂'s terms and an operation of c: v̂'s sum ends at j. An element
// read in no slot reaches nothing of c. Theorem: for such a fused j, let
// ē_c' be c's local bound computed over Err as above but from j's pending
// values closed ("Sums": X, and the bound E + γ_{n−1}·S, per element)
// in place of the pending values themselves, and ē_c the bound from the
// pending values; then every element of min(ē_c, ē_c') bounds the local
// error e_c = v̂_c − f_c(v̂ of c's parents), j's v̂ being the virtual
// f_j(v̂ of j's parents) as in fusion. Proof: ē_c bounds it (fusion,
// above). By the Lemma the runtime's element of j is a rounded sum of
// j's terms alone, so by "Sums" it lies within E + γ_{n−1}·S of the
// virtual value, which lies in X; c's formula is then applied to it, and
// the Theorem of this package applied to c's formula alone, with those
// elements as inputs of known enclosure and bound, says every modelled
// evaluation of c is within ē_c' of f_c at the virtual values. Both
// bound the same quantity, element by element, so their minimum does.
// Nothing else changes: e_j = 0, j's box is the virtual value's, so the
// telescoping and the boxes of "Boxes" hold as stated. Never worse than
// fusing: each ē_c element is at most the fused one; the boxes (b) only
// shrink with it, and the sweeps sum mag(A)·ē with non-negative weights
// over adjoints of boxes that only shrink, so (interval rules being
// inclusion-isotone) no first-order bound grows; TestClosingNeverWorse
// checks this element by element on GroupNorm and GPT-2 graphs. An
// element read in exactly one slot could be a term of a longer sum of c
// (matmul + bias), so one such element keeps j's pending values only.
// How the count is made: c's application is evaluated over the reads
// algebra (reads.go), whose leaves are j's elements and whose every
// operation adds one per leaf operand slot; any comparison, IsZero, Same
// or conversion of a data-dependent value marks the count unknown (a
// branch could read differently) and unknown keeps the pending values
// only, as does a failure. The count comes from the registry's formula
// itself, not from a table of ops: instance_norm reads each x three times
// (Σx for μ, x − μ for σ², x − μ for x̂), a reshape or a bias add once.
// A comparison undecided in one of the two evaluations of c leaves the
// other; undecided in both, the first-order bound is +∞.
//
// Why not close at j itself (branch norm30's form, e_j = E + γ_{n−1}·S
// charged at j, j's box the rounded value's): also a theorem, but not
// comparable with fusion element by element, and worse on two test
// graphs. Closing widens j's box by its own rounding error, which fusion
// never puts in a box: a GPT-2 stack's masked scores (s + finfo.min,
// closed before softmax, which reads them twice) got the local error
// u·|finfo.min| ≈ 2·10³¹, a box reaching past the float32 range and a
// softmax local error of +∞, so every later first-order bound was +∞
// (TestFirstOrderBallBoxes' +∞; TestFigures' 2-block stack, decided by
// the classic bound, then missed its planted 10⁻³ fault). Fused, the
// softmax's exp closes the same sum on the virtual value and underflows
// to 0 either way. Secondarily, a permute closed before the attention
// matmul (which reads each element T times) charged, through the sweep,
// up to 1.6× what the matmul's own Err value charged fused. On the
// GroupNorm test graph closing at j gave 1.8·10⁻⁵ and the minimum above
// gives 2.5·10⁻⁵, both against 3.4·10⁻⁴ fused.
//
// Split primitives in the local errors. A registry rule may branch on a
// comparison (sigmoid's sign split); over Err it is undecided when the
// hulls overlap ("Compare"), and the local error ē_j would then be
// undecided, leaving no first-order bound. Model: within node j's local
// error (parents' values known exactly to be points of their boxes, bound
// 0), a comparison both of whose operands are exact values (closed, bound
// 0: every modelled evaluation holds exactly the value the exact formula
// holds, e.g. a parent's value itself, or a constant). Theorem: for a
// Smooth primitive with a scalar rule (elementwise) applied in j's
// formula, the closed union, element by element, of its Err values over
// every path of outcomes (−1, 0, +1) of such comparisons — the hull of
// the paths' enclosures and the largest of their bounds — bounds the
// step's value as the undecided evaluation would have, had it been
// decided. Proof: in every modelled evaluation, and in the exact
// evaluation f_j at the same parent values, each such comparison compares
// the same two reals, so both take one and the same path P (a sequence of
// outcomes, which the enumeration contains: each run answers the
// comparisons met in turn, and the next run changes the last answer that
// can still change, so every sequence of answers the formula can meet is
// run once). Along P both compute P's formula, the runtime with
// roundings, and the Theorem of this package over Err, run with P's
// outcomes imposed (sound for any point of the box, so for the points
// where P is taken), bounds |fl_P − f_P| by P's bound and f_P's value by
// P's enclosure; the union holds them for whichever P is taken. A
// comparison undecided with an operand that is not exact (a pending or
// rounded intermediate: the runtime's and the exact formula's outcomes
// may then differ, and both branches' formulas would have to be the same
// function, a fact the registry does not state), a failure on a path, or
// more than 9 paths, leaves the comparison undecided as before. The
// classic evaluation is unchanged (its comparisons are of rounded values).
// TestSigmoidSplitStraddled: SiLU after GroupNorm, one element's box
// straddling 0; without the split no bound, with it a finite bound that
// holds for every float32 evaluator and fails just outside.
//
// Repeated parent slots. A node whose parents list one node q in several
// slots (mul_elem(d, d), the square of an imported layer norm's
// variance) reads one value there in every evaluation: the forward boxes
// (b) and the local errors give each of q's elements one fresh id,
// shared by the slots, so adj's and Err's Mul of an element by itself is
// the square's range and ≥ 0 ("Squares and lower bounds", whose argument
// is exactly this: two operands with one id are one runtime value).
// Before, the slots were independent intervals and d·d of a box that
// straddles 0 reached below 0, so σ² + ε (ε = 10⁻¹² in transformers'
// ViT) reached below 0 and √ gave +∞ (TestLayerNormSquareOfOneNode).
//
// Sign floors of the boxes (vitgrad38). Model: the boxes' model above —
// B_j must hold node j's value in every evaluation whose nodes before j
// are computed and j's value is f_j(v̂) + t·e_j, t ∈ [0, 1] (the
// segments), or, for a node fused into its child, the virtual f_j(v̂).
// Theorem: let node j's local value over Err on its parents' boxes
// (localErr, the one whose bound is ē_j; a fused node's pending sum)
// record a lower bound lb of every computed value ("Squares and lower
// bounds") with a finite bound, and let X be its exact enclosure. Then
// every such value of node j is ≥ L = min(X.Lo, lb), so B_j may be
// replaced by B_j ∩ [L, ∞) (box_sign.go). Proof: the parents' values
// v̂ lie in their boxes, so f_j(v̂) ∈ X (the Err evaluation encloses the
// exact function over inputs known to lie in the boxes) and every
// modelled evaluation of f_j at v̂ is ≥ lb (the Theorem of this package
// for one node, whose lower bounds are those of "Squares and lower
// bounds"); the segment value (1 − t)·f_j(v̂) + t·fl_j(v̂) is a convex
// combination of the two, hence ≥ min of their lower ends, and the
// virtual value is f_j(v̂) ≥ X.Lo. A cast under the identity treatment
// keeps its box. So the square (d·d of one node, lb 0), the mean of
// squares (a sum of terms ≥ 0, lb ≥ 0) and σ² + ε (lb ≥ ε̂(1 − u) − η)
// keep their boxes at or above 0 (ε): the forward enclosure had widened
// the square's [0, H] by ē_j below 0 and the mean by its own, so σ² + ε
// reached below 0 and √ had +∞ as local error (ViT's last layer norm,
// vitgrad37). Max uses lower bounds too (sqrt's rule is √max(x, 0)):
// where lower(a) ≥ H_b.Hi and X_a.Lo ≥ X_b.Hi every computed and the exact
// maximum are a's, and otherwise every computed maximum is ≥ each
// operand's lower bound ≥ 0 — without it a pending σ² + ε fused into the
// root, whose hull reaches below 0 but whose lb is ≥ ε̂(1 − u) − η, lost
// its lb in max(·, 0) and the root's local error stayed +∞.
// TestSignFloorBoxes: every float32 evaluator's square, variance and root
// (a constant row, variance exactly 0, included) lies in its box; a box
// cut to the next float above the least computed variance is caught.
//
// The exact enclosure. Where every primitive of the graph is exact over
// spec.Rat the exact value of every node is computed over Rat and
// enclosed in the nearest float64 interval; otherwise it is BallCentre's
// enclosure of every node ("The ball centre"), or, where the ball
// evaluation fails or exceeds its work cap, the interval evaluation;
// either is intersected with the classic X. A graph exact over spec.Rat
// whose rational evaluation runs past an exact-arithmetic budget
// (limits rat-work, rat-bits, rat-bits-total: costs of the rational
// evaluation, not properties of the input) falls back, for the whole
// graph, to the ball centre and then the interval one, instead of being
// refused; Sharp.Centre names the centre used and Sharp.CentreFallback
// the budget. The fallback is per graph, not per node, because the
// rational evaluation is one pass whose failure leaves no node values
// behind (rat-work is checked before anything runs), and because the
// ball and interval evaluations are themselves whole-graph passes; a
// per-node mix would need the exact values of the nodes before the
// failing one kept alongside, for at most a tighter X there. The verdicts
// stay sound with either centre by the argument that follows, which asks
// of X only that it contain x_j. The boxes stay sound whichever
// is used: (a) and (c) need only that X_j contain the exact value x_j of
// node j, since a (partially) perturbed value v satisfies |v − x_j| ≤ E_j
// (resp. F_j), so v ∈ [x_j ± E_j] ⊆ X_j ± E_j; a ball enclosure contains
// x_j by its own theorem, as the interval evaluation's does, and the
// intersection of two sets that contain x_j contains it. (b) does not use
// X at all. A tighter X only makes the boxes, hence the adjoints' ranges
// and the residuals, smaller.
//
// The float64 centre (centre37). Past the rational and ball centres the
// interval evaluation's boxes grow by ‖|W|‖/‖W‖ per layer (about 14 per
// conv of a seeded ResNet; past 2¹⁰²³ after ≈ 50 convs), and so does a
// plain float64 midpoint–radius evaluation's radius. Where the ball
// centre is not used, the graph has one float format (no per-node
// formats) and ŷ₆₄ — the registry's formulas evaluated over spec.F64
// (irsem.DenoteAll: IEEE binary64, one rounding per operation, no fused
// multiply-add, Go's math library for the functions) — exists, X_j is
// narrowed in id order to X_j ∩ [ŷ₆₄,j ± G_j] (Sharp.Centre
// CentreFloat64 where every output element was so narrowed), G_j the
// binary64 first-order bound of node j.
//
// Model. ŷ₆₄ is one binary64 evaluation satisfying M1–M3 for the format
// binary64 (u = 2⁻⁵³, η = 2⁻¹⁰⁷⁵; M3 with k = max(Options.ULPs,
// DefaultULPs) ulps, which Go's library meets: doc.go's M3 cites ≤ 2.25
// binary64 ulps); every node's value is rounded at the node (no sum
// crosses a node boundary, so no fusion is needed for it).
//
// Theorem. Let the boxes B_j be built in id order as the hull of B32_j,
// the binary32 box above ((a) ∩ (b) ∩ (c), with X_j as narrowed here), and
// B64_j = (f_j(parents' boxes) ± ē⁶⁴_j) ∩ (X_j ± G_j), where ē⁶⁴_j is node
// j's binary64 local error bound (evaluated over Err64 on its parents'
// boxes, with bound 0, unfused) and G_j is computed by the same sweeps as
// F_j (same boxes, same Jacobian enclosures, same choice of sweep and cuts)
// with ē⁶⁴ in place of ē and G in place of F wherever a sweep charges a
// residual or stops at a node. Then for every node j and element i: (i)
// every binary64 evaluation under the model — in particular ŷ₆₄ — and
// every partially perturbed one (local errors a subset of the e⁶⁴_k, one
// scaled by t ∈ [0, 1]) holds node j within G_{j,i} of x_{j,i}; hence (ii)
// x_{j,i} ∈ [ŷ₆₄,j,i ± G_{j,i}]; and (iii) B_j holds every partially
// perturbed binary32 and binary64 value of node j.
//
// Proof. Induction over j in id order. Assume (iii) for every node before
// j. The first-order theorem ("First-order bound", "Dense sweep", "Cuts",
// "The fallback sweep") assumes of the format only that each local error
// e_k of an evaluation is within ē_k at every point of the parents' boxes
// and that the boxes hold every partially perturbed value of the nodes
// before j; its adjoint enclosures are the same for any format (Jacobians
// of the exact f_k over the boxes). The binary64 instance holds: ē⁶⁴_k
// bounds e⁶⁴_k by the package's Theorem for Err64, applied to one node
// whose inputs are points of the boxes, and the boxes of nodes < j hold
// the binary64 values by (iii). So G_j bounds |v − x_j| for every
// (partially perturbed) binary64 value v of node j: (i). ŷ₆₄,j is such
// a value (the full evaluation's, which T_j shares): (ii). X_j was an
// enclosure of x_j; so is its intersection with [ŷ₆₄,j ± G_j]. (iii):
// a binary64 value v of node j is f_j(parents' values) + t·e⁶⁴_j with
// the parents' values in their boxes, so v ∈ f_j(boxes) ± ē⁶⁴_j, and
// |v − x_j| ≤ G_j with x_j ∈ X_j, so v ∈ B64_j; the binary32 values are
// in B32_j by the argument above (which needs of X_j only x_j ∈ X_j and of
// the parents' boxes only that they hold the binary32 values, which the
// hulls do); the hull holds both. The binary32 first-order bound is
// unchanged in kind: its boxes are larger sets that still hold what its
// theorem asks (a larger box is always sound, only looser). ∎
//
// Where a node has no finite G_{j,i} (the sweep budget, an unbounded
// adjoint), X_j keeps the interval evaluation's enclosure, and B64_j is
// (b) alone; where (b) does not exist either (a node without forward
// steps) or ē⁶⁴_j cannot be computed (an undecided comparison), the
// induction stops at j: no later node is narrowed, and no later box needs
// to hold binary64 values (nothing reads a later G). The same stop is
// taken, to save its cost, at the first node an error reaches whose
// sweeps give no finite F and no finite G (no sweep reaches it: the
// torchvision ResNets from their first conv, whose dense sweeps do not
// fit); it decides only where the centre is tried. ŷ₆₄ is evaluated once
// some G is finite. The sweeps for G
// reuse the Jacobians the binary32 sweeps computed, and the budget's state
// is restored after them, so the binary32 sweeps choose as they would
// without G (except that a node an error of either format reaches is
// swept, for both): G costs one more sweep and one more local error per
// node, not counted against Options.SweepWork. Signed adjoints do not wrap ("Dense
// sweep": the radii are the residuals, charged once against a first-order
// bound), so G stays about 2⁻²⁹·F at any depth where F does: on the
// depth-64 ReLU MLP and conv stack of TestCentre64Encloses the radius of
// X is at most 2.8·2⁻²⁹·F and 333·2⁻⁵³·max|x|, against 2.6·10¹⁶·2⁻⁵³·max|x|
// for the interval centre, and the bounds equal the exact centre's.
//
// # Dense sweep
//
// The sweeps of "First-order bound" run, where the planes fit, as one
// dense sweep per node instead of one interval sweep per element (Rump's
// midpoint–radius argument, as package enclose uses for products). Its
// result F_j (per element of node j) satisfies the same claim as the
// interval sweep's, so "Boxes" and the verdicts use it unchanged.
//
// Local Jacobians. For each node k, once, its local Jacobian J_{k,t}
// with respect to parent t is enclosed elementwise in midpoint–radius
// planes ⟨Jᶜ, Jʳ⟩ (enclose.FromPairs): row m is the parent-t
// contribution of the registry's VJP rules of node k, run over
// spec.Interval (adj) on the boxes with the one-hot cotangent e_m
// (through spec.Prim.VJPNeed: a heavy product computes only the
// contributions the sweep reads — to the parents an error reaches and to
// earlier steps — by VJP's own operations, so the rows are VJP's). By
// "Kinks and discontinuities" every Clarke Jacobian of f_k at a point of
// the parents' boxes lies in it (a decided kink gives a point: relu's
// derivative is exactly 0 or 1). A Jacobian whose off-diagonal entries
// are all the point 0 is kept as its diagonal. The Jacobian to a parent
// that no error reaches (a constant: a matmul's weights as a node) is
// neither computed nor kept: no sweep propagates to that parent (its
// adjoint multiplies local errors that are all 0), so nothing above
// depends on it. Where node k is one step
// whose registry entry states it linear in the parent an error reaches
// (spec.OpInfo.LinearIn: y[r, j] = Σ_i M[j, i]·x[r, i] + terms free of
// x, M another argument), and no other parent carries an error, the
// Jacobian is read off M's boxes instead of the n_k VJP runs: every
// Clarke Jacobian at a point of the boxes is M at a point of its box, so
// the box encloses it; and it is the VJP runs' rows bit for bit (adj's
// 0·v and 0 + v are exact, m·[1, 1] is m), which
// TestLinearInJacobians checks on the figures' nets and
// spec's TestLinearInEqualsVJP checks of the statement against VJP over
// Rat (matmul states it with M the inner × out matrix, for a Matrix of
// at most two axes: TestConstParentJacobian checks the read on an
// imported matmul by a constant node). The sweep's budget counts such a
// Jacobian as the work done: one unit per entry kept (n_k × n_q), not
// the n_k VJP runs it replaces. Where every step of node k is a
// primitive whose registry entry states spec.OpInfo.Elementwise (output
// element i reads element i of each argument alone; set by the frames
// that build a primitive from a scalar rule, checked against VJP by
// spec's TestElementwiseDiagonalVJP) and every argument has node k's n_k
// elements, every J_{k,t} is diagonal: (node k)_i depends on (parent t)_m
// only for m = i, so every Clarke Jacobian at a point of the boxes is
// diagonal too. Its diagonal is read from one VJP run with the
// cotangent of ones: element i of the contribution to parent t is
// Σ_m 1·J_{k,t}[m, i] = J_{k,t}[i, i] (over adj: the operations of the
// one-hot run e_i at element i, the others adding exact 0·v and 0 + v),
// the one-hot runs' diagonal bit for bit, which TestLinearInJacobians
// checks on the figures' nets. The budget counts that one run (the
// node's declared work) and the n_k entries, not n_k runs.
//
// The sweep. Fix node j and any choice of Jacobians J_{c,k}, each a
// Clarke Jacobian of f_c at a point of the boxes (so within the
// enclosures, which are computed once and shared by every sweep). The exact
// adjoints of j's elements (a matrix per node, elements of j × elements of
// k) satisfy A_j = I and A_k = Σ_c A_c·J_{c,k} over the children c ≤ j.
// The sweep computes float64 matrices Ĉ_k = fl(Σ_c Ĉ_c·Jᶜ_{c,k}) (enclose
// products, or a scaled column for a diagonal), Ĉ_j = I, and for each
// node a bound ρ_k ≥ |r_k| elementwise of its local residual
//
//	r_k = Σ_c Ĉ_c·(J_{c,k} − Jᶜ_{c,k}) + (Σ_c Ĉ_c·Jᶜ_{c,k} − Ĉ_k),
//
// namely Σ_c |Ĉ_c|·Jʳ_{c,k} plus the product's rounding (enclose's
// theorem with a point left operand; for a diagonal, |fl(xy) − xy| ≤
// 2u|fl(xy)| + 2⁻¹⁰⁷⁴) plus the rounding of adding the children's
// products (exact, by TwoSum), each bound rounded upward. Then Δ_k =
// A_k − Ĉ_k obeys Δ_j = 0, Δ_k = Σ_c Δ_c·J_{c,k} + r_k, whose solution is
// Δ_k = Σ_{k ≤ m ≤ j} r_m·P_{m→k} with P_{m→k} = ∂v_m/∂v_k the sum over
// paths of the chosen Jacobians' products (P_{k→k} = I; substitute and
// regroup by the last edge). Each column i of r_m is settled in one of two
// ways:
//
//   - charged, where node m's own F_{m,i} is known (its sweep ran
//     earlier, in id order): Σ_k |(r_m·P_{m→k})_{·}|·ē_k ≤ Σ_i ρ_{m,·i}·
//     Σ_k |P_{m→k}[i,·]|·ē_k ≤ Σ_i ρ_{m,·i}·F_{m,i}, because F_m bounds
//     Σ_k |P_{m→k}|·ē_k for every such choice (induction over m: the
//     interval sweep's adjoints contain every such product, and this
//     argument is the induction step);
//   - carried otherwise, as a radius R_k ≥ |Σ_{m carried} r_m·P_{m→k}|,
//     propagated by R_q += R_k·(|Jᶜ| + Jʳ) (an enclose product of
//     non-negative planes, its upper endpoint).
//
// So, for element o of node j, Σ_k Σ_i |A_k[o,i]|·ē_{k,i} ≤ Σ_k Σ_i
// (|Ĉ_k[o,i]| + R_k[o,i])·ē_{k,i} + Σ_m Σ_i ρ_m[o,i]·F_{m,i} = F_{j,o},
// every sum rounded upward; the convex hull of Clarke's chain rule
// changes nothing (the left side is convex in the Jacobians). The radii
// that grow by ‖|J|‖ per layer in an interval (or plain midpoint–radius)
// sweep are here the residuals, each multiplied once by a first-order
// bound: a second-order term (u·F or Jʳ·F, with Jʳ itself of the order
// of the boxes' widths), which is why depth does not wrap. Centres below
// 2⁻³⁰⁰ move into R and radii below it rise to it (enclose's tameness);
// a plane past maxDense elements (or Jacobians past maxDenseTotal in
// all), or a value above 2³⁰⁰, leaves the node to the interval sweep.
// Options.SweepWork counts a dense sweep from node j as o_j × the
// declared work of the nodes it visits, divided by 16 — node j and,
// from a visited node, every parent an error reaches (stopping at a cut
// of an elementwise sweep), so a node no error reaches costs nothing —,
// a node's local Jacobians as the n_k VJP runs they take (each the
// node's declared work), one run for a diagonal one, or the n_k × n_q
// entries read off the weights (past twice the budget, the interval
// sweep); the interval sweep from one element of node j as the declared
// work of the same visited nodes, undiscounted (it skips every other
// node; before unet36 it was charged the whole prefix's declared work:
// the zoo UNet's first GroupNorm, 2048 sweeps that visit the norm alone,
// spent the whole default budget); elementwiseCut as o_j plus its
// Jacobians. The count is an estimate that decides nothing about
// soundness: it only decides which nodes are swept.
//
// Live terms. The product Ĉ_c·Jᶜ_{c,k} runs over the live terms only
// (dense_sweep.go, liveProduct): the columns p of Ĉ_c (and of the
// carried R_c) with some entry not 0, and the rows p of J they meet. A
// dead column's terms are Ĉ_c[a,p]·J[p,q] = 0·J[p,q] = ±0 exactly for
// every J in its enclosure (tame, so finite), so the exact product of the
// gathered operands is the exact product of the whole ones, and enclose's
// theorem applied to the gathered product (N = kk, the live count) gives
// its ρ; the centre is the same float64 bit for bit, since Dgemm's left
// fold from +0 never holds −0 (x + (−x) is +0 in round-to-nearest, and
// +0 + (±0) is +0) and adding ±0 to any other partial sum returns it. Its
// ρ is at most the whole product's, elementwise: fl(g′·|Ĉ|) ≤ fl(g·|Ĉ|)
// for g′ = g(kk) ≤ g(n), the gathered fold drops exact-zero terms, every
// rounded step is monotone, and F′ ≤ F; so every bound the sweep derives
// from ρ is at most the one over every term (TestLiveTermsTighter on the
// figures' nets; a radius lowered by 10 ulps on a product where ρ exceeds
// the exact radius by the rounding charge alone is caught,
// TestLiveProductEncloses). In a ReLU network a dead unit's (relu′ the
// point 0 over the box) column is such a column in every sweep.
//
// Cuts. Sweeping every intermediate node to the input costs Σ_j j node
// visits, quadratic in depth. A sweep may instead stop at a node k < j
// whose F_{k,i} are all finite (its sweep ran earlier) and charge its
// whole adjoint against them. Fix the set of nodes a sweep stops at and
// let W be the window adjoints, W_j = I and W_q = Σ_c W_c·J_{c,q} over
// the children c the sweep processed (not stopped at); then A_q − W_q =
// Σ_c (A_c − W_c)·J_{c,q} + Σ_{c stopped} W_c·J_{c,q}, whose solution is
// A_q = [q processed]·W_q + Σ_{k stopped, k ≥ q} W_k·P_{k→q} (regroup
// each path from q to j by its last stopped node). Hence
//
//	Σ_q Σ_i |A_q[o,i]|·ē_{q,i} ≤ Σ_{q processed} Σ_i |W_q[o,i]|·ē_{q,i}
//	                             + Σ_{k stopped} Σ_p |W_k[o,p]|·F_{k,p},
//
// since F_k bounds Σ_q |P_{k→q}[p,·]|·ē_q for every choice of the
// Jacobians (the induction hypothesis above, which a cut sweep thus
// keeps). A sweep with cuts settles every residual by carrying it (never
// charged: a charge ρ_m·F_m covers the paths below m whole, not their
// parts that a stop regroups), so |W_q| ≤ |Ĉ_q| + R_q for processed and
// stopped nodes alike, R propagated only through processed ones; it adds
// (|Ĉ_k| + R_k)·F_k per stopped k and goes no further along it. The loss
// is |Σ_p W_k[o,p]·P[p,i]| ≤ Σ_p |W_k[o,p]|·|P[p,i]|: nothing where W_k
// is diagonal (an elementwise node's), one product's sign cancellations
// otherwise. By default a sweep cuts only where it loses nothing and
// carries nothing: at node j's one erroneous parent q when J_{j,q} is
// diagonal (an elementwise node), so F_j = Σ_i (|Ĉ| + R)·F_q + ē_j with
// node j alone processed — half the visits of a ReLU MLP. The loss is
// nothing whenever every row of W_k has at most one entry whose centre or
// radius is not 0 (the row o of |Σ_p W_k[o,p]·P[p,i]| has one term, so it
// equals Σ_p |W_k[o,p]|·|P[p,i]|), which holds beyond the diagonal for a
// node that only moves, selects or copies values (reshape, permute,
// slice, broadcast, concat, gather: a 0/1 Jacobian with one 1 per row);
// such a node's sweep stops at its parent too, F_j[o] = |W[o,p]|·F_q[p] +
// the residuals for the one p its element o reads (read off the
// Jacobian's entries, no op table). A node too large for the dense
// sweep (o_j² > maxDense) gets this same cut row by row (unet36_cut.go,
// elementwiseCut): F_j[o] = ē_{j,o} + Σ_i (|Ĉ[o,i]| + R[o,i])·F_q[i], rounded
// up, the dense sweep's bound without its o_j × n_q adjoint matrix (the
// same sums: W_j = I, one stop at q), instead of the interval sweep
// through every node above q. Such a node diagonal to several erroneous
// parents, every one with finite F (SiLU's x·σ(x) reads x directly and
// through σ) gets the cut at all of them at once (unet38_cut.go,
// parentsCut): the stop set is j's erroneous parents, W_j = I and
// W_{p_t} = J_{j,p_t} diagonal, so by the inequality above
// F_j[o] = ē_{j,o} + Σ_t (|Ĉ_t[o]| + R_t[o])·F_{p_t}[o], one term per
// parent slot t (Σ_t |J_t| ≥ |Σ_t J_t| where a parent fills two slots),
// rounded up: the fallback sweep's bound for j (its stops are j's
// parents) without its adjoint matrices. It loses the cancellation
// between the slots' paths, |Σ_t J_t·P_t| ≤ Σ_t |J_t|·|P_t|, which the
// interval sweep through every node above keeps at o_j × that prefix's
// work. Deeper windows
// (levels: 0 for an uncut sweep, else the largest over its stops of k's
// level, + 1 for a non-diagonal W_k; every ⌈√N⌉-th node uncut, the others
// stopping at level-0 nodes, about N^{3/2} visits instead of Σ_j j) are
// sound and tested but off: the residuals they carry cross the window
// multiplied by |J| per node, and on the Kaiming ReLU MLPs the looser
// boxes straddled more kinks, whose Jʳ so carried grew the output bound
// 18× at depth 32. The output is always swept uncut.
//
// The fallback sweep. A node j that no other sweep reaches within
// Options.SweepWork (its level-0 sweep, and the interval sweep, past the
// budget) is swept with the stop set "every visited node k ≠ j whose
// F_k are all finite", whatever W_k (sweep.go, cutAll): by the argument
// above it bounds Σ_q |A_q|·ē_q for node j for every choice of the
// Jacobians, i.e. it is an F_j as every sweep's, usable for j's box (c),
// for the cuts of later sweeps and for the charges of their residuals —
// only looser than j's level-0 sweep by the cancellations across its
// stops (at j's parents, usually). Without it such a node has no F_j, and
// every later level-0 sweep, meeting a residual ρ_j there, carries it as
// a radius through |Jᶜ| + Jʳ of every node below j down to the input,
// where it multiplies the local errors with no cancellation: on the zoo's
// 2-block GPT-2 (docs/bounds.md, sweep32) that carried radius was 0.59 of
// the largest output bound 0.594, its centres' part below 10⁻³. With F_j
// the residual is charged ρ_j·F_j, a second-order term, and the bound was
// 0.0022. Its cost is about o_j × the declared work of j and of its
// parents that have no bounds, plus j's local Jacobians, counted against
// an allowance of half the budget that the other sweeps do not share; an
// elementwise sweep that stops at a node so bounded (it would not run
// without the fallback) is counted there too, so the budget is spent only
// by the sweeps that run without the fallback (less the Jacobians the
// fallback computed for them, which they reuse). This decides only which
// nodes are swept, not soundness; that no bound grows is measured
// (TestCutFallbackSweep, docs/bounds.md), not a theorem.
// A fallback's level is the largest of its stops' levels, + 1 for a
// stop whose W_k is not one entry per row; an elementwise sweep (one
// erroneous parent q) stops at q only when q's level is at most 1, else
// it runs at level 0.
//
// # Dense linear layers
//
// A linear node y = x·Wᵀ + b whose weights and bias are exact points
// (every float32 or float64 model's are) does not run the fold of Mul and
// Add element by element: ErrOf implements spec.DenseLinear, and
// LinearDense computes the value the fold would build from the same
// per-term charges, as float64 matrix products on planes (package
// enclose). Convolutions and matmuls by a constant reduce to the same
// product, through spec.DenseLinear's gather table src: a conv's output
// (o, c_out) of group q is the dot product of W's row c_out (n = C_in/groups
// ·Πk terms, kernel offset by input channel) with the window X[o, ·]
// gathered from the input (a window position over the padding is an
// absent term: an exact zero); a conv_transpose's is the same with the
// transposed relation and W's gathered rows; matmul A·B with B constant is
// linear with W = Bᵀ, and with A constant its transpose Bᵀ·Aᵀ is. Each
// output is the fold's dot product of exactly the same terms (the fold's
// window folds only the positions inside the input, which the gather's
// exact zeros leave out as the fold's Add would), so what follows, stated
// for the linear layer, is the argument for every one of them. Fix an
// output (r, j); write E_k and X_k for the bound and enclosure of input k
// after closing it (a pending sum is closed first, as Mul does), |x_k| =
// mag(X_k), w_k = W[j,k]. By "Products" the product term of a non-zero w_k
// and an input that is not an exact zero is charged
//
//	e_k = |w_k|E_k + u·(|w_k||x_k| + |w_k|E_k) + 2η,   |t̃_k| ≤ |w_k||x_k| + e_k
//
// (Mul's formula with the weight's bound 0: the cases ±1, 0 and powers of
// two that Mul special-cases only make its charge smaller, so e_k bounds
// those too); a zero weight or an exact-zero input gives the exact zero,
// which Add drops ("Sums"). The sum of the terms and of the bias is a
// pending sum with bound Σ e_k, magnitude Σ|t̃_k| + |b_j| and n = n_rj, the
// number of k with w_k ≠ 0 and input k not an exact zero, plus 1 for a
// non-zero bias: exactly the fold's count. LinearDense returns that pending
// sum with
//
//   - P ≥ Σ_k |w_k|E_k and Q ≥ Σ_k |w_k||x_k|: the upper endpoints of
//     enclose's enclosure of the product [E; M]·|W|ᵀ of non-negative
//     planes (enclose's theorem, with the a-priori γ_N bound of its
//     float64 sums, N = the row's length: C_in/groups·Πk for a conv; a
//     bound or magnitude below 2⁻³⁰⁰ is raised to 2⁻³⁰⁰ first, which only
//     enlarges it, and one above 2³⁰⁰ leaves the node to the fold);
//   - n_rj: the float64 product of the 0/1 matrices [input k not an exact
//     zero] and [w_k ≠ 0]ᵀ, exact (integer sums below 2⁵³);
//   - bound e = (1+u)·P + u·Q + n_rj·2η and magnitude s = Q + e (+|b_j|),
//     each operation rounded upward, so e ≥ Σ e_k and s ≥ Σ|t̃_k| + |b_j|;
//   - enclosure X ⊇ x·Wᵀ + b for every x in the enclosures: enclose's
//     theorem for the centre-radius product.
//
// So the result satisfies the Theorem's invariant for the node exactly as
// the fold's does, and the pending sum is charged γ_{n−1}·s when it is
// consumed. Overflow: LinearDense leaves the node to the fold (which
// answers +∞ where it must) unless P + Q < Ω, which bounds every term's
// |r̂| as "Products" requires. Relation to the fold: both count the same
// n and compute the same real charges, the fold rounding each operation
// upward and the dense path bounding its float64 sums a priori;
// TestLinearDense and TestConvDense (conv and conv_transpose, 1-D to 3-D,
// strides, dilations, padding, groups, exact-zero and pending inputs)
// check that the dense bound lies above those charges summed exactly (over
// big.Rat), counts the fold's n and lies within a relative 2⁻³⁰ of the
// fold's bound. Its enclosure is enclose's, not the fold's interval sum:
// both contain the exact value, neither is contained in the other in
// general. The dense result carries no identity ("Squares and lower
// bounds"), which only forgoes facts the fold could use, never asserts one.
//
// The weights as a plane (spec.DensePlane). Claim: LinearDensePlane(x,
// src, w, b, …), with w[i] the float64 equal to weight i's exact value,
// returns what LinearDense returns with W[i] = FromRat(w[i]), and declines
// exactly where it declines. Proof: LinearDense reads W only through
// denseWeights, which requires each W[i] to be a closed point [v, v] with
// bound 0 and v tame, and then uses v, |v| and the rows' counts of v ≠ 0.
// FromRat(w[i]) is the point [w[i], w[i]] with bound |fl(w[i]) − w[i]|
// (w[i] is a float64, so its enclosure is that point), a bound that is 0
// exactly when w[i] is a value of the format (fl(w[i]) = w[i]), and +∞ on
// overflow; planeWeights asks the same of w[i] (holds, tame) and builds the
// same |v| and counts from v = w[i]; the bias and inputs are read by the
// same code (linearDenseOn). So both compute the same planes and the same
// result, bit for bit, and no bound changes. irsem hands the plane from
// the payload's rationals (Rat.ExactFloat64: only a rational that is a
// normal float64 or 0 becomes a plane entry; anything else keeps the
// converted path), so a dense layer never holds one ErrOf (72 bytes) per
// weight. TestLinearDensePlaneAgrees (every format, with and without a
// gather table, weights the format does not hold, weights outside the
// tame range), TestPlaneRulesAgree and TestApplicationPlanesAgree (the
// linear, conv and conv_transpose rules and the first-order pass's
// applications) compare the two ErrOf for ErrOf; TestPlanePlantedWeight
// checks that a weight one binary32 ulp off is seen.
//
// The first-order pass's interval forward reads the same plane. Claim:
// forwardSteps computes every step over adj exactly as with the weights
// converted, and the sweeps (nodeVJP's VJP in x, dx = dy·W, and
// linearIn's Jacobian, both reading W) see exactly the converted
// weights; only no adj per weight is kept between them. Proof: a linear,
// conv or conv_transpose step whose weights are a payload parameter of
// exact float64 values runs spec.LinearPlane / spec.ConvPlane on adj's
// LinearDensePlane (adj_plane.go). The converted weight i is FromRat(w[i])
// (or FromSmallFrac, which ConvertTensor uses), the point [w[i], w[i]];
// adjLinearDense turns points that are all tame into the centre plane of
// their values and no radius plane (adjPlanes), which is the plane w
// itself, and then runs adjLinearDenseWith, as LinearDensePlane does on
// w — so where the plane is tame both compute the same planes and the same
// intervals bit for bit (an adj weight carries id 0 and is no operand of
// the sum's fresh ids, so no id differs either). Where w is not tame
// LinearDensePlane declines and the step converts the weights and runs its
// rule as before, so the fold or the pairs path decides as it always did.
// The step's argument list keeps the weight as a tensor of its shape
// without data; nodeVJP and linearIn convert it again from the payload
// (irsem.ArgValue, the forward's own conversion: the same adj values) for
// the one read, so every VJP and Jacobian is the converted path's. The
// enclosures are the same bit for bit, so no bound changes and nothing
// new is proved. TestPlaneForwardAgrees (convGraph's conv, conv_transpose
// and matmuls by constants, linear layers, a weight 2⁻⁴⁰⁰ beside 2⁻²⁹⁹,
// weights 1/3 and 2⁻¹⁰⁷⁴ with no plane) compares every step, every dense
// node's nodeVJP on random cotangents and SharpBounds' whole result with
// the plane path off and on; TestLinearDensePlaneAdj compares
// LinearDensePlane with LinearDense on FromRat's weights (tame and not,
// with inputs up to 2²⁹⁰); TestPlaneForwardPlanted checks that one weight
// one binary32 ulp off in the plane changes a step of the forward, and
// every weight one ulp off the bound. The transient conversion costs a
// sweep that reads a dense layer one conversion of its weights per
// nodeVJP call (none on AlexNet at the default limits, whose sweeps never
// reach its weights; docs/performance.md, mem35).
//
// Tiles and binary32 planes (mem36). Claim: the dense kernels give the
// same results, bit for bit, when they run W's rows a tile at a time
// (at most 2²⁰ weights; the whole of W when it fits) and when they read a
// binary32 weight plane in place (LinearDensePlane32, spec.DensePlane32)
// instead of its widening to float64. Proof: every binary32 value widens
// to float64 exactly, so a tile's plane holds the very float64s of the
// widened plane, and the acceptance test and the counts read those same
// values. enclose.Product's output (r, j) depends only on row r of its
// left operand, row j of W and bias element j: fastcpu.Dgemm computes each
// element as the left fold over k of the rounded products whatever the
// blocking and the number of columns (its documented order), and g, F and
// the bias term depend on k and j alone; the left operands (the input
// planes, [E; M], the exact-zero indicators) are the same for every tile.
// A tile of adj weights whose radii are all 0 skips the radius product
// that the whole call runs where some other row has radii; that product's
// contribution to the tile's columns is a fold of products of finite
// non-negative float64s and +0, hence +0, and R + (+0) = R. So no bound
// changes and nothing new is proved; a layer no longer holds a |W| plane,
// enclose's scratch or a widened plane of all its weights (8 bytes a
// weight each). TestDenseTilesAgree, TestAdjTilesAgree and
// TestPlaneGraphsTiled compare the tiled and in-place kernels with the
// untiled one on converted weights (outputs, graphs' values and compare's
// whole Result); TestPlaneTiledPlantedUlp checks that a weight one
// binary32 ulp off in the last tile is seen.
//
// # Dense interval adjoints
//
// The first-order bound's interval pass runs the registry's rules over
// adj (spec.Interval with watches, adj.go): the forward boxes f_j(B) and
// the sweeps' adjoints. Its linear products — conv, conv_transpose, linear
// and matmul by a constant forward, and the VJPs in x of conv and
// conv_transpose that every reverse sweep runs — do not fold four corner
// products and an outward-rounded sum per multiply-add: adj implements
// spec.DenseLinear and spec.DenseVJP, and LinearDense encloses y = x·Wᵀ +
// b on enclose's midpoint-radius planes (two or three float64 matrix
// products, fastcpu.Dgemm). A conv's window is gathered into rows by
// spec's table src (a position over the padding an exact 0); the VJP in x
// of a conv is conv_transpose's forward rule of the cotangent with the
// same W and geometry, channel counts swapped (spec.DenseVJP), and
// conversely. What the first-order bound needs of these rules is only
// containment: every real the exact rule gives at operands in the boxes
// (adjoints in their enclosures) lies in the result. The argument: (1)
// each interval [lo, hi] becomes ⟨c, r⟩ ⊇ [lo, hi] (enclose.FromPairs:
// c = lo/2 + hi/2, r rounded up, tiny values lifted, which only enlarges
// the set); weights and bias may be intervals too. (2) Rump's
// midpoint-radius product with Higham's a-priori bound: for x, w in their
// balls, |Σ x_k w_k + b − Ĉ| ≤ Σ (xʳ + γ_N|xᶜ|)|wᶜ| + (|xᶜ| + xʳ)wʳ + bʳ +
// γ_N|bᶜ| ≤ ρ, N = the row length (+1 with a bias), the rounding of Ĉ
// bounded by γ_N·Σ|xᶜ||wᶜ| in any summation order, that of ρ by (1+u)^{k+5}
// ≤ F (enclose's package doc, "The theorem", with every operand tame: 0 or
// in [2⁻³⁰⁰, 2³⁰⁰], so no product underflows and nothing overflows).
// (3) ToPairs rounds ⟨Ĉ, ρ⟩ outward to float64 ends (TwoSum). Where an
// operand is not tame (an infinite, NaN or huge end) LinearDense declines
// and spec.Interval's fold runs, sound everywhere. A result is a sum, so
// it gets a fresh id as the fold's Add gives it ("Squares and lower
// bounds"). The dense enclosure is not the fold's interval: on boxes of
// width above 2⁻²⁰ of the value (the forward pass's, the adjoints') it is
// within a relative 10⁻⁶ of the fold's width (midpoint-radius is exact
// for interval × point up to rounding); on points, where the fold often
// rounds nothing (a few binary32 products sum exactly in float64), the
// dense width is the a-priori charge, at most 2·N·u·Σ|x||w|. Tests:
// TestAdjConvDenseForward and TestAdjConvDenseVJP (containment of the
// whole exact range, computed over big.Rat from the convolution's
// definition, on random 1-D to 3-D convs and conv_transposes with strides,
// pads, dilations, groups, bias, exact zeros and interval weights; widths
// against the fold), TestAdjDensePlanted (a dropped radius is caught on
// points, where it is the rounding term alone, and on boxes; a radius
// shrunk by 2⁻⁴⁵ of itself is caught on boxes).
//
// # Runtime profiles
//
// M3 assumes every elementary function within k ulps, relative. Some
// runtimes compute a function otherwise: ONNX Runtime's CPU sigmoid is a
// rational approximation (MLAS) whose error is absolute — within about
// 2.2·10⁻⁷ everywhere, but not within any number of ulps of σ(x) ≈ 2·10⁻⁹
// at x = −20, where it returns 0 — and PyTorch's is 1/(1+e^−x) for every
// x, which returns 0 where e^−x overflows. Options.Profile (Profiles)
// names a runtime profile P, which replaces M3 and M2 for the primitives
// it lists, in binary32 (binary64 evaluations keep M3 under every
// profile; the profile ieee lists none and is the model above):
//
//	M3′ Library (profile P). (a) A primitive f that P lists as a library
//	    function (sigmoid, in onnxruntime-cpu and pytorch-cpu) is computed
//	    as one function of its computed argument x̂, not by its registry
//	    formula, with |computed − f(x̂)| ≤ (k + k_f)·(2^-23·|f(x̂)| + 2^-149)
//	    + a_f: k = Options.ULPs, and the extra ulps k_f and the absolute
//	    term a_f are P's numbers for f. (b) For a primitive P lists
//	    otherwise, the computed value is within (k_f ulps as in (a)) + a_f
//	    of a value that some evaluation of its registry formula satisfying
//	    M1–M3 produces at the same computed arguments.
//
// Each number is stated with its source (the library's file and function)
// in profile.go and docs/fpbound-profiles.md. onnxruntime-cpu's a_σ = 2^-22
// is an upper bound of |MLAS(x) − σ(x)| over every binary32 x, MLAS the
// algorithm of onnxruntime/core/mlas/lib/logistic.cpp with or without fused
// multiply-adds, found by running it on every input (TestMLASLogistic);
// TestProfileORTFixture checks it against ONNX Runtime's own outputs
// (fpbound/testdata, written by tools/ort_profile_fixture.py).
//
// The theorem holds under M1, M2 and M3′ as stated, with these cases
// added to the proof. (a) Library sigmoid: for the closed argument (X, E)
// the exact value σ(x) lies in σ(X) = [σ(X.Lo), σ(X.Hi)] (σ increases;
// each end enclosed by spec.Interval), and, σ being ¼-Lipschitz,
// |ŝ − σ(x)| ≤ |ŝ − σ(x̂)| + |σ(x̂) − σ(x)| ≤ (k + k_σ)·(2^-23·mag σ(H) +
// 2^-149) + a_σ + E/4, with x̂ ∈ H and |σ(x̂)| ≤ mag σ(H); the value lies in
// [0, 1], so nothing overflows. The registry's sign split is not run, so
// its comparison is not counted as undecided: the runtime does not branch.
// (b) Otherwise: the registry formula's bound E_f covers the evaluation the
// computed value is near, so E = E_f + k_f·(2^-23·M + 2^-149) + a_f, with
// M the magnitude of the hull X ± E_f (a bound of that evaluation's value);
// +∞ when M + E reaches Ω.
//
// First-order bound. The local error e_j of a listed node is bounded by the
// same case over its parents' boxes with bound 0, so ē_j ≥ (k +
// k_f)·ulp + a_f, and the absolute term enters F as a_f·mag(A_j) per
// element; the forward enclosure f_j(B) ± ē_j, and the classic bound that
// gives the boxes (a), are computed under P as well, so every box holds
// every value of every partially perturbed evaluation of a runtime that
// satisfies M3′. The telescoping and Lebourg's mean value theorem use only
// |e_j| ≤ ē_j and the exact f_j (σ itself, whose VJP rule the sweep runs),
// so the argument of "First-order bound" holds unchanged: there is still
// no second-order remainder, the adjoints being enclosures over the boxes.
// GradErr runs its forward pass under P (a listed primitive's VJP rule is
// the registry's, over the forward value the runtime computed).
//
// # Summation-order profiles
//
// M2(a) admits every order and tree for every sum, and then a charge of
// about (n/4)·u·Σ|t| per sum of n sign-balanced terms is forced whatever
// the analysis (docs/bounds.md, "Why the Kaiming rows' local charges cannot
// drop much under M2"). A runtime that states how it sums is held to a
// narrower model. A profile's name may end in "+order" (SumOrders;
// "ieee+sequential", "onnxruntime-cpu+blocked:8"; no suffix, or "+any", is
// M2(a) itself, the default, whose bounds are unchanged bit for bit); the
// profile O then replaces M2(a) by
//
//	M2′ Order O. Every sum (as M2(a) delimits it, across node boundaries
//	    too) is evaluated in one of O's orders over its terms t̃₀ … t̃ₙ₋₁
//	    in the order its registry formulas add them (the order in which
//	    the formula's additions concatenate their operands' terms; an
//	    exact-zero term, a zero bias, holds its place):
//	      sequential: the left fold ŝ₀ = t̃₀, ŝₖ = fl(ŝₖ₋₁ + t̃ₖ);
//	      blocked:k: min(k, n) accumulators, accumulator r the left fold
//	        of t̃ᵣ, t̃ᵣ₊ₖ, t̃ᵣ₊₂ₖ, …, then the accumulators reduced
//	        pairwise, level by level: (0, 1), (2, 3), …, an odd last one
//	        carried to the next level;
//	    each step either a rounded addition of the computed term or, for a
//	    product term, a fused multiply-add (M2(b), rounded once).
//
// Theorem. Under M1, M2′ (with M2(b)) and M3 (M3′ for a named library
// profile), the theorem above holds for Bounds, Evaluate and SharpBounds
// run with Options.Profile naming O. (GradErr and GradErrSharp accept such
// a name and keep any's charge, which is sound under M2′ since O's orders
// are among M2(a)'s.)
//
// Proof. Only the closing of a pending sum changes (Sums); every other
// case, and the first-order argument, read the closed value's bound alone.
// Under an order profile Add records, besides n, s and ΣEᵢ, the list of
// the sum's terms in order (ErrOf.ord: per term its exact enclosure Xᵢ
// and bound Eᵢ, with |t̃ᵢ − tᵢ| ≤ Eᵢ and tᵢ ∈ Xᵢ by the earlier cases;
// exact zeros kept; Neg negates the list; a closed value of one term and
// exact zeros is that term, exactly). Let a part of the order's tree be a
// set of consecutive-in-the-tree terms with computed value ŝ, exact sum
// σ = Σt̃ᵢ over them, enclosure P = ΣXᵢ (spec.Interval's outward sums)
// and error bound a: |ŝ − σ| ≤ a. A leaf has a = 0 (its computed value is
// t̃ᵢ: the rounded product, or, fused, the exact product âb̂ of the
// computed operands — both within Eᵢ of tᵢ by the Products case, which
// charges |âb̂ − ab| and the rounding separately). One step joins parts A
// and B by z = ŝ_A + ŝ_B (or ŝ_A + âb̂), |z − (σ_A + σ_B)| ≤ a_A + a_B,
// and |σ_A + σ_B| ≤ S := mag(P_A + P_B) + Σ_{A∪B} Eᵢ; so |z| ≤ S + a_A +
// a_B, which below Ω does not overflow, and fl(z) = z(1 + δ) + η′, |δ| ≤ u,
// |η′| ≤ η (η′ ≠ 0 only for a fused result in the subnormal range; charged
// at every step), gives
//
//	|fl(z) − (σ_A + σ_B)| ≤ a := a_A + a_B + u·(S + a_A + a_B) + η,
//
// and the step is exact (a = a_A + a_B) when one part is an exact zero
// term or a part of exact zeros with a = 0 (x + 0 and fma(0, y, x) are x).
// Induction over O's tree gives the root's |ŝ − Σt̃ᵢ| ≤ A (orderCharge:
// foldCharge for sequential, blockedCharge for blocked:k, float64 with
// upward rounding, +∞ where a step's S + a_A + a_B reaches Ω), whence
// |ŝ − Σtᵢ| ≤ A + ΣEᵢ. One A serves every choice of fused or unfused
// steps (the terms' Eᵢ cover both, η is charged at each step). To first
// order A is u·Σ_k sup|s_k| over the partial sums s_k the order forms, the
// product roundings u·|tᵢ| being in Eᵢ; the second-order terms are u·(a_A
// + a_B) per step (the earlier steps' errors, rounded again) and u·ΣEᵢ
// inside S, and the subnormal term n·η. O's orders are among M2(a)'s, so
// any's γ_{n−1}·s bounds the same error: close charges min(γ_{n−1}·s, A)
// (closeOrdered), +∞ only when both are. A pending sum built without a
// list (the dense kernels of "Dense linear layers" decline under an order
// profile so that the generic fold records it; FoldDot's saturated tail,
// whose bound is +∞ anyway) is charged γ_{n−1}·s, any's. The first-order
// bound's local errors ē_j are this algebra's bounds over the boxes, so
// they hold for O's evaluations, and "First-order bound" needs nothing
// else: the sweeps read only ē_j and the exact f_j.
//
// Tests: TestSumOrderSound (ReLU default and Kaiming, tanh and conv stacks;
// the tree evaluator in O's orders with and without FMA), TestSumOrderDots
// (24 seeds of sign-balanced dot products; a reverse order and a left fold
// that the profiles do not admit exceeding their bounds, within any's),
// TestFigures with FPBOUND_FIGURES_ORDERS (docs/bounds.md, order38).
//
// # Estimate
//
// Sharp.Estimate is reported beside the bound and decides nothing. If the
// local errors e_{k,i} were independent, mean-zero random variables with
// |e_{k,i}| ≤ ē_{k,i} (the model of Higham and Mary, SIAM J. Sci. Comput.
// 41(5), 2019, at the granularity of nodes), Hoeffding's inequality puts
// |Σ A·e| below λ·√(Σ (mag A·ē)²) with probability at least 1 − 10⁻³ for
// λ = √(2·ln 2000) ≤ 3.9; Estimate is the smaller of that and F. Real
// rounding errors are neither independent nor mean-zero in general.
//
// # Gradients: the combined first-order bound
//
// The boxed bound (GradBounds) runs the reverse formulas over Err, so the
// reverse pass's own roundings and the errors of the cotangents reach a
// gradient element through magnitudes |Jᵀ| per layer. The combined bound
// writes the reverse pass as nodes of one irsem.Graph beside the forward
// nodes it reads — the combined forward+reverse graph, whose output is the
// input gradient — and bounds that graph with SharpBounds: the first-order
// bound (doc.go, "First-order bound"), whose signed Jacobians now run
// through the reverse nodes too.
//
// Declarative VJPs. A node's reverse nodes are its registry VJP written as
// IR nodes (the table declVJPs), per parent:
//
//	linear (W, b):  dx = linear(dy; Wᵀ, 0)          (registry: dx_{…k} = Σ_j W_jk·dy_{…j}; any rank)
//	tanh:           dx = mul_elem(dy, sub(1, mul_elem(y, y)))  (registry: dy·(1 − y·y))
//	relu:           dx = mul_elem(dy, m), m the const step(x) (registry: dy·step(x))
//	add(a, b):      (dy, dy)                        (registry: (dy, dy))
//	sub(a, b):      (dy, neg(dy))                   (registry: (dy, −dy))
//	mul_elem(a, b): (mul_elem(dy, b), mul_elem(dy, a))  (registry: (dy·b, dy·a))
//	sum(x):         broadcast_to(dy; [] → shape x)  (registry: dy at every element)
//	broadcast_to:   reshape(reduce_sum(reshape(dy), a))  (registry: Σ of dy over the broadcast positions)
//	matmul(A, B):   (matmul(dy, Bᵀ), matmul(Aᵀ, dy)), Xᵀ = X's last two axes swapped by permute
//	                (registry: dy·Bᵀ, Aᵀ·dy per batch; one rank ≥ 2, equal batch axes)
//	reshape:        reshape(dy; out → in)           (registry: dy copied)
//	permute(p):     permute(dy; p⁻¹)                (registry: dy moved back)
//	scale(c):       scale(dy; c)                    (registry: dy·c)
//	softmax, hard_masked_softmax (lanes along the axis; the last axis for the mask):
//	                mul_elem(y, sub(dy, B(reduce_sum(mul_elem(dy, y)))))
//	                (registry: y_i·(dy_i − Σ_j dy_j·y_j); a blocked entry's y is exactly 0)
//	gelu:           mul_elem(d, dy), d the registry's derivative written node by node:
//	                t = tanh(k·(x + a·((x·x)·x))), du = k·(1 + (3·a)·(x·x)),
//	                d = (1/2)·(1 + t) + (((1/2)·x)·(1 − t·t))·du, k, a, 3, 1/2 const nodes
//	layernorm:      on x viewed as [o, i] (the registry's layer_norm along axis 1):
//	                μ = (Σx)/i, d = x − μ, σ⁻¹ = inv(sqrt((Σ d·d)/i + ε)), x̂ = d·σ⁻¹,
//	                g = dy·γ, dx = ((g − B((Σg)/i)) − x̂·B((Σ g·x̂)/i))·σ⁻¹
//	                (registry: the same statistics recomputed from x, the same formula)
//	conv (W, b):    dx = conv_transpose(dy; W, the conv's kernel, stride, dilation, groups,
//	                pads p|p, channels swapped, output padding (n + 2p − dl·(k−1) − 1) mod s)
//	                (registry convBackX: dx_i = Σ dy·W over the same (output position,
//	                kernel offset, output channel) triples, one sum)
//	transpose(a, b): transpose(dy; a, b)            (registry: dy moved back)
//	slice:          pad(dy; start zeros before, extent − end after, on the axis)
//	                (registry: dy in [start, end), 0 elsewhere)
//	concat:         per parent slice(dy; its offset and extent on the axis)
//	neg:            neg(dy)                         (registry: −1·dy)
//	div(a, b):      (div(dy, b), neg(div(mul_elem(dy, a), mul_elem(b, b))))
//	                (registry: (dy/b, −((dy·a)/(b·b))))
//	sqrt:           mul_elem(div(1, add(y, y)), dy), only where every element's box of y
//	                is above 0 (registry: 1/(y + y)·dy for x > 0)
//	reduce_sum:     broadcast_to(reshape(dy; extent 1 at the axis))  (registry: dy copied)
//	reduce_mean:    the same of scale(dy; 1/n)     (registry: dy·(1/n), the same constant)
//	inv:            mul_elem(neg(div(1, mul_elem(x, x))), dy)  (registry: −(1/(x·x))·dy)
//	exp:            mul_elem(y, dy)                 (registry: y·dy)
//	square:         mul_elem(add(x, x), dy)         (registry: (x + x)·dy)
//	erf:            mul_elem(erf_deriv(x), dy)      (registry: erf′(x)·dy, erf′ = (2/√π)·e^(−x²)
//	                the registry's erf_deriv primitive, grad35: its constant is not rational,
//	                so it is one registry step, enclosed and bounded as the sweeps' ErfDeriv)
//	pad (constant): slice(dy; [b_d, b_d + n_d)) on every padded axis  (registry: scatter-add
//	                over pad's index map, which reads each input element once: a copy)
//	batch_norm_eval: div(mul_elem(dy, C(γ)), C(sqrt(add(max(σ², 0), ε))))  (registry:
//	                (dy·γ_c)/s_c, s_c = sqrt(max(σ²_c, 0) + ε); γ = 1 when absent: no product)
//	max_pool, max_pool_nd: the one sum over kernel offsets j of P_j(mul_elem(dy, m_j)),
//	                m_j the const 0/1 mask "output o's maximiser is at offset j" decided by
//	                the parent's box, P_j the exact placement at o·s + j·dl − p_begin
//	                (reshape, pad, slice)  (registry: dx_i = Σ dy_o over the outputs whose
//	                unique maximiser is i)
//	gather:         the one sum over r < R of gather(concat(dy, 0); sel_r), sel_r[i] the
//	                row of index i's r-th occurrence or the zero row, R the largest
//	                multiplicity  (registry: scatter-add, dx_i = Σ_{indices[j] = i} dy_j)
//	matmul(A, B), A [β…, m, k], B [k, n] (vjp36): (matmul(dy, Bᵀ), matmul(Aᵀ, dy)) on A, dy
//	                viewed as [β·m, k], [β·m, n]  (registry: Σ over batches of Aᵀ·dy, one
//	                sum of the same products)
//
// with y the forward tanh (softmax) node itself and a, b, A, B the forward parents
// (the values the registry's rules read) and the relu mask m a const
// decided by the forward boxes (below). broadcast_to has a rule where
// the axes it grows (from_shape padded with leading 1s) form one
// contiguous run [a, z): the run is reshaped into one axis and summed by
// one reduce_sum, so each element is one sum, as the registry's. A node's
// cotangent is the sum of the contributions of its consumers (a node
// read twice by one consumer, mul_elem(x, x), contributes twice): one
// contribution is itself, two are one add node, three or more are
// reduce_sum over axis 0 of their concat, each reshaped to a leading
// axis of 1 — one sum per element, whose order M2 leaves free. A tag
// outside the table (or a linear without W, a matmul with 1-D operands or
// broadcast batches, a broadcast over separated axes) leaves the gradient
// without a combined bound (CombinedReason says why), and GradEnclosure
// then takes the classic and the boxed bound alone. B(v) is a lane value
// read at every element of its lane (reshape to extent 1 at the lane axis,
// then broadcast_to: exact copies), Σ one reduce_sum along the lane, /i a
// div by a const node of the lane length i, as the registry divides.
// TestDeclVJPMatchesRegistry checks every entry of the table against the
// registry's Go VJP on seeded points: in exact rational arithmetic
// (equality, element by element, of both operands' cotangents — the
// second a const under irgrad's ConstParams) where the tag is rational;
// for tanh, softmax, hard_masked_softmax, gelu, layernorm, sqrt and exp, whose
// values are not, by overlapping spec.Interval enclosures narrower than
// 10⁻¹²; and that a wrong entry of each tag is caught. That check sees
// the formula's value, not its order of operations: that the nodes
// perform the registry's scalar operations in the registry's grouping
// (gelu's and layernorm's above, softmax's Σ then the product) is read
// off the registry's code, as the rows of the table state.
//
// Model. The model of GradBounds' doc (the forward pass under M1–M3,
// then the registry's VJP formulas, each sum in any order with FMA,
// the cotangent seed held as the nearest binary32) restricted to the
// input gradient.
//
// Theorem. Let U be the relu mask elements whose box (B_j from the
// first-order forward pass, forwardBoxes) holds the kink (neither
// B_j.Lo > 0 nor B_j.Hi ≤ 0), C the combined graph with the placeholder 0
// at U, and (X, E) SharpBounds' enclosure of input-gradient element k on
// C at the same input. If element k does not read U (elemTaint), the
// exact input gradient's element k (the registry's VJP formulas in exact
// arithmetic at the exact forward values) lies in X, and every gradient
// computation of the model produces at element k a value within E of it.
// Elements that read U get no combined bound.
//
// Proof. Let m be the masks of C: m = 1 where B_j.Lo > 0, 0 where
// B_j.Hi ≤ 0, the placeholder 0 on U. (i) Every modelled evaluation holds
// at relu node j a value ŷ ∈ B_j (the box's invariant, GradBounds' doc);
// ŷ = max(x̂, 0) for the value x̂ of relu's argument that the same
// evaluation holds, so ŷ > 0 iff x̂ > 0, and off U the registry's relu VJP
// dy·step(x̂) (relu′(0) = 0) equals dy·m. The exact evaluation is one of
// the T_k the box holds, so the exact VJP uses the same m off U. On U an
// evaluation (and the exact one) uses some mask m*, agreeing with m off
// U. (ii) With the masks fixed to m*, the registry's VJP rules at the
// forward values are, formula for formula, the operations of C[m*]'s
// reverse nodes (the table above: every listed rule computes each
// element by the registry's sum or product of the same operands; linear's
// dx = Wᵀ·dy is the sum Σ_j W_jk·dy_j with the exact term 0 added, which
// "any order" covers by adding it last, exactly; dy·m is exact,
// m ∈ {0, 1}; neg, reshape, permute, transpose, concat, slice, pad and
// broadcast_to move or negate values exactly (pad's fill 0 is exact);
// conv_transpose computes each dx element as one sum of the same
// products dy·W that convBackX sums; sqrt's rule is built only where
// every element's box of y is above 0, so every evaluation (and the
// exact one) has x > 0 there and takes the registry's branch 1/(y + y); a constant of a registry formula — gelu's k, a,
// 3, 1/2, layernorm's ε and lane length — is a const node, held as fl(c)
// under M1 as the registry's FromRat/FromInt constant is; the lane
// statistics that layernorm's VJP recomputes from x are nodes of C of
// their own, so an evaluation may compute them as the forward pass did
// or anew: either is an evaluation of C); the forward values they read
// are C's forward nodes, each computed once and read by every consumer,
// as M2 has it;
// a node's cotangent, a sum over its consumers' contributions in any
// order, is one add or one reduce_sum node. So every gradient
// computation of the model is an evaluation of C[m*] satisfying M1–M3,
// and the exact gradient is C[m_exact]'s exact value. (iii) elemTaint
// marks every element of C that an operation computes from a marked
// element (elementwise tags index by index, linear row by row, concat and
// reduce_sum by the elements they copy or sum, any other tag every
// element; vjp36: pad, slice, gather and conv_transpose by index, below), starting from U. By induction over C's nodes, an unmarked
// element is computed by the same operation from the same unmarked
// operand values in C[m*] as in C[m] — its operands never read U — so an
// evaluation of C[m*] and the evaluation of C[m] that makes the same
// choices agree on it, and the exact values agree too. For an unmarked
// output element k, then, every modelled gradient computation's value is
// the value of an evaluation of C satisfying M1–M3, and the exact
// gradient is C's exact value; SharpBounds' theorem on C (doc.go) gives
// both claims. ∎
//
// The vjp36 rows extend steps (i)–(iii). C(v) is a per-channel const
// read at every element of its channel (reshape, broadcast_to: exact
// copies), held as fl(v) (M1) as the registry's FromRat of the payload;
// fl(max(v, 0)) = max(fl(v), 0), so the const max(σ², 0) is the
// registry's Relu of its FromRat, and the add, sqrt, product and
// quotient are the registry's operations in its order. A max pool's
// masks are decided as relu's: where the parent's box shows one window
// element i with B_i.Lo above B_q.Hi for every other real element q of
// the window, every modelled evaluation (and the exact one) has the
// unique maximiser i, no tie, and the registry adds dy_o to dx_i; m_j
// is 1 at o for i's offset j and 0 for the others. Every other output
// gets the placeholder 0 in every m_j and joins U, so step (iii) marks
// what it may reach. Each dx element of the rule is the sum over the K
// offsets of dy_o·m_j (exact: m ∈ {0, 1}) placed by exact index maps;
// its nonzero terms are the registry's, the rest exact zeros (0·dy, and
// fill zeros), which "any order" covers as linear's exact 0. gather's
// copies are exact, and the one sum of the R copies is the registry's
// left fold plus exact zero rows. A batch_norm_eval node's γ and β
// (parameter targets) are dγ_c = Σ dy·((x − μ_c)/s_c) and dβ_c = Σ dy,
// one reduce_sum over the channel's positions (channel axis moved first
// by permute, exact), as the registry's fold. Step (iii) (vjp36): pad,
// slice and gather mark an element when the element their index map
// names is marked (a fill position reads nothing), conv_transpose marks
// output position y of every channel when any channel of the same lead
// is marked at an input position i with y = i·s + j·dl − p_begin for a
// kernel offset j (the only positions whose products it sums), div
// elementwise; the induction is unchanged, since an unmarked element is
// computed from unmarked operands only.
//
// Undecided masks. Where a relu box straddles 0 the runtime may take
// either mask, and the reverse formula is discontinuous in the forward
// value there: the first-order theorem does not hold across the jump, so
// the elements that read such a mask keep the classic and boxed bounds.
// With dense layers every element downstream of the straddling relu reads
// it (a weight that is exactly 0 still counts as a read: 0·v is NaN for a
// non-finite v, and the values of C[m*] on the marked elements are not
// bounded), so the gain is for nets whose reverse pass from the
// straddling relu to the input is elementwise or block-structured
// (TestGradCombinedStraddle).
//
// Parameter gradients. GradErrSharpParams adds, to the same combined
// graph, a node per parameter holding its gradient as the registry's
// VJP computes it (paramTarget): a const's (irgrad's ConstParams) is its
// cotangent node; a linear node's (input x with rows·i elements, output
// cotangent dy) is, for b, dy itself (one row) or one reduce_sum over the
// rows (registry: db_r = Σ_t dy_tr), and, for W, one product per element
// mul_elem of dy and x broadcast to [o, i] (one row; registry: dW_rk =
// dy_r·x_k) or one matmul sum of dyᵀ and x over the rows (registry:
// dW_rk = Σ_t dy_tr·x_tk), reshape, permute and broadcast_to moving
// values exactly. The graph's output is the concat of every parameter's
// gradient flattened (exact). The theorem and its proof above hold
// unchanged with "input-gradient element k" read as "element k of that
// concat": step (ii) extends to these nodes (each computes its element by
// the registry's formula on the same operands, in an order M2 leaves
// free), and step (iii) to the marks through them (reshape and concat
// index by index, the others wholly). A conv node's (one group; x
// [L…, C_in, n…] viewed as [L, C_in, n…], dy as D = [C_out, L·S], S the
// output's spatial size) is, for b, one reduce_sum of D along axis 1
// (registry biasBack: db_c = Σ_l Σ_o dy[l, c, o]), and, for W, per
// kernel offset j one matmul of D and X_j [L·S, C_in], X_j the padded x
// sliced at offset j·dl (every s-th element where the stride s > 1:
// reshape to [n_o, s] and slice [0, 1)), the K matmuls concatenated
// (registry convBackW: dW[c, ci, j] = Σ_l Σ_o dy[l, c, o]·x[l, ci,
// o·s + j·dl − p], the terms at padding positions left out: here they
// are 0·dy = 0, exact for a finite dy, added to the same sum, which "any
// order" covers as linear's exact 0). A layernorm node's γ and β
// (registry: dγ_k = Σ_lanes dy·x̂, dβ_k = Σ_lanes dy) are one reduce_sum
// over the lanes of mul_elem(dy, x̂) and of dy, x̂ recomputed from x as
// in its input VJP (step (ii): lane statistics of their own).
// GradErrSharp does not build these targets (its SharpBounds output has
// one element per parameter element); a parameter of another tag (a
// grouped conv's among them) keeps the classic and boxed bounds. compare-grad (package compare) calls GradErrSharpParams
// and judges a target that is one parameter's whole gradient with the
// least of the three bounds (a sum of parts, an initializer read by two
// nodes, keeps classic and boxed: the runtime's accumulation of the parts
// is a rounding that no part's bound covers).
//
// # The ball centre
//
// Where a graph is not exact over spec.Rat, the first-order bound's boxes
// and Compare's exact enclosure use BallCentre's (the first-order bound,
// "The exact enclosure"), a second sound enclosure of the same exact
// value (the real value of the registry's formulas on the exact data).
// BallCentre runs the registry's forward rules over Ball
// (irsem.DenoteAll; no per-op table): a ball [m ± r] is a midpoint m,
// a math/big.Float of precision p, and a radius r, a float64 rounded
// upward (round.go). Its theorem: every Ball an operation returns contains
// the exact result of that operation applied to any reals of its
// operands' balls, so by induction over the evaluation every node's ball
// contains its exact value. The cases:
//
//   - Rounding. big.Float's Add, Sub, Mul, Quo, SetRat and SetInt64 round
//     to nearest at the result's precision p (math/big documents every
//     operation correctly rounded), so a result m = f·2^e, ½ ≤ |f| < 1,
//     is within half an ulp of the exact one; the radius is charged a
//     whole ulp, 2^(e−p) (0 when big.Float reports it exact; 2^-1074 when
//     it is below the float64 range). big.Float has no underflow or
//     overflow in the ranges met (exponents to ±2^31).
//   - Arithmetic. (m₁+a) ± (m₂+b) − (m₁ ± m₂) = a ± b: r = r₁ + r₂;
//     (m₁+a)(m₂+b) − m₁m₂ = m₁b + m₂a + ab: r = |m₁|r₂ + |m₂|r₁ + r₁r₂; for
//     |m₂| > r₂, (m₁+a)/(m₂+b) − m₁/m₂ = (a − (m₁/m₂)b)/(m₂+b): r = (r₁ +
//     |m₁/m₂|·r₂)/(|m₂| − r₂); a divisor ball that may hold 0 gives the
//     whole line (as spec.Interval does). Max, Min, Abs, Relu, Clamp,
//     Sign and Step pick an operand where the order is decided, else a
//     ball around the hull of their range; Compare is decided only for
//     disjoint balls or equal exact points, as spec.Interval's, so every
//     registry rule that branches is sound over Ball as over Interval.
//   - Functions. f(m ± r) ⊆ f(m) ± L·r with L ≥ sup |f′| over the ball
//     (the mean value theorem): exp e^m·(e^r − 1) (≤ 2r for r ≤ ½), log
//     1/lo, tanh, sin, cos 1, erf 2/√π, √ 1/(2√lo) (a ball reaching 0
//     is the hull [0, √hi], |√a − √b| ≤ √|a − b|). f(m) at the exact
//     point m is a ball computed in ball arithmetic at p + 32 bits or more,
//     plus the truncation remainder of its series:
//     e^m = (e^y)^(2^s), |y| < 2^-8, Σ_{k≤N} y^k/k! with Lagrange's
//     remainder |y|^(N+1)e^|y|/(N+1)! < 2·2^(−8(N+1)); ln m = k·ln 2 +
//     2·atanh z, z = (f−1)/(f+1) for m = f·2^k, f ∈ [0.707, 1.415), and
//     ln 2 = 2·atanh(1/3), with 2·Σ_{j>N} |z|^(2j+1)/(2j+1) ≤
//     2|z|^(2N+3)/(1 − z²); tanh m = sign(m)(1 − E)/(1 + E), E =
//     e^(−2|m|); √m by big.Float's root s and the residual, |√m − s| =
//     |m − s²|/(√m + s) ≤ |m − s²|/s; π = 16·atan(1/5) − 4·atan(1/239)
//     (Machin) and sin, cos after reducing m by k·π/2 in ball arithmetic
//     (|t| < 0.8), erf m = (2/√π)·Σ (−1)^n m^(2n+1)/(n!(2n+1)) for |m| ≤ 4:
//     alternating series whose terms decrease from the truncation on, each
//     with the remainder bounded by its first omitted term (Abramowitz and
//     Stegun, 4.2.1, 4.1.27, 4.4.42, 4.3.65–66, 7.1.5; Knopp's alternating series
//     test). e^x for a ball below −2^20 is [0 ± 2^-1074] (e^(−2^20) <
//     2^-1074: an additive finfo.min mask's exponentials).
//   - Fallback. erf beyond |m| = 4 and sin, cos beyond |m| = 2^40 are
//     evaluated over spec.Interval, which rests on its trusted boundary
//     (Go's float64 library within 2 ulps); Centre.Fallback names them.
//
// Ball.Interval rounds m − r down and m + r up to float64, so the result
// is a float64 interval that contains the exact value. The precision
// starts at 128 bits and doubles (to 1024) while the output's largest
// relative radius at least halves and some output element is wider than
// two float64 ulps, within a work cap (a graph above it even at 128 bits
// keeps the interval enclosure); each evaluation is sound, and the last is
// kept. The
// evaluation is sequential over big.Float, so its bytes do not depend on
// GOMAXPROCS. Unlike a float64 interval evaluation, whose radius starts at
// 2^-53 and grows by the dependency of correlated operands (layer norm's
// x − μ) at every block, the ball's starts at 2^-p: on the 12-block GPT-2
// stack (docs/bounds.md) the radius grows by about 2^10 per block and
// stays below 10⁻⁴⁰ of the value at 256 bits, where the interval
// evaluation is [−∞, +∞].
//
// # Mixed binary32 and binary64 graphs
//
// An ONNX graph may compute some values in FLOAT and others in DOUBLE
// (torch.onnx exports of model.double() keep FLOAT nodes: Llama's RMSNorm,
// ViT's attention scale; a FLOAT model may widen to DOUBLE for a
// reduction). The IR carries no per-node type; the importer's dtypes do:
// onnx.Imported.Types gives each IR node's float type (DOUBLE only where
// every float value of its ONNX node, and every value bound to the node,
// is DOUBLE), from the same dtypes as Imported.Computed, the one source of
// the fact. compare judges a graph whose outputs and computed values are
// FLOAT and DOUBLE, both and nothing else (compare/recorded.go,
// mixedFloatDouble), with SharpBoundsMixed: binary64's instantiation
// (Err64), each node j marked binary32 (binary32[j]) wherever its type is
// not DOUBLE. The outputs are judged as float64 (JudgeFloat64).
//
// Model (mixed). Each node j has a format T_j ∈ {binary32, binary64}:
// binary64 where binary32[j] is false, binary32 otherwise. M1–M3 hold per
// node, each with T_j's constants: M2, every scalar operation of node j's
// formula is performed in T_j (u_j, η_j, Ω_j; a sum of node j in any
// order or tree of additions in T_j, and a matmul fused with its bias
// Add of the same node type, M2(a)); M3, its library calls within k ulps
// of T_j; M1, a datum or formula constant c used by node j is held as
// fl_{T_j}(c) (a DOUBLE datum is its own float64 value, a FLOAT datum its
// own binary32 value: both charged 0). A value crosses formats only
// through Cast: narrowing, the registry's round_f32 node (a binary32 node,
// whose operand is a binary64 value); widening, no node (a binary32
// value is a binary64 value, unchanged). The ONNX type rules give every
// other node's float operands and results its one type. (LayerNormalization's
// stash_type is not modelled: a DOUBLE node computes in binary64, as in a
// DOUBLE graph.) Under a runtime profile the binary64 nodes satisfy M3′
// with the profile's numbers, as in a DOUBLE graph.
//
// Theorem (mixed). For every evaluation of the model (mixed) and every
// output element, the exact value lies in Exact and |v̂ − x| ≤ Bound, v̂
// the value of the output's type; Bound is the classic or the first-order
// bound of SharpBoundsMixed, whichever is smaller.
//
// Proof. The proof of the Theorem is an induction over the nodes in id
// order, and each case bounds one node's operations from its operands'
// invariants (x ∈ X, |v̂ − x| ≤ E) using the constants of the format the
// operation is performed in, and nothing else about the format. The
// constants enter through four places, each now the operation's own:
//
//  1. consts() (u, η, the least subnormal, Ω, maxFinite, maxTerms,
//     maxInt: every rounded product, quotient, square root, library
//     result, the overflow tests, FromInt), holds() and nearest() (M1's
//     charge of a constant, FromRat, FromSmallFrac, the dense path's
//     weight test, Erf's constants). They were the evaluation's format F,
//     a global of the evaluation; in a mixed evaluation, binary64's answer
//     with binary32's while a node marked binary32 is evaluated (narrowNow,
//     set by enterNode around each node: denoteAllWith for the classic
//     evaluation and for taintedNodes, firstOrder's loop for each local
//     error ē_j) and with binary64's otherwise. So node j's operations
//     are charged T_j's constants, and each case of the Proof applies to
//     node j with T_j for F, verbatim.
//  2. A pending sum is closed by the operation that consumes it, which may
//     be another node's (a FLOAT sum read by a DOUBLE node across a
//     widening cast; a fused parent's sum closed by its child in the
//     first-order bound). The sum's γ_{n−1} and its overflow test are
//     those of the format its additions were performed in, recorded in the
//     sum (ErrOf.sumFmt: binary64 when every addition was made in a
//     binary64 node, binary32 when any was): a sum of binary64 additions
//     closed by a binary32 node (round_f32 of a DOUBLE residual) is
//     charged γ64, a sum with any binary32 addition γ32. The latter is
//     sound for a tree whose additions are of both formats: each binary64
//     addition satisfies binary32's standard model (|δ| ≤ 2^-53 ≤ 2^-24,
//     η = 0 for sums, and no overflow below binary32's Ω — the coarse
//     argument, fact 1 below), so the Sums case holds with binary32's u
//     for every addition of the tree, and its sharper overflow test with
//     binary32's maxFinite by fact 2 below.
//  3. Values between nodes and the input. Anything evaluated outside a
//     node (between two nodes) is charged binary32's constants, the
//     coarse ones; the input is converted in the input node's format
//     (convertInput), so DOUBLE inputs are exact.
//  4. Casts. round_f32's theorem (round_cast.go) does not use the format
//     of x̂: its operand is closed with the operand's own sum format (2),
//     and R(x̂) is a binary32 value, the operand of the binary32 nodes
//     that follow and a binary64 value for the binary64 nodes that follow
//     through a widening cast. In the first-order bound a round_f32 node
//     whose operand box straddles a binary32 midpoint is the identity
//     plus δ(x) (round_cast.go, "Casts in the first-order bound",
//     cast37): its local error ē = E + 2(2^-24·m + 2^-150) uses binary32's
//     constants whatever the node's format flag, the target format's (T),
//     and the sum it may close (fused, E) its own (2). The exact reference
//     still rounds at the cast (ONNX's Cast), so the verdicts are about
//     ONNX's graph. Before cast37 such a box voided the first-order bound
//     of the whole evaluation (the float64 Llama export: its RMSNorm's Cast
//     to FLOAT).
//
// The first-order bound (doc.go, "First-order bound") is per node: the
// output's error is bounded by Σ_j |adjoint_j|·ē_j, each node's local error
// ē_j the Err algebra's at bound 0 on node j's input boxes — an instance of
// the cases above for node j alone — and the adjoints, boxes and sweeps
// are facts about the exact functions, which use no format. Mixing needs
// only each ē_j in T_j's constants (1), and round 0 of the boxes from the
// mixed classic evaluation; nothing else in the first-order bound is a
// constant of the format. (sweep.go's 2^-52 terms are the float64
// arithmetic of the sweeps themselves, not the model's.)
//
// A node the importer does not show to be DOUBLE alone is binary32: a
// binary64 operation charged binary32's constants is sound by the coarse
// argument, which follows (the route compare used for every node before
// per-node formats, and still uses for a mixed graph without per-node
// types — an IR graph not imported from ONNX; GradErr and the gradient
// bounds have no per-node route: they bound one format).
//
// Coarse argument: a binary64 operation satisfies binary32's model. The
// proof above uses the format of an operation only through the following
// facts; each holds for a binary64 operation with binary32's constants.
//
//  1. Standard model. For |r| < Ω (binary32's, 2^128 − 2^103 < binary64's
//     2^1024 − 2^970), fl₆₄(r) = r(1+δ) + η with |δ| ≤ 2^-53 ≤ 2^-24, |η| ≤
//     2^-1075 ≤ 2^-150, δ·η = 0, and η = 0 for additions (a binary64 sum
//     in binary64's subnormal range is exact). Every test fits(m), m < Ω,
//     that admits a rounding in the proof therefore admits it in either
//     format (binary64 overflows later, which only makes the test
//     conservative for it); an FMA's η_f likewise.
//  2. Sums, the sharper overflow test. It uses that a rounded partial sum
//     is at most maxFinite (binary32's) — true in binary32. In binary64 the
//     test's success gives B < Ω and S − B < Ω, so S < 2^129 and every
//     exact partial sum is at most (1+γ_{n−2})·S ≤ 2·S < 2^130 < binary64's
//     Ω: no binary64 addition of the sum overflows, and fact 1 applies.
//  3. Exactness. (a) Constants: for every real c, |fl₆₄(c) − c| ≤
//     |fl₃₂(c) − c|, since fl₃₂(c) is a binary64 value and fl₆₄(c) the
//     nearest one; so FromRat's and FromInt's |c − fl₃₂(c)| bounds the M1
//     error in either format. (b) An operation whose exact result is a
//     binary32 value (a product by ±1 or 0, an exact zero dropped from a
//     sum) is exact in binary64 too. (c) A product or quotient by an exact
//     ±2^k is exact in binary64 unless the result is below 2^-1022, then
//     within 2^-1075 ≤ 2^-149. (d) sqrt is correctly rounded and never
//     subnormal in binary64 (√(2^-1074) = 2^-537). (e) The dense path
//     (Dense linear layers) requires weights with bound 0.
//  4. Library and ulps. A binary64 result within k binary64 ulps of f(x̂)
//     is within k·(2^-52·|f(x̂)| + 2^-1074) ≤ k·(2^-23·|f(x̂)| + 2^-149).
//  5. Lower bounds. fl₆₄(r) ≥ r(1 − 2^-53) − 2^-1075 ≥ r(1 − u) − η for
//     r ≥ 0, and fl₆₄ is monotone with fl₆₄(0) = 0; √ likewise.
//  6. Everything else — Abs, Max, Min, Relu, Clamp, Sign, Step, Compare,
//     the tensor operations that move values — uses no property of the
//     format.
//
// By the induction of the Proof, with each case read for the format of the
// node it bounds, every output element satisfies its invariant. ∎
// Tests: TestMixedFormatsSound (a binary64 linear layer and tanh, a cast,
// a binary32 linear layer and tanh, a binary64 linear layer: nine
// node-by-node mixed evaluators — float32/float64 left folds, and the
// tree scalars under four summation policies with and without FMA — hold
// on every element; the bound computed with every node binary64 is
// violated, and one binary64 ulp past the bound fails) and
// TestCompareMixed (cmd/tlcheck: ONNX graphs that cast DOUBLE to FLOAT and
// FLOAT to DOUBLE, four independent Go evaluation orders hold, one ulp of
// the output's type past the per-node bound fails).
package fpbound
