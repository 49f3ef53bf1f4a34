import Tlcheck.Spec

/-!
# The JVPs of `Tlcheck.Spec` are the derivatives of the forwards

`Tlcheck.Adjoint` proves that each VJP is the adjoint of its JVP; that holds
for any partial derivatives, right or wrong. This module ties each JVP to
its forward rule, with no limits, as algebraic identities over `Rat`:

* **Polynomial and rational primitives** (`square`, `mul`, `neg`, `scale`,
  `inv` and `div` where no denominator vanishes, `sum`): the exact Taylor
  identity along a line,

      fwd (x + t•v) = fwd x + t • jvp x v + t² • R x v t,

  for all `x v t`, with the remainder `R` explicit (`rem1`/`rem2` of a
  scalar formula).
* **Piecewise-linear primitives** (`relu`, `abs`, `max`, `min`, `clamp`): exact
  linearity, `fwd (x + t•v) = fwd x + t • jvp x v`, for every `t` that keeps
  every element on the same side of every kink as at `x` (for an `x` off
  the kinks that is every `t` near 0); and, as separate statements, the
  registry's conventions at the kinks (also `clamp`'s at its bounds;
  `clamp_local_linear` is its linearity between them).
* **Linear maps**: `jvp x v = fwd v` for the index maps `permute`,
  `transpose`, `slice`, `broadcast_to` and for `reshape`, `flatten`,
  `concat` (by `rfl`), and `fwd (x + t•v) = fwd x + t • jvp x v` for the
  four index maps (every gather is linear, `gather_along`) and `sum`.
  That each index list implements its op (is the permutation, slice or
  broadcast it claims) is not proved here yet.

A wrong derivative makes a statement here false. With the planted
`squareD a := 3 * a`, `square_taylor` at x = [1], v = [1], t = 1 reads
`[4] = [1 + 3 + 1]`, i.e. `4 = 5`: false (the counter-instance; the
remainder is fixed by the statement, `rem1 (fun _ b => b * b)`, so no
other choice of R can rescue it). Its Go mirror is
`leanbridge/emit/taylor_test.go`, which checks the same identities
numerically on the registry's own rules and fails on the planted rule.

Proof style: induction on lists with `show` for definitional unfolding and
`rw` with the scalar step; the scalar steps of the piecewise-linear rules are
explicit `if_pos`/`if_neg` rewrites followed by core `Rat` lemmas. The ring
identities `mul_step` and `square_step` are explicit rewrite chains (every
rewrite given its arguments), with `grind` only as the fallback arm of a
`first`; so are the field identities `inv_step` (both sides times a²(a + t·b),
then `rmul_right_cancel`) and `div_step` (both sides times b²(b + t·e), the
numerator identity `div_poly` expanded into five monomials and cancelled by
`div_cancel_sum`); `grind`, whose commutative-ring normaliser (with the core
instance `Lean.Grind.Field Rat`) decides such identities, is only their
fallback arm; each is a single equation in at most five variables.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## Lines and remainders -/

/-- The point x + t·v, pointwise (truncating to the shorter list). -/
def along (t : Rat) : List Rat → List Rat → List Rat
  | a :: as, b :: bs => (a + t * b) :: along t as bs
  | _, _ => []

/-- The remainder of a unary rule, pointwise: r aᵢ bᵢ. -/
def rem1 (r : Rat → Rat → Rat) : List Rat → List Rat → List Rat
  | a :: as, b :: bs => r a b :: rem1 r as bs
  | _, _ => []

/-- The remainder of a binary rule, pointwise: r aᵢ bᵢ cᵢ eᵢ. -/
def rem2 (r : Rat → Rat → Rat → Rat → Rat) : List Rat → List Rat → List Rat → List Rat → List Rat
  | a :: as, b :: bs, c :: cs, e :: es => r a b c e :: rem2 r as bs cs es
  | _, _, _, _ => []

/-- A side condition on every pair (aᵢ, bᵢ). -/
def All2 (P : Rat → Rat → Prop) : List Rat → List Rat → Prop
  | a :: as, b :: bs => P a b ∧ All2 P as bs
  | _, _ => True

/-- A side condition on every quadruple (aᵢ, bᵢ, cᵢ, eᵢ). -/
def All4 (P : Rat → Rat → Rat → Rat → Prop) : List Rat → List Rat → List Rat → List Rat → Prop
  | a :: as, b :: bs, c :: cs, e :: es => P a b c e ∧ All4 P as bs cs es
  | _, _, _, _ => True

theorem all2_true : ∀ x v : List Rat, All2 (fun _ _ => True) x v
  | [], _ => True.intro
  | _ :: _, [] => True.intro
  | _ :: as, _ :: bs => And.intro True.intro (all2_true as bs)

theorem all4_true : ∀ x y dx dy : List Rat, All4 (fun _ _ _ _ => True) x y dx dy
  | [], _, _, _ => True.intro
  | _ :: _, [], _, _ => True.intro
  | _ :: _, _ :: _, [], _ => True.intro
  | _ :: _, _ :: _, _ :: _, [] => True.intro
  | _ :: as, _ :: bs, _ :: cs, _ :: es => And.intro True.intro (all4_true as bs cs es)

/-- `<` is irreflexive on `Rat` (from `Rat.ne_of_lt`). -/
theorem rlt_irrefl (a : Rat) : ¬ a < a := fun h => Rat.ne_of_lt h rfl

/-! ## The two lifting lemmas -/

/-- A pointwise rule f with derivative d and remainder r at every pair
satisfying P satisfies the Taylor identity on lists. -/
theorem pmap_along (f d : Rat → Rat) (r : Rat → Rat → Rat) (P : Rat → Rat → Prop) (t : Rat)
    (hf : ∀ a b : Rat, P a b → f (a + t * b) = f a + t * (d a * b) + t * t * r a b) :
    ∀ x v : List Rat, x.length = v.length → All2 P x v →
      pmap f (along t x v) =
        padd (padd (pmap f x) (smul t (pmul (pmap d x) v))) (smul (t * t) (rem1 r x v))
  | [], [], _, _ => rfl
  | [], _ :: _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h, _ => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, h, hp => by
    show f (a + t * b) :: pmap f (along t as bs) =
      (f a + t * (d a * b) + t * t * r a b) ::
        padd (padd (pmap f as) (smul t (pmul (pmap d as) bs))) (smul (t * t) (rem1 r as bs))
    rw [hf a b hp.1, pmap_along f d r P t hf as bs (Nat.succ.inj h) hp.2]

