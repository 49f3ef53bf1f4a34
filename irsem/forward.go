package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// ForwardGraph is the IR lowered to a forward-only graph of closures over
// one scalar (TorchLean's IRExec.ForwardGraph α): node 0 is the input,
// every other node a closure over its parents' values with its payload
// already converted to T. It has no JVP or VJP rules. Like the tape, it
// keeps its shapes in fields because the graph it came from did not know
// them statically.
type ForwardGraph[T spec.Scalar[T]] struct {
	// InShape is the input's shape (node 0's).
	InShape spec.Shape
	// Shapes holds every node's shape, indexed by id (TorchLean's ss).
	Shapes []spec.Shape
	// Ops holds every node's tag and Parents its parent ids.
	Ops     []Op
	Parents [][]int
	// OutputID is the id of the output node.
	OutputID int

	steps []step[T]
}

// LowerForward lowers g with payload p to a forward graph over T. g must
// pass Check and p CheckPayload against it, and node 0 must be g's input.
// Over spec.Rat, tags without exact rational semantics are rejected here,
// by name. Each node's closure runs the registry rule's Forward directly
// (its shapes were checked once, here) on parameters converted once, here.
// Raw log lowers to the scalar's total logarithm: the forward graph does
// not reject x ≤ 0 the way DenoteAll does (CompareWithDenote excludes raw
// log nodes for that reason, as the chapter's lowering theorem does).
// safe_log is not raw log: it rejects softplus(x)+ε ≤ 0 exactly as
// DenoteAll, the tape and the typed graph do.
func LowerForward[T spec.Scalar[T]](g *Graph, p *Payload) (*ForwardGraph[T], error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := CheckPayload(g, p); err != nil {
		return nil, err
	}
	if g.InputID != 0 {
		return nil, nodeErrf(0, g.Nodes[0].Kind.Op, "", "lowering needs the input at node 0, but input_id is %d", g.InputID)
	}
	reg := spec.Default[T]()
	f := &ForwardGraph[T]{
		InShape:  g.Nodes[0].Shape.Clone(),
		Shapes:   make([]spec.Shape, len(g.Nodes)),
		Ops:      make([]Op, len(g.Nodes)),
		Parents:  make([][]int, len(g.Nodes)),
		OutputID: g.OutputID,
		steps:    make([]step[T], len(g.Nodes)),
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		f.Shapes[i] = n.Shape.Clone()
		f.Ops[i] = n.Kind.Op
		f.Parents[i] = cloneInts(n.Parents)
		if i == 0 {
			continue
		}
		st, err := buildStep(reg, g, n, p.Entry(i), modeForward)
		if err != nil {
			return nil, err
		}
		f.steps[i] = st
	}
	return f, nil
}

// Run evaluates the forward graph at input and returns every node's value,
// indexed by id. Each value is checked against its stored shape. Values
// may share storage with input, with each other (detach, reshape) and with
// the graph's converted constants, so callers treat them as read-only. Run
// keeps no state between calls and is safe for concurrent use.
func (f *ForwardGraph[T]) Run(input spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if len(input.Data) != input.Shape.Size() || !input.Shape.Equal(f.InShape) {
		return nil, nodeErrf(0, OpInput, "", "shape mismatch: expected %v, got %v (%d values)", f.InShape, input.Shape, len(input.Data))
	}
	vals := make([]spec.Tensor[T], len(f.steps))
	vals[0] = input
	xs := make([]spec.Tensor[T], 0, 4)
	for i := 1; i < len(f.steps); i++ {
		xs = xs[:0]
		for _, q := range f.Parents[i] {
			xs = append(xs, vals[q])
		}
		v, err := f.steps[i](xs)
		if err != nil {
			return nil, wrapNode(i, f.Ops[i], "", err)
		}
		if !v.Shape.Equal(f.Shapes[i]) || len(v.Data) != f.Shapes[i].Size() {
			return nil, nodeErrf(i, f.Ops[i], "", "shape mismatch: expected %v, got %v (%d values)", f.Shapes[i], v.Shape, len(v.Data))
		}
		vals[i] = v
	}
	return vals, nil
}

