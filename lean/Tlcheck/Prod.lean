import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Deriv
import Tlcheck.Window

/-!
# reduce_prod

`Tlcheck.Spec` gives reduce_prod as the registry computes it
(`spec/ops_extra_reduce.go`): along the axis, each output is the product
of its lane of K elements in the [A, K, B] view (`Attr.rpFwd`), and the
JVP at x is the sparse linear map whose entries are the partials
Π_{i≠j} lane_i, written as the prefix product times the suffix product
(`Attr.rpTaps`; the registry's P_j·S_{j+1}, exact when lane elements are
0, never y / x_j). The VJP is its transpose (`tapplyT`), so the law is
`tapply_adjoint` at these taps (`reduce_prod_adjoint`), and the VJP is
linear in δ and maps zero to zeros (`reduce_prod_vjp_linear`, from
`tapplyT_linear`).

The partials are the derivative of the forward, exactly, along any
direction of the whole lane (`prodL_taylor`): with `prodD` the product
rule (Σⱼ vⱼ·Π_{i≠j} xᵢ, by recursion on the lane) and `prodR` the
remainder, both explicit and structurally recursive,

    Π (x + t·v) = Π x + t · prodD x v + t² · prodR t x v,

for all lanes x, v of one length and every t — the lane's product is a
polynomial in t of degree K, and `prodR` is its part of degree ≥ 2
divided by t². `prodW_dot_one` says the registry's partials (the prefix
product times the suffix product, as `Attr.rpTaps` weights them) applied
to v are exactly `prodD x v`, so the JVP the taps compute on each output
is the derivative of that output's product. `prodL_cons_along` is the
special case of a direction along the first element only. At the primitive,
`reduce_prod_taylor` says every output of `Prim.fwd .reduce_prod` at
x + t•v is that identity on its lanes (`rpLane_along`: the lane of
`along t x v` is `along t` of the lanes). And `reduce_prod_jvp_taps` says
the JVP's `tapply` over `Attr.rpTaps` sums each output's taps to `prodD` of
its lanes (output o of `tapply` is the sum of the taps naming o,
`nth_tapply`; of the outputs' tap groups only o's contributes,
`total_indicator`; that group is `prodW_dot_one`'s sum). The Go
mirror `leanbridge/emit/taylor_test.go` (`TestReduceProdLaneTaylor`)
checks the two identities over `Rat` on random lanes (zeros included),
that `prodD` of each output's lane is the registry's own JVP of
reduce_prod, and that planted wrong rules fail; `TestReduceProdEmitted`
(`idxops_test.go`) re-evaluates every emitted case's claim from the
module text and compares the forward with the registry's.
-/

namespace Tlcheck
set_option autoImplicit false

/-- reduce_prod: ⟨jvp x dx, δ⟩ = ⟨dx, vjp x δ⟩ for every x (the taps at x). -/
theorem reduce_prod_adjoint (a : Attr) (x dx δ : List Rat) (h : dx.length = size a.shape)
    (hδ : δ.length = a.dimA * a.dimB) :
    dot (Prim.jvp .reduce_prod a [x] [dx]) δ = dotAll [dx] (Prim.vjp .reduce_prod a [x] δ) := by
  show dot (tapply (a.dimA * a.dimB) (a.rpTaps x) dx) δ = dot dx (tapplyT (size a.shape) (a.rpTaps x) δ) + 0
  rw [tapply_adjoint (a.dimA * a.dimB) (size a.shape) (a.rpTaps x) dx δ h hδ, Rat.add_zero]

/-- reduce_prod: its VJP is linear in δ (cotangents of one length) and maps zero to zeros. -/
theorem reduce_prod_vjp_linear (a : Attr) (k : Rat) (x δ₁ δ₂ : List Rat) (h : δ₁.length = δ₂.length) :
    Prim.vjp .reduce_prod a [x] (padd δ₁ δ₂) =
      paddAll (Prim.vjp .reduce_prod a [x] δ₁) (Prim.vjp .reduce_prod a [x] δ₂) ∧
    Prim.vjp .reduce_prod a [x] (smul k δ₁) = smulAll k (Prim.vjp .reduce_prod a [x] δ₁) ∧
    Prim.vjp .reduce_prod a [x] (zeros δ₁) = zerosAll (Prim.vjp .reduce_prod a [x] δ₁) := by
  refine ⟨?_, ?_, ?_⟩
  · show [tapplyT (size a.shape) (a.rpTaps x) (padd δ₁ δ₂)] =
      [padd (tapplyT (size a.shape) (a.rpTaps x) δ₁) (tapplyT (size a.shape) (a.rpTaps x) δ₂)]
    rw [tapplyT_padd (size a.shape) δ₁ δ₂ h (a.rpTaps x)]
  · show [tapplyT (size a.shape) (a.rpTaps x) (smul k δ₁)] = [smul k (tapplyT (size a.shape) (a.rpTaps x) δ₁)]
    rw [tapplyT_smul (size a.shape) k δ₁ (a.rpTaps x)]
  · show [tapplyT (size a.shape) (a.rpTaps x) (zeros δ₁)] = [zeros (tapplyT (size a.shape) (a.rpTaps x) δ₁)]
    rw [tapplyT_zeros (size a.shape) δ₁ (a.rpTaps x),
      zeros_eq_zerosN (tapplyT (size a.shape) (a.rpTaps x) δ₁), length_tapplyT]

/-- The product rule at a lane's head: Π ((x + t·v) :: ys) = Π (x :: ys)
+ t · (v · Π ys) — the first entry's partial (Π of the rest, the tap's
prefix 1 times its suffix) is the derivative along that element exactly,
the product being linear in each element. -/
theorem prodL_cons_along (x v t : Rat) (ys : List Rat) :
    prodL ((x + t * v) :: ys) = prodL (x :: ys) + t * (v * prodL ys) := by
  show (x + t * v) * prodL ys = x * prodL ys + t * (v * prodL ys)
  rw [Rat.add_mul, Rat.mul_assoc]

