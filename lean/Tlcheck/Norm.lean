import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Window

/-!
# The normalisations: layer_norm, instance_norm, batch_norm_eval, l2_normalize, renorm

`Tlcheck.Spec` gives the three as the registry computes them
(`spec/ops_norm.go`, `spec/ops_channel_norm.go`): at fixed inputs, each
JVP is a linear map of the tangents given by one tap list per input
(`tapplyAll`), whose entries are the registry's partial derivatives —

* layer_norm and instance_norm, per lane of K elements with
  s = 1/sqrt(σ² + ε) and x̂ = (x − μ)·s: ∂yᵢ/∂xⱼ = γ·s·([i = j] − 1/K −
  x̂ᵢx̂ⱼ/K), ∂yᵢ/∂γ = x̂ᵢ, ∂yᵢ/∂β = 1 (`NormG.xTaps`, `gTaps`, `bTaps`);
* batch_norm_eval, per channel with s = sqrt(max(σ², 0) + ε) and
  q = (x − μ)/s: γ/s, −γ/s, −q·γ·step(σ²)/(2(max(σ², 0) + ε)), q, 1
  (`Attr.bnTaps`) —

and the VJP is the transposes (`tapplyTAll`). l2_normalize (one input)
is a single tap list: per lane, with ν = ‖x‖₂, m = max(ν, ε), y = x/m and
w the max's weight on ν (1, ½ at ν = ε, 0), ∂yᵢ/∂xⱼ = ([i = j] − w·yᵢyⱼ)/m
(`Attr.l2Taps`, the registry's (dx − w(y·dx)y)/m entry by entry), its VJP
the transpose (`l2_normalize_adjoint`, `l2_normalize_vjp_linear`); the
registry's exact instances are the lanes of rational norm, where `ratSqrt`
is exact. renorm (one input, c = maxnorm on `Attr.c`) is the same rule
on the sub-tensors x[…, k, …] (`Attr.rnLane`) with ε = c, times c:
∂yᵢ/∂xⱼ = c·([i = j] − w·(xᵢ/m)(xⱼ/m))/m, m = max(ν, c) (`Attr.rnTaps`),
symmetric, so its VJP (the transpose) is the registry's same expression
(`renorm_adjoint`, `renorm_vjp_linear`, `renorm_instance` at the tie).
`tapplyAll_adjoint` is the
law for every such family of tap lists; `layer_norm_adjoint`,
`instance_norm_adjoint` and `batch_norm_eval_adjoint` are it at the
primitives.

What is not here: a Taylor statement tying the partials to the forward
(for l2_normalize too: ‖x + t·v‖₂ is rational for almost no t).
The forward reads ratSqrt of a rational function of the lane, exact only
where σ² + ε is a square rational; along a line x + t·v it is not, for
almost every t, so the identity `fwd (x + t·v) = fwd x + t·jvp + t²·R`
has no exact rational form — it would need a field with square roots
(or an implicit statement: s(t)²·(σ²(t) + ε) = 1 differentiated
implicitly), not written. The Go mirror `leanbridge/emit/taylor_test.go`
checks the first-order identity over dual numbers for the three on
random instances; here, the kernel checks the emitted certificates'
claims at the recorded inputs.
-/

namespace Tlcheck
set_option autoImplicit false

/-- Lengths match: one tap list and one tangent per input, tangent k of
nₖ elements. -/
def LensOk : List Nat → List (List Tap) → List (List Rat) → Prop
  | [], [], [] => True
  | n :: ns, _ :: ess, dx :: dxs => dx.length = n ∧ LensOk ns ess dxs
  | _, _, _ => False

theorem length_tapplyAll (m : Nat) : ∀ (ess : List (List Tap)) (dxs : List (List Rat)), (tapplyAll m ess dxs).length = m
  | [], _ => length_zerosN m
  | _ :: _, [] => length_zerosN m
  | es :: ess, dx :: dxs => by
    show (padd (tapply m es dx) (tapplyAll m ess dxs)).length = m
    rw [length_padd_eq (tapply m es dx) (tapplyAll m ess dxs) (by rw [length_tapply, length_tapplyAll m ess dxs]),
      length_tapply]

/-- The law of every linear map given by tap lists: ⟨Σₖ tapply esₖ dxₖ, δ⟩ =
Σₖ ⟨dxₖ, tapplyT esₖ δ⟩ (from `tapply_adjoint`, input by input). -/
theorem tapplyAll_adjoint (m : Nat) (δ : List Rat) (hδ : δ.length = m) :
    ∀ (ns : List Nat) (ess : List (List Tap)) (dxs : List (List Rat)), LensOk ns ess dxs →
      dot (tapplyAll m ess dxs) δ = dotAll dxs (tapplyTAll ns ess δ)
  | [], [], [], _ => by
    show dot (zerosN m) δ = 0
    exact dot_zerosN_left m δ
  | n :: ns, es :: ess, dx :: dxs, h => by
    show dot (padd (tapply m es dx) (tapplyAll m ess dxs)) δ = dot dx (tapplyT n es δ) + dotAll dxs (tapplyTAll ns ess δ)
    rw [dot_padd (tapply m es dx) (tapplyAll m ess dxs) δ (by rw [length_tapply, length_tapplyAll]),
      tapply_adjoint m n es dx δ h.1 hδ, tapplyAll_adjoint m δ hδ ns ess dxs h.2]
  | [], [], _ :: _, h => (h : False).elim
  | [], _ :: _, [], h => (h : False).elim
  | [], _ :: _, _ :: _, h => (h : False).elim
  | _ :: _, [], [], h => (h : False).elim
  | _ :: _, [], _ :: _, h => (h : False).elim
  | _ :: _, _ :: _, [], h => (h : False).elim

/-- layer_norm (with 0, 1 or 2 of γ, β): the registry's JVP and VJP are adjoint. -/
theorem layer_norm_adjoint (a : Attr) (x : List Rat) (ps dxs : List (List Rat)) (δ : List Rat)
    (h : LensOk (a.shapes.map size) ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs)
    (hδ : δ.length = a.lnG.n) :
    dot (Prim.jvp .layer_norm a (x :: ps) dxs) δ = dotAll dxs (Prim.vjp .layer_norm a (x :: ps) δ) := by
  show dot (tapplyAll a.lnG.n ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs) δ =
    dotAll dxs (tapplyTAll (a.shapes.map size) ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) δ)
  exact tapplyAll_adjoint a.lnG.n δ hδ _ _ dxs h

