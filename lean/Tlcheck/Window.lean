import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Deriv
import Tlcheck.Taylor
import Tlcheck.Index

/-!
# The window primitives: conv, conv_transpose, max and average pools

The registry's six window primitives (`spec/ops_window.go`: `conv`,
`conv_transpose`, `max_pool`, `max_pool_nd`, `avg_pool`, `avg_pool_nd`)
all read one relation per spatial axis (`Axis`): a small position
`sm < S` and a kernel position `j < k` meet the big position

  bg = sm·s + j·dl − pb,  kept when pb ≤ sm·s + j·dl and bg < B

(padding reads nothing). For conv and the pools the small side is the
output and the big side the input; for conv_transpose the small side is the
input and the big side the output. Several spatial axes combine row-major
(`winTaps`, the first axis slowest), as the registry's `winGeom.index`.

Every one of the six is, at fixed data, a **sparse linear map**: a list of
entries `Tap o i w` ("output o receives w · x[i]"), applied by `tapply`,
whose transpose `tapplyT` sends δ[o]·w back to i. One theorem,
`tapply_adjoint` (⟨tapply es x, δ⟩ = ⟨x, tapplyT es δ⟩ for every entry
list), gives the adjointness of all of them:

* conv and conv_transpose are **bilinear** in (x, W) plus a bias gathered
  per output channel: a list of `Mono p q r` ("output p receives
  W[q]·x[r]"), read as taps in x at fixed W (`xTaps`) or in W at fixed x
  (`wTaps`). `bil_adjoint` is the law for (dx, dW, db); `bil_taylor` the
  exact Taylor identity `fwd (x + t·dx, W + t·dW, b + t·db) = fwd + t·jvp +
  t²·(the map of dW applied to dx)` — conv as a sum of products, with
  the remainder explicit. `Conv.bil` and `ConvT.bil` enumerate the terms
  (channels, groups, lead slices) as the registry's shape rule does.
* avg_pool and avg_pool_nd are linear: taps with weight 1/D(o) for any
  divisor D (the registry's: the kernel positions inside the padded input,
  `Pool.divPad`, or the real ones, `Pool.divReal`); `avg_pool_adjoint`,
  `avg_pool_taylor` (linear along every line).
* max_pool and max_pool_nd: at fixed x, the JVP is the taps of weight 1/t
  on the t positions of each window attaining its maximum (the registry's
  tie rule, `poolTies`) and 0 elsewhere; `max_pool_adjoint`.

One axis's list is exactly the registry's relation: `taps_sound` (every
triple is in it) and `taps_complete` (every triple of it is listed).

In bounds (`winTaps_inside`): every triple of the relation has its small,
kernel and big positions below the extents, so conv's and
conv_transpose's terms read inside x and W and write inside y under the
registry's channel rules (`Conv.terms_inside`, `ConvT.terms_inside`).

Kernel-checked instances against values computed by hand from the
registry's definitions (`spec/doc.go`, "Window primitives") close the
module. The definitions live in `Tlcheck.Spec`, before `Prim`, whose
constructors `conv`, `conv_transpose`, `max_pool`, `max_pool_nd`,
`avg_pool` and `avg_pool_nd` are these maps at the geometry
`Attr.convG`/`convTG`/`poolG`; `tlcheck lean emit` writes their
certificates, and `*_prim_adjoint` below state the laws for the
constructors.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## Sparse linear maps -/

theorem length_tapply (m : Nat) : ∀ (es : List Tap) (x : List Rat), (tapply m es x).length = m
  | [], _ => length_zerosN m
  | e :: es, x => by
    show (addAt (tapply m es x) e.o (e.w * nth x e.i)).length = m
    rw [length_addAt, length_tapply m es x]

theorem length_tapplyT (n : Nat) : ∀ (es : List Tap) (d : List Rat), (tapplyT n es d).length = n
  | [], _ => length_zerosN n
  | e :: es, d => by
    show (addAt (tapplyT n es d) e.i (e.w * nth d e.o)).length = n
    rw [length_addAt, length_tapplyT n es d]

/-- a·(w·b) = b·(w·a). -/
theorem mul3_swap (a w b : Rat) : a * (w * b) = b * (w * a) := by
  first
    | rw [← Rat.mul_assoc a w b, Rat.mul_comm a w, Rat.mul_assoc w a b, Rat.mul_comm a b,
        ← Rat.mul_assoc w b a, Rat.mul_comm w b, Rat.mul_assoc b w a]
    | grind

/-- The law behind every window primitive: for any entry list,
⟨tapply es x, δ⟩ = ⟨x, tapplyT es δ⟩ (x of n elements, δ of m). -/
theorem tapply_adjoint (m n : Nat) : ∀ (es : List Tap) (x d : List Rat), x.length = n → d.length = m →
    dot (tapply m es x) d = dot x (tapplyT n es d)
  | [], x, d, _, _ => by
    show dot (zerosN m) d = dot x (zerosN n)
    rw [dot_zerosN_left, dot_zerosN_right]
  | e :: es, x, d, hx, hd => by
    show dot (addAt (tapply m es x) e.o (e.w * nth x e.i)) d = dot x (addAt (tapplyT n es d) e.i (e.w * nth d e.o))
    rw [dot_comm (addAt (tapply m es x) e.o (e.w * nth x e.i)) d,
      dot_addAt d (tapply m es x) e.o (e.w * nth x e.i) (by rw [length_tapply, hd]),
      dot_addAt x (tapplyT n es d) e.i (e.w * nth d e.o) (by rw [length_tapplyT, hx]),
      dot_comm d (tapply m es x), tapply_adjoint m n es x d hx hd,
      mul3_swap (nth d e.o) e.w (nth x e.i)]

/-! ### Linearity along lines and in the cotangent -/

theorem addAt_along (t : Rat) : ∀ (u v : List Rat) (j : Nat) (d e : Rat), u.length = v.length →
    addAt (along t u v) j (d + t * e) = along t (addAt u j d) (addAt v j e)
  | [], [], _, _, _, _ => rfl
  | [], _ :: _, _, _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], _, _, _, h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, 0, d, e, _ => by
    show (a + t * b + (d + t * e)) :: along t as bs = (a + d + t * (b + e)) :: along t as bs
    rw [add_step t a d b e]
  | a :: as, b :: bs, j + 1, d, e, h => by
    show (a + t * b) :: addAt (along t as bs) j (d + t * e) = (a + t * b) :: along t (addAt as j d) (addAt bs j e)
    rw [addAt_along t as bs j d e (Nat.succ.inj h)]

/-- A sparse linear map commutes with every line. -/
theorem tapply_along (m : Nat) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    ∀ es : List Tap, tapply m es (along t x v) = along t (tapply m es x) (tapply m es v)
  | [] => by
    show zerosN m = along t (zerosN m) (zerosN m)
    rw [zerosN_along t m]
  | e :: es => by
    show addAt (tapply m es (along t x v)) e.o (e.w * nth (along t x v) e.i) =
      along t (addAt (tapply m es x) e.o (e.w * nth x e.i)) (addAt (tapply m es v) e.o (e.w * nth v e.i))
    rw [tapply_along m t x v h es, gather_along.nth_along t x v h e.i, smul_step e.w t (nth x e.i) (nth v e.i),
      addAt_along t (tapply m es x) (tapply m es v) e.o (e.w * nth x e.i) (e.w * nth v e.i)
        (by rw [length_tapply, length_tapply])]

/-- The same as `padd`/`smul`: tapply (x + t·v) = tapply x + t · tapply v. -/
theorem tapply_line (m : Nat) (t : Rat) (es : List Tap) (x v : List Rat) (h : x.length = v.length) :
    tapply m es (along t x v) = padd (tapply m es x) (smul t (tapply m es v)) := by
  rw [tapply_along m t x v h es, along_eq t (tapply m es x) (tapply m es v) (by rw [length_tapply, length_tapply])]

theorem nth_padd : ∀ (a b : List Rat), a.length = b.length → ∀ j : Nat, nth (padd a b) j = nth a j + nth b j
  | [], [], _, _ => by
    show (0 : Rat) = 0 + 0
    rw [Rat.add_zero]
  | [], _ :: _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _, 0 => rfl
  | _ :: as, _ :: bs, h, j + 1 => nth_padd as bs (Nat.succ.inj h) j

theorem nth_smul (k : Rat) : ∀ (a : List Rat) (j : Nat), nth (smul k a) j = k * nth a j
  | [], _ => by
    show (0 : Rat) = k * 0
    rw [Rat.mul_zero]
  | _ :: _, 0 => rfl
  | _ :: as, j + 1 => nth_smul k as j

theorem nth_zeros : ∀ (a : List Rat) (j : Nat), nth (zeros a) j = 0
  | [], _ => rfl
  | _ :: _, 0 => rfl
  | _ :: as, j + 1 => nth_zeros as j

/-- w·(k·a) = k·(w·a). -/
theorem mul_left_swap (w k a : Rat) : w * (k * a) = k * (w * a) := by
  first
    | rw [← Rat.mul_assoc w k a, Rat.mul_comm w k, Rat.mul_assoc k w a]
    | grind

theorem tapplyT_padd (n : Nat) (d₁ d₂ : List Rat) (h : d₁.length = d₂.length) :
    ∀ es : List Tap, tapplyT n es (padd d₁ d₂) = padd (tapplyT n es d₁) (tapplyT n es d₂)
  | [] => by
    show zerosN n = padd (zerosN n) (zerosN n)
    rw [padd_zerosN_self]
  | e :: es => by
    show addAt (tapplyT n es (padd d₁ d₂)) e.i (e.w * nth (padd d₁ d₂) e.o) =
      padd (addAt (tapplyT n es d₁) e.i (e.w * nth d₁ e.o)) (addAt (tapplyT n es d₂) e.i (e.w * nth d₂ e.o))
    rw [tapplyT_padd n d₁ d₂ h es, nth_padd d₁ d₂ h e.o, Rat.mul_add e.w (nth d₁ e.o) (nth d₂ e.o),
      addAt_padd (tapplyT n es d₁) (tapplyT n es d₂) e.i (e.w * nth d₁ e.o) (e.w * nth d₂ e.o)
        (by rw [length_tapplyT, length_tapplyT])]

theorem tapplyT_smul (n : Nat) (k : Rat) (d : List Rat) :
    ∀ es : List Tap, tapplyT n es (smul k d) = smul k (tapplyT n es d)
  | [] => by
    show zerosN n = smul k (zerosN n)
    rw [smul_zerosN]
  | e :: es => by
    show addAt (tapplyT n es (smul k d)) e.i (e.w * nth (smul k d) e.o) =
      smul k (addAt (tapplyT n es d) e.i (e.w * nth d e.o))
    rw [tapplyT_smul n k d es, nth_smul k d e.o, mul_left_swap e.w k (nth d e.o),
      addAt_smul k (tapplyT n es d) e.i (e.w * nth d e.o)]

