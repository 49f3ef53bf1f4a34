import Tlcheck.Spec
import Tlcheck.Round
import Tlcheck.MaxPool

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

**What is proved here, and what is not.** `round_locally_constant` proves
the tensor statement — 0 < δ and fwd (x + t•v) = fwd x for |t| < δ, for
every x whose entries are all off the jumps — from one scalar hypothesis,
`RoundScalarLocal f`: for every a off the jumps and every s with |s| <
roundGap f a, roundQ f (a + s) = roundQ f a. The radius arithmetic (|t·vᵢ|
< roundGap xᵢ from |t| < δ: MaxPool.lean's `gap_step`, `rmin_le_left`,
`rmin_le_right`), the list induction and the pairing with the JVP are
proved; **`RoundScalarLocal` itself is not proved in Lean**. Its integer
core is (`RoundNat.lean`, session 11): `rneNat` is the nearest natural,
ties to even (`rneNat_near`, `rneNat_near_strict`, and uniqueness
`rneNat_eq_of_near` / `rneNat_const`: a value strictly within 1/2 of m
rounds to m), and `bitLen` counts binary digits (`bitLen_spec`), which
gives `flog2`'s bracket 2^(bN−bD−1) < N/D < 2^(bN−bD+1) over `Nat`
(`flog2_bracket_nat`). What remains is (1) the bridge from those `Nat`
facts to `Rat` (the numerator and denominator of `pow2 k` and of the
scaled value a·2^−k, through `Rat.lt_iff`/`Rat.le_iff`, and the sign split
of the `Int` exponent), and (2) the case analysis over roundQ's branches
(sign, the zero branch, the overflow branch, and the binade edge m = 2^e,
where a + s can fall into the binade below with half the quantum). Until
then the statement is checked exactly in Go
instead (`leanbridge/emit/taylor_test.go`, `TestRoundLocallyConstant`:
the registry's `RoundRat` at x + t·v for |t| up to δ·(1 − 2⁻²⁰) on random
tensors of every binade, and sharpness: just past gapᵢ/|vᵢ| an entry
leaves its interval). `roundGap_instance` and `round_jump_instance` are
kernel evaluations, re-derived in Go by `TestLeanRoundGapInstances`.

No `sorry`, no `grind`, no axioms; `simp` only in `first` fallback arms.
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

/-- The distance from a to the nearest jump point of `roundQ f` (0 at a
jump point). -/
def roundGap (f : Fmt) (a : Rat) : Rat :=
  match roundQ f a with
  | none => absS a - roundOmega f
  | some r =>
    if absS r = 0 then roundHiM f 0 - absS a
    else rmin (absS a - roundLoM f (absS r)) (roundHiM f (absS r) - absS a)

/-- The non-jump condition, entry by entry: every entry strictly inside
its rounding interval (or strictly past Ω). -/
def roundStable (f : Fmt) : List Rat → Bool
  | [] => true
  | a :: as => decide (0 < roundGap f a) && roundStable f as

/-- δ = minᵢ roundGap xᵢ / (|vᵢ| + 1), 1 for the empty tensor. -/
def roundDelta (f : Fmt) : List Rat → List Rat → Rat
  | a :: as, w :: ws => rmin (roundGap f a / (absS w + 1)) (roundDelta f as ws)
  | _, _ => 1

/-- **The scalar statement** (not proved here; see the module header):
roundQ f is constant on the open interval of radius roundGap f a about
every a off the jumps. -/
def RoundScalarLocal (f : Fmt) : Prop :=
  ∀ a s : Rat, 0 < roundGap f a → s < roundGap f a → -s < roundGap f a →
    roundQ f (a + s) = roundQ f a

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

/-- **Local constancy of round_T** (issue 27 point 1 for the casts), from
the scalar statement: for x off the jumps (every entry, `roundStable`)
and a tangent v of x's length, δ = `roundDelta f x v` > 0 and
fwd (x + t•v) = fwd x for every |t| < δ. -/
theorem round_locally_constant (f : Fmt) (hs : RoundScalarLocal f) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable f x = true) :
    0 < roundDelta f x v ∧
      ∀ t : Rat, absS t < roundDelta f x v → roundFwd f (padd x (smul t v)) = roundFwd f x := by
  refine ⟨roundDelta_pos f x v hx, fun t ht => ?_⟩
  have hb := abs_lt_both ht
  show optL (roundAll f (padd x (smul t v))) = optL (roundAll f x)
  rw [roundAll_along f hs t x v hl hx hb.1 hb.2]

/-- The same at the primitive, with the JVP: entry by entry,
fwd (x + t•v) = fwd x + t · jvp x v, the JVP being 0 (`round_jvp_nth`). -/
theorem round_f16_locally_constant (a : Attr) (hs : RoundScalarLocal Fmt.f16) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.f16 x = true) :
    0 < roundDelta Fmt.f16 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.f16 x v → ∀ i : Nat,
        nth (Prim.fwd .round_f16 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_f16 a [x]) i + t * nth (Prim.jvp .round_f16 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.f16 hs x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.f16 (padd x (smul t v)) = roundFwd Fmt.f16 x :=
    (round_locally_constant Fmt.f16 hs x v hl hx).2 t ht
  have hj : nth (pmul (pmap roundD x) v) i = 0 := round_jvp_nth x v i
  show nth (roundFwd Fmt.f16 (padd x (smul t v))) i =
    nth (roundFwd Fmt.f16 x) i + t * nth (pmul (pmap roundD x) v) i
  rw [he, hj, Rat.mul_zero t, Rat.add_zero]

/-- bfloat16: as `round_f16_locally_constant`. -/
theorem round_bf16_locally_constant (a : Attr) (hs : RoundScalarLocal Fmt.bf16) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.bf16 x = true) :
    0 < roundDelta Fmt.bf16 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.bf16 x v → ∀ i : Nat,
        nth (Prim.fwd .round_bf16 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_bf16 a [x]) i + t * nth (Prim.jvp .round_bf16 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.bf16 hs x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.bf16 (padd x (smul t v)) = roundFwd Fmt.bf16 x :=
    (round_locally_constant Fmt.bf16 hs x v hl hx).2 t ht
  have hj : nth (pmul (pmap roundD x) v) i = 0 := round_jvp_nth x v i
  show nth (roundFwd Fmt.bf16 (padd x (smul t v))) i =
    nth (roundFwd Fmt.bf16 x) i + t * nth (pmul (pmap roundD x) v) i
  rw [he, hj, Rat.mul_zero t, Rat.add_zero]

/-- binary32: as `round_f16_locally_constant`. -/
theorem round_f32_locally_constant (a : Attr) (hs : RoundScalarLocal Fmt.f32) (x v : List Rat)
    (hl : x.length = v.length) (hx : roundStable Fmt.f32 x = true) :
    0 < roundDelta Fmt.f32 x v ∧
      ∀ t : Rat, absS t < roundDelta Fmt.f32 x v → ∀ i : Nat,
        nth (Prim.fwd .round_f32 a [padd x (smul t v)]) i =
          nth (Prim.fwd .round_f32 a [x]) i + t * nth (Prim.jvp .round_f32 a [x] [v]) i := by
  refine ⟨(round_locally_constant Fmt.f32 hs x v hl hx).1, fun t ht i => ?_⟩
  have he : roundFwd Fmt.f32 (padd x (smul t v)) = roundFwd Fmt.f32 x :=
    (round_locally_constant Fmt.f32 hs x v hl hx).2 t ht
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
