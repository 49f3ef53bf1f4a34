package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The combined forward+reverse graph of the input gradient and its
// theorem: the package doc, "Gradients: the combined first-order bound".

// combinedGraph builds C for the input gradient of g at the boxes of the
// first-order forward pass (boxes[j] node j's): the forward nodes
// (ids unchanged, payload shared), the seed as a const node, and every
// node's declarative VJP in reverse id order. It returns a reason and no
// graph where C is not defined (the doc above). The builder's taint
// holds the relu mask elements the boxes left undecided (elemTaint).
func combinedGraph(g *irsem.Graph, p *irsem.Payload, seed irsem.RatTensor, boxes []fwdBox) (*irsem.Graph, *irsem.Payload, string) {
	b, cot, reason := reverseNodes(g, p, seed, boxes)
	if reason != "" {
		return nil, nil, reason
	}
	if cot[g.InputID] < 0 {
		return nil, nil, "the output does not read the input"
	}
	b.c.OutputID = cot[g.InputID]
	return b.c, b.cp, ""
}

// reverseNodes builds the forward nodes of g and the reverse nodes of
// every declarative VJP (combinedGraph), and returns the builder and,
// per node of g, the node of C holding its cotangent (−1: none, the
// output does not read it). A node's cotangent is its one contribution,
// the add of two, or — three or more — reduce_sum over axis 0 of their
// concat (each reshaped to a leading axis of 1): one sum, whose order
// M2 leaves free as the model's accumulation does.
func reverseNodes(g *irsem.Graph, p *irsem.Payload, seed irsem.RatTensor, boxes []fwdBox) (*cbuild, []int, string) {
	n := len(g.Nodes)
	entries := map[int]*irsem.Params{}
	if p != nil && p.Entries != nil {
		entries = p.Entries
	}
	b := &cbuild{c: &irsem.Graph{InputID: g.InputID, Nodes: make([]irsem.Node, 0, 4*n)}, cp: &irsem.Payload{Entries: map[int]*irsem.Params{}}, taint: map[int][]bool{}, boxes: boxes}
	for _, nd := range g.Nodes {
		b.c.Nodes = append(b.c.Nodes, irsem.Node{ID: nd.ID, Parents: append([]int{}, nd.Parents...), Kind: nd.Kind.Clone(), Shape: nd.Shape.Clone()})
		if e, ok := entries[nd.ID]; ok {
			b.cp.Entries[nd.ID] = e
		}
	}
	out := g.OutputID
	if !seed.Shape.Equal(g.Nodes[out].Shape) {
		return nil, nil, fmt.Sprintf("the cotangent's shape %v is not the output's %v", seed.Shape, g.Nodes[out].Shape)
	}
	contribs := make([][]int, n) // the contributions to node j's cotangent
	contribs[out] = []int{b.constant(seed)}
	cot := make([]int, n) // C's node holding node j's cotangent, −1 none
	for j := n - 1; j >= 0; j-- {
		cot[j] = -1
		if len(contribs[j]) == 0 {
			continue
		}
		nd := &g.Nodes[j]
		cot[j] = b.accumulate(nd.Shape, contribs[j])
		if j == g.InputID || nd.Kind.Op == irsem.OpConst {
			continue
		}
		rule, ok := declVJPs[nd.Kind.Op]
		if !ok {
			return nil, nil, fmt.Sprintf("node %d (%s) has no declarative VJP", j, nd.Kind.Op)
		}
		var box fwdBox
		if j < len(boxes) {
			box = boxes[j]
		}
		dxs, reason := rule(b, nd, entries[j], cot[j], box)
		if reason != "" {
			return nil, nil, fmt.Sprintf("node %d (%s): %s", j, nd.Kind.Op, reason)
		}
		if len(dxs) != len(nd.Parents) {
			return nil, nil, fmt.Sprintf("node %d (%s): %d contributions for %d parents", j, nd.Kind.Op, len(dxs), len(nd.Parents))
		}
		for t, q := range nd.Parents {
			if dxs[t] >= 0 {
				contribs[q] = append(contribs[q], dxs[t])
			}
		}
	}
	return b, cot, ""
}

// accumulate is the node holding the sum of the contributions cs to a
// cotangent of shape s (reverseNodes).
func (b *cbuild) accumulate(s spec.Shape, cs []int) int {
	switch len(cs) {
	case 1:
		return cs[0]
	case 2:
		return b.node(irsem.Kind{Op: irsem.OpAdd}, s, cs[0], cs[1])
	}
	lead := append(spec.Shape{1}, s...)
	rows := make([]int, len(cs))
	for i, c := range cs {
		rows[i] = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: s.Clone(), OutShape: lead.Clone()}, lead, c)
	}
	all := append(spec.Shape{len(cs)}, s...)
	cat := b.node(irsem.Kind{Op: irsem.OpConcat, Axis: 0}, all, rows...)
	return b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 0}, s, cat)
}

// cbuild appends nodes to a combined graph and its payload; taint maps
// a const node of C to its elements a relu box left undecided (the
// mask value there is a placeholder: elemTaint); boxes are the forward
// nodes' boxes (a rule that decides from a parent's box reads them).
type cbuild struct {
	c     *irsem.Graph
	cp    *irsem.Payload
	taint map[int][]bool
	boxes []fwdBox
}

