import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Deriv

/-!
# Taylor identities of the reductions, matmul, linear, mse_loss and sqrt

`Tlcheck.Deriv` ties the JVPs of the pointwise primitives to their
forwards. This module does the same, with no limits, for the rest of the
polynomial primitives — for all inputs and directions, as algebraic
identities over `Rat`:

* `reduce_sum`, `reduce_mean` (linear): `fwd (x + t•v) = fwd x + t • jvp x v`
  (`reduce_sum_taylor`, `reduce_mean_taylor`), from `reduceAKB_along`: the
  [A, K, B] reduction commutes with every line.
* `matmul` (bilinear): `fwd (x + t•dx, y + t•dy) = fwd (x, y) + t • jvp +
  t² • fwd (dx, dy)` (`matmul_taylor`): the remainder is the product of the
  tangents, explicit.
* `linear` (bilinear in x and W, affine in b): the same with the remainder
  the [B, m, n] contraction of dx and dW (`linear_taylor`).
* `mse_loss` (quadratic): the remainder is `mse_loss (dx, dy)`, the loss of
  the tangents (`mse_loss_taylor`).
* `pad` (affine): `fwd (x + t•v) = fwd x + t • jvp x v`, the constant fill
  in the forward only (`pad_taylor`).
* `sqrt`, over the representation Lean has for it (the quotient of integer
  square roots, exact on the squares the registry accepts): the squaring
  inverse statement `sqrt_inverse_taylor` — where a > 0 and s = sqrtS a has
  s·s = a, squaring the line s + t·(sqrtD a · v) gives
  a + t·v + t²·(sqrtD a · v)², so sqrt's JVP is the inverse of square's at
  the root (the derivative of an inverse function, exactly).

A wrong derivative makes a statement here false. With the planted
`sqrtD a := 1 / a` (instead of 1/(2√a)), `sqrt_inverse_taylor` at a = 9
(s = 3), v = 1, t = 1 reads `(3 + 1/9)² = 9 + 1 + (1/9)²`, i.e.
`784/81 = 811/81`: false (the remainder is written in terms of the JVP, but
the first-order term 2·s·sqrtD(a)·v = 2/3 ≠ 1 = v cannot be absorbed), and
`sqrt_chain` reads `6 · 1/9 = 1`: false. (At a = 4 the planted rule agrees
with the true one by coincidence: 1/4 = 1/(2·2).) A matmul JVP missing one
of its two product terms makes `matmul_taylor` false at x = y = [1],
dx = dy = [1], t = 1 for 1×1 shapes (`4 = 1 + 1 + 1`).

Proof style as in `Tlcheck.Deriv`: induction on lists, `show` for
definitional unfolding, `rw` with core `Rat` and `List` lemmas; a ring
step is an explicit chain with `grind` only as a fallback arm.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## Lines through lists -/

theorem along_nil_right (t : Rat) : ∀ x : List Rat, along t x [] = []
  | [] => rfl
  | _ :: _ => rfl

theorem length_along (t : Rat) : ∀ x v : List Rat, x.length = v.length → (along t x v).length = x.length
  | [], _, _ => rfl
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: as, _ :: bs, h => by
    show (along t as bs).length + 1 = as.length + 1
    rw [length_along t as bs (Nat.succ.inj h)]

/-- On lists of equal lengths the line is x + t·v. -/
theorem along_eq (t : Rat) : ∀ x v : List Rat, x.length = v.length → along t x v = padd x (smul t v)
  | [], [], _ => rfl
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, h => by
    show (a + t * b) :: along t as bs = (a + t * b) :: padd as (smul t bs)
    rw [along_eq t as bs (Nat.succ.inj h)]

theorem take_along (t : Rat) : ∀ (n : Nat) (x v : List Rat), (along t x v).take n = along t (x.take n) (v.take n)
  | 0, _, _ => rfl
  | _ + 1, [], _ => rfl
  | _ + 1, _ :: _, [] => rfl
  | n + 1, a :: as, b :: bs => by
    show (a + t * b) :: (along t as bs).take n = (a + t * b) :: along t (as.take n) (bs.take n)
    rw [take_along t n as bs]

theorem drop_along (t : Rat) : ∀ (n : Nat) (x v : List Rat), (along t x v).drop n = along t (x.drop n) (v.drop n)
  | 0, _, _ => rfl
  | _ + 1, [], _ => rfl
  | n + 1, _ :: as, [] => by
    show ([] : List Rat) = along t (as.drop n) []
    rw [along_nil_right]
  | n + 1, _ :: as, _ :: bs => drop_along t n as bs

