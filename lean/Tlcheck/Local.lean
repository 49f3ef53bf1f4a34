import Tlcheck.Spec
import Tlcheck.Adjoint
import Tlcheck.Window
import Tlcheck.Norm
import Tlcheck.Prod
import Tlcheck.Dropout
import Tlcheck.Round
import Tlcheck.Trunc

/-!
# Every primitive's local adjointness, once, on lists of any length

`Tlcheck.Graph.rev_adjoint` takes each node's local adjointness as a
hypothesis, over a carrier with no length invariant (`listPairing`: lists
of any length, `[]` the zero). The per-primitive laws (`<op>_adjoint` in
`Adjoint.lean`, `Window.lean`, `Norm.lean`, `Prod.lean`, `Dropout.lean`)
hold only at the lengths they state — `mul` with tangents shorter than its
inputs is not adjoint, since `padd` truncates. This module closes the gap.

**Lenses.** A node reads its tangents and cotangent through a lens: input
lengths `ins` and an output length `out`, with

    fit n l        = the first n entries of l, padded with zeros to n,
    fitAll ns ds   = [fit n₀ d₀, fit n₁ d₁, …]   (dₖ = [] past the end),
    jvpₗ dxs       = fit out (jvp (fitAll ins dxs)),
    vjpₗ δ         = fitAll ins (vjp (fit out δ)).

`Lens p a vals` bundles `ins`, `out` and the proof that at those lengths
the primitive is adjoint:

    ⟨jvp (fitAll ins dxs), fit out δ⟩ = Σₖ ⟨(fitAll ins dxs)ₖ, vjp (fit out δ)ₖ⟩   for all dxs, δ.

`primLens p a vals v` gives one for every primitive, its lengths read off
the per-op theorem's hypotheses (or the inputs' values `vals` and the
node's value `v` where the theorem has none), its proof that theorem at
`fit`'s lengths (`length_fit`). Where a hypothesis is a condition on the
values (`mul`'s |x| = |y|, the norms' number of parameters) it is tested,
and a node that fails it, or a primitive at the wrong arity, gets
`Lens.none` (no inputs, output length 0: both sides are 0), so no
hypothesis is left over.

**The two facts that make a lens adjoint on every list** (`dot` truncates
to the common prefix, and `fit` pads with zeros):

* `dot_fit`: ⟨fit n u, v⟩ = ⟨u, fit n v⟩ for all n, u, v (both are the sum
  over the first min(n, |u|, |v|) entries);
