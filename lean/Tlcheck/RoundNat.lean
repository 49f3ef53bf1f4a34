import Tlcheck.Spec

/-!
# The integer core of the casts: `rneNat` and `bitLen` characterised

`RoundLocal.lean` proves the casts' local constancy through the scalar
statement `RoundScalarLocal f` (roundQ f constant within roundGap f a of
every a off the jumps). This module proves the two natural-number facts
that statement rests on, over `Nat` (every step a rewrite with a named
core lemma, then `omega` on a linear goal whose products are atoms), and
reduces the two `Rat` lemmas built on them to plain comparisons:

* **`rneNat` is the nearest natural number, ties to even.** For d > 0,
  with m = `rneNat n d`:
  - `rneNat_near`: |n/d − m| ≤ 1/2, stated multiplied out by 2d:
    2·(d·m) ≤ 2n + d and 2n ≤ 2·(d·m) + d;
  - `rneNat_near_strict`: off a tie (2·(n mod d) ≠ d) the same strictly,
    |n/d − m| < 1/2;
  - `rneNat_eq_of_near`: **uniqueness** — any natural m with
    |n/d − m| < 1/2 (strictly) *is* `rneNat n d`. This is the constancy
    step: two numerators/denominators n/d and n'/d' both strictly within
    1/2 of the same m round to the same m (`rneNat_const`), which is what
    keeps the significand fixed while a moves inside one rounding
    interval of one binade;
  - `rneNat_tie_even`: at a tie the result is even.
* **`bitLen` is the number of binary digits.** `bitLen_spec`: for n > 0,
  2^(bitLen n − 1) ≤ n < 2^(bitLen n) (by induction on the fuel of
  `bitLenF`, `bitLenF_spec`); `bitLen_zero`: bitLen 0 = 0.
* **The `Rat` statements, reduced** (`flog2_cases`,
  `flog2_spec_of_bracket`, `roundMag_of_near_nat`; below).
* **`flog2`'s bracket, over `Nat`.** `flog2_bracket_nat`: for N, D > 0
  with bN = bitLen N, bD = bitLen D,
  2^(bN−1)·D < N·2^bD and N·2^(bD−1) < 2^bN·D — that is,
  2^(bN−bD−1) < N/D < 2^(bN−bD+1), the bracket from which `flog2`
  (a = N/D in lowest terms) picks e = bN − bD or e − 1 with one
  comparison against 2^e, so that 2^e ≤ a < 2^(e+1).

**Used by `RoundLocal.lean` (session 12, round32).** The `Rat` bridge now
exists there: `mkRat_le_iff`/`mkRat_lt_iff` (two `mkRat`s compare as their
cross products), `pow2_eq` (pow2 k as one `mkRat`), `pow2_add`,
`pow2_mono`, `pow2_sub_nat`. With it `flog2_spec`
(2^flog2(a) ≤ a < 2^(flog2(a)+1) for a > 0) is proved there from
`flog2_bracket_nat` and `flog2_spec_of_bracket` below, and
`roundMag_under` (below half the least subnormal roundMag is 0) from
`roundMag_of_near_nat` at n = 0; roundQ's case analysis (the sign, the
zero branch, the overflow branch, the interior) is proved there too, so
that `round_locally_constant` assumed only `RoundMagLocal f`. Since
session 13 (lean34) that is proved too (`roundMagLocal`), so the theorem
has no hypothesis left: the overflow fact `roundMag_over` uses
`rneNat_near`'s lower bound (`rneNat_ge`), the interior fact
`roundMag_inner_of` (the binade edge m = 2^e included, `roundLoM`'s first
case) its upper bound (`rneNat_le`) and `roundMag_eq_of_near`, this
module's `roundMag_of_near_nat` (the `Rat` form of `rneNat_eq_of_near`).

`flog2_spec_of_bracket` proves `flog2_spec` from pow2 (e₀ − 1) ≤ a <
pow2 (e₀ + 1) (e₀ = bitLen N − bitLen D), through `flog2_cases`;
`roundMag_of_near_nat` proves roundMag f a = n·2^k from the `Nat` form of
|a·2^−k − n| < 1/2 on the numerator and denominator of a·2^−k. The Go
mirror checks `flog2_spec` on the transcription (`TestRoundNatLemmas`)
and the whole scalar statement exactly on random tensors
(`TestRoundLocallyConstant`); the lemmas here are its integer core,
proved.