/-- An instance against the registry's rule by hand: the product of
[[1, 2, 3], [4, 0, 5]] along axis 1 is [6, 0]. -/
theorem reduce_prod_instance :
    Prim.fwd .reduce_prod { c := 0, lo := 0, hi := 0, axis := 1, shape := [2, 3], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 3]] } [[1, 2, 3, 4, 0, 5]] = [6, 0] := by
  decide +kernel

/-- Its partials, by hand: for the lane [4, 0, 5] they are 0·5 = 0,
4·5 = 20 and 4·0 = 0 (exact with the zero), and for [1, 2, 3] they are
6, 3, 2. -/
theorem reduce_prod_taps_instance :
    (Attr.rpTaps { c := 0, lo := 0, hi := 0, axis := 1, shape := [2, 3], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 3]] } [1, 2, 3, 4, 0, 5]).map Tap.w =
      [6, 3, 2, 0, 20, 0] := by
  decide +kernel

/-! ## The exact Taylor identity of a lane's product -/

/-- The product rule along v: Σⱼ vⱼ · Π_{i≠j} xᵢ, by recursion on the
lane (the head's partial is the product of the tail; the tail's partials
are scaled by the head). Lanes of unequal length are truncated. -/
def prodD : List Rat → List Rat → Rat
  | x :: xs, v :: vs => v * prodL xs + x * prodD xs vs
  | _, _ => 0

/-- The remainder of the lane's product along x + t·v: its terms of
degree ≥ 2 in t, divided by t² (`prodL_taylor`). -/
def prodR (t : Rat) : List Rat → List Rat → Rat
  | x :: xs, v :: vs => v * prodD xs vs + (x + t * v) * prodR t xs vs
  | _, _ => 0

/-- The scalar step: (x + t·v)·(P + t·J + t²·R) = x·P + t·(v·P + x·J) +
t²·(v·J + (x + t·v)·R), an explicit rewrite chain (both sides brought to
xP + t(vP) + t(xJ) + t²(vJ) + t²((x + tv)R), then reassociated). -/
theorem prod_step (x v t P J R : Rat) :
    (x + t * v) * (P + t * J + t * t * R) =
      x * P + t * (v * P + x * J) + t * t * (v * J + (x + t * v) * R) := by
  first
    | (rw [Rat.mul_add (x + t * v) (P + t * J) (t * t * R), Rat.mul_add (x + t * v) P (t * J),
          Rat.add_mul x (t * v) P, Rat.add_mul x (t * v) (t * J), Rat.mul_assoc t v P,
          rmul_left_comm x t J, Rat.mul_assoc t v (t * J), rmul_left_comm v t J,
          ← Rat.mul_assoc t t (v * J), rmul_left_comm (x + t * v) (t * t) R,
          Rat.mul_add t (v * P) (x * J), Rat.mul_add (t * t) (v * J) ((x + t * v) * R),
          ← Rat.add_assoc (x * P + t * (v * P)) (t * (x * J)) (t * t * (v * J)),
          Rat.add_assoc (x * P) (t * (v * P)) (t * (x * J)),
          Rat.add_assoc (x * P + (t * (v * P) + t * (x * J))) (t * t * (v * J)) (t * t * ((x + t * v) * R))]
       done)
    | grind

