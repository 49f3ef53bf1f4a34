import Tlcheck.Spec

/-!
# Adjointness of every primitive of `Tlcheck.Spec`, once for all inputs

For each primitive `p`: ⟨jvp x dx, δ⟩ = Σₖ ⟨dxₖ, vjp x δₖ⟩ for all inputs of
matching lengths (`*_adjoint`); where stated (`*_vjp_linear`), the VJP is
additive and homogeneous in δ and maps the zero cotangent to zero
contributions. No `sorry`, no `native_decide`, no axioms of our own.

Proof style: induction on lists, definitional unfolding by `show`, then
`rw` with core `Rat` lemmas (`Rat.mul_comm`, `Rat.mul_assoc`,
`Rat.add_mul`, `Rat.mul_add`, `Rat.add_zero`, `Rat.zero_mul`,
`Rat.mul_zero`); where a step is a ring identity, `grind` (core, with the
`Lean.Grind.Field Rat` instance) is the fallback.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## Lengths -/

theorem length_smul (c : Rat) : ∀ a : List Rat, (smul c a).length = a.length
  | [] => rfl
  | _ :: as => by
    show (smul c as).length + 1 = as.length + 1
    rw [length_smul c as]

theorem length_pmul_eq : ∀ a b : List Rat, a.length = b.length → (pmul a b).length = a.length
  | [], _, _ => rfl
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: as, _ :: bs, h => by
    show (pmul as bs).length + 1 = as.length + 1
    rw [length_pmul_eq as bs (by first | exact Nat.succ.inj h | simpa using h)]

theorem length_pmap2_eq (f : Rat → Rat → Rat) :
    ∀ a b : List Rat, a.length = b.length → (pmap2 f a b).length = a.length
  | [], _, _ => rfl
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: as, _ :: bs, h => by
    show (pmap2 f as bs).length + 1 = as.length + 1
    rw [length_pmap2_eq f as bs (by first | exact Nat.succ.inj h | simpa using h)]

theorem length_pmap (f : Rat → Rat) : ∀ a : List Rat, (pmap f a).length = a.length
  | [] => rfl
  | _ :: as => by
    show (pmap f as).length + 1 = as.length + 1
    rw [length_pmap f as]

/-! ## Inner products -/

theorem dot_pmul : ∀ f a b : List Rat, dot (pmul f a) b = dot a (pmul f b)
  | [], [], _ => rfl
  | [], _ :: _, _ => rfl
  | _ :: _, [], _ => rfl
  | _ :: _, _ :: _, [] => rfl
  | x :: xs, y :: ys, z :: zs => by
    show x * y * z + dot (pmul xs ys) zs = y * (x * z) + dot ys (pmul xs zs)
    rw [dot_pmul xs ys zs]
    first
      | rw [Rat.mul_comm x y, Rat.mul_assoc]
      | grind

theorem dot_smul (c : Rat) : ∀ a b : List Rat, dot (smul c a) b = dot a (smul c b)
  | [], _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, z :: zs => by
    show c * x * z + dot (smul c xs) zs = x * (c * z) + dot xs (smul c zs)
    rw [dot_smul c xs zs]
    first
      | rw [Rat.mul_comm c x, Rat.mul_assoc]
      | grind

theorem dot_padd : ∀ a b c : List Rat, a.length = b.length → dot (padd a b) c = dot a c + dot b c
  | [], [], _, _ => by
    show (0 : Rat) = 0 + 0
    first
      | rw [Rat.add_zero]
      | grind
  | [], _ :: _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], _, h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _ => by
    show (0 : Rat) = 0 + 0
    first
      | rw [Rat.add_zero]
      | grind
  | x :: xs, y :: ys, z :: zs, h => by
    show (x + y) * z + dot (padd xs ys) zs = (x * z + dot xs zs) + (y * z + dot ys zs)
    rw [dot_padd xs ys zs (by first | exact Nat.succ.inj h | simpa using h)]
    first
      | rw [Rat.add_mul, Rat.add_assoc (x * z) (y * z) (dot xs zs + dot ys zs),
          Rat.add_assoc (x * z) (dot xs zs) (y * z + dot ys zs),
          Rat.add_left_comm (y * z) (dot xs zs) (dot ys zs)]
      | grind

theorem dot_zeros_left : ∀ a b : List Rat, dot (zeros a) b = 0
  | [], _ => rfl
  | _ :: _, [] => rfl
  | _ :: as, z :: zs => by
    show 0 * z + dot (zeros as) zs = 0
    rw [dot_zeros_left as zs]
    first
      | rw [Rat.zero_mul, Rat.add_zero]
      | grind

theorem dot_zeros_right : ∀ a b : List Rat, dot a (zeros b) = 0
  | [], _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, _ :: bs => by
    show x * 0 + dot xs (zeros bs) = 0
    rw [dot_zeros_right xs bs]
    first
      | rw [Rat.mul_zero, Rat.add_zero]
      | grind

theorem dot_bcast (d : Rat) : ∀ dx x : List Rat, dx.length = x.length → dot dx (bcast d x) = total dx * d
  | [], [], _ => by
    show (0 : Rat) = 0 * d
    first
      | rw [Rat.zero_mul]
      | grind
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, _ :: ys, h => by
    show a * d + dot as (bcast d ys) = (a + total as) * d
    rw [dot_bcast d as ys (by first | exact Nat.succ.inj h | simpa using h)]
    first
      | rw [Rat.add_mul]
      | grind

theorem dot_comm : ∀ a b : List Rat, dot a b = dot b a
  | [], [] => rfl
  | [], _ :: _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, y :: ys => by
    show x * y + dot xs ys = y * x + dot ys xs
    rw [dot_comm xs ys, Rat.mul_comm x y]

theorem dot_smul_right (k : Rat) : ∀ a b : List Rat, dot a (smul k b) = k * dot a b
  | [], _ => by
    show (0 : Rat) = k * 0
    first
      | rw [Rat.mul_zero]
      | grind
  | _ :: _, [] => by
    show (0 : Rat) = k * 0
    first
      | rw [Rat.mul_zero]
      | grind
  | x :: xs, y :: ys => by
    show x * (k * y) + dot xs (smul k ys) = k * (x * y + dot xs ys)
    rw [dot_smul_right k xs ys]
    first
      | rw [Rat.mul_add k (x * y) (dot xs ys), ← Rat.mul_assoc x k y, Rat.mul_comm x k,
          Rat.mul_assoc k x y]
      | grind

/-! ## Local adjointness, per primitive -/

theorem add_adjoint (a : Attr) (x y dx dy δ : List Rat) (h : dx.length = dy.length) :
    dot (Prim.jvp .add a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .add a [x, y] δ) := by
  show dot (padd dx dy) δ = dot dx δ + (dot dy δ + 0)
  rw [dot_padd dx dy δ h, Rat.add_zero]

theorem sub_adjoint (a : Attr) (x y dx dy δ : List Rat) (h : dx.length = dy.length) :
    dot (Prim.jvp .sub a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .sub a [x, y] δ) := by
  show dot (padd dx (smul (-1) dy)) δ = dot dx δ + (dot dy (smul (-1) δ) + 0)
  rw [dot_padd dx (smul (-1) dy) δ (by rw [length_smul]; exact h), dot_smul, Rat.add_zero]

theorem mul_adjoint (a : Attr) (x y dx dy δ : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    dot (Prim.jvp .mul a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .mul a [x, y] δ) := by
  show dot (padd (pmul y dx) (pmul x dy)) δ = dot dx (pmul y δ) + (dot dy (pmul x δ) + 0)
  have h1 : (pmul y dx).length = (pmul x dy).length := by
    rw [length_pmul_eq y dx (by omega), length_pmul_eq x dy (by omega)]
    omega
  rw [dot_padd _ _ δ h1, dot_pmul y dx δ, dot_pmul x dy δ, Rat.add_zero]

theorem neg_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .neg a [x] [dx]) δ = dotAll [dx] (Prim.vjp .neg a [x] δ) := by
  show dot (smul (-1) dx) δ = dot dx (smul (-1) δ) + 0
  rw [dot_smul, Rat.add_zero]

theorem scale_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .scale a [x] [dx]) δ = dotAll [dx] (Prim.vjp .scale a [x] δ) := by
  show dot (smul a.c dx) δ = dot dx (smul a.c δ) + 0
  rw [dot_smul, Rat.add_zero]

