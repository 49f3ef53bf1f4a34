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
  `concat_reads`, `gather_op_reads`), in row-major coordinates;
* `wsum_unflat`: those coordinates are row-major: for i < size s, the
  multi-index `unflat s i` weighted by `strides s` is i again, so
  `unflat` and `wsum · (strides s)` are the flat ↔ multi-index bijection
  the formulas are written in;
* kernel-checked instances against lists computed independently (with
  numpy's `transpose`, `swapaxes`, slicing, `broadcast_to` and
  `concatenate` on `arange`): `transpose_idx_2x3`, `transpose_idx_neg`,
  `permute_idx_201`, `slice_idx_axis1`, `broadcast_idx_31_234`,
  `concat_idx_axis1`, and `gather_idx_take` (numpy's `take`).

Not proved here: that the source multi-index of every output element is in
bounds of the input shape for every attribute the registry accepts (the
instances check it on their data; the registry's shape rules check it at
run time).
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

/-- concat: output element k (multi-index m) is element `concatSrc` of the
flat concatenation: the input whose block along the axis holds m[axis],
at m with the axis coordinate shifted into that input. -/
theorem concat_reads (a : Attr) (xs : List (List Rat)) (k : Nat) (hk : k < size a.concatShape) :
    nth (Prim.fwd .concat a xs) k =
      nth (catAll xs) (concatSrc a.ax (unflat a.concatShape k) a.shapes (nthN (unflat a.concatShape k) a.ax) 0) :=
  gather_reads (size a.concatShape)
    (fun i => concatSrc a.ax (unflat a.concatShape i) a.shapes (nthN (unflat a.concatShape i) a.ax) 0) (catAll xs) k hk

/-- gather (the registry's, constant indices `perm` along the axis): output
element k, at (p, j, r) in the [A, J, B] view, is input element
(p, index[j], r) of the [A, K, B] view. -/
theorem gather_op_reads (a : Attr) (x : List Rat) (k : Nat) (hk : k < a.dimA * (a.perm.length * a.dimB)) :
    nth (Prim.fwd .gather a [x]) k =
      nth x ((k / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (k / a.dimB % a.perm.length)) * a.dimB + k % a.dimB) :=
  gather_reads (a.dimA * (a.perm.length * a.dimB))
    (fun i => (i / (a.perm.length * a.dimB) * a.dimK + nthN a.perm (i / a.dimB % a.perm.length)) * a.dimB + i % a.dimB)
    x k hk

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
