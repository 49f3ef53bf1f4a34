import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Window
import Tlcheck.Norm
import Tlcheck.Prod

/-!
# renorm: its Jacobian is symmetric, and it preserves zero

renorm (`Spec.lean`'s `Attr.rnFwd`, `rnTaps`; torch.renorm with p = 2 and
maxnorm c) scales each sub-tensor x[…, k, …] along the axis: in the
[A, K, B] view the sub-tensor of flat index i is every (p, r) at
k = i / B mod K (`Attr.rnLane`), its 2-norm ν, the divisor m = max(ν, c),
and yᵢ = c·xᵢ/m. Its Jacobian entry, for j in i's sub-tensor, is

    Jᵢⱼ = c·([i = j] − w·(xᵢ/m)(xⱼ/m))/m        (`Attr.rnEntry`, rnTaps's weight)

with w the max's weight on ν (1 above c, ½ at the tie, 0 below).

* `rnLane_key`, `rnLane_eq`: j in i's sub-tensor has the same k, so the same
  sub-tensor — by `Nat.add_mul_div_right`, `Nat.div_eq_of_lt`,
  `Nat.add_mul_mod_self_right`, `Nat.mod_mod` on j = (p·K + k)·B + r, r < B.
* **`renorm_jacobian_symm`**: for every x and every i, j of one sub-tensor,
  Jᵢⱼ = Jⱼᵢ — in general, not only at the hand instance `renorm_instance`:
  m and w are the sub-tensor's, [i = j] = [j = i], and
  w·(xᵢ/m)(xⱼ/m) = w·(xⱼ/m)(xᵢ/m). So the VJP (the transpose of the taps) is
  the registry's same expression as the JVP, entry by entry.
* **`renorm_zero_preserving`**: the VJP maps a zero cotangent to zeros (the
  `Graph.ZeroPreserving` condition of a renorm node), the JVP maps a zero
  tangent to zeros, and the forward maps the zero tensor to zeros
  (c·0/m = 0, also when m = 0: Lean's 0/0 = 0, as the registry's).

Not proved here: that the tap list holds (j, i) whenever it holds (i, j)
(that i is in its own sub-tensor), which with `renorm_jacobian_symm`
would make `tapply` and `tapplyT` of `rnTaps` the same map.

No `sorry`, no `grind`.
-/

namespace Tlcheck
set_option autoImplicit false

/-- renorm's Jacobian entry ∂yᵢ/∂xⱼ (j in i's sub-tensor): the weight
`Attr.rnTaps` gives the tap (i, j). -/
def Attr.rnEntry (a : Attr) (x : List Rat) (i j : Nat) : Rat :=
  a.c * ((if i = j then (1 : Rat) else 0) - a.rnW x i * a.rnY x i * a.rnY x j) / a.rnM x i

/-- `rnTaps` is the tap (i, j, rnEntry i j) for every j of i's sub-tensor. -/
theorem rnTaps_entry (a : Attr) (x : List Rat) :
    a.rnTaps x = forN (size a.shape) (fun i => (a.rnLane i).map (fun j => Tap.mk i j (a.rnEntry x i j))) :=
  rfl

/-! ## Membership in the index lists -/

theorem mem_uptoFrom : ∀ (k n r : Nat), r ∈ uptoFrom k n → k ≤ r ∧ r < k + n
  | _, 0, r, h => by
    have h' : r ∈ ([] : List Nat) := h
    first
      | nomatch h'
      | cases h'
  | k, n + 1, r, h => by
    have h' : r ∈ k :: uptoFrom (k + 1) n := h
    cases h' with
    | head => exact ⟨Nat.le_refl _, by omega⟩
    | tail _ h2 =>
      have ih := mem_uptoFrom (k + 1) n r h2
      exact ⟨by omega, by omega⟩

theorem mem_app : ∀ (s t : List Nat) (a : Nat), a ∈ s ++ t → a ∈ s ∨ a ∈ t
  | [], _, _, h => Or.inr h
  | b :: s, t, a, h => by
    have h' : a ∈ b :: (s ++ t) := h
    cases h' with
    | head => exact Or.inl (List.Mem.head s)
    | tail _ h2 =>
      cases mem_app s t a h2 with
      | inl h3 => exact Or.inl (List.Mem.tail b h3)
      | inr h3 => exact Or.inr h3