theorem along_append (t : Rat) : ∀ a b c e : List Rat, a.length = c.length →
    along t (a ++ b) (c ++ e) = along t a c ++ along t b e
  | [], _, [], _, _ => rfl
  | [], _, _ :: _, _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _, [], _, h => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, b, y :: ys, e, h => by
    show (x + t * y) :: along t (xs ++ b) (ys ++ e) = (x + t * y) :: (along t xs ys ++ along t b e)
    rw [along_append t xs b ys e (Nat.succ.inj h)]

/-- (a + t·c) + (b + t·e) = (a + b) + t·(c + e). -/
theorem add_step (t a b c e : Rat) : (a + t * c) + (b + t * e) = (a + b) + t * (c + e) := by
  first
    | rw [Rat.mul_add, Rat.add_assoc a (t * c) (b + t * e), Rat.add_assoc a b (t * c + t * e),
        ← Rat.add_assoc (t * c) b (t * e), Rat.add_comm (t * c) b, Rat.add_assoc b (t * c) (t * e)]
    | grind

theorem padd_along (t : Rat) : ∀ x y v w : List Rat, x.length = y.length → v.length = x.length →
    w.length = x.length → padd (along t x v) (along t y w) = along t (padd x y) (padd v w)
  | [], _, _, _, _, _, _ => rfl
  | _ :: _, [], _, _, h, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, [], _, _, h => absurd h (nil_ne_cons_length _ _)
  | a :: as, b :: bs, c :: cs, e :: es, h1, h2, h3 => by
    show ((a + t * c) + (b + t * e)) :: padd (along t as cs) (along t bs es) =
      ((a + b) + t * (c + e)) :: along t (padd as bs) (padd cs es)
    rw [add_step t a b c e, padd_along t as bs cs es (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3)]

/-- c·(a + t·b) = c·a + t·(c·b). -/
theorem smul_step (c t a b : Rat) : c * (a + t * b) = c * a + t * (c * b) := by
  rw [Rat.mul_add, ← Rat.mul_assoc c t b, Rat.mul_comm c t, Rat.mul_assoc t c b]

theorem smul_along (c t : Rat) : ∀ x v : List Rat, smul c (along t x v) = along t (smul c x) (smul c v)
  | [], _ => rfl
  | _ :: _, [] => rfl
  | a :: as, b :: bs => by
    show c * (a + t * b) :: smul c (along t as bs) = (c * a + t * (c * b)) :: along t (smul c as) (smul c bs)
    rw [smul_step c t a b, smul_along c t as bs]

theorem zerosN_along (t : Rat) : ∀ n : Nat, along t (zerosN n) (zerosN n) = zerosN n
  | 0 => rfl
  | n + 1 => by
    show (0 + t * 0) :: along t (zerosN n) (zerosN n) = 0 :: zerosN n
    rw [Rat.mul_zero, Rat.add_zero, zerosN_along t n]

/-! ## The axis reductions are linear along every line -/

