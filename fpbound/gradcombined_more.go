package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The declarative VJPs of the importers' index maps and arithmetic
// (vjp34): transpose, slice, concat, neg, div, sqrt, reduce_sum and
// reduce_mean. Each is the registry's VJP rule written as IR nodes (the
// package doc, "Gradients: the combined first-order bound", table).

// transposeDeclVJP: transpose(x; a, b) swaps two axes, its own inverse:
// the registry's VJP is transpose(dy; a, b) (a copy, exact).
func transposeDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	return []int{b.node(nd.Kind.Clone(), xs, dy)}, ""
}

// sliceDeclVJP: slice(x; axis, start, end)'s registry VJP puts dy at
// [start, end) along axis and 0 elsewhere: pad(dy) with start zeros
// before and extent − end after on that axis (constant 0, exact).
func sliceDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	ax := nd.Kind.Axis
	if ax < 0 {
		ax += len(xs)
	}
	if ax < 0 || ax >= len(xs) || nd.Kind.Start < 0 || nd.Kind.End > xs[ax] || nd.Kind.End < nd.Kind.Start {
		return nil, fmt.Sprintf("slice [%d, %d) of axis %d of %v", nd.Kind.Start, nd.Kind.End, nd.Kind.Axis, xs)
	}
	w := make([]int, 2*len(xs))
	w[ax], w[len(xs)+ax] = nd.Kind.Start, xs[ax]-nd.Kind.End
	return []int{b.node(irsem.Kind{Op: irsem.OpPad, Widths: w, Mode: spec.PadConstant}, xs, dy)}, ""
}

// concatDeclVJP: concat(x₁, …, xₙ; axis)'s registry VJP gives parent t
// the slice of dy it occupies: slice(dy; axis, o_t, o_t + extent_t),
// o_t the extents before it (a copy, exact).
func concatDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	ax, bad := declAxis(nd.Kind.Axis, len(nd.Shape))
	if bad != "" {
		return nil, bad
	}
	out := make([]int, len(nd.Parents))
	o := 0
	for t, q := range nd.Parents {
		qs := b.c.Nodes[q].Shape
		if len(qs) != len(nd.Shape) {
			return nil, fmt.Sprintf("parent %d of rank %d", t, len(qs))
		}
		out[t] = b.node(irsem.Kind{Op: irsem.OpSlice, Axis: ax, Start: o, End: o + qs[ax]}, qs, dy)
		o += qs[ax]
	}
	if o != nd.Shape[ax] {
		return nil, fmt.Sprintf("parents of %d along axis %d for an output of %d", o, ax, nd.Shape[ax])
	}
	return out, ""
}

// negDeclVJP: neg's registry VJP is −1·dy = neg(dy) (exact).
func negDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	return []int{b.node(irsem.Kind{Op: irsem.OpNeg}, nd.Shape, dy)}, ""
}

// divDeclVJP: div(a, b)'s registry VJP is (dy/b, −((dy·a)/(b·b))):
// div(dy, b) and neg(div(mul_elem(dy, a), mul_elem(b, b))), each
// operation one rounding as the registry's, neg exact.
func divDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	s := nd.Shape
	pa, pb := nd.Parents[0], nd.Parents[1]
	if !b.c.Nodes[pa].Shape.Equal(s) || !b.c.Nodes[pb].Shape.Equal(s) {
		return nil, "operands of another shape than the output (div is elementwise on equal shapes)"
	}
	ga := b.node(irsem.Kind{Op: irsem.OpDiv}, s, dy, pb)
	num := b.node(irsem.Kind{Op: irsem.OpMulElem}, s, dy, pa)
	den := b.node(irsem.Kind{Op: irsem.OpMulElem}, s, pb, pb)
	gb := b.node(irsem.Kind{Op: irsem.OpNeg}, s, b.node(irsem.Kind{Op: irsem.OpDiv}, s, num, den))
	return []int{ga, gb}, ""
}

