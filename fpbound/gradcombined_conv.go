package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The declarative VJPs of conv (vjp34): in x a conv_transpose of the
// cotangent by the same W, in W and b (parameter gradients, paramTarget)
// pads, slices and one matmul per kernel offset. The package doc,
// "Gradients: the combined first-order bound", states them and their
// part of the proof.

// convGeom is a conv node's geometry read from its window: lead the
// product of the axes before the channel axis, cin and cout the channel
// counts, n and no the input and output spatial extents, k, s, dl, p
// the kernel, stride, dilation and (symmetric) padding per spatial axis.
type convGeom struct {
	lead, cin, cout, groups int
	n, no, k, s, dl, p      []int
	w                       *spec.Window
}

// convGeomOf reads node nd's geometry (x the input's shape), or a reason.
func convGeomOf(nd *irsem.Node, xs spec.Shape) (*convGeom, string) {
	w := nd.Kind.Window
	if w == nil || len(w.Kernel) == 0 {
		return nil, "a conv without its window"
	}
	r := len(w.Kernel)
	if len(xs) < r+1 || len(nd.Shape) != len(xs) {
		return nil, fmt.Sprintf("input %v, output %v for %d spatial axes", xs, nd.Shape, r)
	}
	ints := func(v []int, def int) []int {
		if v == nil {
			v = make([]int, r)
			for i := range v {
				v[i] = def
			}
		}
		return v
	}
	g := &convGeom{
		lead: spec.Shape(xs[:len(xs)-r-1]).Size(), cin: xs[len(xs)-r-1], cout: nd.Shape[len(xs)-r-1], groups: max(w.Groups, 1),
		n: xs[len(xs)-r:].Clone(), no: nd.Shape[len(xs)-r:].Clone(),
		k: w.Kernel, s: ints(w.Stride, 1), dl: ints(w.Dilation, 1), p: ints(w.Padding, 0), w: w,
	}
	if len(g.s) != r || len(g.dl) != r || len(g.p) != r {
		return nil, "stride, dilation or padding not one entry per spatial axis"
	}
	if w.Padding == nil && w.Pads != nil {
		return nil, "explicit begin/end pads (the IR's conv pads symmetrically)"
	}
	return g, ""
}

// convDeclVJP: conv(x; W, b)'s registry VJP in x (convBackX: the
// transposed correlation of dy with W) is conv_transpose(dy; W) with the
// conv's kernel, stride, dilation, groups and pads (begin = end = the
// padding), in_channels and out_channels swapped, no bias, and on each
// spatial axis the output padding (n + 2p − dl·(k − 1) − 1) mod s that
// makes its extent x's: element i of dx is the same sum Σ dy·W over the
// same (output position, kernel offset, output channel) triples,
// conv_transpose's one sum (foldDot) as convBackX's.
func convDeclVJP(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	if !e.HasWeight() {
		return nil, "a conv without its W"
	}
	xs := b.c.Nodes[nd.Parents[0]].Shape
	g, reason := convGeomOf(nd, xs)
	if reason != "" {
		return nil, reason
	}
	r := len(g.k)
	op := make([]int, r)
	for d := 0; d < r; d++ {
		span := g.n[d] + 2*g.p[d] - g.dl[d]*(g.k[d]-1) - 1
		if span < 0 || span/g.s[d]+1 != g.no[d] {
			return nil, fmt.Sprintf("spatial axis %d: output extent %d for input %d", d, g.no[d], g.n[d])
		}
		op[d] = span % g.s[d]
	}
	win := &spec.Window{Kernel: append([]int{}, g.k...), Stride: append([]int{}, g.s...), Pads: append(append([]int{}, g.p...), g.p...),
		Dilation: append([]int{}, g.dl...), OutputPadding: op, Groups: g.groups, InChannels: g.cout, OutChannels: g.cin}
	dx := b.node(irsem.Kind{Op: irsem.OpConvTranspose, Window: win}, xs, dy)
	b.cp.Entries[dx] = &irsem.Params{W: e.Weight()} // W's rationals, derived here if the payload holds a plane
	return []int{dx}, ""
}