theorem sumChunks_along (t : Rat) (B : Nat) : ∀ (K : Nat) (x v : List Rat), x.length = K * B →
    v.length = x.length → sumChunks B K (along t x v) = along t (sumChunks B K x) (sumChunks B K v)
  | 0, _, _, _, _ => by
    show zerosN B = along t (zerosN B) (zerosN B)
    rw [zerosN_along t B]
  | K + 1, x, v, h, hv => by
    have hx : x.length = K * B + B := by rw [h, Nat.add_mul, Nat.one_mul]
    have htx : (x.take B).length = B := length_take_of_le B x (by omega)
    have htv : (v.take B).length = B := length_take_of_le B v (by omega)
    have hdx : (x.drop B).length = K * B := by
      rw [List.length_drop]
      omega
    have hdv : (v.drop B).length = (x.drop B).length := by
      rw [List.length_drop, List.length_drop, hv]
    have hdv' : (v.drop B).length = K * B := by rw [hdv, hdx]
    show padd ((along t x v).take B) (sumChunks B K ((along t x v).drop B)) =
      along t (padd (x.take B) (sumChunks B K (x.drop B))) (padd (v.take B) (sumChunks B K (v.drop B)))
    rw [take_along t B x v, drop_along t B x v, sumChunks_along t B K (x.drop B) (v.drop B) hdx hdv,
      padd_along t (x.take B) (sumChunks B K (x.drop B)) (v.take B) (sumChunks B K (v.drop B))
        (by rw [htx, length_sumChunks B K (x.drop B) hdx])
        (by rw [htv, htx])
        (by rw [length_sumChunks B K (v.drop B) hdv', htx])]

/-- The sum over the middle axis of [A, K, B] commutes with every line. -/
theorem reduceAKB_along (t : Rat) (K B : Nat) : ∀ (A : Nat) (x v : List Rat),
    x.length = A * (K * B) → v.length = x.length →
    reduceAKB K B A (along t x v) = along t (reduceAKB K B A x) (reduceAKB K B A v)
  | 0, _, _, _, _ => rfl
  | A + 1, x, v, h, hv => by
    have hx : x.length = A * (K * B) + K * B := by rw [h, Nat.add_mul, Nat.one_mul]
    have htx : (x.take (K * B)).length = K * B := length_take_of_le (K * B) x (by omega)
    have htv0 : (v.take (K * B)).length = K * B := length_take_of_le (K * B) v (by omega)
    have htv : (v.take (K * B)).length = (x.take (K * B)).length := by rw [htv0, htx]
    have hdx : (x.drop (K * B)).length = A * (K * B) := by
      rw [List.length_drop]
      omega
    have hdv : (v.drop (K * B)).length = (x.drop (K * B)).length := by
      rw [List.length_drop, List.length_drop, hv]
    show sumChunks B K ((along t x v).take (K * B)) ++ reduceAKB K B A ((along t x v).drop (K * B)) =
      along t (sumChunks B K (x.take (K * B)) ++ reduceAKB K B A (x.drop (K * B)))
        (sumChunks B K (v.take (K * B)) ++ reduceAKB K B A (v.drop (K * B)))
    rw [take_along t (K * B) x v, drop_along t (K * B) x v,
      sumChunks_along t B K (x.take (K * B)) (v.take (K * B)) htx htv,
      reduceAKB_along t K B A (x.drop (K * B)) (v.drop (K * B)) hdx hdv,
      along_append t (sumChunks B K (x.take (K * B))) (reduceAKB K B A (x.drop (K * B)))
        (sumChunks B K (v.take (K * B))) (reduceAKB K B A (v.drop (K * B)))
        (by rw [length_sumChunks B K (x.take (K * B)) htx, length_sumChunks B K (v.take (K * B)) htv0])]

/-- reduce_sum: fwd(x + t·v) = fwd x + t·jvp x v (R = 0). -/
theorem reduce_sum_taylor (a : Attr) (t : Rat) (x v : List Rat)
    (hx : x.length = a.dimA * (a.dimK * a.dimB)) (hv : v.length = x.length) :
    Prim.fwd .reduce_sum a [along t x v] =
      padd (Prim.fwd .reduce_sum a [x]) (smul t (Prim.jvp .reduce_sum a [x] [v])) := by
  show reduceAKB a.dimK a.dimB a.dimA (along t x v) =
    padd (reduceAKB a.dimK a.dimB a.dimA x) (smul t (reduceAKB a.dimK a.dimB a.dimA v))
  rw [reduceAKB_along t a.dimK a.dimB a.dimA x v hx hv,
    along_eq t (reduceAKB a.dimK a.dimB a.dimA x) (reduceAKB a.dimK a.dimB a.dimA v)
      (by rw [length_reduceAKB a.dimK a.dimB a.dimA x hx,
        length_reduceAKB a.dimK a.dimB a.dimA v (by rw [hv, hx])])]

/-- reduce_mean: the same through the scale 1/K. -/
theorem reduce_mean_taylor (a : Attr) (t : Rat) (x v : List Rat)
    (hx : x.length = a.dimA * (a.dimK * a.dimB)) (hv : v.length = x.length) :
    Prim.fwd .reduce_mean a [along t x v] =
      padd (Prim.fwd .reduce_mean a [x]) (smul t (Prim.jvp .reduce_mean a [x] [v])) := by
  show smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA (along t x v)) =
    padd (smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA x))
      (smul t (smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA v)))
  rw [reduceAKB_along t a.dimK a.dimB a.dimA x v hx hv,
    smul_along (1 / (a.dimK : Rat)) t (reduceAKB a.dimK a.dimB a.dimA x) (reduceAKB a.dimK a.dimB a.dimA v),
    along_eq t (smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA x))
      (smul (1 / (a.dimK : Rat)) (reduceAKB a.dimK a.dimB a.dimA v))
      (by rw [length_smul, length_smul, length_reduceAKB a.dimK a.dimB a.dimA x hx,
        length_reduceAKB a.dimK a.dimB a.dimA v (by rw [hv, hx])])]

