package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The declarative VJPs of the importers' remaining CNN and embedding
// tags (vjp36): pad (constant mode), batch_norm_eval, max_pool and
// max_pool_nd, gather. Each is the registry's VJP rule written as IR
// nodes (the package doc, "Gradients: the combined first-order bound",
// table and proof step (ii)); every node they add is an exact copy, an
// exact 0/1 product or one rounding of the registry's formula, and a sum
// the registry folds is one n-ary sum (accumulate) whose extra terms are
// exact zeros.

// padDeclVJP: pad(x; widths) in constant mode (fill value any constant:
// its cotangent goes nowhere) has the registry VJP scatter-add over
// pad's index map, which reads each input element exactly once: dx is dy
// sliced to [b_d, b_d + n_d) on every padded axis d (exact copies).
// Reflect and edge modes read an input element several times (sums):
// no rule here.
func padDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	if m := nd.Kind.Mode; m != "" && m != spec.PadConstant {
		return nil, fmt.Sprintf("pad mode %q (an input element read more than once)", m)
	}
	xs := b.c.Nodes[nd.Parents[0]].Shape
	r := len(xs)
	w := nd.Kind.Widths
	if len(w) != 2*r || len(nd.Shape) != r {
		return nil, fmt.Sprintf("widths %v for rank %d", w, r)
	}
	v, vs := dy, nd.Shape.Clone()
	for d := 0; d < r; d++ {
		if w[d] == 0 && w[r+d] == 0 {
			continue
		}
		if w[d] < 0 || w[r+d] < 0 || w[d]+xs[d]+w[r+d] != vs[d] {
			return nil, fmt.Sprintf("axis %d: widths %d, %d for extents %d → %d", d, w[d], w[r+d], xs[d], vs[d])
		}
		ns := vs.Clone()
		ns[d] = xs[d]
		v, vs = b.node(irsem.Kind{Op: irsem.OpSlice, Axis: d, Start: w[d], End: w[d] + xs[d]}, ns, v), ns
	}
	return []int{v}, ""
}

// perChannel is a const node of x's shape holding t[c] at every element
// of channel c along axis ax (a const [C] reshaped to extent 1 off the
// channel axis and broadcast: exact copies; the const holds fl(t), M1,
// as the registry's FromRat of the payload's tensor).
func (b *cbuild) perChannel(t irsem.RatTensor, xs spec.Shape, ax int) int {
	keep := make(spec.Shape, len(xs))
	for i := range keep {
		keep[i] = 1
	}
	keep[ax] = xs[ax]
	c := b.constant(irsem.RatTensor{Shape: keep.Clone(), Data: t.Data})
	return b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: keep.Clone(), ToShape: xs.Clone()}, xs, c)
}

// bnNodes appends batch_norm_eval node nd's per-channel scale s_c =
// sqrt(max(σ²_c, 0) + ε), spread over x's shape: sqrt(add(c₁, c₂)) over
// [C] (c₁ the const max(σ², 0) — fl(max(v, 0)) = max(fl(v), 0), the
// registry's Relu of its FromRat — c₂ the const ε), then perChannel's
// copies. It returns the node, the channel axis and γ (nil: 1).
func bnNodes(b *cbuild, nd *irsem.Node, e *irsem.Params) (int, int, *irsem.RatTensor, string) {
	xs := nd.Shape
	ax := nd.Kind.ChannelAxis
	if ax < 0 {
		ax += len(xs)
	}
	if ax < 0 || ax >= len(xs) {
		return 0, 0, nil, fmt.Sprintf("channel axis %d for rank %d", nd.Kind.ChannelAxis, len(xs))
	}
	C := xs[ax]
	if e == nil || e.Var == nil || e.Var.Shape.Size() != C {
		return 0, 0, nil, "a batch_norm_eval without its variance"
	}
	if e.Gamma != nil && e.Gamma.Shape.Size() != C {
		return 0, 0, nil, fmt.Sprintf("gamma of %d elements for %d channels", e.Gamma.Shape.Size(), C)
	}
	eps := spec.RatFromBig(spec.DefaultNormEps())
	if e.Eps != nil {
		eps = *e.Eps
	}
	cs := spec.Shape{C}
	vpos := irsem.RatTensor{Shape: cs.Clone(), Data: make([]spec.Rat, C)}
	for c, v := range e.Var.Data {
		if v.Big().Sign() > 0 {
			vpos.Data[c] = v
		}
	}
	s := b.node(irsem.Kind{Op: irsem.OpSqrt}, cs, b.node(irsem.Kind{Op: irsem.OpAdd}, cs, b.constant(vpos), b.full(cs, eps)))
	keep := make(spec.Shape, len(xs))
	for i := range keep {
		keep[i] = 1
	}
	keep[ax] = C
	s = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: cs.Clone(), OutShape: keep.Clone()}, keep, s)
	s = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: keep.Clone(), ToShape: xs.Clone()}, xs, s)
	return s, ax, e.Gamma, ""
}

