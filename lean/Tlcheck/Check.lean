import Tlcheck.Spec

/-!
# Boolean checkers for tlcheck certificates, with soundness theorems

`tlcheck lean emit` writes each adjointness certificate of a primitive
covered by `Tlcheck.Prim` as a module `Tlcheck.Certs.Adjointness.<op>`
holding its cases as `AdjCase` literals (exact `mkRat p q`) and one theorem
`cert : checkAll Prim.<op> cases = true := by decide +kernel`. By
`checkAll_sound`, that theorem gives `Claim` for every recorded case: the
recorded left side is ⟨jvp x dx, δ⟩ recomputed by `Tlcheck.Spec`, the
recorded right side is Σₖ ⟨dxₖ, vjp x δₖ⟩, and the two are equal.
-/

namespace Tlcheck
set_option autoImplicit false

/-- One recorded adjointness case: the input shapes, inputs and tangents
(flat, row-major), the output shape and cotangent δ, the attributes `c`
(scale), `lo` and `hi` (clamp), `axis` (reductions, slice, transpose),
`axis2` (transpose), `perm` (permute), `start` and `stop` (slice),
`toShape` (broadcast_to), `values` (const) — 0 or empty where the primitive has none — and
the two recorded sides. The attribute shape is
the first input's (`AdjCase.attr`). -/
structure AdjCase where
  shapes : List (List Nat)
  xs : List (List Rat)
  dxs : List (List Rat)
  outShape : List Nat
  delta : List Rat
  c : Rat
  lo : Rat
  hi : Rat
  axis : Int
  axis2 : Int
  perm : List Nat
  start : Nat
  stop : Nat
  toShape : List Nat
  values : List Rat
  lhs : Rat
  rhs : Rat
  /-- The window geometry (conv, conv_transpose, the pools: `Attr`'s
  fields of the same names); the defaults elsewhere. -/
  kernel : List Nat := []
  stride : List Nat := []
  dilation : List Nat := []
  pads : List Nat := []
  groups : Nat := 1
  countPad : Bool := false
  /-- dropout's drop probability and keep mask (`Attr.p`, `Attr.mask`). -/
  p : Rat := 0
  mask : List Rat := []
  /-- ε of the normalisations (`Attr.eps`). -/
  eps : Rat := 0

/-- The attributes of a case; the output shape is the cotangent's. -/
def AdjCase.attr (k : AdjCase) : Attr :=
  { c := k.c, lo := k.lo, hi := k.hi, axis := k.axis, shape := k.shapes.headD [], axis2 := k.axis2,
    perm := k.perm, start := k.start, stop := k.stop, toShape := k.toShape, values := k.values,
    shapes := k.shapes, kernel := k.kernel, stride := k.stride, dilation := k.dilation, pads := k.pads,
    groups := k.groups, countPad := k.countPad, outShape := k.outShape, p := k.p, mask := k.mask, eps := k.eps }

/-- Every tensor has its shape's element count. -/
def sizesOk : List (List Nat) → List (List Rat) → Bool
  | [], [] => true
  | s :: ss, x :: xs => decide (x.length = size s) && sizesOk ss xs
  | _, _ => false

/-- The shapes of a case agree with the primitive: its arity, every input
and tangent of its shape, δ and the forward output of the output shape. -/
def shapesOk (p : Prim) (k : AdjCase) : Bool :=
  p.arityOk k.xs.length && sizesOk k.shapes k.xs && sizesOk k.shapes k.dxs &&
    decide (k.delta.length = size k.outShape) && decide ((p.fwd k.attr k.xs).length = size k.outShape)

/-- What an adjointness case claims. An `abbrev`, so that `decide` finds
its `Decidable` instance by unfolding (a conjunction of `Rat` equalities)
and the kernel evaluates it with no cast in the way. -/
abbrev Claim (p : Prim) (k : AdjCase) : Prop :=
  k.lhs = dot (p.jvp k.attr k.xs k.dxs) k.delta ∧
    k.rhs = dotAll k.dxs (p.vjp k.attr k.xs k.delta) ∧ k.lhs = k.rhs

/-- The checker of one case. -/
def checkCase (p : Prim) (k : AdjCase) : Bool :=
  shapesOk p k && decide (Claim p k)

/-- The checker of a certificate's cases (structural recursion, so that
`decide +kernel` evaluates it). -/
def checkAll (p : Prim) : List AdjCase → Bool
  | [] => true
  | k :: ks => checkCase p k && checkAll p ks

theorem checkCase_sound (p : Prim) (k : AdjCase) (h : checkCase p k = true) : Claim p k := by
  have h2 : decide (Claim p k) = true := by
    first
      | exact ((Bool.and_eq_true _ _).mp h).2
      | (simp only [checkCase, Bool.and_eq_true] at h; exact h.2)
  exact of_decide_eq_true h2

theorem checkAll_sound (p : Prim) : ∀ ks : List AdjCase, checkAll p ks = true → ∀ k ∈ ks, Claim p k
  | [], _, _, hk => by
    first
      | nomatch hk
      | cases hk
      | simp at hk
  | k :: ks, h, k', hk => by
    have h' : checkCase p k = true ∧ checkAll p ks = true := by
      first
        | exact (Bool.and_eq_true _ _).mp h
        | (simp only [checkAll, Bool.and_eq_true] at h; exact h)
    cases hk with
    | head => exact checkCase_sound p _ h'.1
    | tail _ hk' => exact checkAll_sound p ks h'.2 _ hk'

end Tlcheck