/-! ## Bilinear contractions: matmul -/

/-- The reduction of a second-order line: R(p + t·j + t²·q) = R p + t·R j + t²·R q,
for lists of the view's length A·(K·B). -/
theorem reduceAKB_second (t : Rat) (K B A : Nat) (p j q : List Rat)
    (hp : p.length = A * (K * B)) (hj : j.length = p.length) (hq : q.length = p.length) :
    reduceAKB K B A (padd (padd p (smul t j)) (smul (t * t) q)) =
      padd (padd (reduceAKB K B A p) (smul t (reduceAKB K B A j))) (smul (t * t) (reduceAKB K B A q)) := by
  have hl : (along t p j).length = A * (K * B) := by rw [length_along t p j hj.symm, hp]
  have hRp : (reduceAKB K B A p).length = A * B := length_reduceAKB K B A p hp
  have hRj : (reduceAKB K B A j).length = A * B := length_reduceAKB K B A j (by rw [hj, hp])
  have hRq : (reduceAKB K B A q).length = A * B := length_reduceAKB K B A q (by rw [hq, hp])
  have hRl : (along t (reduceAKB K B A p) (reduceAKB K B A j)).length = A * B := by
    rw [length_along t (reduceAKB K B A p) (reduceAKB K B A j) (by rw [hRp, hRj]), hRp]
  rw [← along_eq t p j hj.symm, ← along_eq (t * t) (along t p j) q (by rw [hl, hq, hp]),
    reduceAKB_along (t * t) K B A (along t p j) q hl (by rw [hq, hp, hl]),
    reduceAKB_along t K B A p j hp hj,
    along_eq (t * t) (along t (reduceAKB K B A p) (reduceAKB K B A j)) (reduceAKB K B A q) (by rw [hRl, hRq]),
    along_eq t (reduceAKB K B A p) (reduceAKB K B A j) (by rw [hRp, hRj])]

/-- The gathered operands along a line: g(x + t·dx) = g x + t·g dx, as a line. -/
theorem gather_line (g : List Nat) (t : Rat) (x dx : List Rat) (h : x.length = dx.length) :
    gather g (along t x dx) = along t (gather g x) (gather g dx) := by
  rw [gather_along g t x dx h, along_eq t (gather g x) (gather g dx) (by rw [length_gather, length_gather])]

/-- matmul: fwd(x + t·dx, y + t·dy) = fwd(x, y) + t·jvp + t²·fwd(dx, dy). -/
theorem matmul_taylor (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hx : x.length = dx.length) (hy : y.length = dy.length) :
    Prim.fwd .matmul a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .matmul a [x, y]) (smul t (Prim.jvp .matmul a [x, y] [dx, dy])))
        (smul (t * t) (Prim.fwd .matmul a [dx, dy])) := by
  have hX : (gather a.mmGa x).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGa]
  have hDX : (gather a.mmGa dx).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGa]
  have hY : (gather a.mmGb y).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGb]
  have hDY : (gather a.mmGb dy).length = a.mmOut * (a.mmK * 1) := by rw [length_gather, length_mmGb]
  have hP : (pmul (gather a.mmGa x) (gather a.mmGb y)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa x) (gather a.mmGb y) (by rw [hX, hY]), hX]
  have hJ1 : (pmul (gather a.mmGa dx) (gather a.mmGb y)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa dx) (gather a.mmGb y) (by rw [hDX, hY]), hDX]
  have hJ2 : (pmul (gather a.mmGa x) (gather a.mmGb dy)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa x) (gather a.mmGb dy) (by rw [hX, hDY]), hX]
  have hJ : (padd (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy))).length =
      a.mmOut * (a.mmK * 1) := by
    rw [length_padd_eq (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy))
      (by rw [hJ1, hJ2]), hJ1]
  have hQ : (pmul (gather a.mmGa dx) (gather a.mmGb dy)).length = a.mmOut * (a.mmK * 1) := by
    rw [length_pmul_eq (gather a.mmGa dx) (gather a.mmGb dy) (by rw [hDX, hDY]), hDX]
  show reduceAKB a.mmK 1 a.mmOut (pmul (gather a.mmGa (along t x dx)) (gather a.mmGb (along t y dy))) =
    padd (padd (reduceAKB a.mmK 1 a.mmOut (pmul (gather a.mmGa x) (gather a.mmGb y)))
      (smul t (reduceAKB a.mmK 1 a.mmOut
        (padd (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy))))))
      (smul (t * t) (reduceAKB a.mmK 1 a.mmOut (pmul (gather a.mmGa dx) (gather a.mmGb dy))))
  rw [gather_line a.mmGa t x dx hx, gather_line a.mmGb t y dy hy,
    mul_taylor_lists t (gather a.mmGa x) (gather a.mmGb y) (gather a.mmGa dx) (gather a.mmGb dy)
      (by rw [hX, hY]) (by rw [hDX, hX]) (by rw [hDY, hX]),
    pmul_comm (gather a.mmGb y) (gather a.mmGa dx),
    reduceAKB_second t a.mmK 1 a.mmOut (pmul (gather a.mmGa x) (gather a.mmGb y))
      (padd (pmul (gather a.mmGa dx) (gather a.mmGb y)) (pmul (gather a.mmGa x) (gather a.mmGb dy)))
      (pmul (gather a.mmGa dx) (gather a.mmGb dy)) hP (by rw [hJ, hP]) (by rw [hQ, hP])]