func (b *cbuild) node(k irsem.Kind, shape spec.Shape, parents ...int) int {
	id := len(b.c.Nodes)
	b.c.Nodes = append(b.c.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: shape.Clone()})
	return id
}

func (b *cbuild) constant(t irsem.RatTensor) int {
	id := b.node(irsem.Kind{Op: irsem.OpConst, ValueShape: t.Shape.Clone()}, t.Shape)
	v := t
	b.cp.Entries[id] = &irsem.Params{Value: &v}
	return id
}

// declRule is one tag's declarative VJP: it appends to b the nodes that
// compute the contribution to each of the node's parents from the
// cotangent node dy (the forward node nd keeps its id in the combined
// graph, so a rule reads the forward value of parent t as node
// nd.Parents[t] and its own as nd.ID; e is its payload entry, box its
// forward box), and returns per parent the node holding the
// contribution (−1: none), or a reason why it has none.
type declRule func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string)

// declVJPs is the table of declarative VJPs (the package doc, "Gradients:
// the combined first-order bound"); TestDeclVJPMatchesRegistry checks each
// against the registry's VJP over spec.Rat.
var declVJPs = map[irsem.Op]declRule{
	irsem.OpLinear:      linearDeclVJP,
	irsem.OpTanh:        tanhDeclVJP,
	irsem.OpRelu:        reluDeclVJP,
	irsem.OpAdd:         addDeclVJP,
	irsem.OpSub:         subDeclVJP,
	irsem.OpMulElem:     mulDeclVJP,
	irsem.OpSum:         sumDeclVJP,
	irsem.OpBroadcastTo: broadcastDeclVJP,
	irsem.OpMatmul:      matmulDeclVJP,
	// grad32: the index maps and the attention ops of a GPT-2 block
	irsem.OpReshape:           reshapeDeclVJP,
	irsem.OpPermute:           permuteDeclVJP,
	irsem.OpScale:             scaleDeclVJP,
	irsem.OpSoftmax:           softmaxDeclVJP,
	irsem.OpHardMaskedSoftmax: softmaxDeclVJP,
	irsem.OpGelu:              geluDeclVJP,
	irsem.OpLayerNorm:         layerNormDeclVJP,
	// vjp34: conv stacks and the importers' tags
	irsem.OpConv:       convDeclVJP,
	irsem.OpTranspose:  transposeDeclVJP,
	irsem.OpSlice:      sliceDeclVJP,
	irsem.OpConcat:     concatDeclVJP,
	irsem.OpNeg:        negDeclVJP,
	irsem.OpDiv:        divDeclVJP,
	irsem.OpSqrt:       sqrtDeclVJP,
	irsem.OpReduceSum:  reduceDeclVJP,
	irsem.OpReduceMean: reduceDeclVJP,
	irsem.OpInv:        invDeclVJP,
	irsem.OpExp:        expDeclVJP,
	irsem.OpSquare:     squareDeclVJP,
	// grad35: exact GELU's erf
	opErf: erfDeclVJP,
	// vjp36: CNN and embedding tags
	irsem.OpPad:           padDeclVJP,
	irsem.OpBatchNormEval: batchNormDeclVJP,
	irsem.OpMaxPool:       maxPoolDeclVJP,
	irsem.OpMaxPoolND:     maxPoolDeclVJP,
	irsem.OpGather:        gatherDeclVJP,
}

// linearDeclVJP: dx = linear(dy; Wᵀ, 0), dx_{…k} = Σ_j W_jk·dy_{…j} + 0
// (linear maps the last axis, so any rank ≥ 1).
func linearDeclVJP(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	if !e.HasWeight() || len(e.WeightShape()) != 2 || len(nd.Shape) == 0 {
		return nil, "only a linear with its W has a declarative VJP here"
	}
	w := e.Weight() // W's rationals, derived here if the payload holds a plane
	o, i := w.Shape[0], w.Shape[1]
	wt := irsem.RatTensor{Shape: spec.Shape{i, o}, Data: make([]spec.Rat, o*i)}
	for r := 0; r < o; r++ {
		for k := 0; k < i; k++ {
			wt.Data[k*o+r] = w.Data[r*i+k]
		}
	}
	zero := irsem.RatTensor{Shape: spec.Shape{i}, Data: make([]spec.Rat, i)}
	xs := nd.Shape.Clone()
	xs[len(xs)-1] = i
	dx := b.node(irsem.Kind{Op: irsem.OpLinear}, xs, dy)
	b.cp.Entries[dx] = &irsem.Params{W: &wt, B: &zero}
	return []int{dx}, ""
}

// tanhDeclVJP: dx = dy·(1 − y·y), y the forward node.
func tanhDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.ID, nd.ID)
	d := b.node(irsem.Kind{Op: irsem.OpSub}, nd.Shape, b.constant(filledRat(nd.Shape, spec.NewRat(1, 1))), sq)
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, d)}, ""
}