// sqrtDeclVJP: sqrt(max(x, 0))'s registry VJP is dy times the
// derivative 1/(y + y) where x > 0 (y the forward sqrt node) and 0
// where x ≤ 0: mul_elem(div(1, add(y, y)), dy), 1 a const node. It has a
// rule only where the box of y is above 0 at every element (x > 0 in
// every modelled evaluation, as y > 0 iff x > 0), as layernorm's
// σ = sqrt(σ² + ε) is; elsewhere the derivative jumps (0 at x ≤ 0,
// unbounded near 0+) and the gradient keeps the classic and boxed bounds.
func sqrtDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) ([]int, string) {
	if box.fused || len(box.box) != nd.Shape.Size() {
		return nil, "no box to decide x > 0"
	}
	for m, iv := range box.box {
		if !(iv.Lo > 0) {
			return nil, fmt.Sprintf("element %d: the box %v of sqrt's value is not above 0", m, iv)
		}
	}
	s := nd.Shape
	y := nd.ID
	d := b.node(irsem.Kind{Op: irsem.OpDiv}, s, b.full(s, spec.NewRat(1, 1)), b.node(irsem.Kind{Op: irsem.OpAdd}, s, y, y))
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, s, d, dy)}, ""
}

// reduceDeclVJP: reduce_sum(x; axis)'s registry VJP copies dy's lane
// value to every element of its lane, reduce_mean's copies dy·(1/n)
// (n the axis extent; the product one rounding, 1/n the registry's
// constant): broadcast_to(reshape(v, keep), x's shape) with v = dy or
// scale(dy; 1/n), keep x's shape with extent 1 at axis.
func reduceDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	ax, bad := declAxis(nd.Kind.Axis, len(xs))
	if bad != "" {
		return nil, bad
	}
	v := dy
	if nd.Kind.Op == irsem.OpReduceMean {
		if xs[ax] == 0 {
			return nil, "a mean over an empty axis"
		}
		v = b.node(irsem.Kind{Op: irsem.OpScale, C: spec.NewRat(1, int64(xs[ax]))}, nd.Shape, v)
	}
	keep := xs.Clone()
	keep[ax] = 1
	v = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: keep.Clone()}, keep, v)
	return []int{b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: keep.Clone(), ToShape: xs.Clone()}, xs, v)}, ""
}

// invDeclVJP: inv(x) = 1/x; its registry VJP is dy times the derivative
// −(1/(x·x)): mul_elem(neg(div(1, mul_elem(x, x))), dy), 1 a const node.
func invDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	s := nd.Shape
	x := nd.Parents[0]
	q := b.node(irsem.Kind{Op: irsem.OpDiv}, s, b.full(s, spec.NewRat(1, 1)), b.node(irsem.Kind{Op: irsem.OpMulElem}, s, x, x))
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, s, b.node(irsem.Kind{Op: irsem.OpNeg}, s, q), dy)}, ""
}

// expDeclVJP: exp's registry VJP is dy times the derivative y (the
// forward exp node itself): mul_elem(y, dy).
func expDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.ID, dy)}, ""
}

// squareDeclVJP: square(x) = x·x; its registry VJP is dy times the
// derivative x + x: mul_elem(add(x, x), dy).
func squareDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	x := nd.Parents[0]
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, b.node(irsem.Kind{Op: irsem.OpAdd}, nd.Shape, x, x), dy)}, ""
}

// The IR tags of erf (ONNX's Erf, exact GELU) and of its derivative, the
// registry's erf_deriv primitive (grad35); irsem evaluates both as
// superset tags of the registry.
const (
	opErf      irsem.Op = "erf"
	opErfDeriv irsem.Op = "erf_deriv"
)

// erfDeclVJP: erf's registry VJP is dy times the derivative erf′(x) =
// (2/√π)·e^(−x²) (x the forward parent): mul_elem(erf_deriv(x), dy), the
// derivative one registry step (its constant 2/√π is not rational, so it
// is not built from a const node; the sweeps enclose it as ErfDeriv).
func erfDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	d := b.node(irsem.Kind{Op: opErfDeriv}, nd.Shape, nd.Parents[0])
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, d, dy)}, ""
}

// declAxis is a declarative VJP's axis attribute read for a tensor of the
// given rank: a negative axis counts from the end; bad names an axis
// outside [0, rank) (the rule is then not built).
func declAxis(axis, rank int) (ax int, bad string) {
	ax = axis
	if ax < 0 {
		ax += rank
	}
	if ax < 0 || ax >= rank {
		return 0, fmt.Sprintf("axis %d for rank %d", axis, rank)
	}
	return ax, ""
}