* `dotAll_fitAll`: Σₖ ⟨(fitAll ns W)ₖ, dxsₖ⟩ = Σₖ ⟨(fitAll ns dxs)ₖ, Wₖ⟩
  for all ns, W, dxs (terms past either list's end are ⟨fit n [], ·⟩ = 0).

`lens_adjoint` combines them: for every δ and every dxs,

    ⟨δ, jvpₗ dxs⟩ = Σₖ ⟨(vjpₗ δ)ₖ, dxsₖ⟩,

which is `Graph.LocallyAdjoint`'s condition; `Comp.lean` builds its nodes
through `primLens` and so discharges that hypothesis for every graph over
`Prim` (`Comp.graph_locallyAdjoint`). On tangents whose lengths are the
lens's (`fit_id`), the lens changes nothing: the checker verifies that a
recorded node's lens lengths are its inputs' and its own value's.

No `sorry`, no `grind`, no axioms.
-/

namespace Tlcheck
set_option autoImplicit false

/-- The head of a list of rationals, 0 when empty. -/
def hdR : List Rat → Rat
  | [] => 0
  | a :: _ => a

/-- The tail of a list of rationals, [] when empty. -/
def tlR : List Rat → List Rat
  | [] => []
  | _ :: as => as

/-- The head of a list of tensors, [] when empty. -/
def hdL : List (List Rat) → List Rat
  | [] => []
  | d :: _ => d

/-- The tail of a list of tensors, [] when empty. -/
def tlL : List (List Rat) → List (List Rat)
  | [] => []
  | _ :: ds => ds

/-- fit n l: the first n entries of l, padded with zeros to length n. -/
def fit : Nat → List Rat → List Rat
  | 0, _ => []
  | n + 1, l => hdR l :: fit n (tlR l)

/-- fitAll ns ds: the k-th tensor of ds fitted to the k-th length of ns
([] past the end of ds); as many tensors as ns has lengths. -/
def fitAll : List Nat → List (List Rat) → List (List Rat)
  | [], _ => []
  | n :: ns, ds => fit n (hdL ds) :: fitAll ns (tlL ds)

theorem length_fit : ∀ (n : Nat) (l : List Rat), (fit n l).length = n
  | 0, _ => rfl
  | n + 1, l => by
    show (fit n (tlR l)).length + 1 = n + 1
    rw [length_fit n (tlR l)]

theorem fit_nil : ∀ n : Nat, fit n [] = zerosN n
  | 0 => rfl
  | n + 1 => by
    show (0 : Rat) :: fit n [] = 0 :: zerosN n
    rw [fit_nil n]

/-- Equal lengths of two cons lists give equal lengths of their tails. -/
theorem len_cons_cons {α β : Type} (a : α) (as : List α) (b : β) (bs : List β)
    (h : (a :: as).length = (b :: bs).length) : as.length = bs.length := by
  have h' : as.length + 1 = bs.length + 1 := h
  omega

/-- fit n l = l when l has length n. -/
theorem fit_id : ∀ (n : Nat) (l : List Rat), l.length = n → fit n l = l
  | 0, [], _ => rfl
  | 0, _ :: as, h => absurd h (Nat.succ_ne_zero as.length)
  | n + 1, [], h => absurd h.symm (Nat.succ_ne_zero n)
  | n + 1, a :: as, h => by
    have h1 : as.length + 1 = n + 1 := h
    have h' : as.length = n := by omega
    show a :: fit n as = a :: as
    rw [fit_id n as h']

/-- The tensors ds have the lengths ns, one for one. -/
def LensEq : List Nat → List (List Rat) → Prop
  | [], [] => True
  | n :: ns, d :: ds => d.length = n ∧ LensEq ns ds
  | _, _ => False

/-- fitAll ns ds = ds when the lengths of ds are ns. -/
theorem fitAll_id : ∀ (ns : List Nat) (ds : List (List Rat)), LensEq ns ds → fitAll ns ds = ds
  | [], [], _ => rfl
  | [], _ :: _, h => (h : False).elim
  | _ :: _, [], h => (h : False).elim
  | n :: ns, d :: ds, h => by
    have h' : d.length = n ∧ LensEq ns ds := h
    show fit n d :: fitAll ns ds = d :: ds
    rw [fit_id n d h'.1, fitAll_id ns ds h'.2]

theorem dot_nil_left : ∀ c : List Rat, dot [] c = 0
  | [] => rfl
  | _ :: _ => rfl

theorem dot_fit_nil (n : Nat) (d : List Rat) : dot (fit n []) d = 0 := by
  rw [fit_nil n]
  exact dot_zerosN_left n d

/-- ⟨fit n u, v⟩ = ⟨u, fit n v⟩: both are Σ uᵢvᵢ over i < min(n, |u|, |v|). -/
theorem dot_fit : ∀ (n : Nat) (u v : List Rat), dot (fit n u) v = dot u (fit n v)
  | 0, u, v => by
    show dot [] v = dot u []
    rw [dot_nil_left v, dot_nil_right u]
  | n + 1, [], v => by
    show dot (fit (n + 1) []) v = dot [] (fit (n + 1) v)
    rw [dot_fit_nil (n + 1) v, dot_nil_left (fit (n + 1) v)]
  | n + 1, a :: as, [] => by
    show dot (a :: fit n as) [] = a * 0 + dot as (fit n [])
    rw [dot_nil_right (a :: fit n as), Rat.mul_zero, fit_nil n, dot_zerosN_right as n, Rat.add_zero]
  | n + 1, a :: as, b :: bs => by
    show a * b + dot (fit n as) bs = a * b + dot as (fit n bs)
    rw [dot_fit n as bs]

theorem dotAll_nil_right : ∀ us : List (List Rat), dotAll us [] = 0
  | [] => rfl
  | _ :: _ => rfl

/-- Σₖ ⟨(fitAll ns W)ₖ, dxsₖ⟩ = Σₖ ⟨(fitAll ns dxs)ₖ, Wₖ⟩ for lists of any lengths. -/
theorem dotAll_fitAll : ∀ (ns : List Nat) (W dxs : List (List Rat)),
    dotAll (fitAll ns W) dxs = dotAll (fitAll ns dxs) W
  | [], _, _ => rfl
  | n :: ns, W, [] => by
    show dotAll (fit n (hdL W) :: fitAll ns (tlL W)) [] = dotAll (fit n [] :: fitAll ns []) W
    rw [dotAll_nil_right (fit n (hdL W) :: fitAll ns (tlL W))]
    cases W with
    | nil => exact (dotAll_nil_right (fit n [] :: fitAll ns [])).symm
    | cons w ws =>
      show (0 : Rat) = dot (fit n []) w + dotAll (fitAll ns []) ws
      rw [dot_fit_nil n w, ← dotAll_fitAll ns ws [], dotAll_nil_right (fitAll ns ws), Rat.zero_add]
  | n :: ns, [], d :: ds => by
    show dot (fit n []) d + dotAll (fitAll ns []) ds = dotAll (fit n d :: fitAll ns ds) []
    rw [dot_fit_nil n d, dotAll_fitAll ns [] ds, dotAll_nil_right (fitAll ns ds),
      dotAll_nil_right (fit n d :: fitAll ns ds), Rat.zero_add]
  | n :: ns, w :: ws, d :: ds => by
    show dot (fit n w) d + dotAll (fitAll ns ws) ds = dot (fit n d) w + dotAll (fitAll ns ds) ws
    rw [dot_fit n w d, dot_comm w (fit n d), dotAll_fitAll ns ws ds]

/-- A primitive's lens at attributes a and input values vals: the lengths
its tangents and cotangent are read at, and its adjointness at them. -/
structure Lens (p : Prim) (a : Attr) (vals : List (List Rat)) where
  ins : List Nat
  out : Nat
  adj : ∀ (dxs : List (List Rat)) (δ : List Rat),
    dot (Prim.jvp p a vals (fitAll ins dxs)) (fit out δ) =
      dotAll (fitAll ins dxs) (Prim.vjp p a vals (fit out δ))

/-- The empty lens (no inputs, output length 0): both sides are 0. -/
def Lens.none (p : Prim) (a : Attr) (vals : List (List Rat)) : Lens p a vals :=
  { ins := [], out := 0,
    adj := fun _ _ => by
      show dot (Prim.jvp p a vals []) [] = dotAll [] (Prim.vjp p a vals [])
      exact dot_nil_right (Prim.jvp p a vals []) }

/-- A lens of no inputs from a law at output length m. -/
def lens0 (p : Prim) (a : Attr) (vals : List (List Rat)) (m : Nat)
    (h : ∀ δ : List Rat, δ.length = m → dot (Prim.jvp p a vals []) δ = dotAll [] (Prim.vjp p a vals δ)) :
    Lens p a vals :=
  { ins := [], out := m, adj := fun _ δ => h (fit m δ) (length_fit m δ) }

/-- A lens of one input from a law at lengths n and m. -/
def lens1 (p : Prim) (a : Attr) (vals : List (List Rat)) (n m : Nat)
    (h : ∀ dx δ : List Rat, dx.length = n → δ.length = m →
      dot (Prim.jvp p a vals [dx]) δ = dotAll [dx] (Prim.vjp p a vals δ)) : Lens p a vals :=
  { ins := [n], out := m,
    adj := fun dxs δ => h (fit n (hdL dxs)) (fit m δ) (length_fit n (hdL dxs)) (length_fit m δ) }

/-- A lens of two inputs. -/
def lens2 (p : Prim) (a : Attr) (vals : List (List Rat)) (n₁ n₂ m : Nat)
    (h : ∀ dx dy δ : List Rat, dx.length = n₁ → dy.length = n₂ → δ.length = m →
      dot (Prim.jvp p a vals [dx, dy]) δ = dotAll [dx, dy] (Prim.vjp p a vals δ)) : Lens p a vals :=
  { ins := [n₁, n₂], out := m,
    adj := fun dxs δ => h (fit n₁ (hdL dxs)) (fit n₂ (hdL (tlL dxs))) (fit m δ)
      (length_fit n₁ (hdL dxs)) (length_fit n₂ (hdL (tlL dxs))) (length_fit m δ) }

/-- A lens of three inputs. -/
def lens3 (p : Prim) (a : Attr) (vals : List (List Rat)) (n₁ n₂ n₃ m : Nat)
    (h : ∀ dx dy dz δ : List Rat, dx.length = n₁ → dy.length = n₂ → dz.length = n₃ → δ.length = m →
      dot (Prim.jvp p a vals [dx, dy, dz]) δ = dotAll [dx, dy, dz] (Prim.vjp p a vals δ)) : Lens p a vals :=
  { ins := [n₁, n₂, n₃], out := m,
    adj := fun dxs δ => h (fit n₁ (hdL dxs)) (fit n₂ (hdL (tlL dxs))) (fit n₃ (hdL (tlL (tlL dxs)))) (fit m δ)
      (length_fit n₁ (hdL dxs)) (length_fit n₂ (hdL (tlL dxs))) (length_fit n₃ (hdL (tlL (tlL dxs))))
      (length_fit m δ) }

theorem sizesMatch_fitAll : ∀ (ss : List (List Nat)) (ds : List (List Rat)), SizesMatch ss (fitAll (ss.map size) ds)
  | [], _ => True.intro
  | s :: ss, ds => by
    show (fit (size s) (hdL ds)).length = size s ∧ SizesMatch ss (fitAll (ss.map size) (tlL ds))
    exact And.intro (length_fit (size s) (hdL ds)) (sizesMatch_fitAll ss (tlL ds))

/-- A lens of as many inputs as shapes (concat, scatter), from a law
under `SizesMatch`. -/
def lensS (p : Prim) (a : Attr) (vals : List (List Rat)) (ss : List (List Nat)) (m : Nat)
    (h : ∀ (dxs : List (List Rat)) (δ : List Rat), SizesMatch ss dxs → δ.length = m →
      dot (Prim.jvp p a vals dxs) δ = dotAll dxs (Prim.vjp p a vals δ)) : Lens p a vals :=
  { ins := ss.map size, out := m,
    adj := fun dxs δ => h (fitAll (ss.map size) dxs) (fit m δ) (sizesMatch_fitAll ss dxs) (length_fit m δ) }

theorem lensOk_fitAll : ∀ (ns : List Nat) (ess : List (List Tap)) (ds : List (List Rat)),
    ess.length = ns.length → LensOk ns ess (fitAll ns ds)
  | [], [], _, _ => True.intro
  | [], _ :: es, _, h => absurd h (Nat.succ_ne_zero es.length)
  | _ :: ns, [], _, h => absurd h.symm (Nat.succ_ne_zero ns.length)
  | n :: ns, e :: ess, ds, h => by
    show (fit n (hdL ds)).length = n ∧ LensOk ns ess (fitAll ns (tlL ds))
    exact And.intro (length_fit n (hdL ds)) (lensOk_fitAll ns ess (tlL ds) (len_cons_cons e ess n ns h))

/-- A lens from a tap-list law under `LensOk` (the normalisations), when
there are as many tap lists as lengths. -/
def lensT (p : Prim) (a : Attr) (vals : List (List Rat)) (ns : List Nat) (ess : List (List Tap)) (m : Nat)
    (hl : ess.length = ns.length)
    (h : ∀ (dxs : List (List Rat)) (δ : List Rat), LensOk ns ess dxs → δ.length = m →
      dot (Prim.jvp p a vals dxs) δ = dotAll dxs (Prim.vjp p a vals δ)) : Lens p a vals :=
  { ins := ns, out := m,
    adj := fun dxs δ => h (fitAll ns dxs) (fit m δ) (lensOk_fitAll ns ess dxs hl) (length_fit m δ) }

/-- **Every primitive's lens**, from its per-op adjointness theorem: at
attributes a, input values vals and the node's own value v. The lengths
are the theorem's hypotheses where it has them, the inputs' and the
value's lengths otherwise; a value condition is tested (`if`), and a
primitive at an arity its `jvp` does not match gets `Lens.none`. -/
def primLens : (p : Prim) → (a : Attr) → (vals : List (List Rat)) → (v : List Rat) → Lens p a vals
  | .add, a, [x, y], _ => lens2 .add a [x, y] x.length x.length x.length
      (fun dx dy δ hx hy _ => add_adjoint a x y dx dy δ (hx.trans hy.symm))
  | .sub, a, [x, y], _ => lens2 .sub a [x, y] x.length x.length x.length
      (fun dx dy δ hx hy _ => sub_adjoint a x y dx dy δ (hx.trans hy.symm))
  | .mul, a, [x, y], _ =>
    if hxy : x.length = y.length then
      lens2 .mul a [x, y] x.length x.length x.length (fun dx dy δ hx hy _ => mul_adjoint a x y dx dy δ hxy hx hy)
    else Lens.none .mul a [x, y]
  | .div, a, [x, y], _ =>
    if hxy : x.length = y.length then
      lens2 .div a [x, y] x.length x.length x.length (fun dx dy δ hx hy _ => div_adjoint a x y dx dy δ hxy hx hy)
    else Lens.none .div a [x, y]
  | .max, a, [x, y], _ =>
    if hxy : x.length = y.length then
      lens2 .max a [x, y] x.length x.length x.length (fun dx dy δ hx hy _ => max_adjoint a x y dx dy δ hxy hx hy)
    else Lens.none .max a [x, y]
  | .min, a, [x, y], _ =>
    if hxy : x.length = y.length then
      lens2 .min a [x, y] x.length x.length x.length (fun dx dy δ hx hy _ => min_adjoint a x y dx dy δ hxy hx hy)
    else Lens.none .min a [x, y]
  | .neg, a, [x], v => lens1 .neg a [x] x.length v.length (fun dx δ _ _ => neg_adjoint a x dx δ)
  | .scale, a, [x], v => lens1 .scale a [x] x.length v.length (fun dx δ _ _ => scale_adjoint a x dx δ)
  | .square, a, [x], v => lens1 .square a [x] x.length v.length (fun dx δ _ _ => square_adjoint a x dx δ)
  | .inv, a, [x], v => lens1 .inv a [x] x.length v.length (fun dx δ _ _ => inv_adjoint a x dx δ)
  | .relu, a, [x], v => lens1 .relu a [x] x.length v.length (fun dx δ _ _ => relu_adjoint a x dx δ)
  | .abs, a, [x], v => lens1 .abs a [x] x.length v.length (fun dx δ _ _ => abs_adjoint a x dx δ)
  | .clamp, a, [x], v => lens1 .clamp a [x] x.length v.length (fun dx δ _ _ => clamp_adjoint a x dx δ)
  | .sqrt, a, [x], v => lens1 .sqrt a [x] x.length v.length (fun dx δ _ _ => sqrt_adjoint a x dx δ)
  | .sign, a, [x], v => lens1 .sign a [x] x.length v.length (fun dx δ _ _ => sign_adjoint a x dx δ)
  | .round_f16, a, [x], v => lens1 .round_f16 a [x] x.length v.length (fun dx δ _ _ => round_f16_adjoint a x dx δ)
  | .round_bf16, a, [x], v => lens1 .round_bf16 a [x] x.length v.length (fun dx δ _ _ => round_bf16_adjoint a x dx δ)
  | .round_f32, a, [x], v => lens1 .round_f32 a [x] x.length v.length (fun dx δ _ _ => round_f32_adjoint a x dx δ)
  | .trunc_int, a, [x], v => lens1 .trunc_int a [x] x.length v.length (fun dx δ _ _ => trunc_int_adjoint a x dx δ)
  | .shrink, a, [x], v => lens1 .shrink a [x] x.length v.length (fun dx δ _ _ => shrink_adjoint a x dx δ)
  | .reshape, a, [x], v => lens1 .reshape a [x] x.length v.length (fun dx δ _ _ => reshape_adjoint a x dx δ)
  | .flatten, a, [x], v => lens1 .flatten a [x] x.length v.length (fun dx δ _ _ => flatten_adjoint a x dx δ)
  | .detach, a, [x], v => lens1 .detach a [x] x.length v.length (fun dx δ _ _ => detach_adjoint a x dx δ)
  | .dropout, a, [x], v => lens1 .dropout a [x] x.length v.length (fun dx δ _ _ => dropout_prim_adjoint a x dx δ)
  | .bernoulli_mask, a, [x], _ =>
    lens1 .bernoulli_mask a [x] x.length a.values.length (fun dx δ _ _ => bernoulli_mask_adjoint a x dx δ)
  | .keep_mask, a, [x], _ =>
    lens1 .keep_mask a [x] x.length a.values.length (fun dx δ _ _ => keep_mask_adjoint a x dx δ)
  | .const, a, [], _ => lens0 .const a [] a.values.length (fun δ _ => const_adjoint a δ)
  | .rand_uniform, a, [], _ => lens0 .rand_uniform a [] a.values.length (fun δ _ => rand_uniform_adjoint a δ)
  | .sum, a, [x], _ =>
    { ins := [x.length], out := 1,
      adj := fun dxs δ => sum_adjoint a (hdR δ) x (fit x.length (hdL dxs)) (length_fit x.length (hdL dxs)) }
  | .mse_loss, a, [x, y], _ =>
    { ins := [x.length, x.length], out := 1,
      adj := fun dxs δ => mse_loss_adjoint a (hdR δ) x y (fit x.length (hdL dxs)) (fit x.length (hdL (tlL dxs)))
        ((length_fit x.length (hdL dxs)).trans (length_fit x.length (hdL (tlL dxs))).symm) }
  | .reduce_sum, a, [x], _ => lens1 .reduce_sum a [x] (a.dimA * (a.dimK * a.dimB)) (a.dimA * a.dimB)
      (fun dx δ hx hδ => reduce_sum_adjoint a x dx δ hx hδ)
  | .reduce_mean, a, [x], _ => lens1 .reduce_mean a [x] (a.dimA * (a.dimK * a.dimB)) (a.dimA * a.dimB)
      (fun dx δ hx hδ => reduce_mean_adjoint a x dx δ hx hδ)
  | .reduce_prod, a, [x], _ => lens1 .reduce_prod a [x] (size a.shape) (a.dimA * a.dimB)
      (fun dx δ hx hδ => reduce_prod_adjoint a x dx δ hx hδ)
  | .permute, a, [x], v => lens1 .permute a [x] (size a.shape) v.length
      (fun dx δ hx _ => permute_adjoint a x dx δ hx)
  | .transpose, a, [x], v => lens1 .transpose a [x] (size a.shape) v.length
      (fun dx δ hx _ => transpose_adjoint a x dx δ hx)
  | .slice, a, [x], v => lens1 .slice a [x] (size a.shape) v.length
      (fun dx δ hx _ => slice_adjoint a x dx δ hx)
  | .broadcast_to, a, [x], v => lens1 .broadcast_to a [x] (size a.shape) v.length
      (fun dx δ hx _ => broadcast_to_adjoint a x dx δ hx)
  | .tile, a, [x], v => lens1 .tile a [x] (size a.shape) v.length
      (fun dx δ hx _ => tile_adjoint a x dx δ hx)
  | .gather, a, [x], v => lens1 .gather a [x] (size a.shape) v.length
      (fun dx δ hx _ => gather_op_adjoint a x dx δ hx)
  | .pad, a, [x], v => lens1 .pad a [x] (size a.shape) v.length
      (fun dx δ hx _ => pad_adjoint a x dx δ hx)
  | .l2_normalize, a, [x], _ => lens1 .l2_normalize a [x] (size a.shape) (size a.shape)
      (fun dx δ hx hδ => l2_normalize_adjoint a x dx δ hx hδ)
  | .renorm, a, [x], _ => lens1 .renorm a [x] (size a.shape) (size a.shape)
      (fun dx δ hx hδ => renorm_adjoint a x dx δ hx hδ)
  | .concat, a, xs, v => lensS .concat a xs a.shapes v.length
      (fun dxs δ h _ => concat_adjoint a xs dxs δ h)
  | .scatter, a, xs, v => lensS .scatter a xs a.shapes v.length
      (fun dxs δ h _ => scatter_op_adjoint a xs dxs δ h)
  | .matmul, a, [x, y], _ =>
    lens2 .matmul a [x, y] (size (nthL a.shapes 0)) (size (nthL a.shapes 1)) (a.mmOut * 1)
      (fun dx dy δ hx hy hδ => matmul_adjoint a x y dx dy δ hx hy hδ)
  | .linear, a, [x, w, b], _ =>
    lens3 .linear a [x, w, b] a.linSx a.linSw a.linSb (a.linB * a.linM * 1)
      (fun dx dw db δ hx hw hb hδ => linear_adjoint a x w b dx dw db δ hx hw hb hδ)
  | .conv, a, [x, w], _ =>
    lens2 .conv a [x, w] a.convG.bil.xSize a.convG.bil.wSize a.convG.bil.ySize
      (fun dx dw δ hx hw hδ => conv_prim_adjoint_nobias a x w dx dw δ hx hw hδ)
  | .conv, a, [x, w, b], _ =>
    lens3 .conv a [x, w, b] a.convG.bil.xSize a.convG.bil.wSize a.convG.bil.bSize a.convG.bil.ySize
      (fun dx dw db δ hx hw hb hδ => conv_prim_adjoint a x w b dx dw db δ hx hw hb hδ)
  | .conv_transpose, a, [x, w], _ =>
    lens2 .conv_transpose a [x, w] a.convTG.bil.xSize a.convTG.bil.wSize a.convTG.bil.ySize
      (fun dx dw δ hx hw hδ => conv_transpose_prim_adjoint_nobias a x w dx dw δ hx hw hδ)
  | .conv_transpose, a, [x, w, b], _ =>
    lens3 .conv_transpose a [x, w, b] a.convTG.bil.xSize a.convTG.bil.wSize a.convTG.bil.bSize a.convTG.bil.ySize
      (fun dx dw db δ hx hw hb hδ => conv_transpose_prim_adjoint a x w b dx dw db δ hx hw hb hδ)
  | .max_pool, a, [x], _ => lens1 .max_pool a [x] a.poolG.inSize a.poolG.outSize
      (fun dx δ hx hδ => max_pool_prim_adjoint a x dx δ hx hδ)
  | .max_pool_nd, a, [x], _ => lens1 .max_pool_nd a [x] a.poolG.inSize a.poolG.outSize
      (fun dx δ hx hδ => max_pool_nd_adjoint a x dx δ hx hδ)
  | .avg_pool, a, [x], _ => lens1 .avg_pool a [x] a.poolG.inSize a.poolG.outSize
      (fun dx δ hx hδ => avg_pool_prim_adjoint a x dx δ hx hδ)
  | .avg_pool_nd, a, [x], _ => lens1 .avg_pool_nd a [x] a.poolG.inSize a.poolG.outSize
      (fun dx δ hx hδ => avg_pool_nd_adjoint a x dx δ hx hδ)
  | .layer_norm, a, x :: ps, _ =>
    if hl : ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)).length = (a.shapes.map size).length then
      lensT .layer_norm a (x :: ps) (a.shapes.map size) ((a.lnG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1))
        a.lnG.n hl (fun dxs δ h hδ => layer_norm_adjoint a x ps dxs δ h hδ)
    else Lens.none .layer_norm a (x :: ps)
  | .instance_norm, a, x :: ps, _ =>
    if hl : ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1)).length = (a.shapes.map size).length then
      lensT .instance_norm a (x :: ps) (a.shapes.map size) ((a.inG.taps a.eps x (parOr ps 0 1)).take (ps.length + 1))
        a.inG.n hl (fun dxs δ h hδ => instance_norm_adjoint a x ps dxs δ h hδ)
    else Lens.none .instance_norm a (x :: ps)
  | .batch_norm_eval, a, x :: ps, _ =>
    if hl : ((a.bnTaps x ps).take (ps.length + 1)).length = (a.shapes.map size).length then
      lensT .batch_norm_eval a (x :: ps) (a.shapes.map size) ((a.bnTaps x ps).take (ps.length + 1))
        (size a.shape) hl (fun dxs δ h hδ => batch_norm_eval_adjoint a x ps dxs δ h hδ)
    else Lens.none .batch_norm_eval a (x :: ps)
  | p, a, vals, _ => Lens.none p a vals