/-! ## linear: bilinear in x and W, affine in b -/

/-- (p + t·j + s·q) + (g + t·d) = (p + g) + t·(j + d) + s·q. -/
theorem lin_step (t s p j q g d : Rat) :
    (p + t * j + s * q) + (g + t * d) = (p + g) + t * (j + d) + s * q := by
  first
    | rw [Rat.add_assoc (p + t * j) (s * q) (g + t * d), Rat.add_comm (s * q) (g + t * d),
        ← Rat.add_assoc (p + t * j) (g + t * d) (s * q), add_step t p g j d]
    | grind

/-- A second-order line plus a first-order one, on lists of one length. -/
theorem padd_second (t : Rat) : ∀ P J Q G D : List Rat,
    J.length = P.length → Q.length = P.length → G.length = P.length → D.length = P.length →
    padd (padd (padd P (smul t J)) (smul (t * t) Q)) (padd G (smul t D)) =
      padd (padd (padd P G) (smul t (padd J D))) (smul (t * t) Q)
  | [], _, _, _, _, _, _, _, _ => rfl
  | _ :: _, [], _, _, _, h, _, _, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, _, _, h, _, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, [], _, _, _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, _ :: _, [], _, _, _, h => absurd h (nil_ne_cons_length _ _)
  | p :: ps, j :: js, q :: qs, g :: gs, d :: ds, h1, h2, h3, h4 => by
    show ((p + t * j + t * t * q) + (g + t * d)) ::
        padd (padd (padd ps (smul t js)) (smul (t * t) qs)) (padd gs (smul t ds)) =
      ((p + g) + t * (j + d) + t * t * q) :: padd (padd (padd ps gs) (smul t (padd js ds))) (smul (t * t) qs)
    rw [lin_step t (t * t) p j q g d,
      padd_second t ps js qs gs ds (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3) (Nat.succ.inj h4)]

