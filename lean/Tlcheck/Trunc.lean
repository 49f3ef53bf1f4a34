import Tlcheck.Spec
import Tlcheck.Adjoint

/-!
# The cast to an integer type, trunc_int

The semantics is in `Spec.lean` (`truncZ`, `truncQ`, `truncAll`,
`truncFwd`, `truncD`): the registry's exact rule (`spec/ops_trunc.go`)
as a computable function on rationals — trunc(x) = sign(x)·⌊|x|⌋, with
x = N/D in lowest terms, as the sign of N times |N| div D (`Nat`
division) — with the integer range [lo, hi] the attributes `Attr.lo`,
`Attr.hi`, a result outside it (the registry's `DomainError` over `Rat`:
the primitive is partial) or a range without 0 (the registry's shape
rule) as `none`, and a tensor with such an element as the forward `[]`,
which no non-empty output shape accepts — the round casts' representation.

What this module proves:

* `trunc_int_adjoint`: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for all x, dx, δ and
  every range (the diagonal scaling by trunc′ = 0 is self-adjoint:
  `dot_pmul`, sign's and the round casts' proof);
* `trunc_int_vjp_linear`: the VJP is additive, homogeneous and maps a zero
  cotangent to zeros (`pmul_padd`, `pmul_smul`, `pmul_zeros`);
* `trunc_jvp_nth`: every entry of the JVP, and of the VJP's contribution,
  is 0, for every tangent or cotangent;
