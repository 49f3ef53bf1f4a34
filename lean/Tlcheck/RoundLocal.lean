import Tlcheck.Spec
import Tlcheck.Round
import Tlcheck.MaxPool
import Tlcheck.RoundNat

/-!
# The float casts are locally constant away from their jumps

round_T (T = binary16, bfloat16, binary32; `roundQ` in `Spec.lean`) is a
step function: it jumps at the midpoints between adjacent values of the
format (the ties) and at the overflow threshold Ω, and is constant on the
open interval between two consecutive jump points. Its derivative rule is
round′ = 0 (`roundD`; `round_jvp_nth`: the JVP is 0 entry by entry). Issue
27's piecewise statement for it is local constancy:

  away from every jump point, ∃ δ > 0, ∀ t, |t| < δ →
  roundFwd (x + t•v) = roundFwd x  ( = fwd x + t • jvp x v, the JVP being 0 ),

and at a jump point the documented convention (round′ := 0 there too).

**The interval and the radius, explicitly.** For a value a, with r =
roundQ f a:

* `roundHiM f m` is the jump point above a magnitude m of the format:
  m + 2^(k−1), half m's quantum 2^k above it (k = `roundK f m`), and
  2^(emin − prec), half the least subnormal, above 0; above the largest
  finite value it is Ω (`roundOmega`).
* `roundLoM f m` is the jump point below m > 0: m − 2^(k−1), or m − 2^(k−2)
  when m = 2^e starts a normal binade above the least (the quantum below
  m is half m's).
* `roundGap f a` is |a|'s distance to the nearest jump point: |a| − Ω past
  the overflow threshold (`roundQ` is `none` on |a| ≥ Ω), the distance to
  half the least subnormal where a rounds to 0, and otherwise
  min(|a| − roundLoM |r|, roundHiM |r| − |a|). It is 0 exactly at a jump
  point and positive elsewhere: **the non-jump condition is
  `0 < roundGap f a`**, decidable (`roundStable`, entry by entry).
* `roundDelta f x v` = minᵢ roundGap xᵢ / (|vᵢ| + 1) (1 for the empty
  tensor): the δ of the statement, a rational computed from x and v.

**What is proved here.** `round_locally_constant` proves the tensor
statement — 0 < δ and fwd (x + t•v) = fwd x for |t| < δ, for every x whose
entries are all off the jumps — for every well-formed format (`FmtWF f`:
p ≥ 1, emin ≤ emax; `fmtWF_f16`, `fmtWF_bf16`, `fmtWF_f32`), with **no
hypothesis left** (session 13, lean34). The magnitude facts it rests on,
`RoundMagLocal f`, are proved (`roundMagLocal f hf`), and so is the scalar
statement (`roundScalarLocal f hf`):

* Ω ≥ 0 for every format (`roundOmega_nonneg`);
* **`over`** — w > Ω gives roundMag f w ≥ 2^(emax+1) — `roundMag_over`
  (section round34: `flog2_spec`, the exponent arithmetic by `omega`,
  `rneNat_ge`, the `Nat` readings `half_lt_nat`/`lt_half_nat`,
  `roundMag_ge`);
* **`inner`** — for u > 0 with m = roundMag f u finite and non-zero, every
  w with roundLoM f m < w < roundHiM f m is positive and has roundMag f w
  = m, the binade edge m = 2^e (w in the binade below, half the quantum)
  included — `roundMag_inner_of`: m lies on its own quantum grid
  (`roundMag_rep`), and on the grid `roundMag_inner` (the significand step
  `roundMag_eq_of_near` / `roundMag_of_within`, w's binade from
  `flog2_spec` and `flog2_eq`, the edge by `pow2_succ`).

`RoundMagLocal` is kept as the interface (`roundScalarLocal_of_mag` still
derives the scalar statement from it).

Proved from those (session 12, round32): the scalar statement
`RoundScalarLocal f` (`roundScalarLocal_of_mag`) — roundQ's whole case
split: the sign (roundQ is odd, `roundQ_neg`; roundGap is even,
`roundGap_neg`), a = 0 and the branch rounding to 0 (`roundScalar_zero_branch`,
through `roundMag_under`), the overflow branch, the interior branch
(`roundScalar_inner_branch`); and the underflow fact itself,
`roundMag_under` (0 < w < 2^(emin−p) gives roundMag w = 0), through the
`Rat` bridge: `pow2_eq` (pow2 k = mkRat 2^k⁺ 2^k⁻ for both signs),
`mkRat_le_iff`/`mkRat_lt_iff` (two `mkRat`s compare as their cross
products, via `Rat.divInt_sub_divInt` and
`Rat.divInt_nonneg_iff_of_pos_right`), `pow2_add`, `pow2_mono`,
`num_toNat_half` (0 ≤ q < 1/2 read as 2·num < den), with RoundNat.lean's
`roundMag_of_near_nat` at n = 0. The radius arithmetic (|t·vᵢ| < roundGap
xᵢ from |t| < δ: MaxPool.lean's `gap_step`, `rmin_le_left`,
`rmin_le_right`), the list induction and the pairing with the JVP are
proved as before.

**Checked in Go as well** (a guard on the transcription while nothing
here is compiled): the magnitude facts on the transcription
(`leanbridge/emit/taylor_test.go`, `TestRoundMagLocal`), and the whole scalar
statement exactly in Go (`TestRoundLocallyConstant`: the registry's
`RoundRat` at x + t·v for |t| up to δ·(1 − 2⁻²⁰) on random tensors of
every binade, and sharpness: just past gapᵢ/|vᵢ| an entry leaves its
interval). `roundGap_instance` and `round_jump_instance` are kernel
evaluations, re-derived in Go by `TestLeanRoundGapInstances`. `roundGap`
is `roundGapOf f a (roundQ f a)` (the same value, by definition; split so
that a rewrite of `roundQ f a` reaches the match).

Nothing here was compiled (no Lean toolchain on the development
machines); every core name used is listed in `lean/README.md` (round32,
lean34) with where it was read.

No `sorry`, no `grind`, no axioms; `simp` and `exact_mod_cast` only in
`first` fallback arms.
-/

namespace Tlcheck
set_option autoImplicit false

/-- Ω = 2^(emax+1) − 2^(emax−prec): the least magnitude that overflows
(the midpoint between the largest finite value and 2^(emax+1)). -/
def roundOmega (f : Fmt) : Rat := pow2 (f.emax + 1) - pow2 (f.emax - (f.prec : Int))

/-- The jump point above a magnitude m ≥ 0 of the format. -/
def roundHiM (f : Fmt) (m : Rat) : Rat :=
  if m = 0 then pow2 (f.emin - (f.prec : Int)) else m + pow2 (roundK f m - 1)

/-- The jump point below a magnitude m > 0 of the format. -/
def roundLoM (f : Fmt) (m : Rat) : Rat :=
  if m = pow2 (flog2 m) ∧ f.emin < flog2 m then m - pow2 (roundK f m - 2)
  else m - pow2 (roundK f m - 1)

/-- The distance from a to the nearest jump point, given the value `o`
of `roundQ f a` (split out of `roundGap` so that a rewrite of `roundQ f a`
reaches it; `roundGap f a` is this at o = roundQ f a, by definition). -/
def roundGapOf (f : Fmt) (a : Rat) : Option Rat → Rat
  | none => absS a - roundOmega f
  | some r =>
    if absS r = 0 then roundHiM f 0 - absS a
    else rmin (absS a - roundLoM f (absS r)) (roundHiM f (absS r) - absS a)

/-- The distance from a to the nearest jump point of `roundQ f` (0 at a
jump point). -/
def roundGap (f : Fmt) (a : Rat) : Rat := roundGapOf f a (roundQ f a)

/-- The non-jump condition, entry by entry: every entry strictly inside
its rounding interval (or strictly past Ω). -/
def roundStable (f : Fmt) : List Rat → Bool
  | [] => true
  | a :: as => decide (0 < roundGap f a) && roundStable f as

/-- δ = minᵢ roundGap xᵢ / (|vᵢ| + 1), 1 for the empty tensor. -/
def roundDelta (f : Fmt) : List Rat → List Rat → Rat
  | a :: as, w :: ws => rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws)
  | _, _ => 1

/-- **The scalar statement**: roundQ f is constant on the open interval of
radius roundGap f a about every a off the jumps. Proved for `FmtWF`
formats: `roundScalarLocal` (from `RoundMagLocal f`, itself proved by
`roundMagLocal`, through `roundScalarLocal_of_mag`). -/
def RoundScalarLocal (f : Fmt) : Prop :=
  ∀ a s : Rat, 0 < roundGap f a → s < roundGap f a → -s < roundGap f a →
    roundQ f (a + s) = roundQ f a

/-! ## roundQ's case split: `RoundScalarLocal` from the magnitude facts

`roundScalarLocal_of_mag` proves `RoundScalarLocal f` from
`RoundMagLocal f`, a statement about `roundMag` on positive arguments
only (no sign, no `Option`, no zero branch of `roundQ`). The split: a = 0
and the branch where a rounds to 0 (|a + s| stays below half the least
subnormal, where roundMag is 0: `roundMag_under`, **proved** through the
`Rat` bridge below), the overflow branch (a + s stays past Ω:
`roundMag_over`, proved in section round34 for `FmtWF` formats),
the interior branch of a > 0 (a + s stays strictly between the jump
points around m = roundMag a: `inner`), and a < 0 by the symmetry
roundQ (−x) = −roundQ x (`roundQ_neg`) and roundGap (−a) = roundGap a
(`roundGap_neg`). -/

/-- **The magnitude fact the case split needs** (proved for every
`FmtWF` format: `roundMagLocal`), for positive arguments. `inner`:
strictly between the jump points around a finite non-zero m = roundMag u,
every w is positive and has roundMag w = m (the binade edge m = 2^e,
where w may fall into the binade below with half the quantum, included).
The other facts are separate theorems: below half the least subnormal
roundMag is 0 (`roundMag_under`), Ω ≥ 0 (`roundOmega_nonneg`), and past Ω
the magnitude overflows (`roundMag_over`). -/
structure RoundMagLocal (f : Fmt) : Prop where
  inner : ∀ u w : Rat, 0 < u → ¬ roundMag f u = 0 → ¬ pow2 (f.emax + 1) ≤ roundMag f u →
    roundLoM f (roundMag f u) < w → w < roundHiM f (roundMag f u) →
      0 < w ∧ roundMag f w = roundMag f u

/-- −0 = 0: −0 + 0 = 0 = 0 + 0, cancel 0. -/
theorem rneg_zero : -(0 : Rat) = 0 :=
  Rat.add_right_cancel 0 ((Rat.neg_add_cancel 0).trans (Rat.zero_add 0).symm)

/-- 0 < a gives −a < 0 (−a ≤ 0, and −a = 0 would give a = −(−a) = −0 = 0). -/
theorem rneg_neg_of_pos {a : Rat} (h : 0 < a) : -a < 0 :=
  Rat.lt_of_le_of_ne (rneg_nonpos (Rat.le_of_lt h))
    (fun e => Rat.ne_of_gt h ((rneg_neg a).symm.trans ((congrArg (fun t : Rat => -t) e).trans rneg_zero)))

/-- s < c − a gives a + s < c (add a to both sides). -/
theorem add_lt_of_lt_sub {a s c : Rat} (hs : s < c - a) : a + s < c := by
  have h1 : a + s < a + (c - a) := radd_lt_add_left hs a
  rw [Rat.sub_eq_add_neg c a, Rat.add_left_comm a c (-a), Rat.add_neg_cancel a, Rat.add_zero c] at h1
  exact h1

/-- −s < a − l gives l < a + s (add l + s to both sides). -/
theorem lt_add_of_neg_lt_sub {a s l : Rat} (hs : -s < a - l) : l < a + s := by
  have h1 : l + s + -s < l + s + (a - l) := radd_lt_add_left hs (l + s)
  rw [Rat.add_assoc l s (-s), Rat.add_neg_cancel s, Rat.add_zero l, Rat.sub_eq_add_neg a l,
    Rat.add_comm (l + s) (a + -l), Rat.add_assoc a (-l) (l + s), ← Rat.add_assoc (-l) l s,
    Rat.neg_add_cancel l, Rat.zero_add s] at h1
  exact h1