/-- linear: fwd(x + t·dx, W + t·dW, b + t·db) = fwd(x, W, b) + t·jvp + t²·R with
R the [B, m, n] contraction of dx and dW (b enters linearly). -/
theorem linear_taylor (a : Attr) (t : Rat) (x w b dx dw db : List Rat)
    (hx : x.length = dx.length) (hw : w.length = dw.length) (hb : b.length = db.length) :
    Prim.fwd .linear a [along t x dx, along t w dw, along t b db] =
      padd (padd (Prim.fwd .linear a [x, w, b]) (smul t (Prim.jvp .linear a [x, w, b] [dx, dw, db])))
        (smul (t * t) (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx dx) (gather a.linGw dw)))) := by
  have hX : (gather a.linGx x).length = a.linB * a.linM * (a.linN * 1) := by rw [length_gather, length_linGx]
  have hDX : (gather a.linGx dx).length = a.linB * a.linM * (a.linN * 1) := by rw [length_gather, length_linGx]
  have hW : (gather a.linGw w).length = a.linB * a.linM * (a.linN * 1) := by rw [length_gather, length_linGw]
  have hDW : (gather a.linGw dw).length = a.linB * a.linM * (a.linN * 1) := by rw [length_gather, length_linGw]
  have hGB : (gather a.linGb b).length = a.linB * a.linM * 1 := by rw [length_gather, length_linGb]
  have hGD : (gather a.linGb db).length = a.linB * a.linM * 1 := by rw [length_gather, length_linGb]
  have hP : (pmul (gather a.linGx x) (gather a.linGw w)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx x) (gather a.linGw w) (by rw [hX, hW]), hX]
  have hJ1 : (pmul (gather a.linGx dx) (gather a.linGw w)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx dx) (gather a.linGw w) (by rw [hDX, hW]), hDX]
  have hJ2 : (pmul (gather a.linGx x) (gather a.linGw dw)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx x) (gather a.linGw dw) (by rw [hX, hDW]), hX]
  have hJ : (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))).length =
      a.linB * a.linM * (a.linN * 1) := by
    rw [length_padd_eq (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))
      (by rw [hJ1, hJ2]), hJ1]
  have hQ : (pmul (gather a.linGx dx) (gather a.linGw dw)).length = a.linB * a.linM * (a.linN * 1) := by
    rw [length_pmul_eq (gather a.linGx dx) (gather a.linGw dw) (by rw [hDX, hDW]), hDX]
  have hRP : (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx x) (gather a.linGw w))).length =
      a.linB * a.linM * 1 :=
    length_reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx x) (gather a.linGw w)) hP
  have hRJ : (reduceAKB a.linN 1 (a.linB * a.linM)
      (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw)))).length =
      a.linB * a.linM * 1 :=
    length_reduceAKB a.linN 1 (a.linB * a.linM)
      (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))) hJ
  have hRQ : (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx dx) (gather a.linGw dw))).length =
      a.linB * a.linM * 1 :=
    length_reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx dx) (gather a.linGw dw)) hQ
  show padd (reduceAKB a.linN 1 (a.linB * a.linM)
        (pmul (gather a.linGx (along t x dx)) (gather a.linGw (along t w dw)))) (gather a.linGb (along t b db)) =
    padd (padd (padd (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx x) (gather a.linGw w)))
        (gather a.linGb b))
      (smul t (padd (reduceAKB a.linN 1 (a.linB * a.linM)
        (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))))
        (gather a.linGb db))))
      (smul (t * t) (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx dx) (gather a.linGw dw))))
  rw [gather_line a.linGx t x dx hx, gather_line a.linGw t w dw hw, gather_along a.linGb t b db hb,
    mul_taylor_lists t (gather a.linGx x) (gather a.linGw w) (gather a.linGx dx) (gather a.linGw dw)
      (by rw [hX, hW]) (by rw [hDX, hX]) (by rw [hDW, hX]),
    pmul_comm (gather a.linGw w) (gather a.linGx dx),
    reduceAKB_second t a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx x) (gather a.linGw w))
      (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw)))
      (pmul (gather a.linGx dx) (gather a.linGw dw)) hP (by rw [hJ, hP]) (by rw [hQ, hP]),
    padd_second t (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx x) (gather a.linGw w)))
      (reduceAKB a.linN 1 (a.linB * a.linM)
        (padd (pmul (gather a.linGx dx) (gather a.linGw w)) (pmul (gather a.linGx x) (gather a.linGw dw))))
      (reduceAKB a.linN 1 (a.linB * a.linM) (pmul (gather a.linGx dx) (gather a.linGw dw)))
      (gather a.linGb b) (gather a.linGb db)
      (by rw [hRJ, hRP]) (by rw [hRQ, hRP]) (by rw [hGB, hRP]) (by rw [hGD, hRP])]

/-! ## pad: affine, the fill does not enter the JVP -/

/-- (A + T) + F = (A + F) + T on lists of one length. -/
theorem padd_swap : ∀ A T F : List Rat, T.length = A.length → F.length = A.length →
    padd (padd A T) F = padd (padd A F) T
  | [], _, _, _, _ => rfl
  | _ :: _, [], _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, h => absurd h (nil_ne_cons_length _ _)
  | a :: as, t :: ts, f :: fs, h1, h2 => by
    show (a + t + f) :: padd (padd as ts) fs = (a + f + t) :: padd (padd as fs) ts
    rw [Rat.add_assoc a t f, Rat.add_comm t f, ← Rat.add_assoc a f t,
      padd_swap as ts fs (Nat.succ.inj h1) (Nat.succ.inj h2)]