/-- reduce_prod's exact Taylor identity on one lane: for lanes x, v of
one length and every t, Π (x + t·v) = Π x + t · prodD x v + t² · prodR t x v.
A wrong product rule makes it false: with the tail's partials left
unscaled (`v * prodL xs + prodD xs vs`), x = [2, 3], v = [0, 1], t = 1
reads 2·4 = 6 + 1·1 + 0, i.e. 8 = 7. -/
theorem prodL_taylor (t : Rat) : ∀ xs vs : List Rat, xs.length = vs.length →
    prodL (along t xs vs) = prodL xs + t * prodD xs vs + t * t * prodR t xs vs
  | [], [], _ => by
    show (1 : Rat) = 1 + t * 0 + t * t * 0
    rw [Rat.mul_zero, Rat.mul_zero, Rat.add_zero, Rat.add_zero]
  | [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | x :: xs, v :: vs, h => by
    show (x + t * v) * prodL (along t xs vs) =
      x * prodL xs + t * (v * prodL xs + x * prodD xs vs) + t * t * (v * prodD xs vs + (x + t * v) * prodR t xs vs)
    rw [prodL_taylor t xs vs (Nat.succ.inj h)]
    exact prod_step x v t (prodL xs) (prodD xs vs) (prodR t xs vs)

/-- Mapping two pointwise equal functions gives one list. -/
theorem map_ext (f g : Nat → Rat) (hfg : ∀ j, f j = g j) : ∀ l : List Nat, l.map f = l.map g
  | [] => rfl
  | j :: js => by
    show f j :: js.map f = g j :: js.map g
    rw [hfg j, map_ext f g hfg js]

/-- Shifting the start of `uptoFrom` by one is mapping through j + 1. -/
theorem uptoFrom_succ_map (f : Nat → Rat) : ∀ n k : Nat,
    (uptoFrom (k + 1) n).map f = (uptoFrom k n).map (fun j => f (j + 1))
  | 0, _ => rfl
  | n + 1, k => by
    show f (k + 1) :: (uptoFrom (k + 1 + 1) n).map f = f (k + 1) :: (uptoFrom (k + 1) n).map (fun j => f (j + 1))
    rw [uptoFrom_succ_map f n (k + 1)]

/-- The partials as `Attr.rpTaps` weights them (prefix product times
suffix product), scaled by c, applied to v: c · prodD x v. -/
theorem prodW_dot : ∀ (c : Rat) (xs vs : List Rat), xs.length = vs.length →
    dot ((upto xs.length).map (fun j => c * prodL (xs.take j) * prodL (xs.drop (j + 1)))) vs = c * prodD xs vs
  | c, [], [], _ => by
    show (0 : Rat) = c * 0
    rw [Rat.mul_zero]
  | _, [], _ :: _, h => absurd h (nil_ne_cons_length _ _)
  | _, _ :: _, [], h => absurd h.symm (nil_ne_cons_length _ _)
  | c, x :: xs, v :: vs, h => by
    show c * 1 * prodL xs * v +
        dot ((uptoFrom (0 + 1) xs.length).map
          (fun j => c * prodL ((x :: xs).take j) * prodL ((x :: xs).drop (j + 1)))) vs =
      c * (v * prodL xs + x * prodD xs vs)
    rw [uptoFrom_succ_map (fun j => c * prodL ((x :: xs).take j) * prodL ((x :: xs).drop (j + 1))) xs.length 0]
    show c * 1 * prodL xs * v +
        dot ((upto xs.length).map (fun j => c * (x * prodL (xs.take j)) * prodL (xs.drop (j + 1)))) vs =
      c * (v * prodL xs + x * prodD xs vs)
    rw [map_ext (fun j => c * (x * prodL (xs.take j)) * prodL (xs.drop (j + 1)))
        (fun j => c * x * prodL (xs.take j) * prodL (xs.drop (j + 1)))
        (fun j => by
          show c * (x * prodL (xs.take j)) * prodL (xs.drop (j + 1)) =
            c * x * prodL (xs.take j) * prodL (xs.drop (j + 1))
          rw [Rat.mul_assoc c x (prodL (xs.take j))])
        (upto xs.length),
      prodW_dot (c * x) xs vs (Nat.succ.inj h),
      Rat.mul_one c, Rat.mul_add c (v * prodL xs) (x * prodD xs vs), Rat.mul_assoc c x (prodD xs vs),
      Rat.mul_assoc c (prodL xs) v, Rat.mul_comm (prodL xs) v]

/-- The registry's partials of a lane (prefix times suffix product, the
weights of `Attr.rpTaps` on that lane) applied to v are the product rule
`prodD`: so each output of reduce_prod's JVP is the t-coefficient of
`prodL_taylor` on its lane. -/
theorem prodW_dot_one (xs vs : List Rat) (h : xs.length = vs.length) :
    dot ((upto xs.length).map (fun j => prodL (xs.take j) * prodL (xs.drop (j + 1)))) vs = prodD xs vs := by
  rw [map_ext (fun j => prodL (xs.take j) * prodL (xs.drop (j + 1)))
      (fun j => 1 * prodL (xs.take j) * prodL (xs.drop (j + 1)))
      (fun j => by
        show prodL (xs.take j) * prodL (xs.drop (j + 1)) = 1 * prodL (xs.take j) * prodL (xs.drop (j + 1))
        rw [Rat.one_mul])
      (upto xs.length),
    prodW_dot 1 xs vs h, Rat.one_mul]

