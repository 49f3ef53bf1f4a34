package fpbound

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Gradients: the combined first-order bound of the input gradient.
//
// The boxed bound (GradBounds) runs the reverse formulas over Err, so the
// reverse pass's own roundings and the errors of the cotangents reach a
// gradient element through magnitudes |Jᵀ| per layer. The combined bound
// writes the reverse pass as nodes of one irsem.Graph beside the forward
// nodes it reads — the combined forward+reverse graph, whose output is the
// input gradient — and bounds that graph with SharpBounds: the first-order
// bound (doc.go, "First-order bound"), whose signed Jacobians now run
// through the reverse nodes too.
//
// Declarative VJPs. A node's reverse nodes are its registry VJP written as
// IR nodes (declVJP), for the tags of the generator's MLPs (nets.MLP):
//
//	linear (W, b):  dx = linear(dy; Wᵀ, 0)          (registry: dx_k = Σ_j W_jk·dy_j)
//	tanh:           dx = mul_elem(dy, sub(1, mul_elem(y, y)))  (registry: dy·(1 − y·y))
//	relu:           dx = mul_elem(dy, m), m the const step(x) (registry: dy·step(x))
//
// with y the forward tanh node itself (the value the registry's rule
// reads) and the relu mask m a const decided by the forward boxes (below).
// A node with two consumers gets its cotangent from one add node (two
// terms: every order is the same); a tag outside the table, a node with
// more consumers, or a relu mask the boxes do not decide, leaves the
// gradient without a combined bound (CombinedReason says why), and
// GradEnclosure then takes the classic and the boxed bound alone.
// TestDeclVJPMatchesRegistry checks every entry of the table against the
// registry's Go VJP in exact rational arithmetic (equality, element by
// element, on seeded points) and that a wrong entry is caught.
//
// Model. The model of GradBounds' doc (the forward pass under M1–M3,
// then the registry's VJP formulas, each sum in any order with FMA,
// the cotangent seed held as the nearest binary32) restricted to the
// input gradient.
//
// Theorem. Let every relu node's box (B_j from the first-order forward
// pass, forwardBoxes) satisfy, element by element, B_j.Lo > 0 or
// B_j.Hi ≤ 0, and let (X, E) be SharpBounds' enclosure of input-gradient
// element k on the combined graph C at the same input. Then the exact
// input gradient (the registry's VJP formulas in exact arithmetic at the
// exact forward values) lies in X, and every gradient computation of the
// model produces a value within E of it.
//
// Proof. Let m be the masks of C: m = 1 where B_j.Lo > 0, else 0. (i)
// Every modelled evaluation holds at relu node j a value ŷ ∈ B_j (the
// box's invariant, GradBounds' doc); ŷ = max(x̂, 0) for the value x̂ of
// relu's argument that the same evaluation holds, so ŷ > 0 iff x̂ > 0,
// and the registry's relu VJP dy·step(x̂) (relu′(0) = 0) equals dy·m. The
// exact evaluation is one of the T_k the box holds, so the exact VJP uses
// the same m. (ii) With the masks fixed, the registry's VJP rules at the
// forward values are, formula for formula, the operations of C's reverse
// nodes (the table above; linear's dx = Wᵀ·dy is the sum Σ_j W_jk·dy_j
// with the exact term 0 added, which the model's "any order" covers by
// adding it last, exactly; the product dy·m is exact, m ∈ {0, 1}); the
// forward values they read are C's forward nodes, each computed once and
// read by every consumer, as M2 has it; a node's two contributions are
// added by one add node. So every gradient computation of the model is an
// evaluation of C satisfying M1–M3, and the exact input gradient is C's
// exact value. SharpBounds' theorem on C (doc.go) gives both claims. ∎
//
// Undecided masks. Where a relu box straddles 0 the runtime may take
// either mask, and the reverse formula is discontinuous in the forward
// value there: the first-order theorem does not hold across the jump, so
// C is not built (no combined bound for the whole input gradient — with
// dense layers every input element reads every cotangent).
//
// Parameter gradients (dW = dy·xᵀ, db = dy) keep the classic and boxed
// bounds: their combined graphs (one per parameter, the graph has one
// output) are not built.

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
	c := &irsem.Graph{InputID: g.InputID, Nodes: make([]irsem.Node, 0, 4*n)}
	cp := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for _, nd := range g.Nodes {
		c.Nodes = append(c.Nodes, irsem.Node{ID: nd.ID, Parents: append([]int{}, nd.Parents...), Kind: nd.Kind.Clone(), Shape: nd.Shape.Clone()})
		if e, ok := p.Entries[nd.ID]; ok {
			cp.Entries[nd.ID] = e
		}
	}
	add := func(k irsem.Kind, shape spec.Shape, parents ...int) int {
		id := len(c.Nodes)
		c.Nodes = append(c.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: shape.Clone()})
		return id
	}
	constant := func(t irsem.RatTensor) int {
		id := add(irsem.Kind{Op: irsem.OpConst, ValueShape: t.Shape.Clone()}, t.Shape)
		v := t
		cp.Entries[id] = &irsem.Params{Value: &v}
		return id
	}
	out := g.OutputID
	if !seed.Shape.Equal(g.Nodes[out].Shape) {
		return nil, nil, fmt.Sprintf("the cotangent's shape %v is not the output's %v", seed.Shape, g.Nodes[out].Shape)
	}
	cot := make([]int, n) // C's node holding node j's cotangent, −1 none
	for j := range cot {
		cot[j] = -1
	}
	cot[out] = constant(seed)
	contribute := func(q, v int) string {
		switch {
		case consumers[q] > 2:
			return fmt.Sprintf("node %d (%s) has %d consumers: its cotangent would be a sum of %d terms, which one add node does not hold", q, g.Nodes[q].Kind.Op, consumers[q], consumers[q])
		case cot[q] < 0:
			cot[q] = v
		default:
			cot[q] = add(irsem.Kind{Op: irsem.OpAdd}, g.Nodes[q].Shape, cot[q], v)
		}
		return ""
	}
	for j := n - 1; j >= 0; j-- {
		nd := &g.Nodes[j]
		if cot[j] < 0 || j == g.InputID {
			continue
		}
		dy := cot[j]
		var dx int
		switch nd.Kind.Op {
		case irsem.OpLinear:
			e := p.Entries[j]
			if e == nil || e.W == nil || len(e.W.Shape) != 2 || len(nd.Shape) != 1 {
				return nil, nil, fmt.Sprintf("node %d (linear): only a vector linear with its W has a declarative VJP here", j)
			}
			o, i := e.W.Shape[0], e.W.Shape[1]
			wt := irsem.RatTensor{Shape: spec.Shape{i, o}, Data: make([]spec.Rat, o*i)}
			for r := 0; r < o; r++ {
				for k := 0; k < i; k++ {
					wt.Data[k*o+r] = e.W.Data[r*i+k]
				}
			}
			zero := irsem.RatTensor{Shape: spec.Shape{i}, Data: make([]spec.Rat, i)}
			dx = add(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{i}, dy)
			cp.Entries[dx] = &irsem.Params{W: &wt, B: &zero}
		case irsem.OpTanh:
			sq := add(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, j, j)
			ones := irsem.RatTensor{Shape: nd.Shape.Clone(), Data: make([]spec.Rat, nd.Shape.Size())}
			for m := range ones.Data {
				ones.Data[m] = spec.NewRat(1, 1)
			}
			d := add(irsem.Kind{Op: irsem.OpSub}, nd.Shape, constant(ones), sq)
			dx = add(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, d)
		case irsem.OpRelu:
			b := boxes[j]
			if b.fused || len(b.box) != nd.Shape.Size() {
				return nil, nil, fmt.Sprintf("node %d (relu): no box to decide its mask", j)
			}
			mask := irsem.RatTensor{Shape: nd.Shape.Clone(), Data: make([]spec.Rat, len(b.box))}
			ones := 0
			for m, iv := range b.box {
				switch {
				case iv.Lo > 0:
					mask.Data[m] = spec.NewRat(1, 1)
					ones++
				case iv.Hi <= 0:
				default:
					return nil, nil, fmt.Sprintf("node %d (relu): element %d's box [%g, %g] holds the kink: the mask is undecided", j, m, iv.Lo, iv.Hi)
				}
			}
			dx = dy
			if ones < len(b.box) {
				dx = add(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, constant(mask))
			}
		default:
			return nil, nil, fmt.Sprintf("node %d (%s) has no declarative VJP", j, nd.Kind.Op)
		}
		if len(nd.Parents) != 1 {
			return nil, nil, fmt.Sprintf("node %d (%s): %d parents", j, nd.Kind.Op, len(nd.Parents))
		}
		if r := contribute(nd.Parents[0], dx); r != "" {
			return nil, nil, r
		}
	}
	if cot[g.InputID] < 0 {
		return nil, nil, "the output does not read the input"
	}
	c.OutputID = cot[g.InputID]
	return c, cp, ""
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
// (the theorem above): SharpBounds on the pruned combined graph, or a
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