* `truncQ_zero`, `truncAll_zeros`, `trunc_fwd_zeros`: trunc(0) = 0 inside
  every range the registry accepts (lo ≤ 0 ≤ hi), so the forward maps the
  zero tensor to itself (the registry's zero preservation);
* `trunc_int_zero_preserving`: the three together at the primitive;
* `truncQ_instance`: sixteen `decide +kernel` evaluations of `truncQ`
  (positive and negative fractions, exact integers, INT8's range ends
  −128 and 127 and just outside them, UINT8's range where −1/2 truncates
  to 0 inside it and −1 is outside, a range without 0), checked in Go by
  `leanbridge/emit/trunc_test.go`, which also transcribes `truncQ` and
  compares it with the registry's `trunc_int` on thousands of values.

No `sorry`, no `grind`, no axioms.
-/

namespace Tlcheck
set_option autoImplicit false

theorem trunc_int_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .trunc_int a [x] [dx]) δ = dotAll [dx] (Prim.vjp .trunc_int a [x] δ) := by
  show dot (pmul (pmap truncD x) dx) δ = dot dx (pmul (pmap truncD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem trunc_int_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .trunc_int a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .trunc_int a [x] δ₁) (Prim.vjp .trunc_int a [x] δ₂) ∧
    Prim.vjp .trunc_int a [x] (smul k δ₁) = smulAll k (Prim.vjp .trunc_int a [x] δ₁) ∧
    Prim.vjp .trunc_int a [x] (zeros δ₁) = zerosAll (Prim.vjp .trunc_int a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap truncD x) (padd δ₁ δ₂)] = [padd (pmul (pmap truncD x) δ₁) (pmul (pmap truncD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap truncD x) (smul k δ₁)] = [smul k (pmul (pmap truncD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap truncD x) (zeros δ₁)] = [zeros (pmul (pmap truncD x) δ₁)]
    rw [pmul_zeros]

/-- **trunc′ = 0**: every entry of the diagonal scaling by `truncD` is 0,
for every x and every tangent (or cotangent) d. -/
theorem trunc_jvp_nth : ∀ (x d : List Rat) (i : Nat), nth (pmul (pmap truncD x) d) i = 0
  | [], _, _ => rfl
  | _ :: _, [], _ => rfl
  | a :: _, b :: _, 0 => show truncD a * b = 0 from Rat.zero_mul b
  | _ :: as, _ :: bs, i + 1 => trunc_jvp_nth as bs i

/-- trunc(0) = 0 inside every range the registry accepts (¬ 0 < lo, ¬ hi < 0):
the third branch of `truncQ`. -/
theorem truncQ_zero (lo hi : Rat) (hlo : ¬ 0 < lo) (hhi : ¬ hi < 0) : truncQ lo hi 0 = some 0 := by
  unfold truncQ
  exact (if_neg hlo).trans ((if_neg hhi).trans (if_pos rfl))

/-- The zero tensor truncates to itself, with no domain error. -/
theorem truncAll_zeros (lo hi : Rat) (hlo : ¬ 0 < lo) (hhi : ¬ hi < 0) :
    ∀ x : List Rat, truncAll lo hi (zeros x) = some (zeros x)
  | [] => rfl
  | _ :: as => by
    show consOpt (truncQ lo hi 0) (truncAll lo hi (zeros as)) = some (0 :: zeros as)
    calc consOpt (truncQ lo hi 0) (truncAll lo hi (zeros as)) = consOpt (some 0) (some (zeros as)) := by
          rw [truncQ_zero lo hi hlo hhi, truncAll_zeros lo hi hlo hhi as]
      _ = some (0 :: zeros as) := rfl

/-- **trunc_int preserves zero**: the forward maps the zero tensor to itself. -/
theorem trunc_fwd_zeros (lo hi : Rat) (hlo : ¬ 0 < lo) (hhi : ¬ hi < 0) (x : List Rat) :
    truncFwd lo hi (zeros x) = zeros x := by
  show optL (truncAll lo hi (zeros x)) = zeros x
  exact (congrArg optL (truncAll_zeros lo hi hlo hhi x)).trans (rfl : optL (some (zeros x)) = zeros x)

/-- Zero preservation at the primitive, for the ranges the registry
accepts (lo ≤ 0 ≤ hi): the forward maps the zero tensor to itself, the
VJP's contribution and the JVP are zero entry by entry for every
cotangent and tangent. -/
theorem trunc_int_zero_preserving (a : Attr) (hlo : ¬ 0 < a.lo) (hhi : ¬ a.hi < 0) (x dx δ : List Rat) :
    Prim.fwd .trunc_int a [zeros x] = zeros x ∧
      (∀ i, nth (Prim.jvp .trunc_int a [x] [dx]) i = 0) ∧
      Prim.vjp .trunc_int a [x] δ = [pmul (pmap truncD x) δ] ∧
      (∀ i, nth (pmul (pmap truncD x) δ) i = 0) :=
  ⟨trunc_fwd_zeros a.lo a.hi hlo hhi x, trunc_jvp_nth x dx, rfl, trunc_jvp_nth x δ⟩

/-- `truncQ` evaluated by the kernel, each value the registry's trunc_int
(`leanbridge/emit/trunc_test.go` re-derives every line): in INT8's range
[−128, 127] the fractions ±7/2 → ±3 and ±1/3 → 0 (toward zero, not
down), the integer −5, the range ends −128 and 127, 255/2 → 127 and
−257/2 → −128 (truncated into the range), 128, −129 and −259/2 → −129
(just outside: `none`); in UINT8's [0, 255] −1/2 → 0 (inside) but −1 is
outside, and 255 is the top; a range without 0 ([1, 255]) is refused. -/
theorem truncQ_instance :
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat 7 2) = some (mkRat 3 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-7) 2) = some (mkRat (-3) 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat 1 3) = some (mkRat 0 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-1) 3) = some (mkRat 0 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-5) 1) = some (mkRat (-5) 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-128) 1) = some (mkRat (-128) 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat 127 1) = some (mkRat 127 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat 255 2) = some (mkRat 127 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-257) 2) = some (mkRat (-128) 1) ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat 128 1) = none ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-129) 1) = none ∧
    truncQ (mkRat (-128) 1) (mkRat 127 1) (mkRat (-259) 2) = none ∧
    truncQ (mkRat 0 1) (mkRat 255 1) (mkRat (-1) 2) = some (mkRat 0 1) ∧
    truncQ (mkRat 0 1) (mkRat 255 1) (mkRat (-1) 1) = none ∧
    truncQ (mkRat 0 1) (mkRat 255 1) (mkRat 255 1) = some (mkRat 255 1) ∧
    truncQ (mkRat 1 1) (mkRat 255 1) (mkRat 5 1) = none := by
  decide +kernel

end Tlcheck