// reluDeclVJP: dx = dy·m, m the const step(x) decided by the box of the
// relu node (its output y = max(x, 0)): 1 where box.Lo > 0, 0 where
// box.Hi ≤ 0. An element whose box holds the kink gets the placeholder 0
// and is marked in b.taint (the output elements that read it have no
// combined bound: elemTaint). An all-ones mask adds no node (dy·1 = dy
// exactly).
func reluDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) ([]int, string) {
	if box.fused || len(box.box) != nd.Shape.Size() {
		return nil, "no box to decide its mask"
	}
	mask := filledRat(nd.Shape, spec.Rat{})
	var und []bool
	ones := 0
	for m, iv := range box.box {
		switch {
		case iv.Lo > 0:
			mask.Data[m] = spec.NewRat(1, 1)
			ones++
		case iv.Hi <= 0:
		default:
			if und == nil {
				und = make([]bool, len(box.box))
			}
			und[m] = true
		}
	}
	if ones == len(box.box) {
		return []int{dy}, ""
	}
	c := b.constant(mask)
	if und != nil {
		b.taint[c] = und
	}
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, c)}, ""
}

// addDeclVJP: add(a, b)'s registry VJP is (dy, dy): both contributions
// are the cotangent node itself (no operation).
func addDeclVJP(_ *cbuild, _ *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	return []int{dy, dy}, ""
}

// subDeclVJP: sub(a, b)'s registry VJP is (dy, −dy): dy, and neg(dy)
// (exact).
func subDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	return []int{dy, b.node(irsem.Kind{Op: irsem.OpNeg}, nd.Shape, dy)}, ""
}

// mulDeclVJP: mul_elem(a, b)'s registry VJP is (dy·b, dy·a), each one
// product reading the forward parents (the same node twice for a·a:
// two contributions, added by accumulate).
func mulDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	pa, pb := nd.Parents[0], nd.Parents[1]
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, pb), b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, pa)}, ""
}

// sumDeclVJP: sum(x)'s registry VJP is dy broadcast to x's shape
// (broadcast_to from [], exact).
func sumDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	return []int{b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{}, ToShape: xs.Clone()}, xs, dy)}, ""
}

// broadcastDeclVJP: broadcast_to(x; from → to)'s registry VJP sums dy
// over the broadcast positions. With from padded on the left by 1s to
// to's rank, let the axes where from's extent is 1 and to's is not form
// one contiguous run [a, z) (a bias broadcast over leading axes is one):
// dx = reshape(reduce_sum(reshape(dy, to[:a] ++ [Π to[a:z]] ++ to[z:]),
// a), from), one sum per element, as the registry's. Other broadcasts
// have no rule here (two separate sums would fix an order M2 leaves free).
func broadcastDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	from, to := nd.Kind.FromShape, nd.Kind.ToShape
	if len(from) > len(to) {
		return nil, "from_shape longer than to_shape"
	}
	pad := make(spec.Shape, len(to))
	for i := range pad {
		pad[i] = 1
	}
	copy(pad[len(to)-len(from):], from)
	a, z := -1, -1
	for i := range to {
		if pad[i] == to[i] {
			continue
		}
		if pad[i] != 1 {
			return nil, fmt.Sprintf("axis %d: extent %d does not broadcast to %d", i, pad[i], to[i])
		}
		if a < 0 {
			a = i
		} else if z != i {
			return nil, "the broadcast axes are not one contiguous run"
		}
		z = i + 1
	}
	fs := spec.Shape(from).Clone()
	if a < 0 { // no axis grows: only 1s added or nothing; dx = reshape(dy)
		return []int{b.node(irsem.Kind{Op: irsem.OpReshape, InShape: to.Clone(), OutShape: fs}, fs, dy)}, ""
	}
	run := 1
	for i := a; i < z; i++ {
		run *= to[i]
	}
	mid := append(append(to[:a:a].Clone(), run), to[z:]...)
	v := dy
	if !mid.Equal(to) {
		v = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: to.Clone(), OutShape: mid.Clone()}, mid, v)
	}
	red := append(to[:a:a].Clone(), to[z:]...)
	v = b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: a}, red, v)
	if !red.Equal(fs) {
		v = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: red.Clone(), OutShape: fs}, fs, v)
	}
	return []int{v}, ""
}

// matmulDeclVJP: for operands A [β…, m, k], B [β…, k, n] of one rank ≥ 2
// and the same batch axes β (no batch broadcasting), the registry's VJP
// is, batch by batch, dA = dy·Bᵀ and dB = Aᵀ·dy (each element one sum
// over the contracted axis): matmul(dy, Bᵀ), matmul(Aᵀ, dy), ᵀ the
// permute swapping the last two axes (exact). 1-D operands and
// other broadcast batches have no rule here. (vjp36) A [β…, m, k] by a
// rank-2 B [k, n] shared by every batch (x·W): dA = matmul(dy, Bᵀ) (the
// same broadcast), dB = matmul(Aᵀ, dy) on A and dy viewed as [β·m, k]
// and [β·m, n] — the registry's dB, a sum over batches of per-batch
// sums, is one sum of the same β·m·… products, which M2 leaves in any
// order and grouping.
func matmulDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	pa, pb := nd.Parents[0], nd.Parents[1]
	as, bs := b.c.Nodes[pa].Shape, b.c.Nodes[pb].Shape
	r := len(as)
	if r > 2 && len(bs) == 2 && as[r-1] == bs[0] { // vjp36: B shared by every batch (x·W)
		k, n := bs[0], bs[1]
		rows := as.Size() / max(k, 1)
		bt := b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0}}, spec.Shape{n, k}, pb)
		a2 := b.node(irsem.Kind{Op: irsem.OpReshape, InShape: as.Clone(), OutShape: spec.Shape{rows, k}}, spec.Shape{rows, k}, pa)
		at := b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0}}, spec.Shape{k, rows}, a2)
		d2 := b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: spec.Shape{rows, n}}, spec.Shape{rows, n}, dy)
		return []int{b.node(irsem.Kind{Op: irsem.OpMatmul}, as, dy, bt), b.node(irsem.Kind{Op: irsem.OpMatmul}, bs, at, d2)}, ""
	}
	if r < 2 || len(bs) != r || !spec.Shape(as[:r-2]).Equal(bs[:r-2]) {
		return nil, fmt.Sprintf("operands %v and %v: only operands of one rank ≥ 2 with equal batch axes have a declarative VJP here", as, bs)
	}
	swap := func(v int, s spec.Shape) int {
		perm := make([]int, r)
		for i := range perm {
			perm[i] = i
		}
		perm[r-2], perm[r-1] = r-1, r-2
		ts := s.Clone()
		ts[r-2], ts[r-1] = s[r-1], s[r-2]
		return b.node(irsem.Kind{Op: irsem.OpPermute, Perm: perm}, ts, v)
	}
	bt, at := swap(pb, bs), swap(pa, as)
	return []int{b.node(irsem.Kind{Op: irsem.OpMatmul}, as, dy, bt), b.node(irsem.Kind{Op: irsem.OpMatmul}, bs, at, dy)}, ""
}