theorem square_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .square a [x] [dx]) δ = dotAll [dx] (Prim.vjp .square a [x] δ) := by
  show dot (pmul (pmap squareD x) dx) δ = dot dx (pmul (pmap squareD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem relu_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .relu a [x] [dx]) δ = dotAll [dx] (Prim.vjp .relu a [x] δ) := by
  show dot (pmul (pmap reluD x) dx) δ = dot dx (pmul (pmap reluD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem shrink_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .shrink a [x] [dx]) δ = dotAll [dx] (Prim.vjp .shrink a [x] δ) := by
  show dot (pmul (pmap (shrinkD a.lo) x) dx) δ = dot dx (pmul (pmap (shrinkD a.lo) x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem abs_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .abs a [x] [dx]) δ = dotAll [dx] (Prim.vjp .abs a [x] δ) := by
  show dot (pmul (pmap absD x) dx) δ = dot dx (pmul (pmap absD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem sign_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .sign a [x] [dx]) δ = dotAll [dx] (Prim.vjp .sign a [x] δ) := by
  show dot (pmul (pmap signD x) dx) δ = dot dx (pmul (pmap signD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

/-- sum: the output is a scalar, so δ = [d]. -/
theorem sum_adjoint (a : Attr) (d : Rat) (x dx : List Rat) (h : dx.length = x.length) :
    dot (Prim.jvp .sum a [x] [dx]) [d] = dotAll [dx] (Prim.vjp .sum a [x] [d]) := by
  show total dx * d + 0 = dot dx (bcast d x) + 0
  rw [dot_bcast d dx x h]

/-- mse_loss: the output is a scalar, so δ = [d]. -/
theorem mse_loss_adjoint (a : Attr) (d : Rat) (x y dx dy : List Rat) (h : dx.length = dy.length) :
    dot (Prim.jvp .mse_loss a [x, y] [dx, dy]) [d] = dotAll [dx, dy] (Prim.vjp .mse_loss a [x, y] [d]) := by
  show 2 / mseN x.length * dot (resid x y) (padd dx (smul (-1) dy)) * d + 0 =
    dot dx (smul (2 / mseN x.length * d) (resid x y)) +
      (dot dy (smul (-(2 / mseN x.length * d)) (resid x y)) + 0)
  rw [dot_comm (resid x y) (padd dx (smul (-1) dy)),
    dot_padd dx (smul (-1) dy) (resid x y) (by rw [length_smul]; exact h),
    dot_smul (-1) dy (resid x y),
    dot_smul_right (-1) dy (resid x y),
    dot_smul_right (2 / mseN x.length * d) dx (resid x y),
    dot_smul_right (-(2 / mseN x.length * d)) dy (resid x y)]
  -- c·(A + −1·B)·d + 0 = c·d·A + (−(c·d)·B + 0)
  first
    | (generalize 2 / mseN x.length = c
       generalize dot dx (resid x y) = A
       generalize dot dy (resid x y) = B
       rw [Rat.add_zero, Rat.add_zero, Rat.neg_mul 1 B, Rat.one_mul B, Rat.mul_add c A (-B),
         Rat.mul_neg c B, Rat.add_mul (c * A) (-(c * B)) d, Rat.neg_mul (c * B) d,
         Rat.neg_mul (c * d) B, Rat.mul_assoc c A d, Rat.mul_comm A d, ← Rat.mul_assoc c d A,
         Rat.mul_assoc c B d, Rat.mul_comm B d, ← Rat.mul_assoc c d B])
    | grind

theorem reshape_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .reshape a [x] [dx]) δ = dotAll [dx] (Prim.vjp .reshape a [x] δ) := by
  show dot dx δ = dot dx δ + 0
  rw [Rat.add_zero]

theorem flatten_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .flatten a [x] [dx]) δ = dotAll [dx] (Prim.vjp .flatten a [x] δ) := by
  show dot dx δ = dot dx δ + 0
  rw [Rat.add_zero]

theorem detach_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .detach a [x] [dx]) δ = dotAll [dx] (Prim.vjp .detach a [x] δ) := by
  show dot (zeros dx) δ = dot dx (zeros x) + 0
  rw [dot_zeros_left, dot_zeros_right, Rat.add_zero]

/-- The pattern of every binary elementwise primitive: partials f and g,
jvp = f⊙dx + g⊙dy, vjp δ = (f⊙δ, g⊙δ). -/
theorem binary_adjoint (f g dx dy δ : List Rat) (h : (pmul f dx).length = (pmul g dy).length) :
    dot (padd (pmul f dx) (pmul g dy)) δ = dot dx (pmul f δ) + (dot dy (pmul g δ) + 0) := by
  rw [dot_padd _ _ δ h, dot_pmul f dx δ, dot_pmul g dy δ, Rat.add_zero]

/-- Lengths of the partials of a binary primitive on inputs of one length. -/
theorem binary_lengths (p q : Rat → Rat → Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    (pmul (pmap2 p x y) dx).length = (pmul (pmap2 q x y) dy).length := by
  rw [length_pmul_eq (pmap2 p x y) dx (by rw [length_pmap2_eq p x y hxy]; omega),
    length_pmul_eq (pmap2 q x y) dy (by rw [length_pmap2_eq q x y hxy]; omega),
    length_pmap2_eq p x y hxy, length_pmap2_eq q x y hxy]

theorem div_adjoint (a : Attr) (x y dx dy δ : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    dot (Prim.jvp .div a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .div a [x, y] δ) :=
  binary_adjoint (pmap2 divDa x y) (pmap2 divDb x y) dx dy δ (binary_lengths divDa divDb x y dx dy hxy hx hy)

theorem max_adjoint (a : Attr) (x y dx dy δ : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    dot (Prim.jvp .max a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .max a [x, y] δ) :=
  binary_adjoint (pmap2 maxDa x y) (pmap2 maxDb x y) dx dy δ (binary_lengths maxDa maxDb x y dx dy hxy hx hy)

theorem min_adjoint (a : Attr) (x y dx dy δ : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    dot (Prim.jvp .min a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .min a [x, y] δ) :=
  binary_adjoint (pmap2 minDa x y) (pmap2 minDb x y) dx dy δ (binary_lengths minDa minDb x y dx dy hxy hx hy)

theorem inv_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .inv a [x] [dx]) δ = dotAll [dx] (Prim.vjp .inv a [x] δ) := by
  show dot (pmul (pmap invD x) dx) δ = dot dx (pmul (pmap invD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem sqrt_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .sqrt a [x] [dx]) δ = dotAll [dx] (Prim.vjp .sqrt a [x] δ) := by
  show dot (pmul (pmap sqrtD x) dx) δ = dot dx (pmul (pmap sqrtD x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

theorem clamp_adjoint (a : Attr) (x dx δ : List Rat) :
    dot (Prim.jvp .clamp a [x] [dx]) δ = dotAll [dx] (Prim.vjp .clamp a [x] δ) := by
  show dot (pmul (pmap (clampD a.lo a.hi) x) dx) δ = dot dx (pmul (pmap (clampD a.lo a.hi) x) δ) + 0
  rw [dot_pmul, Rat.add_zero]

/-! ## The axis reductions

`reduceAKB K B A` sums the middle axis of an [A, K, B] tensor; its VJP is
`bcastAKB`. The registry's reduce_sum and reduce_mean over axis `ax` of a
shape `s` are these with A = size (s.take ax), K = s[ax], B = size
(s.drop (ax + 1)) (`Attr.dimA`, `dimK`, `dimB`). -/

theorem length_zerosN : ∀ n : Nat, (zerosN n).length = n
  | 0 => rfl
  | n + 1 => by
    show (zerosN n).length + 1 = n + 1
    rw [length_zerosN n]

theorem length_padd_eq : ∀ a b : List Rat, a.length = b.length → (padd a b).length = a.length
  | [], _, _ => rfl
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: as, _ :: bs, h => by
    show (padd as bs).length + 1 = as.length + 1
    rw [length_padd_eq as bs (by first | exact Nat.succ.inj h | simpa using h)]

theorem dot_nil_right : ∀ a : List Rat, dot a [] = 0
  | [] => rfl
  | _ :: _ => rfl

theorem dot_zerosN_left : ∀ (n : Nat) (d : List Rat), dot (zerosN n) d = 0
  | 0, _ => rfl
  | _ + 1, [] => rfl
  | n + 1, z :: zs => by
    show 0 * z + dot (zerosN n) zs = 0
    rw [dot_zerosN_left n zs]
    first
      | rw [Rat.zero_mul, Rat.add_zero]
      | grind

theorem dot_append : ∀ a b c e : List Rat, a.length = c.length →
    dot (a ++ b) (c ++ e) = dot a c + dot b e
  | [], b, [], e, _ => by
    show dot b e = 0 + dot b e
    first
      | rw [Rat.zero_add]
      | grind
  | [], _, _ :: _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _, [], _, h => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, b, y :: ys, e, h => by
    show x * y + dot (xs ++ b) (ys ++ e) = (x * y + dot xs ys) + dot b e
    rw [dot_append xs b ys e (by first | exact Nat.succ.inj h | simpa using h)]
    first
      | rw [Rat.add_assoc]
      | grind

theorem length_take_of_le (n : Nat) (l : List Rat) (h : n ≤ l.length) : (l.take n).length = n := by
  rw [List.length_take]
  omega

theorem length_repChunks (d : List Rat) : ∀ K : Nat, (repChunks d K).length = K * d.length
  | 0 => by
    show 0 = 0 * d.length
    rw [Nat.zero_mul]
  | K + 1 => by
    show (d ++ repChunks d K).length = (K + 1) * d.length
    rw [List.length_append, length_repChunks d K]
    first
      | rw [Nat.add_mul, Nat.one_mul, Nat.add_comm]
      | grind

theorem length_sumChunks (B : Nat) :
    ∀ (K : Nat) (l : List Rat), l.length = K * B → (sumChunks B K l).length = B
  | 0, _, _ => length_zerosN B
  | K + 1, l, h => by
    have hl : l.length = K * B + B := by rw [h, Nat.add_mul, Nat.one_mul]
    have ht : (l.take B).length = B := length_take_of_le B l (by omega)
    have hr : (l.drop B).length = K * B := by
      rw [List.length_drop]
      omega
    show (padd (l.take B) (sumChunks B K (l.drop B))).length = B
    rw [length_padd_eq (l.take B) (sumChunks B K (l.drop B)) (by rw [ht, length_sumChunks B K (l.drop B) hr]), ht]

theorem sumChunks_adjoint (B : Nat) : ∀ (K : Nat) (l d : List Rat), l.length = K * B → d.length = B →
    dot (sumChunks B K l) d = dot l (repChunks d K)
  | 0, l, d, _, _ => by
    show dot (zerosN B) d = dot l []
    rw [dot_zerosN_left, dot_nil_right]
  | K + 1, l, d, h, hd => by
    have hl : l.length = K * B + B := by rw [h, Nat.add_mul, Nat.one_mul]
    have ht : (l.take B).length = B := length_take_of_le B l (by omega)
    have hr : (l.drop B).length = K * B := by
      rw [List.length_drop]
      omega
    have e : dot l (d ++ repChunks d K) = dot (l.take B ++ l.drop B) (d ++ repChunks d K) := by
      rw [List.take_append_drop]
    show dot (padd (l.take B) (sumChunks B K (l.drop B))) d = dot l (d ++ repChunks d K)
    rw [dot_padd (l.take B) (sumChunks B K (l.drop B)) d (by rw [ht, length_sumChunks B K (l.drop B) hr]),
      sumChunks_adjoint B K (l.drop B) d hr hd, e,
      dot_append (l.take B) (l.drop B) d (repChunks d K) (by rw [ht, hd])]

theorem reduceAKB_adjoint (K B : Nat) : ∀ (A : Nat) (dx δ : List Rat),
    dx.length = A * (K * B) → δ.length = A * B →
    dot (reduceAKB K B A dx) δ = dot dx (bcastAKB K B A δ)
  | 0, dx, _, _, _ => by
    show (0 : Rat) = dot dx []
    rw [dot_nil_right]
  | A + 1, dx, δ, h, hd => by
    have hx : dx.length = A * (K * B) + K * B := by rw [h, Nat.add_mul, Nat.one_mul]
    have hδ : δ.length = A * B + B := by rw [hd, Nat.add_mul, Nat.one_mul]
    have htx : (dx.take (K * B)).length = K * B := length_take_of_le (K * B) dx (by omega)
    have hdx : (dx.drop (K * B)).length = A * (K * B) := by
      rw [List.length_drop]
      omega
    have htd : (δ.take B).length = B := length_take_of_le B δ (by omega)
    have hdd : (δ.drop B).length = A * B := by
      rw [List.length_drop]
      omega
    have e1 : dot (sumChunks B K (dx.take (K * B)) ++ reduceAKB K B A (dx.drop (K * B))) δ =
        dot (sumChunks B K (dx.take (K * B)) ++ reduceAKB K B A (dx.drop (K * B)))
          (δ.take B ++ δ.drop B) := by
      rw [List.take_append_drop]
    have e2 : dot dx (repChunks (δ.take B) K ++ bcastAKB K B A (δ.drop B)) =
        dot (dx.take (K * B) ++ dx.drop (K * B)) (repChunks (δ.take B) K ++ bcastAKB K B A (δ.drop B)) := by
      rw [List.take_append_drop]
    show dot (sumChunks B K (dx.take (K * B)) ++ reduceAKB K B A (dx.drop (K * B))) δ =
      dot dx (repChunks (δ.take B) K ++ bcastAKB K B A (δ.drop B))
    rw [e1, e2,
      dot_append (sumChunks B K (dx.take (K * B))) (reduceAKB K B A (dx.drop (K * B))) (δ.take B) (δ.drop B)
        (by rw [length_sumChunks B K (dx.take (K * B)) htx, htd]),
      dot_append (dx.take (K * B)) (dx.drop (K * B)) (repChunks (δ.take B) K) (bcastAKB K B A (δ.drop B))
        (by rw [htx, length_repChunks, htd]),
      sumChunks_adjoint B K (dx.take (K * B)) (δ.take B) htx htd,
      reduceAKB_adjoint K B A (dx.drop (K * B)) (δ.drop B) hdx hdd]

theorem reduce_sum_adjoint (a : Attr) (x dx δ : List Rat)
    (h : dx.length = a.dimA * (a.dimK * a.dimB)) (hd : δ.length = a.dimA * a.dimB) :
    dot (Prim.jvp .reduce_sum a [x] [dx]) δ = dotAll [dx] (Prim.vjp .reduce_sum a [x] δ) := by
  show dot (reduceAKB a.dimK a.dimB a.dimA dx) δ = dot dx (bcastAKB a.dimK a.dimB a.dimA δ) + 0
  rw [reduceAKB_adjoint a.dimK a.dimB a.dimA dx δ h hd, Rat.add_zero]

theorem reduce_mean_adjoint (a : Attr) (x dx δ : List Rat)
    (h : dx.length = a.dimA * (a.dimK * a.dimB)) (hd : δ.length = a.dimA * a.dimB) :
    dot (Prim.jvp .reduce_mean a [x] [dx]) δ = dotAll [dx] (Prim.vjp .reduce_mean a [x] δ) := by
  show dot (smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA dx)) δ =
    dot dx (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ)) + 0
  rw [dot_smul, reduceAKB_adjoint a.dimK a.dimB a.dimA dx (smul (1 / (a.dimK : Rat)) δ) h
    (by rw [length_smul]; exact hd), Rat.add_zero]

/-- const has no inputs: its tangent is zero and it has no contributions. -/
theorem const_adjoint (a : Attr) (δ : List Rat) :
    dot (Prim.jvp .const a [] []) δ = dotAll [] (Prim.vjp .const a [] δ) := by
  show dot (zeros a.values) δ = 0
  rw [dot_zeros_left]

/-! ## Index maps: permute, transpose, slice, broadcast_to

Each is a gather `y = gather g x` with an index list `g` computed from the
shapes and attributes (`Attr.permuteIdx`, …); its VJP is the scatter of δ
back along `g`, and the law holds for every index list. -/

theorem length_addAt : ∀ (v : List Rat) (j : Nat) (d : Rat), (addAt v j d).length = v.length
  | [], _, _ => rfl
  | _ :: _, 0, _ => rfl
  | _ :: as, j + 1, d => by
    show (addAt as j d).length + 1 = as.length + 1
    rw [length_addAt as j d]

theorem length_scatter (n : Nat) : ∀ (g : List Nat) (δ : List Rat), (scatter n g δ).length = n
  | [], _ => length_zerosN n
  | _ :: _, [] => length_zerosN n
  | j :: js, d :: ds => by
    show (addAt (scatter n js ds) j d).length = n
    rw [length_addAt, length_scatter n js ds]

theorem dot_zerosN_right : ∀ (a : List Rat) (n : Nat), dot a (zerosN n) = 0
  | [], _ => rfl
  | _ :: _, 0 => rfl
  | x :: xs, n + 1 => by
    show x * 0 + dot xs (zerosN n) = 0
    rw [dot_zerosN_right xs n]
    first
      | rw [Rat.mul_zero, Rat.add_zero]
      | grind

theorem dot_addAt : ∀ (a v : List Rat) (j : Nat) (d : Rat), a.length = v.length →
    dot a (addAt v j d) = nth a j * d + dot a v
  | [], [], _, d, _ => by
    show (0 : Rat) = 0 * d + 0
    first
      | rw [Rat.zero_mul, Rat.add_zero]
      | grind
  | [], _ :: _, _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], _, _, h => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, y :: ys, 0, d, _ => by
    show x * (y + d) + dot xs ys = x * d + (x * y + dot xs ys)
    first
      | rw [Rat.mul_add, Rat.add_comm (x * y) (x * d), Rat.add_assoc]
      | grind
  | x :: xs, y :: ys, j + 1, d, h => by
    show x * y + dot xs (addAt ys j d) = nth xs j * d + (x * y + dot xs ys)
    rw [dot_addAt xs ys j d (by first | exact Nat.succ.inj h | simpa using h)]
    first
      | rw [Rat.add_left_comm (x * y) (nth xs j * d) (dot xs ys)]
      | grind

theorem gather_adjoint (n : Nat) : ∀ (g : List Nat) (dx δ : List Rat), dx.length = n →
    dot (gather g dx) δ = dot dx (scatter n g δ)
  | [], dx, _, _ => by
    show (0 : Rat) = dot dx (zerosN n)
    rw [dot_zerosN_right]
  | _ :: _, dx, [], _ => by
    show (0 : Rat) = dot dx (zerosN n)
    rw [dot_zerosN_right]
  | j :: js, dx, d :: ds, h => by
    show nth dx j * d + dot (gather js dx) ds = dot dx (addAt (scatter n js ds) j d)
    rw [dot_addAt dx (scatter n js ds) j d (by rw [length_scatter, h]), gather_adjoint n js dx ds h]

theorem permute_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .permute a [x] [dx]) δ = dotAll [dx] (Prim.vjp .permute a [x] δ) := by
  show dot (gather a.permuteIdx dx) δ = dot dx (scatter (size a.shape) a.permuteIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.permuteIdx dx δ h, Rat.add_zero]

theorem transpose_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .transpose a [x] [dx]) δ = dotAll [dx] (Prim.vjp .transpose a [x] δ) := by
  show dot (gather a.transposeIdx dx) δ = dot dx (scatter (size a.shape) a.transposeIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.transposeIdx dx δ h, Rat.add_zero]

theorem slice_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .slice a [x] [dx]) δ = dotAll [dx] (Prim.vjp .slice a [x] δ) := by
  show dot (gather a.sliceIdx dx) δ = dot dx (scatter (size a.shape) a.sliceIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.sliceIdx dx δ h, Rat.add_zero]

theorem broadcast_to_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .broadcast_to a [x] [dx]) δ = dotAll [dx] (Prim.vjp .broadcast_to a [x] δ) := by
  show dot (gather a.bcastIdx dx) δ = dot dx (scatter (size a.shape) a.bcastIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.bcastIdx dx δ h, Rat.add_zero]

/-- tile: a gather along `Attr.tileIdx` (each output coordinate reduced
modulo the input's extent); the VJP sums the copies back (the scatter). -/
theorem tile_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .tile a [x] [dx]) δ = dotAll [dx] (Prim.vjp .tile a [x] δ) := by
  show dot (gather a.tileIdx dx) δ = dot dx (scatter (size a.shape) a.tileIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.tileIdx dx δ h, Rat.add_zero]

/-- The registry's gather (constant indices along the axis): a gather
along `Attr.gatherIdx`, its VJP the scatter along the same list. -/
theorem gather_op_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .gather a [x] [dx]) δ = dotAll [dx] (Prim.vjp .gather a [x] δ) := by
  show dot (gather a.gatherIdx dx) δ = dot dx (scatter (size a.shape) a.gatherIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.gatherIdx dx δ h, Rat.add_zero]

/-- pad: its JVP is the gather along `Attr.padIdx` (fill positions read
past the end: zero tangent), its VJP the scatter along the same list (fill
positions add nothing). The constant fill does not enter the JVP. -/
theorem pad_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape) :
    dot (Prim.jvp .pad a [x] [dx]) δ = dotAll [dx] (Prim.vjp .pad a [x] δ) := by
  show dot (gather a.padIdx dx) δ = dot dx (scatter (size a.shape) a.padIdx δ) + 0
  rw [gather_adjoint (size a.shape) a.padIdx dx δ h, Rat.add_zero]