/-- The same for a pointwise binary rule f with partials da, db. -/
theorem pmap2_along (f da db : Rat → Rat → Rat) (r : Rat → Rat → Rat → Rat → Rat)
    (P : Rat → Rat → Rat → Rat → Prop) (t : Rat)
    (hf : ∀ a b c e : Rat, P a b c e →
      f (a + t * c) (b + t * e) = f a b + t * (da a b * c + db a b * e) + t * t * r a b c e) :
    ∀ x y dx dy : List Rat, x.length = y.length → dx.length = x.length → dy.length = x.length →
      All4 P x y dx dy →
      pmap2 f (along t x dx) (along t y dy) =
        padd (padd (pmap2 f x y) (smul t (padd (pmul (pmap2 da x y) dx) (pmul (pmap2 db x y) dy))))
          (smul (t * t) (rem2 r x y dx dy))
  | [], _, _, _, _, _, _, _ => rfl
  | _ :: _, [], _, _, h, _, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, _, h, _, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, [], _, _, h, _ => absurd h (nil_ne_cons_length _ _)
  | a :: as, b :: bs, c :: cs, e :: es, h1, h2, h3, hp => by
    show f (a + t * c) (b + t * e) :: pmap2 f (along t as cs) (along t bs es) =
      (f a b + t * (da a b * c + db a b * e) + t * t * r a b c e) ::
        padd (padd (pmap2 f as bs) (smul t (padd (pmul (pmap2 da as bs) cs) (pmul (pmap2 db as bs) es))))
          (smul (t * t) (rem2 r as bs cs es))
    rw [hf a b c e hp.1,
      pmap2_along f da db r P t hf as bs cs es (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3) hp.2]

theorem pmul_self : ∀ l : List Rat, pmul l l = pmap (fun a => a * a) l
  | [] => rfl
  | a :: as => by
    show a * a :: pmul as as = a * a :: pmap (fun a => a * a) as
    rw [pmul_self as]

theorem smul_pmap (c : Rat) : ∀ l : List Rat, smul c l = pmap (fun a => c * a) l
  | [] => rfl
  | a :: as => by
    show c * a :: smul c as = c * a :: pmap (fun a => c * a) as
    rw [smul_pmap c as]

/-! ## Scalar steps (ring and field identities) -/

/-- (a + t·c)(b + t·e) = ab + t(bc + ae) + t²(ce): distribute, bring each
monomial to `t * (…)` or `t * t * (…)`, reassociate the four-term sum. -/
theorem mul_step (t a b c e : Rat) :
    (a + t * c) * (b + t * e) = a * b + t * (b * c + a * e) + t * t * (c * e) := by
  first
    | (rw [Rat.mul_add (a + t * c) b (t * e), Rat.add_mul a (t * c) b, Rat.add_mul a (t * c) (t * e),
          Rat.mul_assoc t c b, Rat.mul_comm c b, rmul_left_comm a t e, Rat.mul_assoc t c (t * e),
          rmul_left_comm c t e, ← Rat.mul_assoc t t (c * e), Rat.mul_add t (b * c) (a * e),
          ← Rat.add_assoc (a * b + t * (b * c)) (t * (a * e)) (t * t * (c * e)),
          Rat.add_assoc (a * b) (t * (b * c)) (t * (a * e))]
       done)
    | grind