theorem mem_forFrom (f : Nat → List Nat) : ∀ (k n j : Nat), j ∈ forFrom f k n → ∃ p, j ∈ f p
  | _, 0, j, h => by
    have h' : j ∈ ([] : List Nat) := h
    first
      | nomatch h'
      | cases h'
  | k, n + 1, j, h => by
    have h' : j ∈ f k ++ forFrom f (k + 1) n := h
    cases mem_app (f k) (forFrom f (k + 1) n) j h' with
    | inl h2 => exact ⟨k, h2⟩
    | inr h2 => exact mem_forFrom f (k + 1) n j h2

theorem mem_map_nat (g : Nat → Nat) : ∀ (l : List Nat) (j : Nat), j ∈ l.map g → ∃ r, r ∈ l ∧ g r = j
  | [], j, h => by
    have h' : j ∈ ([] : List Nat) := h
    first
      | nomatch h'
      | cases h'
  | r :: l, j, h => by
    have h' : j ∈ g r :: l.map g := h
    cases h' with
    | head => exact ⟨r, List.Mem.head l, rfl⟩
    | tail _ h2 =>
      obtain ⟨q, hq, hg⟩ := mem_map_nat g l j h2
      exact ⟨q, List.Mem.tail r hq, hg⟩

/-! ## One sub-tensor, one lane -/

/-- j in the sub-tensor of i has i's position k = i / B mod K on the axis:
j = (p·K + k)·B + r with r < B, so j / B = p·K + k and that mod K is k. -/
theorem rnLane_key (a : Attr) (i j : Nat) (h : j ∈ a.rnLane i) :
    j / a.dimB % a.dimK = i / a.dimB % a.dimK := by
  have h1 : j ∈ forFrom (fun p => (upto a.dimB).map (fun r => (p * a.dimK + i / a.dimB % a.dimK) * a.dimB + r))
      0 a.dimA := h
  obtain ⟨p, hp⟩ := mem_forFrom _ 0 a.dimA j h1
  obtain ⟨r, hr, hj⟩ := mem_map_nat (fun r => (p * a.dimK + i / a.dimB % a.dimK) * a.dimB + r) (upto a.dimB) j hp
  have hr2 : 0 ≤ r ∧ r < 0 + a.dimB := mem_uptoFrom 0 a.dimB r hr
  have hrB : r < a.dimB := by omega
  have hB : 0 < a.dimB := by omega
  have hj' : (p * a.dimK + i / a.dimB % a.dimK) * a.dimB + r = j := hj
  rw [← hj', Nat.add_comm ((p * a.dimK + i / a.dimB % a.dimK) * a.dimB) r,
    Nat.add_mul_div_right r (p * a.dimK + i / a.dimB % a.dimK) hB, Nat.div_eq_of_lt hrB, Nat.zero_add,
    Nat.add_comm (p * a.dimK) (i / a.dimB % a.dimK), Nat.add_mul_mod_self_right (i / a.dimB % a.dimK) p a.dimK,
    Nat.mod_mod]

/-- The sub-tensor of i depends on i only through i / B mod K. -/
theorem rnLane_eq (a : Attr) (i j : Nat) (hk : j / a.dimB % a.dimK = i / a.dimB % a.dimK) :
    a.rnLane j = a.rnLane i := by
  show forN a.dimA (fun p => (upto a.dimB).map (fun r => (p * a.dimK + j / a.dimB % a.dimK) * a.dimB + r)) =
    forN a.dimA (fun p => (upto a.dimB).map (fun r => (p * a.dimK + i / a.dimB % a.dimK) * a.dimB + r))
  rw [hk]