// reshapeDeclVJP: reshape's registry VJP is dy read in the parent's
// shape (a copy): reshape(dy; out → in), exact.
func reshapeDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	xs := b.c.Nodes[nd.Parents[0]].Shape
	if xs.Size() != nd.Shape.Size() {
		return nil, fmt.Sprintf("a reshape of %d elements to %d", xs.Size(), nd.Shape.Size())
	}
	return []int{b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: xs.Clone()}, xs, dy)}, ""
}

// permuteDeclVJP: permute(x; p)'s registry VJP moves each element back:
// permute(dy; p⁻¹), p⁻¹[p[i]] = i, exact.
func permuteDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	p := nd.Kind.Perm
	xs := b.c.Nodes[nd.Parents[0]].Shape
	if len(p) != len(xs) {
		return nil, fmt.Sprintf("perm %v for rank %d", p, len(xs))
	}
	inv := make([]int, len(p))
	for i, q := range p {
		if q < 0 || q >= len(p) {
			return nil, fmt.Sprintf("perm %v", p)
		}
		inv[q] = i
	}
	return []int{b.node(irsem.Kind{Op: irsem.OpPermute, Perm: inv}, xs, dy)}, ""
}

// scaleDeclVJP: scale(x; c)'s registry VJP is dy·c, one product:
// scale(dy; c).
func scaleDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	return []int{b.node(irsem.Kind{Op: irsem.OpScale, C: nd.Kind.C}, nd.Shape, dy)}, ""
}

// softmaxDeclVJP: softmax's (along Axis) and hard_masked_softmax's (the
// last axis; a blocked entry's y is exactly 0) registry VJP is, lane by
// lane, s = Σ dy_i·y_i (one sum of products) and dx_i = y_i·(dy_i − s):
//
//	p = mul_elem(dy, y); s = reduce_sum(p, axis);
//	dx = mul_elem(y, sub(dy, broadcast_to(reshape(s, keep), shape)))
//
// keep the shape with extent 1 at axis; reshape and broadcast_to copy
// (exact), every other node one rounding as the registry's formula.
func softmaxDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	s := nd.Shape
	if len(s) == 0 {
		return nil, "a softmax of a scalar"
	}
	ax := len(s) - 1
	if nd.Kind.Op == irsem.OpSoftmax {
		ax = nd.Kind.Axis
		if ax < 0 {
			ax += len(s)
		}
		if ax < 0 || ax >= len(s) {
			return nil, fmt.Sprintf("axis %d for rank %d", nd.Kind.Axis, len(s))
		}
	}
	red := append(s[:ax:ax].Clone(), s[ax+1:]...)
	keep := s.Clone()
	keep[ax] = 1
	y := nd.ID
	p := b.node(irsem.Kind{Op: irsem.OpMulElem}, s, dy, y)
	sum := b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: ax}, red, p)
	sum = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: red.Clone(), OutShape: keep.Clone()}, keep, sum)
	sum = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: keep.Clone(), ToShape: s.Clone()}, s, sum)
	d := b.node(irsem.Kind{Op: irsem.OpSub}, s, dy, sum)
	return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, s, y, d)}, ""
}

func filledRat(s spec.Shape, v spec.Rat) irsem.RatTensor {
	t := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
	for m := range t.Data {
		t.Data[m] = v
	}
	return t
}

