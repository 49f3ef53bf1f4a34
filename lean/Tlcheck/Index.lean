import Tlcheck.Spec
import Tlcheck.Adjoint

/-!
# The index lists implement their ops

`Tlcheck.Spec` computes permute, transpose, slice, broadcast_to and concat
as gathers along index lists built from the shapes and attributes, and
`gather_adjoint` holds for any list. This module proves what the lists are:

* `gather_reads`: a gather along `(upto N).map f` has N elements and its
  element k (k < N) is the input's element `f k` — so each op's output
  element k is the input element its defining formula names
  (`slice_reads`, `permute_reads`, `transpose_reads`, `broadcast_to_reads`,
  `concat_reads`, `gather_op_reads`, `tile_reads`, `scatter_op_reads` with
  `scatterSrc_written`, `scatterSrc_unwritten` and `findTgt_hit`), in row-major coordinates;
* `wsum_unflat`: those coordinates are row-major: for i < size s, the
  multi-index `unflat s i` weighted by `strides s` is i again, so
  `unflat` and `wsum · (strides s)` are the flat ↔ multi-index bijection
  the formulas are written in;
* kernel-checked instances against lists computed independently (with
  numpy's `transpose`, `swapaxes`, slicing, `broadcast_to` and
  `concatenate` on `arange`): `transpose_idx_2x3`, `transpose_idx_neg`,
  `permute_idx_201`, `slice_idx_axis1`, `broadcast_idx_31_234`,
  `concat_idx_axis1`, `gather_idx_take` (numpy's `take`), and
  `tile_idx_23_46`, `tile_idx_21_23` (numpy's `tile`, written out by hand),
  `scatter_idx_23` (torch's `scatter`, by hand).

In bounds (`sliceIdx_lt`, `gatherIdx_lt`, `bcastIdx_lt`, `tileIdx_lt`): under the
registry's own shape rules (slice: stop ≤ shape[axis]; gather: the axis
below the rank, every index below its extent; broadcast_to: rank ≤ the
target's, each extent 1 or the target's, aligned right) every entry of the index list is below the
input's element count — from `wsum_lt` (a multi-index of s weighted by its
strides is below size s), `unflat_below` and `size_split` (the [A, K, B]
view has the shape's size), `below_nth`, `below_of_nth`; for concat,
`concatSrc_lt` bounds the source by the concatenation's size under a
per-input hypothesis on the output multi-index (its derivation from the
registry's rule is checked in Go, not proved); for pad, `padIdx_le`: under
the registry's pad rule every entry is an input element or the fill
sentinel `size shape` (`padSrc_lt` per axis, `padSrcs_below` over the
axes). Not proved yet for permute and transpose (the permuted strides need
a permutation argument).
-/

namespace Tlcheck
set_option autoImplicit false

/-- Entry k of `(uptoFrom j n).map f` is f (j + k). -/
theorem nthN_uptoFrom_map (f : Nat → Nat) : ∀ (j n k : Nat), k < n → nthN ((uptoFrom j n).map f) k = f (j + k)
  | _, 0, _, hk => absurd hk (Nat.not_lt_zero _)
  | j, _ + 1, 0, _ => by
    show f j = f (j + 0)
    rw [Nat.add_zero]
  | j, n + 1, k + 1, hk => by
    show nthN ((uptoFrom (j + 1) n).map f) k = f (j + (k + 1))
    rw [nthN_uptoFrom_map f (j + 1) n k (Nat.lt_of_succ_lt_succ hk)]
    first
      | rw [Nat.add_assoc, Nat.add_comm 1 k]
      | (congr 1; omega)

/-- Entry k of `(upto N).map f` is f k. -/
theorem nthN_upto_map (f : Nat → Nat) (N k : Nat) (hk : k < N) : nthN ((upto N).map f) k = f k := by
  show nthN ((uptoFrom 0 N).map f) k = f k
  rw [nthN_uptoFrom_map f 0 N k hk, Nat.zero_add]

/-- Element k of a gather is the input element the list names. -/
theorem nth_gather : ∀ (g : List Nat) (x : List Rat) (k : Nat), k < g.length → nth (gather g x) k = nth x (nthN g k)
  | [], _, _, hk => absurd hk (Nat.not_lt_zero _)
  | _ :: _, _, 0, _ => rfl
  | _ :: js, x, k + 1, hk => nth_gather js x k (Nat.lt_of_succ_lt_succ hk)

/-- A gather along `(upto N).map f` reads, at output position k < N, the input element f k. -/
theorem gather_reads (N : Nat) (f : Nat → Nat) (x : List Rat) (k : Nat) (hk : k < N) :
    nth (gather ((upto N).map f) x) k = nth x (f k) := by
  rw [nth_gather ((upto N).map f) x k (by rw [length_idx]; exact hk), nthN_upto_map f N k hk]

/-- Row-major coordinates: for i < size s, the multi-index of i weighted by
the strides is i. -/
theorem wsum_unflat : ∀ (s : List Nat) (i : Nat), i < size s → wsum (unflat s i) (strides s) = i
  | [], i, hi => by
    have h1 : i < 1 := hi
    show 0 = i
    omega
  | n :: ns, i, hi => by
    have hpos : 0 < size ns := Nat.pos_of_ne_zero (fun h0 => by
      have h' : i < n * size ns := hi
      rw [h0, Nat.mul_zero] at h'
      exact Nat.not_lt_zero i h')
    show i / size ns * size ns + wsum (unflat ns (i % size ns)) (strides ns) = i
    rw [wsum_unflat ns (i % size ns) (Nat.mod_lt i hpos), Nat.mul_comm (i / size ns) (size ns)]
    exact Nat.div_add_mod i (size ns)

/-- slice: output element k (multi-index m in the slice's shape) is the
input element at m with `start` added along the axis. -/
theorem slice_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < size a.sliceShape) :
    nth (Prim.fwd .slice a [x]) k = nth x (wsum (bumpN (unflat a.sliceShape k) a.ax a.start) (strides a.shape)) :=
  gather_reads (size a.sliceShape)
    (fun i => wsum (bumpN (unflat a.sliceShape i) a.ax a.start) (strides a.shape)) x k hk

/-- permute: output element k (multi-index m in the permuted shape) is the
input element whose coordinate along axis perm[d] is m[d]: its flat index
is Σ_d m[d]·stride(perm[d]). -/
theorem permute_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < size (Attr.permShape a.shape a.perm)) :
    nth (Prim.fwd .permute a [x]) k =
      nth x (wsum (unflat (Attr.permShape a.shape a.perm) k) (a.perm.map (nthN (strides a.shape)))) :=
  gather_reads (size (Attr.permShape a.shape a.perm))
    (fun i => wsum (unflat (Attr.permShape a.shape a.perm) i) (a.perm.map (nthN (strides a.shape)))) x k hk

/-- transpose: the permute by the permutation swapping the two axes. -/
theorem transpose_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < size (Attr.permShape a.shape a.swapPerm)) :
    nth (Prim.fwd .transpose a [x]) k =
      nth x (wsum (unflat (Attr.permShape a.shape a.swapPerm) k) (a.swapPerm.map (nthN (strides a.shape)))) :=
  gather_reads (size (Attr.permShape a.shape a.swapPerm))
    (fun i => wsum (unflat (Attr.permShape a.shape a.swapPerm) i) (a.swapPerm.map (nthN (strides a.shape)))) x k hk

/-- broadcast_to: output element k (multi-index m in the target shape)
is the input element whose coordinate d is 0 where the input's extent is
1 and m's coordinate d (aligned on the right) otherwise. -/
theorem broadcast_to_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < size a.toShape) :
    nth (Prim.fwd .broadcast_to a [x]) k =
      nth x (wsum ((upto a.shape.length).map (fun d =>
        if nthN a.shape d = 1 then 0 else nthN (unflat a.toShape k) (a.toShape.length - a.shape.length + d)))
        (strides a.shape)) :=
  gather_reads (size a.toShape)
    (fun i => wsum ((upto a.shape.length).map (fun d =>
      if nthN a.shape d = 1 then 0 else nthN (unflat a.toShape i) (a.toShape.length - a.shape.length + d)))
      (strides a.shape)) x k hk

/-- tile: output element k (multi-index m in the output shape `toShape`)
is the input element whose coordinate d is m[d] mod shape[d] (the
registry's `tileMap`). -/
theorem tile_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < size a.toShape) :
    nth (Prim.fwd .tile a [x]) k =
      nth x (wsum ((upto a.shape.length).map (fun d => nthN (unflat a.toShape k) d % nthN a.shape d))
        (strides a.shape)) :=
  gather_reads (size a.toShape)
    (fun i => wsum ((upto a.shape.length).map (fun d => nthN (unflat a.toShape i) d % nthN a.shape d))
      (strides a.shape)) x k hk

/-- concat: output element k (multi-index m) is element `concatSrc` of the
flat concatenation: the input whose block along the axis holds m[axis],
at m with the axis coordinate shifted into that input. -/
theorem concat_reads (a : Attr) (xs : List (List Rat)) (k : Nat) (hk : k < size a.concatShape) :
    nth (Prim.fwd .concat a xs) k =
      nth (catAll xs) (concatSrc a.ax (unflat a.concatShape k) a.shapes (nthN (unflat a.concatShape k) a.ax) 0) :=
  gather_reads (size a.concatShape)
    (fun i => concatSrc a.ax (unflat a.concatShape i) a.shapes (nthN (unflat a.concatShape i) a.ax) 0) (catAll xs) k hk

/-- scatter: output position k reads `scatterSrc k` of x ++ u — u's
element e when update e (at its multi-index in the indices' shape, with
index[e] on the axis) writes k, else x's element k. -/
theorem scatter_op_reads (a : Attr) (xs : List (List Rat)) (k : Nat) (hk : k < size a.shape) :
    nth (Prim.fwd .scatter a xs) k = nth (catAll xs) (a.scatterSrc k) :=
  gather_reads (size a.shape) a.scatterSrc (catAll xs) k hk

/-- The two cases of `scatterSrc`: a written position reads the update
(past x's elements), an unwritten one reads x. -/
theorem scatterSrc_written (a : Attr) (k e : Nat) (h : findTgt k a.scatterTgts 0 = some e) :
    a.scatterSrc k = size a.shape + e := by
  first
    | (show (match findTgt k a.scatterTgts 0 with
        | some e => size a.shape + e
        | none => k) = size a.shape + e
       rw [h] <;> exact rfl)
    | (unfold Attr.scatterSrc; rw [h] <;> exact rfl)

theorem scatterSrc_unwritten (a : Attr) (k : Nat) (h : findTgt k a.scatterTgts 0 = none) :
    a.scatterSrc k = k := by
  first
    | (show (match findTgt k a.scatterTgts 0 with
        | some e => size a.shape + e
        | none => k) = k
       rw [h] <;> exact rfl)
    | (unfold Attr.scatterSrc; rw [h] <;> exact rfl)

/-- `findTgt` finds a writer of p: its answer e (searching from e₀) is an
entry of the target list whose target is p. -/
theorem findTgt_hit (p : Nat) : ∀ (ts : List Nat) (e₀ e : Nat), findTgt p ts e₀ = some e →
    e₀ ≤ e ∧ nthN ts (e - e₀) = p
  | [], e₀, _, h => by
    have h0 : findTgt p [] e₀ = none := rfl
    rw [h0] at h
    first
      | exact Option.noConfusion h
      | cases h
  | t :: ts, e₀, e, h => by
    by_cases ht : t = p
    · have h1 : findTgt p (t :: ts) e₀ = some e₀ := by
        show (if t = p then some e₀ else findTgt p ts (e₀ + 1)) = some e₀
        rw [if_pos ht]
      have he : e₀ = e := Option.some.inj (h1.symm.trans h)
      rw [← he, Nat.sub_self]
      exact ⟨Nat.le_refl e₀, ht⟩
    · have h1 : findTgt p (t :: ts) e₀ = findTgt p ts (e₀ + 1) := by
        show (if t = p then some e₀ else findTgt p ts (e₀ + 1)) = findTgt p ts (e₀ + 1)
        rw [if_neg ht]
      have ih := findTgt_hit p ts (e₀ + 1) e (h1.symm.trans h)
      have ih1 : e₀ + 1 ≤ e := ih.1
      have hsub : e - e₀ = (e - (e₀ + 1)) + 1 := by omega
      rw [hsub]
      exact ⟨by omega, ih.2⟩

/-- gather (the registry's, constant indices `perm` along the axis): output
element k, at (p, j, r) in the [A, J, B] view, is input element
(p, index[j], r) of the [A, K, B] view. -/
theorem gather_op_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < a.dimA * (a.perm.length * a.dimB)) :
    nth (Prim.fwd .gather a [x]) k =
      nth x ((k / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (k / a.dimB % a.perm.length)) * a.dimB + k % a.dimB) :=
  gather_reads (a.dimA * (a.perm.length * a.dimB))
    (fun i => (i / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (i / a.dimB % a.perm.length)) * a.dimB + i % a.dimB)
    x k hk

/-! ## In bounds: every source index names an input element

For slice and the registry's gather, every entry of the index list is
below the input's element count, under the hypotheses the registry's shape
rules check before it evaluates anything (`spec`: slice needs
`stop ≤ shape[axis]`; gather needs an axis below the rank and every index
below the axis extent). So no entry is the "past the end" position a
gather reads as 0: the forward reads only real input elements, and the
scatter of the VJP writes only inside the input. -/

/-- p·K + q < A·K when p < A and q < K: the row-major step behind every
bound below (the last block of K ends at A·K). -/
theorem idx_lt_mul (K q : Nat) (hq : q < K) : ∀ (A p : Nat), p < A → p * K + q < A * K
  | 0, _, hp => absurd hp (Nat.not_lt_zero _)
  | A + 1, p, hp => by
    have hs : (A + 1) * K = A * K + K := by
      first
        | exact Nat.succ_mul A K
        | rw [Nat.add_mul, Nat.one_mul]
    rw [hs]
    by_cases hpa : p = A
    · rw [hpa]
      omega
    · have hlt : p < A := by omega
      have ih : p * K + q < A * K := idx_lt_mul K q hq A p hlt
      omega

/-- `Below m s`: m is a multi-index of s — the same rank, each coordinate
below its extent. -/
def Below : List Nat → List Nat → Prop
  | [], [] => True
  | m :: ms, n :: ns => m < n ∧ Below ms ns
  | _, _ => False

/-- A multi-index of s, weighted by the row-major strides, is a flat index
of s: Σ_d m[d]·stride(d) < size s (induction on the rank with
`idx_lt_mul` at each axis). -/
theorem wsum_lt : ∀ (m s : List Nat), Below m s → wsum m (strides s) < size s
  | [], [], _ => by
    show 0 < 1
    first
      | decide
      | exact Nat.zero_lt_one
  | [], _ :: _, h => by first | exact False.elim h | exact nomatch h | cases h
  | _ :: _, [], h => by first | exact False.elim h | exact nomatch h | cases h
  | m :: ms, n :: ns, h => by
    have hb : m < n ∧ Below ms ns := h
    have ht : wsum ms (strides ns) < size ns := wsum_lt ms ns hb.2
    show m * size ns + wsum ms (strides ns) < n * size ns
    exact idx_lt_mul (size ns) (wsum ms (strides ns)) ht n m hb.1

/-- The multi-index of a flat index i < size s is a multi-index of s. -/
theorem unflat_below : ∀ (s : List Nat) (i : Nat), i < size s → Below (unflat s i) s
  | [], _, _ => True.intro
  | n :: ns, i, hi => by
    have hi' : i < n * size ns := hi
    have hpos : 0 < size ns := Nat.pos_of_ne_zero (fun h0 => by
      rw [h0, Nat.mul_zero] at hi'
      exact Nat.not_lt_zero i hi')
    have h1 : i / size ns < n := by
      first
        | exact (Nat.div_lt_iff_lt_mul hpos).2 hi'
        | exact Nat.div_lt_of_lt_mul (by rw [Nat.mul_comm]; exact hi')
    show i / size ns < n ∧ Below (unflat ns (i % size ns)) ns
    exact ⟨h1, unflat_below ns (i % size ns) (Nat.mod_lt i hpos)⟩

/-- Adding `start` along the axis to a multi-index of the slice's shape
(the axis extent replaced by stop − start) gives a multi-index of the
input when stop ≤ shape[axis]. -/
theorem bump_below (start stop : Nat) :
    ∀ (ax : Nat) (m s : List Nat), stop ≤ nthN s ax → Below m (setN s ax (stop - start)) →
      Below (bumpN m ax start) s
  | 0, [], [], _, _ => True.intro
  | _ + 1, [], [], _, _ => True.intro
  | 0, [], _ :: _, _, h => by first | exact False.elim h | exact nomatch h | cases h
  | _ + 1, [], _ :: _, _, h => by first | exact False.elim h | exact nomatch h | cases h
  | 0, _ :: _, [], _, h => by first | exact False.elim h | exact nomatch h | cases h
  | _ + 1, _ :: _, [], _, h => by first | exact False.elim h | exact nomatch h | cases h
  | 0, m0 :: ms, n :: ns, hst, h => by
    have hst' : stop ≤ n := hst
    have h' : m0 < stop - start ∧ Below ms ns := h
    have h1 : m0 < stop - start := h'.1
    show m0 + start < n ∧ Below ms ns
    exact ⟨by omega, h'.2⟩
  | k + 1, m0 :: ms, n :: ns, hst, h => by
    have hst' : stop ≤ nthN ns k := hst
    have h' : m0 < n ∧ Below ms (setN ns k (stop - start)) := h
    show m0 < n ∧ Below (bumpN ms k start) ns
    exact ⟨h'.1, bump_below start stop k ms ns hst' h'.2⟩

/-- slice in bounds: with stop ≤ shape[axis] (the registry's rule), the
source of every output element k < size sliceShape is an input element. -/
theorem slice_src_lt (a : Attr) (hstop : a.stop ≤ nthN a.shape a.ax) (k : Nat) (hk : k < size a.sliceShape) :
    wsum (bumpN (unflat a.sliceShape k) a.ax a.start) (strides a.shape) < size a.shape :=
  wsum_lt (bumpN (unflat a.sliceShape k) a.ax a.start) a.shape
    (bump_below a.start a.stop a.ax (unflat a.sliceShape k) a.shape hstop (unflat_below a.sliceShape k hk))

/-- Every entry of slice's index list is below the input's size. -/
theorem sliceIdx_lt (a : Attr) (hstop : a.stop ≤ nthN a.shape a.ax) (k : Nat) (hk : k < size a.sliceShape) :
    nthN a.sliceIdx k < size a.shape := by
  have e : nthN a.sliceIdx k = wsum (bumpN (unflat a.sliceShape k) a.ax a.start) (strides a.shape) :=
    nthN_upto_map _ (size a.sliceShape) k hk
  rw [e]
  exact slice_src_lt a hstop k hk

/-- A coordinate of a multi-index of s is below s's extent there. -/
theorem below_nth : ∀ (m s : List Nat), Below m s → ∀ d, d < s.length → nthN m d < nthN s d
  | [], [], _, _, hd => absurd hd (Nat.not_lt_zero _)
  | [], _ :: _, h, _, _ => by first | exact False.elim h | exact nomatch h | cases h
  | _ :: _, [], h, _, _ => by first | exact False.elim h | exact nomatch h | cases h
  | m :: ms, n :: ns, h, 0, _ => by
    have hb : m < n ∧ Below ms ns := h
    exact hb.1
  | m :: ms, n :: ns, h, d + 1, hd => by
    have hb : m < n ∧ Below ms ns := h
    exact below_nth ms ns hb.2 d (Nat.lt_of_succ_lt_succ hd)

/-- A list of s's length whose every entry is below s's extent there is a
multi-index of s. -/
theorem below_of_nth : ∀ (m s : List Nat), m.length = s.length →
    (∀ d, d < s.length → nthN m d < nthN s d) → Below m s
  | [], [], _, _ => True.intro
  | [], _ :: _, hl, _ => by
    first
      | exact absurd hl (Nat.succ_ne_zero _).symm
      | cases hl
  | _ :: _, [], hl, _ => by
    first
      | exact absurd hl (Nat.succ_ne_zero _)
      | cases hl
  | m :: ms, n :: ns, hl, h => by
    have hl' : ms.length = ns.length := Nat.succ.inj hl
    show m < n ∧ Below ms ns
    exact ⟨h 0 (Nat.succ_pos _), below_of_nth ms ns hl' (fun d hd => h (d + 1) (Nat.succ_lt_succ hd))⟩

/-- broadcast_to in bounds: when shape broadcasts to toShape (the
registry's `BroadcastShape`: aligned on the right, each extent 1 or the
target's), every entry of the index list is below the input's size —
coordinate d of the source is 0 < 1 where the extent is 1, else the
output's coordinate there, below the target's extent, which is the
input's. -/
theorem bcastIdx_lt (a : Attr) (hlen : a.shape.length ≤ a.toShape.length)
    (hb : ∀ d, d < a.shape.length →
      nthN a.shape d = 1 ∨ nthN a.shape d = nthN a.toShape (a.toShape.length - a.shape.length + d))
    (k : Nat) (hk : k < size a.toShape) : nthN a.bcastIdx k < size a.shape := by
  have e : nthN a.bcastIdx k = wsum ((upto a.shape.length).map (fun d =>
      if nthN a.shape d = 1 then 0 else nthN (unflat a.toShape k) (a.toShape.length - a.shape.length + d)))
      (strides a.shape) := nthN_upto_map _ (size a.toShape) k hk
  rw [e]
  apply wsum_lt
  refine below_of_nth _ a.shape ?_ ?_
  · exact length_idx _ _
  · intro d hd
    rw [nthN_upto_map _ a.shape.length d hd]
    show (if nthN a.shape d = 1 then 0 else nthN (unflat a.toShape k) (a.toShape.length - a.shape.length + d)) <
      nthN a.shape d
    by_cases h1 : nthN a.shape d = 1
    · rw [if_pos h1]
      omega
    · rw [if_neg h1]
      have h2 : nthN a.shape d = nthN a.toShape (a.toShape.length - a.shape.length + d) := by
        cases hb d hd with
        | inl h => exact absurd h h1
        | inr h => exact h
      rw [h2]
      exact below_nth (unflat a.toShape k) a.toShape (unflat_below a.toShape k hk) _ (by omega)

/-- tile in bounds: when every extent of the input is positive (an empty
input axis has only the empty output extent under the registry's rule, so
then there is no k), every entry of the index list is below the input's
size — coordinate d of the source is a remainder modulo shape[d]. -/
theorem tileIdx_lt (a : Attr) (hpos : ∀ d, d < a.shape.length → 0 < nthN a.shape d)
    (k : Nat) (hk : k < size a.toShape) : nthN a.tileIdx k < size a.shape := by
  have e : nthN a.tileIdx k = wsum ((upto a.shape.length).map (fun d =>
      nthN (unflat a.toShape k) d % nthN a.shape d)) (strides a.shape) :=
    nthN_upto_map _ (size a.toShape) k hk
  rw [e]
  apply wsum_lt
  refine below_of_nth _ a.shape ?_ ?_
  · exact length_idx _ _
  · intro d hd
    rw [nthN_upto_map _ a.shape.length d hd]
    show nthN (unflat a.toShape k) d % nthN a.shape d < nthN a.shape d
    exact Nat.mod_lt _ (hpos d hd)

/-- concat in bounds, block by block: if p is below the inputs' total
extent along the axis and, for every input s and every q below its extent
there, m with q along the axis is a multi-index of s, then `concatSrc`
names an element of the flat concatenation (offset by base): it is below
base + Σ size s. (The hypothesis on m is what the registry's concat rule —
equal ranks, equal extents off the axis — gives for a multi-index of the
output; `inbounds_test.go` checks it on every small accepted instance.) -/
theorem concatSrc_lt (ax : Nat) (m : List Nat) :
    ∀ (ss : List (List Nat)) (p base : Nat),
      p < (ss.map (fun s => nthN s ax)).foldr (· + ·) 0 →
      (∀ s, s ∈ ss → ∀ q, q < nthN s ax → Below (setN m ax q) s) →
      concatSrc ax m ss p base < base + totalSize ss
  | [], _, _, hp, _ => absurd hp (Nat.not_lt_zero _)
  | s :: ss, p, base, hp, H => by
    have hp' : p < nthN s ax + (ss.map (fun s => nthN s ax)).foldr (· + ·) 0 := hp
    show (if p < nthN s ax then base + wsum (setN m ax p) (strides s)
      else concatSrc ax m ss (p - nthN s ax) (base + size s)) < base + (size s + totalSize ss)
    by_cases h1 : p < nthN s ax
    · rw [if_pos h1]
      have h2 : wsum (setN m ax p) (strides s) < size s := wsum_lt (setN m ax p) s (H s (List.Mem.head _) p h1)
      omega
    · rw [if_neg h1]
      have h3 : concatSrc ax m ss (p - nthN s ax) (base + size s) < base + size s + totalSize ss :=
        concatSrc_lt ax m ss (p - nthN s ax) (base + size s) (by omega)
          (fun s' hs' q hq => H s' (List.Mem.tail _ hs') q hq)
      omega

/-- The [A, K, B] view of a shape around an axis below its rank has the
shape's element count: size s = size (s.take ax) · (s[ax] · size (s.drop (ax + 1))). -/
theorem size_split : ∀ (ax : Nat) (s : List Nat), ax < s.length →
    size s = size (s.take ax) * (nthN s ax * size (s.drop (ax + 1)))
  | _, [], h => absurd h (Nat.not_lt_zero _)
  | 0, n :: ns, _ => by
    show n * size ns = 1 * (n * size ns)
    rw [Nat.one_mul]
  | k + 1, n :: ns, h => by
    have h' : k < ns.length := Nat.lt_of_succ_lt_succ h
    show n * size ns = n * size (ns.take k) * (nthN ns k * size (ns.drop (k + 1)))
    rw [size_split k ns h']
    first
      | rw [Nat.mul_assoc]
      | exact (Nat.mul_assoc _ _ _).symm

/-- gather in bounds: with the axis below the rank and every index below
the axis extent (the registry's rules), output element i of the
[A, J, B] view reads (p·K + index[j])·B + r < A·K·B = size shape. -/
theorem gather_src_lt (a : Attr) (hax : a.ax < a.shape.length)
    (hidx : ∀ j, j < a.perm.length → nthN a.perm j < a.dimK)
    (i : Nat) (hi : i < a.dimA * (a.perm.length * a.dimB)) :
    (i / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (i / a.dimB % a.perm.length)) * a.dimB + i % a.dimB <
      size a.shape := by
  have hJB : 0 < a.perm.length * a.dimB := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.mul_zero] at hi
    exact Nat.not_lt_zero i hi)
  have hJ : 0 < a.perm.length := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.zero_mul] at hJB
    first | exact Nat.lt_irrefl 0 hJB | omega)
  have hB : 0 < a.dimB := Nat.pos_of_ne_zero (fun h0 => by
    rw [h0, Nat.mul_zero] at hJB
    first | exact Nat.lt_irrefl 0 hJB | omega)
  have hp : i / (a.perm.length * a.dimB) < a.dimA := by
    first
      | exact (Nat.div_lt_iff_lt_mul hJB).2 hi
      | exact Nat.div_lt_of_lt_mul (by rw [Nat.mul_comm]; exact hi)
  have hq : nthN a.perm (i / a.dimB % a.perm.length) < a.dimK := hidx _ (Nat.mod_lt _ hJ)
  have hr : i % a.dimB < a.dimB := Nat.mod_lt _ hB
  have h1 := idx_lt_mul a.dimK _ hq a.dimA _ hp
  have h2 := idx_lt_mul a.dimB _ hr (a.dimA * a.dimK) _ h1
  rw [size_split a.ax a.shape hax]
  show _ < a.dimA * (a.dimK * a.dimB)
  first
    | (rw [← Nat.mul_assoc]; exact h2)
    | exact Nat.lt_of_lt_of_le h2 (Nat.le_of_eq (Nat.mul_assoc _ _ _))

/-- Every entry of gather's index list is below the input's size. -/
theorem gatherIdx_lt (a : Attr) (hax : a.ax < a.shape.length)
    (hidx : ∀ j, j < a.perm.length → nthN a.perm j < a.dimK)
    (k : Nat) (hk : k < a.dimA * (a.perm.length * a.dimB)) : nthN a.gatherIdx k < size a.shape := by
  have e : nthN a.gatherIdx k =
      (k / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (k / a.dimB % a.perm.length)) * a.dimB + k % a.dimB :=
    nthN_upto_map _ (a.dimA * (a.perm.length * a.dimB)) k hk
  rw [e]
  exact gather_src_lt a hax hidx k hk

/-! ### pad in bounds

`Attr.padIdx` names, for every output element, its input flat index or the
sentinel `size shape` at a constant-fill position (the gather reads 0
there, the scatter adds nothing). Under the registry's pad rule
(`padGeometry`: the widths are 2·rank naturals, every begin then every
end; in reflect mode both widths of an axis below its extent unless both
are 0; edge padding only of a non-empty axis unless both widths are 0),
every entry is one or the other (`padIdx_le`): pad reads and writes only
inside its input. -/

/-- The registry's rule for one axis of pad: mode 1 (reflect) needs both
widths below the extent unless both are 0; mode 2 (edge) a non-empty axis
unless both widths are 0. -/
def PadAxisOk (mode : Int) (b e n : Nat) : Prop :=
  (mode = 1 → (b = 0 ∧ e = 0) ∨ (b < n ∧ e < n)) ∧ (mode = 2 → (b = 0 ∧ e = 0) ∨ 0 < n)

/-- One axis, outside [b, b + n): reflect mirrors without repeating the
edge, edge repeats it, constant reads nothing — an input position either way. -/
theorem padOut_lt (mode : Int) (o b e n i : Nat) (ho : o < n + b + e) (hok : PadAxisOk mode b e n)
    (hout : b ≤ o → n ≤ o - b)
    (h : (if mode = 1 then (if o < b then some (b - o) else some (2 * (n - 1) - (o - b)))
      else if mode = 2 then (if o < b then some 0 else some (n - 1))
      else none) = some i) : i < n := by
  by_cases hm1 : mode = 1
  · rw [if_pos hm1] at h
    have hr : (b = 0 ∧ e = 0) ∨ (b < n ∧ e < n) := hok.1 hm1
    by_cases hob : o < b
    · rw [if_pos hob] at h
      have h2 : b - o = i := Option.some.inj h
      cases hr with
      | inl hz =>
        have hz1 := hz.1
        omega
      | inr hz =>
        have hz1 := hz.1
        omega
    · rw [if_neg hob] at h
      have h2 : 2 * (n - 1) - (o - b) = i := Option.some.inj h
      have hno : n ≤ o - b := hout (by omega)
      cases hr with
      | inl hz =>
        have hz1 := hz.1
        have hz2 := hz.2
        omega
      | inr hz =>
        have hz1 := hz.1
        omega
  · rw [if_neg hm1] at h
    by_cases hm2 : mode = 2
    · rw [if_pos hm2] at h
      have hr : (b = 0 ∧ e = 0) ∨ 0 < n := hok.2 hm2
      by_cases hob : o < b
      · rw [if_pos hob] at h
        have h2 : 0 = i := Option.some.inj h
        cases hr with
        | inl hz =>
          have hz1 := hz.1
          omega
        | inr hz => omega
      · rw [if_neg hob] at h
        have h2 : n - 1 = i := Option.some.inj h
        have hno : n ≤ o - b := hout (by omega)
        cases hr with
        | inl hz =>
          have hz1 := hz.1
          have hz2 := hz.2
          omega
        | inr hz => omega
    · rw [if_neg hm2] at h
      first
        | exact Option.noConfusion h
        | cases h

/-- One axis: the source of an output position o < n + b + e, when there
is one, is an input position. -/
theorem padSrc_lt (mode : Int) (o b e n i : Nat) (ho : o < n + b + e) (hok : PadAxisOk mode b e n)
    (h : Attr.padSrc mode o b n = some i) : i < n := by
  first
    | unfold Attr.padSrc at h
    | rw [Attr.padSrc] at h
  by_cases hin : b ≤ o ∧ o - b < n
  · rw [if_pos hin] at h
    have h2 : o - b = i := Option.some.inj h
    have h3 := hin.2
    omega
  · rw [if_neg hin] at h
    exact padOut_lt mode o b e n i ho hok (fun hbo => Nat.le_of_not_lt (fun hlt => hin ⟨hbo, hlt⟩)) h

/-- Every axis: the output coordinate below the padded extent, and the
registry's rule (coordinates, begin widths, end widths, extents). -/
def PadOk (mode : Int) : List Nat → List Nat → List Nat → List Nat → Prop
  | [], [], [], [] => True
  | o :: os, b :: bs, e :: es, n :: ns => (o < n + b + e ∧ PadAxisOk mode b e n) ∧ PadOk mode os bs es ns
  | _, _, _, _ => False

/-- A source multi-index of pad, when there is one, is a multi-index of the input. -/
theorem padSrcs_below (mode : Int) : ∀ (os bs es ns s : List Nat), PadOk mode os bs es ns →
    Attr.padSrcs mode os bs ns = some s → Below s ns
  | [], [], [], [], s, _, h => by
    have h2 : ([] : List Nat) = s := Option.some.inj h
    rw [← h2]
    exact True.intro
  | [], [], [], _ :: _, _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | [], [], _ :: _, _, _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | [], _ :: _, _, _, _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | _ :: _, [], _, _, _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | _ :: _, _ :: _, [], _, _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | _ :: _, _ :: _, _ :: _, [], _, hp, _ => by first | exact False.elim hp | exact nomatch hp | cases hp
  | o :: os, b :: bs, e :: es, n :: ns, s, hp, h => by
    have hp' : (o < n + b + e ∧ PadAxisOk mode b e n) ∧ PadOk mode os bs es ns := hp
    revert h
    first
      | rw [Attr.padSrcs]
      | show (match Attr.padSrc mode o b n, Attr.padSrcs mode os bs ns with
          | some i, some rest => some (i :: rest)
          | _, _ => none) = some s → Below s (n :: ns)
    cases h1 : Attr.padSrc mode o b n with
    | none =>
      intro h'
      have h3 : (none : Option (List Nat)) = some s := h'
      first
        | exact Option.noConfusion h3
        | cases h3
    | some i =>
      cases h2 : Attr.padSrcs mode os bs ns with
      | none =>
        intro h'
        have h3 : (none : Option (List Nat)) = some s := h'
        first
          | exact Option.noConfusion h3
          | cases h3
      | some rest =>
        intro h'
        have h3 : some (i :: rest) = some s := h'
        have h4 : i :: rest = s := Option.some.inj h3
        rw [← h4]
        show i < n ∧ Below rest ns
        exact ⟨padSrc_lt mode o b e n i hp'.1.1 hp'.1.2 h1, padSrcs_below mode os bs es ns rest hp'.2 h2⟩

/-- `PadOk` coordinate by coordinate. -/
theorem padOk_of_nth (mode : Int) : ∀ (os bs es ns : List Nat), os.length = ns.length →
    bs.length = ns.length → es.length = ns.length →
    (∀ d, d < ns.length → nthN os d < nthN ns d + nthN bs d + nthN es d ∧
      PadAxisOk mode (nthN bs d) (nthN es d) (nthN ns d)) →
    PadOk mode os bs es ns
  | [], [], [], [], _, _, _, _ => True.intro
  | _ :: _, _, _, [], h1, _, _, _ => by first | exact absurd h1 (Nat.succ_ne_zero _) | cases h1
  | [], _ :: _, _, [], _, h2, _, _ => by first | exact absurd h2 (Nat.succ_ne_zero _) | cases h2
  | [], [], _ :: _, [], _, _, h3, _ => by first | exact absurd h3 (Nat.succ_ne_zero _) | cases h3
  | [], _, _, _ :: _, h1, _, _, _ => by first | exact absurd h1 (Nat.succ_ne_zero _).symm | cases h1
  | _ :: _, [], _, _ :: _, _, h2, _, _ => by first | exact absurd h2 (Nat.succ_ne_zero _).symm | cases h2
  | _ :: _, _ :: _, [], _ :: _, _, _, h3, _ => by first | exact absurd h3 (Nat.succ_ne_zero _).symm | cases h3
  | o :: os, b :: bs, e :: es, n :: ns, h1, h2, h3, H => by
    show (o < n + b + e ∧ PadAxisOk mode b e n) ∧ PadOk mode os bs es ns
    exact ⟨H 0 (Nat.succ_pos _),
      padOk_of_nth mode os bs es ns (Nat.succ.inj h1) (Nat.succ.inj h2) (Nat.succ.inj h3)
        (fun d hd => H (d + 1) (Nat.succ_lt_succ hd))⟩

theorem length_unflat : ∀ (s : List Nat) (i : Nat), (unflat s i).length = s.length
  | [], _ => rfl
  | _ :: ns, i => by
    show (unflat ns (i % size ns)).length + 1 = ns.length + 1
    rw [length_unflat ns (i % size ns)]

theorem nthN_take : ∀ (l : List Nat) (n d : Nat), d < n → nthN (l.take n) d = nthN l d
  | _, 0, _, hd => absurd hd (Nat.not_lt_zero _)
  | [], _ + 1, _, _ => rfl
  | _ :: _, _ + 1, 0, _ => rfl
  | _ :: as, n + 1, d + 1, hd => nthN_take as n d (Nat.lt_of_succ_lt_succ hd)

theorem nthN_drop : ∀ (l : List Nat) (n d : Nat), nthN (l.drop n) d = nthN l (n + d)
  | l, 0, d => by
    show nthN l d = nthN l (0 + d)
    rw [Nat.zero_add]
  | [], _ + 1, _ => rfl
  | _ :: as, n + 1, d => by
    rw [Nat.add_right_comm n 1 d]
    show nthN (as.drop n) d = nthN as (n + d)
    exact nthN_drop as n d

/-- pad's index list meets `PadOk` at every output element when the
widths are 2·rank naturals and every axis meets the registry's rule. -/
theorem pad_ok (a : Attr) (hlen : a.perm.length = 2 * a.shape.length)
    (hok : ∀ d, d < a.shape.length →
      PadAxisOk a.axis2 (nthN a.perm d) (nthN a.perm (a.shape.length + d)) (nthN a.shape d))
    (k : Nat) (hk : k < size a.padShape) :
    PadOk a.axis2 (unflat a.padShape k) (a.perm.take a.shape.length) (a.perm.drop a.shape.length) a.shape := by
  have hps : a.padShape.length = a.shape.length := length_idx _ _
  have hb : Below (unflat a.padShape k) a.padShape := unflat_below a.padShape k hk
  refine padOk_of_nth a.axis2 _ _ _ a.shape ?_ ?_ ?_ ?_
  · rw [length_unflat, hps]
  · rw [List.length_take]
    omega
  · rw [List.length_drop]
    omega
  · intro d hd
    rw [nthN_take a.perm a.shape.length d hd, nthN_drop a.perm a.shape.length d]
    refine ⟨?_, hok d hd⟩
    have h1 : nthN (unflat a.padShape k) d < nthN a.padShape d :=
      below_nth (unflat a.padShape k) a.padShape hb d (by rw [hps]; exact hd)
    have h2 : nthN a.padShape d = nthN a.shape d + nthN a.perm d + nthN a.perm (a.shape.length + d) :=
      nthN_upto_map _ a.shape.length d hd
    omega

/-- pad in bounds: under the registry's pad rule, every entry of pad's
index list is an input element (< size shape) or the fill sentinel
(= size shape). -/
theorem padIdx_le (a : Attr) (hlen : a.perm.length = 2 * a.shape.length)
    (hok : ∀ d, d < a.shape.length →
      PadAxisOk a.axis2 (nthN a.perm d) (nthN a.perm (a.shape.length + d)) (nthN a.shape d))
    (k : Nat) (hk : k < size a.padShape) :
    nthN a.padIdx k < size a.shape ∨ nthN a.padIdx k = size a.shape := by
  have hok' := pad_ok a hlen hok k hk
  -- The entry is padIdx's own `match` at k (`nthN_upto_map`); split it.
  have e : nthN a.padIdx k = _ := nthN_upto_map _ (size a.padShape) k hk
  rw [e]
  first
    | (cases hs : Attr.padSrcs a.axis2 (unflat a.padShape k) (a.perm.take a.shape.length) a.shape with
        | none => exact Or.inr rfl
        | some s =>
          exact Or.inl (wsum_lt s a.shape (padSrcs_below a.axis2 (unflat a.padShape k)
            (a.perm.take a.shape.length) (a.perm.drop a.shape.length) a.shape s hok' hs)))
    | (split
       next s hs =>
         exact Or.inl (wsum_lt s a.shape (padSrcs_below a.axis2 (unflat a.padShape k)
           (a.perm.take a.shape.length) (a.perm.drop a.shape.length) a.shape s hok' hs))
       next => exact Or.inr rfl)

/-! ## Instances, checked by the kernel against independently computed lists -/

/-- Attributes with every field empty. -/
def attr0 : Attr :=
  { c := 0, lo := 0, hi := 0, axis := 0, shape := [], axis2 := 0, perm := [], start := 0, stop := 0,
    toShape := [], values := [], shapes := [] }

/-- transpose of [2, 3]: numpy `arange(6).reshape(2, 3).T`. -/
theorem transpose_idx_2x3 : Attr.transposeIdx { attr0 with shape := [2, 3], axis := 0, axis2 := 1 } =
    [0, 3, 1, 4, 2, 5] := by decide +kernel

/-- transpose of [2, 3, 4] swapping axes −1 and 0: numpy `swapaxes(-1, 0)`. -/
theorem transpose_idx_neg : Attr.transposeIdx { attr0 with shape := [2, 3, 4], axis := -1, axis2 := 0 } =
    [0, 12, 4, 16, 8, 20, 1, 13, 5, 17, 9, 21, 2, 14, 6, 18, 10, 22, 3, 15, 7, 19, 11, 23] := by decide +kernel

/-- permute of [2, 3, 4] by [2, 0, 1]: numpy `transpose(·, (2, 0, 1))`. -/
theorem permute_idx_201 : Attr.permuteIdx { attr0 with shape := [2, 3, 4], perm := [2, 0, 1] } =
    [0, 4, 8, 12, 16, 20, 1, 5, 9, 13, 17, 21, 2, 6, 10, 14, 18, 22, 3, 7, 11, 15, 19, 23] := by decide +kernel

/-- slice of [3, 4] along axis 1 from 1 to 3: numpy `[:, 1:3]`. -/
theorem slice_idx_axis1 : Attr.sliceIdx { attr0 with shape := [3, 4], axis := 1, start := 1, stop := 3 } =
    [1, 2, 5, 6, 9, 10] := by decide +kernel

/-- broadcast_to of [3, 1] to [2, 3, 4]: numpy `broadcast_to`. -/
theorem broadcast_idx_31_234 : Attr.bcastIdx { attr0 with shape := [3, 1], toShape := [2, 3, 4] } =
    [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2] := by decide +kernel

/-- concat of [2, 2] and [2, 3] along axis 1: numpy `concatenate(·, axis=1)`
of `arange(4)` and `4 + arange(6)`. -/
theorem concat_idx_axis1 : Attr.concatIdx { attr0 with shape := [2, 2], axis := 1, shapes := [[2, 2], [2, 3]] } =
    [0, 1, 4, 5, 6, 2, 3, 7, 8, 9] := by decide +kernel

/-- tile of [2, 3] to [4, 6] (numpy `tile(arange(6).reshape(2, 3), (2, 2))`,
written out by hand: rows [0 1 2 0 1 2], [3 4 5 3 4 5], twice). -/
theorem tile_idx_23_46 : Attr.tileIdx { attr0 with shape := [2, 3], toShape := [4, 6] } =
    [0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5, 0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5] := by decide +kernel

/-- tile of [2, 1] to [2, 3] (numpy `tile(arange(2).reshape(2, 1), (1, 3))`). -/
theorem tile_idx_21_23 : Attr.tileIdx { attr0 with shape := [2, 1], toShape := [2, 3] } =
    [0, 0, 0, 1, 1, 1] := by decide +kernel

/-- scatter into [2, 3] along axis 1 at indices [[2], [0]] (shape [2, 1]):
torch `x.scatter(1, [[2], [0]], u)` writes y[0, 2] = u[0, 0] and
y[1, 0] = u[1, 0]; in x ++ u (six then two elements) positions 2 and 3
read 6 and 7, the rest x (by hand). -/
theorem scatter_idx_23 : Attr.scatterIdx { attr0 with shape := [2, 3], axis := 1, perm := [2, 0],
    shapes := [[2, 3], [2, 1]] } = [0, 1, 6, 7, 4, 5] := by decide +kernel

/-- gather of [2, 3, 2] along axis 1 at [2, 0, 2, 1]: numpy `take(·, [2, 0, 2, 1], axis=1)`. -/
theorem gather_idx_take : Attr.gatherIdx { attr0 with shape := [2, 3, 2], axis := 1, perm := [2, 0, 2, 1] } =
    [4, 5, 0, 1, 4, 5, 2, 3, 10, 11, 6, 7, 10, 11, 8, 9] := by decide +kernel

/-- pad of [2, 3] by widths (1, 0) and (0, 2), constant mode: numpy `pad`
with the fill written as the sentinel 6 (= size, read as 0 by a gather). -/
theorem pad_idx_constant :
    Attr.padIdx { attr0 with shape := [2, 3], perm := [1, 0, 0, 2], axis2 := 0 } =
    [6, 6, 6, 6, 6, 0, 1, 2, 6, 6, 3, 4, 5, 6, 6] := by decide +kernel

/-- The same in reflect mode: numpy `pad(·, mode="reflect")`. -/
theorem pad_idx_reflect :
    Attr.padIdx { attr0 with shape := [2, 3], perm := [1, 0, 0, 2], axis2 := 1 } =
    [3, 4, 5, 4, 3, 0, 1, 2, 1, 0, 3, 4, 5, 4, 3] := by decide +kernel

/-- The same in edge mode: numpy `pad(·, mode="edge")`. -/
theorem pad_idx_edge :
    Attr.padIdx { attr0 with shape := [2, 3], perm := [1, 0, 0, 2], axis2 := 2 } =
    [0, 1, 2, 2, 2, 0, 1, 2, 2, 2, 3, 4, 5, 5, 5] := by decide +kernel

end Tlcheck