/-- A mapped list of rationals is as long as the list mapped. -/
theorem length_map_rat (f : Nat → Rat) : ∀ l : List Nat, (l.map f).length = l.length
  | [] => rfl
  | _ :: js => congrArg (fun n => n + 1) (length_map_rat f js)

/-- Reading positions of x + t·v is x's reading plus t times v's. -/
theorem map_nth_along (t : Rat) (x v : List Rat) (h : x.length = v.length) (f : Nat → Nat) :
    ∀ l : List Nat, l.map (fun j => nth (along t x v) (f j)) =
      along t (l.map (fun j => nth x (f j))) (l.map (fun j => nth v (f j)))
  | [] => rfl
  | j :: js => by
    show nth (along t x v) (f j) :: js.map (fun j => nth (along t x v) (f j)) =
      (nth x (f j) + t * nth v (f j)) :: along t (js.map (fun j => nth x (f j))) (js.map (fun j => nth v (f j)))
    rw [gather_along.nth_along t x v h (f j), map_nth_along t x v h f js]

/-- The lane of x + t·v is the line through the lanes of x and v. -/
theorem rpLane_along (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) (o : Nat) :
    a.rpLane (along t x v) o = along t (a.rpLane x o) (a.rpLane v o) :=
  map_nth_along t x v h (a.rpSrc o) (upto a.dimK)