/-- The tensors have the element counts of the shapes. -/
def SizesMatch : List (List Nat) → List (List Rat) → Prop
  | [], [] => True
  | s :: ss, d :: ds => d.length = size s ∧ SizesMatch ss ds
  | _, _ => False

theorem length_catAll : ∀ (ss : List (List Nat)) (ds : List (List Rat)), SizesMatch ss ds →
    (catAll ds).length = totalSize ss
  | [], [], _ => rfl
  | [], _ :: _, h => False.elim h
  | _ :: _, [], h => False.elim h
  | s :: ss, d :: ds, h => by
    have h' : d.length = size s ∧ SizesMatch ss ds := h
    show (d ++ catAll ds).length = size s + totalSize ss
    rw [List.length_append, h'.1, length_catAll ss ds h'.2]

theorem dot_catAll : ∀ (ss : List (List Nat)) (ds : List (List Rat)) (v : List Rat), SizesMatch ss ds →
    v.length = totalSize ss → dot (catAll ds) v = dotAll ds (splitBy ss v)
  | [], [], v, _, _ => by
    show dot [] v = 0
    rfl
  | [], _ :: _, _, h, _ => False.elim h
  | _ :: _, [], _, h, _ => False.elim h
  | s :: ss, d :: ds, v, h, hv => by
    have h' : d.length = size s ∧ SizesMatch ss ds := h
    have hvl : v.length = size s + totalSize ss := hv
    have ht : (v.take (size s)).length = size s := length_take_of_le (size s) v (by omega)
    have hr : (v.drop (size s)).length = totalSize ss := by
      rw [List.length_drop]
      omega
    have e : dot (d ++ catAll ds) v = dot (d ++ catAll ds) (v.take (size s) ++ v.drop (size s)) := by
      rw [List.take_append_drop]
    show dot (d ++ catAll ds) v = dot d (v.take (size s)) + dotAll ds (splitBy ss (v.drop (size s)))
    rw [e, dot_append d (catAll ds) (v.take (size s)) (v.drop (size s)) (by rw [h'.1, ht]),
      dot_catAll ss ds (v.drop (size s)) h'.2 hr]

/-- concat: a gather from the concatenated inputs; the VJP scatters δ back
and splits it by the inputs' sizes. -/
theorem concat_adjoint (a : Attr) (xs dxs : List (List Rat)) (δ : List Rat)
    (h : SizesMatch a.shapes dxs) :
    dot (Prim.jvp .concat a xs dxs) δ = dotAll dxs (Prim.vjp .concat a xs δ) := by
  show dot (gather a.concatIdx (catAll dxs)) δ =
    dotAll dxs (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ))
  rw [gather_adjoint (totalSize a.shapes) a.concatIdx (catAll dxs) δ (length_catAll a.shapes dxs h),
    dot_catAll a.shapes dxs _ h (length_scatter (totalSize a.shapes) a.concatIdx δ)]

/-- scatter (ScatterElements, reduction none): a gather from x ++ u along
`Attr.scatterIdx`; the VJP scatters δ back and splits it by the two
shapes (x's cotangent is δ with the written positions zeroed, u's is δ at
the targets). The same law as concat's. -/
theorem scatter_op_adjoint (a : Attr) (xs dxs : List (List Rat)) (δ : List Rat)
    (h : SizesMatch a.shapes dxs) :
    dot (Prim.jvp .scatter a xs dxs) δ = dotAll dxs (Prim.vjp .scatter a xs δ) := by
  show dot (gather a.scatterIdx (catAll dxs)) δ =
    dotAll dxs (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ))
  rw [gather_adjoint (totalSize a.shapes) a.scatterIdx (catAll dxs) δ (length_catAll a.shapes dxs h),
    dot_catAll a.shapes dxs _ h (length_scatter (totalSize a.shapes) a.scatterIdx δ)]

/-! ## linear

linear(x, W, b) = reduce_sum over the last axis of the [B, m, n] view
x[i, j]·W[o, j], plus b[o] broadcast: gathers, a pointwise product and the
axis reduction, so its law follows from `gather_adjoint`, `dot_pmul` and
`reduceAKB_adjoint`. -/

theorem length_uptoFrom : ∀ k n : Nat, (uptoFrom k n).length = n
  | _, 0 => rfl
  | k, n + 1 => by
    show (uptoFrom (k + 1) n).length + 1 = n + 1
    rw [length_uptoFrom (k + 1) n]

theorem length_upto (n : Nat) : (upto n).length = n := length_uptoFrom 0 n

theorem length_gather : ∀ (g : List Nat) (x : List Rat), (gather g x).length = g.length
  | [], _ => rfl
  | _ :: js, x => by
    show (gather js x).length + 1 = js.length + 1
    rw [length_gather js x]

theorem length_idx (N : Nat) (f : Nat → Nat) : ((upto N).map f).length = N := by
  rw [List.length_map, length_upto]

theorem pmul_comm : ∀ a b : List Rat, pmul a b = pmul b a
  | [], [] => rfl
  | [], _ :: _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, y :: ys => by
    show x * y :: pmul xs ys = y * x :: pmul ys xs
    rw [pmul_comm xs ys, Rat.mul_comm x y]

theorem length_reduceAKB (K B : Nat) : ∀ (A : Nat) (l : List Rat), l.length = A * (K * B) →
    (reduceAKB K B A l).length = A * B
  | 0, _, _ => by
    show 0 = 0 * B
    rw [Nat.zero_mul]
  | A + 1, l, h => by
    have hx : l.length = A * (K * B) + K * B := by rw [h, Nat.add_mul, Nat.one_mul]
    have htx : (l.take (K * B)).length = K * B := length_take_of_le (K * B) l (by omega)
    have hdx : (l.drop (K * B)).length = A * (K * B) := by
      rw [List.length_drop]
      omega
    show (sumChunks B K (l.take (K * B)) ++ reduceAKB K B A (l.drop (K * B))).length = (A + 1) * B
    rw [List.length_append, length_sumChunks B K (l.take (K * B)) htx,
      length_reduceAKB K B A (l.drop (K * B)) hdx, Nat.add_mul, Nat.one_mul]
    omega

theorem length_linGx (a : Attr) : a.linGx.length = a.linB * a.linM * (a.linN * 1) := by
  first
    | exact length_idx _ _
    | (unfold Attr.linGx; exact length_idx _ _)

theorem length_linGw (a : Attr) : a.linGw.length = a.linB * a.linM * (a.linN * 1) := by
  first
    | exact length_idx _ _
    | (unfold Attr.linGw; exact length_idx _ _)

theorem length_linGb (a : Attr) : a.linGb.length = a.linB * a.linM * 1 := by
  first
    | exact length_idx _ _
    | (unfold Attr.linGb; exact length_idx _ _)

theorem linear_adjoint (a : Attr) (x w b dx dw db δ : List Rat)
    (hdx : dx.length = a.linSx) (hdw : dw.length = a.linSw) (hdb : db.length = a.linSb)
    (hδ : δ.length = a.linB * a.linM * 1) :
    dot (Prim.jvp .linear a [x, w, b] [dx, dw, db]) δ =
      dotAll [dx, dw, db] (Prim.vjp .linear a [x, w, b] δ) := by
  show dot (padd (reduceAKB a.linN 1 (a.linB * a.linM)
        (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))))
      (gather a.linGb db)) δ =
    dot dx (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ))) +
      (dot dw (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ))) +
        (dot db (scatter a.linSb a.linGb δ) + 0))
  have h1 : (gather a.linGx dx).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_gather, length_linGx]
  have h2 : (gather a.linGw w).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_gather, length_linGw]
  have h3 : (gather a.linGx x).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_gather, length_linGx]
  have h4 : (gather a.linGw dw).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_gather, length_linGw]
  have hP1 : (pmul (gather a.linGx dx) (gather a.linGw w)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx dx) (gather a.linGw w) (by rw [h1, h2]), h1]
  have hP2 : (pmul (gather a.linGx x) (gather a.linGw dw)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx x) (gather a.linGw dw) (by rw [h3, h4]), h3]
  have hP : (padd (pmul (gather a.linGx dx) (gather a.linGw w))
      (pmul (gather a.linGx x) (gather a.linGw dw))).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_padd_eq (pmul (gather a.linGx dx) (gather a.linGw w))
      (pmul (gather a.linGx x) (gather a.linGw dw)) (by rw [hP1, hP2]), hP1]
  have hR : (reduceAKB a.linN 1 (a.linB * a.linM) (padd (pmul (gather a.linGx dx) (gather a.linGw w))
      (pmul (gather a.linGx x) (gather a.linGw dw)))).length = (gather a.linGb db).length := by
    rw [length_reduceAKB a.linN 1 (a.linB * a.linM) _ hP, length_gather, length_linGb]
  rw [dot_padd _ _ δ hR,
    reduceAKB_adjoint a.linN 1 (a.linB * a.linM) _ δ hP hδ,
    dot_padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))
      (bcastAKB a.linN 1 (a.linB * a.linM) δ) (by rw [hP1, hP2]),
    pmul_comm (gather a.linGx dx) (gather a.linGw w),
    dot_pmul (gather a.linGw w) (gather a.linGx dx) (bcastAKB a.linN 1 (a.linB * a.linM) δ),
    gather_adjoint a.linSx a.linGx dx _ hdx,
    dot_pmul (gather a.linGx x) (gather a.linGw dw) (bcastAKB a.linN 1 (a.linB * a.linM) δ),
    gather_adjoint a.linSw a.linGw dw _ hdw,
    gather_adjoint a.linSb a.linGb db δ hdb]
  first
    | rw [Rat.add_zero, Rat.add_assoc]
    | grind