Core only, no `sorry`, no axioms, no `simp`, no `grind`.
-/

namespace Tlcheck
set_option autoImplicit false

/-! ## `rneNat`: the nearest natural number, ties to even -/

/-- `rneNat`'s three branches, each with the value it returns: above the
half (q + 1), at the half (q or q + 1, the even one), below the half (q),
where q = n / d and the half is 2·(n mod d) against d. -/
theorem rneNat_cases (n d : Nat) :
    (d < 2 * (n % d) ∧ rneNat n d = n / d + 1) ∨
    (2 * (n % d) = d ∧ (rneNat n d = n / d ∨ rneNat n d = n / d + 1)) ∨
    (¬ d < 2 * (n % d) ∧ ¬ 2 * (n % d) = d ∧ rneNat n d = n / d) := by
  by_cases h1 : d < 2 * (n % d)
  · have e : rneNat n d = n / d + 1 := by
      first
        | exact if_pos h1
        | (unfold rneNat; rw [if_pos h1])
    exact Or.inl ⟨h1, e⟩
  · by_cases h2 : 2 * (n % d) = d
    · by_cases h3 : n / d % 2 = 1
      · have e : rneNat n d = n / d + 1 := by
          first
            | exact (if_neg h1).trans ((if_pos h2).trans (if_pos h3))
            | (unfold rneNat; rw [if_neg h1, if_pos h2, if_pos h3])
        exact Or.inr (Or.inl ⟨h2, Or.inr e⟩)
      · have e : rneNat n d = n / d := by
          first
            | exact (if_neg h1).trans ((if_pos h2).trans (if_neg h3))
            | (unfold rneNat; rw [if_neg h1, if_pos h2, if_neg h3])
        exact Or.inr (Or.inl ⟨h2, Or.inl e⟩)
    · have e : rneNat n d = n / d := by
        first
          | exact (if_neg h1).trans (if_neg h2)
          | (unfold rneNat; rw [if_neg h1, if_neg h2])
      exact Or.inr (Or.inr ⟨h1, h2, e⟩)

/-- **|n/d − rneNat n d| ≤ 1/2** (d > 0), multiplied out by 2d. With
q = n / d, r = n mod d (d·q + r = n, r < d): the result is q + 1 only when
2r ≥ d, and q only when 2r ≤ d. -/
theorem rneNat_near (n d : Nat) (hd : 0 < d) :
    2 * (d * rneNat n d) ≤ 2 * n + d ∧ 2 * n ≤ 2 * (d * rneNat n d) + d := by
  have hdm : d * (n / d) + n % d = n := Nat.div_add_mod n d
  have hr : n % d < d := Nat.mod_lt n hd
  have hs : d * (n / d + 1) = d * (n / d) + d := Nat.mul_add_one d (n / d)
  rcases rneNat_cases n d with ⟨h1, e⟩ | ⟨h2, e | e⟩ | ⟨h1, h2, e⟩
  · rw [e]
    omega
  · rw [e]
    omega
  · rw [e]
    omega
  · rw [e]
    omega

/-- **Off a tie, |n/d − rneNat n d| < 1/2** (d > 0, 2·(n mod d) ≠ d). -/
theorem rneNat_near_strict (n d : Nat) (hd : 0 < d) (ht : 2 * (n % d) ≠ d) :
    2 * (d * rneNat n d) < 2 * n + d ∧ 2 * n < 2 * (d * rneNat n d) + d := by
  have hdm : d * (n / d) + n % d = n := Nat.div_add_mod n d
  have hr : n % d < d := Nat.mod_lt n hd
  have hs : d * (n / d + 1) = d * (n / d) + d := Nat.mul_add_one d (n / d)
  rcases rneNat_cases n d with ⟨h1, e⟩ | ⟨h2, _⟩ | ⟨h1, h2, e⟩
  · rw [e]
    omega
  · exact absurd h2 ht
  · rw [e]
    omega

