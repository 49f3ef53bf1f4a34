import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Deriv
import Tlcheck.Taylor

/-!
# dropout, as a function of its recorded mask

The registry's `dropout` (`spec/ops_misc.go`, `dropoutApply`) is
y = x ⊙ mask / (1 − p), the 0/1 mask replayed from the seed so that the
forward and reverse passes use the same draw, and p = 1 drops everything.
Given the mask, it is a pointwise product by the constant
mask / (1 − p) — Lean's `1 / 0 = 0` gives p = 1 its zeros — so:

* `dropout_adjoint`: ⟨jvp dx, δ⟩ = ⟨dx, vjp δ⟩ (the VJP is the same map);
* `dropout_taylor`: linear along every line, `fwd (x + t·v) = fwd x + t·fwd v`;
* `dropout_vjp_linear`: the VJP is linear in δ and maps zero to zeros.

`dropoutFwd`, `dropoutJvp` and `dropoutVjp` are defined in `Tlcheck.Spec`
and are `Prim.dropout` at `Attr.p` and `Attr.mask` (`dropout_prim_adjoint`).
The certificates record the seed, not the mask: `tlcheck lean emit`
replays the registry's own draw (its `bernoulli_mask` forward: element i
kept when `spec.UniformRat(seed, i)` ≥ p) into `mask`. The kernel checks
the claim at that mask; that the mask is the seed's draw is the emitter's
(Go) part, not a Lean theorem — Lean has no splitmix64.

The seeded draws `rand_uniform`, `bernoulli_mask` and `keep_mask` are
constructors of `Prim` too: as functions of the draw — replayed by the
emitter with the registry's own forward from the recorded seed, shape, p
and inputs, and written as the data `Attr.values` — each is a constant of
its inputs, with zero tangent and zero contributions (the registry's
NoGrad rule): `rand_uniform_adjoint`, `bernoulli_mask_adjoint`,
`keep_mask_adjoint`, and `draws_fwd` (the forward is the recorded draw).
The draw itself is the emitter's Go part, as dropout's mask is. In
`Comp.lean`'s graphs a draw node is still `Prim.const` with its value.
-/

namespace Tlcheck
set_option autoImplicit false

theorem dropout_adjoint (p : Rat) (mask x dx δ : List Rat) :
    dot (dropoutJvp p mask x dx) δ = dotAll [dx] (dropoutVjp p mask x δ) := by
  show dot (smul (1 / (1 - p)) (pmul mask dx)) δ = dot dx (smul (1 / (1 - p)) (pmul mask δ)) + 0
  rw [dot_smul (1 / (1 - p)) (pmul mask dx) δ, dot_pmul mask dx (smul (1 / (1 - p)) δ),
    pmul_smul (1 / (1 - p)) mask δ, Rat.add_zero]

theorem pmul_along (t : Rat) : ∀ f x v : List Rat, pmul f (along t x v) = along t (pmul f x) (pmul f v)
  | [], _, _ => rfl
  | _ :: _, [], _ => rfl
  | _ :: _, _ :: _, [] => rfl
  | a :: fs, b :: xs, c :: vs => by
    show a * (b + t * c) :: pmul fs (along t xs vs) = (a * b + t * (a * c)) :: along t (pmul fs xs) (pmul fs vs)
    rw [smul_step a t b c, pmul_along t fs xs vs]

/-- dropout is linear: exactly fwd x + t·jvp x v along every line. -/
theorem dropout_taylor (p t : Rat) (mask x v : List Rat) (h : x.length = v.length) :
    dropoutFwd p mask (along t x v) = padd (dropoutFwd p mask x) (smul t (dropoutJvp p mask x v)) := by
  show smul (1 / (1 - p)) (pmul mask (along t x v)) =
    padd (smul (1 / (1 - p)) (pmul mask x)) (smul t (smul (1 / (1 - p)) (pmul mask v)))
  rw [pmul_along t mask x v, smul_along (1 / (1 - p)) t (pmul mask x) (pmul mask v),
    along_eq t (smul (1 / (1 - p)) (pmul mask x)) (smul (1 / (1 - p)) (pmul mask v))
      (by rw [length_smul, length_smul]; exact length_pmul_congr mask x v h)]