/-! ## matmul

matmul(a, b) is the reduction over k of the [batch, m, n, k] view
a[β, i, l]·b[β, l, j]: gathers, a pointwise product and the axis reduction,
as for linear. -/

theorem length_mmGa (a : Attr) : a.mmGa.length = a.mmOut * (a.mmK * 1) := by
  first
    | exact length_idx _ _
    | (unfold Attr.mmGa; exact length_idx _ _)

theorem length_mmGb (a : Attr) : a.mmGb.length = a.mmOut * (a.mmK * 1) := by
  first
    | exact length_idx _ _
    | (unfold Attr.mmGb; exact length_idx _ _)

theorem matmul_adjoint (a : Attr) (x y dx dy δ : List Rat)
    (hdx : dx.length = size (nthL a.shapes 0)) (hdy : dy.length = size (nthL a.shapes 1))
    (hδ : δ.length = a.mmOut * 1) :
    dot (Prim.jvp .matmul a [x, y] [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp .matmul a [x, y] δ) := by
  show dot (reduceAKB a.mmK 1 a.mmOut
      (padd (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy)))) δ =
    dot dx (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ))) +
      (dot dy (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ))) + 0)
  have h1 : (gather a.mmGa dx).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGa]
  have h2 : (gather a.mmGb y).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGb]
  have h3 : (gather a.mmGa x).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGa]
  have h4 : (gather a.mmGb dy).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGb]
  have hP1 : (pmul (gather a.mmGa dx) (gather a.mmGb y)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa dx) (gather a.mmGb y) (by rw [h1, h2]), h1]
  have hP2 : (pmul (gather a.mmGa x) (gather a.mmGb dy)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa x) (gather a.mmGb dy) (by rw [h3, h4]), h3]
  have hP : (padd (pmul (gather a.mmGa dx) (gather a.mmGb y))
      (pmul (gather a.mmGa x) (gather a.mmGb dy))).length = a.mmOut * (a.mmK * 1) := by
    rw [length_padd_eq (pmul (gather a.mmGa dx) (gather a.mmGb y))
      (pmul (gather a.mmGa x) (gather a.mmGb dy)) (by rw [hP1, hP2]), hP1]
  rw [reduceAKB_adjoint a.mmK 1 a.mmOut _ δ hP hδ,
    dot_padd (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy))
      (bcastAKB a.mmK 1 a.mmOut δ) (by rw [hP1, hP2]),
    pmul_comm (gather a.mmGa dx) (gather a.mmGb y),
    dot_pmul (gather a.mmGb y) (gather a.mmGa dx) (bcastAKB a.mmK 1 a.mmOut δ),
    gather_adjoint (size (nthL a.shapes 0)) a.mmGa dx _ hdx,
    dot_pmul (gather a.mmGa x) (gather a.mmGb dy) (bcastAKB a.mmK 1 a.mmOut δ),
    gather_adjoint (size (nthL a.shapes 1)) a.mmGb dy _ hdy, Rat.add_zero]

/-! ## Linearity of the VJP in δ and zero preservation

The building blocks; every VJP of `Tlcheck.Spec` is built from `pmul f ·`,
`smul c ·`, the identity, `bcast · x` and `zeros x`. -/

theorem pmul_padd : ∀ f a b : List Rat, pmul f (padd a b) = padd (pmul f a) (pmul f b)
  | [], _, _ => rfl
  | _ :: _, [], _ => rfl
  | _ :: _, _ :: _, [] => rfl
  | x :: xs, y :: ys, z :: zs => by
    show x * (y + z) :: pmul xs (padd ys zs) = (x * y + x * z) :: padd (pmul xs ys) (pmul xs zs)
    rw [pmul_padd xs ys zs, Rat.mul_add]

theorem pmul_smul (k : Rat) : ∀ f a : List Rat, pmul f (smul k a) = smul k (pmul f a)
  | [], _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, y :: ys => by
    show x * (k * y) :: pmul xs (smul k ys) = k * (x * y) :: smul k (pmul xs ys)
    rw [pmul_smul k xs ys]
    first
      | rw [← Rat.mul_assoc, Rat.mul_comm x k, Rat.mul_assoc]
      | grind

theorem pmul_zeros : ∀ f a : List Rat, pmul f (zeros a) = zeros (pmul f a)
  | [], _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, _ :: ys => by
    show x * 0 :: pmul xs (zeros ys) = 0 :: zeros (pmul xs ys)
    rw [pmul_zeros xs ys, Rat.mul_zero]

theorem smul_padd (c : Rat) : ∀ a b : List Rat, smul c (padd a b) = padd (smul c a) (smul c b)
  | [], _ => rfl
  | _ :: _, [] => rfl
  | x :: xs, y :: ys => by
    show c * (x + y) :: smul c (padd xs ys) = (c * x + c * y) :: padd (smul c xs) (smul c ys)
    rw [smul_padd c xs ys, Rat.mul_add]

theorem smul_smul (c k : Rat) : ∀ a : List Rat, smul c (smul k a) = smul k (smul c a)
  | [] => rfl
  | x :: xs => by
    show c * (k * x) :: smul c (smul k xs) = k * (c * x) :: smul k (smul c xs)
    rw [smul_smul c k xs]
    first
      | rw [← Rat.mul_assoc, Rat.mul_comm c k, Rat.mul_assoc]
      | grind

theorem smul_zeros (c : Rat) : ∀ a : List Rat, smul c (zeros a) = zeros a
  | [] => rfl
  | _ :: xs => by
    show c * 0 :: smul c (zeros xs) = 0 :: zeros xs
    rw [smul_zeros c xs, Rat.mul_zero]

theorem bcast_add (d e : Rat) : ∀ x : List Rat, bcast (d + e) x = padd (bcast d x) (bcast e x)
  | [] => rfl
  | _ :: xs => by
    show (d + e) :: bcast (d + e) xs = (d + e) :: padd (bcast d xs) (bcast e xs)
    rw [bcast_add d e xs]

theorem bcast_mul (k d : Rat) : ∀ x : List Rat, bcast (k * d) x = smul k (bcast d x)
  | [] => rfl
  | _ :: xs => by
    show (k * d) :: bcast (k * d) xs = (k * d) :: smul k (bcast d xs)
    rw [bcast_mul k d xs]

theorem bcast_zero : ∀ x : List Rat, bcast 0 x = zeros x
  | [] => rfl
  | _ :: xs => by
    show (0 : Rat) :: bcast 0 xs = 0 :: zeros xs
    rw [bcast_zero xs]

theorem zeros_smul (c : Rat) : ∀ a : List Rat, zeros (smul c a) = zeros a
  | [] => rfl
  | _ :: as => by
    show (0 : Rat) :: zeros (smul c as) = 0 :: zeros as
    rw [zeros_smul c as]

theorem zeros_bcast (d : Rat) : ∀ a : List Rat, zeros (bcast d a) = zeros a
  | [] => rfl
  | _ :: as => by
    show (0 : Rat) :: zeros (bcast d as) = 0 :: zeros as
    rw [zeros_bcast d as]

/-- smul by a sum, a product or zero, with the scalar identity left as a
side goal (closed at the use by a term, `grind` its fallback arm). -/
theorem smul_add_left (p q r : Rat) (h : p = q + r) :
    ∀ a : List Rat, smul p a = padd (smul q a) (smul r a)
  | [] => rfl
  | x :: xs => by
    show p * x :: smul p xs = (q * x + r * x) :: padd (smul q xs) (smul r xs)
    rw [smul_add_left p q r h xs, h, Rat.add_mul]

theorem smul_mul_left (p k q : Rat) (h : p = k * q) :
    ∀ a : List Rat, smul p a = smul k (smul q a)
  | [] => rfl
  | x :: xs => by
    show p * x :: smul p xs = k * (q * x) :: smul k (smul q xs)
    rw [smul_mul_left p k q h xs, h, Rat.mul_assoc]

theorem smul_zero_left (p : Rat) (h : p = 0) : ∀ a : List Rat, smul p a = zeros a
  | [] => rfl
  | x :: xs => by
    show p * x :: smul p xs = 0 :: zeros xs
    rw [smul_zero_left p h xs, h, Rat.zero_mul]

/-- Pointwise sums, multiples and zeros of lists of contributions. -/
def paddAll : List (List Rat) → List (List Rat) → List (List Rat)
  | u :: us, v :: vs => padd u v :: paddAll us vs
  | _, _ => []

def smulAll (k : Rat) : List (List Rat) → List (List Rat)
  | [] => []
  | u :: us => smul k u :: smulAll k us

def zerosAll : List (List Rat) → List (List Rat)
  | [] => []
  | u :: us => zeros u :: zerosAll us