/-- 2·a·b = ab + ab (`(2 : Rat) = 1 + 1` by the kernel's arithmetic). -/
theorem two_mul_mul (a b : Rat) : 2 * a * b = a * b + a * b := by
  have h2 : (2 : Rat) = 1 + 1 := by decide +kernel
  rw [Rat.mul_assoc 2 a b, h2, Rat.add_mul 1 1 (a * b), Rat.one_mul (a * b)]

/-- square is mul on the diagonal: (a + t·b)² = a² + t·(2a·b) + t²·b². -/
theorem square_step (t a b : Rat) :
    (a + t * b) * (a + t * b) = a * a + t * (squareD a * b) + t * t * (b * b) := by
  first
    | (rw [mul_step t a a b b]
       show a * a + t * (a * b + a * b) + t * t * (b * b) = a * a + t * (2 * a * b) + t * t * (b * b)
       rw [two_mul_mul a b])
    | (unfold squareD; grind)

theorem scale_step (k t a b : Rat) :
    k * (a + t * b) = k * a + t * (k * b) + t * t * 0 := by
  rw [Rat.mul_add, Rat.mul_zero, Rat.add_zero, ← Rat.mul_assoc k t b, Rat.mul_comm k t, Rat.mul_assoc t k b]

/-- Cancelling a non-zero right factor (`Rat.mul_inv_cancel`). -/
theorem rmul_right_cancel (p q m : Rat) (hm : m ≠ 0) (h : p * m = q * m) : p = q := by
  have hp : p * m * m⁻¹ = p := by rw [Rat.mul_assoc p m m⁻¹, Rat.mul_inv_cancel m hm, Rat.mul_one]
  have hq : q * m * m⁻¹ = q := by rw [Rat.mul_assoc q m m⁻¹, Rat.mul_inv_cancel m hm, Rat.mul_one]
  exact hp.symm.trans ((congrArg (fun z => z * m⁻¹) h).trans hq)

/-- p / m · m = p for m ≠ 0 (`Rat.div_def`, `Rat.inv_mul_cancel`). -/
theorem rdiv_mul_cancel (p m : Rat) (hm : m ≠ 0) : p / m * m = p := by
  rw [Rat.div_def p m, Rat.mul_assoc p m⁻¹ m, Rat.inv_mul_cancel m hm, Rat.mul_one]

/-- A product of non-zero rationals is non-zero (`Rat.mul_eq_zero`). -/
theorem rmul_ne_zero {p q : Rat} (hp : p ≠ 0) (hq : q ≠ 0) : p * q ≠ 0 :=
  fun h => (Rat.mul_eq_zero.mp h).elim hp hq

/-- inv: 1/(a + t·b) = 1/a − t·b/a² + t²·b²/(a²·(a + t·b)) where a ≠ 0 and
a + t·b ≠ 0. Both sides times M = a²·(a + t·b) (non-zero) are a²: the left
by cancelling a + t·b, the right term by term (`h1`, `h2`, `h3`) and then
by cancelling t·ab and t²b²; so they are equal (`rmul_right_cancel`). -/
theorem inv_step (t a b : Rat) (ha : a ≠ 0) (hat : a + t * b ≠ 0) :
    1 / (a + t * b) = 1 / a + t * (invD a * b) + t * t * (b * b / (a * a * (a + t * b))) := by
  first
    | (have haa : a * a ≠ 0 := rmul_ne_zero ha ha
       have hM : a * a * (a + t * b) ≠ 0 := rmul_ne_zero haa hat
       have hL : 1 / (a + t * b) * (a * a * (a + t * b)) = a * a := by
         rw [rmul_left_comm (1 / (a + t * b)) (a * a) (a + t * b), rdiv_mul_cancel 1 (a + t * b) hat,
           Rat.mul_one (a * a)]
       have h1 : 1 / a * (a * a * (a + t * b)) = a * a + t * (a * b) := by
         rw [Rat.mul_assoc a a (a + t * b), ← Rat.mul_assoc (1 / a) a (a * (a + t * b)), rdiv_mul_cancel 1 a ha,
           Rat.one_mul (a * (a + t * b)), Rat.mul_add a a (t * b), rmul_left_comm a t b]
       have h2 : t * (-(1 / (a * a)) * b) * (a * a * (a + t * b)) = -(t * (a * b) + t * t * (b * b)) := by
         rw [Rat.neg_mul (1 / (a * a)) b, Rat.mul_neg t (1 / (a * a) * b),
           Rat.neg_mul (t * (1 / (a * a) * b)) (a * a * (a + t * b)),
           Rat.mul_assoc t (1 / (a * a) * b) (a * a * (a + t * b)),
           Rat.mul_assoc (1 / (a * a)) b (a * a * (a + t * b)), rmul_left_comm b (a * a) (a + t * b),
           ← Rat.mul_assoc (1 / (a * a)) (a * a) (b * (a + t * b)), rdiv_mul_cancel 1 (a * a) haa,
           Rat.one_mul (b * (a + t * b)), Rat.mul_add b a (t * b), Rat.mul_add t (b * a) (b * (t * b)),
           Rat.mul_comm b a, rmul_left_comm b t b, ← Rat.mul_assoc t t (b * b)]
       have h3 : t * t * (b * b / (a * a * (a + t * b))) * (a * a * (a + t * b)) = t * t * (b * b) := by
         rw [Rat.mul_assoc (t * t) (b * b / (a * a * (a + t * b))) (a * a * (a + t * b)),
           rdiv_mul_cancel (b * b) (a * a * (a + t * b)) hM]
       have hR : (1 / a + t * (-(1 / (a * a)) * b) + t * t * (b * b / (a * a * (a + t * b)))) *
           (a * a * (a + t * b)) = a * a := by
         rw [Rat.add_mul (1 / a + t * (-(1 / (a * a)) * b)) (t * t * (b * b / (a * a * (a + t * b))))
             (a * a * (a + t * b)),
           Rat.add_mul (1 / a) (t * (-(1 / (a * a)) * b)) (a * a * (a + t * b)), h1, h2, h3,
           neg_add' (t * (a * b)) (t * t * (b * b)),
           Rat.add_assoc (a * a) (t * (a * b)) (-(t * (a * b)) + -(t * t * (b * b))),
           ← Rat.add_assoc (t * (a * b)) (-(t * (a * b))) (-(t * t * (b * b))), Rat.add_neg_cancel (t * (a * b)),
           Rat.zero_add (-(t * t * (b * b))), Rat.add_assoc (a * a) (-(t * t * (b * b))) (t * t * (b * b)),
           Rat.neg_add_cancel (t * t * (b * b)), Rat.add_zero (a * a)]
       unfold invD
       exact rmul_right_cancel _ _ _ hM (hL.trans hR.symm))
    | (unfold invD; grind)

/-- The additive cancellation that ends `div_poly`: R, S and W cancel, p and Q
remain (`Rat.add_left_comm`, `Rat.add_assoc`, `Rat.add_neg_cancel`,
`Rat.neg_add_cancel`, `Rat.zero_add`, `Rat.add_zero`). -/
theorem div_cancel_sum (p R Q S W : Rat) :
    p + R + (Q + S + (-R + -W)) + (W + -S) = p + Q := by
  first
    | (have h : R + (Q + S + (-R + -W)) + (W + -S) = Q := by
         rw [Rat.add_left_comm R (Q + S) (-R + -W), ← Rat.add_assoc R (-R) (-W), Rat.add_neg_cancel R,
           Rat.zero_add (-W), Rat.add_assoc (Q + S) (-W) (W + -S), ← Rat.add_assoc (-W) W (-S),
           Rat.neg_add_cancel W, Rat.zero_add (-S), Rat.add_assoc Q S (-S), Rat.add_neg_cancel S,
           Rat.add_zero Q]
       rw [Rat.add_assoc p R (Q + S + (-R + -W)), Rat.add_assoc p (R + (Q + S + (-R + -W))) (W + -S), h])
    | grind

/-- div's numerator identity, with u = b + t·e: a·(b·u) + t·(c·(b·u) − a·e·u)
+ t²·e·(a·e − b·c) = b²·(a + t·c). Each product is expanded into the monomials
p = a·b², R = t·(a·(b·e)), Q = t·(c·b²), S = t·(t·(c·(b·e))), W = t·(t·(a·e²))
(`E1`–`E5`), t is distributed, and `div_cancel_sum` cancels R, S and W. -/
theorem div_poly (t a b c e : Rat) :
    a * (b * (b + t * e)) + t * (c * (b * (b + t * e)) + -(a * e * (b + t * e))) +
        t * t * (e * (a * e - b * c)) = b * b * (a + t * c) := by
  first
    | (have E1 : a * (b * (b + t * e)) = a * (b * b) + t * (a * (b * e)) := by
         rw [Rat.mul_add b b (t * e), Rat.mul_add a (b * b) (b * (t * e)), rmul_left_comm b t e,
           rmul_left_comm a t (b * e)]
       have E2 : c * (b * (b + t * e)) = c * (b * b) + t * (c * (b * e)) := by
         rw [Rat.mul_add b b (t * e), Rat.mul_add c (b * b) (b * (t * e)), rmul_left_comm b t e,
           rmul_left_comm c t (b * e)]
       have E3 : a * e * (b + t * e) = a * (b * e) + t * (a * (e * e)) := by
         rw [Rat.mul_add (a * e) b (t * e), Rat.mul_assoc a e b, Rat.mul_comm e b, rmul_left_comm (a * e) t e,
           Rat.mul_assoc a e e]
       have E4 : t * t * (e * (a * e - b * c)) = t * (t * (a * (e * e))) + -(t * (t * (c * (b * e)))) := by
         rw [Rat.sub_eq_add_neg (a * e) (b * c), Rat.mul_add e (a * e) (-(b * c)), Rat.mul_neg e (b * c),
           rmul_left_comm e a e, Rat.mul_comm b c, rmul_left_comm e c b, Rat.mul_comm e b,
           Rat.mul_assoc t t (a * (e * e) + -(c * (b * e))), Rat.mul_add t (a * (e * e)) (-(c * (b * e))),
           Rat.mul_neg t (c * (b * e)), Rat.mul_add t (t * (a * (e * e))) (-(t * (c * (b * e)))),
           Rat.mul_neg t (t * (c * (b * e)))]
       have E5 : b * b * (a + t * c) = a * (b * b) + t * (c * (b * b)) := by
         rw [Rat.mul_add (b * b) a (t * c), Rat.mul_comm (b * b) a, rmul_left_comm (b * b) t c,
           Rat.mul_comm (b * b) c]
       rw [E1, E2, E3, E4, E5, neg_add' (a * (b * e)) (t * (a * (e * e))),
         Rat.mul_add t (c * (b * b) + t * (c * (b * e))) (-(a * (b * e)) + -(t * (a * (e * e)))),
         Rat.mul_add t (c * (b * b)) (t * (c * (b * e))),
         Rat.mul_add t (-(a * (b * e))) (-(t * (a * (e * e)))), Rat.mul_neg t (a * (b * e)),
         Rat.mul_neg t (t * (a * (e * e)))]
       exact div_cancel_sum (a * (b * b)) (t * (a * (b * e))) (t * (c * (b * b))) (t * (t * (c * (b * e))))
         (t * (t * (a * (e * e)))))
    | grind

/-- div: (a + t·c)/(b + t·e) = a/b + t·(c/b − a·e/b²) + t²·e·(a·e − b·c)/(b²·(b + t·e))
where b ≠ 0 and b + t·e ≠ 0. As `inv_step`: both sides times M = b²·(b + t·e)
(non-zero) are b²·(a + t·c) — the left by cancelling b + t·e (`hL`), the right
term by term (`h1`–`h4`, each a cancellation `rdiv_mul_cancel`) and then by
`div_poly` — so they are equal (`rmul_right_cancel`). -/
theorem div_step (t a b c e : Rat) (hb : b ≠ 0) (hbt : b + t * e ≠ 0) :
    (a + t * c) / (b + t * e) =
      a / b + t * (divDa a b * c + divDb a b * e) + t * t * (e * (a * e - b * c) / (b * b * (b + t * e))) := by
  first
    | (show (a + t * c) / (b + t * e) =
         a / b + t * (1 / b * c + -(a / (b * b)) * e) + t * t * (e * (a * e - b * c) / (b * b * (b + t * e)))
       have hbb : b * b ≠ 0 := rmul_ne_zero hb hb
       have hM : b * b * (b + t * e) ≠ 0 := rmul_ne_zero hbb hbt
       have hL : (a + t * c) / (b + t * e) * (b * b * (b + t * e)) = b * b * (a + t * c) := by
         rw [rmul_left_comm ((a + t * c) / (b + t * e)) (b * b) (b + t * e),
           rdiv_mul_cancel (a + t * c) (b + t * e) hbt]
       have h1 : a / b * (b * b * (b + t * e)) = a * (b * (b + t * e)) := by
         rw [Rat.mul_assoc b b (b + t * e), ← Rat.mul_assoc (a / b) b (b * (b + t * e)), rdiv_mul_cancel a b hb]
       have h2 : 1 / b * c * (b * b * (b + t * e)) = c * (b * (b + t * e)) := by
         rw [Rat.mul_assoc (1 / b) c (b * b * (b + t * e)), Rat.mul_assoc b b (b + t * e),
           rmul_left_comm c b (b * (b + t * e)), ← Rat.mul_assoc (1 / b) b (c * (b * (b + t * e))),
           rdiv_mul_cancel 1 b hb, Rat.one_mul (c * (b * (b + t * e)))]
       have h3 : -(a / (b * b)) * e * (b * b * (b + t * e)) = -(a * e * (b + t * e)) := by
         rw [Rat.neg_mul (a / (b * b)) e, Rat.neg_mul (a / (b * b) * e) (b * b * (b + t * e)),
           Rat.mul_assoc (a / (b * b)) e (b * b * (b + t * e)), rmul_left_comm e (b * b) (b + t * e),
           ← Rat.mul_assoc (a / (b * b)) (b * b) (e * (b + t * e)), rdiv_mul_cancel a (b * b) hbb,
           ← Rat.mul_assoc a e (b + t * e)]
       have h4 : t * t * (e * (a * e - b * c) / (b * b * (b + t * e))) * (b * b * (b + t * e)) =
           t * t * (e * (a * e - b * c)) := by
         rw [Rat.mul_assoc (t * t) (e * (a * e - b * c) / (b * b * (b + t * e))) (b * b * (b + t * e)),
           rdiv_mul_cancel (e * (a * e - b * c)) (b * b * (b + t * e)) hM]
       have hR : (a / b + t * (1 / b * c + -(a / (b * b)) * e) +
           t * t * (e * (a * e - b * c) / (b * b * (b + t * e)))) * (b * b * (b + t * e)) =
           b * b * (a + t * c) := by
         rw [Rat.add_mul (a / b + t * (1 / b * c + -(a / (b * b)) * e))
             (t * t * (e * (a * e - b * c) / (b * b * (b + t * e)))) (b * b * (b + t * e)),
           Rat.add_mul (a / b) (t * (1 / b * c + -(a / (b * b)) * e)) (b * b * (b + t * e)),
           Rat.mul_assoc t (1 / b * c + -(a / (b * b)) * e) (b * b * (b + t * e)),
           Rat.add_mul (1 / b * c) (-(a / (b * b)) * e) (b * b * (b + t * e)), h1, h2, h3, h4]
         exact div_poly t a b c e
       exact rmul_right_cancel _ _ _ hM (hL.trans hR.symm))
    | (unfold divDa divDb; grind)

/-! ## Polynomial and rational primitives: the Taylor identity -/

/-- square: fwd(x + t·v) = fwd x + t·jvp x v + t²·(v ⊙ v). -/
theorem square_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .square a [along t x v] =
      padd (padd (Prim.fwd .square a [x]) (smul t (Prim.jvp .square a [x] [v])))
        (smul (t * t) (rem1 (fun _ b => b * b) x v)) := by
  show pmul (along t x v) (along t x v) =
    padd (padd (pmul x x) (smul t (pmul (pmap squareD x) v))) (smul (t * t) (rem1 (fun _ b => b * b) x v))
  rw [pmul_self (along t x v), pmul_self x]
  exact pmap_along (fun a => a * a) squareD (fun _ b => b * b) (fun _ _ => True) t
    (fun a b _ => square_step t a b) x v h (all2_true x v)

/-- mul: fwd(x + t·dx, y + t·dy) = fwd(x, y) + t·jvp + t²·(dx ⊙ dy). -/
theorem mul_taylor_lists (t : Rat) : ∀ x y dx dy : List Rat,
    x.length = y.length → dx.length = x.length → dy.length = x.length →
    pmul (along t x dx) (along t y dy) =
      padd (padd (pmul x y) (smul t (padd (pmul y dx) (pmul x dy)))) (smul (t * t) (pmul dx dy))
  | [], _, _, _, _, _, _ => rfl
  | _ :: _, [], _, _, h, _, _ => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, [], _, _, h, _ => absurd h (nil_ne_cons_length _ _)
  | _ :: _, _ :: _, _ :: _, [], _, _, h => absurd h (nil_ne_cons_length _ _)
  | a :: as, b :: bs, c :: cs, e :: es, h1, h2, h3 => by
    show (a + t * c) * (b + t * e) :: pmul (along t as cs) (along t bs es) =
      (a * b + t * (b * c + a * e) + t * t * (c * e)) ::
        padd (padd (pmul as bs) (smul t (padd (pmul bs cs) (pmul as es)))) (smul (t * t) (pmul cs es))
    rw [mul_step t a b c e,
      mul_taylor_lists t as bs cs es (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3)]

theorem mul_taylor (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length) :
    Prim.fwd .mul a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .mul a [x, y]) (smul t (Prim.jvp .mul a [x, y] [dx, dy])))
        (smul (t * t) (pmul dx dy)) :=
  mul_taylor_lists t x y dx dy hxy hx hy