/-- instance_norm (x, γ, β). -/
theorem instance_norm_adjoint (a : Attr) (x : List Rat) (ps dxs : List (List Rat)) (δ : List Rat)
    (h : LensOk (a.shapes.map size) ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs)
    (hδ : δ.length = a.inG.n) :
    dot (Prim.jvp .instance_norm a (x :: ps) dxs) δ = dotAll dxs (Prim.vjp .instance_norm a (x :: ps) δ) := by
  show dot (tapplyAll a.inG.n ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) dxs) δ =
    dotAll dxs (tapplyTAll (a.shapes.map size) ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)) δ)
  exact tapplyAll_adjoint a.inG.n δ hδ _ _ dxs h

/-- batch_norm_eval (x, μ, σ² and optionally γ, β). -/
theorem batch_norm_eval_adjoint (a : Attr) (x : List Rat) (ps dxs : List (List Rat)) (δ : List Rat)
    (h : LensOk (a.shapes.map size) ((a.bnTaps x ps).take (ps.length + 1)) dxs)
    (hδ : δ.length = size a.shape) :
    dot (Prim.jvp .batch_norm_eval a (x :: ps) dxs) δ = dotAll dxs (Prim.vjp .batch_norm_eval a (x :: ps) δ) := by
  show dot (tapplyAll (size a.shape) ((a.bnTaps x ps).take (ps.length + 1)) dxs) δ =
    dotAll dxs (tapplyTAll (a.shapes.map size) ((a.bnTaps x ps).take (ps.length + 1)) δ)
  exact tapplyAll_adjoint (size a.shape) δ hδ _ _ dxs h

