package onnx

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/limits"
)

// If [1, 11, 13, 16, 19, 21, 23, 24, 25] runs one of two subgraphs, then_branch or
// else_branch, chosen by the scalar BOOL cond; a branch reads values of the
// enclosing graph by name (ONNX's outer-scope rule) and its outputs are
// the If's outputs, in order.
//
// The IR has no control flow, so If imports only when cond is decided at
// import — a constant or a value folded from constants and bound integer
// inputs (affine_grid's expanded body branches on Size(size) = 4), or a
// comparison decided on a recorded graph input (decidedIn). The taken
// branch is then inlined: its nodes are imported in order into the
// enclosing graph, as if they stood in place of the If, and output k of
// the If is an Identity of the branch's output k. This is exactly the
// operator's semantics for that cond: the other branch is not evaluated
// by the operator either, so nothing of it is imported (its ops need not
// be importable). A cond computed from the float inputs is data-dependent
// and refused naming the node and the input. A branch with initializers
// is refused (none of the node tests has one; its constants would need
// the specials analysis of initializers), and so is a branch whose output
// count differs from the node's.
//
// The specials analysis (Analyze) walks the same inlined node list
// (Imported.flat), so an IEEE special inside a branch is judged as in the
// main graph.
func importIf(c *nctx) error {
	if err := c.arity(1, 1); err != nil {
		return err
	}
	cv, err := c.decidedIn(0)
	if err != nil {
		return err
	}
	if cv.shape.Size() != 1 {
		return c.errf(c.inField(0), "shape %v, the condition must have one element", cv.shape)
	}
	taken := false
	switch {
	case cv.isInt():
		taken = cv.ints[0] != 0
	case cv.ninf != nil && cv.ninf[0]:
		taken = true // −∞ is non-zero
	default:
		taken = !cv.exact()[0].IsZero()
	}
	c.seen["then_branch"], c.seen["else_branch"] = true, true
	name := "else_branch"
	if taken {
		name = "then_branch"
	}
	a := c.n.Attr(name)
	if a == nil || a.Type != AttrGraph || a.G == nil {
		return c.errf(attrField(name), "missing (If needs a GRAPH attribute for each branch)")
	}
	g := a.G
	if len(g.Initializers) > 0 {
		return c.errf(attrField(name), "initializer %s: initializers inside a subgraph are not supported", limits.Quote(g.Initializers[0].Name))
	}
	if len(g.Inputs) > 0 {
		return c.errf(attrField(name), "an If branch takes no inputs, this one declares %d", len(g.Inputs))
	}
	if len(g.Outputs) != len(c.n.Outputs) {
		return c.errf(attrField(name), "%d outputs, the node has %d", len(g.Outputs), len(c.n.Outputs))
	}
	prefix := c.n.Name
	if prefix == "" {
		prefix = fmt.Sprintf("#%d", c.n.Index)
	}
	prefix += "/" + name + "/"
	for _, inner := range g.Nodes {
		if inner == nil {
			return c.errf(attrField(name), "nil node")
		}
		cp := *inner
		label := inner.Name
		if label == "" {
			label = fmt.Sprintf("#%d", inner.Index)
		}
		cp.Name = prefix + label
		if err := c.b.importFlat(&cp); err != nil {
			return err
		}
	}
	for k, o := range g.Outputs {
		if o == nil || o.Name == "" {
			return c.errf(attrField(name), "output %d has no name", k)
		}
		if c.n.Outputs[k] == "" {
			continue
		}
		id := &Node{Index: c.n.Index, Name: fmt.Sprintf("%soutput %d", prefix, k), OpType: "Identity", Inputs: []string{o.Name}, Outputs: []string{c.n.Outputs[k]}}
		if err := c.b.importFlat(id); err != nil {
			return err
		}
	}
	return nil
}

// importFlat imports node n, and records it in the node list the
// specials analysis walks (Imported.flat): every node but an If, which
// records its inlined branch instead (importIf).
func (b *imp) importFlat(n *Node) error {
	if n == nil {
		return &ImportError{Field: "node", Err: errors.New("nil node")}
	}
	if !(n.OpType == "If" && (n.Domain == "" || n.Domain == "ai.onnx")) {
		b.im.flat = append(b.im.flat, n)
	}
	outer := b.where
	b.where = n.Where()
	defer func() { b.where = outer }()
	if err := b.importNode(n); err != nil {
		var ie *ImportError
		if errors.As(err, &ie) {
			return err
		}
		return &ImportError{Node: n.Where(), Err: err}
	}
	return nil
}

func init() { importers["If"] = importIf }