/-- **A lens is adjoint on lists of any lengths**: for every cotangent δ
and every list of tangents dxs,
⟨δ, fit out (jvp (fitAll ins dxs))⟩ = Σₖ ⟨(fitAll ins (vjp (fit out δ)))ₖ, dxsₖ⟩,
from the lens's law by `dot_fit`, `dot_comm` and `dotAll_fitAll`. -/
theorem lens_adjoint {p : Prim} {a : Attr} {vals : List (List Rat)} (L : Lens p a vals)
    (δ : List Rat) (dxs : List (List Rat)) :
    dot δ (fit L.out (Prim.jvp p a vals (fitAll L.ins dxs))) =
      dotAll (fitAll L.ins (Prim.vjp p a vals (fit L.out δ))) dxs := by
  rw [dotAll_fitAll L.ins (Prim.vjp p a vals (fit L.out δ)) dxs,
    ← dot_fit L.out δ (Prim.jvp p a vals (fitAll L.ins dxs)),
    dot_comm (fit L.out δ) (Prim.jvp p a vals (fitAll L.ins dxs))]
  exact L.adj dxs δ

/-- On tangents and a cotangent of the lens's lengths the lens is the
identity: the node's maps are the primitive's own. -/
theorem lens_id {p : Prim} {a : Attr} {vals : List (List Rat)} (L : Lens p a vals)
    (δ : List Rat) (dxs : List (List Rat)) (hd : LensEq L.ins dxs) (hδ : δ.length = L.out) :
    fit L.out (Prim.jvp p a vals (fitAll L.ins dxs)) = fit L.out (Prim.jvp p a vals dxs) ∧
      fit L.out δ = δ := by
  rw [fitAll_id L.ins dxs hd, fit_id L.out δ hδ]
  exact And.intro rfl rfl

end Tlcheck