/-- The transposes of a family of tap lists are linear in δ (cotangents of
one length) and map zero to zeros, list by list (`tapplyT_padd`,
`tapplyT_smul`, `tapplyT_zeros`). -/
theorem tapplyTAll_linear (k : Rat) (δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    ∀ (ns : List Nat) (ess : List (List Tap)),
      tapplyTAll ns ess (padd δ₁ δ₂) = paddAll (tapplyTAll ns ess δ₁) (tapplyTAll ns ess δ₂) ∧
      tapplyTAll ns ess (smul k δ₁) = smulAll k (tapplyTAll ns ess δ₁) ∧
      tapplyTAll ns ess (zeros δ₁) = zerosAll (tapplyTAll ns ess δ₁)
  | n :: ns, es :: ess => by
    have ih := tapplyTAll_linear k δ₁ δ₂ h ns ess
    refine ⟨?_, ?_, ?_⟩
    · show tapplyT n es (padd δ₁ δ₂) :: tapplyTAll ns ess (padd δ₁ δ₂) =
        padd (tapplyT n es δ₁) (tapplyT n es δ₂) :: paddAll (tapplyTAll ns ess δ₁) (tapplyTAll ns ess δ₂)
      rw [tapplyT_padd n δ₁ δ₂ h es, ih.1]
    · show tapplyT n es (smul k δ₁) :: tapplyTAll ns ess (smul k δ₁) =
        smul k (tapplyT n es δ₁) :: smulAll k (tapplyTAll ns ess δ₁)
      rw [tapplyT_smul n k δ₁ es, ih.2.1]
    · show tapplyT n es (zeros δ₁) :: tapplyTAll ns ess (zeros δ₁) =
        zeros (tapplyT n es δ₁) :: zerosAll (tapplyTAll ns ess δ₁)
      rw [tapplyT_zeros n δ₁ es, ih.2.2, zeros_eq_zerosN (tapplyT n es δ₁), length_tapplyT]
  | [], _ => ⟨rfl, rfl, rfl⟩
  | _ :: _, [] => ⟨rfl, rfl, rfl⟩

/-- layer_norm: its VJP is linear in δ and maps zero to zeros. -/
theorem layer_norm_vjp_linear (a : Attr) (k : Rat) (x : List Rat) (ps : List (List Rat)) (δ₁ δ₂ : List Rat)
    (h : δ₁.length = δ₂.length) :
    Prim.vjp .layer_norm a (x :: ps) (padd δ₁ δ₂) =
      paddAll (Prim.vjp .layer_norm a (x :: ps) δ₁) (Prim.vjp .layer_norm a (x :: ps) δ₂) ∧
    Prim.vjp .layer_norm a (x :: ps) (smul k δ₁) = smulAll k (Prim.vjp .layer_norm a (x :: ps) δ₁) ∧
    Prim.vjp .layer_norm a (x :: ps) (zeros δ₁) = zerosAll (Prim.vjp .layer_norm a (x :: ps) δ₁) :=
  tapplyTAll_linear k δ₁ δ₂ h (a.shapes.map size) ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1))

/-- instance_norm: its VJP is linear in δ and maps zero to zeros. -/
theorem instance_norm_vjp_linear (a : Attr) (k : Rat) (x : List Rat) (ps : List (List Rat)) (δ₁ δ₂ : List Rat)
    (h : δ₁.length = δ₂.length) :
    Prim.vjp .instance_norm a (x :: ps) (padd δ₁ δ₂) =
      paddAll (Prim.vjp .instance_norm a (x :: ps) δ₁) (Prim.vjp .instance_norm a (x :: ps) δ₂) ∧
    Prim.vjp .instance_norm a (x :: ps) (smul k δ₁) = smulAll k (Prim.vjp .instance_norm a (x :: ps) δ₁) ∧
    Prim.vjp .instance_norm a (x :: ps) (zeros δ₁) = zerosAll (Prim.vjp .instance_norm a (x :: ps) δ₁) :=
  tapplyTAll_linear k δ₁ δ₂ h (a.shapes.map size) ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1))

/-- batch_norm_eval: its VJP is linear in δ and maps zero to zeros. -/
theorem batch_norm_eval_vjp_linear (a : Attr) (k : Rat) (x : List Rat) (ps : List (List Rat)) (δ₁ δ₂ : List Rat)
    (h : δ₁.length = δ₂.length) :
    Prim.vjp .batch_norm_eval a (x :: ps) (padd δ₁ δ₂) =
      paddAll (Prim.vjp .batch_norm_eval a (x :: ps) δ₁) (Prim.vjp .batch_norm_eval a (x :: ps) δ₂) ∧
    Prim.vjp .batch_norm_eval a (x :: ps) (smul k δ₁) = smulAll k (Prim.vjp .batch_norm_eval a (x :: ps) δ₁) ∧
    Prim.vjp .batch_norm_eval a (x :: ps) (zeros δ₁) = zerosAll (Prim.vjp .batch_norm_eval a (x :: ps) δ₁) :=
  tapplyTAll_linear k δ₁ δ₂ h (a.shapes.map size) ((a.bnTaps x ps).take (ps.length + 1))

