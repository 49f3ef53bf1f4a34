import Tlcheck.Spec
import Tlcheck.Deriv
import Tlcheck.Taylor
import Tlcheck.Window
import Tlcheck.Prod

/-!
# The max pools at a unique maximum: the JVP is the derivative

`Window.lean`'s `maxFwd_along_linear` says that output p of `Pool.maxFwd`
moves by t times v's value at a window position k **if** k attains the
window's maximum both at x and at x + t·v. This module removes that
hypothesis at a window whose maximum is unique and ties the result to the
pool's own JVP `Pool.maxJvp` (the taps of `Pool.maxWeight`, the tie rule):

* `unique_max_step`: if position k of a window w is its unique maximum
  (every other position strictly below it), then for every t with
  |t| < `winδ w u k n` position k is still a maximum of w + t·u. The bound
  is explicit: the minimum over the other positions i of
  (w_k − w_i) / (|u_i − u_k| + 1) (`gapδ`), and 1 when there are none
  (`winδ`); `winδ_pos` says it is positive. The step is `gap_step`:
  |t| < g / (|d| + 1) with g > 0 gives t·d < g, so
  w_i + t·u_i < w_k + t·u_k (`along_step`).
* `maxJvp_unique`: at such a window, output p of the JVP is v's value at
  the argmax: the tie weights are 1 on k (the count of the maximum is 1,
  `countEq_unique`) and 0 elsewhere, and of the JVP's taps only output p's
  slice p / S contributes (`tapAt_forFrom`, `tapAt_slice_other`,
  `tapAt_slice_self`, `dot_ind_one`).
* **`max_pool_unique_deriv`**: the two together, in the form of issue 27:

      ∃ δ > 0, ∀ t, |t| < δ →
        (maxFwd (x + t·v))_p = (maxFwd x)_p + t · (maxJvp x v)_p,

  exact local linearity with the JVP as the slope, for every output p
  whose window has a unique maximum — whatever the other windows do.
  `max_pool_prim_unique_deriv` and `max_pool_nd_unique_deriv` state it for
  the constructors `Prim.max_pool` and `Prim.max_pool_nd`; and
  `max_pool_all_unique_deriv` for the whole output when every window has a
  unique maximum (one δ, `poolδ`, the minimum over the outputs; list
  equality by `nth_ext`).
  `|t|` is `absS t` (`Spec.lean`: `if t < 0 then -t else t`).