/-- **reduce_prod's exact Taylor identity** at the primitive: along x + t·v
(x, v of one length) every output is its lane's product, and so is
Π lane + t · prodD lane (v's lane) + t² · prodR — the t-coefficient being,
by `prodW_dot_one`, the registry's partials applied to v's lane, which is
what `Attr.rpTaps` gives the JVP. -/
theorem reduce_prod_taylor (a : Attr) (t : Rat) (x v : List Rat) (h : x.length = v.length) :
    Prim.fwd .reduce_prod a [along t x v] =
      (upto (a.dimA * a.dimB)).map (fun o => prodL (a.rpLane x o) + t * prodD (a.rpLane x o) (a.rpLane v o) +
        t * t * prodR t (a.rpLane x o) (a.rpLane v o)) := by
  show (upto (a.dimA * a.dimB)).map (fun o => prodL (a.rpLane (along t x v) o)) = _
  exact map_ext _ _ (fun o => by
      show prodL (a.rpLane (along t x v) o) =
        prodL (a.rpLane x o) + t * prodD (a.rpLane x o) (a.rpLane v o) + t * t * prodR t (a.rpLane x o) (a.rpLane v o)
      rw [rpLane_along a t x v h o]
      refine prodL_taylor t (a.rpLane x o) (a.rpLane v o) ?_
      show ((upto a.dimK).map (fun j => nth x (a.rpSrc o j))).length =
        ((upto a.dimK).map (fun j => nth v (a.rpSrc o j))).length
      rw [length_map_rat (fun j => nth x (a.rpSrc o j)) (upto a.dimK),
        length_map_rat (fun j => nth v (a.rpSrc o j)) (upto a.dimK)]) _

/-! ## The JVP's taps sum each output to `prodD`

`tapply` adds every tap `w · v[i]` into its output `o`; so output `o` of
`tapply m es v` is the sum over the taps naming `o` (`nth_tapply`, through
`nth_addAt`, `nth_zerosN`), written `tapAt o v es`. Over `Attr.rpTaps` that sum
runs over the outputs' tap groups (`tapAt_join_map`); every group of another
output adds 0 and output o's own group is the registry's partials applied to
v's lane (`tapAt_map_mk`), which is `prodD` by `prodW_dot_one`
(`total_indicator`: the sum over `upto (A·B)` of a function that vanishes off
o is its value at o). -/

/-- The sum of the taps of output o: Σ over the entries naming o of w · v[i]. -/
def tapAt (o : Nat) (x : List Rat) : List Tap → Rat
  | [] => 0
  | e :: es => tapAt o x es + (if e.o = o then e.w * nth x e.i else 0)

theorem nth_zerosN : ∀ (n o : Nat), nth (zerosN n) o = 0
  | 0, _ => rfl
  | _ + 1, 0 => rfl
  | n + 1, o + 1 => nth_zerosN n o

/-- Reading o after adding d at j (o inside the list): d arrives iff j = o. -/
theorem nth_addAt : ∀ (u : List Rat) (j o : Nat) (d : Rat), o < u.length →
    nth (addAt u j d) o = nth u o + (if j = o then d else 0)
  | [], _, _, _, h => absurd h (Nat.not_lt_zero _)
  | a :: _, 0, 0, d, _ => by
    show a + d = a + (if (0 : Nat) = 0 then d else 0)
    rw [if_pos rfl]
  | _ :: as, 0, o + 1, d, _ => by
    show nth as o = nth as o + (if (0 : Nat) = o + 1 then d else 0)
    rw [if_neg (fun h : (0 : Nat) = o + 1 => Nat.succ_ne_zero o h.symm), Rat.add_zero]
  | a :: _, j + 1, 0, d, _ => by
    show a = a + (if j + 1 = 0 then d else 0)
    rw [if_neg (Nat.succ_ne_zero j), Rat.add_zero]
  | _ :: as, j + 1, o + 1, d, h => by
    show nth (addAt as j d) o = nth as o + (if j + 1 = o + 1 then d else 0)
    rw [nth_addAt as j o d (Nat.lt_of_succ_lt_succ h)]
    by_cases hjo : j = o
    · rw [if_pos hjo, if_pos (show j + 1 = o + 1 from congrArg (fun n => n + 1) hjo)]
    · rw [if_neg hjo, if_neg (fun h' : j + 1 = o + 1 => hjo (Nat.succ.inj h'))]

/-- Output o (o < m) of a sparse linear map is the sum of its taps. -/
theorem nth_tapply (m o : Nat) (ho : o < m) (x : List Rat) :
    ∀ es : List Tap, nth (tapply m es x) o = tapAt o x es
  | [] => nth_zerosN m o
  | e :: es => by
    show nth (addAt (tapply m es x) e.o (e.w * nth x e.i)) o =
      tapAt o x es + (if e.o = o then e.w * nth x e.i else 0)
    rw [nth_addAt (tapply m es x) e.o o (e.w * nth x e.i) (Nat.lt_of_lt_of_eq ho (length_tapply m es x).symm),
      nth_tapply m o ho x es]

theorem radd_right_comm (a b c : Rat) : a + b + c = a + c + b := by
  rw [Rat.add_assoc a b c, Rat.add_comm b c, ← Rat.add_assoc a c b]