// prune drops the nodes of c that the output does not read (the input
// stays), renumbering the rest in order, so that SharpBounds spends no
// sweeps on forward nodes the reverse pass never reads (a ReLU MLP's
// reverse pass reads none: its masks are consts).
func prune(c *irsem.Graph, cp *irsem.Payload) (*irsem.Graph, *irsem.Payload) {
	live := make([]bool, len(c.Nodes))
	live[c.OutputID], live[c.InputID] = true, true
	for j := len(c.Nodes) - 1; j >= 0; j-- {
		if live[j] {
			for _, q := range c.Nodes[j].Parents {
				live[q] = true
			}
		}
	}
	id := make([]int, len(c.Nodes))
	out := &irsem.Graph{}
	op := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for j, nd := range c.Nodes {
		if !live[j] {
			continue
		}
		id[j] = len(out.Nodes)
		ps := make([]int, len(nd.Parents))
		for t, q := range nd.Parents {
			ps[t] = id[q]
		}
		out.Nodes = append(out.Nodes, irsem.Node{ID: id[j], Parents: ps, Kind: nd.Kind, Shape: nd.Shape})
		if e, ok := cp.Entries[j]; ok {
			op.Entries[id[j]] = e
		}
	}
	out.InputID, out.OutputID = id[c.InputID], id[c.OutputID]
	return out, op
}

// combinedBound is the combined bound of every input-gradient element
// (the theorem above): SharpBounds on the pruned combined graph (at
// o.SweepWork, DefaultSweepWork when 0: the combined graph is built only
// for the tags of declVJPs, whose sweeps are cheap), or a
// reason and nil where the graph is not built. An element that reads a
// relu mask element the boxes left undecided (elemTaint) gets an
// unbounded enclosure with the reason; when every element does, no
// graph is bounded and the reason says so.
func combinedBound(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, boxes []fwdBox, o Options) ([]Enclosure, string, error) {
	b, cot, reason := reverseNodes(g, p, seed, boxes)
	if reason != "" {
		return nil, reason, nil
	}
	if cot[g.InputID] < 0 {
		return nil, "the output does not read the input", nil
	}
	b.c.OutputID = cot[g.InputID]
	tainted := elemTaint(b.c, b.cp, b.taint)
	if tainted != nil {
		all := true
		for _, t := range tainted {
			all = all && t
		}
		if all {
			return nil, "every element reads a relu mask element whose forward box holds the kink", nil
		}
	}
	c, cp := prune(b.c, b.cp)
	sh, err := SharpBounds(c, cp, input, o)
	if err != nil {
		return nil, "", fmt.Errorf("fpbound: the combined forward+reverse graph: %v", err)
	}
	out := make([]Enclosure, len(sh))
	for k, s := range sh {
		out[k] = s.Enclosure
		if tainted != nil && tainted[k] {
			out[k] = Enclosure{Exact: spec.Interval{Lo: -inf, Hi: inf}, Bound: inf, Reason: "it reads a relu mask element whose forward box holds the kink: the runtime may take either mask"}
		}
	}
	return out, "", nil
}

// elemTaint marks, element by element, the nodes of C whose value
// depends on a seeded const element (seeds: the relu mask elements the
// boxes left undecided), and returns the output's marks (nil when no
// element is marked). An element is marked when the operation computing
// it reads a marked element: add, sub, neg, mul_elem and reshape read
// their parents' element of the same index (vjp36: and div), linear's
// output row r reads its input's row r, concat along axis 0 reads the
// element it copies, reduce_sum the elements it sums; (vjp36) pad, slice
// and gather read the element their index map names (none: a fill),
// conv_transpose's output position y reads every input channel at the
// input positions i with y = i·s + j·dl − p_begin for a kernel offset j
// (indexTaint); every other tag's elements read every parent element
// (the conservative fallback). A zero weight still counts
// as a read: 0·v is NaN for a non-finite v, and the other mask's values
// are not bounded.
func elemTaint(c *irsem.Graph, cp *irsem.Payload, seeds map[int][]bool) []bool {
	if len(seeds) == 0 {
		return nil
	}
	t := make([][]bool, len(c.Nodes))
	for j, nd := range c.Nodes {
		if s, ok := seeds[j]; ok {
			t[j] = s
			continue
		}
		marked := false
		for _, q := range nd.Parents {
			marked = marked || t[q] != nil
		}
		if !marked {
			continue
		}
		size := nd.Shape.Size()
		out := make([]bool, size)
		same := true
		for _, q := range nd.Parents {
			same = same && c.Nodes[q].Shape.Size() == size
		}
		switch op := nd.Kind.Op; {
		case same && (op == irsem.OpAdd || op == irsem.OpSub || op == irsem.OpNeg || op == irsem.OpMulElem || op == irsem.OpDiv || op == irsem.OpReshape):
			for _, q := range nd.Parents {
				for m := range out {
					out[m] = out[m] || (t[q] != nil && t[q][m])
				}
			}
		case op == irsem.OpPad || op == irsem.OpSlice || op == irsem.OpGather || op == irsem.OpConvTranspose:
			if !indexTaint(c, &c.Nodes[j], t[nd.Parents[0]], out) {
				for m := range out {
					out[m] = true
				}
			}
		case op == irsem.OpLinear && len(nd.Parents) == 1 && len(nd.Shape) > 0 && nd.Shape[len(nd.Shape)-1] > 0 && cp.Entries[j] != nil:
			linearTaint(c, &c.Nodes[j], t[nd.Parents[0]], out)
		case op == irsem.OpConcat && nd.Kind.Axis == 0:
			m := 0
			for _, q := range nd.Parents {
				n := c.Nodes[q].Shape.Size()
				if t[q] != nil {
					copy(out[m:m+n], t[q])
				}
				m += n
			}
		case op == irsem.OpReduceSum && len(nd.Parents) == 1:
			reduceTaint(c, &c.Nodes[j], t[nd.Parents[0]], out)
		default:
			for m := range out {
				out[m] = true
			}
		}
		t[j] = out
	}
	return t[c.OutputID]
}