/-- c·vᵢ as the product with the constant derivative c, over x's length. -/
theorem pmul_const_left (c : Rat) : ∀ x v : List Rat, x.length = v.length →
    pmap (fun b => c * b) v = pmul (pmap (fun _ => c) x) v
  | [], [], _ => rfl
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | _ :: xs, b :: bs, h => by
    show c * b :: pmap (fun b => c * b) bs = c * b :: pmul (pmap (fun _ => c) xs) bs
    rw [pmul_const_left c xs bs (Nat.succ.inj h)]

/-- c·(x + t·v) = c·x + t·(c·v) + t²·0. -/
theorem smul_taylor (c t : Rat) (x v : List Rat) (h : x.length = v.length) :
    smul c (along t x v) =
      padd (padd (smul c x) (smul t (smul c v))) (smul (t * t) (rem1 (fun _ _ => 0) x v)) := by
  rw [smul_pmap c (along t x v), smul_pmap c x, smul_pmap c v, pmul_const_left c x v h]
  exact pmap_along (fun b => c * b) (fun _ => c) (fun _ _ => 0) (fun _ _ => True) t
    (fun p q _ => scale_step c t p q) x v h (all2_true x v)

/-- scale: linear, the remainder is zero. -/
theorem scale_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .scale a [along t x v] =
      padd (padd (Prim.fwd .scale a [x]) (smul t (Prim.jvp .scale a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  smul_taylor a.c t x v h

/-- neg, the scale by −1. -/
theorem neg_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .neg a [along t x v] =
      padd (padd (Prim.fwd .neg a [x]) (smul t (Prim.jvp .neg a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  smul_taylor (-1) t x v h

/-- inv where no xᵢ and no xᵢ + t·vᵢ is 0: the remainder vᵢ²/(xᵢ²(xᵢ + t·vᵢ)). -/
theorem inv_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hz : All2 (fun p q => p ≠ 0 ∧ p + t * q ≠ 0) x v) :
    Prim.fwd .inv a [along t x v] =
      padd (padd (Prim.fwd .inv a [x]) (smul t (Prim.jvp .inv a [x] [v])))
        (smul (t * t) (rem1 (fun p q => q * q / (p * p * (p + t * q))) x v)) :=
  pmap_along (fun b => 1 / b) invD (fun p q => q * q / (p * p * (p + t * q)))
    (fun p q => p ≠ 0 ∧ p + t * q ≠ 0) t (fun p q hpq => inv_step t p q hpq.1 hpq.2) x v h hz

/-- div where no yᵢ and no yᵢ + t·dyᵢ is 0. -/
theorem div_taylor (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length)
    (hz : All4 (fun _ q _ e => q ≠ 0 ∧ q + t * e ≠ 0) x y dx dy) :
    Prim.fwd .div a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .div a [x, y]) (smul t (Prim.jvp .div a [x, y] [dx, dy])))
        (smul (t * t) (rem2 (fun p q c e => e * (p * e - q * c) / (q * q * (q + t * e))) x y dx dy)) :=
  pmap2_along (fun p q => p / q) divDa divDb (fun p q c e => e * (p * e - q * c) / (q * q * (q + t * e)))
    (fun _ q _ e => q ≠ 0 ∧ q + t * e ≠ 0) t
    (fun p q c e hq => div_step t p q c e hq.1 hq.2) x y dx dy hxy hx hy hz

/-! ## Piecewise-linear primitives: linearity between the kinks -/

/-- x and x + t·v on the same side of the kink at 0. -/
def SameSide0 (t a b : Rat) : Prop := (0 < a ↔ 0 < a + t * b) ∧ (a < 0 ↔ a + t * b < 0)

theorem relu_step (t a b : Rat) (h : SameSide0 t a b) :
    reluS (a + t * b) = reluS a + t * (reluD a * b) + t * t * 0 := by
  unfold reluS reluD
  by_cases ha : 0 < a
  · rw [if_pos (h.1.mp ha), if_pos ha, if_pos ha, Rat.one_mul, Rat.mul_zero, Rat.add_zero]
  · rw [if_neg (fun h' => ha (h.1.mpr h')), if_neg ha, if_neg ha, Rat.zero_mul, Rat.mul_zero,
      Rat.mul_zero, Rat.add_zero, Rat.add_zero]

theorem abs_step (t a b : Rat) (h : SameSide0 t a b) :
    absS (a + t * b) = absS a + t * (absD a * b) + t * t * 0 := by
  unfold absS absD
  rw [Rat.mul_zero, Rat.add_zero]
  by_cases hn : a < 0
  · have hp : ¬ 0 < a := fun hp => Rat.not_le.mpr hp (Rat.le_of_lt hn)
    rw [if_pos (h.2.mp hn), if_pos hn, if_pos hn, if_neg hp, Rat.neg_mul, Rat.one_mul, neg_add',
      Rat.mul_neg]
  · rw [if_neg (fun h' => hn (h.2.mpr h')), if_neg hn, if_neg hn]
    by_cases hp : 0 < a
    · rw [if_pos hp, Rat.one_mul]
    · have hb0 : ¬ 0 < a + t * b := fun h' => hp (h.1.mpr h')
      have hbn : ¬ a + t * b < 0 := fun h' => hn (h.2.mpr h')
      have ha0 : a = 0 := Rat.le_antisymm (Rat.not_lt.mp hp) (Rat.not_lt.mp hn)
      have hab : a + t * b = 0 := Rat.le_antisymm (Rat.not_lt.mp hb0) (Rat.not_lt.mp hbn)
      rw [if_neg hp, Rat.zero_mul, Rat.mul_zero, Rat.add_zero, hab, ha0]

