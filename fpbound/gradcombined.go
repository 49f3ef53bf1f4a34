package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The combined forward+reverse graph of the input gradient and its
// theorem: the package doc, "Gradients: the combined first-order bound".

// combinedGraph builds C for the input gradient of g at the boxes of the
// first-order forward pass (boxes[j] node j's): the forward nodes
// (ids unchanged, payload shared), the seed as a const node, and every
// node's declarative VJP in reverse id order. It returns a reason and no
// graph where C is not defined (the doc above).
func combinedGraph(g *irsem.Graph, p *irsem.Payload, seed irsem.RatTensor, boxes []fwdBox) (*irsem.Graph, *irsem.Payload, string) {
	n := len(g.Nodes)
	consumers := make([]int, n)
	for _, nd := range g.Nodes {
		for _, q := range nd.Parents {
			consumers[q]++
		}
	}
	entries := map[int]*irsem.Params{}
	if p != nil && p.Entries != nil {
		entries = p.Entries
	}
	b := &cbuild{c: &irsem.Graph{InputID: g.InputID, Nodes: make([]irsem.Node, 0, 4*n)}, cp: &irsem.Payload{Entries: map[int]*irsem.Params{}}}
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
	cot := make([]int, n) // C's node holding node j's cotangent, −1 none
	for j := range cot {
		cot[j] = -1
	}
	cot[out] = b.constant(seed)
	for j := n - 1; j >= 0; j-- {
		nd := &g.Nodes[j]
		if cot[j] < 0 || j == g.InputID {
			continue
		}
		rule, ok := declVJPs[nd.Kind.Op]
		if !ok {
			return nil, nil, fmt.Sprintf("node %d (%s) has no declarative VJP", j, nd.Kind.Op)
		}
		if len(nd.Parents) != 1 {
			return nil, nil, fmt.Sprintf("node %d (%s): %d parents", j, nd.Kind.Op, len(nd.Parents))
		}
		var box fwdBox
		if j < len(boxes) {
			box = boxes[j]
		}
		dx, reason := rule(b, nd, entries[j], cot[j], box)
		if reason != "" {
			return nil, nil, fmt.Sprintf("node %d (%s): %s", j, nd.Kind.Op, reason)
		}
		q := nd.Parents[0]
		switch {
		case consumers[q] > 2:
			return nil, nil, fmt.Sprintf("node %d (%s) has %d consumers: its cotangent would be a sum of %d terms, which one add node does not hold", q, g.Nodes[q].Kind.Op, consumers[q], consumers[q])
		case cot[q] < 0:
			cot[q] = dx
		default:
			cot[q] = b.node(irsem.Kind{Op: irsem.OpAdd}, g.Nodes[q].Shape, cot[q], dx)
		}
	}
	if cot[g.InputID] < 0 {
		return nil, nil, "the output does not read the input"
	}
	b.c.OutputID = cot[g.InputID]
	return b.c, b.cp, ""
}

// cbuild appends nodes to a combined graph and its payload.
type cbuild struct {
	c  *irsem.Graph
	cp *irsem.Payload
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
// compute the contribution to the node's one parent from the cotangent
// node dy (the forward node nd keeps its id in the combined graph, so a
// rule reads the forward value as node nd.ID; e is its payload entry, box
// its forward box), and returns the node holding the contribution, or a
// reason why it has none.
type declRule func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) (int, string)

// declVJPs is the table of declarative VJPs (the package doc, "Gradients:
// the combined first-order bound"); TestDeclVJPMatchesRegistry checks each
// against the registry's VJP over spec.Rat.
var declVJPs = map[irsem.Op]declRule{
	irsem.OpLinear: linearDeclVJP,
	irsem.OpTanh:   tanhDeclVJP,
	irsem.OpRelu:   reluDeclVJP,
}

// linearDeclVJP: dx = linear(dy; Wᵀ, 0), dx_k = Σ_j W_jk·dy_j + 0.
func linearDeclVJP(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) (int, string) {
	if e == nil || e.W == nil || len(e.W.Shape) != 2 || len(nd.Shape) != 1 {
		return 0, "only a vector linear with its W has a declarative VJP here"
	}
	o, i := e.W.Shape[0], e.W.Shape[1]
	wt := irsem.RatTensor{Shape: spec.Shape{i, o}, Data: make([]spec.Rat, o*i)}
	for r := 0; r < o; r++ {
		for k := 0; k < i; k++ {
			wt.Data[k*o+r] = e.W.Data[r*i+k]
		}
	}
	zero := irsem.RatTensor{Shape: spec.Shape{i}, Data: make([]spec.Rat, i)}
	dx := b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{i}, dy)
	b.cp.Entries[dx] = &irsem.Params{W: &wt, B: &zero}
	return dx, ""
}

// tanhDeclVJP: dx = dy·(1 − y·y), y the forward node.
func tanhDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) (int, string) {
	sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.ID, nd.ID)
	d := b.node(irsem.Kind{Op: irsem.OpSub}, nd.Shape, b.constant(filledRat(nd.Shape, spec.NewRat(1, 1))), sq)
	return b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, d), ""
}

// reluDeclVJP: dx = dy·m, m the const step(x) decided by the box of the
// relu node (its output y = max(x, 0)): 1 where box.Lo > 0, 0 where
// box.Hi ≤ 0; a box holding the kink leaves no rule. An all-ones mask
// adds no node (dy·1 = dy exactly).
func reluDeclVJP(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) (int, string) {
	if box.fused || len(box.box) != nd.Shape.Size() {
		return 0, "no box to decide its mask"
	}
	mask := filledRat(nd.Shape, spec.Rat{})
	ones := 0
	for m, iv := range box.box {
		switch {
		case iv.Lo > 0:
			mask.Data[m] = spec.NewRat(1, 1)
			ones++
		case iv.Hi <= 0:
		default:
			return 0, fmt.Sprintf("element %d's box [%g, %g] holds the kink: the mask is undecided", m, iv.Lo, iv.Hi)
		}
	}
	if ones == len(box.box) {
		return dy, ""
	}
	return b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, b.constant(mask)), ""
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
// reason and nil where the graph is not built.
func combinedBound(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, boxes []fwdBox, o Options) ([]Enclosure, string, error) {
	c, cp, reason := combinedGraph(g, p, seed, boxes)
	if reason != "" {
		return nil, reason, nil
	}
	c, cp = prune(c, cp)
	sh, err := SharpBounds(c, cp, input, o)
	if err != nil {
		return nil, "", fmt.Errorf("fpbound: the combined forward+reverse graph: %v", err)
	}
	out := make([]Enclosure, len(sh))
	for k, s := range sh {
		out[k] = s.Enclosure
	}
	return out, "", nil
}