/-- At a tie (2·(n mod d) = d) `rneNat` returns the even neighbour. -/
theorem rneNat_tie_even (n d : Nat) (ht : 2 * (n % d) = d) : rneNat n d % 2 = 0 := by
  have hn : ¬ d < 2 * (n % d) := by omega
  by_cases h3 : n / d % 2 = 1
  · have e : rneNat n d = n / d + 1 := by
      first
        | exact (if_neg hn).trans ((if_pos ht).trans (if_pos h3))
        | (unfold rneNat; rw [if_neg hn, if_pos ht, if_pos h3])
    rw [e]
    omega
  · have e : rneNat n d = n / d := by
      first
        | exact (if_neg hn).trans ((if_pos ht).trans (if_neg h3))
        | (unfold rneNat; rw [if_neg hn, if_pos ht, if_neg h3])
    rw [e]
    omega

/-- Two naturals m, q with d·m < d·q + d and d·q < d·m + d are equal:
were m < q, then d·(m + 1) ≤ d·q, i.e. d·m + d ≤ d·q (and symmetrically). -/
theorem nat_eq_of_mul_near (d m q : Nat) (h1 : d * m < d * q + d) (h2 : d * q < d * m + d) :
    m = q := by
  rcases Nat.lt_trichotomy m q with h | h | h
  · have h3 : d * (m + 1) ≤ d * q := Nat.mul_le_mul_left d (show m + 1 ≤ q by omega)
    have hs : d * (m + 1) = d * m + d := Nat.mul_add_one d m
    omega
  · exact h
  · have h3 : d * (q + 1) ≤ d * m := Nat.mul_le_mul_left d (show q + 1 ≤ m by omega)
    have hs : d * (q + 1) = d * q + d := Nat.mul_add_one d q
    omega

/-- **Uniqueness of the nearest natural.** If |n/d − m| < 1/2 (d > 0,
multiplied out by 2d) then rneNat n d = m: with q = rneNat n d,
|n/d − q| ≤ 1/2 (`rneNat_near`), so d·q and d·m are less than d apart. -/
theorem rneNat_eq_of_near (n d m : Nat) (hd : 0 < d)
    (h1 : 2 * (d * m) < 2 * n + d) (h2 : 2 * n < 2 * (d * m) + d) : rneNat n d = m := by
  have hq := rneNat_near n d hd
  exact nat_eq_of_mul_near d (rneNat n d) m (by omega) (by omega)