theorem sign_step (t a b : Rat) (h : SameSide0 t a b) :
    signS (a + t * b) = signS a + t * (signD a * b) + t * t * 0 := by
  unfold signS signD
  rw [Rat.zero_mul, Rat.mul_zero, Rat.mul_zero, Rat.add_zero, Rat.add_zero]
  by_cases hp : 0 < a
  · rw [if_pos (h.1.mp hp), if_pos hp]
  · rw [if_neg (fun h' => hp (h.1.mpr h')), if_neg hp]
    by_cases hn : a < 0
    · rw [if_pos (h.2.mp hn), if_pos hn]
    · rw [if_neg (fun h' => hn (h.2.mpr h')), if_neg hn]

/-- sign away from 0: locally constant, its derivative 0 is exact. -/
theorem sign_local_linear (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hs : All2 (SameSide0 t) x v) :
    Prim.fwd .sign a [along t x v] =
      padd (padd (Prim.fwd .sign a [x]) (smul t (Prim.jvp .sign a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  pmap_along signS signD (fun _ _ => 0) (SameSide0 t) t (sign_step t) x v h hs

/-- relu between the kinks: exactly linear, R = 0. -/
theorem relu_local_linear (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hs : All2 (SameSide0 t) x v) :
    Prim.fwd .relu a [along t x v] =
      padd (padd (Prim.fwd .relu a [x]) (smul t (Prim.jvp .relu a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  pmap_along reluS reluD (fun _ _ => 0) (SameSide0 t) t (relu_step t) x v h hs

/-- abs between the kinks: exactly linear, R = 0. -/
theorem abs_local_linear (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hs : All2 (SameSide0 t) x v) :
    Prim.fwd .abs a [along t x v] =
      padd (padd (Prim.fwd .abs a [x]) (smul t (Prim.jvp .abs a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  pmap_along absS absD (fun _ _ => 0) (SameSide0 t) t (abs_step t) x v h hs

/-- x and x + t·v on the same side of each of shrink's kinks at l and −l. -/
def SameSideL (l t a b : Rat) : Prop := (l < a ↔ l < a + t * b) ∧ (a < -l ↔ a + t * b < -l)

theorem shrink_step (l c t a b : Rat) (h : SameSideL l t a b) :
    shrinkS l c (a + t * b) = shrinkS l c a + t * (shrinkD l a * b) + t * t * 0 := by
  unfold shrinkS shrinkD
  rw [Rat.mul_zero, Rat.add_zero]
  by_cases hp : l < a
  · rw [if_pos (h.1.mp hp), if_pos hp, if_pos hp, Rat.one_mul, Rat.sub_eq_add_neg, Rat.sub_eq_add_neg,
      Rat.add_assoc a (t * b) (-c), Rat.add_comm (t * b) (-c), ← Rat.add_assoc a (-c) (t * b)]
  · rw [if_neg (fun h' => hp (h.1.mpr h')), if_neg hp, if_neg hp]
    by_cases hn : a < -l
    · rw [if_pos (h.2.mp hn), if_pos hn, if_pos hn, Rat.one_mul, Rat.add_assoc a (t * b) c,
        Rat.add_comm (t * b) c, ← Rat.add_assoc a c (t * b)]
    · rw [if_neg (fun h' => hn (h.2.mpr h')), if_neg hn, if_neg hn, Rat.zero_mul, Rat.mul_zero, Rat.zero_add]

/-- shrink between its kinks: exactly linear, R = 0 (slope 1 outside
[−λ, λ], 0 inside). A planted `shrinkD := 2` outside makes it false at
x = [1], v = [1], t = 1/4, λ = 1/2: `5/4 − b = 3/2 − b`. -/
theorem shrink_local_linear (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hs : All2 (SameSideL a.lo t) x v) :
    Prim.fwd .shrink a [along t x v] =
      padd (padd (Prim.fwd .shrink a [x]) (smul t (Prim.jvp .shrink a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  pmap_along (shrinkS a.lo a.c) (shrinkD a.lo) (fun _ _ => 0) (SameSideL a.lo t) t (shrink_step a.lo a.c t)
    x v h hs

/-- x and x + t·v on the same side of each of clamp's kinks at lo and hi. -/
def SameSideC (lo hi t a b : Rat) : Prop :=
  (a < lo ↔ a + t * b < lo) ∧ (hi < a ↔ hi < a + t * b) ∧ (lo < a ↔ lo < a + t * b) ∧
    (a < hi ↔ a + t * b < hi)

theorem clamp_step (lo hi t a b : Rat) (h : SameSideC lo hi t a b) :
    clampS lo hi (a + t * b) = clampS lo hi a + t * (clampD lo hi a * b) + t * t * 0 := by
  unfold clampS clampD
  rw [Rat.mul_zero, Rat.add_zero]
  by_cases hl : a < lo
  · have hnl : ¬ lo < a := fun h' => Rat.not_le.mpr h' (Rat.le_of_lt hl)
    rw [if_pos (h.1.mp hl), if_pos hl, if_neg hnl, Rat.zero_mul, Rat.mul_zero, Rat.add_zero]
  · rw [if_neg (fun h' => hl (h.1.mpr h')), if_neg hl]
    by_cases hh : hi < a
    · have hnh : ¬ a < hi := fun h' => Rat.not_le.mpr h' (Rat.le_of_lt hh)
      rw [if_pos (h.2.1.mp hh), if_pos hh]
      by_cases hl2 : lo < a
      · rw [if_pos hl2, if_neg hnh, Rat.zero_mul, Rat.mul_zero, Rat.add_zero]
      · rw [if_neg hl2, Rat.zero_mul, Rat.mul_zero, Rat.add_zero]
    · rw [if_neg (fun h' => hh (h.2.1.mpr h')), if_neg hh]
      by_cases hl2 : lo < a
      · rw [if_pos hl2]
        by_cases hu : a < hi
        · rw [if_pos hu, Rat.one_mul]
        · rw [if_neg hu, Rat.zero_mul, Rat.mul_zero, Rat.add_zero]
          have ha : a = hi := Rat.le_antisymm (Rat.not_lt.mp hh) (Rat.not_lt.mp hu)
          have hb1 : ¬ hi < a + t * b := fun h' => hh (h.2.1.mpr h')
          have hb2 : ¬ a + t * b < hi := fun h' => hu (h.2.2.2.mpr h')
          have hab : a + t * b = hi := Rat.le_antisymm (Rat.not_lt.mp hb1) (Rat.not_lt.mp hb2)
          rw [hab, ha]
      · rw [if_neg hl2, Rat.zero_mul, Rat.mul_zero, Rat.add_zero]
        have ha : a = lo := Rat.le_antisymm (Rat.not_lt.mp hl2) (Rat.not_lt.mp hl)
        have hb1 : ¬ lo < a + t * b := fun h' => hl2 (h.2.2.1.mpr h')
        have hb2 : ¬ a + t * b < lo := fun h' => hl (h.1.mpr h')
        have hab : a + t * b = lo := Rat.le_antisymm (Rat.not_lt.mp hb1) (Rat.not_lt.mp hb2)
        rw [hab, ha]

/-- clamp between its kinks: exactly linear, R = 0 (slope 1 strictly
inside (lo, hi), 0 outside it and at the bounds, where x and x + t·v
stay put). A planted `clampD := 2` inside makes it false at lo = 0,
hi = 1, x = [1/2], v = [1], t = 1/4: `3/4 = 1`. -/
theorem clamp_local_linear (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length)
    (hs : All2 (SameSideC a.lo a.hi t) x v) :
    Prim.fwd .clamp a [along t x v] =
      padd (padd (Prim.fwd .clamp a [x]) (smul t (Prim.jvp .clamp a [x] [v])))
        (smul (t * t) (rem1 (fun _ _ => 0) x v)) :=
  pmap_along (clampS a.lo a.hi) (clampD a.lo a.hi) (fun _ _ => 0) (SameSideC a.lo a.hi t) t
    (clamp_step a.lo a.hi t) x v h hs

/-- (x, y) and (x + t·dx, y + t·dy) on the same side of the tie x = y, and
off it. -/
def SameSideTie (t a b c e : Rat) : Prop :=
  (a < b ↔ a + t * c < b + t * e) ∧ (b < a ↔ b + t * e < a + t * c) ∧ a ≠ b

theorem max_step (t a b c e : Rat) (h : SameSideTie t a b c e) :
    maxS (a + t * c) (b + t * e) = maxS a b + t * (maxDa a b * c + maxDb a b * e) + t * t * 0 := by
  unfold maxS maxDa maxDb
  rw [Rat.mul_zero, Rat.add_zero]
  by_cases hab : a < b
  · have hba : ¬ b < a := fun h' => Rat.not_le.mpr h' (Rat.le_of_lt hab)
    rw [if_pos (h.1.mp hab), if_pos hab, if_neg hba, if_neg h.2.2, if_pos hab, Rat.zero_mul,
      Rat.one_mul, Rat.zero_add]
  · by_cases hba : b < a
    · rw [if_neg (fun h' => hab (h.1.mpr h')), if_neg hab, if_neg hab, if_pos hba, if_neg h.2.2,
        Rat.one_mul, Rat.zero_mul, Rat.add_zero]
    · exact absurd (Rat.le_antisymm (Rat.not_lt.mp hba) (Rat.not_lt.mp hab)) h.2.2

theorem min_step (t a b c e : Rat) (h : SameSideTie t a b c e) :
    minS (a + t * c) (b + t * e) = minS a b + t * (minDa a b * c + minDb a b * e) + t * t * 0 := by
  unfold minS minDa minDb
  rw [Rat.mul_zero, Rat.add_zero]
  by_cases hab : a < b
  · have hba : ¬ b < a := fun h' => Rat.not_le.mpr h' (Rat.le_of_lt hab)
    rw [if_neg (fun h' => hba (h.2.1.mpr h')), if_neg hba, if_neg hba, if_pos hab, if_neg h.2.2,
      Rat.one_mul, Rat.zero_mul, Rat.add_zero]
  · by_cases hba : b < a
    · rw [if_pos (h.2.1.mp hba), if_pos hba, if_pos hba, if_neg hab, if_neg h.2.2, Rat.zero_mul,
        Rat.one_mul, Rat.zero_add]
    · exact absurd (Rat.le_antisymm (Rat.not_lt.mp hba) (Rat.not_lt.mp hab)) h.2.2

/-- max off ties, with no tie crossed: exactly linear, R = 0. -/
theorem max_local_linear (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length)
    (hs : All4 (SameSideTie t) x y dx dy) :
    Prim.fwd .max a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .max a [x, y]) (smul t (Prim.jvp .max a [x, y] [dx, dy])))
        (smul (t * t) (rem2 (fun _ _ _ _ => 0) x y dx dy)) :=
  pmap2_along maxS maxDa maxDb (fun _ _ _ _ => 0) (SameSideTie t) t (max_step t) x y dx dy hxy hx hy hs