// paramTarget appends to b the nodes computing parameter prm's gradient
// from the cotangents cot (reverseNodes) and returns the node holding
// it, or a reason where it has no combined graph (the package doc,
// "Gradients: the combined first-order bound", parameter gradients):
// a const's (ConstParams) is its cotangent; a linear node's (x [rows…,
// i] → [rows…, o], cotangent dy), as the registry's linear VJP:
//
//	b:  dy itself for one row, else reduce_sum(reshape(dy, [rows, o]), 0)
//	W:  for one row, mul_elem(broadcast_to(reshape(dy, [o, 1]), [o, i]),
//	    broadcast_to(reshape(x, [1, i]), [o, i])) (dW_rk = dy_r·x_k, one
//	    product); else matmul(permute(reshape(dy, [rows, o])), reshape(x,
//	    [rows, i])) (dW_rk = Σ_t dy_tr·x_tk, one sum).
func paramTarget(b *cbuild, g *irsem.Graph, cot []int, prm irgrad.Param) (int, string) {
	if prm.Node < 0 || prm.Node >= len(g.Nodes) {
		return 0, fmt.Sprintf("parameter %s: node %d out of range", prm.Name, prm.Node)
	}
	nd := &g.Nodes[prm.Node]
	dy := cot[prm.Node]
	if dy < 0 {
		return 0, fmt.Sprintf("parameter %s: the output does not read node %d", prm.Name, prm.Node)
	}
	reshape := func(v int, from, to spec.Shape) int {
		if from.Equal(to) {
			return v
		}
		return b.node(irsem.Kind{Op: irsem.OpReshape, InShape: from.Clone(), OutShape: to.Clone()}, to, v)
	}
	switch {
	case nd.Kind.Op == irsem.OpConst && prm.Field == irsem.ParamValue:
		return dy, ""
	case nd.Kind.Op == irsem.OpLinear && len(nd.Parents) == 1 && len(nd.Shape) > 0 && (prm.Field == irsem.ParamW || prm.Field == irsem.ParamB):
		x := nd.Parents[0]
		xs := g.Nodes[x].Shape
		o, i := nd.Shape[len(nd.Shape)-1], xs[len(xs)-1]
		if o == 0 || i == 0 {
			return 0, fmt.Sprintf("parameter %s: an empty linear", prm.Name)
		}
		rows := nd.Shape.Size() / o
		if prm.Field == irsem.ParamB {
			if rows == 1 {
				return reshape(dy, nd.Shape, spec.Shape{o}), ""
			}
			return b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 0}, spec.Shape{o}, reshape(dy, nd.Shape, spec.Shape{rows, o})), ""
		}
		oi := spec.Shape{o, i}
		if rows == 1 {
			d := b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{o, 1}, ToShape: oi.Clone()}, oi, reshape(dy, nd.Shape, spec.Shape{o, 1}))
			v := b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{1, i}, ToShape: oi.Clone()}, oi, reshape(x, xs, spec.Shape{1, i}))
			return b.node(irsem.Kind{Op: irsem.OpMulElem}, oi, d, v), ""
		}
		dt := b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0}}, spec.Shape{o, rows}, reshape(dy, nd.Shape, spec.Shape{rows, o}))
		return b.node(irsem.Kind{Op: irsem.OpMatmul}, oi, dt, reshape(x, xs, spec.Shape{rows, i})), ""
	case nd.Kind.Op == irsem.OpConv && len(nd.Parents) == 1 && (prm.Field == irsem.ParamW || prm.Field == irsem.ParamB):
		t, reason := convParamTarget(b, nd, nd.Parents[0], g.Nodes[nd.Parents[0]].Shape, dy, prm.Field, prm.Shape)
		if reason != "" {
			return 0, fmt.Sprintf("parameter %s: %s", prm.Name, reason)
		}
		return t, ""
	case nd.Kind.Op == irsem.OpBatchNormEval && len(nd.Parents) == 1 && (prm.Field == irsem.ParamGamma || prm.Field == irsem.ParamBeta):
		t, reason := batchNormParamTarget(b, nd, b.cp.Entries[prm.Node], nd.Parents[0], dy, prm.Field, prm.Shape)
		if reason != "" {
			return 0, fmt.Sprintf("parameter %s: %s", prm.Name, reason)
		}
		return t, ""
	case nd.Kind.Op == irsem.OpLayerNorm && len(nd.Parents) == 1 && (prm.Field == irsem.ParamGamma || prm.Field == irsem.ParamBeta):
		var e *irsem.Params
		if b.cp.Entries != nil {
			e = b.cp.Entries[prm.Node]
		}
		t, reason := layerNormParamTarget(b, nd, e, dy, prm.Field, prm.Shape)
		if reason != "" {
			return 0, fmt.Sprintf("parameter %s: %s", prm.Name, reason)
		}
		return t, ""
	}
	return 0, fmt.Sprintf("parameter %s (%s of %s) has no declarative gradient", prm.Name, prm.Field, nd.Kind.Op)
}

