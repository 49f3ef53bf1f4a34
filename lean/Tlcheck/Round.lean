import Tlcheck.Spec
import Tlcheck.Adjoint

/-!
# The rounding primitives round_f16, round_bf16, round_f32

The semantics is in `Spec.lean` (`Fmt`, `pow2`, `bitLen`, `flog2`,
`rneNat`, `roundK`, `roundMag`, `roundQ`, `roundAll`, `roundFwd`,
`roundD`): the registry's exact rule `FloatFormat.RoundRat`
(`spec/ops_round.go`) as a computable function on rationals — the binade
exponent from the bit lengths of numerator and denominator and one
comparison with a power of two, the significand n rounded half-to-even
with `Nat` division and remainder — with an overflow (|x| ≥ Ω, where IEEE
754 gives ±∞ and the registry over the rationals a `DomainError`) as
`none`, and a tensor with an overflowing element as the forward `[]`,
which no non-empty output shape accepts.

What this module proves, for each of the three formats:

* `round_<T>_adjoint`: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for all x, dx, δ (the
  diagonal scaling by round′ = 0 is self-adjoint: `dot_pmul`, sign's proof);
* `round_<T>_vjp_linear`: the VJP is additive, homogeneous and maps a zero
  cotangent to zeros (`pmul_padd`, `pmul_smul`, `pmul_zeros`);
* `round_jvp_nth`: every entry of the JVP, and of the VJP's contribution,
  is 0, for every tangent or cotangent (round′ = 0: the tangent rule maps
  0, and everything else, to 0);
* `roundQ_zero`, `roundAll_zeros`, `round_fwd_zeros`: round_T(0) = 0, so the
  forward maps the zero tensor to itself (the registry's zero preservation);
* `round_<T>_zero_preserving`: the three together at the primitive;
* `roundQ_instance`: twelve `decide +kernel` evaluations of `roundQ`
  against the registry's `RoundRat` (ties to even in the normal and the
  subnormal range, the overflow threshold Ω = 65520 of binary16 and the
  last value below it), checked in Go by `leanbridge/emit/round_test.go`,
  which also transcribes `roundQ` and compares it with the registry on
  thousands of values.

No `sorry`, no `grind`, no axioms.
-/

namespace Tlcheck
set_option autoImplicit false

theorem round_f16_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .round_f16 a [x] [dx]) δ = dotAll [dx] (Prim.vjp .round_f16 a [x] δ) := by
  show dot (pmul (pmap roundD x) dx) δ = dot dx (pmul (pmap roundD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem round_bf16_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .round_bf16 a [x] [dx]) δ = dotAll [dx] (Prim.vjp .round_bf16 a [x] δ) := by
  show dot (pmul (pmap roundD x) dx) δ = dot dx (pmul (pmap roundD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem round_f32_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .round_f32 a [x] [dx]) δ = dotAll [dx] (Prim.vjp .round_f32 a [x] δ) := by
  show dot (pmul (pmap roundD x) dx) δ = dot dx (pmul (pmap roundD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem round_f16_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .round_f16 a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .round_f16 a [x] δ₁) (Prim.vjp .round_f16 a [x] δ₂) ∧
    Prim.vjp .round_f16 a [x] (smul k δ₁) = smulAll k (Prim.vjp .round_f16 a [x] δ₁) ∧
    Prim.vjp .round_f16 a [x] (zeros δ₁) = zerosAll (Prim.vjp .round_f16 a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap roundD x) (padd δ₁ δ₂)] = [padd (pmul (pmap roundD x) δ₁) (pmul (pmap roundD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap roundD x) (smul k δ₁)] = [smul k (pmul (pmap roundD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap roundD x) (zeros δ₁)] = [zeros (pmul (pmap roundD x) δ₁)]
    rw [pmul_zeros]

theorem round_bf16_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .round_bf16 a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .round_bf16 a [x] δ₁) (Prim.vjp .round_bf16 a [x] δ₂) ∧
    Prim.vjp .round_bf16 a [x] (smul k δ₁) = smulAll k (Prim.vjp .round_bf16 a [x] δ₁) ∧
    Prim.vjp .round_bf16 a [x] (zeros δ₁) = zerosAll (Prim.vjp .round_bf16 a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap roundD x) (padd δ₁ δ₂)] = [padd (pmul (pmap roundD x) δ₁) (pmul (pmap roundD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap roundD x) (smul k δ₁)] = [smul k (pmul (pmap roundD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap roundD x) (zeros δ₁)] = [zeros (pmul (pmap roundD x) δ₁)]
    rw [pmul_zeros]

theorem round_f32_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .round_f32 a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .round_f32 a [x] δ₁) (Prim.vjp .round_f32 a [x] δ₂) ∧
    Prim.vjp .round_f32 a [x] (smul k δ₁) = smulAll k (Prim.vjp .round_f32 a [x] δ₁) ∧
    Prim.vjp .round_f32 a [x] (zeros δ₁) = zerosAll (Prim.vjp .round_f32 a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap roundD x) (padd δ₁ δ₂)] = [padd (pmul (pmap roundD x) δ₁) (pmul (pmap roundD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap roundD x) (smul k δ₁)] = [smul k (pmul (pmap roundD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap roundD x) (zeros δ₁)] = [zeros (pmul (pmap roundD x) δ₁)]
    rw [pmul_zeros]

/-- **round′ = 0**: every entry of the diagonal scaling by `roundD` is 0,
for every x and every tangent (or cotangent) d — the JVP maps every
tangent, 0 among them, to zeros, and the VJP every cotangent. -/
theorem round_jvp_nth : ∀ (x d : List Rat) (i : Nat), nth (pmul (pmap roundD x) d) i = 0
  | [], _, _ => rfl
  | _ :: _, [], _ => rfl
  | a :: _, b :: _, 0 => show roundD a * b = 0 from Rat.zero_mul b
  | _ :: as, _ :: bs, i + 1 => round_jvp_nth as bs i

/-- round_T(0) = 0: the first branch of `roundQ`. -/
theorem roundQ_zero (f : Fmt) : roundQ f 0 = some 0 := by
  unfold roundQ
  exact if_pos rfl

/-- The zero tensor rounds to itself, with no overflow. -/
theorem roundAll_zeros (f : Fmt) : ∀ x : List Rat, roundAll f (zeros x) = some (zeros x)
  | [] => rfl
  | _ :: as => by
    show consOpt (roundQ f 0) (roundAll f (zeros as)) = some (0 :: zeros as)
    calc consOpt (roundQ f 0) (roundAll f (zeros as)) = consOpt (some 0) (some (zeros as)) := by
          rw [roundQ_zero f, roundAll_zeros f as]
      _ = some (0 :: zeros as) := rfl

/-- **round_T preserves zero**: the forward maps the zero tensor to itself. -/
theorem round_fwd_zeros (f : Fmt) (x : List Rat) : roundFwd f (zeros x) = zeros x := by
  show optL (roundAll f (zeros x)) = zeros x
  exact (congrArg optL (roundAll_zeros f x)).trans (rfl : optL (some (zeros x)) = zeros x)

/-- Zero preservation at the primitive (binary16): the forward maps the
zero tensor to itself, the VJP's contribution and the JVP are zero
entry by entry for every cotangent and tangent. -/
theorem round_f16_zero_preserving (a : Attr) (x dx δ : List Rat) :
    Prim.fwd .round_f16 a [zeros x] = zeros x ∧
      (∀ i, nth (Prim.jvp .round_f16 a [x] [dx]) i = 0) ∧
      Prim.vjp .round_f16 a [x] δ = [pmul (pmap roundD x) δ] ∧
      (∀ i, nth (pmul (pmap roundD x) δ) i = 0) :=
  ⟨round_fwd_zeros Fmt.f16 x, round_jvp_nth x dx, rfl, round_jvp_nth x δ⟩

/-- Zero preservation at the primitive (bfloat16). -/
theorem round_bf16_zero_preserving (a : Attr) (x dx δ : List Rat) :
    Prim.fwd .round_bf16 a [zeros x] = zeros x ∧
      (∀ i, nth (Prim.jvp .round_bf16 a [x] [dx]) i = 0) ∧
      Prim.vjp .round_bf16 a [x] δ = [pmul (pmap roundD x) δ] ∧
      (∀ i, nth (pmul (pmap roundD x) δ) i = 0) :=
  ⟨round_fwd_zeros Fmt.bf16 x, round_jvp_nth x dx, rfl, round_jvp_nth x δ⟩

/-- Zero preservation at the primitive (binary32). -/
theorem round_f32_zero_preserving (a : Attr) (x dx δ : List Rat) :
    Prim.fwd .round_f32 a [zeros x] = zeros x ∧
      (∀ i, nth (Prim.jvp .round_f32 a [x] [dx]) i = 0) ∧
      Prim.vjp .round_f32 a [x] δ = [pmul (pmap roundD x) δ] ∧
      (∀ i, nth (pmul (pmap roundD x) δ) i = 0) :=
  ⟨round_fwd_zeros Fmt.f32 x, round_jvp_nth x dx, rfl, round_jvp_nth x δ⟩

/-- `roundQ` evaluated by the kernel, each value the registry's
`FloatFormat.RoundRat` (`leanbridge/emit/round_test.go` re-derives every
line): binary16's last finite value below Ω, Ω = 65520 itself (overflow,
`none`), the ties 2049 → 2048 and 2051 → 2052 (to the even significand),
half the least subnormal 2^−25 → 0 and 3·2^−25 → 2^−23 (ties in the
subnormal range), −1/3; bfloat16's 1/3 and −257 → −256 (a tie); binary32's
1/3 and 2^24 + 1 → 2^24 (a tie). -/
theorem roundQ_instance :
    roundQ Fmt.f16 (mkRat 65519 1) = some (mkRat 65504 1) ∧
    roundQ Fmt.f16 (mkRat (-65519) 1) = some (mkRat (-65504) 1) ∧
    roundQ Fmt.f16 (mkRat 65520 1) = none ∧
    roundQ Fmt.f16 (mkRat 2049 1) = some (mkRat 2048 1) ∧
    roundQ Fmt.f16 (mkRat 2051 1) = some (mkRat 2052 1) ∧
    roundQ Fmt.f16 (mkRat 1 33554432) = some (mkRat 0 1) ∧
    roundQ Fmt.f16 (mkRat 3 33554432) = some (mkRat 1 8388608) ∧
    roundQ Fmt.f16 (mkRat (-1) 3) = some (mkRat (-1365) 4096) ∧
    roundQ Fmt.bf16 (mkRat 1 3) = some (mkRat 171 512) ∧
    roundQ Fmt.bf16 (mkRat (-257) 1) = some (mkRat (-256) 1) ∧
    roundQ Fmt.f32 (mkRat 1 3) = some (mkRat 11184811 33554432) ∧
    roundQ Fmt.f32 (mkRat 16777217 1) = some (mkRat 16777216 1) := by
  decide +kernel

end Tlcheck