/-- The VJP of every unary primitive whose VJP is a pointwise product with
a factor of x (square, relu, abs): linear in δ, zero at δ = 0. -/
theorem relu_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .relu a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .relu a [x] δ₁) (Prim.vjp .relu a [x] δ₂) ∧
    Prim.vjp .relu a [x] (smul k δ₁) = smulAll k (Prim.vjp .relu a [x] δ₁) ∧
    Prim.vjp .relu a [x] (zeros δ₁) = zerosAll (Prim.vjp .relu a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap reluD x) (padd δ₁ δ₂)] = [padd (pmul (pmap reluD x) δ₁) (pmul (pmap reluD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap reluD x) (smul k δ₁)] = [smul k (pmul (pmap reluD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap reluD x) (zeros δ₁)] = [zeros (pmul (pmap reluD x) δ₁)]
    rw [pmul_zeros]

theorem shrink_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .shrink a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .shrink a [x] δ₁) (Prim.vjp .shrink a [x] δ₂) ∧
    Prim.vjp .shrink a [x] (smul k δ₁) = smulAll k (Prim.vjp .shrink a [x] δ₁) ∧
    Prim.vjp .shrink a [x] (zeros δ₁) = zerosAll (Prim.vjp .shrink a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap (shrinkD a.lo) x) (padd δ₁ δ₂)] =
      [padd (pmul (pmap (shrinkD a.lo) x) δ₁) (pmul (pmap (shrinkD a.lo) x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap (shrinkD a.lo) x) (smul k δ₁)] = [smul k (pmul (pmap (shrinkD a.lo) x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap (shrinkD a.lo) x) (zeros δ₁)] = [zeros (pmul (pmap (shrinkD a.lo) x) δ₁)]
    rw [pmul_zeros]

theorem sign_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .sign a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .sign a [x] δ₁) (Prim.vjp .sign a [x] δ₂) ∧
    Prim.vjp .sign a [x] (smul k δ₁) = smulAll k (Prim.vjp .sign a [x] δ₁) ∧
    Prim.vjp .sign a [x] (zeros δ₁) = zerosAll (Prim.vjp .sign a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap signD x) (padd δ₁ δ₂)] = [padd (pmul (pmap signD x) δ₁) (pmul (pmap signD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap signD x) (smul k δ₁)] = [smul k (pmul (pmap signD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap signD x) (zeros δ₁)] = [zeros (pmul (pmap signD x) δ₁)]
    rw [pmul_zeros]

theorem square_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .square a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .square a [x] δ₁) (Prim.vjp .square a [x] δ₂) ∧
    Prim.vjp .square a [x] (smul k δ₁) = smulAll k (Prim.vjp .square a [x] δ₁) ∧
    Prim.vjp .square a [x] (zeros δ₁) = zerosAll (Prim.vjp .square a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap squareD x) (padd δ₁ δ₂)] = [padd (pmul (pmap squareD x) δ₁) (pmul (pmap squareD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap squareD x) (smul k δ₁)] = [smul k (pmul (pmap squareD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap squareD x) (zeros δ₁)] = [zeros (pmul (pmap squareD x) δ₁)]
    rw [pmul_zeros]

theorem abs_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .abs a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .abs a [x] δ₁) (Prim.vjp .abs a [x] δ₂) ∧
    Prim.vjp .abs a [x] (smul k δ₁) = smulAll k (Prim.vjp .abs a [x] δ₁) ∧
    Prim.vjp .abs a [x] (zeros δ₁) = zerosAll (Prim.vjp .abs a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul (pmap absD x) (padd δ₁ δ₂)] = [padd (pmul (pmap absD x) δ₁) (pmul (pmap absD x) δ₂)]
    rw [pmul_padd]
  · show [pmul (pmap absD x) (smul k δ₁)] = [smul k (pmul (pmap absD x) δ₁)]
    rw [pmul_smul]
  · show [pmul (pmap absD x) (zeros δ₁)] = [zeros (pmul (pmap absD x) δ₁)]
    rw [pmul_zeros]

theorem mul_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .mul a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .mul a [x, y] δ₁) (Prim.vjp .mul a [x, y] δ₂) ∧
    Prim.vjp .mul a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .mul a [x, y] δ₁) ∧
    Prim.vjp .mul a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .mul a [x, y] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [pmul y (padd δ₁ δ₂), pmul x (padd δ₁ δ₂)] =
      [padd (pmul y δ₁) (pmul y δ₂), padd (pmul x δ₁) (pmul x δ₂)]
    rw [pmul_padd, pmul_padd]
  · show [pmul y (smul k δ₁), pmul x (smul k δ₁)] = [smul k (pmul y δ₁), smul k (pmul x δ₁)]
    rw [pmul_smul, pmul_smul]
  · show [pmul y (zeros δ₁), pmul x (zeros δ₁)] = [zeros (pmul y δ₁), zeros (pmul x δ₁)]
    rw [pmul_zeros, pmul_zeros]

theorem scale_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .scale a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .scale a [x] δ₁) (Prim.vjp .scale a [x] δ₂) ∧
    Prim.vjp .scale a [x] (smul k δ₁) = smulAll k (Prim.vjp .scale a [x] δ₁) ∧
    Prim.vjp .scale a [x] (zeros δ₁) = zerosAll (Prim.vjp .scale a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [smul a.c (padd δ₁ δ₂)] = [padd (smul a.c δ₁) (smul a.c δ₂)]
    rw [smul_padd]
  · show [smul a.c (smul k δ₁)] = [smul k (smul a.c δ₁)]
    rw [smul_smul]
  · show [smul a.c (zeros δ₁)] = [zeros (smul a.c δ₁)]
    rw [smul_zeros, zeros_smul]

theorem neg_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .neg a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .neg a [x] δ₁) (Prim.vjp .neg a [x] δ₂) ∧
    Prim.vjp .neg a [x] (smul k δ₁) = smulAll k (Prim.vjp .neg a [x] δ₁) ∧
    Prim.vjp .neg a [x] (zeros δ₁) = zerosAll (Prim.vjp .neg a [x] δ₁) := by
  have h := scale_vjp_linear ⟨-1, 0, 0, 0, [], 0, [], 0, 0, [], [], []⟩ k x δ₁ δ₂
  exact h

theorem mse_loss_vjp_linear (a : Attr) (k d e : Rat) (x y : List Rat) :
    Prim.vjp .mse_loss a [x, y] [d + e] =
      paddAll (Prim.vjp .mse_loss a [x, y] [d]) (Prim.vjp .mse_loss a [x, y] [e]) ∧
    Prim.vjp .mse_loss a [x, y] [k * d] = smulAll k (Prim.vjp .mse_loss a [x, y] [d]) ∧
    Prim.vjp .mse_loss a [x, y] [0] = zerosAll (Prim.vjp .mse_loss a [x, y] [d]) := by
  refine ⟨?_, ?_, ?_⟩
  · show [smul (2 / mseN x.length * (d + e)) (resid x y), smul (-(2 / mseN x.length * (d + e))) (resid x y)] =
      [padd (smul (2 / mseN x.length * d) (resid x y)) (smul (2 / mseN x.length * e) (resid x y)),
        padd (smul (-(2 / mseN x.length * d)) (resid x y)) (smul (-(2 / mseN x.length * e)) (resid x y))]
    rw [smul_add_left (2 / mseN x.length * (d + e)) (2 / mseN x.length * d) (2 / mseN x.length * e)
        (by first | exact Rat.mul_add (2 / mseN x.length) d e | grind) (resid x y),
      smul_add_left (-(2 / mseN x.length * (d + e))) (-(2 / mseN x.length * d)) (-(2 / mseN x.length * e))
        (by
          first
            | exact (congrArg (fun z : Rat => -z) (Rat.mul_add (2 / mseN x.length) d e)).trans
                (neg_add' (2 / mseN x.length * d) (2 / mseN x.length * e))
            | grind) (resid x y)]
  · show [smul (2 / mseN x.length * (k * d)) (resid x y), smul (-(2 / mseN x.length * (k * d))) (resid x y)] =
      [smul k (smul (2 / mseN x.length * d) (resid x y)), smul k (smul (-(2 / mseN x.length * d)) (resid x y))]
    rw [smul_mul_left (2 / mseN x.length * (k * d)) k (2 / mseN x.length * d)
        (by first | exact rmul_left_comm (2 / mseN x.length) k d | grind) (resid x y),
      smul_mul_left (-(2 / mseN x.length * (k * d))) k (-(2 / mseN x.length * d))
        (by
          first
            | exact (congrArg (fun z : Rat => -z) (rmul_left_comm (2 / mseN x.length) k d)).trans
                (Rat.mul_neg k (2 / mseN x.length * d)).symm
            | grind) (resid x y)]
  · show [smul (2 / mseN x.length * 0) (resid x y), smul (-(2 / mseN x.length * 0)) (resid x y)] =
      [zeros (smul (2 / mseN x.length * d) (resid x y)), zeros (smul (-(2 / mseN x.length * d)) (resid x y))]
    rw [zeros_smul (2 / mseN x.length * d) (resid x y), zeros_smul (-(2 / mseN x.length * d)) (resid x y),
      smul_zero_left (2 / mseN x.length * 0) (by first | exact Rat.mul_zero (2 / mseN x.length) | grind) (resid x y),
      smul_zero_left (-(2 / mseN x.length * 0))
        (by
          first
            | exact (congrArg (fun z : Rat => -z) (Rat.mul_zero (2 / mseN x.length))).trans
                (by decide +kernel : -(0 : Rat) = 0)
            | grind) (resid x y)]

theorem sum_vjp_linear (a : Attr) (k d e : Rat) (x : List Rat) :
    Prim.vjp .sum a [x] [d + e] = paddAll (Prim.vjp .sum a [x] [d]) (Prim.vjp .sum a [x] [e]) ∧
    Prim.vjp .sum a [x] [k * d] = smulAll k (Prim.vjp .sum a [x] [d]) ∧
    Prim.vjp .sum a [x] [0] = zerosAll (Prim.vjp .sum a [x] [d]) := by
  refine ⟨?_, ?_, ?_⟩
  · show [bcast (d + e) x] = [padd (bcast d x) (bcast e x)]
    rw [bcast_add]
  · show [bcast (k * d) x] = [smul k (bcast d x)]
    rw [bcast_mul]
  · show [bcast 0 x] = [zeros (bcast d x)]
    rw [bcast_zero, zeros_bcast]

/-- Every VJP that is a list of pointwise products with factors of the
inputs (mul, div, max, min, square, inv, relu, abs, clamp) is linear in δ
and zero at δ = 0. -/
theorem pmulAll_linear (fs : List (List Rat)) (k : Rat) (δ₁ δ₂ : List Rat) :
    fs.map (fun f => pmul f (padd δ₁ δ₂)) = paddAll (fs.map (fun f => pmul f δ₁)) (fs.map (fun f => pmul f δ₂)) ∧
    fs.map (fun f => pmul f (smul k δ₁)) = smulAll k (fs.map (fun f => pmul f δ₁)) ∧
    fs.map (fun f => pmul f (zeros δ₁)) = zerosAll (fs.map (fun f => pmul f δ₁)) := by
  induction fs with
  | nil => exact ⟨rfl, rfl, rfl⟩
  | cons f fs ih =>
    obtain ⟨h1, h2, h3⟩ := ih
    refine ⟨?_, ?_, ?_⟩
    · show pmul f (padd δ₁ δ₂) :: fs.map (fun f => pmul f (padd δ₁ δ₂)) =
        padd (pmul f δ₁) (pmul f δ₂) :: paddAll (fs.map (fun f => pmul f δ₁)) (fs.map (fun f => pmul f δ₂))
      rw [pmul_padd, h1]
    · show pmul f (smul k δ₁) :: fs.map (fun f => pmul f (smul k δ₁)) =
        smul k (pmul f δ₁) :: smulAll k (fs.map (fun f => pmul f δ₁))
      rw [pmul_smul, h2]
    · show pmul f (zeros δ₁) :: fs.map (fun f => pmul f (zeros δ₁)) =
        zeros (pmul f δ₁) :: zerosAll (fs.map (fun f => pmul f δ₁))
      rw [pmul_zeros, h3]

theorem div_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .div a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .div a [x, y] δ₁) (Prim.vjp .div a [x, y] δ₂) ∧
    Prim.vjp .div a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .div a [x, y] δ₁) ∧
    Prim.vjp .div a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .div a [x, y] δ₁) :=
  pmulAll_linear [pmap2 divDa x y, pmap2 divDb x y] k δ₁ δ₂

theorem max_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .max a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .max a [x, y] δ₁) (Prim.vjp .max a [x, y] δ₂) ∧
    Prim.vjp .max a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .max a [x, y] δ₁) ∧
    Prim.vjp .max a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .max a [x, y] δ₁) :=
  pmulAll_linear [pmap2 maxDa x y, pmap2 maxDb x y] k δ₁ δ₂

theorem min_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .min a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .min a [x, y] δ₁) (Prim.vjp .min a [x, y] δ₂) ∧
    Prim.vjp .min a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .min a [x, y] δ₁) ∧
    Prim.vjp .min a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .min a [x, y] δ₁) :=
  pmulAll_linear [pmap2 minDa x y, pmap2 minDb x y] k δ₁ δ₂

theorem inv_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .inv a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .inv a [x] δ₁) (Prim.vjp .inv a [x] δ₂) ∧
    Prim.vjp .inv a [x] (smul k δ₁) = smulAll k (Prim.vjp .inv a [x] δ₁) ∧
    Prim.vjp .inv a [x] (zeros δ₁) = zerosAll (Prim.vjp .inv a [x] δ₁) :=
  pmulAll_linear [pmap invD x] k δ₁ δ₂

theorem sqrt_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .sqrt a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .sqrt a [x] δ₁) (Prim.vjp .sqrt a [x] δ₂) ∧
    Prim.vjp .sqrt a [x] (smul k δ₁) = smulAll k (Prim.vjp .sqrt a [x] δ₁) ∧
    Prim.vjp .sqrt a [x] (zeros δ₁) = zerosAll (Prim.vjp .sqrt a [x] δ₁) :=
  pmulAll_linear [pmap sqrtD x] k δ₁ δ₂

theorem clamp_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .clamp a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .clamp a [x] δ₁) (Prim.vjp .clamp a [x] δ₂) ∧
    Prim.vjp .clamp a [x] (smul k δ₁) = smulAll k (Prim.vjp .clamp a [x] δ₁) ∧
    Prim.vjp .clamp a [x] (zeros δ₁) = zerosAll (Prim.vjp .clamp a [x] δ₁) :=
  pmulAll_linear [pmap (clampD a.lo a.hi) x] k δ₁ δ₂

