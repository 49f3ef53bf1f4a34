// Package refine climbs the refinement ladder of the runtime chapter —
// "executable primitive → declared semantic primitive", one rung per
// provider actually used — for tlcheck's providers: it checks a provider's
// float32 kernel, run through its backend binding, against the spec
// registry's exact rational semantics, under the rule that the capsule's
// declared reduction policy calls for, and records every case so that an
// independent verifier can re-derive it (Recheck).
//
// # Cases
//
// Check (or CheckOptions) generates float32 inputs deterministically from
// a seed, cycling through the input kinds (Kinds: normal, wide binades,
// subnormals, exact cancellations, zeros of both signs, NaN/∞ specials,
// overflow). For each case it runs the provider through
// backend.Binding.Execute, computes
//
//   - the exact value s of every output element with
//     spec.Default[spec.Rat]()'s forward rule on the inputs converted
//     exactly (NaN and ±∞ read as 0, so s is the sum of the finite terms);
//   - Σ|terms| with the same rule on the inputs' absolute values (for
//     matmul, linear, sum and reduce_sum every term is a product of
//     inputs with coefficient +1, so op(|x|) = Σ|terms| exactly);
//   - the class of every element's terms with spec.Default[spec.F64]():
//     widening makes each product of two binary32 values exact and no
//     finite partial sum can overflow (|Σ| ≤ n·2^256 ≪ 2^1024), so the
//     binary64 result is NaN exactly when a term is NaN (a NaN input or
//     0·∞) or terms of both infinite signs occur, ±∞ exactly when an
//     infinite term occurs otherwise, and finite exactly when every term
//     is — an order-independent classification;
//   - the binary32 replay with spec.Default[spec.Binary32]() (bit-level
//     soft-float, one rounding per operation, left folds from +0) for
//     fixed-left capsules and for any case with a NaN or infinite input;
//
// and judges every output element by one rule. Every comparison is made
// in exact big.Rat arithmetic; floats appear only as display values.
//
// # Rules
//
// RuleBitExact (fixed-left capsules). The provider's encoding equals the
// replay's. Signed zeros count; NaNs match any NaN, because IEEE 754
// leaves the payload (and sign) of a NaN result unspecified and hardware
// differs from the soft-float's canonical 0x7FC00000 (x86 produces
// 0xFFC00000 for ∞ − ∞). The record keeps the exact value and
// |provider − exact|; its ratio is 0.
//
// RuleBound (implementation-defined capsules, every term finite, finite
// provider value ŝ). |ŝ − s| ≤ B with B = γ_g·Σ|terms| + p·2^-149,
// γ_g = g·u/(1−g·u) = g/(2^24 − g), u = 2^-24, where per output element
//
//   - matmul: n = g = p = k (k products, each rounded once and then
//     through at most k−1 additions);
//   - linear: n = g = in+1 (in products and the bias; a product is rounded
//     once and then through at most in additions), p = in;
//   - sum: g = n−1 for n elements (a sum of n terms has n−1 roundings), p
//     = 0;
//   - reduce_sum: g = n−1 for an axis of length n, p = 0.
//
// The derivation is on ElementBound: the standard model with gradual
// underflow, fl(x∘y) = (x∘y)(1+δ) + η, |δ| ≤ u, |η| ≤ 2^-150, δη = 0, and
// η = 0 for additions (a sum of binary32 values that lands in the
// subnormal range is exact), gives for any evaluation tree, any number of
// accumulators and any use of fused multiply-add
// |ŝ − s| ≤ γ_g·Σ|t_i| + p·2^-150·(1+u)^(n−1) ≤ γ_g·Σ|t_i| + p·2^-149,
// provided (n−1)·u ≤ 1/2 (n ≤ MaxTerms = 2^23, enforced). The underflow
// term is p·2^-149 rather than p·2^-150 because each product's absolute
// error is carried through up to n−1 later roundings, each scaling it by
// at most 1+u, and (1+u)^(n−1) ≤ 2. Sums of inputs need no underflow term
// at all. The bound assumes that no operation overflowed, which a finite
// ŝ guarantees: in a sum an infinity, once produced, stays infinite or
// becomes NaN. The ratio |ŝ − s|/B is recorded exactly; B = 0 (all terms
// zero, or no terms) demands ŝ = s.
//
// A fused multiply-add (fastcpu.SgemmFast's VFMADD231PS) fits this model
// as one operation: fl(x·y + z) = (x·y + z)(1+δ) + η, |δ| ≤ u, |η| ≤
// 2^-150, with one rounding where the separate pair has two, but η ≠ 0 is
// possible (x·y + z need not be a binary32 sum, so a subnormal result can
// be inexact). Charge that η to the product x·y the operation consumes:
// each product enters exactly one operation (its own rounding, or the
// fusion), so there are still at most p underflow terms, each carried
// through at most n−1 later roundings; and each term t_i still meets at
// most g roundings on its way to the root (a fusion replaces the product's
// rounding and the addition's by one). So the bound above holds unchanged
// for any mix of fused and separate operations: it is order- and
// FMA-independent.
//
// RuleClass (implementation-defined capsules, an element with a NaN or
// infinite term: "classification against the replay"). The provider's
// class must be one the terms allow whatever the order: NaN when the terms
// are NaN; +∞ when they are +∞, and also NaN when the finite terms could
// overflow to −∞ in some order (then +∞ + −∞ = NaN is reachable); −∞
// symmetrically. NaN payloads are not compared. The replay, being one
// admissible order, must satisfy the same rule; if it does not, Check
// returns an internal error rather than a verdict.
//
// RuleOverflow (implementation-defined capsules, every term finite, but a
// non-finite provider value). Let P and N be the sums of the magnitudes of
// the positive and of the negative terms (P = (Σ|t| + s)/2,
// N = (Σ|t| − s)/2). Before the first overflow every operation's exact
// result is at most (1+γ_g)·P + p·2^-149 towards +∞ (and likewise with N
// towards −∞), and round to nearest overflows exactly from
// Ω = 2^128 − 2^103 on (OverflowThreshold). So +∞ is allowed only when
// (1+γ_g)·P + p·2^-149 ≥ Ω, −∞ only when the same holds for N, and NaN
// only when both do. This is the sharp form of "an exact result that
// overflows must give the infinity of the right sign": when s ≥ Ω, +∞ is
// allowed, −∞ and NaN only if the negative terms alone could overflow,
// and a finite ŝ must still satisfy RuleBound (so [MaxFloat32, MaxFloat32]
// summing to MaxFloat32 fails: no order avoids the overflow).
//
// Subnormal inputs are ordinary finite values: RuleBound covers them, the
// underflow term accounting for products that land in (or below) the
// subnormal range.
//
// # The first-order bound
//
// Elsewhere a verdict decides with the smaller of two sound bounds, the
// classic one and fpbound's first-order one (fpbound's doc, "First-order
// bound"). Here the classic bound B of RuleBound is already the
// first-order one, so RuleBound decides with it alone and a certificate
// records it as the bound that decided (certificates.RoundingBound). The
// argument: a case is one primitive applied to binary32 data, so its graph
// has one rounded node, the primitive y = f(x), and its inputs, whose
// local errors are 0 (M1: the data are values of the format). fpbound's
// first-order bound of an output element is F = Σ_k Σ_i mag(A_{k,i})·ē_{k,i}
// over the nodes k; every term but the node's own vanishes (ē = 0), and the
// adjoint of the element with respect to itself is 1. So F = ē, the bound
// on the local error of f at its computed inputs — which are the exact
// inputs: F is the classic bound of f on exact data. RuleBound's B is such
// a local bound (the standard model for one sum of g roundings under any
// order and any fusion, above), so the first-order bound built on it is B
// itself: nothing propagates, and no other bound is sharper by that
// method. Range certificates (package ranges) decide with no a-priori
// rounding bound at all: their enclosures follow the one binary32 order
// operation by operation, outward rounded.
//
// TestFirstOrderIsClassicOnOnePrimitive checks the statement on fpbound's
// side: on seeded random binary32 instances of every registry primitive
// whose IR form is one application of it (54 of 69; refine's matmul,
// linear, sum and reduce_sum among them), SharpBounds and SharpBounds64
// give a first-order bound equal to the classic one on every element where
// the first-order bound is finite.
//
// # Evidence
//
// Discharge maps a capsule's value evidence to its Obligation under an
// assurance policy: a numerical certificate (the fast_cpu capsules'
// evidence) is discharged only by running the check above; a theorem, a
// checked guard (backend.RuntimeGuard) or a test suite stands on its own;
// a trusted boundary is admitted only under the "external" assurance
// policy (backend.Assurance.Accepts, reused). CheckOptions refuses a
// capsule that Discharge rejects.
//
// # Verification
//
// Recheck re-derives one recorded Case from its recorded inputs alone:
// it looks the capsule up by name, binds it, re-executes the provider
// (fast_cpu is deterministic: its results depend on nothing but the
// inputs) and recomputes exact values, bounds, ratios and verdicts, then
// compares every recorded field, naming the first that differs.
//
// FlipBit plants a one-bit provider fault so that tests (and a release
// gate) can confirm that a wrong provider is caught.
package refine