/-- pad: fwd(x + t·v) = fwd x + t·jvp x v (R = 0): the constant fill is in
the forward, not in the JVP. -/
theorem pad_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .pad a [along t x v] = padd (Prim.fwd .pad a [x]) (smul t (Prim.jvp .pad a [x] [v])) := by
  have hT : (smul t (gather a.padIdx v)).length = (gather a.padIdx x).length := by
    rw [length_smul, length_gather, length_gather]
  have hF : a.padFill.length = (gather a.padIdx x).length := by
    rw [length_gather]
    first
      | exact (length_idx _ _).trans (length_idx _ _).symm
      | (unfold Attr.padFill Attr.padIdx; exact (length_idx _ _).trans (length_idx _ _).symm)
  show padd (gather a.padIdx (along t x v)) a.padFill =
    padd (padd (gather a.padIdx x) a.padFill) (smul t (gather a.padIdx v))
  rw [gather_along a.padIdx t x v h, padd_swap (gather a.padIdx x) (smul t (gather a.padIdx v)) a.padFill hT hF]

/-! ## mse_loss: quadratic, the remainder is the loss of the tangents -/

/-- (p + t·q + s·u) + (P + t·Q + s·U) = (p + P) + t·(q + Q) + s·(u + U). -/
theorem add3_step (t s p q u P Q U : Rat) :
    (p + t * q + s * u) + (P + t * Q + s * U) = (p + P) + t * (q + Q) + s * (u + U) := by
  rw [add_step s (p + t * q) (P + t * Q) u U, add_step t p P q Q]

/-- ⟨r + t·s, r + t·s⟩ = ⟨r, r⟩ + t·Σ 2rᵢsᵢ + t²·⟨s, s⟩. -/
theorem dot_along_self (t : Rat) : ∀ r s : List Rat, r.length = s.length →
    dot (along t r s) (along t r s) = dot r r + t * dot (pmap squareD r) s + t * t * dot s s
  | [], [], _ => by
    show (0 : Rat) = 0 + t * 0 + t * t * 0
    first
      | rw [Rat.mul_zero, Rat.mul_zero, Rat.add_zero, Rat.add_zero]
      | grind
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, h => by
    show (a + t * b) * (a + t * b) + dot (along t as bs) (along t as bs) =
      (a * a + dot as as) + t * (squareD a * b + dot (pmap squareD as) bs) + t * t * (b * b + dot bs bs)
    rw [square_step t a b, dot_along_self t as bs (Nat.succ.inj h)]
    exact add3_step t (t * t) (a * a) (squareD a * b) (b * b) (dot as as) (dot (pmap squareD as) bs) (dot bs bs)

theorem dot_pmap_squareD : ∀ r s : List Rat, dot (pmap squareD r) s = 2 * dot r s
  | [], [] => by
    show (0 : Rat) = 2 * 0
    rw [Rat.mul_zero]
  | [], _ :: _ => by
    show (0 : Rat) = 2 * 0
    rw [Rat.mul_zero]
  | _ :: _, [] => by
    show (0 : Rat) = 2 * 0
    rw [Rat.mul_zero]
  | a :: as, b :: bs => by
    show 2 * a * b + dot (pmap squareD as) bs = 2 * (a * b + dot as bs)
    rw [dot_pmap_squareD as bs, Rat.mul_add, Rat.mul_assoc 2 a b]

/-- The scalar step of mse_loss: division by N distributes over the three orders. -/
theorem mse_step (D E S N t : Rat) :
    (D + t * (2 * E) + t * t * S) / N = D / N + t * (2 / N * E) + t * t * (S / N) := by
  first
    | rw [Rat.div_def (D + t * (2 * E) + t * t * S) N, Rat.div_def D N, Rat.div_def 2 N, Rat.div_def S N,
        Rat.add_mul (D + t * (2 * E)) (t * t * S) N⁻¹, Rat.add_mul D (t * (2 * E)) N⁻¹,
        Rat.mul_assoc t (2 * E) N⁻¹, Rat.mul_assoc 2 E N⁻¹, Rat.mul_assoc 2 N⁻¹ E, Rat.mul_comm N⁻¹ E,
        Rat.mul_assoc (t * t) S N⁻¹]
    | grind