/-! ## VJP linearity of the index maps: the scatter is linear -/

theorem addAt_padd : ∀ (u w : List Rat) (j : Nat) (d e : Rat), u.length = w.length →
    addAt (padd u w) j (d + e) = padd (addAt u j d) (addAt w j e)
  | [], [], _, _, _, _ => rfl
  | [], _ :: _, _, _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], _, _, _, h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, 0, d, e, _ => by
    show (a + b + (d + e)) :: padd as bs = (a + d + (b + e)) :: padd as bs
    first
      | rw [Rat.add_assoc a b (d + e), Rat.add_left_comm b d e, ← Rat.add_assoc a d (b + e)]
      | grind
  | a :: as, b :: bs, j + 1, d, e, h => by
    show (a + b) :: addAt (padd as bs) j (d + e) = (a + b) :: padd (addAt as j d) (addAt bs j e)
    rw [addAt_padd as bs j d e (Nat.succ.inj h)]

theorem padd_zerosN_self : ∀ n : Nat, padd (zerosN n) (zerosN n) = zerosN n
  | 0 => rfl
  | n + 1 => by
    show (0 + 0) :: padd (zerosN n) (zerosN n) = 0 :: zerosN n
    rw [Rat.add_zero, padd_zerosN_self n]

/-- scatter n g (δ₁ + δ₂) = scatter n g δ₁ + scatter n g δ₂ for cotangents of one length. -/
theorem scatter_padd (n : Nat) : ∀ (g : List Nat) (δ₁ δ₂ : List Rat), δ₁.length = δ₂.length →
    scatter n g (padd δ₁ δ₂) = padd (scatter n g δ₁) (scatter n g δ₂)
  | [], _, _, _ => by
    show zerosN n = padd (zerosN n) (zerosN n)
    rw [padd_zerosN_self]
  | _ :: _, [], [], _ => by
    show zerosN n = padd (zerosN n) (zerosN n)
    rw [padd_zerosN_self]
  | _ :: _, [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | j :: js, d :: ds, e :: es, h => by
    show addAt (scatter n js (padd ds es)) j (d + e) =
      padd (addAt (scatter n js ds) j d) (addAt (scatter n js es) j e)
    rw [scatter_padd n js ds es (Nat.succ.inj h),
      addAt_padd (scatter n js ds) (scatter n js es) j d e (by rw [length_scatter, length_scatter])]

theorem addAt_smul (k : Rat) : ∀ (u : List Rat) (j : Nat) (d : Rat), addAt (smul k u) j (k * d) = smul k (addAt u j d)
  | [], _, _ => rfl
  | a :: as, 0, d => by
    show (k * a + k * d) :: smul k as = k * (a + d) :: smul k as
    rw [Rat.mul_add]
  | a :: as, j + 1, d => by
    show k * a :: addAt (smul k as) j (k * d) = k * a :: smul k (addAt as j d)
    rw [addAt_smul k as j d]

theorem smul_zerosN (k : Rat) : ∀ n : Nat, smul k (zerosN n) = zerosN n
  | 0 => rfl
  | n + 1 => by
    show k * 0 :: smul k (zerosN n) = 0 :: zerosN n
    rw [Rat.mul_zero, smul_zerosN k n]

theorem scatter_smul (n : Nat) (k : Rat) : ∀ (g : List Nat) (δ : List Rat),
    scatter n g (smul k δ) = smul k (scatter n g δ)
  | [], _ => by
    show zerosN n = smul k (zerosN n)
    rw [smul_zerosN]
  | _ :: _, [] => by
    show zerosN n = smul k (zerosN n)
    rw [smul_zerosN]
  | j :: js, d :: ds => by
    show addAt (scatter n js (smul k ds)) j (k * d) = smul k (addAt (scatter n js ds) j d)
    rw [scatter_smul n k js ds, addAt_smul k (scatter n js ds) j d]

theorem addAt_zerosN : ∀ (n j : Nat), addAt (zerosN n) j 0 = zerosN n
  | 0, _ => rfl
  | n + 1, 0 => by
    show (0 + 0) :: zerosN n = 0 :: zerosN n
    rw [Rat.add_zero]
  | n + 1, j + 1 => by
    show 0 :: addAt (zerosN n) j 0 = 0 :: zerosN n
    rw [addAt_zerosN n j]

theorem scatter_zeros (n : Nat) : ∀ (g : List Nat) (δ : List Rat), scatter n g (zeros δ) = zerosN n
  | [], _ => rfl
  | _ :: _, [] => rfl
  | j :: js, _ :: ds => by
    show addAt (scatter n js (zeros ds)) j 0 = zerosN n
    rw [scatter_zeros n js ds, addAt_zerosN n j]

theorem zeros_eq_zerosN : ∀ u : List Rat, zeros u = zerosN u.length
  | [] => rfl
  | _ :: as => by
    show 0 :: zeros as = 0 :: zerosN as.length
    rw [zeros_eq_zerosN as]

/-- The VJP of every index map (a scatter along a fixed list): additive
for cotangents of one length, homogeneous, zero at zero. -/
theorem index_vjp_linear (n : Nat) (g : List Nat) (k : Rat) (δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    [scatter n g (padd δ₁ δ₂)] = paddAll [scatter n g δ₁] [scatter n g δ₂] ∧
    [scatter n g (smul k δ₁)] = smulAll k [scatter n g δ₁] ∧
    [scatter n g (zeros δ₁)] = zerosAll [scatter n g δ₁] := by
  refine ⟨?_, ?_, ?_⟩
  · show [scatter n g (padd δ₁ δ₂)] = [padd (scatter n g δ₁) (scatter n g δ₂)]
    rw [scatter_padd n g δ₁ δ₂ h]
  · show [scatter n g (smul k δ₁)] = [smul k (scatter n g δ₁)]
    rw [scatter_smul n k g δ₁]
  · show [scatter n g (zeros δ₁)] = [zeros (scatter n g δ₁)]
    rw [scatter_zeros n g δ₁, zeros_eq_zerosN (scatter n g δ₁), length_scatter]

theorem permute_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .permute a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .permute a [x] δ₁) (Prim.vjp .permute a [x] δ₂) ∧
    Prim.vjp .permute a [x] (smul k δ₁) = smulAll k (Prim.vjp .permute a [x] δ₁) ∧
    Prim.vjp .permute a [x] (zeros δ₁) = zerosAll (Prim.vjp .permute a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.permuteIdx k δ₁ δ₂ h

theorem transpose_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .transpose a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .transpose a [x] δ₁) (Prim.vjp .transpose a [x] δ₂) ∧
    Prim.vjp .transpose a [x] (smul k δ₁) = smulAll k (Prim.vjp .transpose a [x] δ₁) ∧
    Prim.vjp .transpose a [x] (zeros δ₁) = zerosAll (Prim.vjp .transpose a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.transposeIdx k δ₁ δ₂ h

theorem slice_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .slice a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .slice a [x] δ₁) (Prim.vjp .slice a [x] δ₂) ∧
    Prim.vjp .slice a [x] (smul k δ₁) = smulAll k (Prim.vjp .slice a [x] δ₁) ∧
    Prim.vjp .slice a [x] (zeros δ₁) = zerosAll (Prim.vjp .slice a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.sliceIdx k δ₁ δ₂ h

theorem broadcast_to_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .broadcast_to a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .broadcast_to a [x] δ₁) (Prim.vjp .broadcast_to a [x] δ₂) ∧
    Prim.vjp .broadcast_to a [x] (smul k δ₁) = smulAll k (Prim.vjp .broadcast_to a [x] δ₁) ∧
    Prim.vjp .broadcast_to a [x] (zeros δ₁) = zerosAll (Prim.vjp .broadcast_to a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.bcastIdx k δ₁ δ₂ h

theorem tile_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .tile a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .tile a [x] δ₁) (Prim.vjp .tile a [x] δ₂) ∧
    Prim.vjp .tile a [x] (smul k δ₁) = smulAll k (Prim.vjp .tile a [x] δ₁) ∧
    Prim.vjp .tile a [x] (zeros δ₁) = zerosAll (Prim.vjp .tile a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.tileIdx k δ₁ δ₂ h

theorem gather_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .gather a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .gather a [x] δ₁) (Prim.vjp .gather a [x] δ₂) ∧
    Prim.vjp .gather a [x] (smul k δ₁) = smulAll k (Prim.vjp .gather a [x] δ₁) ∧
    Prim.vjp .gather a [x] (zeros δ₁) = zerosAll (Prim.vjp .gather a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.gatherIdx k δ₁ δ₂ h

theorem pad_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .pad a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .pad a [x] δ₁) (Prim.vjp .pad a [x] δ₂) ∧
    Prim.vjp .pad a [x] (smul k δ₁) = smulAll k (Prim.vjp .pad a [x] δ₁) ∧
    Prim.vjp .pad a [x] (zeros δ₁) = zerosAll (Prim.vjp .pad a [x] δ₁) :=
  index_vjp_linear (size a.shape) a.padIdx k δ₁ δ₂ h

/-! ## VJP linearity of reduce_sum and reduce_mean: bcastAKB is linear -/

theorem take_padd : ∀ (n : Nat) (d e : List Rat), (padd d e).take n = padd (d.take n) (e.take n)
  | 0, _, _ => rfl
  | _ + 1, [], _ => rfl
  | _ + 1, _ :: _, [] => rfl
  | n + 1, a :: as, b :: bs => by
    show (a + b) :: (padd as bs).take n = (a + b) :: padd (as.take n) (bs.take n)
    rw [take_padd n as bs]

theorem drop_padd : ∀ (n : Nat) (d e : List Rat), d.length = e.length →
    (padd d e).drop n = padd (d.drop n) (e.drop n)
  | 0, _, _, _ => rfl
  | _ + 1, [], [], _ => rfl
  | _ + 1, [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ + 1, _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | n + 1, _ :: as, _ :: bs, h => drop_padd n as bs (Nat.succ.inj h)

theorem padd_append : ∀ a b c e : List Rat, a.length = c.length → padd (a ++ b) (c ++ e) = padd a c ++ padd b e
  | [], _, [], _, _ => rfl
  | [], _, _ :: _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _, [], _, h => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, b, y :: ys, e, h => by
    show (x + y) :: padd (xs ++ b) (ys ++ e) = (x + y) :: (padd xs ys ++ padd b e)
    rw [padd_append xs b ys e (Nat.succ.inj h)]

theorem repChunks_padd : ∀ (K : Nat) (d e : List Rat), d.length = e.length →
    repChunks (padd d e) K = padd (repChunks d K) (repChunks e K)
  | 0, _, _, _ => rfl
  | K + 1, d, e, h => by
    show padd d e ++ repChunks (padd d e) K = padd (d ++ repChunks d K) (e ++ repChunks e K)
    rw [padd_append d (repChunks d K) e (repChunks e K) h, repChunks_padd K d e h]

theorem bcastAKB_padd (K B : Nat) : ∀ (A : Nat) (d e : List Rat), d.length = e.length →
    bcastAKB K B A (padd d e) = padd (bcastAKB K B A d) (bcastAKB K B A e)
  | 0, _, _, _ => rfl
  | A + 1, d, e, h => by
    have ht : (d.take B).length = (e.take B).length := by rw [List.length_take, List.length_take, h]
    have hd : (d.drop B).length = (e.drop B).length := by rw [List.length_drop, List.length_drop, h]
    show repChunks ((padd d e).take B) K ++ bcastAKB K B A ((padd d e).drop B) =
      padd (repChunks (d.take B) K ++ bcastAKB K B A (d.drop B)) (repChunks (e.take B) K ++ bcastAKB K B A (e.drop B))
    rw [take_padd B d e, drop_padd B d e h, repChunks_padd K (d.take B) (e.take B) ht,
      bcastAKB_padd K B A (d.drop B) (e.drop B) hd,
      padd_append (repChunks (d.take B) K) (bcastAKB K B A (d.drop B)) (repChunks (e.take B) K)
        (bcastAKB K B A (e.drop B)) (by rw [length_repChunks, length_repChunks, ht])]

theorem take_smul (k : Rat) : ∀ (n : Nat) (d : List Rat), (smul k d).take n = smul k (d.take n)
  | 0, _ => rfl
  | _ + 1, [] => rfl
  | n + 1, a :: as => by
    show k * a :: (smul k as).take n = k * a :: smul k (as.take n)
    rw [take_smul k n as]

theorem drop_smul (k : Rat) : ∀ (n : Nat) (d : List Rat), (smul k d).drop n = smul k (d.drop n)
  | 0, _ => rfl
  | _ + 1, [] => rfl
  | n + 1, _ :: as => drop_smul k n as

theorem smul_append (k : Rat) : ∀ a b : List Rat, smul k (a ++ b) = smul k a ++ smul k b
  | [], _ => rfl
  | x :: xs, b => by
    show k * x :: smul k (xs ++ b) = k * x :: (smul k xs ++ smul k b)
    rw [smul_append k xs b]

theorem repChunks_smul (k : Rat) : ∀ (K : Nat) (d : List Rat), repChunks (smul k d) K = smul k (repChunks d K)
  | 0, _ => rfl
  | K + 1, d => by
    show smul k d ++ repChunks (smul k d) K = smul k (d ++ repChunks d K)
    rw [smul_append k d (repChunks d K), repChunks_smul k K d]

theorem bcastAKB_smul (K B : Nat) (k : Rat) : ∀ (A : Nat) (d : List Rat),
    bcastAKB K B A (smul k d) = smul k (bcastAKB K B A d)
  | 0, _ => rfl
  | A + 1, d => by
    show repChunks ((smul k d).take B) K ++ bcastAKB K B A ((smul k d).drop B) =
      smul k (repChunks (d.take B) K ++ bcastAKB K B A (d.drop B))
    rw [take_smul k B d, drop_smul k B d, repChunks_smul k K (d.take B), bcastAKB_smul K B k A (d.drop B),
      smul_append k (repChunks (d.take B) K) (bcastAKB K B A (d.drop B))]

theorem zeros_eq_smul0 : ∀ d : List Rat, zeros d = smul 0 d
  | [] => rfl
  | a :: as => by
    show 0 :: zeros as = 0 * a :: smul 0 as
    rw [Rat.zero_mul, zeros_eq_smul0 as]

theorem reduce_sum_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .reduce_sum a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .reduce_sum a [x] δ₁) (Prim.vjp .reduce_sum a [x] δ₂) ∧
    Prim.vjp .reduce_sum a [x] (smul k δ₁) = smulAll k (Prim.vjp .reduce_sum a [x] δ₁) ∧
    Prim.vjp .reduce_sum a [x] (zeros δ₁) = zerosAll (Prim.vjp .reduce_sum a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [bcastAKB a.dimK a.dimB a.dimA (padd δ₁ δ₂)] =
      [padd (bcastAKB a.dimK a.dimB a.dimA δ₁) (bcastAKB a.dimK a.dimB a.dimA δ₂)]
    rw [bcastAKB_padd a.dimK a.dimB a.dimA δ₁ δ₂ h]
  · show [bcastAKB a.dimK a.dimB a.dimA (smul k δ₁)] = [smul k (bcastAKB a.dimK a.dimB a.dimA δ₁)]
    rw [bcastAKB_smul a.dimK a.dimB k a.dimA δ₁]
  · show [bcastAKB a.dimK a.dimB a.dimA (zeros δ₁)] = [zeros (bcastAKB a.dimK a.dimB a.dimA δ₁)]
    rw [zeros_eq_smul0 δ₁, bcastAKB_smul a.dimK a.dimB 0 a.dimA δ₁,
      ← zeros_eq_smul0 (bcastAKB a.dimK a.dimB a.dimA δ₁)]

theorem reduce_mean_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .reduce_mean a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .reduce_mean a [x] δ₁) (Prim.vjp .reduce_mean a [x] δ₂) ∧
    Prim.vjp .reduce_mean a [x] (smul k δ₁) = smulAll k (Prim.vjp .reduce_mean a [x] δ₁) ∧
    Prim.vjp .reduce_mean a [x] (zeros δ₁) = zerosAll (Prim.vjp .reduce_mean a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) (padd δ₁ δ₂))] =
      [padd (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₁))
        (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₂))]
    rw [smul_padd (1 / (a.dimK : Rat)) δ₁ δ₂,
      bcastAKB_padd a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₁) (smul (1 / (a.dimK : Rat)) δ₂)
        (by rw [length_smul, length_smul, h])]
  · show [bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) (smul k δ₁))] =
      [smul k (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₁))]
    rw [smul_smul (1 / (a.dimK : Rat)) k δ₁, bcastAKB_smul a.dimK a.dimB k a.dimA (smul (1 / (a.dimK : Rat)) δ₁)]
  · show [bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) (zeros δ₁))] =
      [zeros (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₁))]
    rw [zeros_eq_smul0 (bcastAKB a.dimK a.dimB a.dimA (smul (1 / (a.dimK : Rat)) δ₁)),
      ← bcastAKB_smul a.dimK a.dimB 0 a.dimA (smul (1 / (a.dimK : Rat)) δ₁),
      smul_smul 0 (1 / (a.dimK : Rat)) δ₁, ← zeros_eq_smul0 δ₁]