theorem tapAt_append (o : Nat) (x : List Rat) :
    ∀ es fs : List Tap, tapAt o x (es ++ fs) = tapAt o x es + tapAt o x fs
  | [], fs => by
    show tapAt o x fs = 0 + tapAt o x fs
    rw [Rat.zero_add (tapAt o x fs)]
  | e :: es, fs => by
    show tapAt o x (es ++ fs) + (if e.o = o then e.w * nth x e.i else 0) =
      tapAt o x es + (if e.o = o then e.w * nth x e.i else 0) + tapAt o x fs
    rw [tapAt_append o x es fs]
    exact radd_right_comm (tapAt o x es) (tapAt o x fs) _

/-- Over groups of taps, output o's sum is the total of the groups' sums. -/
theorem tapAt_join_map (o : Nat) (x : List Rat) (F : Nat → List Tap) :
    ∀ l : List Nat, tapAt o x (joinTaps (l.map F)) = total (l.map (fun p => tapAt o x (F p)))
  | [] => rfl
  | p :: l => by
    show tapAt o x (F p ++ joinTaps (l.map F)) = tapAt o x (F p) + total (l.map (fun p => tapAt o x (F p)))
    rw [tapAt_append o x (F p) (joinTaps (l.map F)), tapAt_join_map o x F l]

/-- A group of taps all naming output p: output o's sum is its weights
applied to the entries it reads when p = o, and 0 otherwise. -/
theorem tapAt_map_mk (o p : Nat) (x : List Rat) (g : Nat → Nat) (w : Nat → Rat) :
    ∀ l : List Nat, tapAt o x (l.map (fun j => Tap.mk p (g j) (w j))) =
      if p = o then dot (l.map w) (l.map (fun j => nth x (g j))) else 0
  | [] => by
    show (0 : Rat) = if p = o then 0 else 0
    by_cases h : p = o
    · rw [if_pos h]
    · rw [if_neg h]
  | j :: js => by
    show tapAt o x (js.map (fun j => Tap.mk p (g j) (w j))) + (if p = o then w j * nth x (g j) else 0) =
      if p = o then w j * nth x (g j) + dot (js.map w) (js.map (fun j => nth x (g j))) else 0
    rw [tapAt_map_mk o p x g w js]
    by_cases h : p = o
    · rw [if_pos h, if_pos h, if_pos h]
      exact Rat.add_comm _ _
    · rw [if_neg h, if_neg h, if_neg h, Rat.add_zero]

/-- Σ over k, …, k + n − 1 of a function that vanishes off o, all above o: 0. -/
theorem total_zero_above (o : Nat) (f : Nat → Rat) (hf : ∀ p, p ≠ o → f p = 0) :
    ∀ n k : Nat, o < k → total ((uptoFrom k n).map f) = 0
  | 0, _, _ => rfl
  | n + 1, k, h => by
    show f k + total ((uptoFrom (k + 1) n).map f) = 0
    rw [hf k (by omega), total_zero_above o f hf n (k + 1) (by omega), Rat.add_zero]

/-- Σ over k, …, k + n − 1 (a range holding o) of a function that vanishes
off o: its value at o. -/
theorem total_indicator (o : Nat) (c : Rat) (f : Nat → Rat) (hf : ∀ p, p ≠ o → f p = 0) (hc : f o = c) :
    ∀ n k : Nat, k ≤ o → o < k + n → total ((uptoFrom k n).map f) = c
  | 0, k, h1, h2 => absurd h2 (by omega)
  | n + 1, k, h1, h2 => by
    show f k + total ((uptoFrom (k + 1) n).map f) = c
    by_cases hk : k = o
    · rw [hk, hc, total_zero_above o f hf n (o + 1) (by omega), Rat.add_zero]
    · rw [hf k hk, total_indicator o c f hf hc n (k + 1) (by omega) (by omega), Rat.zero_add]