A wrong JVP makes it false. Planted counter-instance: were the tie weight
1/|window| on every position (the average pool's slope) instead of 1 on the
argmax, the window x = [1, 3] (kernel 2, one output), v = [1, 0] would have
JVP 1/2, while maxFwd (x + t·v) = 3 = 3 + t·0 for every |t| < 1 — so the
identity at t = 1/2 reads 3 = 3 + 1/4, false. Were the weight 1 on the
first position of the window, the same instance gives slope 1: 3 = 3 + 1/2,
false. `max_pool_unique_instance` evaluates the true identity on
(poolK2 5) by the kernel, and the Go mirror
`leanbridge/emit/maxderiv_test.go` checks the theorem's statement, with the
bound `winδ` transcribed, on every emitted max-pool case and on random
pools, and catches both planted slopes.

Proof style: explicit rewrite chains and term proofs; the order facts are
derived here from core's `Rat.not_le`, `Rat.not_lt`, `Rat.le_trans`,
`Rat.le_of_lt`, `Rat.lt_of_le_of_ne`,
`Rat.lt_iff_sub_pos`, `Rat.le_iff_sub_nonneg`, `Rat.mul_lt_mul_of_pos_left`,
`Rat.mul_lt_mul_of_pos_right`, `Rat.mul_pos`, `Rat.mul_inv_cancel` (the list
in `lean/README.md`), no `grind`, no `simp`.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## Order facts on `Rat` -/

/-- −(−a) = a, by cancelling −a. -/
theorem rneg_neg (a : Rat) : -(-a) = a :=
  Rat.add_right_cancel (-a) ((Rat.neg_add_cancel (-a)).trans (Rat.add_neg_cancel a).symm)

/-- a < b ≤ c gives a < c. -/
theorem rlt_of_lt_of_le {a b c : Rat} (hab : a < b) (hbc : b ≤ c) : a < c :=
  Rat.not_le.mp (fun hca : c ≤ a => Rat.not_le.mpr hab (Rat.le_trans hbc hca))

/-- a ≤ b < c gives a < c. -/
theorem rlt_of_le_of_lt {a b c : Rat} (hab : a ≤ b) (hbc : b < c) : a < c :=
  Rat.not_le.mp (fun hca : c ≤ a => Rat.not_le.mpr hbc (Rat.le_trans hca hab))

/-- (c + b) − (c + a) = b − a. -/
theorem rsub_add_add (c a b : Rat) : c + b - (c + a) = b - a := by
  rw [Rat.sub_eq_add_neg (c + b) (c + a), Rat.sub_eq_add_neg b a, neg_add' c a, Rat.add_comm c b,
    Rat.add_assoc b c (-c + -a), ← Rat.add_assoc c (-c) (-a), Rat.add_neg_cancel c, Rat.zero_add (-a)]

/-- a ≤ b gives c + a ≤ c + b (through `Rat.le_iff_sub_nonneg`). -/
theorem radd_le_add_left {a b : Rat} (h : a ≤ b) (c : Rat) : c + a ≤ c + b := by
  apply (Rat.le_iff_sub_nonneg (c + a) (c + b)).mpr
  rw [rsub_add_add c a b]
  exact (Rat.le_iff_sub_nonneg a b).mp h

/-- x < y gives z + x < z + y (through `Rat.lt_iff_sub_pos`). -/
theorem radd_lt_add_left {x y : Rat} (h : x < y) (z : Rat) : z + x < z + y := by
  apply (Rat.lt_iff_sub_pos (z + x) (z + y)).mpr
  rw [rsub_add_add z x y]
  exact (Rat.lt_iff_sub_pos x y).mp h

/-- a < 0 gives 0 < −a. -/
theorem rneg_pos {a : Rat} (h : a < 0) : 0 < -a := by
  have h1 : 0 < 0 - a := (Rat.lt_iff_sub_pos a 0).mp h
  rw [Rat.sub_eq_add_neg 0 a, Rat.zero_add (-a)] at h1
  exact h1

/-- 0 ≤ a gives −a ≤ 0. -/
theorem rneg_nonpos {a : Rat} (h : 0 ≤ a) : -a ≤ 0 := by
  apply (Rat.le_iff_sub_nonneg (-a) 0).mpr
  rw [Rat.sub_eq_add_neg 0 (-a), Rat.zero_add (-(-a)), rneg_neg a]
  exact h

/-- 0 < 1 in `Rat` (a closed decidable fact). -/
theorem rzero_lt_one : (0 : Rat) < 1 := by
  first
    | decide
    | decide +kernel

/-- The inverse of a positive rational is positive: were c⁻¹ ≤ 0, then
c·c⁻¹ = 1 would be 0 (c⁻¹ = 0) or below c·0 = 0 (c⁻¹ < 0). -/
theorem rinv_pos {c : Rat} (hc : 0 < c) : 0 < c⁻¹ := by
  by_cases h : 0 < c⁻¹
  · exact h
  · have hle : c⁻¹ ≤ 0 := Rat.not_lt.mp h
    have h1 : c * c⁻¹ = 1 := Rat.mul_inv_cancel c (Rat.ne_of_gt hc)
    by_cases h0 : c⁻¹ = 0
    · rw [h0, Rat.mul_zero c] at h1
      exact absurd h1 (by first | decide | decide +kernel)
    · have h2 : c * c⁻¹ < c * 0 := Rat.mul_lt_mul_of_pos_left (Rat.lt_of_le_of_ne hle h0) hc
      rw [h1, Rat.mul_zero c] at h2
      exact absurd h2 (Rat.not_lt.mpr (Rat.le_of_lt rzero_lt_one))

/-- g / m is positive for positive g and m. -/
theorem rdiv_pos {g m : Rat} (hg : 0 < g) (hm : 0 < m) : 0 < g / m := by
  rw [Rat.div_def g m]
  exact Rat.mul_pos hg (rinv_pos hm)

/-- |a| ≥ 0 (`absS`, the project's |·|). -/
theorem absS_nonneg (d : Rat) : 0 ≤ absS d := by
  by_cases hd : d < 0
  · have ha : absS d = -d := if_pos hd
    exact Eq.mpr (congrArg (fun m => 0 ≤ m) ha) (Rat.le_of_lt (rneg_pos hd))
  · have ha : absS d = d := if_neg hd
    exact Eq.mpr (congrArg (fun m => 0 ≤ m) ha) (Rat.not_lt.mp hd)

/-- |a| + 1 > 0. -/
theorem abs_add_one_pos (d : Rat) : 0 < absS d + 1 := by
  have h1 : (1 : Rat) + 0 ≤ 1 + absS d := radd_le_add_left (absS_nonneg d) 1
  rw [Rat.add_zero 1, Rat.add_comm 1 (absS d)] at h1
  exact rlt_of_lt_of_le rzero_lt_one h1

/-- |t| < δ gives t < δ and −t < δ. -/
theorem abs_lt_both {t δ : Rat} (h : absS t < δ) : t < δ ∧ -t < δ := by
  by_cases ht : t < 0
  · have ha : absS t = -t := if_pos ht
    rw [ha] at h
    exact ⟨rlt_of_le_of_lt (Rat.le_of_lt ht) (rlt_of_le_of_lt (Rat.le_of_lt (rneg_pos ht)) h), h⟩
  · have ha : absS t = t := if_neg ht
    rw [ha] at h
    exact ⟨h, rlt_of_le_of_lt (Rat.le_trans (rneg_nonpos (Rat.not_lt.mp ht)) (Rat.not_lt.mp ht)) h⟩

/-! ## One position against the maximum -/

/-- s < δ with 0 < e, 0 ≤ δ and δ·(e + 1) = g gives s·e < g:
s·e < δ·e ≤ δ·e + δ = δ·(e + 1). -/
theorem mul_lt_of_lt_step {s e δ g : Rat} (hs : s < δ) (he : 0 < e) (hδ : 0 ≤ δ) (hg : δ * (e + 1) = g) :
    s * e < g := by
  have h1 : s * e < δ * e := Rat.mul_lt_mul_of_pos_right hs he
  have h2 : δ * e + 0 ≤ δ * e + δ := radd_le_add_left hδ (δ * e)
  rw [Rat.add_zero (δ * e)] at h2
  rw [← hg, Rat.mul_add δ e 1, Rat.mul_one δ]
  exact rlt_of_lt_of_le h1 h2

/-- **The step bound**: with g > 0 and δ = g / (|d| + 1), every t with
t < δ and −t < δ has t·d < g (for d < 0 through (−t)·(−d) = t·d). -/
theorem gap_step {g d t : Rat} (hg : 0 < g) (ht : t < g / (absS d + 1)) (hnt : -t < g / (absS d + 1)) :
    t * d < g := by
  have hm : 0 < absS d + 1 := abs_add_one_pos d
  have hδ : 0 ≤ g / (absS d + 1) := Rat.le_of_lt (rdiv_pos hg hm)
  have hδm : g / (absS d + 1) * (absS d + 1) = g := rdiv_mul_cancel g (absS d + 1) (Rat.ne_of_gt hm)
  by_cases hd : d < 0
  · have ha : absS d = -d := if_pos hd
    rw [ha] at hδ hδm hnt
    have h1 : -t * -d < g := mul_lt_of_lt_step hnt (rneg_pos hd) hδ hδm
    rw [Rat.neg_mul t (-d), Rat.mul_neg t d, rneg_neg (t * d)] at h1
    exact h1
  · have ha : absS d = d := if_neg hd
    rw [ha] at hδ hδm ht
    by_cases hz : d = 0
    · rw [hz, Rat.mul_zero t]
      exact hg
    · exact mul_lt_of_lt_step ht (Rat.lt_of_le_of_ne (Rat.not_lt.mp hd) (fun h => hz h.symm)) hδ hδm

/-- The rearrangement: t·(c − e) < b − a gives a + t·c < b + t·e (add
a + t·e to both sides). -/
theorem along_step {a b c e t : Rat} (h : t * (c - e) < b - a) : a + t * c < b + t * e := by
  have h1 : a + t * e + t * (c - e) < a + t * e + (b - a) := radd_lt_add_left h (a + t * e)
  have hl : a + t * e + t * (c - e) = a + t * c := by
    rw [Rat.add_assoc a (t * e) (t * (c - e)), ← Rat.mul_add t e (c - e), Rat.sub_eq_add_neg c e,
      Rat.add_left_comm e c (-e), Rat.add_neg_cancel e, Rat.add_zero c]
  have hr : a + t * e + (b - a) = b + t * e := by
    rw [Rat.sub_eq_add_neg b a, Rat.add_comm (a + t * e) (b + -a), Rat.add_assoc b (-a) (a + t * e),
      ← Rat.add_assoc (-a) a (t * e), Rat.neg_add_cancel a, Rat.zero_add (t * e)]
  rw [hl, hr] at h1
  exact h1

/-! ## The bound of a window -/

/-- min(a, b). -/
def rmin (a b : Rat) : Rat := if a < b then a else b

theorem rmin_pos {a b : Rat} (ha : 0 < a) (hb : 0 < b) : 0 < rmin a b := by
  by_cases h : a < b
  · have e : rmin a b = a := if_pos h
    exact Eq.mpr (congrArg (fun m => 0 < m) e) ha
  · have e : rmin a b = b := if_neg h
    exact Eq.mpr (congrArg (fun m => 0 < m) e) hb

theorem rmin_le_left (a b : Rat) : rmin a b ≤ a := by
  by_cases h : a < b
  · have e : rmin a b = a := if_pos h
    exact Eq.mpr (congrArg (fun m => m ≤ a) e) Rat.le_refl
  · have e : rmin a b = b := if_neg h
    exact Eq.mpr (congrArg (fun m => m ≤ a) e) (Rat.not_lt.mp h)

theorem rmin_le_right (a b : Rat) : rmin a b ≤ b := by
  by_cases h : a < b
  · have e : rmin a b = a := if_pos h
    exact Eq.mpr (congrArg (fun m => m ≤ b) e) (Rat.le_of_lt h)
  · have e : rmin a b = b := if_neg h
    exact Eq.mpr (congrArg (fun m => m ≤ b) e) Rat.le_refl

/-- The step of a position of value a (tangent c) against the maximum b
(tangent e): (b − a) / (|c − e| + 1) when a < b, else 1. -/
def gapδ (b a c e : Rat) : Rat := if a < b then (b - a) / (absS (c - e) + 1) else 1

/-- The bound of positions 0, …, n − 1 of w against position k: the
minimum of their steps (1 for n = 0). -/
def winδ (w u : List Rat) (k : Nat) : Nat → Rat
  | 0 => 1
  | i + 1 => rmin (gapδ (nth w k) (nth w i) (nth u i) (nth u k)) (winδ w u k i)

theorem gapδ_pos (b a c e : Rat) : 0 < gapδ b a c e := by
  by_cases h : a < b
  · have e' : gapδ b a c e = (b - a) / (absS (c - e) + 1) := if_pos h
    exact Eq.mpr (congrArg (fun m => 0 < m) e')
      (rdiv_pos ((Rat.lt_iff_sub_pos a b).mp h) (abs_add_one_pos (c - e)))
  · have e' : gapδ b a c e = 1 := if_neg h
    exact Eq.mpr (congrArg (fun m => 0 < m) e') rzero_lt_one

theorem winδ_pos (w u : List Rat) (k : Nat) : ∀ n : Nat, 0 < winδ w u k n
  | 0 => rzero_lt_one
  | i + 1 => rmin_pos (gapδ_pos (nth w k) (nth w i) (nth u i) (nth u k)) (winδ_pos w u k i)

theorem winδ_le (w u : List Rat) (k : Nat) : ∀ (n i : Nat), i < n →
    winδ w u k n ≤ gapδ (nth w k) (nth w i) (nth u i) (nth u k)
  | 0, _, h => absurd h (Nat.not_lt_zero _)
  | n + 1, i, h => by
    show rmin (gapδ (nth w k) (nth w n) (nth u n) (nth u k)) (winδ w u k n) ≤
      gapδ (nth w k) (nth w i) (nth u i) (nth u k)
    by_cases hi : i = n
    · subst hi
      exact rmin_le_left _ _
    · exact Rat.le_trans (rmin_le_right _ _) (winδ_le w u k n i (by omega))

/-- A unique maximum at k is a maximum. -/
theorem uniq_ge (w : List Rat) (k : Nat)
    (huniq : ∀ i : Nat, i < w.length → i ≠ k → nth w i < nth w k) :
    ∀ i : Nat, i < w.length → nth w i ≤ nth w k := fun i hi => by
  by_cases hik : i = k
  · subst hik
    exact Rat.le_refl
  · exact Rat.le_of_lt (huniq i hi hik)

/-- **A unique maximum stays a maximum for |t| < `winδ`**: if position k of
w is its unique maximum, k is a maximum of w + t·u (w, u of one length)
for every t with |t| < winδ w u k |w|. -/
theorem unique_max_step (w u : List Rat) (hl : w.length = u.length) (k : Nat)
    (huniq : ∀ i : Nat, i < w.length → i ≠ k → nth w i < nth w k) (t : Rat)
    (ht : absS t < winδ w u k w.length) :
    ∀ i : Nat, i < w.length → nth (along t w u) i ≤ nth (along t w u) k := by
  intro i hi
  rw [gather_along.nth_along t w u hl i, gather_along.nth_along t w u hl k]
  by_cases hik : i = k
  · subst hik
    exact Rat.le_refl
  · have hlt : nth w i < nth w k := huniq i hi hik
    have hb : t < winδ w u k w.length ∧ -t < winδ w u k w.length := abs_lt_both ht
    have hle := winδ_le w u k w.length i hi
    have hg : gapδ (nth w k) (nth w i) (nth u i) (nth u k) =
        (nth w k - nth w i) / (absS (nth u i - nth u k) + 1) := if_pos hlt
    rw [hg] at hle
    have hstep : t * (nth u i - nth u k) < nth w k - nth w i :=
      gap_step ((Rat.lt_iff_sub_pos (nth w i) (nth w k)).mp hlt) (rlt_of_lt_of_le hb.1 hle)
        (rlt_of_lt_of_le hb.2 hle)
    exact Rat.le_of_lt (along_step hstep)

/-! ## The JVP at a unique maximum -/

/-- Entries all different from m: the indicator of m weighs nothing. -/
theorem dot_ind_zero (m W : Rat) : ∀ (w u : List Rat), (∀ i : Nat, i < w.length → nth w i ≠ m) →
    dot (pmap (fun r => if r = m then W else 0) w) u = 0
  | [], _, _ => rfl
  | _ :: _, [], _ => rfl
  | a :: as, b :: bs, hne => by
    have h0 : a ≠ m := hne 0 (Nat.succ_pos _)
    show (if a = m then W else 0) * b + dot (pmap (fun r => if r = m then W else 0) as) bs = 0
    rw [if_neg h0, Rat.zero_mul b,
      dot_ind_zero m W as bs (fun i hi => hne (i + 1) (Nat.succ_lt_succ hi)), Rat.add_zero 0]

/-- m at position k only: the indicator of m (weight W) reads u at k. -/
theorem dot_ind_one (m W : Rat) : ∀ (w u : List Rat) (k : Nat), k < w.length → nth w k = m →
    (∀ i : Nat, i < w.length → i ≠ k → nth w i ≠ m) →
    dot (pmap (fun r => if r = m then W else 0) w) u = W * nth u k
  | [], _, _, hk, _, _ => absurd hk (Nat.not_lt_zero _)
  | _ :: _, [], _, _, _, _ => (Rat.mul_zero W).symm
  | a :: as, b :: bs, 0, _, hm, hne => by
    have ha : a = m := hm
    show (if a = m then W else 0) * b + dot (pmap (fun r => if r = m then W else 0) as) bs = W * b
    rw [if_pos ha, dot_ind_zero m W as bs (fun i hi => hne (i + 1) (Nat.succ_lt_succ hi) (Nat.succ_ne_zero i)),
      Rat.add_zero (W * b)]
  | a :: as, b :: bs, k + 1, hk, hm, hne => by
    have h0 : a ≠ m := hne 0 (Nat.succ_pos _) (fun h => Nat.succ_ne_zero k h.symm)
    show (if a = m then W else 0) * b + dot (pmap (fun r => if r = m then W else 0) as) bs = W * nth bs k
    rw [if_neg h0, Rat.zero_mul b, Rat.zero_add]
    exact dot_ind_one m W as bs k (Nat.lt_of_succ_lt_succ hk) hm
      (fun i hi hik => hne (i + 1) (Nat.succ_lt_succ hi) (fun h => hik (Nat.succ.inj h)))

/-- No entry equal to m: m is counted 0 times. -/
theorem countEq_zero (m : Rat) : ∀ w : List Rat, (∀ i : Nat, i < w.length → nth w i ≠ m) → countEq m w = 0
  | [], _ => rfl
  | a :: as, hne => by
    have h0 : a ≠ m := hne 0 (Nat.succ_pos _)
    show (if a = m then 1 else 0) + countEq m as = 0
    rw [if_neg h0, countEq_zero m as (fun i hi => hne (i + 1) (Nat.succ_lt_succ hi)), Nat.zero_add]

/-- m at position k only: m is counted once. -/
theorem countEq_unique (m : Rat) : ∀ (w : List Rat) (k : Nat), k < w.length → nth w k = m →
    (∀ i : Nat, i < w.length → i ≠ k → nth w i ≠ m) → countEq m w = 1
  | [], _, hk, _, _ => absurd hk (Nat.not_lt_zero _)
  | a :: as, 0, _, hm, hne => by
    have ha : a = m := hm
    show (if a = m then 1 else 0) + countEq m as = 1
    rw [if_pos ha, countEq_zero m as (fun i hi => hne (i + 1) (Nat.succ_lt_succ hi) (Nat.succ_ne_zero i)),
      Nat.add_zero]
  | a :: as, k + 1, hk, hm, hne => by
    have h0 : a ≠ m := hne 0 (Nat.succ_pos _) (fun h => Nat.succ_ne_zero k h.symm)
    show (if a = m then 1 else 0) + countEq m as = 1
    rw [if_neg h0, Nat.zero_add]
    exact countEq_unique m as k (Nat.lt_of_succ_lt_succ hk) hm
      (fun i hi hik => hne (i + 1) (Nat.succ_lt_succ hi) (fun h => hik (Nat.succ.inj h)))

/-- 1/1 · c = c. -/
theorem one_div_one_mul (c : Rat) : 1 / ((1 : Nat) : Rat) * c = c := by
  have h1 : ((1 : Nat) : Rat) = 1 := rfl
  have hinv : (1 : Rat)⁻¹ = 1 :=
    (Rat.one_mul (1 : Rat)⁻¹).symm.trans (Rat.mul_inv_cancel 1 (by first | decide | decide +kernel))
  rw [h1, Rat.div_def 1 1, Rat.one_mul (1 : Rat)⁻¹, hinv, Rat.one_mul c]

/-- Output o's sum over consecutive groups of taps is the total of the groups' sums. -/
theorem tapAt_forFrom (o : Nat) (x : List Rat) (G : Nat → List Tap) :
    ∀ (j n : Nat), tapAt o x (forFrom G j n) = total ((uptoFrom j n).map (fun l => tapAt o x (G l)))
  | _, 0 => rfl
  | j, n + 1 => by
    show tapAt o x (G j ++ forFrom G (j + 1) n) =
      tapAt o x (G j) + total ((uptoFrom (j + 1) n).map (fun l => tapAt o x (G l)))
    rw [tapAt_append o x (G j) (forFrom G (j + 1) n), tapAt_forFrom o x G (j + 1) n]

/-- A slice l other than p / S writes no tap to output p (every small
position is below S, so l·S + sm names slice l). -/
theorem tapAt_slice_other (S K B Bi p l : Nat) (hS : 0 < S) (hl : l ≠ p / S) (v : List Rat) (f : Win → Rat) :
    ∀ ws : List Win, AllT (Win.Inside S K B) ws →
      tapAt p v (ws.map (fun t => Tap.mk (l * S + t.sm) (l * Bi + t.bg) (f t))) = 0
  | [], _ => rfl
  | t :: ts, hin => by
    have hin' : Win.Inside S K B t ∧ AllT (Win.Inside S K B) ts := hin
    have hin1 : t.sm < S ∧ t.j < K ∧ t.bg < B := hin'.1
    have hsm : t.sm < S := hin1.1
    have hne : l * S + t.sm ≠ p := fun he => hl (by
      rw [← he, Nat.add_comm (l * S) t.sm, Nat.add_mul_div_right t.sm l hS, Nat.div_eq_of_lt hsm, Nat.zero_add])
    show tapAt p v (ts.map (fun t => Tap.mk (l * S + t.sm) (l * Bi + t.bg) (f t))) +
      (if l * S + t.sm = p then f t * nth v (l * Bi + t.bg) else 0) = 0
    rw [tapAt_slice_other S K B Bi p l hS hl v f ts hin'.2, if_neg hne, Rat.add_zero 0]

/-- Slice p / S's taps at output p are the weights h of x's window of
output p % S applied to v's window, when the weight of every triple of
that output is h of the value it reads. -/
theorem tapAt_slice_self (S K B Bi p : Nat) (v x : List Rat) (f : Win → Rat) (h : Rat → Rat)
    (hf : ∀ t : Win, t.sm = p % S → f t = h (nth x (p / S * Bi + t.bg))) :
    ∀ ws : List Win, AllT (Win.Inside S K B) ws →
      tapAt p v (ws.map (fun t => Tap.mk (p / S * S + t.sm) (p / S * Bi + t.bg) (f t))) =
        dot (pmap h (window x Bi (p / S) (p % S) ws)) (window v Bi (p / S) (p % S) ws)
  | [], _ => rfl
  | t :: ts, hin => by
    have hin' : Win.Inside S K B t ∧ AllT (Win.Inside S K B) ts := hin
    have ih := tapAt_slice_self S K B Bi p v x f h hf ts hin'.2
    show tapAt p v (ts.map (fun t => Tap.mk (p / S * S + t.sm) (p / S * Bi + t.bg) (f t))) +
        (if p / S * S + t.sm = p then f t * nth v (p / S * Bi + t.bg) else 0) =
      dot (pmap h (if t.sm = p % S then nth x (p / S * Bi + t.bg) :: window x Bi (p / S) (p % S) ts
          else window x Bi (p / S) (p % S) ts))
        (if t.sm = p % S then nth v (p / S * Bi + t.bg) :: window v Bi (p / S) (p % S) ts
          else window v Bi (p / S) (p % S) ts)
    by_cases hs : t.sm = p % S
    · have he : p / S * S + t.sm = p := by
        rw [hs, Nat.mul_comm (p / S) S]
        exact Nat.div_add_mod p S
      rw [if_pos he, if_pos hs, if_pos hs, ih, hf t hs]
      show dot (pmap h (window x Bi (p / S) (p % S) ts)) (window v Bi (p / S) (p % S) ts) +
          h (nth x (p / S * Bi + t.bg)) * nth v (p / S * Bi + t.bg) =
        h (nth x (p / S * Bi + t.bg)) * nth v (p / S * Bi + t.bg) +
          dot (pmap h (window x Bi (p / S) (p % S) ts)) (window v Bi (p / S) (p % S) ts)
      exact Rat.add_comm _ _
    · have hne : p / S * S + t.sm ≠ p := fun he => by
        rw [Nat.mul_comm (p / S) S] at he
        exact hs (Nat.add_left_cancel (he.trans (Nat.div_add_mod p S).symm))
      rw [if_neg hne, if_neg hs, if_neg hs, ih, Rat.add_zero]

/-- **The max pools' JVP at a unique maximum**: if position k of the window
output p (p < outSize) reads is its unique maximum, output p of
`Pool.maxJvp x v` is v's value at that position — the tie rule gives the
argmax weight 1/1 and every other position 0. -/
theorem maxJvp_unique (q : Pool) (x v : List Rat) (p : Nat) (hp : p < q.outSize) (k : Nat)
    (hk : k < (q.win x p).length)
    (huniq : ∀ i : Nat, i < (q.win x p).length → i ≠ k → nth (q.win x p) i < nth (q.win x p) k) :
    nth (q.maxJvp x v) p = nth (q.win v p) k := by
  have hp' : p < q.lead * smallSize q.axes := hp
  have hS : 0 < smallSize q.axes := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.mul_zero] at hp'
    exact Nat.not_lt_zero p hp')
  have hdiv : p / smallSize q.axes < q.lead := by
    first
      | exact (Nat.div_lt_iff_lt_mul hS).2 hp'
      | exact Nat.div_lt_of_lt_mul (Nat.lt_of_lt_of_eq hp' (Nat.mul_comm q.lead (smallSize q.axes)))
  have hne : ∀ i : Nat, i < (q.win x p).length → i ≠ k → nth (q.win x p) i ≠ nth (q.win x p) k :=
    fun i hi hik => Rat.ne_of_lt (huniq i hi hik)
  have hM : q.winMax x (p / smallSize q.axes) (p % smallSize q.axes) = nth (q.win x p) k :=
    maxL_eq_of_ge (q.win x p) k hk (uniq_ge (q.win x p) k huniq)
  have hc : countEq (nth (q.win x p) k)
      (window x (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)) = 1 :=
    countEq_unique (nth (q.win x p) k) (q.win x p) k hk rfl hne
  have hf : ∀ t : Win, t.sm = p % smallSize q.axes →
      q.maxWeight x (p / smallSize q.axes) t =
        (fun r => if r = nth (q.win x p) k then 1 / ((1 : Nat) : Rat) else 0)
          (nth x (p / smallSize q.axes * bigSize q.axes + t.bg)) := by
    intro t ht
    show (if nth x (p / smallSize q.axes * bigSize q.axes + t.bg) = q.winMax x (p / smallSize q.axes) t.sm then
        1 / (countEq (q.winMax x (p / smallSize q.axes) t.sm)
          (window x (bigSize q.axes) (p / smallSize q.axes) t.sm (winTaps q.axes)) : Rat) else 0) =
      (if nth x (p / smallSize q.axes * bigSize q.axes + t.bg) = nth (q.win x p) k then
        1 / ((1 : Nat) : Rat) else 0)
    rw [ht, hM, hc]
  have hself : tapAt p v ((winTaps q.axes).map (fun t => Tap.mk (p / smallSize q.axes * smallSize q.axes + t.sm)
      (p / smallSize q.axes * bigSize q.axes + t.bg) (q.maxWeight x (p / smallSize q.axes) t))) =
      nth (q.win v p) k := by
    rw [tapAt_slice_self (smallSize q.axes) (kernelSize q.axes) (bigSize q.axes) (bigSize q.axes) p v x
      (q.maxWeight x (p / smallSize q.axes))
      (fun r => if r = nth (q.win x p) k then 1 / ((1 : Nat) : Rat) else 0) hf (winTaps q.axes)
      (winTaps_inside q.axes)]
    show dot (pmap (fun r => if r = nth (q.win x p) k then 1 / ((1 : Nat) : Rat) else 0) (q.win x p)) (q.win v p) =
      nth (q.win v p) k
    rw [dot_ind_one (nth (q.win x p) k) (1 / ((1 : Nat) : Rat)) (q.win x p) (q.win v p) k hk rfl hne]
    exact one_div_one_mul (nth (q.win v p) k)
  have hother : ∀ l : Nat, l ≠ p / smallSize q.axes →
      tapAt p v ((winTaps q.axes).map (fun t => Tap.mk (l * smallSize q.axes + t.sm)
        (l * bigSize q.axes + t.bg) (q.maxWeight x l t))) = 0 := fun l hl =>
    tapAt_slice_other (smallSize q.axes) (kernelSize q.axes) (bigSize q.axes) (bigSize q.axes) p l hS hl v
      (q.maxWeight x l) (winTaps q.axes) (winTaps_inside q.axes)
  show nth (tapply q.outSize (q.taps (q.maxWeight x)) v) p = nth (q.win v p) k
  rw [nth_tapply q.outSize p hp v (q.taps (q.maxWeight x))]
  show tapAt p v (forFrom (fun l => (winTaps q.axes).map (fun t => Tap.mk (l * smallSize q.axes + t.sm)
      (l * bigSize q.axes + t.bg) (q.maxWeight x l t))) 0 q.lead) = nth (q.win v p) k
  rw [tapAt_forFrom p v (fun l => (winTaps q.axes).map (fun t => Tap.mk (l * smallSize q.axes + t.sm)
      (l * bigSize q.axes + t.bg) (q.maxWeight x l t))) 0 q.lead]
  exact total_indicator (p / smallSize q.axes) (nth (q.win v p) k)
    (fun l => tapAt p v ((winTaps q.axes).map (fun t => Tap.mk (l * smallSize q.axes + t.sm)
      (l * bigSize q.axes + t.bg) (q.maxWeight x l t))))
    hother hself q.lead 0 (Nat.zero_le _) (Nat.lt_of_lt_of_eq hdiv (Nat.zero_add q.lead).symm)

/-! ## The forward near a unique maximum, and the theorem -/

/-- Output p of the forward moves by t times v's value at the unique
argmax k, for every |t| below the window's bound. -/
theorem maxFwd_unique_near (q : Pool) (x v : List Rat) (h : x.length = v.length) (p : Nat)
    (hp : p < q.outSize) (k : Nat) (hk : k < (q.win x p).length)
    (huniq : ∀ i : Nat, i < (q.win x p).length → i ≠ k → nth (q.win x p) i < nth (q.win x p) k) (t : Rat)
    (ht : absS t < winδ (q.win x p) (q.win v p) k (q.win x p).length) :
    nth (q.maxFwd (along t x v)) p = nth (q.maxFwd x) p + t * nth (q.win v p) k := by
  have hl : (q.win x p).length = (q.win v p).length :=
    length_window x v (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)
  have hwin : q.win (along t x v) p = along t (q.win x p) (q.win v p) :=
    window_along t x v h (bigSize q.axes) (p / smallSize q.axes) (p % smallSize q.axes) (winTaps q.axes)
  rw [maxFwd_nth q (along t x v) p hp, maxFwd_nth q x p hp, hwin]
  exact maxL_along_linear t (q.win x p) (q.win v p) hl k hk (uniq_ge (q.win x p) k huniq)
    (unique_max_step (q.win x p) (q.win v p) hl k huniq t ht)

/-- **The max pools at a unique maximum (issue 27)**: for every output p
whose window has a unique maximum (position k, every other position
strictly below), there is δ > 0 — explicitly `winδ`, the minimum over the
other positions i of (w_k − w_i)/(|v_i − v_k| + 1) — such that for all t
with |t| < δ

  (maxFwd (x + t·v))_p = (maxFwd x)_p + t · (maxJvp x v)_p,

exact local linearity whose slope is the pool's own JVP. -/
theorem max_pool_unique_deriv (q : Pool) (x v : List Rat) (h : x.length = v.length) (p : Nat)
    (hp : p < q.outSize) (k : Nat) (hk : k < (q.win x p).length)
    (huniq : ∀ i : Nat, i < (q.win x p).length → i ≠ k → nth (q.win x p) i < nth (q.win x p) k) :
    ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
      nth (q.maxFwd (along t x v)) p = nth (q.maxFwd x) p + t * nth (q.maxJvp x v) p :=
  ⟨winδ (q.win x p) (q.win v p) k (q.win x p).length, winδ_pos _ _ _ _, fun t ht => by
    rw [maxJvp_unique q x v p hp k hk huniq]
    exact maxFwd_unique_near q x v h p hp k hk huniq t ht⟩

/-- `max_pool_unique_deriv` at the constructor `Prim.max_pool` (geometry `Attr.poolG`). -/
theorem max_pool_prim_unique_deriv (a : Attr) (x v : List Rat) (h : x.length = v.length) (p : Nat)
    (hp : p < a.poolG.outSize) (k : Nat) (hk : k < (a.poolG.win x p).length)
    (huniq : ∀ i : Nat, i < (a.poolG.win x p).length → i ≠ k →
      nth (a.poolG.win x p) i < nth (a.poolG.win x p) k) :
    ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
      nth (Prim.fwd .max_pool a [along t x v]) p =
        nth (Prim.fwd .max_pool a [x]) p + t * nth (Prim.jvp .max_pool a [x] [v]) p := by
  show ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
    nth (a.poolG.maxFwd (along t x v)) p = nth (a.poolG.maxFwd x) p + t * nth (a.poolG.maxJvp x v) p
  exact max_pool_unique_deriv a.poolG x v h p hp k hk huniq

/-- `max_pool_unique_deriv` at the constructor `Prim.max_pool_nd`. -/
theorem max_pool_nd_unique_deriv (a : Attr) (x v : List Rat) (h : x.length = v.length) (p : Nat)
    (hp : p < a.poolG.outSize) (k : Nat) (hk : k < (a.poolG.win x p).length)
    (huniq : ∀ i : Nat, i < (a.poolG.win x p).length → i ≠ k →
      nth (a.poolG.win x p) i < nth (a.poolG.win x p) k) :
    ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
      nth (Prim.fwd .max_pool_nd a [along t x v]) p =
        nth (Prim.fwd .max_pool_nd a [x]) p + t * nth (Prim.jvp .max_pool_nd a [x] [v]) p := by
  show ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
    nth (a.poolG.maxFwd (along t x v)) p = nth (a.poolG.maxFwd x) p + t * nth (a.poolG.maxJvp x v) p
  exact max_pool_unique_deriv a.poolG x v h p hp k hk huniq

/-! ## Every window with a unique maximum: the whole output

One δ for all outputs (`poolδ`, the minimum of the outputs' `winδ`, 1 for
none) and list equality from entry equality (`nth_ext`). -/

/-- Two lists of one length with equal entries are equal. -/
theorem nth_ext : ∀ (a b : List Rat), a.length = b.length → (∀ i : Nat, i < a.length → nth a i = nth b i) → a = b
  | [], [], _, _ => rfl
  | [], _ :: _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h, _ => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, y :: ys, h, hn => by
    have h0 : x = y := hn 0 (Nat.succ_pos _)
    have ih : xs = ys := nth_ext xs ys (Nat.succ.inj h) (fun i hi => hn (i + 1) (Nat.succ_lt_succ hi))
    rw [h0, ih]

/-- The bound of outputs 0, …, n − 1, with K p the argmax of output p. -/
def poolδ (q : Pool) (x v : List Rat) (K : Nat → Nat) : Nat → Rat
  | 0 => 1
  | n + 1 => rmin (winδ (q.win x n) (q.win v n) (K n) (q.win x n).length) (poolδ q x v K n)

theorem poolδ_pos (q : Pool) (x v : List Rat) (K : Nat → Nat) : ∀ n : Nat, 0 < poolδ q x v K n
  | 0 => rzero_lt_one
  | n + 1 => rmin_pos (winδ_pos (q.win x n) (q.win v n) (K n) (q.win x n).length) (poolδ_pos q x v K n)

theorem poolδ_le (q : Pool) (x v : List Rat) (K : Nat → Nat) : ∀ (n p : Nat), p < n →
    poolδ q x v K n ≤ winδ (q.win x p) (q.win v p) (K p) (q.win x p).length
  | 0, _, h => absurd h (Nat.not_lt_zero _)
  | n + 1, p, h => by
    show rmin (winδ (q.win x n) (q.win v n) (K n) (q.win x n).length) (poolδ q x v K n) ≤
      winδ (q.win x p) (q.win v p) (K p) (q.win x p).length
    by_cases hp : p = n
    · subst hp
      exact rmin_le_left _ _
    · exact Rat.le_trans (rmin_le_right _ _) (poolδ_le q x v K n p (by omega))

/-- **The max pools off ties, whole output**: if every output p's window
has a unique maximum (at K p), then for all t with |t| below the minimum
of the outputs' bounds, maxFwd (x + t·v) = maxFwd x + t·maxJvp x v as
lists. -/
theorem max_pool_all_unique_deriv (q : Pool) (x v : List Rat) (h : x.length = v.length) (K : Nat → Nat)
    (hk : ∀ p : Nat, p < q.outSize → K p < (q.win x p).length)
    (huniq : ∀ p : Nat, p < q.outSize → ∀ i : Nat, i < (q.win x p).length → i ≠ K p →
      nth (q.win x p) i < nth (q.win x p) (K p)) :
    ∃ δ : Rat, 0 < δ ∧ ∀ t : Rat, absS t < δ →
      q.maxFwd (along t x v) = along t (q.maxFwd x) (q.maxJvp x v) :=
  ⟨poolδ q x v K q.outSize, poolδ_pos q x v K q.outSize, fun t ht => by
    have hlf : ∀ y : List Rat, (q.maxFwd y).length = q.outSize := fun y =>
      (length_map_rat (fun p => q.winMax y (p / smallSize q.axes) (p % smallSize q.axes)) (upto q.outSize)).trans
        (length_upto q.outSize)
    have hlj : (q.maxJvp x v).length = q.outSize := length_tapply q.outSize (q.taps (q.maxWeight x)) v
    have hfj : (q.maxFwd x).length = (q.maxJvp x v).length := (hlf x).trans hlj.symm
    have hla : (along t (q.maxFwd x) (q.maxJvp x v)).length = q.outSize :=
      (length_along t (q.maxFwd x) (q.maxJvp x v) hfj).trans (hlf x)
    apply nth_ext (q.maxFwd (along t x v)) (along t (q.maxFwd x) (q.maxJvp x v)) ((hlf (along t x v)).trans hla.symm)
    intro p hp
    have hp' : p < q.outSize := Nat.lt_of_lt_of_eq hp (hlf (along t x v))
    rw [gather_along.nth_along t (q.maxFwd x) (q.maxJvp x v) hfj p,
      maxJvp_unique q x v p hp' (K p) (hk p hp') (huniq p hp')]
    exact maxFwd_unique_near q x v h p hp' (K p) (hk p hp') (huniq p hp') t
      (rlt_of_lt_of_le ht (poolδ_le q x v K q.outSize p hp'))⟩

/-- An instance, by the kernel: x = [1, 3, 2, 5, 4] under kernel 2,
stride 1, v = [1, 2, 3, 4, 5]: every window has a unique maximum (3, 3, 5,
5 at v-values 2, 2, 4, 4), so the JVP is [2, 2, 4, 4]; output 0's bound is
min((3 − 1)/(|1 − 2| + 1), 1) = 1, and at t = 1/2 the forward is
[4, 4, 7, 7] = [3, 3, 5, 5] + 1/2·[2, 2, 4, 4]. -/
theorem max_pool_unique_instance :
    (poolK2 5).maxJvp [1, 3, 2, 5, 4] [1, 2, 3, 4, 5] = [2, 2, 4, 4] ∧
      winδ [1, 3] [1, 2] 1 2 = 1 ∧
      (poolK2 5).maxFwd (along (1 / 2) [1, 3, 2, 5, 4] [1, 2, 3, 4, 5]) = [4, 4, 7, 7] := by
  decide +kernel

end Tlcheck