// batchNormDeclVJP: batch_norm_eval's registry VJP in x is
// dx = (dy·γ_c)/s_c (one product, one quotient; γ = 1 when absent, and
// dy·1 = dy exactly): div(mul_elem(dy, γ spread), s spread) with s from
// bnNodes. μ, σ², γ, β are payload constants, not parents.
func batchNormDeclVJP(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	s, ax, gamma, reason := bnNodes(b, nd, e)
	if reason != "" {
		return nil, reason
	}
	xs := nd.Shape
	v := dy
	if gamma != nil {
		v = b.node(irsem.Kind{Op: irsem.OpMulElem}, xs, v, b.perChannel(*gamma, xs, ax))
	}
	return []int{b.node(irsem.Kind{Op: irsem.OpDiv}, xs, v, s)}, ""
}

// batchNormParamTarget is batch_norm_eval node nd's γ (field gamma) or β
// (beta) gradient from its cotangent dy, x its forward input, as the
// registry's VJP: dγ_c = Σ dy·q over the positions of channel c,
// q = (x − μ_c)/s_c (one difference, one quotient, one product, then one
// sum), dβ_c = Σ dy: the channel axis moved first (permute, exact),
// viewed as [C, rest] and one reduce_sum along axis 1.
func batchNormParamTarget(b *cbuild, nd *irsem.Node, e *irsem.Params, x, dy int, field string, ps spec.Shape) (int, string) {
	s, ax, _, reason := bnNodes(b, nd, e)
	if reason != "" {
		return 0, reason
	}
	xs := nd.Shape
	C := xs[ax]
	if ps.Size() != C {
		return 0, fmt.Sprintf("%s of %d elements for %d channels", field, ps.Size(), C)
	}
	v := dy
	if field == irsem.ParamGamma {
		if e.Mean == nil || e.Mean.Shape.Size() != C {
			return 0, "a batch_norm_eval without its mean"
		}
		q := b.node(irsem.Kind{Op: irsem.OpDiv}, xs, b.node(irsem.Kind{Op: irsem.OpSub}, xs, x, b.perChannel(*e.Mean, xs, ax)), s)
		v = b.node(irsem.Kind{Op: irsem.OpMulElem}, xs, dy, q)
	}
	perm := []int{ax}
	ts := spec.Shape{C}
	for i := range xs {
		if i != ax {
			perm = append(perm, i)
			ts = append(ts, xs[i])
		}
	}
	if ax != 0 {
		v = b.node(irsem.Kind{Op: irsem.OpPermute, Perm: perm}, ts, v)
	}
	rest := xs.Size() / max(C, 1)
	two := spec.Shape{C, rest}
	if !ts.Equal(two) {
		v = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: ts.Clone(), OutShape: two.Clone()}, two, v)
	}
	red := b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 1}, spec.Shape{C}, v)
	if !ps.Equal(spec.Shape{C}) {
		red = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{C}, OutShape: ps.Clone()}, ps, red)
	}
	return red, ""
}