/-- **reduce_prod's JVP is the product rule on every output**: output o
(o < A·B) of `tapply` over `Attr.rpTaps x` applied to v is `prodD` of the
lanes of x and v at o — the t-coefficient of `prodL_taylor`, so with
`reduce_prod_taylor` the JVP the taps compute is the derivative of the
forward, output by output. A wrong partial breaks it: with the taps' weight
the prefix product alone (suffix dropped), the lane x = [2, 3], v = [1, 0]
gives 1·1 + 2·0 = 1 ≠ prodD = 1·3 + 2·0 = 3. -/
theorem reduce_prod_jvp_taps (a : Attr) (x v : List Rat) (o : Nat) (ho : o < a.dimA * a.dimB) :
    nth (Prim.jvp .reduce_prod a [x] [v]) o = prodD (a.rpLane x o) (a.rpLane v o) := by
  have hlen : (a.rpLane x o).length = (a.rpLane v o).length :=
    (length_map_rat (fun j => nth x (a.rpSrc o j)) (upto a.dimK)).trans
      (length_map_rat (fun j => nth v (a.rpSrc o j)) (upto a.dimK)).symm
  have hK : (a.rpLane x o).length = a.dimK :=
    (length_map_rat (fun j => nth x (a.rpSrc o j)) (upto a.dimK)).trans (length_upto a.dimK)
  have hself : tapAt o v ((upto a.dimK).map (fun j => Tap.mk o (a.rpSrc o j)
      (prodL ((a.rpLane x o).take j) * prodL ((a.rpLane x o).drop (j + 1))))) =
      prodD (a.rpLane x o) (a.rpLane v o) := by
    rw [tapAt_map_mk o o v (a.rpSrc o)
      (fun j => prodL ((a.rpLane x o).take j) * prodL ((a.rpLane x o).drop (j + 1))) (upto a.dimK), if_pos rfl]
    have hw := prodW_dot_one (a.rpLane x o) (a.rpLane v o) hlen
    rw [hK] at hw
    exact hw
  have hother : ∀ p, p ≠ o → tapAt o v ((upto a.dimK).map (fun j => Tap.mk p (a.rpSrc p j)
      (prodL ((a.rpLane x p).take j) * prodL ((a.rpLane x p).drop (j + 1))))) = 0 := fun p hp => by
    rw [tapAt_map_mk o p v (a.rpSrc p)
      (fun j => prodL ((a.rpLane x p).take j) * prodL ((a.rpLane x p).drop (j + 1))) (upto a.dimK), if_neg hp]
  show nth (tapply (a.dimA * a.dimB) (a.rpTaps x) v) o = prodD (a.rpLane x o) (a.rpLane v o)
  rw [nth_tapply (a.dimA * a.dimB) o ho v (a.rpTaps x)]
  show tapAt o v (joinTaps ((upto (a.dimA * a.dimB)).map (fun p => (upto a.dimK).map (fun j =>
      Tap.mk p (a.rpSrc p j) (prodL ((a.rpLane x p).take j) * prodL ((a.rpLane x p).drop (j + 1))))))) =
    prodD (a.rpLane x o) (a.rpLane v o)
  rw [tapAt_join_map o v _ (upto (a.dimA * a.dimB))]
  exact total_indicator o _ _ hother hself (a.dimA * a.dimB) 0 (Nat.zero_le o)
    (Nat.lt_of_lt_of_eq ho (Nat.zero_add (a.dimA * a.dimB)).symm)

/-- `reduce_prod_jvp_taps` at the instance above, by hand: with v = [1, 1, 1,
2, 1, 1] the partials [6, 3, 2] and [0, 20, 0] give 6 + 3 + 2 = 11 and
0·2 + 20·1 + 0·1 = 20, and prodD of the lanes is 1·6 + 1·(1·3 + 2·1) = 11
and 2·0 + 4·(1·5 + 0·1) = 20. -/
theorem reduce_prod_jvp_instance :
    Prim.jvp .reduce_prod { c := 0, lo := 0, hi := 0, axis := 1, shape := [2, 3], axis2 := 0, perm := [],
      start := 0, stop := 0, toShape := [], values := [], shapes := [[2, 3]] } [[1, 2, 3, 4, 0, 5]]
      [[1, 1, 1, 2, 1, 1]] = [11, 20] ∧
      prodD [1, 2, 3] [1, 1, 1] = 11 ∧ prodD [4, 0, 5] [2, 1, 1] = 20 := by
  decide +kernel

/-- An instance by hand: Π ([2, 3] + t·[5, 7]) at t = 1 is 7·10 = 70 =
6 + 1·(5·3 + 2·7) + 1·(5·7 + 0) = 6 + 29 + 35, and the partials [3, 2]
applied to [5, 7] give 29. -/
theorem prodL_taylor_instance :
    prodL (along 1 [2, 3] [5, 7]) = 70 ∧ prodD [2, 3] [5, 7] = 29 ∧ prodR 1 [2, 3] [5, 7] = 35 := by
  decide +kernel

end Tlcheck