/-- min off ties, with no tie crossed: exactly linear, R = 0. -/
theorem min_local_linear (a : Attr) (t : Rat) (x y dx dy : List Rat)
    (hxy : x.length = y.length) (hx : dx.length = x.length) (hy : dy.length = x.length)
    (hs : All4 (SameSideTie t) x y dx dy) :
    Prim.fwd .min a [along t x dx, along t y dy] =
      padd (padd (Prim.fwd .min a [x, y]) (smul t (Prim.jvp .min a [x, y] [dx, dy])))
        (smul (t * t) (rem2 (fun _ _ _ _ => 0) x y dx dy)) :=
  pmap2_along minS minDa minDb (fun _ _ _ _ => 0) (SameSideTie t) t (min_step t) x y dx dy hxy hx hy hs

/-- The registry's conventions at the kinks, as statements. -/
theorem relu_kink_convention : reluD 0 = 0 := by
  unfold reluD
  rw [if_neg (rlt_irrefl 0)]

theorem abs_kink_convention : absD 0 = 0 := by
  unfold absD
  rw [if_neg (rlt_irrefl 0), if_neg (rlt_irrefl 0)]

theorem max_tie_convention (p : Rat) : maxDa p p = 1 / 2 ∧ maxDb p p = 1 / 2 := by
  unfold maxDa maxDb
  exact ⟨by rw [if_neg (rlt_irrefl p), if_pos (rfl : p = p)], by rw [if_neg (rlt_irrefl p), if_pos (rfl : p = p)]⟩