/-- The residual along a line is the line of residuals. -/
theorem resid_along (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    resid (along t x dx) (along t y dy) = along t (resid x y) (resid dx dy) := by
  show padd (along t x dx) (smul (-1) (along t y dy)) = along t (padd x (smul (-1) y)) (padd dx (smul (-1) dy))
  rw [smul_along (-1) t y dy,
    padd_along t x (smul (-1) y) dx (smul (-1) dy) (by rw [length_smul]; exact hxy) hx
      (by rw [length_smul]; exact hy)]

/-- mse_loss: fwd(x + t·dx, y + t·dy) = fwd(x, y) + t·jvp + t²·fwd(dx, dy). -/
theorem mse_loss_taylor (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    Prim.fwd .mse_loss a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .mse_loss a [x, y]) (smul t (Prim.jvp .mse_loss a [x, y] [dx, dy])))
        (smul (t * t) (Prim.fwd .mse_loss a [dx, dy])) := by
  have hrx : (resid x y).length = x.length := length_padd_eq x (smul (-1) y) (by rw [length_smul]; exact hxy)
  have hrd : (resid dx dy).length = dx.length := length_padd_eq dx (smul (-1) dy) (by rw [length_smul, hx, hy])
  have hr : (resid x y).length = (resid dx dy).length := by rw [hrx, hrd, hx]
  show [dot (resid (along t x dx) (along t y dy)) (resid (along t x dx) (along t y dy)) /
      mseN (along t x dx).length] =
    [dot (resid x y) (resid x y) / mseN x.length + t * (2 / mseN x.length * dot (resid x y) (resid dx dy)) +
      t * t * (dot (resid dx dy) (resid dx dy) / mseN dx.length)]
  rw [resid_along t x y dx dy hxy hx hy, length_along t x dx hx.symm, hx,
    dot_along_self t (resid x y) (resid dx dy) hr, dot_pmap_squareD (resid x y) (resid dx dy),
    mse_step (dot (resid x y) (resid x y)) (dot (resid x y) (resid dx dy)) (dot (resid dx dy) (resid dx dy))
      (mseN x.length) t]

/-! ## sqrt: the inverse of squaring at the root -/

/-- Where a > 0 and s·s = a, the tangent 1/(2s)·v pushed through square's
Taylor identity at s reproduces a + t·v to first order, exactly. -/
theorem sqrt_inverse_step (a s t v : Rat) (ha : 0 < a) (hsq : s * s = a) :
    (s + t * (1 / (2 * s) * v)) * (s + t * (1 / (2 * s) * v)) =
      a + t * v + t * t * ((1 / (2 * s) * v) * (1 / (2 * s) * v)) := by
  have hs : s ≠ 0 := fun h => Rat.ne_of_gt ha (by rw [← hsq, h, Rat.zero_mul])
  have h2 : (2 : Rat) ≠ 0 := by decide
  have h2s : 2 * s ≠ 0 := fun h => (Rat.mul_eq_zero.mp h).elim h2 hs
  have hd : squareD s * (1 / (2 * s) * v) = v := by
    unfold squareD
    rw [← Rat.mul_assoc (2 * s) (1 / (2 * s)) v, Rat.div_def 1 (2 * s), Rat.one_mul ((2 * s)⁻¹),
      Rat.mul_inv_cancel (2 * s) h2s, Rat.one_mul v]
  rw [square_step t s (1 / (2 * s) * v), hd, hsq]

/-- sqrt's first-order rule inverts square's: squareD (sqrtS a) · sqrtD a = 1
where a > 0 is the square of its root (the registry's domain). -/
theorem sqrt_chain (a : Rat) (ha : 0 < a) (hsq : ratSqrt a * ratSqrt a = a) :
    squareD (sqrtS a) * sqrtD a = 1 := by
  have hs : ratSqrt a ≠ 0 := fun h => Rat.ne_of_gt ha (by rw [← hsq, h, Rat.zero_mul])
  have h2 : (2 : Rat) ≠ 0 := by decide
  have h2s : 2 * ratSqrt a ≠ 0 := fun h => (Rat.mul_eq_zero.mp h).elim h2 hs
  unfold sqrtS sqrtD squareD
  rw [if_pos ha, if_pos ha, Rat.div_def 1 (2 * ratSqrt a), Rat.one_mul, Rat.mul_inv_cancel (2 * ratSqrt a) h2s]

/-- sqrt over its representation: at a > 0 with s = sqrtS a a root (s·s = a),
(s + t·jvp)² = a + t·v + t²·jvp², jvp = sqrtD a · v. -/
theorem sqrt_inverse_taylor (a t v : Rat) (ha : 0 < a) (hsq : ratSqrt a * ratSqrt a = a) :
    (sqrtS a + t * (sqrtD a * v)) * (sqrtS a + t * (sqrtD a * v)) =
      a + t * v + t * t * ((sqrtD a * v) * (sqrtD a * v)) := by
  unfold sqrtS sqrtD
  rw [if_pos ha, if_pos ha]
  exact sqrt_inverse_step a (ratSqrt a) t v ha hsq

end Tlcheck