/-- **Constancy of the significand**: two values n/d and n'/d' both
strictly within 1/2 of the same natural m round to the same natural. -/
theorem rneNat_const (n d n' d' m : Nat) (hd : 0 < d) (hd' : 0 < d')
    (h1 : 2 * (d * m) < 2 * n + d) (h2 : 2 * n < 2 * (d * m) + d)
    (h1' : 2 * (d' * m) < 2 * n' + d') (h2' : 2 * n' < 2 * (d' * m) + d') :
    rneNat n' d' = rneNat n d := by
  rw [rneNat_eq_of_near n d m hd h1 h2, rneNat_eq_of_near n' d' m hd' h1' h2']

/-! ## `bitLen`: the number of binary digits -/

/-- bitLenF f 0 = 0 for every fuel. -/
theorem bitLenF_zero : ∀ f : Nat, bitLenF f 0 = 0
  | 0 => rfl
  | f + 1 => by
    first
      | exact if_pos rfl
      | rfl
      | (show (if (0 : Nat) = 0 then 0 else bitLenF f (0 / 2) + 1) = 0; exact if_pos rfl)

/-- bitLen 0 = 0. -/
theorem bitLen_zero : bitLen 0 = 0 := bitLenF_zero 0

/-- **The fuel suffices**: for 0 < n ≤ f, 2^(bitLenF f n − 1) ≤ n <
2^(bitLenF f n). One halving: bitLenF (f+1) n = bitLenF f (n/2) + 1; for
n = 1 that is 1 (2^0 ≤ 1 < 2^1); otherwise the bracket of n/2 doubles
(2^b ≤ 2·(n/2) ≤ n and n ≤ 2·(n/2) + 1 < 2·2^b = 2^(b+1)). -/
theorem bitLenF_spec : ∀ (f n : Nat), n ≤ f → 0 < n →
    2 ^ (bitLenF f n - 1) ≤ n ∧ n < 2 ^ bitLenF f n
  | 0, n, hf, hn => False.elim (by omega)
  | f + 1, n, hf, hn => by
    have hne : ¬ n = 0 := by omega
    have e : bitLenF (f + 1) n = bitLenF f (n / 2) + 1 := by
      first
        | exact if_neg hne
        | (show (if n = 0 then 0 else bitLenF f (n / 2) + 1) = bitLenF f (n / 2) + 1; exact if_neg hne)
    have hsub : bitLenF f (n / 2) + 1 - 1 = bitLenF f (n / 2) := by
      first
        | exact Nat.add_sub_cancel _ _
        | omega
    rw [e, hsub]
    by_cases h2 : n / 2 = 0
    · rw [h2, bitLenF_zero f]
      omega
    · have ih := bitLenF_spec f (n / 2) (by omega) (by omega)
      by_cases hb : bitLenF f (n / 2) = 0
      · rw [hb] at ih
        omega
      · have hp : 2 ^ (bitLenF f (n / 2) - 1 + 1) = 2 ^ (bitLenF f (n / 2) - 1) * 2 :=
          Nat.pow_add_one 2 (bitLenF f (n / 2) - 1)
        have hb1 : bitLenF f (n / 2) - 1 + 1 = bitLenF f (n / 2) := by omega
        rw [hb1] at hp
        have hq : 2 ^ (bitLenF f (n / 2) + 1) = 2 ^ bitLenF f (n / 2) * 2 :=
          Nat.pow_add_one 2 (bitLenF f (n / 2))
        omega

/-- **2^(bitLen n − 1) ≤ n < 2^(bitLen n)** for n > 0. -/
theorem bitLen_spec (n : Nat) (hn : 0 < n) : 2 ^ (bitLen n - 1) ≤ n ∧ n < 2 ^ bitLen n :=
  bitLenF_spec n n (Nat.le_refl n) hn

/-! ## `flog2`'s bracket over `Nat` -/

/-- **2^(bN−bD−1) < N/D < 2^(bN−bD+1)**, multiplied out: for N, D > 0
with bN = bitLen N and bD = bitLen D,
2^(bN−1)·D < 2^(bN−1)·2^bD ≤ N·2^bD and
N·2^(bD−1) < 2^bN·2^(bD−1) ≤ 2^bN·D. -/
theorem flog2_bracket_nat (N D : Nat) (hN : 0 < N) (hD : 0 < D) :
    2 ^ (bitLen N - 1) * D < N * 2 ^ bitLen D ∧
      N * 2 ^ (bitLen D - 1) < 2 ^ bitLen N * D := by
  have sN := bitLen_spec N hN
  have sD := bitLen_spec D hD
  refine ⟨?_, ?_⟩
  · have a1 : 2 ^ (bitLen N - 1) * D < 2 ^ (bitLen N - 1) * 2 ^ bitLen D :=
      Nat.mul_lt_mul_of_pos_left sD.2 (Nat.two_pow_pos (bitLen N - 1))
    have a2 : 2 ^ (bitLen N - 1) * 2 ^ bitLen D ≤ N * 2 ^ bitLen D :=
      Nat.mul_le_mul_right (2 ^ bitLen D) sN.1
    exact Nat.lt_of_lt_of_le a1 a2
  · have a1 : N * 2 ^ (bitLen D - 1) < 2 ^ bitLen N * 2 ^ (bitLen D - 1) :=
      Nat.mul_lt_mul_of_pos_right sN.2 (Nat.two_pow_pos (bitLen D - 1))
    have a2 : 2 ^ bitLen N * 2 ^ (bitLen D - 1) ≤ 2 ^ bitLen N * D :=
      Nat.mul_le_mul_left (2 ^ bitLen N) sD.1
    exact Nat.lt_of_lt_of_le a1 a2

/-! ## The `Rat` statements, reduced to comparisons -/

/-- `flog2`'s two branches: with e₀ = bitLen N − bitLen D (a = N/D in
lowest terms), flog2 a = e₀ − 1 when a < 2^e₀, and e₀ otherwise. -/
theorem flog2_cases (a : Rat) :
    (a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int)) ∧
      flog2 a = (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1) ∨
    (¬ a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int)) ∧
      flog2 a = (bitLen a.num.toNat : Int) - (bitLen a.den : Int)) := by
  by_cases h : a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int))
  · have e : flog2 a = (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1 := by
      first
        | exact if_pos h
        | (unfold flog2; rw [if_pos h])
    exact Or.inl ⟨h, e⟩
  · have e : flog2 a = (bitLen a.num.toNat : Int) - (bitLen a.den : Int) := by
      first
        | exact if_neg h
        | (unfold flog2; rw [if_neg h])
    exact Or.inr ⟨h, e⟩

/-- **`flog2_spec` from the bracket**: if 2^(e₀−1) ≤ a < 2^(e₀+1)
(e₀ = bitLen N − bitLen D), then 2^flog2(a) ≤ a < 2^(flog2(a)+1) — in
the first branch a < 2^e₀ = 2^((e₀ − 1) + 1), in the second 2^e₀ ≤ a by
`Rat.not_lt`. The two hypotheses are `flog2_bracket_nat` read in `Rat`
(not yet proved: the `num`/`den` of `pow2`). -/
theorem flog2_spec_of_bracket (a : Rat)
    (hlo : pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1) ≤ a)
    (hhi : a < pow2 ((bitLen a.num.toNat : Int) - (bitLen a.den : Int) + 1)) :
    pow2 (flog2 a) ≤ a ∧ a < pow2 (flog2 a + 1) := by
  rcases flog2_cases a with ⟨h, e⟩ | ⟨h, e⟩
  · have hk : (bitLen a.num.toNat : Int) - (bitLen a.den : Int) - 1 + 1 =
        (bitLen a.num.toNat : Int) - (bitLen a.den : Int) := by omega
    rw [e, hk]
    exact ⟨hlo, h⟩
  · rw [e]
    exact ⟨Rat.not_lt.mp h, hhi⟩