/-- An instance against the registry's rule by hand: layer_norm of the
lane [1, 3] (μ = 2, σ² = 1, ε = 0, s = 1) is [−1, 1]. -/
theorem layer_norm_instance :
    (Attr.lnG { c := 0, lo := 0, hi := 0, axis := -1, shape := [2], axis2 := 0, perm := [], start := 0, stop := 0,
      toShape := [], values := [], shapes := [[2]] }).fwd 0 [1, 3] (parOr [] 0 1) (parOr [] 1 0) = [-1, 1] := by
  decide +kernel

/-! ## l2_normalize -/

/-- l2_normalize: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for every x (the taps at x). -/
theorem l2_normalize_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape)
    (hδ : δ.length = size a.shape) :
    dot (Prim.jvp .l2_normalize a [x] [dx]) δ = dotAll [dx] (Prim.vjp .l2_normalize a [x] δ) := by
  show dot (tapply (size a.shape) (a.l2Taps x) dx) δ = dot dx (tapplyT (size a.shape) (a.l2Taps x) δ) + 0
  rw [tapply_adjoint (size a.shape) (size a.shape) (a.l2Taps x) dx δ h hδ, Rat.add_zero]

/-- l2_normalize: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem l2_normalize_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .l2_normalize a [x] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .l2_normalize a [x] δ₁) (Prim.vjp .l2_normalize a [x] δ₂) ∧
    Prim.vjp .l2_normalize a [x] (smul k δ₁) = smulAll k (Prim.vjp .l2_normalize a [x] δ₁) ∧
    Prim.vjp .l2_normalize a [x] (zeros δ₁) = zerosAll (Prim.vjp .l2_normalize a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT (size a.shape) (a.l2Taps x) (padd δ₁ δ₂)] =
      [padd (tapplyT (size a.shape) (a.l2Taps x) δ₁) (tapplyT (size a.shape) (a.l2Taps x) δ₂)]
    rw [tapplyT_padd (size a.shape) δ₁ δ₂ h (a.l2Taps x)]
  · show [tapplyT (size a.shape) (a.l2Taps x) (smul k δ₁)] = [smul k (tapplyT (size a.shape) (a.l2Taps x) δ₁)]
    rw [tapplyT_smul (size a.shape) k δ₁ (a.l2Taps x)]
  · show [tapplyT (size a.shape) (a.l2Taps x) (zeros δ₁)] = [zeros (tapplyT (size a.shape) (a.l2Taps x) δ₁)]
    rw [tapplyT_zeros (size a.shape) δ₁ (a.l2Taps x),
      zeros_eq_zerosN (tapplyT (size a.shape) (a.l2Taps x) δ₁), length_tapplyT]

/-- Instances against the registry's rule by hand: the lane [3, 4] has
ν = 5. With ε = 0 it maps to [3/5, 4/5] with partials (I − y yᵀ)/5 =
[16, −12; −12, 9]/125; with ε = 5 (the tie ν = ε, weight ½) the partials
are (I − ½ y yᵀ)/5 = [41/250, −6/125; −6/125, 17/125]. -/
theorem l2_normalize_instance :
    Prim.fwd .l2_normalize { c := 0, lo := 0, hi := 0, axis := -1, shape := [2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2]] } [[3, 4]] = [3 / 5, 4 / 5] ∧
    (Attr.l2Taps { c := 0, lo := 0, hi := 0, axis := -1, shape := [2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2]] } [3, 4]).map Tap.w =
      [16 / 125, -12 / 125, -12 / 125, 9 / 125] ∧
    (Attr.l2Taps { c := 0, lo := 0, hi := 0, axis := -1, shape := [2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2]], eps := 5 } [3, 4]).map Tap.w =
      [41 / 250, -6 / 125, -6 / 125, 17 / 125] := by
  decide +kernel


