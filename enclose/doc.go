// Package enclose computes sound enclosures of dense linear algebra —
// matrix products with an optional bias, which is what linear layers,
// matmul, convolutions (as products of a weight matrix and gathered
// input columns) and sum reductions (as products with a vector of ones)
// are — in midpoint-radius form on contiguous float64 planes, with the
// rounding of every float64 operation charged by an a-priori bound rather
// than by switching rounding modes (Rump, "Fast and parallel interval
// arithmetic", BIT 39(3), 1999; Higham, "Accuracy and Stability of
// Numerical Algorithms", 2nd ed., 2002, §3.1–3.5).
//
// An enclosure of a real vector is a pair of planes (C, R) of float64s,
// the centre and the radius, R ≥ 0: element i is the set of reals
// ⟨C[i], R[i]⟩ = [C[i] − R[i], C[i] + R[i]] (endpoints computed exactly,
// as reals). The package imports only fastcpu, whose Dgemm is the
// float64 product every kernel runs on: the centre product and one or two
// radius products, so an enclosure of A·B costs two or three float64
// products instead of a struct per element.
//
// # Tame data
//
// The bound below needs every product to be normal (no underflow) and
// nothing to overflow. A float64 x is tame when x = 0 or 2⁻³⁰⁰ ≤ |x| ≤
// 2³⁰⁰. Product checks that every centre and radius of its operands is
// tame and otherwise computes nothing and reports false (the caller then
// uses its element-by-element interval arithmetic, which is sound
// everywhere). FromPairs, which converts endpoint intervals, lifts tiny
// values: a centre of magnitude below 2⁻³⁰⁰ is moved into the radius
// (c = 0, r ≥ r + |c|) and a radius below 2⁻³⁰⁰ is raised to 2⁻³⁰⁰; both
// only enlarge the set, so the enclosure stays sound, and float32 data
// (whose smallest magnitude is 2⁻¹⁴⁹) is never lifted.
//
// With tame operands, every product of at most three factors of which
// each is a tame value, a sum of two tame values, or the constant g below
// (2⁻⁵³ ≤ g ≤ 1) has magnitude in [2⁻⁶⁵³, 2⁶⁰²] or is 0, hence is normal
// (the smallest normal is 2⁻¹⁰²²); sums of at most 2⁴⁰ such terms, times
// F ≤ 2, are below 2⁶⁴⁴: no overflow. So the standard model
// holds for every operation performed: fl(x∘y) = (x∘y)(1+δ), |δ| ≤ u =
// 2⁻⁵³ (an addition whose result is subnormal is exact, which the model
// covers).
//
// # The theorem
//
// Let A (m×k) and B (k×n) be enclosed by (Aᶜ, Aʳ) and (Bᶜ, Bʳ), tame, and
// let the optional bias b (length n) be enclosed by (bᶜ, bʳ). Let N = k,
// plus 1 with a bias; γ_N = N·u/(1 − N·u), and g a float64 with g ≥ γ_N
// (g = nextUp(N·u + 2(N·u)²) for N ≤ 2²⁶, which is ≥ γ_N when N·u ≤ 1/2;
// g = N·2⁻⁵² for larger N, ≥ γ_N when N·u ≤ 1/2; Product refuses
// N ≥ 2⁴⁰). Product computes, with Dgemm and elementwise float64
// operations in round-to-nearest:
//
//	Ĉ  = fl(Aᶜ·Bᶜ) (+ bᶜ, one more rounded addition per element)
//	A′ = fl(Aʳ + fl(g·|Aᶜ|))                                  (elementwise)
//	R̂  = fl(A′·|Bᶜ|)
//	   + fl(fl(|Aᶜ| + Aʳ)·Bʳ)     (only when some Bʳ ≠ 0)
//	   + fl(bʳ + fl(g·|bᶜ|))       (only with a bias)
//	ρ  = nextUp(fl(F·R̂)),  F = 1 + (k+6)·2⁻⁵²
//
// Theorem. For every A ∈ ⟨Aᶜ, Aʳ⟩, B ∈ ⟨Bᶜ, Bʳ⟩ and b ∈ ⟨bᶜ, bʳ⟩
// (elementwise), and every i, j, the exact real (A·B + b)[i][j] lies in
// ⟨Ĉ[i][j], ρ[i][j]⟩; ToPairs then returns float64 endpoints lo ≤ that
// real ≤ hi.
//
// Proof. Fix i, j and write x_p = A[i][p], y_p = B[p][j] (and, with a
// bias, x_{k+1} = b[j], y_{k+1} = 1, so that the bias is the N-th term
// with an exact product). (1) Centre rounding: Ĉ is the float64
// evaluation of Σ_{p≤N} x_pᶜ·y_pᶜ in some order (Dgemm's left fold, then
// the bias), every product normal; by Higham's Lemma 3.1 and §3.1 (the
// bound holds for any order of summation, and with or without fused
// multiply-adds), |Ĉ − Σ x_pᶜ y_pᶜ| ≤ γ_N Σ |x_pᶜ||y_pᶜ|. (2) Radius of
// the set: for x ∈ ⟨xᶜ, xʳ⟩, y ∈ ⟨yᶜ, yʳ⟩, |xy − xᶜyᶜ| = |xᶜ(y − yᶜ) +
// (x − xᶜ)yᶜ + (x − xᶜ)(y − yᶜ)| ≤ |xᶜ|yʳ + xʳ|yᶜ| + xʳyʳ. (3) Hence
//
//	|Σ x_p y_p − Ĉ| ≤ Σ_p [ (xʳ_p + γ_N|xᶜ_p|)·|yᶜ_p| + (|xᶜ_p| + xʳ_p)·yʳ_p ] =: R*
//
// (for the bias term yʳ = 0 and |yᶜ| = 1, giving bʳ + γ_N|bᶜ|). Since
// g ≥ γ_N, R* ≤ R, the exact real value of the expression tree that R̂
// evaluates. (4) Radius rounding: every node of that tree has
// non-negative operands, and a rounded + or × of non-negative normal
// operands satisfies fl(x∘y) ≥ (x∘y)/(1+u). By induction over the tree,
// its exact value is at most (1+u)^d times the computed one, where d
// counts the rounded operations along the worst path, counting both
// factors' depths at a product: fl(g·|Aᶜ|) has d = 1, A′ has 2, A′·|Bᶜ|
// 3, the left fold from +0 of its k terms (k additions) k + 3; the second
// product k + 2; their sum k + 4; the bias term k + 5. So R ≤
// (1+u)^{k+5}·R̂ ≤ F·R̂, since (1+u)^d ≤ e^{du} ≤ 1 + 2du whenever du ≤ 1,
// and 2(k+5)u < (k+6)·2⁻⁵² = F − 1 (F is exact: k + 6 < 2⁵²). Finally nextUp(fl(v)) ≥ v for every finite
// real v (if fl(v) < v, no float64 lies strictly between fl(v) and v,
// so v ≤ nextUp(fl(v))), so ρ ≥ F·R̂ ≥ R ≥ R* ≥ |Σ x_p y_p − Ĉ|. (5)
// ToPairs computes s = fl(Ĉ − ρ) and its exact error e by Knuth's
// TwoSum (error-free without overflow); lo = s when e ≥ 0 (then
// Ĉ − ρ ≥ s) and nextDown(s) otherwise, and likewise hi; so lo ≤ Ĉ − ρ
// and Ĉ + ρ ≤ hi. ∎
//
// Overestimation: with point operands (all radii 0) the radius is the
// a-priori rounding bound γ_N·Σ|xᶜ||yᶜ| (times F); with interval
// operands it is at most the midpoint-radius overestimate Rump bounds by
// a factor 1.5 over the exact range, plus that rounding bound.
//
// # Lane sums
//
// SumPairs encloses the sum of n intervals [lo_j, hi_j] (a lane of
// reduce_sum, reduce_mean or sum) on their endpoints directly: the set of
// sums is [Σ lo_j, Σ hi_j], so each endpoint is one float64 sum, with its
// rounding charged a priori. Let g ≥ γ_n (gammaBound) and F = 1 + n·2⁻⁵².
// It computes the left folds from +0 ŝ = fl(Σ lo_j) and Â = fl(Σ |lo_j|),
// then
//
//	e  = nextUp(fl(F·nextUp(fl(g·Â))))
//	lo = nextDown(fl(ŝ − e))             (lo = ŝ when Â = 0)
//
// and symmetrically hi = nextUp(fl(ŝ′ + e′)) from the folds of hi_j; the
// mean divides: lo/n rounded down, hi/n rounded up (nextDown(fl(·)),
// nextUp(fl(·))).
//
// Theorem. If every computed value is finite, lo ≤ Σ lo_j and
// Σ hi_j ≤ hi (and likewise for the mean), for any finite float64
// endpoints: no tameness is needed.
//
// Proof. A rounded addition that does not overflow satisfies the standard
// model fl(x+y) = (x+y)(1+δ), |δ| ≤ u, underflow included (a sum whose
// result is subnormal is exact); a finite final fold means no partial sum
// overflowed (±∞ is absorbing, ∞ − ∞ is NaN). (1) By Higham's bound for
// recursive summation (§4.2), |ŝ − Σ lo_j| ≤ γ_{n−1} Σ|lo_j| ≤ γ_n·A,
// A = Σ|lo_j|. (2) Â folds non-negative terms, each addition satisfying
// fl(x+y) ≥ (x+y)/(1+u), so A ≤ (1+u)^n·Â ≤ F·Â (as for Product's radius,
// (1+u)^n ≤ 1 + 2nu when nu ≤ 1). (3) nextUp(fl(v)) ≥ v for every finite
// real v, underflow included (when fl(v) < v no float64 lies strictly
// between), so e ≥ F·g·Â ≥ γ_n·A ≥ |ŝ − Σ lo_j|. (4) nextDown(fl(w)) ≤ w
// likewise, so lo ≤ ŝ − e ≤ Σ lo_j; and Â = 0 only when every lo_j is 0
// (a positive term never rounds to 0), when ŝ = Σ lo_j = 0 exactly.
// Symmetrically hi ≥ Σ hi_j. (5) Division by n > 0 is
// monotone, and rounding it down (up) keeps the inequality. ∎
//
// DivPairs (the mean's VJP, δ/n broadcast along the lane) is step (5)
// alone.
//
// # Determinism
//
// Dgemm computes every element as a fixed left fold whatever the number
// of goroutines, and every elementwise step is a function of one element,
// so every result is bit-identical for any GOMAXPROCS. Rows (output
// channels of a convolution) are what runs in parallel.
package enclose