theorem tapplyT_zeros (n : Nat) (d : List Rat) : ∀ es : List Tap, tapplyT n es (zeros d) = zerosN n
  | [] => rfl
  | e :: es => by
    show addAt (tapplyT n es (zeros d)) e.i (e.w * nth (zeros d) e.o) = zerosN n
    rw [tapplyT_zeros n d es, nth_zeros d e.o, Rat.mul_zero, addAt_zerosN n e.i]

/-- The transpose of a sparse linear map is linear in the cotangent
(cotangents of one length) and maps zero to zero. -/
theorem tapplyT_linear (n : Nat) (es : List Tap) (k : Rat) (d₁ d₂ : List Rat) (h : d₁.length = d₂.length) :
    tapplyT n es (padd d₁ d₂) = padd (tapplyT n es d₁) (tapplyT n es d₂) ∧
    tapplyT n es (smul k d₁) = smul k (tapplyT n es d₁) ∧
    tapplyT n es (zeros d₁) = zerosN n :=
  ⟨tapplyT_padd n d₁ d₂ h es, tapplyT_smul n k d₁ es, tapplyT_zeros n d₁ es⟩

/-! ## The window relation -/

namespace Axis

theorem kRow_succ (g : Axis) (sm j n : Nat) : g.kRow sm j (n + 1) =
    if g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B then
      Win.mk sm j (sm * g.s + j * g.dl - g.pb) :: g.kRow sm (j + 1) n
    else g.kRow sm (j + 1) n := rfl

end Axis

/-! ### In bounds -/

/-- Every element of a list satisfies P. -/
def AllT {α : Type} (P : α → Prop) : List α → Prop
  | [] => True
  | a :: l => P a ∧ AllT P l

theorem allT_append {α : Type} (P : α → Prop) : ∀ l m : List α, AllT P l → AllT P m → AllT P (l ++ m)
  | [], _, _, hm => hm
  | a :: l, m, hl, hm => by
    have h' : P a ∧ AllT P l := hl
    show P a ∧ AllT P (l ++ m)
    exact ⟨h'.1, allT_append P l m h'.2 hm⟩

/-- A triple inside extents S, K, B. -/
def Win.Inside (S K B : Nat) (t : Win) : Prop := t.sm < S ∧ t.j < K ∧ t.bg < B

theorem kRow_inside (g : Axis) (sm : Nat) (hsm : sm < g.S) :
    ∀ (j n : Nat), j + n ≤ g.k → AllT (Win.Inside g.S g.k g.B) (g.kRow sm j n)
  | _, 0, _ => True.intro
  | j, n + 1, h => by
    rw [Axis.kRow_succ]
    by_cases hc : g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B
    · rw [if_pos hc]
      show Win.Inside g.S g.k g.B (Win.mk sm j (sm * g.s + j * g.dl - g.pb)) ∧
        AllT (Win.Inside g.S g.k g.B) (g.kRow sm (j + 1) n)
      refine ⟨?_, kRow_inside g sm hsm (j + 1) n (by omega)⟩
      show sm < g.S ∧ j < g.k ∧ sm * g.s + j * g.dl - g.pb < g.B
      exact ⟨hsm, by omega, hc.2⟩
    · rw [if_neg hc]
      exact kRow_inside g sm hsm (j + 1) n (by omega)

theorem rows_inside (g : Axis) : ∀ (sm n : Nat), sm + n ≤ g.S → AllT (Win.Inside g.S g.k g.B) (g.rows sm n)
  | _, 0, _ => True.intro
  | sm, n + 1, h => by
    show AllT (Win.Inside g.S g.k g.B) (g.kRow sm 0 g.k ++ g.rows (sm + 1) n)
    exact allT_append _ _ _ (kRow_inside g sm (by omega) 0 g.k (by omega)) (rows_inside g (sm + 1) n (by omega))

/-- One axis: every triple is inside (S, k, B) — the small position below
S, the kernel position below k, and the big position read or written
inside [0, B). -/
theorem taps_inside (g : Axis) : AllT (Win.Inside g.S g.k g.B) g.taps :=
  rows_inside g 0 g.S (by omega)

/-! ### One axis is exactly the registry's relation -/

/-- The registry's relation on one axis (`winGeom.index`): sm < S, j < k,
and the big position sm·s + j·dl − pb inside [0, B). -/
def Axis.Rel (g : Axis) (t : Win) : Prop :=
  t.sm < g.S ∧ t.j < g.k ∧ g.pb ≤ t.sm * g.s + t.j * g.dl ∧ t.bg = t.sm * g.s + t.j * g.dl - g.pb ∧ t.bg < g.B

theorem kRow_rel (g : Axis) (sm : Nat) (hsm : sm < g.S) :
    ∀ (j n : Nat), j + n ≤ g.k → AllT g.Rel (g.kRow sm j n)
  | _, 0, _ => True.intro
  | j, n + 1, h => by
    rw [Axis.kRow_succ]
    by_cases hc : g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B
    · rw [if_pos hc]
      show g.Rel (Win.mk sm j (sm * g.s + j * g.dl - g.pb)) ∧ AllT g.Rel (g.kRow sm (j + 1) n)
      refine ⟨?_, kRow_rel g sm hsm (j + 1) n (by omega)⟩
      show sm < g.S ∧ j < g.k ∧ g.pb ≤ sm * g.s + j * g.dl ∧
        sm * g.s + j * g.dl - g.pb = sm * g.s + j * g.dl - g.pb ∧ sm * g.s + j * g.dl - g.pb < g.B
      exact ⟨hsm, by omega, hc.1, rfl, hc.2⟩
    · rw [if_neg hc]
      exact kRow_rel g sm hsm (j + 1) n (by omega)

theorem rows_rel (g : Axis) : ∀ (sm n : Nat), sm + n ≤ g.S → AllT g.Rel (g.rows sm n)
  | _, 0, _ => True.intro
  | sm, n + 1, h => by
    show AllT g.Rel (g.kRow sm 0 g.k ++ g.rows (sm + 1) n)
    exact allT_append _ _ _ (kRow_rel g sm (by omega) 0 g.k (by omega)) (rows_rel g (sm + 1) n (by omega))

/-- Sound: every triple of one axis is in the registry's relation. -/
theorem taps_sound (g : Axis) : AllT g.Rel g.taps :=
  rows_rel g 0 g.S (by omega)

theorem kRow_complete (g : Axis) (sm j : Nat)
    (hc : g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B) :
    ∀ (j0 n : Nat), j0 ≤ j → j < j0 + n → Win.mk sm j (sm * g.s + j * g.dl - g.pb) ∈ g.kRow sm j0 n
  | _, 0, h1, h2 => absurd h2 (by omega)
  | j0, n + 1, h1, h2 => by
    rw [Axis.kRow_succ]
    by_cases hj : j = j0
    · rw [← hj, if_pos hc]
      exact List.Mem.head _
    · have ih := kRow_complete g sm j hc (j0 + 1) n (by omega) (by omega)
      by_cases hc0 : g.pb ≤ sm * g.s + j0 * g.dl ∧ sm * g.s + j0 * g.dl - g.pb < g.B
      · rw [if_pos hc0]
        exact List.Mem.tail _ ih
      · rw [if_neg hc0]
        exact ih

theorem rows_complete (g : Axis) (sm j : Nat) (hj : j < g.k)
    (hc : g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B) :
    ∀ (sm0 n : Nat), sm0 ≤ sm → sm < sm0 + n → Win.mk sm j (sm * g.s + j * g.dl - g.pb) ∈ g.rows sm0 n
  | _, 0, h1, h2 => absurd h2 (by omega)
  | sm0, n + 1, h1, h2 => by
    show Win.mk sm j (sm * g.s + j * g.dl - g.pb) ∈ g.kRow sm0 0 g.k ++ g.rows (sm0 + 1) n
    by_cases hs : sm = sm0
    · rw [← hs]
      exact List.mem_append_left _ (kRow_complete g sm j hc 0 g.k (by omega) (by omega))
    · exact List.mem_append_right _ (rows_complete g sm j hj hc (sm0 + 1) n (by omega) (by omega))

/-- Complete: every triple of the registry's relation on one axis is in
the list (with `taps_sound`: the list is exactly the relation). -/
theorem taps_complete (g : Axis) (sm j : Nat) (hsm : sm < g.S) (hj : j < g.k)
    (hc : g.pb ≤ sm * g.s + j * g.dl ∧ sm * g.s + j * g.dl - g.pb < g.B) :
    Win.mk sm j (sm * g.s + j * g.dl - g.pb) ∈ g.taps :=
  rows_complete g sm j hj hc 0 g.S (Nat.zero_le _) (by omega)

theorem cross_inside (S1 K1 B1 S K B : Nat) (t u : Win) (ht : Win.Inside S1 K1 B1 t) (hu : Win.Inside S K B u) :
    Win.Inside (S1 * S) (K1 * K) (B1 * B) (Win.cross S K B t u) := by
  have ht' : t.sm < S1 ∧ t.j < K1 ∧ t.bg < B1 := ht
  have hu' : u.sm < S ∧ u.j < K ∧ u.bg < B := hu
  show t.sm * S + u.sm < S1 * S ∧ t.j * K + u.j < K1 * K ∧ t.bg * B + u.bg < B1 * B
  exact ⟨idx_lt_mul S u.sm hu'.1 S1 t.sm ht'.1, idx_lt_mul K u.j hu'.2.1 K1 t.j ht'.2.1,
    idx_lt_mul B u.bg hu'.2.2 B1 t.bg ht'.2.2⟩

theorem map_cross_inside (S1 K1 B1 S K B : Nat) (t : Win) (ht : Win.Inside S1 K1 B1 t) :
    ∀ us : List Win, AllT (Win.Inside S K B) us →
      AllT (Win.Inside (S1 * S) (K1 * K) (B1 * B)) (us.map (Win.cross S K B t))
  | [], _ => True.intro
  | u :: us, h => by
    have h' : Win.Inside S K B u ∧ AllT (Win.Inside S K B) us := h
    show Win.Inside (S1 * S) (K1 * K) (B1 * B) (Win.cross S K B t u) ∧
      AllT (Win.Inside (S1 * S) (K1 * K) (B1 * B)) (us.map (Win.cross S K B t))
    exact ⟨cross_inside S1 K1 B1 S K B t u ht h'.1, map_cross_inside S1 K1 B1 S K B t ht us h'.2⟩