/-- **renorm's Jacobian is symmetric, for every x**: for i and j of one
sub-tensor, they share it (`rnLane j = rnLane i`) and ∂yᵢ/∂xⱼ = ∂yⱼ/∂xᵢ. -/
theorem renorm_jacobian_symm (a : Attr) (x : List Rat) (i j : Nat) (h : j ∈ a.rnLane i) :
    a.rnLane j = a.rnLane i ∧ a.rnEntry x i j = a.rnEntry x j i := by
  have hl : a.rnLane j = a.rnLane i := rnLane_eq a i j (rnLane_key a i j h)
  have hM : a.rnM x j = a.rnM x i := by
    show maxS (laneNorm x (a.rnLane j)) a.c = maxS (laneNorm x (a.rnLane i)) a.c
    rw [hl]
  have hW : a.rnW x j = a.rnW x i := by
    show maxDa (laneNorm x (a.rnLane j)) a.c = maxDa (laneNorm x (a.rnLane i)) a.c
    rw [hl]
  have hite : (if i = j then (1 : Rat) else 0) = (if j = i then (1 : Rat) else 0) := by
    by_cases hij : i = j
    · rw [if_pos hij, if_pos hij.symm]
    · rw [if_neg hij, if_neg (fun h' : j = i => hij h'.symm)]
  refine ⟨hl, ?_⟩
  show a.c * ((if i = j then (1 : Rat) else 0) - a.rnW x i * (nth x i / a.rnM x i) * (nth x j / a.rnM x j)) /
      a.rnM x i =
    a.c * ((if j = i then (1 : Rat) else 0) - a.rnW x j * (nth x j / a.rnM x j) * (nth x i / a.rnM x i)) /
      a.rnM x j
  rw [hM, hW, hite, Rat.mul_assoc (a.rnW x i) (nth x i / a.rnM x i) (nth x j / a.rnM x i),
    Rat.mul_comm (nth x i / a.rnM x i) (nth x j / a.rnM x i),
    ← Rat.mul_assoc (a.rnW x i) (nth x j / a.rnM x i) (nth x i / a.rnM x i)]

/-! ## Zero preservation -/

theorem tapply_zeros (m : Nat) (d : List Rat) : ∀ es : List Tap, tapply m es (zeros d) = zerosN m
  | [] => rfl
  | e :: es => by
    show addAt (tapply m es (zeros d)) e.o (e.w * nth (zeros d) e.i) = zerosN m
    rw [tapply_zeros m d es, nth_zeros d e.i, Rat.mul_zero, addAt_zerosN m e.o]

theorem map_zero_uptoFrom : ∀ k n : Nat, (uptoFrom k n).map (fun _ => (0 : Rat)) = zerosN n
  | _, 0 => rfl
  | k, n + 1 => by
    show (0 : Rat) :: (uptoFrom (k + 1) n).map (fun _ => (0 : Rat)) = 0 :: zerosN n
    rw [map_zero_uptoFrom (k + 1) n]

/-- **renorm preserves zero**: its VJP maps a zero cotangent to zeros (the
`Graph.ZeroPreserving` condition), its JVP a zero tangent to zeros, and its
forward the zero tensor to zeros. -/
theorem renorm_zero_preserving (a : Attr) (x δ dx : List Rat) (n : Nat) :
    Prim.vjp .renorm a [x] (zeros δ) = [zerosN (size a.shape)] ∧
      Prim.jvp .renorm a [x] [zeros dx] = zerosN (size a.shape) ∧
      Prim.fwd .renorm a [zerosN n] = zerosN (size a.shape) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT (size a.shape) (a.rnTaps x) (zeros δ)] = [zerosN (size a.shape)]
    rw [tapplyT_zeros (size a.shape) δ (a.rnTaps x)]
  · show tapply (size a.shape) (a.rnTaps x) (zeros dx) = zerosN (size a.shape)
    exact tapply_zeros (size a.shape) dx (a.rnTaps x)
  · show (upto (size a.shape)).map (fun i => a.c * (nth (zerosN n) i / a.rnM (zerosN n) i)) = zerosN (size a.shape)
    rw [map_ext (fun i => a.c * (nth (zerosN n) i / a.rnM (zerosN n) i)) (fun _ => (0 : Rat))
      (fun i => by
        show a.c * (nth (zerosN n) i / a.rnM (zerosN n) i) = 0
        rw [nth_zerosN n i, Rat.div_def, Rat.zero_mul, Rat.mul_zero])
      (upto (size a.shape))]
    exact map_zero_uptoFrom 0 (size a.shape)

end Tlcheck