// combinedParamBounds is the combined bound of every parameter gradient
// element (params' order, irgrad's): one combined graph whose output is
// the concat of every parameter target (paramTarget) flattened, bounded
// by SharpBounds as combinedBound's. A parameter without a target gets a
// nil entry and its reason; an element that reads an undecided relu
// mask element an unbounded enclosure.
func combinedParamBounds(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, boxes []fwdBox, params []irgrad.Param, o Options) ([][]Enclosure, []string, error) {
	out := make([][]Enclosure, len(params))
	reasons := make([]string, len(params))
	b, cot, reason := reverseNodes(g, p, seed, boxes)
	if reason != "" {
		for i := range reasons {
			reasons[i] = reason
		}
		return out, reasons, nil
	}
	var flat []int
	var which []int
	total := 0
	for i, prm := range params {
		t, reason := paramTarget(b, g, cot, prm)
		if reason != "" {
			reasons[i] = reason
			continue
		}
		s := b.c.Nodes[t].Shape
		n := s.Size()
		if n == 0 || n != prm.Shape.Size() {
			reasons[i] = fmt.Sprintf("parameter %s: %d gradient elements for shape %v", prm.Name, n, prm.Shape)
			continue
		}
		flat = append(flat, b.node(irsem.Kind{Op: irsem.OpReshape, InShape: s.Clone(), OutShape: spec.Shape{n}}, spec.Shape{n}, t))
		which = append(which, i)
		total += n
	}
	if len(flat) == 0 {
		return out, reasons, nil
	}
	b.c.OutputID = flat[0]
	if len(flat) > 1 {
		b.c.OutputID = b.node(irsem.Kind{Op: irsem.OpConcat, Axis: 0}, spec.Shape{total}, flat...)
	}
	tainted := elemTaint(b.c, b.cp, b.taint)
	c, cp := prune(b.c, b.cp)
	sh, err := SharpBounds(c, cp, input, o)
	if err != nil {
		return nil, nil, fmt.Errorf("fpbound: the combined forward+reverse graph of the parameter gradients: %v", err)
	}
	k := 0
	for _, i := range which {
		n := params[i].Shape.Size()
		es := make([]Enclosure, n)
		for m := range es {
			es[m] = sh[k].Enclosure
			if tainted != nil && tainted[k] {
				es[m] = Enclosure{Exact: spec.Interval{Lo: -inf, Hi: inf}, Bound: inf, Reason: "it reads a relu mask element whose forward box holds the kink: the runtime may take either mask"}
			}
			k++
		}
		out[i] = es
	}
	return out, reasons, nil
}

// full is a const node of shape s filled with v (held as fl(v), M1, as
// the registry's constant in the formula it stands for).
func (b *cbuild) full(s spec.Shape, v spec.Rat) int { return b.constant(filledRat(s, v)) }

// geluDeclVJP: gelu's registry VJP is dx = d(x)·dy with (spec, gelu's
// derivative, every product and sum as written there, the constants k,
// a, 3, 1/2 const nodes):
//
//	t  = tanh(k·(x + a·((x·x)·x)))
//	du = k·(1 + (3·a)·(x·x))
//	d  = (1/2)·(1 + t) + (((1/2)·x)·(1 − t·t))·du
//
// recomputed from the forward parent x (the forward gelu node's own t
// is not a node).
func geluDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	s := nd.Shape
	kb, ab := spec.GeluConstants()
	k, a := b.full(s, spec.RatFromBig(kb)), b.full(s, spec.RatFromBig(ab))
	one, h := b.full(s, spec.NewRat(1, 1)), b.full(s, spec.NewRat(1, 2))
	x := nd.Parents[0]
	mul := func(p, q int) int { return b.node(irsem.Kind{Op: irsem.OpMulElem}, s, p, q) }
	add := func(p, q int) int { return b.node(irsem.Kind{Op: irsem.OpAdd}, s, p, q) }
	xx := mul(x, x)
	t := b.node(irsem.Kind{Op: irsem.OpTanh}, s, mul(k, add(x, mul(a, mul(xx, x)))))
	du := mul(k, add(one, mul(mul(b.full(s, spec.NewRat(3, 1)), a), xx)))
	sech2 := b.node(irsem.Kind{Op: irsem.OpSub}, s, one, mul(t, t))
	d := add(mul(h, add(one, t)), mul(mul(mul(h, x), sech2), du))
	return []int{mul(d, dy)}, ""
}

// layerNormDeclVJP: layernorm over the suffix from Axis is, as the
// registry applies it, layer_norm along axis 1 of x viewed as [o, i]
// (irsem's layerNormApplication). Its registry VJP for x recomputes the
// lane statistics from x and, lane by lane (every sum one reduce_sum
// along the lane, every mean a division by the const i, as written
// there; γ 1 when the payload has none: dy·1 = dy exactly):
//
//	μ = (Σ x)/i, d = x − μ, σ⁻¹ = inv(sqrt((Σ d·d)/i + ε)), x̂ = d·σ⁻¹
//	g = dy·γ, m₁ = (Σ g)/i, m₂ = (Σ g·x̂)/i
//	dx = ((g − m₁) − x̂·m₂)·σ⁻¹
//
// a lane value read per element through reshape to [o, 1] and
// broadcast_to [o, i] (exact copies); sqrt is sqrt(max(·, 0)), the same
// value on σ² + ε > 0. γ's and β's own gradients are parameters
// (paramTarget, layerNormParamTarget).
func layerNormDeclVJP(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
	ln, reason := layerNormStatNodes(b, nd, e)
	if reason != "" {
		return nil, reason
	}
	s, oi := nd.Shape, ln.oi
	g := ln.view(dy, s, oi)
	if e != nil && e.Gamma != nil {
		if e.Gamma.Shape.Size() != ln.i {
			return nil, fmt.Sprintf("gamma of %d elements for lanes of %d", e.Gamma.Shape.Size(), ln.i)
		}
		gm := b.constant(irsem.RatTensor{Shape: spec.Shape{1, ln.i}, Data: e.Gamma.Data})
		g = ln.mul(g, b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{1, ln.i}, ToShape: oi.Clone()}, oi, gm))
	}
	dx := ln.mul(ln.sub(ln.sub(g, ln.spread(ln.mean(g))), ln.mul(ln.xh, ln.spread(ln.mean(ln.mul(g, ln.xh))))), ln.inv)
	return []int{ln.view(dx, oi, s)}, ""
}