theorem crossAll_inside (S1 K1 B1 S K B : Nat) (us : List Win) (hus : AllT (Win.Inside S K B) us) :
    ∀ ts : List Win, AllT (Win.Inside S1 K1 B1) ts →
      AllT (Win.Inside (S1 * S) (K1 * K) (B1 * B)) (crossAll S K B us ts)
  | [], _ => True.intro
  | t :: ts, h => by
    have h' : Win.Inside S1 K1 B1 t ∧ AllT (Win.Inside S1 K1 B1) ts := h
    show AllT (Win.Inside (S1 * S) (K1 * K) (B1 * B)) (us.map (Win.cross S K B t) ++ crossAll S K B us ts)
    exact allT_append _ _ _ (map_cross_inside S1 K1 B1 S K B t h'.1 us hus)
      (crossAll_inside S1 K1 B1 S K B us hus ts h'.2)

/-- Every triple of the N-D relation is inside the small, kernel and big
element counts: a window never reads or writes past the tensors. -/
theorem winTaps_inside : ∀ gs : List Axis,
    AllT (Win.Inside (smallSize gs) (kernelSize gs) (bigSize gs)) (winTaps gs)
  | [] => by
    show (0 < 1 ∧ 0 < 1 ∧ 0 < 1) ∧ True
    exact ⟨⟨by decide, by decide, by decide⟩, True.intro⟩
  | g :: gs =>
    crossAll_inside g.S g.k g.B (smallSize gs) (kernelSize gs) (bigSize gs) (winTaps gs) (winTaps_inside gs)
      g.taps (taps_inside g)

/-! ## conv and conv_transpose: bilinear maps with a bias -/

/-- Adjointness of every bilinear map with a bias (conv, conv_transpose):
⟨jvp (dx, dW, db), δ⟩ = ⟨dx, x̄⟩ + ⟨dW, W̄⟩ + ⟨db, b̄⟩. -/
theorem bil_adjoint (B : Bil) (x w dx dw db δ : List Rat)
    (hx : dx.length = B.xSize) (hw : dw.length = B.wSize) (hb : db.length = B.bSize)
    (hδ : δ.length = B.ySize) (hi : B.bIdx.length = B.ySize) :
    dot (bilJvp B x w dx dw db) δ = dotAll [dx, dw, db] (bilVjp B x w δ) := by
  show dot (padd (padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw))
      (gather B.bIdx db)) δ =
    dot dx (tapplyT B.xSize (xTaps w B.terms) δ) +
      (dot dw (tapplyT B.wSize (wTaps x B.terms) δ) + (dot db (scatter B.bSize B.bIdx δ) + 0))
  have hP : (padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw)).length =
      (gather B.bIdx db).length := by
    rw [length_padd_eq (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw)
      (by rw [length_tapply, length_tapply]), length_tapply, length_gather, hi]
  rw [dot_padd _ _ δ hP,
    dot_padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw) δ
      (by rw [length_tapply, length_tapply]),
    tapply_adjoint B.ySize B.xSize (xTaps w B.terms) dx δ hx hδ,
    tapply_adjoint B.ySize B.wSize (wTaps x B.terms) dw δ hw hδ,
    gather_adjoint B.bSize B.bIdx db δ hb, Rat.add_zero]
  first
    | rw [Rat.add_assoc]
    | grind

/-! ### The exact Taylor identity: bilinear, the remainder is dW applied to dx -/

/-- The map of W at x equals the map of x at W (the two readings of the terms). -/
theorem wTaps_xTaps (m : Nat) (x w : List Rat) : ∀ ts : List Mono,
    tapply m (wTaps x ts) w = tapply m (xTaps w ts) x
  | [] => rfl
  | t :: ts => by
    show addAt (tapply m (wTaps x ts) w) t.p (nth x t.r * nth w t.q) =
      addAt (tapply m (xTaps w ts) x) t.p (nth w t.q * nth x t.r)
    rw [wTaps_xTaps m x w ts, Rat.mul_comm (nth x t.r) (nth w t.q)]

/-- (w + t·e)·a = w·a + t·(e·a). -/
theorem wline_step (w t e a : Rat) : (w + t * e) * a = w * a + t * (e * a) := by
  first
    | rw [Rat.add_mul, Rat.mul_assoc t e a]
    | grind

/-- The map is linear in W along every line (x fixed). -/
theorem xTaps_along (m : Nat) (t : Rat) (w dw x : List Rat) (h : w.length = dw.length) : ∀ ts : List Mono,
    tapply m (xTaps (along t w dw) ts) x = along t (tapply m (xTaps w ts) x) (tapply m (xTaps dw ts) x)
  | [] => by
    show zerosN m = along t (zerosN m) (zerosN m)
    rw [zerosN_along t m]
  | u :: ts => by
    show addAt (tapply m (xTaps (along t w dw) ts) x) u.p (nth (along t w dw) u.q * nth x u.r) =
      along t (addAt (tapply m (xTaps w ts) x) u.p (nth w u.q * nth x u.r))
        (addAt (tapply m (xTaps dw ts) x) u.p (nth dw u.q * nth x u.r))
    rw [xTaps_along m t w dw x h ts, gather_along.nth_along t w dw h u.q,
      wline_step (nth w u.q) t (nth dw u.q) (nth x u.r),
      addAt_along t (tapply m (xTaps w ts) x) (tapply m (xTaps dw ts) x) u.p _ _
        (by rw [length_tapply, length_tapply])]

