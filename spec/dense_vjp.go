package spec

// DenseVJP is implemented by a DenseLinear scalar whose LinearDense also
// serves the VJP rules of conv and conv_transpose in x. Those rules are
// products with the same constant weights: conv's dx is the transposed
// correlation of the cotangent with W, which is conv_transpose's forward
// rule applied to dy (channels C_out) with W [C_out, C_in/groups, k…] read
// as conv_transpose's [C_in', C_out'/groups, k…]; conv_transpose's dx is
// conv's forward rule of dy with its W likewise. Each dx element is the
// generic rule's fold over the same terms (the relation's pairs of one
// input position, for every output channel of its group), so the
// DenseLinear contract — a result satisfying the scalar's soundness
// theorem for the fold's semantics — carries over unchanged. The marker
// is separate from DenseLinear so that a scalar opts in (fpbound's
// interval adjoints do; its ErrOf, whose VJP runs compare-grad's sharp
// bound, keeps the element fold there).
type DenseVJP interface {
	DenseVJP()
}

// denseConvBackX runs the VJP in x of conv (transposed: of
// conv_transpose) with geometry g on a DenseVJP scalar, writing dx, by
// the forward rule of the adjoint operator (denseConv) on the geometry
// with the channel counts swapped: the relation between the two spatial
// sides, the kernel and the groups are the same, only which side is read
// and which is written changes. It reports false, leaving dx to the
// generic rule, when the scalar is not DenseVJP or the kernel declines.
func denseConvBackX[T Scalar[T]](g *winGeom, w, dy, dx []T, transposed bool) bool {
	var zero T
	if _, ok := any(zero).(DenseVJP); !ok {
		return false
	}
	gt := *g
	gt.cin, gt.cout = g.cout, g.cin
	return denseConv(&gt, dy, w, nil, dx, !transposed)
}