// lnNodes are the nodes of a layernorm's recomputed lane statistics
// (layerNormDeclVJP): x viewed as [o, i], inv = σ⁻¹ spread over the lane,
// xh = x̂, and the helpers that build the formula's nodes.
type lnNodes struct {
	b       *cbuild
	o, i    int
	oi      spec.Shape
	xh, inv int
}

func (ln *lnNodes) view(v int, from, to spec.Shape) int {
	if from.Equal(to) {
		return v
	}
	return ln.b.node(irsem.Kind{Op: irsem.OpReshape, InShape: from.Clone(), OutShape: to.Clone()}, to, v)
}
func (ln *lnNodes) mul(p, q int) int { return ln.b.node(irsem.Kind{Op: irsem.OpMulElem}, ln.oi, p, q) }
func (ln *lnNodes) sub(p, q int) int { return ln.b.node(irsem.Kind{Op: irsem.OpSub}, ln.oi, p, q) }

// mean is (Σ_lane v)/i, one value a lane.
func (ln *lnNodes) mean(v int) int {
	lane := spec.Shape{ln.o}
	n := ln.b.full(lane, spec.NewRat(int64(ln.i), 1))
	return ln.b.node(irsem.Kind{Op: irsem.OpDiv}, lane, ln.b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 1}, lane, v), n)
}

// spread is a lane value at every element of the lane.
func (ln *lnNodes) spread(v int) int {
	o1 := spec.Shape{ln.o, 1}
	return ln.b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: o1.Clone(), ToShape: ln.oi.Clone()}, ln.oi, ln.view(v, spec.Shape{ln.o}, o1))
}

// layerNormStatNodes appends the lane statistics of layernorm node nd
// (μ, d = x − μ, σ⁻¹ = inv(sqrt((Σ d·d)/i + ε)), x̂ = d·σ⁻¹) recomputed
// from its forward input.
func layerNormStatNodes(b *cbuild, nd *irsem.Node, e *irsem.Params) (*lnNodes, string) {
	s := nd.Shape
	ax := nd.Kind.Axis
	if ax < 0 || ax >= len(s) {
		return nil, fmt.Sprintf("axis %d for rank %d", ax, len(s))
	}
	o, i := spec.Shape(s[:ax]).Size(), spec.Shape(s[ax:]).Size()
	if i == 0 {
		return nil, "an empty lane"
	}
	ln := &lnNodes{b: b, o: o, i: i, oi: spec.Shape{o, i}}
	eps := spec.RatFromBig(spec.DefaultNormEps())
	if e != nil && e.Eps != nil {
		eps = *e.Eps
	}
	lane := spec.Shape{o}
	x := ln.view(nd.Parents[0], b.c.Nodes[nd.Parents[0]].Shape, ln.oi)
	d := ln.sub(x, ln.spread(ln.mean(x)))
	v := b.node(irsem.Kind{Op: irsem.OpAdd}, lane, ln.mean(ln.mul(d, d)), b.full(lane, eps))
	ln.inv = ln.spread(b.node(irsem.Kind{Op: irsem.OpInv}, lane, b.node(irsem.Kind{Op: irsem.OpSqrt}, lane, v)))
	ln.xh = ln.mul(d, ln.inv)
	return ln, ""
}

// layerNormParamTarget is layernorm node nd's γ (field gamma) or β
// (beta) gradient from its cotangent dy, as the registry's VJP: dγ_k =
// Σ_lanes dy·x̂ (one reduce_sum over the lanes of mul_elem(dy, x̂), x̂
// recomputed as layerNormStatNodes), dβ_k = Σ_lanes dy (one reduce_sum),
// reshaped to the parameter's shape.
func layerNormParamTarget(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, field string, ps spec.Shape) (int, string) {
	ln, reason := layerNormStatNodes(b, nd, e)
	if reason != "" {
		return 0, reason
	}
	if ps.Size() != ln.i {
		return 0, fmt.Sprintf("%s of %d elements for lanes of %d", field, ps.Size(), ln.i)
	}
	g := ln.view(dy, nd.Shape, ln.oi)
	if field == irsem.ParamGamma {
		g = ln.mul(g, ln.xh)
	}
	red := b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 0}, spec.Shape{ln.i}, g)
	return ln.view(red, spec.Shape{ln.i}, ps), ""
}