// poolGeom is a max pool's geometry: lead the product of the axes before
// the r spatial axes, n and no the input and output spatial extents, k,
// s, dl, pb the kernel, stride, dilation and begin padding per axis.
type poolGeom struct {
	lead                int
	n, no, k, s, dl, pb []int
}

func poolGeomOf(nd *irsem.Node, xs spec.Shape) (*poolGeom, string) {
	w := nd.Kind.Window
	if w == nil || len(w.Kernel) == 0 {
		return nil, "a pool without its window"
	}
	r := len(w.Kernel)
	if len(xs) < r || len(nd.Shape) != len(xs) || !spec.Shape(xs[:len(xs)-r]).Equal(nd.Shape[:len(xs)-r]) {
		return nil, fmt.Sprintf("input %v, output %v for %d spatial axes", xs, nd.Shape, r)
	}
	g := &poolGeom{lead: spec.Shape(xs[:len(xs)-r]).Size(), n: xs[len(xs)-r:].Clone(), no: nd.Shape[len(xs)-r:].Clone(),
		k: w.Kernel, s: make([]int, r), dl: make([]int, r), pb: make([]int, r)}
	for d := 0; d < r; d++ {
		g.s[d], g.dl[d] = 1, 1
		if w.Stride != nil {
			g.s[d] = w.Stride[d]
		}
		if nd.Kind.Op == irsem.OpMaxPoolND && w.Dilation != nil {
			g.dl[d] = w.Dilation[d]
		}
		switch {
		case w.Padding != nil:
			g.pb[d] = w.Padding[d]
		case w.Pads != nil:
			g.pb[d] = w.Pads[d]
		}
		if g.s[d] < 1 || g.dl[d] < 1 || g.k[d] < 1 {
			return nil, fmt.Sprintf("spatial axis %d: kernel %d, stride %d, dilation %d", d, g.k[d], g.s[d], g.dl[d])
		}
	}
	return g, ""
}