/-- **`roundMag` from the nearest natural**: with s = a·2^−k (k =
`roundK f a`) = N/D in lowest terms, if the natural n is strictly within
1/2 of N/D (multiplied out by 2D), then roundMag f a = n·2^k — the
significand is n whatever else a is (`rneNat_eq_of_near`). -/
theorem roundMag_of_near_nat (f : Fmt) (a : Rat) (n : Nat)
    (h1 : 2 * ((a * pow2 (-(roundK f a))).den * n) <
      2 * (a * pow2 (-(roundK f a))).num.toNat + (a * pow2 (-(roundK f a))).den)
    (h2 : 2 * (a * pow2 (-(roundK f a))).num.toNat <
      2 * ((a * pow2 (-(roundK f a))).den * n) + (a * pow2 (-(roundK f a))).den) :
    roundMag f a = mkRat (n : Int) 1 * pow2 (roundK f a) := by
  have hd : 0 < (a * pow2 (-(roundK f a))).den := Nat.pos_of_ne_zero (a * pow2 (-(roundK f a))).den_nz
  have hr : rneNat (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den = n :=
    rneNat_eq_of_near (a * pow2 (-(roundK f a))).num.toNat (a * pow2 (-(roundK f a))).den n hd h1 h2
  first
    | (unfold roundMag; rw [hr])
    | (rw [roundMag, hr])

/-- Kernel instances (`decide +kernel`), each re-derived by hand: rneNat
at 7/2 (a tie, to the even 4), 5/2 (a tie, to 2), 7/3 (2.33 → 2), 8/3
(2.67 → 3); bitLen of 1, 2, 1024, 1025 and 2047 (1, 2, 11, 11, 11). -/
theorem roundNat_instance :
    rneNat 7 2 = 4 ∧ rneNat 5 2 = 2 ∧ rneNat 7 3 = 2 ∧ rneNat 8 3 = 3 ∧
    bitLen 1 = 1 ∧ bitLen 2 = 2 ∧ bitLen 1024 = 11 ∧ bitLen 1025 = 11 ∧ bitLen 2047 = 11 := by
  decide +kernel

end Tlcheck