theorem min_tie_convention (p : Rat) : minDa p p = 1 / 2 ∧ minDb p p = 1 / 2 := by
  unfold minDa minDb
  exact ⟨by rw [if_neg (rlt_irrefl p), if_pos (rfl : p = p)], by rw [if_neg (rlt_irrefl p), if_pos (rfl : p = p)]⟩

theorem clamp_bound_convention (lo hi : Rat) : clampD lo hi lo = 0 ∧ clampD lo hi hi = 0 := by
  unfold clampD
  refine ⟨by rw [if_neg (rlt_irrefl lo)], ?_⟩
  by_cases h : lo < hi
  · rw [if_pos h, if_neg (rlt_irrefl hi)]
  · rw [if_neg h]

/-! ## Linear maps: the JVP is the forward on the tangents -/

theorem gather_along (g : List Nat) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    gather g (along t x v) = padd (gather g x) (smul t (gather g v)) := by
  induction g with
  | nil => rfl
  | cons j js ih =>
    show nth (along t x v) j :: gather js (along t x v) =
      (nth x j + t * nth v j) :: padd (gather js x) (smul t (gather js v))
    rw [ih, nth_along t x v h j]
where
  nth_along (t : Rat) : ∀ x v : List Rat, x.length = v.length → ∀ j : Nat,
      nth (along t x v) j = nth x j + t * nth v j
    | [], [], _, _ => by
      show (0 : Rat) = 0 + t * 0
      rw [Rat.mul_zero, Rat.add_zero]
    | [], _ :: _, h, _ => absurd h (nil_ne_cons_length _ _)
    | _ :: _, [], h, _ => absurd h.symm (nil_ne_cons_length _ _)
    | _ :: _, _ :: _, _, 0 => rfl
    | _ :: as, _ :: bs, h, j + 1 => nth_along t as bs (Nat.succ.inj h) j