// maxPoolDeclVJP: the registry's max-pool VJP adds each output's
// cotangent to the window's maximiser (a tie splits it: see poolTies).
// Where the box of the parent shows one window element strictly above
// every other (box.Lo > every other's box.Hi) every modelled evaluation
// has that maximiser and no tie. The rule is, per kernel offset j (K in
// all, row-major), the exact 0/1 mask m_j (output o's maximiser is at
// offset j), c_j = mul_elem(dy, m_j), placed at input position
// o·s + j·dl − pb by exact index maps (reshape, pad with s − 1 zeros
// after every spatial position, reshape: the stride; pad or slice at both
// ends: the offset and x's extent), and dx = the one sum of the K placed
// terms (accumulate), each dx element the registry's sum of the
// cotangents routed to it plus exact zeros. An output whose maximiser the
// box leaves undecided gets the placeholder 0 in every m_j, marked in
// b.taint (the elements it may reach get no combined bound: elemTaint).
func maxPoolDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	x := nd.Parents[0]
	xs := b.c.Nodes[x].Shape
	g, reason := poolGeomOf(nd, xs)
	if reason != "" {
		return nil, reason
	}
	if x >= len(b.boxes) || b.boxes[x].fused || len(b.boxes[x].box) != xs.Size() {
		return nil, "no box of the input to decide the maximisers"
	}
	masks, used, und, reason := poolMasks(g, b.boxes[x].box)
	if reason != "" {
		return nil, reason
	}
	r := len(g.k)
	K := len(masks)
	off := make([]int, r)
	os := append(spec.Shape{g.lead}, g.no...)
	view := func(v int, from, to spec.Shape) int {
		if from.Equal(to) {
			return v
		}
		return b.node(irsem.Kind{Op: irsem.OpReshape, InShape: from.Clone(), OutShape: to.Clone()}, to, v)
	}
	xv := append(spec.Shape{g.lead}, g.n...)
	d0 := view(dy, nd.Shape, os)
	var terms []int
	for j := 0; j < K; j++ {
		if !used[j] && und == nil {
			continue
		}
		for d, rem := r-1, j; d >= 0; d-- {
			off[d], rem = rem%g.k[d], rem/g.k[d]
		}
		m := b.constant(masks[j])
		if und != nil {
			b.taint[m] = und
		}
		v, vs := b.node(irsem.Kind{Op: irsem.OpMulElem}, os, d0, m), os.Clone()
		for d := 0; d < r; d++ {
			a := 1 + d
			if g.s[d] > 1 { // the stride: [.., no, ..] → [.., no, 1, ..] → pad to [.., no, s, ..] → [.., no·s, ..]
				split := append(append(vs[:a+1:a+1].Clone(), 1), vs[a+1:]...)
				v = view(v, vs, split)
				wide := split.Clone()
				wide[a+1] = g.s[d]
				w := make([]int, 2*len(split))
				w[len(split)+a+1] = g.s[d] - 1
				v = b.node(irsem.Kind{Op: irsem.OpPad, Widths: w, Mode: spec.PadConstant}, wide, v)
				ns := vs.Clone()
				ns[a] = vs[a] * g.s[d]
				v, vs = view(v, wide, ns), ns
			}
			// element t of this axis now sits at input position t + sh
			sh := off[d]*g.dl[d] - g.pb[d]
			if sh < 0 {
				ns := vs.Clone()
				ns[a] = vs[a] + sh
				if ns[a] <= 0 {
					v = -1
					break
				}
				v, vs = b.node(irsem.Kind{Op: irsem.OpSlice, Axis: a, Start: -sh, End: vs[a]}, ns, v), ns
				sh = 0
			}
			begin, end := sh, g.n[d]-sh-vs[a]
			if end < 0 {
				ns := vs.Clone()
				ns[a] = g.n[d] - sh
				if ns[a] <= 0 {
					v = -1
					break
				}
				v, vs = b.node(irsem.Kind{Op: irsem.OpSlice, Axis: a, Start: 0, End: ns[a]}, ns, v), ns
				end = 0
			}
			if begin > 0 || end > 0 {
				w := make([]int, 2*len(vs))
				w[a], w[len(vs)+a] = begin, end
				ns := vs.Clone()
				ns[a] = g.n[d]
				v, vs = b.node(irsem.Kind{Op: irsem.OpPad, Widths: w, Mode: spec.PadConstant}, ns, v), ns
			}
		}
		if v >= 0 {
			terms = append(terms, v)
		}
	}
	if len(terms) == 0 {
		return nil, "no window element is read"
	}
	return []int{view(b.accumulate(xv, terms), xv, xs)}, ""
}

// poolMasks decides, per output of a max pool of geometry g and kernel
// offset j, the 0/1 mask "the unique maximiser is at offset j" from the
// input's box xb (maxPoolDeclVJP): the element with the greatest box.Lo
// when that is above every other real window element's box.Hi; else the
// output is marked in und (placeholder 0 in every mask). used[j] says
// whether mask j has a 1.
func poolMasks(g *poolGeom, xb []spec.Interval) ([]irsem.RatTensor, []bool, []bool, string) {
	r := len(g.k)
	S, B, K := spec.Shape(g.no).Size(), spec.Shape(g.n).Size(), spec.Shape(g.k).Size()
	if len(xb) != g.lead*B {
		return nil, nil, nil, "no box of the input to decide the maximisers"
	}
	masks := make([]irsem.RatTensor, K)
	used := make([]bool, K)
	var und []bool
	os := append(spec.Shape{g.lead}, g.no...)
	for j := range masks {
		masks[j] = filledRat(os, spec.Rat{})
	}
	oi, off := make([]int, r), make([]int, r)
	for o := 0; o < S; o++ {
		for d, rem := r-1, o; d >= 0; d-- {
			oi[d], rem = rem%g.no[d], rem/g.no[d]
		}
		for l := 0; l < g.lead; l++ {
			best, bestJ, secondHi, any2 := -1, -1, 0.0, false // top box.Lo's index and offset; the others' top box.Hi
			for j := 0; j < K; j++ {
				for d, rem := r-1, j; d >= 0; d-- {
					off[d], rem = rem%g.k[d], rem/g.k[d]
				}
				flat, ok := g.windowPos(oi, off)
				if !ok {
					continue
				}
				i := l*B + flat
				switch {
				case best < 0:
					best, bestJ = i, j
				case xb[i].Lo > xb[best].Lo:
					if !any2 || xb[best].Hi > secondHi {
						secondHi, any2 = xb[best].Hi, true
					}
					best, bestJ = i, j
				case !any2 || xb[i].Hi > secondHi:
					secondHi, any2 = xb[i].Hi, true
				}
			}
			if best < 0 {
				return nil, nil, nil, fmt.Sprintf("output %d: an empty pooling window", l*S+o)
			}
			if !any2 || xb[best].Lo > secondHi {
				masks[bestJ].Data[l*S+o] = spec.NewRat(1, 1)
				used[bestJ] = true
				continue
			}
			if und == nil {
				und = make([]bool, len(masks[0].Data))
			}
			und[l*S+o] = true
		}
	}
	return masks, used, und, ""
}