/-! ## VJP linearity of concat, matmul and linear

concat's VJP splits a scatter by the inputs' sizes; matmul's and linear's
scatter pointwise products with `bcastAKB δ`. Each step is linear in δ
(`splitBy_padd`, `splitBy_smul`, `bcastAKB_padd`, `bcastAKB_smul`,
`pmul_padd`, `pmul_smul`, `scatter_padd`, `scatter_smul`); zero
preservation is homogeneity at 0 (`zeros_eq_smul0`). -/

theorem splitBy_padd : ∀ (ss : List (List Nat)) (u v : List Rat), u.length = v.length →
    splitBy ss (padd u v) = paddAll (splitBy ss u) (splitBy ss v)
  | [], _, _, _ => rfl
  | s :: ss, u, v, h => by
    show (padd u v).take (size s) :: splitBy ss ((padd u v).drop (size s)) =
      padd (u.take (size s)) (v.take (size s)) :: paddAll (splitBy ss (u.drop (size s))) (splitBy ss (v.drop (size s)))
    rw [take_padd (size s) u v, drop_padd (size s) u v h,
      splitBy_padd ss (u.drop (size s)) (v.drop (size s)) (by rw [List.length_drop, List.length_drop, h])]

theorem splitBy_smul (k : Rat) : ∀ (ss : List (List Nat)) (u : List Rat),
    splitBy ss (smul k u) = smulAll k (splitBy ss u)
  | [], _ => rfl
  | s :: ss, u => by
    show (smul k u).take (size s) :: splitBy ss ((smul k u).drop (size s)) =
      smul k (u.take (size s)) :: smulAll k (splitBy ss (u.drop (size s)))
    rw [take_smul k (size s) u, drop_smul k (size s) u, splitBy_smul k ss (u.drop (size s))]

theorem smulAll_zero : ∀ L : List (List Rat), smulAll 0 L = zerosAll L
  | [] => rfl
  | u :: us => by
    show smul 0 u :: smulAll 0 us = zeros u :: zerosAll us
    rw [← zeros_eq_smul0 u, smulAll_zero us]

/-- concat: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem concat_vjp_linear (a : Attr) (k : Rat) (xs : List (List Rat)) (δ₁ δ₂ : List Rat)
    (h : δ₁.length = δ₂.length) :
    Prim.vjp .concat a xs (padd δ₁ δ₂) = paddAll (Prim.vjp .concat a xs δ₁) (Prim.vjp .concat a xs δ₂) ∧
    Prim.vjp .concat a xs (smul k δ₁) = smulAll k (Prim.vjp .concat a xs δ₁) ∧
    Prim.vjp .concat a xs (zeros δ₁) = zerosAll (Prim.vjp .concat a xs δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx (padd δ₁ δ₂)) =
      paddAll (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁))
        (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₂))
    rw [scatter_padd (totalSize a.shapes) a.concatIdx δ₁ δ₂ h,
      splitBy_padd a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁)
        (scatter (totalSize a.shapes) a.concatIdx δ₂) (by rw [length_scatter, length_scatter])]
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx (smul k δ₁)) =
      smulAll k (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁))
    rw [scatter_smul (totalSize a.shapes) k a.concatIdx δ₁,
      splitBy_smul k a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁)]
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx (zeros δ₁)) =
      zerosAll (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁))
    rw [zeros_eq_smul0 δ₁, scatter_smul (totalSize a.shapes) 0 a.concatIdx δ₁,
      splitBy_smul 0 a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁),
      smulAll_zero (splitBy a.shapes (scatter (totalSize a.shapes) a.concatIdx δ₁))]

/-- scatter: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem scatter_op_vjp_linear (a : Attr) (k : Rat) (xs : List (List Rat)) (δ₁ δ₂ : List Rat)
    (h : δ₁.length = δ₂.length) :
    Prim.vjp .scatter a xs (padd δ₁ δ₂) = paddAll (Prim.vjp .scatter a xs δ₁) (Prim.vjp .scatter a xs δ₂) ∧
    Prim.vjp .scatter a xs (smul k δ₁) = smulAll k (Prim.vjp .scatter a xs δ₁) ∧
    Prim.vjp .scatter a xs (zeros δ₁) = zerosAll (Prim.vjp .scatter a xs δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx (padd δ₁ δ₂)) =
      paddAll (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁))
        (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₂))
    rw [scatter_padd (totalSize a.shapes) a.scatterIdx δ₁ δ₂ h,
      splitBy_padd a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁)
        (scatter (totalSize a.shapes) a.scatterIdx δ₂) (by rw [length_scatter, length_scatter])]
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx (smul k δ₁)) =
      smulAll k (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁))
    rw [scatter_smul (totalSize a.shapes) k a.scatterIdx δ₁,
      splitBy_smul k a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁)]
  · show splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx (zeros δ₁)) =
      zerosAll (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁))
    rw [zeros_eq_smul0 δ₁, scatter_smul (totalSize a.shapes) 0 a.scatterIdx δ₁,
      splitBy_smul 0 a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁),
      smulAll_zero (splitBy a.shapes (scatter (totalSize a.shapes) a.scatterIdx δ₁))]

theorem length_pmul_congr : ∀ (f u v : List Rat), u.length = v.length → (pmul f u).length = (pmul f v).length
  | [], _, _, _ => rfl
  | _ :: _, [], [], _ => rfl
  | _ :: _, [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: fs, _ :: us, _ :: vs, h => by
    show (pmul fs us).length + 1 = (pmul fs vs).length + 1
    rw [length_pmul_congr fs us vs (Nat.succ.inj h)]

theorem length_bcastAKB_congr (K B : Nat) : ∀ (A : Nat) (d e : List Rat), d.length = e.length →
    (bcastAKB K B A d).length = (bcastAKB K B A e).length
  | 0, _, _, _ => rfl
  | A + 1, d, e, h => by
    have ht : (d.take B).length = (e.take B).length := by rw [List.length_take, List.length_take, h]
    have hd : (d.drop B).length = (e.drop B).length := by rw [List.length_drop, List.length_drop, h]
    show (repChunks (d.take B) K ++ bcastAKB K B A (d.drop B)).length =
      (repChunks (e.take B) K ++ bcastAKB K B A (e.drop B)).length
    rw [List.length_append, List.length_append, length_repChunks (d.take B) K, length_repChunks (e.take B) K, ht,
      length_bcastAKB_congr K B A (d.drop B) (e.drop B) hd]

/-- matmul: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem matmul_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .matmul a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .matmul a [x, y] δ₁) (Prim.vjp .matmul a [x, y] δ₂) ∧
    Prim.vjp .matmul a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .matmul a [x, y] δ₁) ∧
    Prim.vjp .matmul a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .matmul a [x, y] δ₁) := by
  have hb : (bcastAKB a.mmK 1 a.mmOut δ₁).length = (bcastAKB a.mmK 1 a.mmOut δ₂).length :=
    length_bcastAKB_congr a.mmK 1 a.mmOut δ₁ δ₂ h
  refine ⟨?_, ?_, ?_⟩
  · show [scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut (padd δ₁ δ₂))),
        scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut (padd δ₁ δ₂)))] =
      [padd (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₁)))
          (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₂))),
        padd (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₁)))
          (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₂)))]
    rw [bcastAKB_padd a.mmK 1 a.mmOut δ₁ δ₂ h,
      pmul_padd (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₁) (bcastAKB a.mmK 1 a.mmOut δ₂),
      pmul_padd (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₁) (bcastAKB a.mmK 1 a.mmOut δ₂),
      scatter_padd (size (nthL a.shapes 0)) a.mmGa _ _ (length_pmul_congr (gather a.mmGb y) _ _ hb),
      scatter_padd (size (nthL a.shapes 1)) a.mmGb _ _ (length_pmul_congr (gather a.mmGa x) _ _ hb)]
  · show [scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut (smul k δ₁))),
        scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut (smul k δ₁)))] =
      [smul k (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₁))),
        smul k (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₁)))]
    rw [bcastAKB_smul a.mmK 1 k a.mmOut δ₁, pmul_smul k (gather a.mmGb y), pmul_smul k (gather a.mmGa x),
      scatter_smul (size (nthL a.shapes 0)) k a.mmGa, scatter_smul (size (nthL a.shapes 1)) k a.mmGb]
  · show [scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut (zeros δ₁))),
        scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut (zeros δ₁)))] =
      [zeros (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₁))),
        zeros (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₁)))]
    rw [zeros_eq_smul0 δ₁, bcastAKB_smul a.mmK 1 0 a.mmOut δ₁, pmul_smul 0 (gather a.mmGb y),
      pmul_smul 0 (gather a.mmGa x), scatter_smul (size (nthL a.shapes 0)) 0 a.mmGa,
      scatter_smul (size (nthL a.shapes 1)) 0 a.mmGb,
      zeros_eq_smul0 (scatter (size (nthL a.shapes 0)) a.mmGa (pmul (gather a.mmGb y) (bcastAKB a.mmK 1 a.mmOut δ₁))),
      zeros_eq_smul0 (scatter (size (nthL a.shapes 1)) a.mmGb (pmul (gather a.mmGa x) (bcastAKB a.mmK 1 a.mmOut δ₁)))]