// convParamTarget is conv node nd's parameter gradient (field W or b)
// from its cotangent dy, x its forward input (paramTarget), as the
// registry's conv VJP computes it, for one group:
//
//	D  = reshape(permute(reshape(dy, [L, C_out, S]), [1, 0, 2]), [C_out, L·S])
//	b:  reduce_sum(D, 1)                      (registry: db_c = Σ_l Σ_o dy[l, c, o])
//	W:  for each kernel offset j (row-major), X_j = x padded by p (zeros;
//	    at the end also up to the strided window's reach), sliced on every
//	    spatial axis d to [j_d·dl_d, j_d·dl_d + s_d·no_d) and, where
//	    s_d > 1, to every s_d-th element (reshape to [no_d, s_d], slice
//	    [0, 1), reshape back): X_j[l, ci, o] = x at o·s + j·dl − p;
//	    dW[:, :, j] = matmul(D, reshape(permute(X_j as [L, C_in, S],
//	    [0, 2, 1]), [L·S, C_in])), the K results reshaped to [C_out, C_in, 1]
//	    and concatenated along axis 2, then reshaped to W's shape
//	    (registry: dW[c, ci, j] = Σ_l Σ_o dy[l, c, o]·x[l, ci, o·s + j·dl − p],
//	    the terms at padding positions left out; here they are the exact
//	    products x = 0 times dy, 0 when dy is finite, added to the same
//	    sum: "any order" covers a sum with exact zero terms added).
func convParamTarget(b *cbuild, nd *irsem.Node, x int, xs spec.Shape, dy int, field string, ws spec.Shape) (int, string) {
	g, reason := convGeomOf(nd, xs)
	if reason != "" {
		return 0, reason
	}
	if g.groups != 1 {
		return 0, fmt.Sprintf("a conv of %d groups", g.groups)
	}
	r := len(g.k)
	S, L := spec.Shape(g.no).Size(), g.lead
	node := func(k irsem.Kind, s spec.Shape, ps ...int) int { return b.node(k, s, ps...) }
	reshape := func(v int, from, to spec.Shape) int {
		if from.Equal(to) {
			return v
		}
		return node(irsem.Kind{Op: irsem.OpReshape, InShape: from.Clone(), OutShape: to.Clone()}, to, v)
	}
	ys := b.c.Nodes[dy].Shape
	d3 := reshape(dy, ys, spec.Shape{L, g.cout, S})
	dm := reshape(node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0, 2}}, spec.Shape{g.cout, L, S}, d3), spec.Shape{g.cout, L, S}, spec.Shape{g.cout, L * S})
	if field == irsem.ParamB {
		return node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 1}, spec.Shape{g.cout}, dm), ""
	}
	if !ws.Equal(append(spec.Shape{g.cout, g.cin}, g.k...)) {
		return 0, fmt.Sprintf("W of shape %v", ws)
	}
	xv := append(spec.Shape{L, g.cin}, g.n...)
	x4 := reshape(x, xs, xv)
	widths := make([]int, 2*(r+2))
	ps := xv.Clone()
	for d := 0; d < r; d++ {
		reach := (g.k[d]-1)*g.dl[d] + g.s[d]*g.no[d] // the last window's end on the padded axis
		end := max(g.p[d], reach-g.n[d]-g.p[d])
		widths[2+d], widths[r+2+2+d] = g.p[d], end
		ps[2+d] = g.n[d] + g.p[d] + end
	}
	xp := node(irsem.Kind{Op: irsem.OpPad, Widths: widths, Mode: spec.PadConstant}, ps, x4)
	K := spec.Shape(g.k).Size()
	cols := make([]int, K)
	for j := 0; j < K; j++ {
		off := make([]int, r) // kernel offset j, row-major
		for d, rem := r-1, j; d >= 0; d-- {
			off[d], rem = rem%g.k[d], rem/g.k[d]
		}
		v, vs := xp, ps.Clone()
		for d := 0; d < r; d++ {
			a := 2 + d
			start := off[d] * g.dl[d]
			vs2 := vs.Clone()
			vs2[a] = g.s[d] * g.no[d]
			v, vs = node(irsem.Kind{Op: irsem.OpSlice, Axis: a, Start: start, End: start + g.s[d]*g.no[d]}, vs2, v), vs2
			if g.s[d] > 1 {
				split := append(append(vs[:a:a].Clone(), g.no[d], g.s[d]), vs[a+1:]...)
				v = reshape(v, vs, split)
				one := split.Clone()
				one[a+1] = 1
				v = node(irsem.Kind{Op: irsem.OpSlice, Axis: a + 1, Start: 0, End: 1}, one, v)
				vs2 := vs.Clone()
				vs2[a] = g.no[d]
				v, vs = reshape(v, one, vs2), vs2
			}
		}
		v = reshape(v, vs, spec.Shape{L, g.cin, S})
		v = node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{0, 2, 1}}, spec.Shape{L, S, g.cin}, v)
		v = reshape(v, spec.Shape{L, S, g.cin}, spec.Shape{L * S, g.cin})
		m := node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{g.cout, g.cin}, dm, v)
		cols[j] = reshape(m, spec.Shape{g.cout, g.cin}, spec.Shape{g.cout, g.cin, 1})
	}
	all := spec.Shape{g.cout, g.cin, K}
	cat := cols[0]
	if K > 1 {
		cat = node(irsem.Kind{Op: irsem.OpConcat, Axis: 2}, all, cols...)
	}
	return reshape(cat, all, ws), ""
}