/-- (a + t·a') + t·(b + t·b') = a + t·(a' + b) + (t·t)·b'. -/
theorem bil_step (t a a' b b' : Rat) :
    (a + t * a') + t * (b + t * b') = (a + t * (a' + b)) + t * t * b' := by
  first
    | rw [Rat.mul_add t b (t * b'), Rat.mul_add t a' b, ← Rat.mul_assoc t t b',
        Rat.add_assoc a (t * a') (t * b + t * t * b'), ← Rat.add_assoc (t * a') (t * b) (t * t * b'),
        ← Rat.add_assoc a (t * a' + t * b) (t * t * b')]
    | grind

theorem along_along : ∀ (t : Rat) (A A' Bb Bb' : List Rat), A.length = A'.length → A.length = Bb.length →
    A.length = Bb'.length →
    along t (along t A A') (along t Bb Bb') = padd (padd A (smul t (padd A' Bb))) (smul (t * t) Bb')
  | _, [], _, _, _, _, _, _ => rfl
  | _, _ :: _, [], _, _, h, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _, _ :: _, _ :: _, [], _, _, h, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _, _ :: _, _ :: _, _ :: _, [], _, _, h => absurd h.symm (nil_ne_cons_length _ _)
  | t, a :: as, a' :: as', b :: bs, b' :: bs', h1, h2, h3 => by
    show ((a + t * a') + t * (b + t * b')) :: along t (along t as as') (along t bs bs') =
      ((a + t * (a' + b)) + t * t * b') :: padd (padd as (smul t (padd as' bs))) (smul (t * t) bs')
    rw [bil_step t a a' b b', along_along t as as' bs bs' (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3)]

/-- Adding the affine bias line to the bilinear expansion, elementwise. -/
theorem bil_bias (t : Rat) : ∀ (A J R G D : List Rat), A.length = J.length → A.length = R.length →
    A.length = G.length → G.length = D.length →
    padd (padd (padd A (smul t J)) (smul (t * t) R)) (padd G (smul t D)) =
      padd (padd (padd A G) (smul t (padd J D))) (smul (t * t) R)
  | [], _, _, _, _, _, _, _, _ => rfl
  | _ :: _, [], _, _, _, h, _, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, _, _, h, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, [], _, _, _, h, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, _ :: _, [], _, _, _, h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, j :: js, r :: rs, g :: gs, d :: ds, h1, h2, h3, h4 => by
    show (((a + t * j) + t * t * r) + (g + t * d)) :: padd (padd (padd as (smul t js)) (smul (t * t) rs))
        (padd gs (smul t ds)) =
      (((a + g) + t * (j + d)) + t * t * r) :: padd (padd (padd as gs) (smul t (padd js ds))) (smul (t * t) rs)
    rw [bil_bias t as js rs gs ds (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3) (Nat.succ.inj h4)]
    first
      | rw [Rat.add_assoc (a + t * j) (t * t * r) (g + t * d),
          Rat.add_comm (t * t * r) (g + t * d), ← Rat.add_assoc (a + t * j) (g + t * d) (t * t * r),
          add_step t a g j d]
      | grind

/-- conv and conv_transpose are bilinear: along the line (x + t·dx,
W + t·dW, b + t·db) the forward is fwd + t·jvp + t²·R exactly, with R the
map of dW applied to dx (`tapply (xTaps dW) dx`) — a wrong product rule
(a missing term, a factor 2) makes it false. -/
theorem bil_taylor (B : Bil) (t : Rat) (x w b dx dw db : List Rat)
    (hx : x.length = dx.length) (hw : w.length = dw.length) (hb : b.length = db.length)
    (hi : B.bIdx.length = B.ySize) :
    bilFwd B (along t x dx) (along t w dw) (along t b db) =
      padd (padd (bilFwd B x w b) (smul t (bilJvp B x w dx dw db)))
        (smul (t * t) (tapply B.ySize (xTaps dw B.terms) dx)) := by
  show padd (tapply B.ySize (xTaps (along t w dw) B.terms) (along t x dx)) (gather B.bIdx (along t b db)) =
    padd (padd (padd (tapply B.ySize (xTaps w B.terms) x) (gather B.bIdx b))
        (smul t (padd (padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (wTaps x B.terms) dw))
          (gather B.bIdx db))))
      (smul (t * t) (tapply B.ySize (xTaps dw B.terms) dx))
  rw [xTaps_along B.ySize t w dw (along t x dx) hw B.terms,
    tapply_along B.ySize t x dx hx (xTaps w B.terms), tapply_along B.ySize t x dx hx (xTaps dw B.terms),
    wTaps_xTaps B.ySize x dw B.terms,
    along_along t (tapply B.ySize (xTaps w B.terms) x) (tapply B.ySize (xTaps w B.terms) dx)
      (tapply B.ySize (xTaps dw B.terms) x) (tapply B.ySize (xTaps dw B.terms) dx)
      (by rw [length_tapply, length_tapply]) (by rw [length_tapply, length_tapply])
      (by rw [length_tapply, length_tapply]),
    gather_along B.bIdx t b db hb]
  -- (A + t(A' + B0) + t²B') + (Gb + t·Gd) = (A + Gb) + t((A' + B0) + Gd) + t²B',
  -- elementwise on lists of one length: `bil_bias`.
  exact bil_bias t (tapply B.ySize (xTaps w B.terms) x)
    (padd (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (xTaps dw B.terms) x))
    (tapply B.ySize (xTaps dw B.terms) dx) (gather B.bIdx b) (gather B.bIdx db)
    (by rw [length_padd_eq (tapply B.ySize (xTaps w B.terms) dx) (tapply B.ySize (xTaps dw B.terms) x)
      (by rw [length_tapply, length_tapply]), length_tapply, length_tapply])
    (by rw [length_tapply, length_tapply])
    (by rw [length_tapply, length_gather, hi])
    (by rw [length_gather, length_gather])

/-- The VJP of a bilinear map with a bias is linear in δ (cotangents of one
length) and maps zero to zeros. -/
theorem bil_vjp_linear (B : Bil) (k : Rat) (x w δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    bilVjp B x w (padd δ₁ δ₂) = paddAll (bilVjp B x w δ₁) (bilVjp B x w δ₂) ∧
    bilVjp B x w (smul k δ₁) = smulAll k (bilVjp B x w δ₁) ∧
    bilVjp B x w (zeros δ₁) = zerosAll (bilVjp B x w δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT B.xSize (xTaps w B.terms) (padd δ₁ δ₂), tapplyT B.wSize (wTaps x B.terms) (padd δ₁ δ₂),
        scatter B.bSize B.bIdx (padd δ₁ δ₂)] =
      [padd (tapplyT B.xSize (xTaps w B.terms) δ₁) (tapplyT B.xSize (xTaps w B.terms) δ₂),
        padd (tapplyT B.wSize (wTaps x B.terms) δ₁) (tapplyT B.wSize (wTaps x B.terms) δ₂),
        padd (scatter B.bSize B.bIdx δ₁) (scatter B.bSize B.bIdx δ₂)]
    rw [tapplyT_padd B.xSize δ₁ δ₂ h (xTaps w B.terms), tapplyT_padd B.wSize δ₁ δ₂ h (wTaps x B.terms),
      scatter_padd B.bSize B.bIdx δ₁ δ₂ h]
  · show [tapplyT B.xSize (xTaps w B.terms) (smul k δ₁), tapplyT B.wSize (wTaps x B.terms) (smul k δ₁),
        scatter B.bSize B.bIdx (smul k δ₁)] =
      [smul k (tapplyT B.xSize (xTaps w B.terms) δ₁), smul k (tapplyT B.wSize (wTaps x B.terms) δ₁),
        smul k (scatter B.bSize B.bIdx δ₁)]
    rw [tapplyT_smul B.xSize k δ₁ (xTaps w B.terms), tapplyT_smul B.wSize k δ₁ (wTaps x B.terms),
      scatter_smul B.bSize k B.bIdx δ₁]
  · show [tapplyT B.xSize (xTaps w B.terms) (zeros δ₁), tapplyT B.wSize (wTaps x B.terms) (zeros δ₁),
        scatter B.bSize B.bIdx (zeros δ₁)] =
      [zeros (tapplyT B.xSize (xTaps w B.terms) δ₁), zeros (tapplyT B.wSize (wTaps x B.terms) δ₁),
        zeros (scatter B.bSize B.bIdx δ₁)]
    rw [tapplyT_zeros B.xSize δ₁ (xTaps w B.terms), tapplyT_zeros B.wSize δ₁ (wTaps x B.terms),
      scatter_zeros B.bSize B.bIdx δ₁,
      zeros_eq_zerosN (tapplyT B.xSize (xTaps w B.terms) δ₁), zeros_eq_zerosN (tapplyT B.wSize (wTaps x B.terms) δ₁),
      zeros_eq_zerosN (scatter B.bSize B.bIdx δ₁), length_tapplyT B.xSize (xTaps w B.terms) δ₁,
      length_tapplyT B.wSize (wTaps x B.terms) δ₁, length_scatter B.bSize B.bIdx δ₁]

/-! ## The six primitives -/

theorem forFrom_allT {α : Type} (P : α → Prop) (f : Nat → List α) (N : Nat) (H : ∀ i, i < N → AllT P (f i)) :
    ∀ (k n : Nat), k + n ≤ N → AllT P (forFrom f k n)
  | _, 0, _ => True.intro
  | k, n + 1, h => by
    show AllT P (f k ++ forFrom f (k + 1) n)
    exact allT_append P _ _ (H k (by omega)) (forFrom_allT P f N H (k + 1) n (by omega))

theorem forN_allT {α : Type} (P : α → Prop) (f : Nat → List α) (n : Nat) (H : ∀ i, i < n → AllT P (f i)) :
    AllT P (forN n f) :=
  forFrom_allT P f n H 0 n (by omega)

theorem allT_map {α β : Type} (P : α → Prop) (Q : β → Prop) (f : α → β) (H : ∀ a, P a → Q (f a)) :
    ∀ l : List α, AllT P l → AllT Q (l.map f)
  | [], _ => True.intro
  | a :: l, h => by
    have h' : P a ∧ AllT P l := h
    show Q (f a) ∧ AllT Q (l.map f)
    exact ⟨H a h'.1, allT_map P Q f H l h'.2⟩

/-- The channel of a group: with cout = groups·cog and co < cout, the first
input channel of co's group plus ch < cg is below cin = groups·cg. -/
theorem group_channel_lt (cin cout groups cg cog co ch : Nat) (hin : cin = groups * cg)
    (hout : cout = groups * cog) (hco : co < cout) (hch : ch < cg) : co / cog * cg + ch < cin := by
  have hcog : 0 < cog := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.mul_zero] at hout
    omega)
  have h1 : co < groups * cog := by
    rw [← hout]
    exact hco
  have hg : co / cog < groups := by
    first
      | exact (Nat.div_lt_iff_lt_mul hcog).2 h1
      | exact Nat.div_lt_of_lt_mul (by rw [Nat.mul_comm]; exact h1)
  rw [hin]
  exact idx_lt_mul cg ch hch groups (co / cog) hg

/-- The input flat index of a term: (l·cin + channel)·n + i < lead·cin·n. -/
theorem chan_idx_lt (lead cin n l c i : Nat) (hl : l < lead) (hc : c < cin) (hi : i < n) :
    (l * cin + c) * n + i < lead * cin * n :=
  idx_lt_mul n i hi (lead * cin) (l * cin + c) (idx_lt_mul cin c hc lead l hl)

namespace Conv

theorem length_bIdx (c : Conv) : c.bil.bIdx.length = c.bil.ySize := by
  first
    | exact length_idx _ _
    | (unfold Conv.bil; exact length_idx _ _)

/-- conv in bounds: under the registry's channel rules (groups divides
cin and cout: cin = groups·cg, cout = groups·cog), every term writes an
element of y and reads an element of W and of x. -/
theorem terms_inside (c : Conv) (hin : c.cin = c.groups * c.cg) (hout : c.cout = c.groups * c.cog) :
    AllT (fun u : Mono => u.p < c.lead * c.cout * smallSize c.axes ∧ u.q < c.cout * c.cg * kernelSize c.axes ∧
      u.r < c.lead * c.cin * bigSize c.axes) c.terms := by
  show AllT (fun u : Mono => u.p < c.lead * c.cout * smallSize c.axes ∧ u.q < c.cout * c.cg * kernelSize c.axes ∧
      u.r < c.lead * c.cin * bigSize c.axes)
    (forN c.lead (fun l => forN c.cout (fun co => forN c.cg (fun ch =>
      (winTaps c.axes).map (fun t => Mono.mk ((l * c.cout + co) * smallSize c.axes + t.sm)
        ((co * c.cg + ch) * kernelSize c.axes + t.j)
        ((l * c.cin + co / c.cog * c.cg + ch) * bigSize c.axes + t.bg))))))
  refine forN_allT _ _ c.lead (fun l hl => forN_allT _ _ c.cout (fun co hco => forN_allT _ _ c.cg (fun ch hch => ?_)))
  refine allT_map (Win.Inside (smallSize c.axes) (kernelSize c.axes) (bigSize c.axes)) _ _ ?_ (winTaps c.axes)
    (winTaps_inside c.axes)
  intro t ht
  have ht' : t.sm < smallSize c.axes ∧ t.j < kernelSize c.axes ∧ t.bg < bigSize c.axes := ht
  have hci : co / c.cog * c.cg + ch < c.cin := group_channel_lt c.cin c.cout c.groups c.cg c.cog co ch hin hout hco hch
  show (l * c.cout + co) * smallSize c.axes + t.sm < c.lead * c.cout * smallSize c.axes ∧
    (co * c.cg + ch) * kernelSize c.axes + t.j < c.cout * c.cg * kernelSize c.axes ∧
    (l * c.cin + co / c.cog * c.cg + ch) * bigSize c.axes + t.bg < c.lead * c.cin * bigSize c.axes
  refine ⟨chan_idx_lt c.lead c.cout (smallSize c.axes) l co t.sm hl hco ht'.1,
    chan_idx_lt c.cout c.cg (kernelSize c.axes) co ch t.j hco hch ht'.2.1, ?_⟩
  rw [Nat.add_assoc (l * c.cin) (co / c.cog * c.cg) ch]
  exact chan_idx_lt c.lead c.cin (bigSize c.axes) l (co / c.cog * c.cg + ch) t.bg hl hci ht'.2.2
end Conv

namespace ConvT

theorem length_bIdx (c : ConvT) : c.bil.bIdx.length = c.bil.ySize := by
  first
    | exact length_idx _ _
    | (unfold ConvT.bil; exact length_idx _ _)

/-- conv_transpose in bounds, under the same channel rules. -/
theorem terms_inside (c : ConvT) (hin : c.cin = c.groups * c.cg) (hout : c.cout = c.groups * c.cog) :
    AllT (fun u : Mono => u.p < c.lead * c.cout * bigSize c.axes ∧ u.q < c.cin * c.cog * kernelSize c.axes ∧
      u.r < c.lead * c.cin * smallSize c.axes) c.terms := by
  show AllT (fun u : Mono => u.p < c.lead * c.cout * bigSize c.axes ∧ u.q < c.cin * c.cog * kernelSize c.axes ∧
      u.r < c.lead * c.cin * smallSize c.axes)
    (forN c.lead (fun l => forN c.cout (fun co => forN c.cg (fun ch =>
      (winTaps c.axes).map (fun t => Mono.mk ((l * c.cout + co) * bigSize c.axes + t.bg)
        (((co / c.cog * c.cg + ch) * c.cog + co % c.cog) * kernelSize c.axes + t.j)
        ((l * c.cin + co / c.cog * c.cg + ch) * smallSize c.axes + t.sm))))))
  refine forN_allT _ _ c.lead (fun l hl => forN_allT _ _ c.cout (fun co hco => forN_allT _ _ c.cg (fun ch hch => ?_)))
  refine allT_map (Win.Inside (smallSize c.axes) (kernelSize c.axes) (bigSize c.axes)) _ _ ?_ (winTaps c.axes)
    (winTaps_inside c.axes)
  intro t ht
  have ht' : t.sm < smallSize c.axes ∧ t.j < kernelSize c.axes ∧ t.bg < bigSize c.axes := ht
  have hci : co / c.cog * c.cg + ch < c.cin := group_channel_lt c.cin c.cout c.groups c.cg c.cog co ch hin hout hco hch
  have hcog : 0 < c.cog := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.mul_zero] at hout
    omega)
  show (l * c.cout + co) * bigSize c.axes + t.bg < c.lead * c.cout * bigSize c.axes ∧
    (((co / c.cog * c.cg + ch) * c.cog + co % c.cog) * kernelSize c.axes + t.j < c.cin * c.cog * kernelSize c.axes) ∧
    (l * c.cin + co / c.cog * c.cg + ch) * smallSize c.axes + t.sm < c.lead * c.cin * smallSize c.axes
  refine ⟨chan_idx_lt c.lead c.cout (bigSize c.axes) l co t.bg hl hco ht'.2.2,
    chan_idx_lt c.cin c.cog (kernelSize c.axes) (co / c.cog * c.cg + ch) (co % c.cog) t.j hci
      (Nat.mod_lt co hcog) ht'.2.1, ?_⟩
  rw [Nat.add_assoc (l * c.cin) (co / c.cog * c.cg) ch]
  exact chan_idx_lt c.lead c.cin (smallSize c.axes) l (co / c.cog * c.cg + ch) t.sm hl hci ht'.1
end ConvT

/-- conv: adjointness in (x, W, b). -/
theorem conv_adjoint (c : Conv) (x w dx dw db δ : List Rat)
    (hx : dx.length = c.bil.xSize) (hw : dw.length = c.bil.wSize) (hb : db.length = c.bil.bSize)
    (hδ : δ.length = c.bil.ySize) :
    dot (bilJvp c.bil x w dx dw db) δ = dotAll [dx, dw, db] (bilVjp c.bil x w δ) :=
  bil_adjoint c.bil x w dx dw db δ hx hw hb hδ (Conv.length_bIdx c)

/-- conv: the exact Taylor identity, the remainder the conv of dW over dx (no bias). -/
theorem conv_taylor (c : Conv) (t : Rat) (x w b dx dw db : List Rat)
    (hx : x.length = dx.length) (hw : w.length = dw.length) (hb : b.length = db.length) :
    bilFwd c.bil (along t x dx) (along t w dw) (along t b db) =
      padd (padd (bilFwd c.bil x w b) (smul t (bilJvp c.bil x w dx dw db)))
        (smul (t * t) (tapply c.bil.ySize (xTaps dw c.bil.terms) dx)) :=
  bil_taylor c.bil t x w b dx dw db hx hw hb (Conv.length_bIdx c)

theorem conv_vjp_linear (c : Conv) (k : Rat) (x w δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    bilVjp c.bil x w (padd δ₁ δ₂) = paddAll (bilVjp c.bil x w δ₁) (bilVjp c.bil x w δ₂) ∧
    bilVjp c.bil x w (smul k δ₁) = smulAll k (bilVjp c.bil x w δ₁) ∧
    bilVjp c.bil x w (zeros δ₁) = zerosAll (bilVjp c.bil x w δ₁) :=
  bil_vjp_linear c.bil k x w δ₁ δ₂ h

/-- conv_transpose: adjointness in (x, W, b). -/
theorem conv_transpose_adjoint (c : ConvT) (x w dx dw db δ : List Rat)
    (hx : dx.length = c.bil.xSize) (hw : dw.length = c.bil.wSize) (hb : db.length = c.bil.bSize)
    (hδ : δ.length = c.bil.ySize) :
    dot (bilJvp c.bil x w dx dw db) δ = dotAll [dx, dw, db] (bilVjp c.bil x w δ) :=
  bil_adjoint c.bil x w dx dw db δ hx hw hb hδ (ConvT.length_bIdx c)

theorem conv_transpose_taylor (c : ConvT) (t : Rat) (x w b dx dw db : List Rat)
    (hx : x.length = dx.length) (hw : w.length = dw.length) (hb : b.length = db.length) :
    bilFwd c.bil (along t x dx) (along t w dw) (along t b db) =
      padd (padd (bilFwd c.bil x w b) (smul t (bilJvp c.bil x w dx dw db)))
        (smul (t * t) (tapply c.bil.ySize (xTaps dw c.bil.terms) dx)) :=
  bil_taylor c.bil t x w b dx dw db hx hw hb (ConvT.length_bIdx c)

theorem conv_transpose_vjp_linear (c : ConvT) (k : Rat) (x w δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    bilVjp c.bil x w (padd δ₁ δ₂) = paddAll (bilVjp c.bil x w δ₁) (bilVjp c.bil x w δ₂) ∧
    bilVjp c.bil x w (smul k δ₁) = smulAll k (bilVjp c.bil x w δ₁) ∧
    bilVjp c.bil x w (zeros δ₁) = zerosAll (bilVjp c.bil x w δ₁) :=
  bil_vjp_linear c.bil k x w δ₁ δ₂ h

/-! ### The pools -/


/-- avg_pool and avg_pool_nd: adjointness, for every divisor. -/
theorem avg_pool_adjoint (q : Pool) (D : Nat → Nat) (x dx δ : List Rat)
    (hx : dx.length = q.inSize) (hδ : δ.length = q.outSize) :
    dot (q.avgJvp D x dx) δ = dotAll [dx] (q.avgVjp D x δ) := by
  show dot (tapply q.outSize (q.avgTaps D) dx) δ = dot dx (tapplyT q.inSize (q.avgTaps D) δ) + 0
  rw [tapply_adjoint q.outSize q.inSize (q.avgTaps D) dx δ hx hδ, Rat.add_zero]

/-- The average pools are linear: the JVP is the forward on the tangent. -/
theorem avg_pool_jvp_is_fwd (q : Pool) (D : Nat → Nat) (x v : List Rat) : q.avgJvp D x v = q.avgFwd D v := rfl

/-- The average pools along a line: fwd (x + t·v) = fwd x + t·jvp x v exactly. -/
theorem avg_pool_taylor (q : Pool) (D : Nat → Nat) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    q.avgFwd D (along t x v) = padd (q.avgFwd D x) (smul t (q.avgJvp D x v)) :=
  tapply_line q.outSize t (q.avgTaps D) x v h

theorem avg_pool_vjp_linear (q : Pool) (D : Nat → Nat) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    tapplyT q.inSize (q.avgTaps D) (padd δ₁ δ₂) =
      padd (tapplyT q.inSize (q.avgTaps D) δ₁) (tapplyT q.inSize (q.avgTaps D) δ₂) ∧
    tapplyT q.inSize (q.avgTaps D) (smul k δ₁) = smul k (tapplyT q.inSize (q.avgTaps D) δ₁) ∧
    tapplyT q.inSize (q.avgTaps D) (zeros δ₁) = zerosN q.inSize :=
  tapplyT_linear q.inSize (q.avgTaps D) k δ₁ δ₂ h

/-- max_pool and max_pool_nd: at every x, the JVP (the tie rule's taps)
and the VJP are adjoint. -/
theorem max_pool_adjoint (q : Pool) (x dx δ : List Rat)
    (hx : dx.length = q.inSize) (hδ : δ.length = q.outSize) :
    dot (q.maxJvp x dx) δ = dotAll [dx] (q.maxVjp x δ) := by
  show dot (tapply q.outSize (q.taps (q.maxWeight x)) dx) δ =
    dot dx (tapplyT q.inSize (q.taps (q.maxWeight x)) δ) + 0
  rw [tapply_adjoint q.outSize q.inSize (q.taps (q.maxWeight x)) dx δ hx hδ, Rat.add_zero]

theorem max_pool_vjp_linear (q : Pool) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    tapplyT q.inSize (q.taps (q.maxWeight x)) (padd δ₁ δ₂) =
      padd (tapplyT q.inSize (q.taps (q.maxWeight x)) δ₁) (tapplyT q.inSize (q.taps (q.maxWeight x)) δ₂) ∧
    tapplyT q.inSize (q.taps (q.maxWeight x)) (smul k δ₁) = smul k (tapplyT q.inSize (q.taps (q.maxWeight x)) δ₁) ∧
    tapplyT q.inSize (q.taps (q.maxWeight x)) (zeros δ₁) = zerosN q.inSize :=
  tapplyT_linear q.inSize (q.taps (q.maxWeight x)) k δ₁ δ₂ h

/-! ## The constructors of `Prim`

`Prim.conv`, `Prim.conv_transpose`, `Prim.max_pool`, `Prim.max_pool_nd`,
`Prim.avg_pool` and `Prim.avg_pool_nd` are the maps above at the geometry
`Attr.convG`, `Attr.convTG` and `Attr.poolG` read from the registry's
`Window` attribute and the shapes (`Tlcheck.Spec`); without a bias, conv
and conv_transpose use the zero bias and return the two VJPs of x and W.
Their adjointness, in the form the checker's `Claim` states it: -/

/-- conv with a bias, as `Prim.conv`. -/
theorem conv_prim_adjoint (a : Attr) (x w b dx dw db δ : List Rat)
    (hx : dx.length = a.convG.bil.xSize) (hw : dw.length = a.convG.bil.wSize) (hb : db.length = a.convG.bil.bSize)
    (hδ : δ.length = a.convG.bil.ySize) :
    dot (Prim.jvp .conv a [x, w, b] [dx, dw, db]) δ = dotAll [dx, dw, db] (Prim.vjp .conv a [x, w, b] δ) := by
  show dot (bilJvp a.convG.bil x w dx dw db) δ = dotAll [dx, dw, db] (bilVjp a.convG.bil x w δ)
  exact conv_adjoint a.convG x w dx dw db δ hx hw hb hδ

/-- conv_transpose with a bias, as `Prim.conv_transpose`. -/
theorem conv_transpose_prim_adjoint (a : Attr) (x w b dx dw db δ : List Rat)
    (hx : dx.length = a.convTG.bil.xSize) (hw : dw.length = a.convTG.bil.wSize)
    (hb : db.length = a.convTG.bil.bSize) (hδ : δ.length = a.convTG.bil.ySize) :
    dot (Prim.jvp .conv_transpose a [x, w, b] [dx, dw, db]) δ =
      dotAll [dx, dw, db] (Prim.vjp .conv_transpose a [x, w, b] δ) := by
  show dot (bilJvp a.convTG.bil x w dx dw db) δ = dotAll [dx, dw, db] (bilVjp a.convTG.bil x w δ)
  exact conv_transpose_adjoint a.convTG x w dx dw db δ hx hw hb hδ

/-- Dropping the zero bias's term: ⟨dx, u⟩ + (⟨dw, v⟩ + (⟨0, z⟩ + 0)) =
⟨dx, u⟩ + (⟨dw, v⟩ + 0). -/
theorem drop_zero_bias (n : Nat) (dx dw u v z : List Rat) :
    dotAll [dx, dw, zerosN n] [u, v, z] = dotAll [dx, dw] [u, v] := by
  show dot dx u + (dot dw v + (dot (zerosN n) z + 0)) = dot dx u + (dot dw v + 0)
  rw [dot_zerosN_left n z, Rat.zero_add]

/-- conv without a bias, as `Prim.conv` (the bias of zeros). -/
theorem conv_prim_adjoint_nobias (a : Attr) (x w dx dw δ : List Rat)
    (hx : dx.length = a.convG.bil.xSize) (hw : dw.length = a.convG.bil.wSize) (hδ : δ.length = a.convG.bil.ySize) :
    dot (Prim.jvp .conv a [x, w] [dx, dw]) δ = dotAll [dx, dw] (Prim.vjp .conv a [x, w] δ) := by
  show dot (bilJvp a.convG.bil x w dx dw (zerosN a.convG.cout)) δ =
    dotAll [dx, dw] [tapplyT a.convG.bil.xSize (xTaps w a.convG.bil.terms) δ,
      tapplyT a.convG.bil.wSize (wTaps x a.convG.bil.terms) δ]
  rw [conv_adjoint a.convG x w dx dw (zerosN a.convG.cout) δ hx hw (length_zerosN a.convG.cout) hδ]
  exact drop_zero_bias a.convG.cout dx dw _ _ _

/-- conv_transpose without a bias, as `Prim.conv_transpose`. -/
theorem conv_transpose_prim_adjoint_nobias (a : Attr) (x w dx dw δ : List Rat)
    (hx : dx.length = a.convTG.bil.xSize) (hw : dw.length = a.convTG.bil.wSize)
    (hδ : δ.length = a.convTG.bil.ySize) :
    dot (Prim.jvp .conv_transpose a [x, w] [dx, dw]) δ = dotAll [dx, dw] (Prim.vjp .conv_transpose a [x, w] δ) := by
  show dot (bilJvp a.convTG.bil x w dx dw (zerosN a.convTG.cout)) δ =
    dotAll [dx, dw] [tapplyT a.convTG.bil.xSize (xTaps w a.convTG.bil.terms) δ,
      tapplyT a.convTG.bil.wSize (wTaps x a.convTG.bil.terms) δ]
  rw [conv_transpose_adjoint a.convTG x w dx dw (zerosN a.convTG.cout) δ hx hw (length_zerosN a.convTG.cout) hδ]
  exact drop_zero_bias a.convTG.cout dx dw _ _ _

/-- max_pool, as `Prim.max_pool` (padding positions are outside every
window; the tie rule's 1/t weights). -/
theorem max_pool_prim_adjoint (a : Attr) (x dx δ : List Rat)
    (hx : dx.length = a.poolG.inSize) (hδ : δ.length = a.poolG.outSize) :
    dot (Prim.jvp .max_pool a [x] [dx]) δ = dotAll [dx] (Prim.vjp .max_pool a [x] δ) := by
  show dot (a.poolG.maxJvp x dx) δ = dotAll [dx] (a.poolG.maxVjp x δ)
  exact max_pool_adjoint a.poolG x dx δ hx hδ

/-- max_pool_nd, as `Prim.max_pool_nd`: the same map (dilation and
ceil_mode enter through the geometry). -/
theorem max_pool_nd_adjoint (a : Attr) (x dx δ : List Rat)
    (hx : dx.length = a.poolG.inSize) (hδ : δ.length = a.poolG.outSize) :
    dot (Prim.jvp .max_pool_nd a [x] [dx]) δ = dotAll [dx] (Prim.vjp .max_pool_nd a [x] δ) := by
  show dot (a.poolG.maxJvp x dx) δ = dotAll [dx] (a.poolG.maxVjp x δ)
  exact max_pool_adjoint a.poolG x dx δ hx hδ

/-- avg_pool, as `Prim.avg_pool`: the divisor is the positions inside the
padded input. -/
theorem avg_pool_prim_adjoint (a : Attr) (x dx δ : List Rat)
    (hx : dx.length = a.poolG.inSize) (hδ : δ.length = a.poolG.outSize) :
    dot (Prim.jvp .avg_pool a [x] [dx]) δ = dotAll [dx] (Prim.vjp .avg_pool a [x] δ) := by
  show dot (a.poolG.avgJvp a.poolG.divPad x dx) δ = dotAll [dx] (a.poolG.avgVjp a.poolG.divPad x δ)
  exact avg_pool_adjoint a.poolG a.poolG.divPad x dx δ hx hδ

/-- avg_pool_nd, as `Prim.avg_pool_nd`: the divisor `Attr.avgDiv`
(count_include_pad or the real positions). -/
theorem avg_pool_nd_adjoint (a : Attr) (x dx δ : List Rat)
    (hx : dx.length = a.poolG.inSize) (hδ : δ.length = a.poolG.outSize) :
    dot (Prim.jvp .avg_pool_nd a [x] [dx]) δ = dotAll [dx] (Prim.vjp .avg_pool_nd a [x] δ) := by
  show dot (a.poolG.avgJvp a.avgDiv x dx) δ = dotAll [dx] (a.poolG.avgVjp a.avgDiv x δ)
  exact avg_pool_adjoint a.poolG a.avgDiv x dx δ hx hδ

/-- The geometry read from a gate case (conv1d, x [2, 4]: 2 channels of 4
positions; W [4, 1, 3] in 2 groups; kernel 3, dilation 2, pads 0 and 2;
output [4, 2]): 4 output channels of 2 positions, 8 outputs. -/
theorem convG_instance :
    (Attr.convG { c := 0, lo := 0, hi := 0, axis := 0, shape := [2, 4], axis2 := 0, perm := [], start := 0, stop := 0,
      toShape := [], values := [], shapes := [[2, 4], [4, 1, 3]], kernel := [3], stride := [1], dilation := [2],
      pads := [0, 2], groups := 2, outShape := [4, 2] }).bil.ySize = 8 := by decide +kernel

/-! ## Instances, checked by the kernel against values computed by hand
from the registry's definitions (`spec/doc.go`, "Window primitives") -/

/-- One axis without padding or dilation, stride 1. -/
def ax1 (S B k : Nat) : Axis := { S := S, B := B, k := k, s := 1, dl := 1, pb := 0, pe := 0 }

/-- conv1d: x = [1, 2, 3, 4], W = [1, −1], b = [1/2]: xᵢ − xᵢ₊₁ + 1/2. -/
theorem conv1d_instance :
    bilFwd (Conv.bil { lead := 1, cin := 1, cout := 1, groups := 1, axes := [ax1 3 4 2] })
      [1, 2, 3, 4] [1, -1] [1 / 2] = [-1 / 2, -1 / 2, -1 / 2] := by decide +kernel

/-- conv1d with padding 1 on both sides: x = [1, 2, 3], W = [1, 1] over
[0, 1, 2, 3, 0]. -/
theorem conv1d_pad_instance :
    bilFwd (Conv.bil { lead := 1, cin := 1, cout := 1, groups := 1,
        axes := [{ S := 4, B := 3, k := 2, s := 1, dl := 1, pb := 1, pe := 1 }] })
      [1, 2, 3] [1, 1] [0] = [1, 3, 5, 3] := by decide +kernel

/-- conv1d with stride 2 and dilation 2: x = [1, …, 5], W = [1, 10] reads
(x₀, x₂) and (x₂, x₄). -/
theorem conv1d_stride_dilation_instance :
    bilFwd (Conv.bil { lead := 1, cin := 1, cout := 1, groups := 1,
        axes := [{ S := 2, B := 5, k := 2, s := 2, dl := 2, pb := 0, pe := 0 }] })
      [1, 2, 3, 4, 5] [1, 10] [0] = [31, 53] := by decide +kernel

/-- conv1d with two groups of one channel: W = [10, 100] scales channel 0
by 10 and channel 1 by 100. -/
theorem conv1d_groups_instance :
    bilFwd (Conv.bil { lead := 1, cin := 2, cout := 2, groups := 2, axes := [ax1 2 2 1] })
      [1, 2, 3, 4] [10, 100] [0, 0] = [10, 20, 300, 400] := by decide +kernel

/-- conv2d: x = 1 … 9 as 3×3, W = [[1, 0], [0, 1]]: x[i, j] + x[i + 1, j + 1]. -/
theorem conv2d_instance :
    bilFwd (Conv.bil { lead := 1, cin := 1, cout := 1, groups := 1, axes := [ax1 2 3 2, ax1 2 3 2] })
      [1, 2, 3, 4, 5, 6, 7, 8, 9] [1, 0, 0, 1] [0] = [6, 8, 12, 14] := by decide +kernel

/-- conv_transpose1d with stride 2: x = [1, 2], W = [1, 2, 3] — each input
element adds its multiple of W at 2·i (PyTorch's `conv_transpose1d`). -/
theorem conv_transpose1d_instance :
    bilFwd (ConvT.bil { lead := 1, cin := 1, cout := 1, groups := 1,
        axes := [{ S := 2, B := 5, k := 3, s := 2, dl := 1, pb := 0, pe := 0 }] })
      [1, 2] [1, 2, 3] [0] = [1, 2, 5, 4, 6] := by decide +kernel

/-- The same with padding 1 on both sides: the first and last outputs are cut. -/
theorem conv_transpose1d_pad_instance :
    bilFwd (ConvT.bil { lead := 1, cin := 1, cout := 1, groups := 1,
        axes := [{ S := 2, B := 3, k := 3, s := 2, dl := 1, pb := 1, pe := 1 }] })
      [1, 2] [1, 2, 3] [0] = [2, 5, 4] := by decide +kernel

/-- One axis of 4 elements, kernel 2, stride 2. -/
def poolK2S2 : Pool := { lead := 1, axes := [{ S := 2, B := 4, k := 2, s := 2, dl := 1, pb := 0, pe := 0 }] }

/-- avg_pool, kernel 2, stride 2: [1, 2, 3, 4] ↦ [3/2, 7/2]. -/
theorem avg_pool_instance : poolK2S2.avgFwd poolK2S2.divPad [1, 2, 3, 4] = [3 / 2, 7 / 2] := by
  decide +kernel

/-- One axis of 3 elements, kernel 2, stride 1, padding 1 on both sides. -/
def poolK2P1 : Pool := { lead := 1, axes := [{ S := 4, B := 3, k := 2, s := 1, dl := 1, pb := 1, pe := 1 }] }

/-- avg_pool_nd, kernel 2, padding 1: without count_include_pad the edge
windows average their one real element; with it they divide by 2. -/
theorem avg_pool_nd_instance :
    poolK2P1.avgFwd poolK2P1.divReal [1, 2, 3] = [1, 3 / 2, 5 / 2, 3] ∧
      poolK2P1.avgFwd poolK2P1.divPad [1, 2, 3] = [1 / 2, 3 / 2, 5 / 2, 3 / 2] := by decide +kernel

/-- One axis of n elements, kernel 2, stride 1. -/
def poolK2 (n : Nat) : Pool := { lead := 1, axes := [ax1 (n - 1) n 2] }

/-- max_pool, kernel 2, stride 1: [1, 3, 2, 5, 4] ↦ [3, 3, 5, 5]. -/
theorem max_pool_instance : (poolK2 5).maxFwd [1, 3, 2, 5, 4] = [3, 3, 5, 5] := by decide +kernel

/-- The tie rule: x = [2, 2, 1], the first window ties, so the tangent
[1, 0, 0] enters output 0 with weight 1/2; output 1's maximum is x₁ alone. -/
theorem max_pool_tie_instance : (poolK2 3).maxJvp [2, 2, 1] [1, 0, 0] = [1 / 2, 0] := by decide +kernel

/-! ## The tie rule's weights sum to 1 over every window

`Pool.maxWeight` gives each of the t window positions attaining the
maximum the weight 1/t, the others 0; the JVP's taps of output l·S + o are
exactly the triples of `winTaps` with small index o, at these weights. So
the sum below is the sum of the weights of one output's taps, and
`maxWeight_sum_one` says it is 1 whenever the window has an element (the
registry refuses a window with none): the max pools' JVP is a convex
combination of the tied tangents, the tie rule the registry documents. -/

/-- Σ of g over the triples of output o (those with `t.sm = o`). -/
def sumSm (o : Nat) (g : Win → Rat) : List Win → Rat
  | [] => 0
  | t :: ts => (if t.sm = o then g t else 0) + sumSm o g ts

/-- n copies of k, added. -/
def nsum (k : Rat) : Nat → Rat
  | 0 => 0
  | n + 1 => k + nsum k n

theorem nsum_one_add (k : Rat) (c : Nat) : nsum k (1 + c) = k + nsum k c :=
  (congrArg (nsum k) (Nat.add_comm 1 c)).trans rfl

/-- Summing "k where the position holds m, else 0" over output o's triples
adds k once per element of o's window equal to m. -/
theorem sumSm_ties (x : List Rat) (Bi l o : Nat) (m k : Rat) : ∀ ws : List Win,
    sumSm o (fun t => if nth x (l * Bi + t.bg) = m then k else 0) ws = nsum k (countEq m (window x Bi l o ws))
  | [] => rfl
  | t :: ts => by
    show (if t.sm = o then (if nth x (l * Bi + t.bg) = m then k else 0) else 0) +
        sumSm o (fun t => if nth x (l * Bi + t.bg) = m then k else 0) ts =
      nsum k (countEq m (if t.sm = o then nth x (l * Bi + t.bg) :: window x Bi l o ts else window x Bi l o ts))
    rw [sumSm_ties x Bi l o m k ts]
    by_cases hs : t.sm = o
    · rw [if_pos hs, if_pos hs]
      show (if nth x (l * Bi + t.bg) = m then k else 0) + nsum k (countEq m (window x Bi l o ts)) =
        nsum k ((if nth x (l * Bi + t.bg) = m then 1 else 0) + countEq m (window x Bi l o ts))
      by_cases hv : nth x (l * Bi + t.bg) = m
      · rw [if_pos hv, if_pos hv]
        exact (nsum_one_add k (countEq m (window x Bi l o ts))).symm
      · rw [if_neg hv, if_neg hv, Rat.zero_add, Nat.zero_add]
    · rw [if_neg hs, if_neg hs, Rat.zero_add]

/-- The sum over output o's triples reads g only at those triples. -/
theorem sumSm_congr (o : Nat) (g g' : Win → Rat) (h : ∀ t : Win, t.sm = o → g t = g' t) :
    ∀ ws : List Win, sumSm o g ws = sumSm o g' ws
  | [] => rfl
  | t :: ts => by
    show (if t.sm = o then g t else 0) + sumSm o g ts = (if t.sm = o then g' t else 0) + sumSm o g' ts
    rw [sumSm_congr o g g' h ts]
    by_cases hs : t.sm = o
    · rw [if_pos hs, if_pos hs, h t hs]
    · rw [if_neg hs, if_neg hs]

/-- The tie weights of output o of slice l add up to c copies of 1/c, c
the number of window positions attaining the maximum. -/
theorem maxWeight_sum (q : Pool) (x : List Rat) (l o : Nat) :
    sumSm o (q.maxWeight x l) (winTaps q.axes) =
      nsum (1 / (countEq (q.winMax x l o) (window x (bigSize q.axes) l o (winTaps q.axes)) : Rat))
        (countEq (q.winMax x l o) (window x (bigSize q.axes) l o (winTaps q.axes))) := by
  rw [sumSm_congr o (q.maxWeight x l)
      (fun t => if nth x (l * bigSize q.axes + t.bg) = q.winMax x l o then
        1 / (countEq (q.winMax x l o) (window x (bigSize q.axes) l o (winTaps q.axes)) : Rat) else 0)
      (fun t ht => by
        show (if nth x (l * bigSize q.axes + t.bg) = q.winMax x l t.sm then
            1 / (countEq (q.winMax x l t.sm) (window x (bigSize q.axes) l t.sm (winTaps q.axes)) : Rat) else 0) =
          (if nth x (l * bigSize q.axes + t.bg) = q.winMax x l o then
            1 / (countEq (q.winMax x l o) (window x (bigSize q.axes) l o (winTaps q.axes)) : Rat) else 0)
        rw [ht])
      (winTaps q.axes)]
  exact sumSm_ties x (bigSize q.axes) l o (q.winMax x l o) _ (winTaps q.axes)

/-- The left fold of `maxS` is attained: it equals an element of the list
it folds (with its start). -/
theorem foldl_maxS_attained : ∀ (bs : List Rat) (a : Rat), 1 ≤ countEq (bs.foldl maxS a) (a :: bs)
  | [], a => by
    have h : (if a = a then 1 else 0) = 1 := if_pos (rfl : a = a)
    show 1 ≤ (if a = a then 1 else 0) + countEq a []
    omega
  | b :: bs, a => by
    have ih := foldl_maxS_attained bs (maxS a b)
    show 1 ≤ countEq (bs.foldl maxS (maxS a b)) (a :: b :: bs)
    by_cases hab : a < b
    · have hm : maxS a b = b := if_pos hab
      rw [hm] at ih ⊢
      have ih' : 1 ≤ (if b = bs.foldl maxS b then 1 else 0) + countEq (bs.foldl maxS b) bs := ih
      show 1 ≤ (if a = bs.foldl maxS b then 1 else 0) +
        ((if b = bs.foldl maxS b then 1 else 0) + countEq (bs.foldl maxS b) bs)
      omega
    · have hm : maxS a b = a := if_neg hab
      rw [hm] at ih ⊢
      have ih' : 1 ≤ (if a = bs.foldl maxS a then 1 else 0) + countEq (bs.foldl maxS a) bs := ih
      show 1 ≤ (if a = bs.foldl maxS a then 1 else 0) +
        ((if b = bs.foldl maxS a then 1 else 0) + countEq (bs.foldl maxS a) bs)
      omega

/-- The maximum of a non-empty list is one of its elements. -/
theorem maxL_attained : ∀ w : List Rat, w ≠ [] → 1 ≤ countEq (maxL w) w
  | [], h => (h rfl).elim
  | a :: as, _ => foldl_maxS_attained as a

/-- ↑(n + 1) = ↑n + 1 in `Rat`: core's `NatCast Rat` is `Rat.ofInt` of
the `Int` cast, so this is `Int.natCast_add` then `Rat.intCast_add`. -/
theorem natRat_succ (n : Nat) : ((n + 1 : Nat) : Rat) = (n : Rat) + 1 :=
  (congrArg (fun i : Int => (i : Rat)) (Int.natCast_add n 1)).trans (Rat.intCast_add (n : Int) ((1 : Nat) : Int))

theorem nsum_eq_mul (k : Rat) : ∀ n : Nat, nsum k n = (n : Rat) * k
  | 0 => (Rat.zero_mul k).symm
  | n + 1 => by
    show k + nsum k n = ((n + 1 : Nat) : Rat) * k
    rw [nsum_eq_mul k n, natRat_succ n, Rat.add_mul, Rat.one_mul, Rat.add_comm k ((n : Rat) * k)]

/-- A positive count is a non-zero rational (its numerator is the count). -/
theorem natRat_ne_zero (c : Nat) (hc : 1 ≤ c) : (c : Rat) ≠ 0 := fun h => by
  have h1 : (c : Rat).num = (c : Int) := rfl
  have h2 : (c : Rat).num = 0 := (congrArg Rat.num h).trans Rat.zero_num
  omega

/-- c copies of 1/c add up to 1 (c ≥ 1). -/
theorem nsum_inv (c : Nat) (hc : 1 ≤ c) : nsum (1 / (c : Rat)) c = 1 := by
  rw [nsum_eq_mul, Rat.div_def, Rat.one_mul]
  exact Rat.mul_inv_cancel (c : Rat) (natRat_ne_zero c hc)

/-- **The tie weights sum to 1**: over every output o of every slice l
whose window has an element, the max pools' tie weights (1/t on each of
the t positions attaining the maximum) add up to exactly 1. -/
theorem maxWeight_sum_one (q : Pool) (x : List Rat) (l o : Nat)
    (h : window x (bigSize q.axes) l o (winTaps q.axes) ≠ []) :
    sumSm o (q.maxWeight x l) (winTaps q.axes) = 1 := by
  rw [maxWeight_sum q x l o]
  exact nsum_inv _ (maxL_attained _ h)

/-! ## The max pools between ties: exact linearity along a segment

A window's maximum is `maxL` of its values (the pool's forward, output by
output: `Pool.winMax`). `maxL_along_linear` says that along x + t·v, for
every t at which one position p of the window is a maximum both at x and
at x + t·v, the output moves exactly by t times v's value at p: the max
pool is linear on every segment on which the attaining position does not
change — between ties, near an x whose window maximum is unique, the
derivative is the tangent at the argmax, which is the JVP's weight 1 on
it and 0 elsewhere (`maxWeight` with one maximum). -/

theorem maxS_ge_left (a b : Rat) : a ≤ maxS a b := by
  by_cases h : a < b
  · have hm : maxS a b = b := if_pos h
    exact Eq.mpr (congrArg (fun m => a ≤ m) hm) (Rat.le_of_lt h)
  · have hm : maxS a b = a := if_neg h
    exact Eq.mpr (congrArg (fun m => a ≤ m) hm) Rat.le_refl

theorem maxS_ge_right (a b : Rat) : b ≤ maxS a b := by
  by_cases h : a < b
  · have hm : maxS a b = b := if_pos h
    exact Eq.mpr (congrArg (fun m => b ≤ m) hm) Rat.le_refl
  · have hm : maxS a b = a := if_neg h
    exact Eq.mpr (congrArg (fun m => b ≤ m) hm) (Rat.not_lt.mp h)

/-- The fold is at least its start. -/
theorem foldl_maxS_ge_start : ∀ (bs : List Rat) (a : Rat), a ≤ bs.foldl maxS a
  | [], _ => Rat.le_refl
  | b :: bs, a => Rat.le_trans (maxS_ge_left a b) (foldl_maxS_ge_start bs (maxS a b))

/-- The fold is at least every element folded. -/
theorem foldl_maxS_ge : ∀ (bs : List Rat) (a : Rat) (i : Nat), i < bs.length → nth bs i ≤ bs.foldl maxS a
  | [], _, _, h => absurd h (Nat.not_lt_zero _)
  | b :: bs, a, 0, _ => Rat.le_trans (maxS_ge_right a b) (foldl_maxS_ge_start bs (maxS a b))
  | _ :: bs, a, i + 1, h => foldl_maxS_ge bs _ i (Nat.lt_of_succ_lt_succ h)

/-- The fold is one of the values it folds (at a position of the list
with its start). -/
theorem foldl_maxS_mem : ∀ (bs : List Rat) (a : Rat),
    ∃ q : Nat, q < bs.length + 1 ∧ bs.foldl maxS a = nth (a :: bs) q
  | [], _ => ⟨0, Nat.succ_pos 0, rfl⟩
  | b :: bs, a => by
    obtain ⟨q, hq, he⟩ := foldl_maxS_mem bs (maxS a b)
    cases q with
    | zero =>
      by_cases h : a < b
      · have hm : maxS a b = b := if_pos h
        exact ⟨1, by show 1 < bs.length + 1 + 1; omega, he.trans hm⟩
      · have hm : maxS a b = a := if_neg h
        exact ⟨0, by show 0 < bs.length + 1 + 1; omega, he.trans hm⟩
    | succ q =>
      exact ⟨q + 2, by show q + 2 < bs.length + 1 + 1; omega, he⟩

/-- A position at which every element is at most its value holds the maximum. -/
theorem maxL_eq_of_ge : ∀ (l : List Rat) (p : Nat), p < l.length →
    (∀ i : Nat, i < l.length → nth l i ≤ nth l p) → maxL l = nth l p
  | [], _, hp, _ => absurd hp (Nat.not_lt_zero _)
  | a :: as, p, hp, hge => by
    show as.foldl maxS a = nth (a :: as) p
    obtain ⟨q, hq, he⟩ := foldl_maxS_mem as a
    have hup : as.foldl maxS a ≤ nth (a :: as) p := by
      rw [he]
      exact hge q hq
    have hlo : nth (a :: as) p ≤ as.foldl maxS a := by
      cases p with
      | zero => exact foldl_maxS_ge_start as a
      | succ p => exact foldl_maxS_ge as a p (Nat.lt_of_succ_lt_succ hp)
    exact Rat.le_antisymm hup hlo

/-- **Exact linearity between ties**: if position p of a window w is a
maximum at w and at w + t·v (lists of one length), the maximum moves by
exactly t·v_p. -/
theorem maxL_along_linear (t : Rat) (w v : List Rat) (h : w.length = v.length) (p : Nat) (hp : p < w.length)
    (hw : ∀ i : Nat, i < w.length → nth w i ≤ nth w p)
    (hwt : ∀ i : Nat, i < w.length → nth (along t w v) i ≤ nth (along t w v) p) :
    maxL (along t w v) = maxL w + t * nth v p := by
  have hl : (along t w v).length = w.length := length_along t w v h
  rw [maxL_eq_of_ge (along t w v) p (Nat.lt_of_lt_of_eq hp hl.symm) (fun i hi => hwt i (Nat.lt_of_lt_of_eq hi hl)),
    maxL_eq_of_ge w p hp hw, gather_along.nth_along t w v h p]

/-- An instance: x = [2, 2, 1] under kernel 2, stride 1: output 0's window
[2, 2] ties (1/2 + 1/2), output 1's window [2, 1] does not (1 + 0). -/
theorem maxWeight_sum_instance :
    sumSm 0 ((poolK2 3).maxWeight [2, 2, 1] 0) (winTaps (poolK2 3).axes) = 1 ∧
      sumSm 1 ((poolK2 3).maxWeight [2, 2, 1] 0) (winTaps (poolK2 3).axes) = 1 := by
  decide +kernel


/-! ## The max pools between ties, through `Pool.maxFwd`'s own indexing

`maxL_along_linear` is per window list. `Pool.maxFwd` computes output p
(p < outSize) as `winMax` of slice l = p / S and output position o = p % S
(S = smallSize axes), i.e. `maxL` of the window `window x Bi l o (winTaps
axes)` that output reads (`Pool.win`, `maxFwd_nth`). The window of x + t·v
is the window of x plus t times the window of v (`window_along`), so
`maxFwd_along_linear` states the linearity at output p of the pool's own
forward: if position k of output p's window attains the maximum at x and
at x + t·v, output p moves by exactly t times v's value at that position. -/

/-- Entry k of `(uptoFrom j n).map f` (rationals) is f (j + k). -/
theorem nth_uptoFrom_map (f : Nat → Rat) : ∀ (j n k : Nat), k < n → nth ((uptoFrom j n).map f) k = f (j + k)
  | _, 0, _, hk => absurd hk (Nat.not_lt_zero _)
  | j, _ + 1, 0, _ => by
    show f j = f (j + 0)
    rw [Nat.add_zero]
  | j, n + 1, k + 1, hk => by
    show nth ((uptoFrom (j + 1) n).map f) k = f (j + (k + 1))
    rw [nth_uptoFrom_map f (j + 1) n k (Nat.lt_of_succ_lt_succ hk)]
    first
      | rw [Nat.add_assoc, Nat.add_comm 1 k]
      | (congr 1; omega)

/-- Entry k of `(upto N).map f` (rationals) is f k. -/
theorem nth_upto_map (f : Nat → Rat) (N k : Nat) (hk : k < N) : nth ((upto N).map f) k = f k := by
  show nth ((uptoFrom 0 N).map f) k = f k
  rw [nth_uptoFrom_map f 0 N k hk, Nat.zero_add]

/-- The window of x + t·v is the window of x plus t times the window of v. -/
theorem window_along (t : Rat) (x v : List Rat) (h : x.length = v.length) (Bi l o : Nat) :
    ∀ ts : List Win, window (along t x v) Bi l o ts = along t (window x Bi l o ts) (window v Bi l o ts)
  | [] => rfl
  | w :: ws => by
    show (if w.sm = o then nth (along t x v) (l * Bi + w.bg) :: window (along t x v) Bi l o ws
        else window (along t x v) Bi l o ws) =
      along t (if w.sm = o then nth x (l * Bi + w.bg) :: window x Bi l o ws else window x Bi l o ws)
        (if w.sm = o then nth v (l * Bi + w.bg) :: window v Bi l o ws else window v Bi l o ws)
    by_cases hs : w.sm = o
    · rw [if_pos hs, if_pos hs, if_pos hs]
      show nth (along t x v) (l * Bi + w.bg) :: window (along t x v) Bi l o ws =
        (nth x (l * Bi + w.bg) + t * nth v (l * Bi + w.bg)) :: along t (window x Bi l o ws) (window v Bi l o ws)
      rw [gather_along.nth_along t x v h (l * Bi + w.bg), window_along t x v h Bi l o ws]
    · rw [if_neg hs, if_neg hs, if_neg hs]
      exact window_along t x v h Bi l o ws

/-- The windows of two inputs have one length (the spine depends only on
the relation and the output position). -/
theorem length_window (x v : List Rat) (Bi l o : Nat) :
    ∀ ts : List Win, (window x Bi l o ts).length = (window v Bi l o ts).length
  | [] => rfl
  | w :: ws => by
    show (if w.sm = o then nth x (l * Bi + w.bg) :: window x Bi l o ws else window x Bi l o ws).length =
      (if w.sm = o then nth v (l * Bi + w.bg) :: window v Bi l o ws else window v Bi l o ws).length
    by_cases hs : w.sm = o
    · rw [if_pos hs, if_pos hs]
      show (window x Bi l o ws).length + 1 = (window v Bi l o ws).length + 1
      rw [length_window x v Bi l o ws]
    · rw [if_neg hs, if_neg hs]
      exact length_window x v Bi l o ws

namespace Pool
/-- The window output p of `maxFwd` reads: slice p / S, output position
p % S (S = smallSize axes), over the pool's relation. -/
def win (q : Pool) (x : List Rat) (p : Nat) : List Rat :=
  window x (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)
end Pool

/-- Output p of the max pool's forward is the maximum of the window it reads. -/
theorem maxFwd_nth (q : Pool) (x : List Rat) (p : Nat) (hp : p < q.outSize) :
    nth (q.maxFwd x) p = maxL (q.win x p) := by
  show nth ((upto q.outSize).map (fun p => q.winMax x (p / smallSize q.axes) (p % smallSize q.axes))) p =
    maxL (q.win x p)
  rw [nth_upto_map (fun p => q.winMax x (p / smallSize q.axes) (p % smallSize q.axes)) q.outSize p hp]
  rfl

/-- **Max-pool linearity between ties, at the pool's own forward**: for
every output p < outSize of `Pool.maxFwd` and every position k of the
window output p reads, if k attains that window's maximum at x and at
x + t·v (x and v of one length), then output p of `maxFwd (x + t·v)` is
output p of `maxFwd x` plus t times v's value at k — the JVP's weight 1 on
the argmax when it is unique. -/
theorem maxFwd_along_linear (q : Pool) (t : Rat) (x v : List Rat) (h : x.length = v.length) (p : Nat)
    (hp : p < q.outSize) (k : Nat) (hk : k < (q.win x p).length)
    (hw : ∀ i : Nat, i < (q.win x p).length → nth (q.win x p) i ≤ nth (q.win x p) k)
    (hwt : ∀ i : Nat, i < (q.win x p).length → nth (q.win (along t x v) p) i ≤ nth (q.win (along t x v) p) k) :
    nth (q.maxFwd (along t x v)) p = nth (q.maxFwd x) p + t * nth (q.win v p) k := by
  have hwin : q.win (along t x v) p = along t (q.win x p) (q.win v p) :=
    window_along t x v h (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)
  have hl : (q.win x p).length = (q.win v p).length :=
    length_window x v (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)
  have hwt' : ∀ i : Nat, i < (q.win x p).length →
      nth (along t (q.win x p) (q.win v p)) i ≤ nth (along t (q.win x p) (q.win v p)) k := by
    intro i hi
    have hi' := hwt i hi
    rw [hwin] at hi'
    exact hi'
  rw [maxFwd_nth q (along t x v) p hp, maxFwd_nth q x p hp, hwin]
  exact maxL_along_linear t (q.win x p) (q.win v p) hl k hk hw hwt'

end Tlcheck