/-- linear: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem linear_vjp_linear (a : Attr) (k : Rat) (x w b δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .linear a [x, w, b] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .linear a [x, w, b] δ₁) (Prim.vjp .linear a [x, w, b] δ₂) ∧
    Prim.vjp .linear a [x, w, b] (smul k δ₁) = smulAll k (Prim.vjp .linear a [x, w, b] δ₁) ∧
    Prim.vjp .linear a [x, w, b] (zeros δ₁) = zerosAll (Prim.vjp .linear a [x, w, b] δ₁) := by
  have hb : (bcastAKB a.linN 1 (a.linB * a.linM) δ₁).length = (bcastAKB a.linN 1 (a.linB * a.linM) δ₂).length :=
    length_bcastAKB_congr a.linN 1 (a.linB * a.linM) δ₁ δ₂ h
  refine ⟨?_, ?_, ?_⟩
  · show [scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) (padd δ₁ δ₂))),
        scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) (padd δ₁ δ₂))),
        scatter a.linSb a.linGb (padd δ₁ δ₂)] =
      [padd (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁)))
          (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₂))),
        padd (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁)))
          (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₂))),
        padd (scatter a.linSb a.linGb δ₁) (scatter a.linSb a.linGb δ₂)]
    rw [bcastAKB_padd a.linN 1 (a.linB * a.linM) δ₁ δ₂ h,
      pmul_padd (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁) (bcastAKB a.linN 1 (a.linB * a.linM) δ₂),
      pmul_padd (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁) (bcastAKB a.linN 1 (a.linB * a.linM) δ₂),
      scatter_padd a.linSx a.linGx _ _ (length_pmul_congr (gather a.linGw w) _ _ hb),
      scatter_padd a.linSw a.linGw _ _ (length_pmul_congr (gather a.linGx x) _ _ hb),
      scatter_padd a.linSb a.linGb δ₁ δ₂ h]
  · show [scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) (smul k δ₁))),
        scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) (smul k δ₁))),
        scatter a.linSb a.linGb (smul k δ₁)] =
      [smul k (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
        smul k (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
        smul k (scatter a.linSb a.linGb δ₁)]
    rw [bcastAKB_smul a.linN 1 k (a.linB * a.linM) δ₁, pmul_smul k (gather a.linGw w), pmul_smul k (gather a.linGx x),
      scatter_smul a.linSx k a.linGx, scatter_smul a.linSw k a.linGw, scatter_smul a.linSb k a.linGb]
  · show [scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) (zeros δ₁))),
        scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) (zeros δ₁))),
        scatter a.linSb a.linGb (zeros δ₁)] =
      [zeros (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
        zeros (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
        zeros (scatter a.linSb a.linGb δ₁)]
    rw [zeros_eq_smul0 δ₁, bcastAKB_smul a.linN 1 0 (a.linB * a.linM) δ₁, pmul_smul 0 (gather a.linGw w),
      pmul_smul 0 (gather a.linGx x), scatter_smul a.linSx 0 a.linGx, scatter_smul a.linSw 0 a.linGw,
      scatter_smul a.linSb 0 a.linGb,
      zeros_eq_smul0 (scatter a.linSx a.linGx (pmul (gather a.linGw w) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
      zeros_eq_smul0 (scatter a.linSw a.linGw (pmul (gather a.linGx x) (bcastAKB a.linN 1 (a.linB * a.linM) δ₁))),
      zeros_eq_smul0 (scatter a.linSb a.linGb δ₁)]

/-! ## VJP linearity of the remaining primitives

The VJPs of `add` and `sub` repeat or negate the cotangent, those of
`reshape` and `flatten` are the cotangent itself; those of `detach`,
`bernoulli_mask` and `keep_mask` are the zero tensor of the input whatever
the cotangent; `const` and `rand_uniform` have no inputs and no
contributions (`Prim.vjp`'s catch-all). Each is linear in δ and maps a
zero cotangent to zero contributions, so with the theorems above every
exact primitive's VJP has its `<op>_vjp_linear`. -/

theorem padd_zeros_self : ∀ u : List Rat, padd (zeros u) (zeros u) = zeros u
  | [] => rfl
  | _ :: us => by
    show ((0 : Rat) + 0) :: padd (zeros us) (zeros us) = 0 :: zeros us
    rw [Rat.add_zero (0 : Rat), padd_zeros_self us]

theorem zeros_zeros : ∀ u : List Rat, zeros (zeros u) = zeros u
  | [] => rfl
  | _ :: us => by
    show (0 : Rat) :: zeros (zeros us) = 0 :: zeros us
    rw [zeros_zeros us]

theorem add_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .add a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .add a [x, y] δ₁) (Prim.vjp .add a [x, y] δ₂) ∧
    Prim.vjp .add a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .add a [x, y] δ₁) ∧
    Prim.vjp .add a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .add a [x, y] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [padd δ₁ δ₂, padd δ₁ δ₂] = [padd δ₁ δ₂, padd δ₁ δ₂]
    rfl
  · show [smul k δ₁, smul k δ₁] = [smul k δ₁, smul k δ₁]
    rfl
  · show [zeros δ₁, zeros δ₁] = [zeros δ₁, zeros δ₁]
    rfl

theorem sub_vjp_linear (a : Attr) (k : Rat) (x y δ₁ δ₂ : List Rat) :
    Prim.vjp .sub a [x, y] (padd δ₁ δ₂) = paddAll (Prim.vjp .sub a [x, y] δ₁) (Prim.vjp .sub a [x, y] δ₂) ∧
    Prim.vjp .sub a [x, y] (smul k δ₁) = smulAll k (Prim.vjp .sub a [x, y] δ₁) ∧
    Prim.vjp .sub a [x, y] (zeros δ₁) = zerosAll (Prim.vjp .sub a [x, y] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [padd δ₁ δ₂, smul (-1) (padd δ₁ δ₂)] = [padd δ₁ δ₂, padd (smul (-1) δ₁) (smul (-1) δ₂)]
    rw [smul_padd (-1) δ₁ δ₂]
  · show [smul k δ₁, smul (-1) (smul k δ₁)] = [smul k δ₁, smul k (smul (-1) δ₁)]
    rw [smul_smul (-1) k δ₁]
  · show [zeros δ₁, smul (-1) (zeros δ₁)] = [zeros δ₁, zeros (smul (-1) δ₁)]
    rw [smul_zeros (-1) δ₁, zeros_smul (-1) δ₁]

/-- reshape and flatten: the VJP is [δ]. -/
theorem reshape_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .reshape a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .reshape a [x] δ₁) (Prim.vjp .reshape a [x] δ₂) ∧
    Prim.vjp .reshape a [x] (smul k δ₁) = smulAll k (Prim.vjp .reshape a [x] δ₁) ∧
    Prim.vjp .reshape a [x] (zeros δ₁) = zerosAll (Prim.vjp .reshape a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [padd δ₁ δ₂] = [padd δ₁ δ₂]
    rfl
  · show [smul k δ₁] = [smul k δ₁]
    rfl
  · show [zeros δ₁] = [zeros δ₁]
    rfl

theorem flatten_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .flatten a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .flatten a [x] δ₁) (Prim.vjp .flatten a [x] δ₂) ∧
    Prim.vjp .flatten a [x] (smul k δ₁) = smulAll k (Prim.vjp .flatten a [x] δ₁) ∧
    Prim.vjp .flatten a [x] (zeros δ₁) = zerosAll (Prim.vjp .flatten a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [padd δ₁ δ₂] = [padd δ₁ δ₂]
    rfl
  · show [smul k δ₁] = [smul k δ₁]
    rfl
  · show [zeros δ₁] = [zeros δ₁]
    rfl

/-- A VJP that is [zeros x] whatever the cotangent (detach and the masks)
is linear and zero-preserving. -/
theorem const_zeros_linear (x : List Rat) (k : Rat) :
    [zeros x] = paddAll [zeros x] [zeros x] ∧ [zeros x] = smulAll k [zeros x] ∧ [zeros x] = zerosAll [zeros x] := by
  refine ⟨?_, ?_, ?_⟩
  · show [zeros x] = [padd (zeros x) (zeros x)]
    rw [padd_zeros_self x]
  · show [zeros x] = [smul k (zeros x)]
    rw [smul_zeros k x]
  · show [zeros x] = [zeros (zeros x)]
    rw [zeros_zeros x]

theorem detach_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .detach a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .detach a [x] δ₁) (Prim.vjp .detach a [x] δ₂) ∧
    Prim.vjp .detach a [x] (smul k δ₁) = smulAll k (Prim.vjp .detach a [x] δ₁) ∧
    Prim.vjp .detach a [x] (zeros δ₁) = zerosAll (Prim.vjp .detach a [x] δ₁) :=
  const_zeros_linear x k

theorem bernoulli_mask_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .bernoulli_mask a [x] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .bernoulli_mask a [x] δ₁) (Prim.vjp .bernoulli_mask a [x] δ₂) ∧
    Prim.vjp .bernoulli_mask a [x] (smul k δ₁) = smulAll k (Prim.vjp .bernoulli_mask a [x] δ₁) ∧
    Prim.vjp .bernoulli_mask a [x] (zeros δ₁) = zerosAll (Prim.vjp .bernoulli_mask a [x] δ₁) :=
  const_zeros_linear x k

theorem keep_mask_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) :
    Prim.vjp .keep_mask a [x] (padd δ₁ δ₂) = paddAll (Prim.vjp .keep_mask a [x] δ₁) (Prim.vjp .keep_mask a [x] δ₂) ∧
    Prim.vjp .keep_mask a [x] (smul k δ₁) = smulAll k (Prim.vjp .keep_mask a [x] δ₁) ∧
    Prim.vjp .keep_mask a [x] (zeros δ₁) = zerosAll (Prim.vjp .keep_mask a [x] δ₁) :=
  const_zeros_linear x k

/-- const and rand_uniform: no inputs, no contributions. -/
theorem const_vjp_linear (a : Attr) (k : Rat) (δ₁ δ₂ : List Rat) :
    Prim.vjp .const a [] (padd δ₁ δ₂) = paddAll (Prim.vjp .const a [] δ₁) (Prim.vjp .const a [] δ₂) ∧
    Prim.vjp .const a [] (smul k δ₁) = smulAll k (Prim.vjp .const a [] δ₁) ∧
    Prim.vjp .const a [] (zeros δ₁) = zerosAll (Prim.vjp .const a [] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show ([] : List (List Rat)) = []
    rfl
  · show ([] : List (List Rat)) = []
    rfl
  · show ([] : List (List Rat)) = []
    rfl

theorem rand_uniform_vjp_linear (a : Attr) (k : Rat) (δ₁ δ₂ : List Rat) :
    Prim.vjp .rand_uniform a [] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .rand_uniform a [] δ₁) (Prim.vjp .rand_uniform a [] δ₂) ∧
    Prim.vjp .rand_uniform a [] (smul k δ₁) = smulAll k (Prim.vjp .rand_uniform a [] δ₁) ∧
    Prim.vjp .rand_uniform a [] (zeros δ₁) = zerosAll (Prim.vjp .rand_uniform a [] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show ([] : List (List Rat)) = []
    rfl
  · show ([] : List (List Rat)) = []
    rfl
  · show ([] : List (List Rat)) = []
    rfl

end Tlcheck