theorem permute_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .permute a [x] [v] = Prim.fwd .permute a [v] := rfl
theorem transpose_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .transpose a [x] [v] = Prim.fwd .transpose a [v] := rfl
theorem slice_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .slice a [x] [v] = Prim.fwd .slice a [v] := rfl
theorem broadcast_to_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .broadcast_to a [x] [v] = Prim.fwd .broadcast_to a [v] := rfl
theorem tile_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .tile a [x] [v] = Prim.fwd .tile a [v] := rfl
theorem reshape_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .reshape a [x] [v] = Prim.fwd .reshape a [v] := rfl
theorem flatten_jvp_is_fwd (a : Attr) (x v : List Rat) :
    Prim.jvp .flatten a [x] [v] = Prim.fwd .flatten a [v] := rfl
theorem concat_jvp_is_fwd (a : Attr) (xs dxs : List (List Rat)) :
    Prim.jvp .concat a xs dxs = Prim.fwd .concat a dxs := rfl
theorem scatter_op_jvp_is_fwd (a : Attr) (xs dxs : List (List Rat)) :
    Prim.jvp .scatter a xs dxs = Prim.fwd .scatter a dxs := rfl

/-- permute is linear along every line: fwd(x + t·v) = fwd x + t·jvp x v. -/
theorem permute_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .permute a [along t x v] =
      padd (Prim.fwd .permute a [x]) (smul t (Prim.jvp .permute a [x] [v])) :=
  gather_along a.permuteIdx t x v h

theorem transpose_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .transpose a [along t x v] =
      padd (Prim.fwd .transpose a [x]) (smul t (Prim.jvp .transpose a [x] [v])) :=
  gather_along a.transposeIdx t x v h

theorem slice_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .slice a [along t x v] =
      padd (Prim.fwd .slice a [x]) (smul t (Prim.jvp .slice a [x] [v])) :=
  gather_along a.sliceIdx t x v h

theorem broadcast_to_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .broadcast_to a [along t x v] =
      padd (Prim.fwd .broadcast_to a [x]) (smul t (Prim.jvp .broadcast_to a [x] [v])) :=
  gather_along a.bcastIdx t x v h

/-- tile is linear along every line (a gather). -/
theorem tile_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .tile a [along t x v] =
      padd (Prim.fwd .tile a [x]) (smul t (Prim.jvp .tile a [x] [v])) :=
  gather_along a.tileIdx t x v h

/-- sum: Σ(x + t·v) = Σx + t·Σv. -/
theorem total_along (t : Rat) : ∀ x v : List Rat, x.length = v.length →
    total (along t x v) = total x + t * total v
  | [], [], _ => by
    show (0 : Rat) = 0 + t * 0
    rw [Rat.mul_zero, Rat.add_zero]
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | a :: as, b :: bs, h => by
    show a + t * b + total (along t as bs) = a + total as + t * (b + total bs)
    rw [total_along t as bs (Nat.succ.inj h), Rat.mul_add, Rat.add_assoc, Rat.add_assoc,
      Rat.add_left_comm (t * b) (total as) (t * total bs)]

theorem sum_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .sum a [along t x v] = padd (Prim.fwd .sum a [x]) (smul t (Prim.jvp .sum a [x] [v])) := by
  show [total (along t x v)] = [total x + t * total v]
  rw [total_along t x v h]

end Tlcheck