theorem dropout_vjp_linear (p k : Rat) (mask x δ₁ δ₂ : List Rat) :
    dropoutVjp p mask x (padd δ₁ δ₂) = paddAll (dropoutVjp p mask x δ₁) (dropoutVjp p mask x δ₂) ∧
    dropoutVjp p mask x (smul k δ₁) = smulAll k (dropoutVjp p mask x δ₁) ∧
    dropoutVjp p mask x (zeros δ₁) = zerosAll (dropoutVjp p mask x δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [smul (1 / (1 - p)) (pmul mask (padd δ₁ δ₂))] =
      [padd (smul (1 / (1 - p)) (pmul mask δ₁)) (smul (1 / (1 - p)) (pmul mask δ₂))]
    rw [pmul_padd mask δ₁ δ₂, smul_padd (1 / (1 - p)) (pmul mask δ₁) (pmul mask δ₂)]
  · show [smul (1 / (1 - p)) (pmul mask (smul k δ₁))] = [smul k (smul (1 / (1 - p)) (pmul mask δ₁))]
    rw [pmul_smul k mask δ₁, smul_smul (1 / (1 - p)) k (pmul mask δ₁)]
  · show [smul (1 / (1 - p)) (pmul mask (zeros δ₁))] = [zeros (smul (1 / (1 - p)) (pmul mask δ₁))]
    rw [pmul_zeros mask δ₁, smul_zeros (1 / (1 - p)) (pmul mask δ₁), zeros_smul (1 / (1 - p)) (pmul mask δ₁)]

/-- The registry's rule at p = 1 (everything dropped): Lean's 1 / 0 = 0. -/
theorem dropout_all (mask x : List Rat) : dropoutFwd 1 mask x = zeros (pmul mask x) := by
  show smul (1 / (1 - 1)) (pmul mask x) = zeros (pmul mask x)
  have h : (1 : Rat) / (1 - 1) = 0 := by decide +kernel
  rw [h, zeros_eq_smul0 (pmul mask x)]

/-- dropout as `Prim.dropout`: the law in the form the checker's `Claim`
states it. -/
theorem dropout_prim_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .dropout a [x] [dx]) δ = dotAll [dx] (Prim.vjp .dropout a [x] δ) := by
  show dot (dropoutJvp a.p a.mask x dx) δ = dotAll [dx] (dropoutVjp a.p a.mask x δ)
  exact dropout_adjoint a.p a.mask x dx δ

/-- An instance: p = 1/2, mask [1, 0, 1], x = [1, 2, 3] ↦ [2, 0, 6]. -/
theorem dropout_instance : dropoutFwd (1 / 2) [1, 0, 1] [1, 2, 3] = [2, 0, 6] := by decide +kernel

/-! ## The seeded draws, as functions of their recorded values -/

/-- rand_uniform (no inputs): the tangent is zero, so ⟨jvp, δ⟩ = 0 = the
empty sum of contributions. -/
theorem rand_uniform_adjoint (a : Attr) (δ : List Rat) :
    dot (Prim.jvp .rand_uniform a [] []) δ = dotAll [] (Prim.vjp .rand_uniform a [] δ) := by
  show dot (zeros a.values) δ = 0
  rw [dot_zeros_left a.values δ]

/-- bernoulli_mask (one input, piecewise constant in it): zero tangent and
a zero contribution to the input. -/
theorem bernoulli_mask_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .bernoulli_mask a [x] [dx]) δ = dotAll [dx] (Prim.vjp .bernoulli_mask a [x] δ) := by
  show dot (zeros a.values) δ = dot dx (zeros x) + 0
  rw [dot_zeros_left a.values δ, dot_zeros_right dx x, Rat.add_zero]

/-- keep_mask (the scalar keep probability as its input): as bernoulli_mask. -/
theorem keep_mask_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .keep_mask a [x] [dx]) δ = dotAll [dx] (Prim.vjp .keep_mask a [x] δ) := by
  show dot (zeros a.values) δ = dot dx (zeros x) + 0
  rw [dot_zeros_left a.values δ, dot_zeros_right dx x, Rat.add_zero]

/-- The three forwards are the recorded draw, whatever the input's values. -/
theorem draws_fwd (a : Attr) (x : List Rat) :
    Prim.fwd .rand_uniform a [] = a.values ∧ Prim.fwd .bernoulli_mask a [x] = a.values ∧
      Prim.fwd .keep_mask a [x] = a.values :=
  ⟨rfl, rfl, rfl⟩

end Tlcheck