// windowPos is the flat input spatial index of output position oi's
// window element at kernel offset off, and whether it is a real element
// (not padding).
func (g *poolGeom) windowPos(oi, off []int) (int, bool) {
	flat := 0
	for d := range oi {
		p := oi[d]*g.s[d] - g.pb[d] + off[d]*g.dl[d]
		if p < 0 || p >= g.n[d] {
			return 0, false
		}
		flat = flat*g.n[d] + p
	}
	return flat, true
}

// gatherDeclVJP: gather(x; axis, indices)'s registry VJP scatter-adds:
// dx at input row i (along axis) is the sum of dy's rows j with
// indices[j] = i (0 when none). With R the largest multiplicity of an
// index, the rule is, for each r < R, the exact copy gather(concat(dy',
// 0; axis); sel_r), dy' dy viewed with the k gathered rows on axis, 0 one
// row of zeros, sel_r[i] the row of i's r-th occurrence or the zero row
// — and the one sum of the R copies (accumulate; one copy, no sum when
// no index repeats).
func gatherDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	ax, bad := declAxis(nd.Kind.Axis, len(xs))
	if bad != "" {
		return nil, bad
	}
	idx := nd.Kind.Indices
	k, n := len(idx), xs[ax]
	occ := make([][]int, n)
	R := 0
	for j, i := range idx {
		if i < 0 || i >= n {
			return nil, fmt.Sprintf("index %d (entry %d) outside [0, %d)", i, j, n)
		}
		occ[i] = append(occ[i], j)
		R = max(R, len(occ[i]))
	}
	if k == 0 || R == 0 {
		return nil, "no index"
	}
	dv := xs.Clone()
	dv[ax] = k
	if dv.Size() != nd.Shape.Size() {
		return nil, fmt.Sprintf("output %v for input %v and %d indices", nd.Shape, xs, k)
	}
	v := dy
	if !dv.Equal(nd.Shape) {
		v = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: dv.Clone()}, dv, v)
	}
	zs := xs.Clone()
	zs[ax] = 1
	cs := xs.Clone()
	cs[ax] = k + 1
	cat := b.node(irsem.Kind{Op: irsem.OpConcat, Axis: ax}, cs, v, b.full(zs, spec.Rat{}))
	copies := make([]int, R)
	for r := range copies {
		sel := make([]int, n)
		for i := range sel {
			sel[i] = k
			if r < len(occ[i]) {
				sel[i] = occ[i][r]
			}
		}
		copies[r] = b.node(irsem.Kind{Op: irsem.OpGather, Axis: ax, Indices: sel, IndicesShape: spec.Shape{n}}, xs, cat)
	}
	return []int{b.accumulate(xs, copies)}, ""
}