// NodeComparison is the verdict on one node of CompareWithDenote.
type NodeComparison struct {
	ID int
	Op Op
	// Excluded is true for raw log nodes, which the comparison (like the
	// chapter's lowering theorem) leaves out.
	Excluded bool
	// Same is true when the two values agree: equal shapes and every
	// element Same (exact equality over Rat, bit equality over floats,
	// both endpoints over intervals).
	Same bool
	// Detail describes the first difference ("" when Same or Excluded).
	Detail string
}

// Comparison is the node-by-node comparison of a forward graph's value
// table with DenoteAll's.
type Comparison struct {
	// Scalar is the scalar kind compared over.
	Scalar string
	// Nodes has one entry per node, by id.
	Nodes []NodeComparison
	// Compared, Excluded and Mismatches count the nodes.
	Compared, Excluded, Mismatches int
}

// OK reports that every compared node agreed.
func (c *Comparison) OK() bool { return c.Mismatches == 0 }

// Err returns the first mismatch as an *Error naming the node, or nil.
func (c *Comparison) Err() error {
	for _, n := range c.Nodes {
		if !n.Excluded && !n.Same {
			return nodeErrf(n.ID, n.Op, "", "forward graph and DenoteAll differ over %s: %s", c.Scalar, n.Detail)
		}
	}
	return nil
}

// CompareWithDenote lowers g and p with LowerForward, runs the forward
// graph at input, evaluates DenoteAll at the same input and compares the
// two value tables node by node with Same: exactly over spec.Rat, bit for
// bit over float scalars. Raw log nodes are excluded, as in the chapter's
// lowering theorem (which is stated for graphs without raw log). An error
// means one of the two paths failed; disagreement is reported in the
// Comparison.
func CompareWithDenote[T spec.Scalar[T]](g *Graph, p *Payload, input spec.Tensor[T]) (*Comparison, error) {
	f, err := LowerForward[T](g, p)
	if err != nil {
		return nil, fmt.Errorf("lowering: %w", err)
	}
	fv, err := f.Run(input)
	if err != nil {
		return nil, fmt.Errorf("forward graph: %w", err)
	}
	dv, err := DenoteAll(g, p, input)
	if err != nil {
		return nil, fmt.Errorf("DenoteAll: %w", err)
	}
	return CompareTables(g, fv, dv)
}

// CompareTables compares two value tables of g (say a forward graph's and
// DenoteAll's) node by node with Same, excluding raw log nodes.
func CompareTables[T spec.Scalar[T]](g *Graph, a, b []spec.Tensor[T]) (*Comparison, error) {
	if len(a) != len(g.Nodes) || len(b) != len(g.Nodes) {
		return nil, fmt.Errorf("value tables of %d and %d entries for a graph of %d nodes", len(a), len(b), len(g.Nodes))
	}
	c := &Comparison{Scalar: spec.KindOf[T](), Nodes: make([]NodeComparison, len(g.Nodes))}
	for i := range g.Nodes {
		nc := NodeComparison{ID: i, Op: g.Nodes[i].Kind.Op}
		switch {
		case nc.Op == OpLog:
			nc.Excluded = true
			c.Excluded++
		default:
			c.Compared++
			nc.Same, nc.Detail = sameTensor(a[i], b[i])
			if !nc.Same {
				c.Mismatches++
			}
		}
		c.Nodes[i] = nc
	}
	return c, nil
}

// sameTensor compares two tensors with Same and describes the first
// difference.
func sameTensor[T spec.Scalar[T]](x, y spec.Tensor[T]) (bool, string) {
	switch i, ok := spec.FirstDiff(x, y, nil); {
	case ok:
		return true, ""
	case i < 0:
		return false, fmt.Sprintf("shapes %v and %v", x.Shape, y.Shape)
	default:
		return false, fmt.Sprintf("element %d: %s vs %s", i, x.Data[i], y.Data[i])
	}
}
