import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Window

/-!
# reduce_prod

`Tlcheck.Spec` gives reduce_prod as the registry computes it
(`spec/ops_extra_reduce.go`): along the axis, each output is the product
of its lane of K elements in the [A, K, B] view (`Attr.rpFwd`), and the
JVP at x is the sparse linear map whose entries are the partials
Π_{i≠j} lane_i, written as the prefix product times the suffix product
(`Attr.rpTaps`; the registry's P_j·S_{j+1}, exact when lane elements are
0, never y / x_j). The VJP is its transpose (`tapplyT`), so the law is
`tapply_adjoint` at these taps (`reduce_prod_adjoint`), and the VJP is
linear in δ and maps zero to zeros (`reduce_prod_vjp_linear`, from
`tapplyT_linear`).

The partials are tied to the forward only at one element:
`prodL_cons_along` says the product moves along its first element
exactly by t times that element's partial (the product of the rest). The
full Taylor identity along a direction of the whole lane (degree K in t,
the remainder the sum of the higher elementary symmetric terms) is not
written. The Go mirror `leanbridge/emit/taylor_test.go` checks the
registry's reduce_prod against its polynomial interpolation in t, and
`leanbridge/emit/idxops_test.go` (`TestReduceProdEmitted`) re-evaluates
every emitted case's claim from the module text and compares the forward
with the registry's.
-/

namespace Tlcheck
set_option autoImplicit false

/-- reduce_prod: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for every x (the taps at x). -/
theorem reduce_prod_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape)
    (hδ : δ.length = a.dimA * a.dimB) :
    dot (Prim.jvp .reduce_prod a [x] [dx]) δ = dotAll [dx] (Prim.vjp .reduce_prod a [x] δ) := by
  show dot (tapply (a.dimA * a.dimB) (a.rpTaps x) dx) δ = dot dx (tapplyT (size a.shape) (a.rpTaps x) δ) + 0
  rw [tapply_adjoint (a.dimA * a.dimB) (size a.shape) (a.rpTaps x) dx δ h hδ, Rat.add_zero]

/-- reduce_prod: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem reduce_prod_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .reduce_prod a [x] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .reduce_prod a [x] δ₁) (Prim.vjp .reduce_prod a [x] δ₂) ∧
    Prim.vjp .reduce_prod a [x] (smul k δ₁) = smulAll k (Prim.vjp .reduce_prod a [x] δ₁) ∧
    Prim.vjp .reduce_prod a [x] (zeros δ₁) = zerosAll (Prim.vjp .reduce_prod a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT (size a.shape) (a.rpTaps x) (padd δ₁ δ₂)] =
      [padd (tapplyT (size a.shape) (a.rpTaps x) δ₁) (tapplyT (size a.shape) (a.rpTaps x) δ₂)]
    rw [tapplyT_padd (size a.shape) δ₁ δ₂ h (a.rpTaps x)]
  · show [tapplyT (size a.shape) (a.rpTaps x) (smul k δ₁)] = [smul k (tapplyT (size a.shape) (a.rpTaps x) δ₁)]
    rw [tapplyT_smul (size a.shape) k δ₁ (a.rpTaps x)]
  · show [tapplyT (size a.shape) (a.rpTaps x) (zeros δ₁)] = [zeros (tapplyT (size a.shape) (a.rpTaps x) δ₁)]
    rw [tapplyT_zeros (size a.shape) δ₁ (a.rpTaps x),
      zeros_eq_zerosN (tapplyT (size a.shape) (a.rpTaps x) δ₁), length_tapplyT]

/-- The product rule at a lane's head: Π ((x + t·v) :: ys) = Π (x :: ys)
+ t · (v · Π ys) — the first entry's partial (Π of the rest, the tap's
prefix 1 times its suffix) is the derivative along that element exactly,
the product being linear in each element. -/
theorem prodL_cons_along (x v t : Rat) (ys : List Rat) :
    prodL ((x + t * v) :: ys) = prodL (x :: ys) + t * (v * prodL ys) := by
  show (x + t * v) * prodL ys = x * prodL ys + t * (v * prodL ys)
  rw [Rat.add_mul, Rat.mul_assoc]

/-- An instance against the registry's rule by hand: the product of
[[1, 2, 3], [4, 0, 5]] along axis 1 is [6, 0]. -/
theorem reduce_prod_instance :
    Prim.fwd .reduce_prod { c := 0, lo := 0, hi := 0, axis := 1, shape := [2, 3], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 3]] } [[1, 2, 3, 4, 0, 5]] = [6, 0] := by
  decide +kernel

/-- Its partials, by hand: for the lane [4, 0, 5] they are 0·5 = 0,
4·5 = 20 and 4·0 = 0 (exact with the zero), and for [1, 2, 3] they are
6, 3, 2. -/
theorem reduce_prod_taps_instance :
    (Attr.rpTaps { c := 0, lo := 0, hi := 0, axis := 1, shape := [2, 3], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 3]] } [1, 2, 3, 4, 0, 5]).map Tap.w =
      [6, 3, 2, 0, 20, 0] := by
  decide +kernel

end Tlcheck