/-- With a ≥ 0, −s < c − a gives −(a + s) < c: −a + −s ≤ −s < c − a ≤ c. -/
theorem neg_add_lt {a s c : Rat} (ha : 0 ≤ a) (hs : -s < c - a) : -(a + s) < c := by
  have h1 : -s + -a ≤ -s + 0 := radd_le_add_left (rneg_nonpos ha) (-s)
  rw [Rat.add_zero (-s), Rat.add_comm (-s) (-a)] at h1
  have h2 : c + -a ≤ c + 0 := radd_le_add_left (rneg_nonpos ha) c
  rw [Rat.add_zero c, ← Rat.sub_eq_add_neg c a] at h2
  rw [neg_add' a s]
  exact rlt_of_le_of_lt h1 (rlt_of_lt_of_le hs h2)

/-- |0| = 0. -/
theorem absS_zero : absS 0 = 0 := if_neg (rlt_irrefl 0)

/-- |x| = x for x ≥ 0. -/
theorem absS_of_nonneg (x : Rat) (h : 0 ≤ x) : absS x = x := if_neg (Rat.not_lt.mpr h)

/-- |−x| = |x|. -/
theorem absS_neg (x : Rat) : absS (-x) = absS x := by
  by_cases hx : x < 0
  · have h1 : ¬ -x < 0 := Rat.not_lt.mpr (Rat.le_of_lt (rneg_pos hx))
    exact (if_neg h1).trans (if_pos hx).symm
  · by_cases hx0 : x = 0
    · rw [hx0, rneg_zero]
    · have hxp : 0 < x := Rat.lt_of_le_of_ne (Rat.not_lt.mp hx) (fun h => hx0 h.symm)
      exact ((if_pos (rneg_neg_of_pos hxp)).trans (rneg_neg x)).trans (if_neg hx).symm

/-- 0 ≤ mkRat n d for n ≥ 0 (`Rat.divInt_nonneg`, read through
`Rat.divInt_ofNat`: n /. ↑d = mkRat n d). -/
theorem rat_mkRat_nonneg (n : Int) (d : Nat) (hn : 0 ≤ n) : 0 ≤ mkRat n d := by
  have h : 0 ≤ Rat.divInt n (d : Int) := Rat.divInt_nonneg hn (Int.ofNat_zero_le d)
  rw [Rat.divInt_ofNat n d] at h
  exact h

/-- 2^k ≥ 0 (both branches of `pow2` are `mkRat` of naturals). -/
theorem pow2_nonneg (k : Int) : 0 ≤ pow2 k := by
  by_cases hk : 0 ≤ k
  · have e : pow2 k = mkRat ((2 ^ k.toNat : Nat) : Int) 1 := if_pos hk
    rw [e]
    exact rat_mkRat_nonneg _ 1 (Int.ofNat_zero_le _)
  · have e : pow2 k = mkRat 1 (2 ^ (-k).toNat) := if_neg hk
    rw [e]
    exact rat_mkRat_nonneg 1 _ (by decide)

/-- 2^k ≠ 0 (`Rat.mkRat_ne_zero`: a non-zero numerator over a non-zero
denominator; 2^n > 0 by `Nat.two_pow_pos`). -/
theorem pow2_ne_zero (k : Int) : pow2 k ≠ 0 := by
  by_cases hk : 0 ≤ k
  · have e : pow2 k = mkRat ((2 ^ k.toNat : Nat) : Int) 1 := if_pos hk
    rw [e]
    have hp : 0 < 2 ^ k.toNat := Nat.two_pow_pos k.toNat
    have hn : ((2 ^ k.toNat : Nat) : Int) ≠ 0 := by
      first
        | omega
        | exact fun h => absurd (Int.ofNat.inj h) (Nat.ne_of_gt hp)
    exact (Rat.mkRat_ne_zero (by decide : (1 : Nat) ≠ 0)).mpr hn
  · have e : pow2 k = mkRat 1 (2 ^ (-k).toNat) := if_neg hk
    rw [e]
    have hp : 0 < 2 ^ (-k).toNat := Nat.two_pow_pos (-k).toNat
    exact (Rat.mkRat_ne_zero (Nat.ne_of_gt hp)).mpr (by decide)

/-- 2^k > 0. -/
theorem pow2_pos (k : Int) : 0 < pow2 k :=
  Rat.lt_of_le_of_ne (pow2_nonneg k) (fun h => pow2_ne_zero k h.symm)

/-! ## The `Rat` bridge: `pow2` as one `mkRat`, comparisons of `mkRat`s -/

/-- **pow2 k = 2^k⁺ / 2^k⁻** in one form for both signs of k (k⁺ =
k.toNat, k⁻ = (−k).toNat; one of them is 0 and 2^0 = 1). -/
theorem pow2_eq (k : Int) : pow2 k = mkRat ((2 ^ k.toNat : Nat) : Int) (2 ^ (-k).toNat) := by
  by_cases hk : 0 ≤ k
  · have e : pow2 k = mkRat ((2 ^ k.toNat : Nat) : Int) 1 := if_pos hk
    have h0 : (-k).toNat = 0 := by omega
    rw [e, h0, Nat.pow_zero]
  · have e : pow2 k = mkRat 1 (2 ^ (-k).toNat) := if_neg hk
    have h0 : k.toNat = 0 := by omega
    rw [e, h0, Nat.pow_zero] <;> rfl

/-- **Comparing two `mkRat`s** (positive denominators) is comparing the
cross products: n₁/d₁ ≤ n₂/d₂ ↔ n₁·d₂ ≤ n₂·d₁. Through
`Rat.le_iff_sub_nonneg`, `Rat.divInt_sub_divInt` (the difference is
(n₂d₁ − n₁d₂) /. (d₂d₁)) and `Rat.divInt_nonneg_iff_of_pos_right`. -/
theorem mkRat_le_iff (n₁ n₂ : Int) (d₁ d₂ : Nat) (h1 : 0 < d₁) (h2 : 0 < d₂) :
    mkRat n₁ d₁ ≤ mkRat n₂ d₂ ↔ n₁ * (d₂ : Int) ≤ n₂ * (d₁ : Int) := by
  have z1 : (d₁ : Int) ≠ 0 := by omega
  have z2 : (d₂ : Int) ≠ 0 := by omega
  have e : mkRat n₂ d₂ - mkRat n₁ d₁ =
      Rat.divInt (n₂ * (d₁ : Int) - n₁ * (d₂ : Int)) ((d₂ : Int) * (d₁ : Int)) := by
    rw [← Rat.divInt_ofNat n₂ d₂, ← Rat.divInt_ofNat n₁ d₁]
    exact Rat.divInt_sub_divInt n₂ n₁ z2 z1
  have hp : (0 : Int) < (d₂ : Int) * (d₁ : Int) := Int.mul_pos (by omega) (by omega)
  rw [Rat.le_iff_sub_nonneg (mkRat n₁ d₁) (mkRat n₂ d₂), e, Rat.divInt_nonneg_iff_of_pos_right hp]
  first
    | exact ⟨Int.le_of_sub_nonneg, Int.sub_nonneg_of_le⟩
    | omega

/-- The strict form: n₁/d₁ < n₂/d₂ ↔ n₁·d₂ < n₂·d₁ (negate both sides of
`mkRat_le_iff` with the arguments swapped). -/
theorem mkRat_lt_iff (n₁ n₂ : Int) (d₁ d₂ : Nat) (h1 : 0 < d₁) (h2 : 0 < d₂) :
    mkRat n₁ d₁ < mkRat n₂ d₂ ↔ n₁ * (d₂ : Int) < n₂ * (d₁ : Int) := by
  constructor
  · intro h
    have h' : ¬ n₂ * (d₁ : Int) ≤ n₁ * (d₂ : Int) :=
      fun hle => Rat.not_le.mpr h ((mkRat_le_iff n₂ n₁ d₂ d₁ h2 h1).mpr hle)
    first
      | exact Int.not_le.mp h'
      | omega
  · intro h
    exact Rat.not_le.mp (fun hle => Int.not_le.mpr h ((mkRat_le_iff n₂ n₁ d₂ d₁ h2 h1).mp hle))

/-- **2^(a+b) = 2^a · 2^b**: `Rat.mkRat_mul_mkRat`, then `Rat.mkRat_eq_iff`
reduces it to 2^((a+b)⁺ + a⁻ + b⁻) = 2^(a⁺ + b⁺ + (a+b)⁻) over `Nat`,
whose exponents agree (x⁺ − x⁻ = x, `omega`). -/
theorem pow2_add (a b : Int) : pow2 (a + b) = pow2 a * pow2 b := by
  rw [pow2_eq (a + b), pow2_eq a, pow2_eq b, Rat.mkRat_mul_mkRat]
  have hz1 : 2 ^ (-(a + b)).toNat ≠ 0 := Nat.ne_of_gt (Nat.two_pow_pos _)
  have hz2 : 2 ^ (-a).toNat * 2 ^ (-b).toNat ≠ 0 :=
    Nat.mul_ne_zero (Nat.ne_of_gt (Nat.two_pow_pos _)) (Nat.ne_of_gt (Nat.two_pow_pos _))
  apply (Rat.mkRat_eq_iff hz1 hz2).mpr
  have he : (a + b).toNat + ((-a).toNat + (-b).toNat) = a.toNat + b.toNat + (-(a + b)).toNat := by
    omega
  have hN : 2 ^ (a + b).toNat * (2 ^ (-a).toNat * 2 ^ (-b).toNat) =
      2 ^ a.toNat * 2 ^ b.toNat * 2 ^ (-(a + b)).toNat := by
    rw [← Nat.pow_add, ← Nat.pow_add, ← Nat.pow_add, ← Nat.pow_add, he]
  first
    | (rw [← Int.natCast_mul, ← Int.natCast_mul, ← Int.natCast_mul]
       exact congrArg (fun n : Nat => (n : Int)) hN)
    | exact_mod_cast hN

/-- **pow2 is monotone**: j ≤ j' gives 2^j ≤ 2^j' (cross products
2^(j⁺ + j'⁻) ≤ 2^(j'⁺ + j⁻), `Nat.pow_le_pow_right`). -/
theorem pow2_mono {j j' : Int} (h : j ≤ j') : pow2 j ≤ pow2 j' := by
  rw [pow2_eq j, pow2_eq j']
  apply (mkRat_le_iff ((2 ^ j.toNat : Nat) : Int) ((2 ^ j'.toNat : Nat) : Int)
    (2 ^ (-j).toNat) (2 ^ (-j').toNat) (Nat.two_pow_pos _) (Nat.two_pow_pos _)).mpr
  have hN : 2 ^ j.toNat * 2 ^ (-j').toNat ≤ 2 ^ j'.toNat * 2 ^ (-j).toNat := by
    rw [← Nat.pow_add, ← Nat.pow_add]
    exact Nat.pow_le_pow_right (by decide) (by omega)
  first
    | (rw [← Int.natCast_mul, ← Int.natCast_mul]
       exact Int.ofNat_le.mpr hN)
    | exact_mod_cast hN

/-- **A rational in [0, 1/2) read over `Nat`**: 0 ≤ q < 2^−1 gives
2·num < den (q = mkRat q.num q.den, `Rat.mkRat_self`; 2^−1 = mkRat 1 2). -/
theorem num_toNat_half (q : Rat) (hq0 : 0 ≤ q) (hq : q < pow2 (-1)) : 2 * q.num.toNat < q.den := by
  have h1 : mkRat q.num q.den <
      mkRat ((2 ^ (-1 : Int).toNat : Nat) : Int) (2 ^ (-(-1 : Int)).toNat) := by
    rw [Rat.mkRat_self q, ← pow2_eq (-1)]
    exact hq
  have h2 := (mkRat_lt_iff q.num ((2 ^ (-1 : Int).toNat : Nat) : Int) q.den (2 ^ (-(-1 : Int)).toNat)
    q.den_pos (Nat.two_pow_pos _)).mp h1
  have e1 : (2 ^ (-(-1 : Int)).toNat : Nat) = 2 := by
    first
      | decide
      | rfl
  have e0 : (2 ^ (-1 : Int).toNat : Nat) = 1 := by
    first
      | decide
      | rfl
  rw [e1, e0] at h2
  have hn : 0 ≤ q.num := Rat.num_nonneg.mpr hq0
  omega

/-- **pow2 (m − n) = 2^m / 2^n** for naturals m, n (`pow2_eq`, then
`Rat.mkRat_eq_iff`: 2^(m−n)⁺·2^n = 2^m·2^(m−n)⁻, exponents equal). -/
theorem pow2_sub_nat (m n : Nat) : pow2 ((m : Int) - (n : Int)) = mkRat ((2 ^ m : Nat) : Int) (2 ^ n) := by
  rw [pow2_eq]
  apply (Rat.mkRat_eq_iff (Nat.ne_of_gt (Nat.two_pow_pos _)) (Nat.ne_of_gt (Nat.two_pow_pos _))).mpr
  have he : ((m : Int) - (n : Int)).toNat + n = m + (-((m : Int) - (n : Int))).toNat := by omega
  have hN : 2 ^ ((m : Int) - (n : Int)).toNat * 2 ^ n = 2 ^ m * 2 ^ (-((m : Int) - (n : Int))).toNat := by
    rw [← Nat.pow_add, ← Nat.pow_add, he]
  first
    | (rw [← Int.natCast_mul, ← Int.natCast_mul]
       exact congrArg (fun k : Nat => (k : Int)) hN)
    | exact_mod_cast hN

/-- **`flog2_spec`** (stated in RoundNat.lean's header): for a > 0,
2^flog2(a) ≤ a < 2^(flog2(a)+1). With a = N/D in lowest terms (N =
a.num.toNat, D = a.den, bN, bD their bit lengths), `flog2_bracket_nat`'s
2^(bN−1)·D < N·2^bD and N·2^(bD−1) < 2^bN·D are, read through
`pow2_sub_nat` and `mkRat_le_iff`/`mkRat_lt_iff`, pow2 (bN − bD − 1) ≤ a
< pow2 (bN − bD + 1); `flog2_spec_of_bracket` does the rest. -/
theorem flog2_spec (a : Rat) (ha : 0 < a) : pow2 (flog2 a) ≤ a ∧ a < pow2 (flog2 a + 1) := by
  have hnum0 : 0 ≤ a.num := Rat.num_nonneg.mpr (Rat.le_of_lt ha)
  have hne : a.num ≠ 0 := fun h => Rat.ne_of_gt ha (Rat.num_eq_zero.mp h)
  have hN : 0 < a.num.toNat := by omega
  have hD : 0 < a.den := a.den_pos
  have hb := flog2_bracket_nat a.num.toNat a.den hN hD
  have sN := bitLen_spec a.num.toNat hN
  have sD := bitLen_spec a.den hD
  have hbN : bitLen a.num.toNat ≠ 0 := fun h => by
    have h2 := sN.2
    rw [h, Nat.pow_zero] at h2
    omega
  have hbD : bitLen a.den ≠ 0 := fun h => by
    have h2 := sD.2
    rw [h, Nat.pow_zero] at h2
    omega
  have ha' : mkRat ((a.num.toNat : Nat) : Int) a.den = a := by
    rw [Int.toNat_of_nonneg hnum0] <;> exact Rat.mkRat_self a
  refine flog2_spec_of_bracket a ?_ ?_
  · have hx : (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1 =
        ((bitLen a.num.toNat - 1 : Nat) : Int) - (bitLen a.den : Int) := by omega
    rw [hx, pow2_sub_nat]
    have hi : ((2 ^ (bitLen a.num.toNat - 1) : Nat) : Int) * ((a.den : Nat) : Int) ≤
        ((a.num.toNat : Nat) : Int) * ((2 ^ bitLen a.den : Nat) : Int) := by
      first
        | (rw [← Int.natCast_mul, ← Int.natCast_mul]
           exact Int.ofNat_le.mpr (Nat.le_of_lt hb.1))
        | exact_mod_cast Nat.le_of_lt hb.1
    have h := (mkRat_le_iff ((2 ^ (bitLen a.num.toNat - 1) : Nat) : Int) ((a.num.toNat : Nat) : Int)
      (2 ^ bitLen a.den) a.den (Nat.two_pow_pos _) hD).mpr hi
    rw [ha'] at h
    exact h
  · have hx : (bitLen a.num.toNat : Int) - (bitLen a.den : Int) + 1 =
        (bitLen a.num.toNat : Int) - ((bitLen a.den - 1 : Nat) : Int) := by omega
    rw [hx, pow2_sub_nat]
    have hi : ((a.num.toNat : Nat) : Int) * ((2 ^ (bitLen a.den - 1) : Nat) : Int) <
        ((2 ^ bitLen a.num.toNat : Nat) : Int) * ((a.den : Nat) : Int) := by
      first
        | (rw [← Int.natCast_mul, ← Int.natCast_mul]
           exact Int.ofNat_lt.mpr hb.2)
        | exact_mod_cast hb.2
    have h := (mkRat_lt_iff ((a.num.toNat : Nat) : Int) ((2 ^ bitLen a.num.toNat : Nat) : Int)
      a.den (2 ^ (bitLen a.den - 1)) hD (Nat.two_pow_pos _)).mpr hi
    rw [ha'] at h
    exact h

/-- **The underflow fact, proved**: 0 < w < 2^(emin − p) (half the least
subnormal) gives roundMag f w = 0. The quantum exponent is
k = max(⌊log₂ w⌋, emin) − p + 1 ≥ emin − p + 1, so
w·2^−k < 2^(emin−p)·2^−k = 2^(emin−p−k) ≤ 2^−1 (`pow2_add`, `pow2_mono`),
and the natural nearest a value in [0, 1/2) is 0 (`num_toNat_half`,
`roundMag_of_near_nat` at n = 0). -/
theorem roundMag_under (f : Fmt) (w : Rat) (hw0 : 0 < w)
    (hw : w < pow2 (f.emin - (f.prec : Int))) : roundMag f w = 0 := by
  have hk : f.emin - (f.prec : Int) + 1 ≤ roundK f w := by
    have hm : f.emin ≤ max (flog2 w) f.emin := Int.le_max_right (flog2 w) f.emin
    show f.emin - (f.prec : Int) + 1 ≤ max (flog2 w) f.emin - (f.prec : Int) + 1
    omega
  have hq0 : 0 ≤ w * pow2 (-(roundK f w)) := Rat.le_of_lt (Rat.mul_pos hw0 (pow2_pos _))
  have h1 : w * pow2 (-(roundK f w)) < pow2 (f.emin - (f.prec : Int)) * pow2 (-(roundK f w)) :=
    Rat.mul_lt_mul_of_pos_right hw (pow2_pos _)
  rw [← pow2_add] at h1
  have hq : w * pow2 (-(roundK f w)) < pow2 (-1) := rlt_of_lt_of_le h1 (pow2_mono (by omega))
  have hh := num_toNat_half (w * pow2 (-(roundK f w))) hq0 hq
  have hd := (w * pow2 (-(roundK f w))).den_pos
  rw [roundMag_of_near_nat f w 0 (by omega) (by omega)]
  exact (congrArg (fun r : Rat => r * pow2 (roundK f w)) (Rat.zero_mkRat 1)).trans (Rat.zero_mul _)

/-- roundMag f u = n·2^k ≥ 0. -/
theorem roundMag_nonneg (f : Fmt) (u : Rat) : 0 ≤ roundMag f u := by
  first
    | exact Rat.mul_nonneg (rat_mkRat_nonneg _ 1 (Int.ofNat_zero_le _)) (pow2_nonneg _)
    | (unfold roundMag; exact Rat.mul_nonneg (rat_mkRat_nonneg _ 1 (Int.ofNat_zero_le _)) (pow2_nonneg _))

/-! ## round34: the overflow fact `over`, proved

`roundMag_over` (past Ω the magnitude overflows) for every well-formed
format (`FmtWF`: at least one significand bit, emin ≤ emax; the three
formats by evaluation). The steps: Ω < w read as 2^(emax+1) < 2^(emax−p) + w
(`rlt_add_of_sub_lt`); w > 0 and ⌊log₂ w⌋ = E ≥ emax (`flog2_spec`,
`pow2_succ`: were E < emax, 2^(emax−p) + w < 2^emax + 2^emax = 2^(emax+1));
the quantum exponent k = E − p + 1; the bound multiplied by 2^−k
(`shift_lt`) is 2^P < 2^−1 + w·2^−k — P = p when E = emax (from Ω), P =
p − 1 when E > emax (from 2^E ≤ w) — and the nearest natural to a value
above 2^P − 1/2 is at least 2^P (`half_lt_nat` reads it over `Nat`,
`rneNat_ge`), so roundMag w ≥ 2^P·2^k = 2^(P+k) ≥ 2^(emax+1)
(`roundMag_ge`). -/

/-- **The nearest natural is at least B** when n/d > B − 1/2 (d > 0,
multiplied out by 2d: 2·(d·B) < 2n + d): were rneNat n d + 1 ≤ B, then
d·rneNat n d + d ≤ d·B, against `rneNat_near`'s 2n ≤ 2·(d·rneNat n d) + d. -/
theorem rneNat_ge (n d B : Nat) (hd : 0 < d) (h : 2 * (d * B) < 2 * n + d) : B ≤ rneNat n d := by
  have hq := rneNat_near n d hd
  by_cases hl : rneNat n d + 1 ≤ B
  · have h3 : d * (rneNat n d + 1) ≤ d * B := Nat.mul_le_mul_left d hl
    have hs : d * (rneNat n d + 1) = d * rneNat n d + d := Nat.mul_add_one d (rneNat n d)
    omega
  · omega

/-- 2^P = mkRat 2^P 1 for a natural exponent (`pow2`'s first branch;
(P : Int).toNat = P). -/
theorem pow2_natcast (P : Nat) : pow2 (P : Int) = mkRat ((2 ^ P : Nat) : Int) 1 := by
  have e : pow2 (P : Int) = mkRat ((2 ^ (P : Int).toNat : Nat) : Int) 1 := if_pos (Int.ofNat_zero_le P)
  have ht : (P : Int).toNat = P := by omega
  rw [e, ht]

/-- 2^−1 = mkRat 1 2 (`pow2`'s second branch). -/
theorem pow2_neg_one : pow2 (-1) = mkRat 1 2 := by
  have e : pow2 (-1) = mkRat 1 (2 ^ (-(-1 : Int)).toNat) := if_neg (by omega)
  have e1 : (2 ^ (-(-1 : Int)).toNat : Nat) = 2 := by
    first
      | decide
      | rfl
  rw [e, e1]

/-- 2^(k+1) = 2^k + 2^k (`pow2_add`, 2^1 = 1 + 1 by evaluation,
`Rat.mul_add`, `Rat.mul_one`). -/
theorem pow2_succ (k : Int) : pow2 (k + 1) = pow2 k + pow2 k := by
  have e1 : pow2 1 = 1 + 1 := by
    first
      | decide +kernel
      | rfl
      | decide
  rw [pow2_add k 1, e1, Rat.mul_add (pow2 k) 1 1, Rat.mul_one (pow2 k)]

/-- x − y < w gives x < y + w (add y to both sides). -/
theorem rlt_add_of_sub_lt {x y w : Rat} (h : x - y < w) : x < y + w := by
  have h1 : y + (x - y) < y + w := radd_lt_add_left h y
  rw [Rat.sub_eq_add_neg x y, Rat.add_left_comm y x (-y), Rat.add_neg_cancel y, Rat.add_zero x] at h1
  exact h1

/-- **Scaling a bound by 2^−k**: 2^X < 2^Y + w gives
2^(X−k) < 2^(Y−k) + w·2^−k (`Rat.mul_lt_mul_of_pos_right`, `Rat.add_mul`,
`pow2_add`). -/
theorem shift_lt (X Y k : Int) (w : Rat) (h : pow2 X < pow2 Y + w) :
    pow2 (X + -k) < pow2 (Y + -k) + w * pow2 (-k) := by
  have h1 : pow2 X * pow2 (-k) < (pow2 Y + w) * pow2 (-k) := Rat.mul_lt_mul_of_pos_right h (pow2_pos (-k))
  rw [Rat.add_mul (pow2 Y) w (pow2 (-k)), ← pow2_add X (-k), ← pow2_add Y (-k)] at h1
  exact h1

/-- **B < 2^−1 + q read over `Nat`** (q ≥ 0 as num/den, B natural):
B·2d < d + 2·num, i.e. 2·(d·B) < 2·num + d (`pow2_neg_one`,
`Rat.mkRat_self`, `Rat.mkRat_add_mkRat`, `mkRat_lt_iff`). -/
theorem half_lt_nat (q : Rat) (hq : 0 ≤ q) (B : Nat) (h : mkRat (B : Int) 1 < pow2 (-1) + q) :
    2 * (q.den * B) < 2 * q.num.toNat + q.den := by
  have hn : 0 ≤ q.num := Rat.num_nonneg.mpr hq
  have hd : 0 < q.den := q.den_pos
  have z2 : (2 : Nat) ≠ 0 := by decide
  have h1 := h
  rw [pow2_neg_one, ← Rat.mkRat_self q, Rat.mkRat_add_mkRat 1 q.num z2 q.den_nz] at h1
  have h2 := (mkRat_lt_iff _ _ 1 (2 * q.den) (by decide) (by omega)).mp h1
  rw [← Int.toNat_of_nonneg hn] at h2
  have h3 : B * (2 * q.den) < (1 * q.den + q.num.toNat * 2) * 1 := by
    first
      | exact Int.ofNat_lt.mp h2
      | exact Int.ofNat_lt.mp (h2 : (((B * (2 * q.den) : Nat)) : Int) <
          (((1 * q.den + q.num.toNat * 2) * 1 : Nat) : Int))
      | exact_mod_cast h2
      | omega
  have e1 : B * (2 * q.den) = 2 * (q.den * B) := by
    rw [Nat.mul_left_comm B 2 q.den, Nat.mul_comm B q.den]
  omega

/-- **q < B + 2^−1 read over `Nat`** (q ≥ 0 as num/den, B natural):
2·num < (2B + 1)·d, i.e. 2·num < 2·(d·B) + d (the mirror of
`half_lt_nat`). -/
theorem lt_half_nat (q : Rat) (hq : 0 ≤ q) (B : Nat) (h : q < mkRat (B : Int) 1 + pow2 (-1)) :
    2 * q.num.toNat < 2 * (q.den * B) + q.den := by
  have hn : 0 ≤ q.num := Rat.num_nonneg.mpr hq
  have hd : 0 < q.den := q.den_pos
  have z1 : (1 : Nat) ≠ 0 := by decide
  have z2 : (2 : Nat) ≠ 0 := by decide
  have h1 := h
  rw [pow2_neg_one, ← Rat.mkRat_self q, Rat.mkRat_add_mkRat (B : Int) 1 z1 z2] at h1
  have h2 := (mkRat_lt_iff _ _ q.den (1 * 2) hd (by decide)).mp h1
  rw [← Int.toNat_of_nonneg hn] at h2
  have h3 : q.num.toNat * (1 * 2) < (B * 2 + 1 * 1) * q.den := by
    first
      | exact Int.ofNat_lt.mp h2
      | exact Int.ofNat_lt.mp (h2 : (((q.num.toNat * (1 * 2) : Nat)) : Int) <
          (((B * 2 + 1 * 1) * q.den : Nat) : Int))
      | exact_mod_cast h2
      | omega
  have e1 : (B * 2 + 1 * 1) * q.den = B * 2 * q.den + 1 * 1 * q.den := Nat.add_mul (B * 2) (1 * 1) q.den
  have e2 : B * 2 * q.den = 2 * (q.den * B) := by
    rw [Nat.mul_comm B 2, Nat.mul_assoc 2 B q.den, Nat.mul_comm B q.den]
  omega

/-- **roundMag from below**: if 2^P < 2^−1 + a·2^−k (k = `roundK f a`,
a > 0), the significand rneNat is at least 2^P (`half_lt_nat`,
`rneNat_ge`) and roundMag f a ≥ 2^P·2^k = 2^(P+k). -/
theorem roundMag_ge (f : Fmt) (a : Rat) (ha : 0 < a) (P : Nat)
    (h : pow2 (P : Int) < pow2 (-1) + a * pow2 (-(roundK f a))) :
    pow2 ((P : Int) + roundK f a) ≤ roundMag f a := by
  have hq0 : 0 ≤ a * pow2 (-(roundK f a)) := Rat.le_of_lt (Rat.mul_pos ha (pow2_pos _))
  have h' : mkRat ((2 ^ P : Nat) : Int) 1 < pow2 (-1) + a * pow2 (-(roundK f a)) := by
    rw [← pow2_natcast P]
    exact h
  have hB : 2 ^ P ≤ rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den :=
    rneNat_ge _ _ (2 ^ P) (a * pow2 (-(roundK f a))).den_pos
      (half_lt_nat (a * pow2 (-(roundK f a))) hq0 (2 ^ P) h')
  have hm : roundMag f a = mkRat ((rneNat (a * pow2 (-(roundK f a))).num.toNat
      (a * pow2 (-(roundK f a))).den : Nat) : Int) 1 * pow2 (roundK f a) := rfl
  rw [hm, pow2_add (P : Int) (roundK f a), pow2_natcast P]
  by_cases hl : 2 ^ P < rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den
  · have hi : ((2 ^ P : Nat) : Int) * ((1 : Nat) : Int) <
        ((rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den : Nat) : Int) *
          ((1 : Nat) : Int) := by
      first
        | omega
        | exact_mod_cast hl
    exact Rat.le_of_lt (Rat.mul_lt_mul_of_pos_right
      ((mkRat_lt_iff _ _ 1 1 (by decide) (by decide)).mpr hi) (pow2_pos _))
  · have he : rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den = 2 ^ P := by
      omega
    rw [he] <;> exact Rat.le_refl

/-- **roundMag from the nearest natural, in `Rat`**: if M − 1/2 <
a·2^−k < M + 1/2 (k = `roundK f a`, a > 0, M natural), then roundMag f a
= M·2^k (`half_lt_nat`, `lt_half_nat`, RoundNat.lean's
`roundMag_of_near_nat`). This is `inner`'s significand step: with k the
quantum exponent of w equal to m's, w strictly within half a quantum of
m = M·2^k rounds to m. -/
theorem roundMag_eq_of_near (f : Fmt) (a : Rat) (ha : 0 < a) (M : Nat)
    (h1 : mkRat (M : Int) 1 < pow2 (-1) + a * pow2 (-(roundK f a)))
    (h2 : a * pow2 (-(roundK f a)) < mkRat (M : Int) 1 + pow2 (-1)) :
    roundMag f a = mkRat (M : Int) 1 * pow2 (roundK f a) := by
  have hq0 : 0 ≤ a * pow2 (-(roundK f a)) := Rat.le_of_lt (Rat.mul_pos ha (pow2_pos _))
  exact roundMag_of_near_nat f a M (half_lt_nat (a * pow2 (-(roundK f a))) hq0 M h1)
    (lt_half_nat (a * pow2 (-(roundK f a))) hq0 M h2)

/-- 2^0 = 1 (by evaluation). -/
theorem pow2_zero : pow2 0 = 1 := by
  first
    | decide +kernel
    | rfl
    | decide

/-- **`inner`'s step on one quantum grid**: if w > 0 has quantum exponent
K (`roundK f w = K`) and m = M·2^K (M natural), then m − 2^(K−1) < w <
m + 2^(K−1) gives roundMag f w = m: both bounds scaled by 2^−K
(`Rat.mul_lt_mul_of_pos_right`, `Rat.add_mul`, `pow2_add`, m·2^−K = M by
`pow2_zero`) are M − 1/2 < w·2^−K < M + 1/2, and `roundMag_eq_of_near`. -/
theorem roundMag_of_within (f : Fmt) (w m : Rat) (M : Nat) (K : Int) (hw : 0 < w)
    (hK : roundK f w = K) (hm : m = mkRat (M : Int) 1 * pow2 K)
    (hlo : m - pow2 (K - 1) < w) (hhi : w < m + pow2 (K - 1)) : roundMag f w = m := by
  have hMK : m * pow2 (-K) = mkRat (M : Int) 1 := by
    rw [hm, Rat.mul_assoc (mkRat (M : Int) 1) (pow2 K) (pow2 (-K)), ← pow2_add K (-K)]
    have e : K + -K = 0 := by omega
    rw [e, pow2_zero, Rat.mul_one (mkRat (M : Int) 1)]
  have e1 : K - 1 + -K = -1 := by omega
  have h1 : m < pow2 (K - 1) + w := rlt_add_of_sub_lt hlo
  have h1' : m * pow2 (-K) < (pow2 (K - 1) + w) * pow2 (-K) :=
    Rat.mul_lt_mul_of_pos_right h1 (pow2_pos (-K))
  rw [hMK, Rat.add_mul (pow2 (K - 1)) w (pow2 (-K)), ← pow2_add (K - 1) (-K), e1] at h1'
  have h2' : w * pow2 (-K) < (m + pow2 (K - 1)) * pow2 (-K) :=
    Rat.mul_lt_mul_of_pos_right hhi (pow2_pos (-K))
  rw [Rat.add_mul m (pow2 (K - 1)) (pow2 (-K)), hMK, ← pow2_add (K - 1) (-K), e1] at h2'
  rw [← hK] at h1' h2'
  rw [roundMag_eq_of_near f w hw M h1' h2', hK, hm]

/-- Ω ≥ 0 for every format: 2^(emax−p) ≤ 2^(emax+1) (`pow2_mono`). -/
theorem roundOmega_nonneg (f : Fmt) : 0 ≤ roundOmega f :=
  (Rat.le_iff_sub_nonneg (pow2 (f.emax - (f.prec : Int))) (pow2 (f.emax + 1))).mp (pow2_mono (by omega))

/-- **Well-formed formats**: at least one significand bit, emin ≤ emax
(what `roundMag_over` uses; true of the three formats, `fmtWF_f16`,
`fmtWF_bf16`, `fmtWF_f32`). -/
structure FmtWF (f : Fmt) : Prop where
  prec_pos : 1 ≤ f.prec
  emin_le_emax : f.emin ≤ f.emax

/-- binary16 is well formed (p = 11, −14 ≤ 15). -/
theorem fmtWF_f16 : FmtWF Fmt.f16 := ⟨by decide, by decide⟩

/-- bfloat16 is well formed (p = 8, −126 ≤ 127). -/
theorem fmtWF_bf16 : FmtWF Fmt.bf16 := ⟨by decide, by decide⟩

/-- binary32 is well formed (p = 24, −126 ≤ 127). -/
theorem fmtWF_f32 : FmtWF Fmt.f32 := ⟨by decide, by decide⟩

/-- **`over`, proved**: past Ω the magnitude overflows, roundMag f w ≥
2^(emax+1), for every well-formed format (module section round34 above
for the steps). -/
theorem roundMag_over (f : Fmt) (hf : FmtWF f) (w : Rat) (hw : roundOmega f < w) :
    pow2 (f.emax + 1) ≤ roundMag f w := by
  have hemin : f.emin ≤ f.emax := hf.emin_le_emax
  have hprec : 1 ≤ f.prec := hf.prec_pos
  have hmv : pow2 (f.emax + 1) < pow2 (f.emax - (f.prec : Int)) + w := rlt_add_of_sub_lt hw
  have hwp : 0 < w := by
    by_cases hw0 : 0 < w
    · exact hw0
    · have h1 : w ≤ 0 := Rat.not_lt.mp hw0
      have h2 : pow2 (f.emax - (f.prec : Int)) + w ≤ pow2 (f.emax - (f.prec : Int)) + 0 :=
        radd_le_add_left h1 (pow2 (f.emax - (f.prec : Int)))
      rw [Rat.add_zero (pow2 (f.emax - (f.prec : Int)))] at h2
      have h3 : pow2 (f.emax - (f.prec : Int)) ≤ pow2 (f.emax + 1) := pow2_mono (by omega)
      exact absurd (rlt_of_lt_of_le hmv (Rat.le_trans h2 h3)) (rlt_irrefl _)
  have fs := flog2_spec w hwp
  have hE : f.emax ≤ flog2 w := by
    by_cases hc : f.emax ≤ flog2 w
    · exact hc
    · have h1 : w < pow2 f.emax := rlt_of_lt_of_le fs.2 (pow2_mono (by omega))
      have h2 : pow2 (f.emax - (f.prec : Int)) + w < pow2 (f.emax - (f.prec : Int)) + pow2 f.emax :=
        radd_lt_add_left h1 (pow2 (f.emax - (f.prec : Int)))
      have h3 : pow2 (f.emax - (f.prec : Int)) + pow2 f.emax ≤ pow2 (f.emax + 1) := by
        rw [pow2_succ f.emax, Rat.add_comm (pow2 (f.emax - (f.prec : Int))) (pow2 f.emax)]
        exact radd_le_add_left (pow2_mono (by omega)) (pow2 f.emax)
      exact absurd (rlt_of_lt_of_le (rlt_of_lt_of_le hmv (Rat.le_of_lt h2)) h3) (rlt_irrefl _)
  by_cases hEq : flog2 w = f.emax
  · have hk : roundK f w = f.emax - (f.prec : Int) + 1 := by
      show max (flog2 w) f.emin - (f.prec : Int) + 1 = f.emax - (f.prec : Int) + 1
      omega
    have h1 := shift_lt (f.emax + 1) (f.emax - (f.prec : Int)) (roundK f w) w hmv
    have ex1 : f.emax + 1 + -roundK f w = ((f.prec : Nat) : Int) := by omega
    have ex2 : f.emax - (f.prec : Int) + -roundK f w = -1 := by omega
    rw [ex1, ex2] at h1
    have h2 := roundMag_ge f w hwp f.prec h1
    have ex3 : ((f.prec : Nat) : Int) + roundK f w = f.emax + 1 := by omega
    rw [ex3] at h2
    exact h2
  · have hgt : f.emax + 1 ≤ flog2 w := by omega
    have hk : roundK f w = flog2 w - (f.prec : Int) + 1 := by
      show max (flog2 w) f.emin - (f.prec : Int) + 1 = flog2 w - (f.prec : Int) + 1
      omega
    have h0 : pow2 (flog2 w) + 0 < pow2 (flog2 w) + pow2 (roundK f w - 1) :=
      radd_lt_add_left (pow2_pos (roundK f w - 1)) (pow2 (flog2 w))
    rw [Rat.add_zero (pow2 (flog2 w)), Rat.add_comm (pow2 (flog2 w)) (pow2 (roundK f w - 1))] at h0
    have hmv2 : pow2 (flog2 w) < pow2 (roundK f w - 1) + w :=
      rlt_of_lt_of_le h0 (radd_le_add_left fs.1 (pow2 (roundK f w - 1)))
    have h1 := shift_lt (flog2 w) (roundK f w - 1) (roundK f w) w hmv2
    have ex1 : flog2 w + -roundK f w = ((f.prec - 1 : Nat) : Int) := by omega
    have ex2 : roundK f w - 1 + -roundK f w = -1 := by omega
    rw [ex1, ex2] at h1
    have h2 := roundMag_ge f w hwp (f.prec - 1) h1
    have h3 : pow2 (f.emax + 1) ≤ pow2 (((f.prec - 1 : Nat) : Int) + roundK f w) := pow2_mono (by omega)
    exact Rat.le_trans h3 h2

/-! ## round34: `inner`, proved

For u > 0 with m = roundMag u finite and non-zero: m lies on its own
quantum grid, m = M·2^k with k = roundK m (`roundMag_rep`: m ≤
2^(max(⌊log₂ u⌋, emin)+1) by `roundMag_le_binade`, and m ≥ 2^⌊log₂ u⌋ in a
normal binade by `roundMag_ge_binade`; either m is that power of two, M =
2^(p−1), or m's quantum exponent is u's). Then for roundLoM m < w <
roundHiM m (`roundMag_inner`): w > m − 2^(k−1) ≥ 2^(k−1) > 0 (M ≥ 1);
w < m + 2^(k−1) < 2^(E'+1), E' = max(⌊log₂ m⌋, emin) (M < 2^p); if m is
subnormal or w ≥ 2^⌊log₂ m⌋, w's quantum exponent is k and
`roundMag_of_within` gives roundMag w = m; otherwise (the binade edge) m =
2^E with E > emin (M = 2^(p−1) on the grid), w ∈ (2^E − 2^(k−2), 2^E) has
⌊log₂ w⌋ = E − 1, quantum exponent k − 1, and m = 2^p·2^(k−1):
`roundMag_of_within` at k − 1. -/

/-- x < y + w gives x − y < w (add −y to both sides). -/
theorem rsub_lt_of_lt_add {x y w : Rat} (h : x < y + w) : x - y < w := by
  have h1 : -y + x < -y + (y + w) := radd_lt_add_left h (-y)
  rw [← Rat.add_assoc (-y) y w, Rat.neg_add_cancel y, Rat.zero_add w, Rat.add_comm (-y) x,
    ← Rat.sub_eq_add_neg x y] at h1
  exact h1

/-- pow2 is strictly monotone: 2^j < 2^j + 2^j = 2^(j+1) ≤ 2^j'. -/
theorem pow2_lt {j j' : Int} (h : j < j') : pow2 j < pow2 j' := by
  have h0 : pow2 j + 0 < pow2 j + pow2 j := radd_lt_add_left (pow2_pos j) (pow2 j)
  rw [Rat.add_zero (pow2 j), ← pow2_succ j] at h0
  exact rlt_of_lt_of_le h0 (pow2_mono (by omega))

/-- pow2 reflects <: 2^a < 2^b gives a < b. -/
theorem lt_of_pow2_lt {a b : Int} (h : pow2 a < pow2 b) : a < b := by
  by_cases hc : a < b
  · exact hc
  · have h2 : pow2 b ≤ pow2 a := pow2_mono (by omega)
    exact absurd (rlt_of_lt_of_le h h2) (rlt_irrefl _)

/-- ⌊log₂ w⌋ from a bracket: 2^E ≤ w < 2^(E+1) gives flog2 w = E. -/
theorem flog2_eq (w : Rat) (hw : 0 < w) (E : Int) (h1 : pow2 E ≤ w) (h2 : w < pow2 (E + 1)) :
    flog2 w = E := by
  have fs := flog2_spec w hw
  have a1 : E < flog2 w + 1 := lt_of_pow2_lt (rlt_of_le_of_lt h1 fs.2)
  have a2 : flog2 w < E + 1 := lt_of_pow2_lt (rlt_of_le_of_lt fs.1 h2)
  omega

/-- On one grid: A < B gives A·2^k < B·2^k (`mkRat_lt_iff`). -/
theorem grid_lt (A B : Nat) (k : Int) (h : A < B) :
    mkRat (A : Int) 1 * pow2 k < mkRat (B : Int) 1 * pow2 k := by
  have hi : (A : Int) * ((1 : Nat) : Int) < (B : Int) * ((1 : Nat) : Int) := by
    first
      | omega
      | exact_mod_cast h
  exact Rat.mul_lt_mul_of_pos_right ((mkRat_lt_iff _ _ 1 1 (by decide) (by decide)).mpr hi) (pow2_pos k)

/-- On one grid: A ≤ B gives A·2^k ≤ B·2^k. -/
theorem grid_le (A B : Nat) (k : Int) (h : A ≤ B) :
    mkRat (A : Int) 1 * pow2 k ≤ mkRat (B : Int) 1 * pow2 k := by
  by_cases hl : A < B
  · exact Rat.le_of_lt (grid_lt A B k hl)
  · have he : A = B := by omega
    subst he
    exact Rat.le_refl

/-- On one grid, < reflects: A·2^k < B·2^k gives A < B. -/
theorem lt_of_grid_lt (A B : Nat) (k : Int)
    (h : mkRat (A : Int) 1 * pow2 k < mkRat (B : Int) 1 * pow2 k) : A < B := by
  by_cases hc : A < B
  · exact hc
  · exact absurd (rlt_of_lt_of_le h (grid_le B A k (by omega))) (rlt_irrefl _)

/-- 2^k = 1·2^k on the grid (`Rat.one_mul`; mkRat 1 1 = 1 by evaluation). -/
theorem pow2_eq_grid_one (k : Int) : pow2 k = mkRat ((1 : Nat) : Int) 1 * pow2 k := by
  have e : mkRat ((1 : Nat) : Int) 1 = 1 := by
    first
      | decide +kernel
      | rfl
  rw [e, Rat.one_mul (pow2 k)]

/-- A·2^k + 2^k = (A+1)·2^k (`Rat.mkRat_add_mkRat`, `Rat.mkRat_eq_iff`,
`Rat.add_mul`). -/
theorem grid_add_one (A : Nat) (k : Int) :
    mkRat (A : Int) 1 * pow2 k + pow2 k = mkRat ((A + 1 : Nat) : Int) 1 * pow2 k := by
  have z1 : (1 : Nat) ≠ 0 := by decide
  have e : mkRat (A : Int) 1 + mkRat ((1 : Nat) : Int) 1 = mkRat ((A + 1 : Nat) : Int) 1 := by
    rw [Rat.mkRat_add_mkRat (A : Int) ((1 : Nat) : Int) z1 z1]
    exact (Rat.mkRat_eq_iff (Nat.mul_ne_zero z1 z1) z1).mpr (by omega)
  rw [← e, Rat.add_mul (mkRat (A : Int) 1) (mkRat ((1 : Nat) : Int) 1) (pow2 k), ← pow2_eq_grid_one k]

/-- **The nearest natural is at most B** when n/d < B + 1/2 (multiplied
out: 2n < 2·(d·B) + d), the mirror of `rneNat_ge`. -/
theorem rneNat_le (n d B : Nat) (hd : 0 < d) (h : 2 * n < 2 * (d * B) + d) : rneNat n d ≤ B := by
  have hq := rneNat_near n d hd
  by_cases hl : B + 1 ≤ rneNat n d
  · have h3 : d * (B + 1) ≤ d * rneNat n d := Nat.mul_le_mul_left d hl
    have hs : d * (B + 1) = d * B + d := Nat.mul_add_one d B
    omega
  · omega

/-- **roundMag from above**: if a·2^−k < 2^P + 2^−1 (k = `roundK f a`),
roundMag f a ≤ 2^(P+k) (`lt_half_nat`, `rneNat_le`, `grid_le`). -/
theorem roundMag_le (f : Fmt) (a : Rat) (ha : 0 < a) (P : Nat)
    (h : a * pow2 (-(roundK f a)) < mkRat ((2 ^ P : Nat) : Int) 1 + pow2 (-1)) :
    roundMag f a ≤ pow2 ((P : Int) + roundK f a) := by
  have hq0 : 0 ≤ a * pow2 (-(roundK f a)) := Rat.le_of_lt (Rat.mul_pos ha (pow2_pos _))
  have hB : rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den ≤ 2 ^ P :=
    rneNat_le _ _ (2 ^ P) (a * pow2 (-(roundK f a))).den_pos
      (lt_half_nat (a * pow2 (-(roundK f a))) hq0 (2 ^ P) h)
  have hm : roundMag f a = mkRat ((rneNat (a * pow2 (-(roundK f a))).num.toNat
      (a * pow2 (-(roundK f a))).den : Nat) : Int) 1 * pow2 (roundK f a) := rfl
  rw [hm, pow2_add (P : Int) (roundK f a), pow2_natcast P]
  exact grid_le _ _ (roundK f a) hB

/-- In a normal binade (⌊log₂ a⌋ ≥ emin) the magnitude is at least
2^⌊log₂ a⌋ (2^(p−1) < 2^−1 + a·2^−k, `roundMag_ge`; `roundMag_over`'s
second case). -/
theorem roundMag_ge_binade (f : Fmt) (hf : FmtWF f) (a : Rat) (ha : 0 < a)
    (hE : f.emin ≤ flog2 a) : pow2 (flog2 a) ≤ roundMag f a := by
  have hprec : 1 ≤ f.prec := hf.prec_pos
  have fs := flog2_spec a ha
  have hk : roundK f a = flog2 a - (f.prec : Int) + 1 := by
    show max (flog2 a) f.emin - (f.prec : Int) + 1 = flog2 a - (f.prec : Int) + 1
    omega
  have h0 : pow2 (flog2 a) + 0 < pow2 (flog2 a) + pow2 (roundK f a - 1) :=
    radd_lt_add_left (pow2_pos (roundK f a - 1)) (pow2 (flog2 a))
  rw [Rat.add_zero (pow2 (flog2 a)), Rat.add_comm (pow2 (flog2 a)) (pow2 (roundK f a - 1))] at h0
  have hmv : pow2 (flog2 a) < pow2 (roundK f a - 1) + a :=
    rlt_of_lt_of_le h0 (radd_le_add_left fs.1 (pow2 (roundK f a - 1)))
  have h1 := shift_lt (flog2 a) (roundK f a - 1) (roundK f a) a hmv
  have ex1 : flog2 a + -roundK f a = ((f.prec - 1 : Nat) : Int) := by omega
  have ex2 : roundK f a - 1 + -roundK f a = -1 := by omega
  rw [ex1, ex2] at h1
  have h2 := roundMag_ge f a ha (f.prec - 1) h1
  have ex3 : ((f.prec - 1 : Nat) : Int) + roundK f a = flog2 a := by omega
  rw [ex3] at h2
  exact h2

/-- The magnitude is at most 2^(max(⌊log₂ a⌋, emin)+1): a·2^−k <
2^(max(⌊log₂ a⌋, emin)+1−k) = 2^p < 2^p + 2^−1, `roundMag_le`. -/
theorem roundMag_le_binade (f : Fmt) (a : Rat) (ha : 0 < a) :
    roundMag f a ≤ pow2 (max (flog2 a) f.emin + 1) := by
  have fs := flog2_spec a ha
  have hk : roundK f a = max (flog2 a) f.emin - (f.prec : Int) + 1 := rfl
  have h1 : a < pow2 (max (flog2 a) f.emin + 1) := rlt_of_lt_of_le fs.2 (pow2_mono (by omega))
  have h2 : a * pow2 (-(roundK f a)) < pow2 (max (flog2 a) f.emin + 1) * pow2 (-(roundK f a)) :=
    Rat.mul_lt_mul_of_pos_right h1 (pow2_pos _)
  rw [← pow2_add (max (flog2 a) f.emin + 1) (-(roundK f a))] at h2
  have ex : max (flog2 a) f.emin + 1 + -(roundK f a) = ((f.prec : Nat) : Int) := by omega
  rw [ex, pow2_natcast f.prec] at h2
  have h3 : mkRat ((2 ^ f.prec : Nat) : Int) 1 + 0 < mkRat ((2 ^ f.prec : Nat) : Int) 1 + pow2 (-1) :=
    radd_lt_add_left (pow2_pos (-1)) (mkRat ((2 ^ f.prec : Nat) : Int) 1)
  rw [Rat.add_zero (mkRat ((2 ^ f.prec : Nat) : Int) 1)] at h3
  have h4 := roundMag_le f a ha f.prec (rlt_of_lt_of_le h2 (Rat.le_of_lt h3))
  have ex2 : ((f.prec : Nat) : Int) + roundK f a = max (flog2 a) f.emin + 1 := by omega
  rw [ex2] at h4
  exact h4

/-- **m = roundMag u lies on its own quantum grid**: m = M·2^(roundK m)
with M natural (u > 0, m ≠ 0). -/
theorem roundMag_rep (f : Fmt) (hf : FmtWF f) (u : Rat) (hu : 0 < u) (hm0 : ¬ roundMag f u = 0) :
    ∃ M : Nat, roundMag f u = mkRat (M : Int) 1 * pow2 (roundK f (roundMag f u)) := by
  have hprec : 1 ≤ f.prec := hf.prec_pos
  have hmpos : 0 < roundMag f u :=
    Rat.lt_of_le_of_ne (roundMag_nonneg f u) (fun h => hm0 h.symm)
  have fsm := flog2_spec (roundMag f u) hmpos
  have hup := roundMag_le_binade f u hu
  have hku : roundK f u = max (flog2 u) f.emin - (f.prec : Int) + 1 := rfl
  have hkm : roundK f (roundMag f u) = max (flog2 (roundMag f u)) f.emin - (f.prec : Int) + 1 := rfl
  by_cases htop : roundMag f u = pow2 (max (flog2 u) f.emin + 1)
  · have hlo1 : pow2 (max (flog2 u) f.emin + 1) ≤ roundMag f u := by
      rw [htop] <;> exact Rat.le_refl
    have hhi1 : roundMag f u < pow2 (max (flog2 u) f.emin + 1 + 1) := by
      rw [htop]
      exact pow2_lt (by omega)
    have hE : flog2 (roundMag f u) = max (flog2 u) f.emin + 1 :=
      flog2_eq (roundMag f u) hmpos (max (flog2 u) f.emin + 1) hlo1 hhi1
    refine ⟨2 ^ (f.prec - 1), ?_⟩
    have ex : max (flog2 u) f.emin + 1 = ((f.prec - 1 : Nat) : Int) + roundK f (roundMag f u) := by
      omega
    rw [← pow2_natcast (f.prec - 1), ← pow2_add ((f.prec - 1 : Nat) : Int) (roundK f (roundMag f u)),
      ← ex]
    exact htop
  · have hlt : roundMag f u < pow2 (max (flog2 u) f.emin + 1) := Rat.lt_of_le_of_ne hup htop
    have a1 : flog2 (roundMag f u) < max (flog2 u) f.emin + 1 :=
      lt_of_pow2_lt (rlt_of_le_of_lt fsm.1 hlt)
    have hK : roundK f (roundMag f u) = roundK f u := by
      by_cases hn : f.emin ≤ flog2 u
      · have hlow := roundMag_ge_binade f hf u hu hn
        have a2 : flog2 u < flog2 (roundMag f u) + 1 := lt_of_pow2_lt (rlt_of_le_of_lt hlow fsm.2)
        omega
      · omega
    refine ⟨rneNat (u * pow2 (-(roundK f u))).num.toNat (u * pow2 (-(roundK f u))).den, ?_⟩
    rw [hK] <;> rfl

/-- **`inner` on the grid**: m > 0 with m = M·2^k (k = roundK m) and
roundLoM m < w < roundHiM m give w > 0 and roundMag w = m (module section
above for the steps; the binade edge is the last case). -/
theorem roundMag_inner (f : Fmt) (hf : FmtWF f) (m w : Rat) (M : Nat) (hmpos : 0 < m)
    (hM : m = mkRat (M : Int) 1 * pow2 (roundK f m))
    (hlo : roundLoM f m < w) (hhi : w < roundHiM f m) : 0 < w ∧ roundMag f w = m := by
  have hprec : 1 ≤ f.prec := hf.prec_pos
  have hm0 : ¬ m = 0 := Rat.ne_of_gt hmpos
  have fsm := flog2_spec m hmpos
  have hkm : roundK f m = max (flog2 m) f.emin - (f.prec : Int) + 1 := rfl
  have hhi' : w < m + pow2 (roundK f m - 1) := by
    have e : roundHiM f m = m + pow2 (roundK f m - 1) := if_neg hm0
    rw [← e]
    exact hhi
  have hM1 : 1 ≤ M := by
    by_cases hM0 : M = 0
    · exfalso
      apply hm0
      rw [hM, hM0]
      have e0 : mkRat ((0 : Nat) : Int) 1 = 0 := by
        first
          | exact Rat.zero_mkRat 1
          | decide +kernel
      rw [e0, Rat.zero_mul]
    · omega
  have hge : pow2 (roundK f m) ≤ m := by
    have g := grid_le 1 M (roundK f m) hM1
    rw [← pow2_eq_grid_one (roundK f m), ← hM] at g
    exact g
  have hlt1 : pow2 (roundK f m - 1) < pow2 (roundK f m) := pow2_lt (by omega)
  have hpos1 : pow2 (roundK f m - 1) < m := rlt_of_lt_of_le hlt1 hge
  have hlo' : m - pow2 (roundK f m - 1) < w := by
    by_cases hc : m = pow2 (flog2 m) ∧ f.emin < flog2 m
    · have e : roundLoM f m = m - pow2 (roundK f m - 2) := if_pos hc
      rw [e] at hlo
      have h1 : m < pow2 (roundK f m - 2) + w := rlt_add_of_sub_lt hlo
      have h2 : pow2 (roundK f m - 2) + w ≤ pow2 (roundK f m - 1) + w := by
        rw [Rat.add_comm (pow2 (roundK f m - 2)) w, Rat.add_comm (pow2 (roundK f m - 1)) w]
        exact radd_le_add_left (pow2_mono (by omega)) w
      exact rsub_lt_of_lt_add (rlt_of_lt_of_le h1 h2)
    · have e : roundLoM f m = m - pow2 (roundK f m - 1) := if_neg hc
      rw [e] at hlo
      exact hlo
  have hw : 0 < w := by
    have h1 : 0 < m - pow2 (roundK f m - 1) :=
      (Rat.lt_iff_sub_pos (pow2 (roundK f m - 1)) m).mp hpos1
    exact rlt_of_lt_of_le h1 (Rat.le_of_lt hlo')
  have hMp : M < 2 ^ f.prec := by
    have h1 : m < pow2 (max (flog2 m) f.emin + 1) := rlt_of_lt_of_le fsm.2 (pow2_mono (by omega))
    have ex : max (flog2 m) f.emin + 1 = ((f.prec : Nat) : Int) + roundK f m := by omega
    rw [ex, pow2_add ((f.prec : Nat) : Int) (roundK f m), pow2_natcast f.prec] at h1
    have h2 : mkRat (M : Int) 1 * pow2 (roundK f m) <
        mkRat ((2 ^ f.prec : Nat) : Int) 1 * pow2 (roundK f m) := by
      rw [← hM]
      exact h1
    exact lt_of_grid_lt M (2 ^ f.prec) (roundK f m) h2
  have hU : m + pow2 (roundK f m - 1) < pow2 (max (flog2 m) f.emin + 1) := by
    have h1 : m + pow2 (roundK f m - 1) < m + pow2 (roundK f m) := radd_lt_add_left hlt1 m
    have h2 : m + pow2 (roundK f m) ≤ pow2 (max (flog2 m) f.emin + 1) := by
      have ex : max (flog2 m) f.emin + 1 = ((f.prec : Nat) : Int) + roundK f m := by omega
      rw [ex, pow2_add ((f.prec : Nat) : Int) (roundK f m), pow2_natcast f.prec]
      have g := grid_le (M + 1) (2 ^ f.prec) (roundK f m) (by omega)
      rw [← grid_add_one M (roundK f m), ← hM] at g
      exact g
    exact rlt_of_lt_of_le h1 h2
  have hwU : w < pow2 (max (flog2 m) f.emin + 1) := rlt_of_lt_of_le hhi' (Rat.le_of_lt hU)
  have fsw := flog2_spec w hw
  have aw1 : flog2 w < max (flog2 m) f.emin + 1 := lt_of_pow2_lt (rlt_of_le_of_lt fsw.1 hwU)
  have hkw : roundK f w = max (flog2 w) f.emin - (f.prec : Int) + 1 := rfl
  refine ⟨hw, ?_⟩
  by_cases hA : flog2 m ≤ f.emin ∨ pow2 (flog2 m) ≤ w
  · have hKw : roundK f w = roundK f m := by
      rcases hA with h | h
      · omega
      · have aw2 : flog2 m < flog2 w + 1 := lt_of_pow2_lt (rlt_of_le_of_lt h fsw.2)
        omega
    exact roundMag_of_within f w m M (roundK f m) hw hKw hM hlo' hhi'
  · -- the binade edge: m = 2^E, E > emin, w just below 2^E
    have hEm : f.emin < flog2 m := by
      by_cases h : f.emin < flog2 m
      · exact h
      · exact absurd (Or.inl (show flog2 m ≤ f.emin by omega)) hA
    have hwE : w < pow2 (flog2 m) := by
      by_cases h : pow2 (flog2 m) ≤ w
      · exact absurd (Or.inr h) hA
      · exact Rat.not_le.mp h
    have exg : flog2 m = ((f.prec - 1 : Nat) : Int) + roundK f m := by omega
    have hEgrid : pow2 (flog2 m) = mkRat ((2 ^ (f.prec - 1) : Nat) : Int) 1 * pow2 (roundK f m) := by
      rw [← pow2_natcast (f.prec - 1), ← pow2_add ((f.prec - 1 : Nat) : Int) (roundK f m), ← exg]
    have hMlo : 2 ^ (f.prec - 1) ≤ M := by
      by_cases hc : 2 ^ (f.prec - 1) ≤ M
      · exact hc
      · have g := grid_lt M (2 ^ (f.prec - 1)) (roundK f m) (by omega)
        rw [← hM, ← hEgrid] at g
        exact absurd (rlt_of_lt_of_le g fsm.1) (rlt_irrefl _)
    have hMhi : M ≤ 2 ^ (f.prec - 1) := by
      by_cases hc : M ≤ 2 ^ (f.prec - 1)
      · exact hc
      · have g := grid_le (2 ^ (f.prec - 1) + 1) M (roundK f m) (by omega)
        rw [← grid_add_one (2 ^ (f.prec - 1)) (roundK f m), ← hEgrid, ← hM] at g
        have g2 : m < pow2 (roundK f m - 1) + w := rlt_add_of_sub_lt hlo'
        have g3 : pow2 (roundK f m - 1) + w < pow2 (roundK f m - 1) + pow2 (flog2 m) :=
          radd_lt_add_left hwE (pow2 (roundK f m - 1))
        have g4 : pow2 (flog2 m) + pow2 (roundK f m) < pow2 (roundK f m - 1) + pow2 (flog2 m) :=
          rlt_of_le_of_lt g (rlt_of_lt_of_le g2 (Rat.le_of_lt g3))
        rw [Rat.add_comm (pow2 (roundK f m - 1)) (pow2 (flog2 m))] at g4
        have g5 : pow2 (flog2 m) + pow2 (roundK f m - 1) < pow2 (flog2 m) + pow2 (roundK f m) :=
          radd_lt_add_left hlt1 (pow2 (flog2 m))
        exact absurd (rlt_of_lt_of_le g4 (Rat.le_of_lt g5)) (rlt_irrefl _)
    have hMeq : M = 2 ^ (f.prec - 1) := by omega
    have hmE : m = pow2 (flog2 m) := by
      rw [hEgrid, ← hMeq]
      exact hM
    have hlo2 : m - pow2 (roundK f m - 2) < w := by
      have hc : m = pow2 (flog2 m) ∧ f.emin < flog2 m := ⟨hmE, hEm⟩
      have e : roundLoM f m = m - pow2 (roundK f m - 2) := if_pos hc
      rw [e] at hlo
      exact hlo
    have e2 := pow2_succ (flog2 m - 1)
    have exs : flog2 m - 1 + 1 = flog2 m := by omega
    rw [exs] at e2
    have l1 : pow2 (flog2 m) < pow2 (roundK f m - 2) + w := by
      rw [← hmE]
      exact rlt_add_of_sub_lt hlo2
    rw [e2] at l1
    have l2 : pow2 (roundK f m - 2) + w ≤ pow2 (flog2 m - 1) + w := by
      rw [Rat.add_comm (pow2 (roundK f m - 2)) w, Rat.add_comm (pow2 (flog2 m - 1)) w]
      exact radd_le_add_left (pow2_mono (by omega)) w
    have hwlo : pow2 (flog2 m - 1) ≤ w := by
      by_cases hc : pow2 (flog2 m - 1) ≤ w
      · exact hc
      · have h1 : w ≤ pow2 (flog2 m - 1) := Rat.le_of_lt (Rat.not_le.mp hc)
        have h2 : pow2 (flog2 m - 1) + w ≤ pow2 (flog2 m - 1) + pow2 (flog2 m - 1) :=
          radd_le_add_left h1 (pow2 (flog2 m - 1))
        exact absurd (rlt_of_lt_of_le (rlt_of_lt_of_le l1 l2) h2) (rlt_irrefl _)
    have hwhi : w < pow2 (flog2 m - 1 + 1) := by
      rw [exs]
      exact hwE
    have hEw : flog2 w = flog2 m - 1 := flog2_eq w hw (flog2 m - 1) hwlo hwhi
    have hKw : roundK f w = roundK f m - 1 := by omega
    have ex3 : flog2 m = ((f.prec : Nat) : Int) + (roundK f m - 1) := by omega
    have g : pow2 (flog2 m) = mkRat ((2 ^ f.prec : Nat) : Int) 1 * pow2 (roundK f m - 1) := by
      rw [← pow2_natcast f.prec, ← pow2_add ((f.prec : Nat) : Int) (roundK f m - 1), ← ex3]
    have hm2 : m = mkRat ((2 ^ f.prec : Nat) : Int) 1 * pow2 (roundK f m - 1) := hmE.trans g
    have ex4 : roundK f m - 1 - 1 = roundK f m - 2 := by omega
    have hloB : m - pow2 (roundK f m - 1 - 1) < w := by
      rw [ex4]
      exact hlo2
    have hwm : w < m := by
      rw [hmE]
      exact hwE
    have hmm : m + 0 ≤ m + pow2 (roundK f m - 1 - 1) :=
      radd_le_add_left (Rat.le_of_lt (pow2_pos (roundK f m - 1 - 1))) m
    rw [Rat.add_zero m] at hmm
    have hhiB : w < m + pow2 (roundK f m - 1 - 1) := rlt_of_lt_of_le hwm hmm
    exact roundMag_of_within f w m (2 ^ f.prec) (roundK f m - 1) hw hKw hm2 hloB hhiB

/-- **`inner`, proved** (every `FmtWF` format): `roundMag_rep` puts
m = roundMag u on its grid, `roundMag_inner` does the rest. -/
theorem roundMag_inner_of (f : Fmt) (hf : FmtWF f) : ∀ u w : Rat, 0 < u → ¬ roundMag f u = 0 →
    ¬ pow2 (f.emax + 1) ≤ roundMag f u →
    roundLoM f (roundMag f u) < w → w < roundHiM f (roundMag f u) →
      0 < w ∧ roundMag f w = roundMag f u := by
  intro u w hu hz _ hlo hhi
  rcases roundMag_rep f hf u hu hz with ⟨M, hM⟩
  exact roundMag_inner f hf (roundMag f u) w M
    (Rat.lt_of_le_of_ne (roundMag_nonneg f u) (fun h => hz h.symm)) hM hlo hhi

/-- **`RoundMagLocal` holds for every well-formed format** (its one field
is `roundMag_inner_of`): nothing about `roundMag` is assumed any more. -/
theorem roundMagLocal (f : Fmt) (hf : FmtWF f) : RoundMagLocal f := ⟨roundMag_inner_of f hf⟩

/-- roundQ at x > 0: the overflow test on roundMag x, else roundMag x. -/
theorem roundQ_pos (f : Fmt) (x : Rat) (hx : 0 < x) :
    roundQ f x = (if pow2 (f.emax + 1) ≤ roundMag f x then none else some (roundMag f x)) := by
  have h0 : ¬ x = 0 := Rat.ne_of_gt hx
  have h1 : ¬ x < 0 := Rat.not_lt.mpr (Rat.le_of_lt hx)
  first
    | exact (if_neg h0).trans (if_neg h1)
    | (unfold roundQ; rw [if_neg h0, if_neg h1])

/-- roundQ at x < 0: the overflow test on roundMag (−x), else −roundMag (−x). -/
theorem roundQ_negarg (f : Fmt) (x : Rat) (hx : x < 0) :
    roundQ f x = (if pow2 (f.emax + 1) ≤ roundMag f (-x) then none else some (-(roundMag f (-x)))) := by
  have h0 : ¬ x = 0 := Rat.ne_of_lt hx
  first
    | exact (if_neg h0).trans (if_pos hx)
    | (unfold roundQ; rw [if_neg h0, if_pos hx])

/-- Negation inside an optional value. -/
def negOpt : Option Rat → Option Rat
  | none => none
  | some r => some (-r)

/-- `negOpt` is an involution. -/
theorem negOpt_negOpt (o : Option Rat) : negOpt (negOpt o) = o := by
  cases o with
  | none => rfl
  | some r => exact congrArg some (rneg_neg r)

/-- **roundQ is odd**: roundQ (−x) = −roundQ x (none ↦ none). -/
theorem roundQ_neg (f : Fmt) (x : Rat) : roundQ f (-x) = negOpt (roundQ f x) := by
  by_cases hx0 : x = 0
  · rw [hx0, rneg_zero, roundQ_zero f] <;> exact congrArg some rneg_zero.symm
  · by_cases hxn : x < 0
    · rw [roundQ_pos f (-x) (rneg_pos hxn), roundQ_negarg f x hxn]
      by_cases hP : pow2 (f.emax + 1) ≤ roundMag f (-x)
      · rw [if_pos hP, if_pos hP] <;> rfl
      · rw [if_neg hP, if_neg hP] <;> exact congrArg some (rneg_neg (roundMag f (-x))).symm
    · have hxp : 0 < x := Rat.lt_of_le_of_ne (Rat.not_lt.mp hxn) (fun h => hx0 h.symm)
      rw [roundQ_negarg f (-x) (rneg_neg_of_pos hxp), rneg_neg x, roundQ_pos f x hxp]
      by_cases hP : pow2 (f.emax + 1) ≤ roundMag f x
      · rw [if_pos hP, if_pos hP] <;> rfl
      · rw [if_neg hP, if_neg hP] <;> rfl

/-- **roundGap is even**: roundGap (−a) = roundGap a (it reads only |a|
and |roundQ a|). -/
theorem roundGap_neg (f : Fmt) (a : Rat) : roundGap f (-a) = roundGap f a := by
  show roundGapOf f (-a) (roundQ f (-a)) = roundGapOf f a (roundQ f a)
  rw [roundQ_neg f a]
  cases hq : roundQ f a with
  | none =>
    show absS (-a) - roundOmega f = absS a - roundOmega f
    rw [absS_neg a]
  | some r =>
    show (if absS (-r) = 0 then roundHiM f 0 - absS (-a)
        else rmin (absS (-a) - roundLoM f (absS (-r))) (roundHiM f (absS (-r)) - absS (-a))) =
      (if absS r = 0 then roundHiM f 0 - absS a
        else rmin (absS a - roundLoM f (absS r)) (roundHiM f (absS r) - absS a))
    rw [absS_neg r, absS_neg a]

/-- The jump point above 0 is half the least subnormal, 2^(emin − p). -/
theorem roundHiM_zero (f : Fmt) : roundHiM f 0 = pow2 (f.emin - (f.prec : Int)) := by
  first
    | exact if_pos rfl
    | (unfold roundHiM; rw [if_pos rfl])
    | (unfold roundHiM; exact if_pos rfl)

/-- **Near 0**: |w| below half the least subnormal rounds to 0
(`roundMag_under`; the overflow test fails at 0 since 2^(emax+1) > 0). -/
theorem roundQ_small (f : Fmt) (w : Rat)
    (hw : w < pow2 (f.emin - (f.prec : Int))) (hnw : -w < pow2 (f.emin - (f.prec : Int))) :
    roundQ f w = some 0 := by
  have hP0 : ¬ pow2 (f.emax + 1) ≤ 0 := Rat.not_le.mpr (pow2_pos (f.emax + 1))
  by_cases hw0 : w = 0
  · subst hw0
    exact roundQ_zero f
  · by_cases hwn : w < 0
    · rw [roundQ_negarg f w hwn, roundMag_under f (-w) (rneg_pos hwn) hnw, if_neg hP0, rneg_zero]
    · have hwp : 0 < w := Rat.lt_of_le_of_ne (Rat.not_lt.mp hwn) (fun h => hw0 h.symm)
      rw [roundQ_pos f w hwp, roundMag_under f w hwp hw, if_neg hP0]

/-- roundGap in the branch where a ≥ 0 rounds to 0: 2^(emin − p) − a. -/
theorem roundGap_zero_branch (f : Fmt) (a : Rat) (ha : 0 ≤ a) (hq : roundQ f a = some 0) :
    roundGap f a = pow2 (f.emin - (f.prec : Int)) - a := by
  have e : roundGap f a = roundGapOf f a (some 0) := by
    show roundGapOf f a (roundQ f a) = roundGapOf f a (some 0)
    rw [hq]
  have e2 : roundGapOf f a (some 0) = (if absS 0 = 0 then roundHiM f 0 - absS a
      else rmin (absS a - roundLoM f (absS 0)) (roundHiM f (absS 0) - absS a)) := rfl
  rw [e, e2, absS_zero, if_pos (rfl : (0 : Rat) = 0), roundHiM_zero f, absS_of_nonneg a ha]

/-- **The zero branch** (a ≥ 0 rounding to 0, a = 0 included): within
the gap 2^(emin − p) − a, a + s and −(a + s) stay below 2^(emin − p). -/
theorem roundScalar_zero_branch (f : Fmt) (a s : Rat) (ha : 0 ≤ a)
    (hq : roundQ f a = some 0) (hs : s < roundGap f a) (hns : -s < roundGap f a) :
    roundQ f (a + s) = roundQ f a := by
  rw [roundGap_zero_branch f a ha hq] at hs hns
  rw [hq]
  exact roundQ_small f (a + s) (add_lt_of_lt_sub hs) (neg_add_lt ha hns)

/-- **The interior branch** (a > 0, m = roundMag a finite and non-zero):
the gap is min(a − lo(m), hi(m) − a), so lo(m) < a + s < hi(m), and
`inner` gives roundMag (a + s) = m, a + s > 0. -/
theorem roundScalar_inner_branch (f : Fmt) (hm : RoundMagLocal f) (a s : Rat) (ha : 0 < a)
    (hP : ¬ pow2 (f.emax + 1) ≤ roundMag f a) (hz : ¬ roundMag f a = 0)
    (hqa : roundQ f a = some (roundMag f a)) (hs : s < roundGap f a) (hns : -s < roundGap f a) :
    roundQ f (a + s) = roundQ f a := by
  have habsM : absS (roundMag f a) = roundMag f a := absS_of_nonneg _ (roundMag_nonneg f a)
  have habs : absS a = a := absS_of_nonneg a (Rat.le_of_lt ha)
  have hgap : roundGap f a = rmin (a - roundLoM f (roundMag f a)) (roundHiM f (roundMag f a) - a) := by
    have e : roundGap f a = roundGapOf f a (some (roundMag f a)) := by
      show roundGapOf f a (roundQ f a) = roundGapOf f a (some (roundMag f a))
      rw [hqa]
    have e2 : roundGapOf f a (some (roundMag f a)) = (if absS (roundMag f a) = 0 then roundHiM f 0 - absS a
        else rmin (absS a - roundLoM f (absS (roundMag f a))) (roundHiM f (absS (roundMag f a)) - absS a)) := rfl
    rw [e, e2, habsM, if_neg hz, habs]
  rw [hgap] at hs hns
  have hhi : a + s < roundHiM f (roundMag f a) :=
    add_lt_of_lt_sub (rlt_of_lt_of_le hs (rmin_le_right _ _))
  have hlo : roundLoM f (roundMag f a) < a + s :=
    lt_add_of_neg_lt_sub (rlt_of_lt_of_le hns (rmin_le_left _ _))
  have hw := hm.inner a (a + s) ha hz hP hlo hhi
  rw [hqa, roundQ_pos f (a + s) hw.1, hw.2, if_neg hP]

/-- **a > 0, every branch**: overflow (a + s > Ω ≥ 0 overflows too), the
zero branch, the interior branch. -/
theorem roundScalar_pos (f : Fmt) (hf : FmtWF f) (hm : RoundMagLocal f) (a s : Rat) (ha : 0 < a)
    (hs : s < roundGap f a) (hns : -s < roundGap f a) : roundQ f (a + s) = roundQ f a := by
  have hq := roundQ_pos f a ha
  by_cases hP : pow2 (f.emax + 1) ≤ roundMag f a
  · have hqa : roundQ f a = none := hq.trans (if_pos hP)
    have hgap : roundGap f a = a - roundOmega f := by
      show roundGapOf f a (roundQ f a) = a - roundOmega f
      rw [hqa]
      show absS a - roundOmega f = a - roundOmega f
      rw [absS_of_nonneg a (Rat.le_of_lt ha)]
    rw [hgap] at hns
    have hw : roundOmega f < a + s := lt_add_of_neg_lt_sub hns
    have hwp : 0 < a + s := rlt_of_le_of_lt (roundOmega_nonneg f) hw
    rw [hqa, roundQ_pos f (a + s) hwp, if_pos (roundMag_over f hf (a + s) hw)]
  · have hqa : roundQ f a = some (roundMag f a) := hq.trans (if_neg hP)
    by_cases hz : roundMag f a = 0
    · have hq0 : roundQ f a = some 0 := by
        rw [hqa, hz]
      exact roundScalar_zero_branch f a s (Rat.le_of_lt ha) hq0 hs hns
    · exact roundScalar_inner_branch f hm a s ha hP hz hqa hs hns

/-- **`RoundScalarLocal` from the magnitude facts**: a > 0 above, a = 0 by
the zero branch, a < 0 by oddness (roundQ (−a + −s) = roundQ (−a) at the
same gap, then `negOpt` on both sides). -/
theorem roundScalarLocal_of_mag (f : Fmt) (hf : FmtWF f) (hm : RoundMagLocal f) : RoundScalarLocal f := by
  intro a s _ hs hns
  by_cases hapos : 0 < a
  · exact roundScalar_pos f hf hm a s hapos hs hns
  · by_cases ha0 : a = 0
    · subst ha0
      exact roundScalar_zero_branch f 0 s Rat.le_refl (roundQ_zero f) hs hns
    · have hneg : a < 0 := Rat.lt_of_le_of_ne (Rat.not_lt.mp hapos) ha0
      have hs' : -s < roundGap f (-a) := by
        rw [roundGap_neg f a]
        exact hns
      have hns' : -(-s) < roundGap f (-a) := by
        rw [roundGap_neg f a, rneg_neg s]
        exact hs
      have h := roundScalar_pos f hf hm (-a) (-s) (rneg_pos hneg) hs' hns'
      rw [← neg_add' a s, roundQ_neg f (a + s), roundQ_neg f a] at h
      calc roundQ f (a + s) = negOpt (negOpt (roundQ f (a + s))) := (negOpt_negOpt _).symm
        _ = negOpt (negOpt (roundQ f a)) := by rw [h]
        _ = roundQ f a := negOpt_negOpt _

/-- **The scalar statement, proved** for every well-formed format
(`roundMagLocal`, then `roundScalarLocal_of_mag`). -/
theorem roundScalarLocal (f : Fmt) (hf : FmtWF f) : RoundScalarLocal f :=
  roundScalarLocal_of_mag f hf (roundMagLocal f hf)

/-- Ω ≥ 0 for the three formats, by evaluation (a field of
`RoundMagLocal` until session 12; now proved for every format by
`roundOmega_nonneg`, and this kernel check kept as its instance). -/
theorem roundOmega_nonneg_instance :
    0 ≤ roundOmega Fmt.f16 ∧ 0 ≤ roundOmega Fmt.bf16 ∧ 0 ≤ roundOmega Fmt.f32 := by
  decide +kernel

/-- The non-jump condition of a cons, split. -/
theorem roundStable_cons (f : Fmt) (a : Rat) (as : List Rat) (h : roundStable f (a :: as) = true) :
    0 < roundGap f a ∧ roundStable f as = true := by
  have h' : decide (0 < roundGap f a) = true ∧ roundStable f as = true := by
    first
      | exact (Bool.and_eq_true _ _).mp h
      | (simp only [roundStable, Bool.and_eq_true] at h; exact h)
  exact ⟨of_decide_eq_true h'.1, h'.2⟩

/-- δ > 0 off the jumps. -/
theorem roundDelta_pos (f : Fmt) : ∀ x v : List Rat, roundStable f x = true → 0 < roundDelta f x v
  | [], _, _ => rzero_lt_one
  | _ :: _, [], _ => rzero_lt_one
  | a :: as, w :: ws, h => by
    have hs := roundStable_cons f a as h
    show 0 < rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws)
    exact rmin_pos (rdiv_pos hs.1 (abs_add_one_pos w)) (roundDelta_pos f as ws hs.2)

/-- **Entry by entry along the line**: with the scalar statement, every
t with t < δ and −t < δ leaves the rounded tensor (or the overflow)
unchanged: |t·vᵢ| < roundGap xᵢ by `gap_step`, for t and for −t. -/
theorem roundAll_along (f : Fmt) (hs : RoundScalarLocal f) (t : Rat) :
    ∀ x v : List Rat, x.length = v.length → roundStable f x = true →
      t < roundDelta f x v → -t < roundDelta f x v →
      roundAll f (padd x (smul t v)) = roundAll f x
  | [], [], _, _, _, _ => rfl
  | [], _ :: _, hl, _, _, _ => by
    first
      | exact absurd hl.symm (Nat.succ_ne_zero _)
      | (simp at hl)
  | _ :: _, [], hl, _, _, _ => by
    first
      | exact absurd hl (Nat.succ_ne_zero _)
      | (simp at hl)
  | a :: as, w :: ws, hl, hx, ht, hnt => by
    have hst := roundStable_cons f a as hx
    have ht' : t < rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws) := ht
    have hnt' : -t < rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws) := hnt
    have hd1 : rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws) ≤ roundGap f a / (absS w + 1) :=
      rmin_le_left _ _
    have hd2 : rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws) ≤ roundDelta f as ws :=
      rmin_le_right _ _
    have ha : t < roundGap f a / (absS w + 1) := rlt_of_lt_of_le ht' hd1
    have hna : -t < roundGap f a / (absS w + 1) := rlt_of_lt_of_le hnt' hd1
    have hnna : -(-t) < roundGap f a / (absS w + 1) := by
      rw [rneg_neg t]
      exact ha
    have hs1 : t * w < roundGap f a := gap_step hst.1 ha hna
    have hs2 : -t * w < roundGap f a := gap_step hst.1 hna hnna
    have hs2' : -(t * w) < roundGap f a := by
      rw [← Rat.neg_mul t w]
      exact hs2
    have h0 : roundQ f (a + t * w) = roundQ f a := hs a (t * w) hst.1 hs1 hs2'
    have hlen : as.length = ws.length := by
      first
        | exact Nat.succ.inj hl
        | exact Nat.add_right_cancel hl
    have hr : roundAll f (padd as (smul t ws)) = roundAll f as :=
      roundAll_along f hs t as ws hlen hst.2 (rlt_of_lt_of_le ht' hd2) (rlt_of_lt_of_le hnt' hd2)
    show consOpt (roundQ f (a + t * w)) (roundAll f (padd as (smul t ws))) =
      consOpt (roundQ f a) (roundAll f as)
    rw [h0, hr]

/-- **Local constancy of round_T** (issue 27 point 1 for the casts), for
every well-formed format (`FmtWF f`), no hypothesis left (the scalar
statement is `roundScalarLocal`): for x off the jumps (every entry,
`roundStable`) and a tangent v of x's length, δ = `roundDelta f x v` > 0
and fwd (x + t•v) = fwd x for every |t| < δ. -/
theorem round_locally_constant (f : Fmt) (hf : FmtWF f) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable f x = true) :
    0 < roundDelta f x v ∧
      ∀ t : Rat, absS t < roundDelta f x v → roundFwd f (padd x (smul t v)) = roundFwd f x := by
  refine ⟨roundDelta_pos f x v hx, fun t ht => ?_⟩
  have hb := abs_lt_both ht
  show optL (roundAll f (padd x (smul t v))) = optL (roundAll f x)
  rw [roundAll_along f (roundScalarLocal f hf) t x v hl hx hb.1 hb.2]

/-- The same at the primitive, with the JVP: entry by entry,
fwd (x + t•v) = fwd x + t · jvp x v, the JVP being 0 (`round_jvp_nth`). -/
theorem round_f16_locally_constant (a : Attr) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.f16 x = true) :
    0 < roundDelta Fmt.f16 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.f16 x v → ∀ i : Nat,
        nth (Prim.fwd .round_f16 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_f16 a [x]) i + t * nth (Prim.jvp .round_f16 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.f16 fmtWF_f16 x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.f16 (padd x (smul t v)) = roundFwd Fmt.f16 x :=
    (round_locally_constant Fmt.f16 fmtWF_f16 x v hl hx).2 t ht
  have hj : nth (pmul (pmap roundD x) v) i = 0 := round_jvp_nth x v i
  show nth (roundFwd Fmt.f16 (padd x (smul t v))) i =
    nth (roundFwd Fmt.f16 x) i + t * nth (pmul (pmap roundD x) v) i
  rw [he, hj, Rat.mul_zero t, Rat.add_zero]

/-- bfloat16: as `round_f16_locally_constant`. -/
theorem round_bf16_locally_constant (a : Attr) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.bf16 x = true) :
    0 < roundDelta Fmt.bf16 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.bf16 x v → ∀ i : Nat,
        nth (Prim.fwd .round_bf16 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_bf16 a [x]) i + t * nth (Prim.jvp .round_bf16 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.bf16 fmtWF_bf16 x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.bf16 (padd x (smul t v)) = roundFwd Fmt.bf16 x :=
    (round_locally_constant Fmt.bf16 fmtWF_bf16 x v hl hx).2 t ht
  have hj : nth (pmul (pmap roundD x) v) i = 0 := round_jvp_nth x v i
  show nth (roundFwd Fmt.bf16 (padd x (smul t v))) i =
    nth (roundFwd Fmt.bf16 x) i + t * nth (pmul (pmap roundD x) v) i
  rw [he, hj, Rat.mul_zero t, Rat.add_zero]

/-- binary32: as `round_f16_locally_constant`. -/
theorem round_f32_locally_constant (a : Attr) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.f32 x = true) :
    0 < roundDelta Fmt.f32 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.f32 x v → ∀ i : Nat,
        nth (Prim.fwd .round_f32 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_f32 a [x]) i + t * nth (Prim.jvp .round_f32 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.f32 fmtWF_f32 x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.f32 (padd x (smul t v)) = roundFwd Fmt.f32 x :=
    (round_locally_constant Fmt.f32 fmtWF_f32 x v hl hx).2 t ht
  have hj : nth (pmul (pmap roundD x) v) i = 0 := round_jvp_nth x v i
  show nth (roundFwd Fmt.f32 (padd x (smul t v))) i =
    nth (roundFwd Fmt.f32 x) i + t * nth (pmul (pmap roundD x) v) i
  rw [he, hj, Rat.mul_zero t, Rat.add_zero]

/-- `roundGap` evaluated by the kernel (each value re-derived in Go by
`TestLeanRoundGapInstances` from the registry's `RoundRat`): binary16 at
1/3 (1365/4096 rounds from inside, the upper tie 1365.5/4096 is 1/24576
away) and −1/3, at 2048 (a binade's first value: the tie below is 1/2
away, the one above 1), at 0 (half the least subnormal, 2^−25), at the tie
2049 and at Ω = 65520 (0: jump points), past Ω at 65521 (1), at half the
least subnormal 2^−25 (0: a tie between 0 and 2^−24); bfloat16 and
binary32 at 1/3. -/
theorem roundGap_instance :
    roundGap Fmt.f16 (mkRat 1 3) = mkRat 1 24576 ∧
    roundGap Fmt.f16 (mkRat (-1) 3) = mkRat 1 24576 ∧
    roundGap Fmt.f16 (mkRat 2048 1) = mkRat 1 2 ∧
    roundGap Fmt.f16 (mkRat 0 1) = mkRat 1 33554432 ∧
    roundGap Fmt.f16 (mkRat 2049 1) = mkRat 0 1 ∧
    roundGap Fmt.f16 (mkRat 65520 1) = mkRat 0 1 ∧
    roundGap Fmt.f16 (mkRat 65521 1) = mkRat 1 1 ∧
    roundGap Fmt.f16 (mkRat 1 33554432) = mkRat 0 1 ∧
    roundGap Fmt.bf16 (mkRat 1 3) = mkRat 1 3072 ∧
    roundGap Fmt.f32 (mkRat 1 3) = mkRat 1 201326592 := by
  decide +kernel

/-- **At a jump, the convention.** 2049 is a binary16 jump point (the tie
between 2048 and 2050: `roundGap` 0, so `roundStable` fails and the
statement above says nothing there): 2^−20 below it rounds to 2048,
2^−20 above to 2050, and the derivative rule is still round′ := 0
(`roundD`, `round_jvp_nth` for every x), the registry's convention at the
jumps, as sign′(0) := 0. -/
theorem round_jump_instance :
    roundGap Fmt.f16 (mkRat 2049 1) = 0 ∧
    roundQ Fmt.f16 (mkRat 2148532223 1048576) = some (mkRat 2048 1) ∧
    roundQ Fmt.f16 (mkRat 2148532225 1048576) = some (mkRat 2050 1) ∧
    roundStable Fmt.f16 [mkRat 2049 1] = false := by
  decide +kernel

end Tlcheck