/-! ## renorm -/

/-- renorm: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for every x (the taps at x;
the taps are symmetric, so the VJP is the registry's same expression). -/
theorem renorm_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape)
    (hδ : δ.length = size a.shape) :
    dot (Prim.jvp .renorm a [x] [dx]) δ = dotAll [dx] (Prim.vjp .renorm a [x] δ) := by
  show dot (tapply (size a.shape) (a.rnTaps x) dx) δ = dot dx (tapplyT (size a.shape) (a.rnTaps x) δ) + 0
  rw [tapply_adjoint (size a.shape) (size a.shape) (a.rnTaps x) dx δ h hδ, Rat.add_zero]

/-- renorm: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem renorm_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .renorm a [x] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .renorm a [x] δ₁) (Prim.vjp .renorm a [x] δ₂) ∧
    Prim.vjp .renorm a [x] (smul k δ₁) = smulAll k (Prim.vjp .renorm a [x] δ₁) ∧
    Prim.vjp .renorm a [x] (zeros δ₁) = zerosAll (Prim.vjp .renorm a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT (size a.shape) (a.rnTaps x) (padd δ₁ δ₂)] =
      [padd (tapplyT (size a.shape) (a.rnTaps x) δ₁) (tapplyT (size a.shape) (a.rnTaps x) δ₂)]
    rw [tapplyT_padd (size a.shape) δ₁ δ₂ h (a.rnTaps x)]
  · show [tapplyT (size a.shape) (a.rnTaps x) (smul k δ₁)] = [smul k (tapplyT (size a.shape) (a.rnTaps x) δ₁)]
    rw [tapplyT_smul (size a.shape) k δ₁ (a.rnTaps x)]
  · show [tapplyT (size a.shape) (a.rnTaps x) (zeros δ₁)] = [zeros (tapplyT (size a.shape) (a.rnTaps x) δ₁)]
    rw [tapplyT_zeros (size a.shape) δ₁ (a.rnTaps x),
      zeros_eq_zerosN (tapplyT (size a.shape) (a.rnTaps x) δ₁), length_tapplyT]

/-- An instance against the registry's rule by hand, at the tie: x = [3, 6; 4, 8]
(shape [2, 2]) along axis 1, c = 5. The sub-tensors are the columns:
(3, 4) with ν = 5 = c (the tie: s = 1, w = ½) and (6, 8) with ν = 10 > c
(s = ½, w = 1), so y = [3, 3; 4, 4]. With x̂ = (3/5, 4/5) in both, the
Jacobian s·I − w(c/ν)x̂x̂ᵀ is I − ½x̂x̂ᵀ = [41/50, −6/25; −6/25, 17/25] on
the first column and ½(I − x̂x̂ᵀ) = [8/25, −6/25; −6/25, 9/50] on the
second (taps in flat order 0, 1, 2, 3, each over its column). JVP and VJP
at the all-ones tangent agree (the symmetry): the row sums 29/50, 11/25 and
2/25, −3/50, in flat order [29/50, 2/25, 11/25, −3/50]. With the tie weight
1 instead of ½ the first tap would be 16/25, not 41/50. -/
theorem renorm_instance :
    Prim.fwd .renorm { c := 5, lo := 0, hi := 0, axis := 1, shape := [2, 2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 2]] } [[3, 6, 4, 8]] = [3, 3, 4, 4] ∧
    (Attr.rnTaps { c := 5, lo := 0, hi := 0, axis := 1, shape := [2, 2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 2]] } [3, 6, 4, 8]).map Tap.w =
      [41 / 50, -6 / 25, 8 / 25, -6 / 25, -6 / 25, 17 / 25, -6 / 25, 9 / 50] ∧
    Prim.jvp .renorm { c := 5, lo := 0, hi := 0, axis := 1, shape := [2, 2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 2]] } [[3, 6, 4, 8]] [[1, 1, 1, 1]] =
      [29 / 50, 2 / 25, 11 / 25, -3 / 50] ∧
    Prim.vjp .renorm { c := 5, lo := 0, hi := 0, axis := 1, shape := [2, 2], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 2]] } [[3, 6, 4, 8]] [1, 1, 1, 1] =
      [[29 / 50, 2 / 25, 11 / 25, -3 / 50]] := by
  decide +kernel

end Tlcheck
