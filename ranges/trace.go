package ranges

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Limits on the graphs a trace accepts, so that a hostile graph cannot make
// the tracer (or a certificate checker) allocate or compute without bound.
// A checker replays the graph in software binary32 at every sample point,
// so the limits also bound the cost of checking a certificate.
const (
	// MaxTraceElements bounds the total element count of all nodes.
	MaxTraceElements = 1 << 20
	// MaxTraceWork bounds the multiply-add steps of all matmul and linear
	// nodes together.
	MaxTraceWork = 1 << 24
)

// NodeTrace is one node of a trace: its enclosures and how they were
// obtained.
type NodeTrace struct {
	// ID is the node id and Tag its IR tag.
	ID  int
	Tag irsem.Op
	// Rule is the range rule applied.
	Rule string
	// Kernels are the node's planned kernels (none for a source), each
	// with its capsule and so its reduction policy.
	Kernels []backend.PlannedKernel
	// Enclosures holds one Interval32 per element of the node's value,
	// row-major.
	Enclosures []Interval32
}

// Trace computes one enclosure per element of every node of g by
// outward-rounded interval propagation from the input box (one Interval32
// per input element), with payload p and the kernel plan made for g (see
// PlanKernels; backend.Plan). The result is indexed by node id, then by flat element
// index. Every enclosure holds both the node's exact real value and the
// value a binary32 execution of the plan computes, for every input point in
// the box (see the package doc for the argument, and Rules for the rule of each
// tag).
//
// Trace fails — it never widens an enclosure to the whole line — at a tag
// without a range rule, at an operation whose enclosure would leave the
// binary32 range or is undefined (a division by an interval containing 0,
// a log of an interval reaching 0), and at a reduction whose selected
// capsule does not promise reduction policy fixed-left:
//
//	node 4 (sum): range rule sumLeft requires a fixed-left capsule; selected fast_cpu.sum is implementation-defined
//
// Every error that concerns a node is a *spec.NodeError naming it.
func Trace(g *irsem.Graph, p *irsem.Payload, box Interval32Tensor, plan *backend.GraphKernelPlan) ([][]Interval32, error) {
	nodes, err := TraceNodes(g, p, box, plan)
	if err != nil {
		return nil, err
	}
	out := make([][]Interval32, len(nodes))
	for i := range nodes {
		out[i] = nodes[i].Enclosures
	}
	return out, nil
}

// TraceNodes is Trace with each node's rule and capsule.
func TraceNodes(g *irsem.Graph, p *irsem.Payload, box Interval32Tensor, plan *backend.GraphKernelPlan) ([]NodeTrace, error) {
	if g == nil {
		return nil, unplaced("no graph", nil)
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := irsem.CheckPayload(g, p); err != nil {
		return nil, err
	}
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, err
	}
	if err := checkPlan(g, plan, apps); err != nil {
		return nil, err
	}
	if err := checkBudget(g); err != nil {
		return nil, err
	}
	out := make([]NodeTrace, len(g.Nodes))
	vals := make([][]Interval32, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		np := &plan.Nodes[i]
		nt := NodeTrace{ID: i, Tag: n.Kind.Op, Kernels: append([]backend.PlannedKernel(nil), np.Kernels...)}
		r, ok := table().index[n.Kind.Op]
		if !ok {
			return nil, &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("no range rule for tag %q; unsupported operations fail rather than widen to [-inf, inf]", n.Kind.Op)}
		}
		nt.Rule = r.Rule
		if !np.Accepted() {
			return nil, &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1, Rule: r.Rule,
				Msg: "the kernel plan rejects it: " + strings.Join(np.Reasons, "; ")}
		}
		if r.FixedLeft {
			if err := requireFixedLeft(n, r.Rule, np); err != nil {
				return nil, err
			}
		}
		c := &nodeCtx{g: g, n: n, e: p.Entry(i), box: &box, app: &apps[i], rule: r.Rule}
		for _, q := range n.Parents {
			c.in = append(c.in, vals[q])
		}
		v, err := r.fn(c)
		if err != nil {
			return nil, ruleError(n, c.rule, err)
		}
		nt.Rule = c.rule
		if want := shapeOrScalar(n.Shape).Size(); len(v) != want {
			return nil, &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1, Rule: r.Rule,
				Msg: fmt.Sprintf("range rule %s produced %d enclosures for shape %v (%d elements)", r.Rule, len(v), n.Shape, want)}
		}
		for j, x := range v {
			if err := x.Valid(); err != nil { // unreachable: every operation checks
				return nil, &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: j, Rule: r.Rule, Msg: "range rule " + r.Rule, Err: err}
			}
		}
		vals[i] = v
		nt.Enclosures = v
		out[i] = nt
	}
	return out, nil
}

// ruleError places a rule's failure at its node (and element).
func ruleError(n *irsem.Node, rule string, err error) error {
	e := &spec.NodeError{Node: n.ID, Op: string(n.Kind.Op), Elem: -1, Rule: rule, Msg: "range rule " + rule, Err: err}
	var ee *elemError
	if errors.As(err, &ee) {
		e.Elem, e.Err = ee.elem, ee.err
	}
	return e
}

// checkBudget enforces MaxTraceElements and MaxTraceWork.
func checkBudget(g *irsem.Graph) error {
	total, work := 0, 0
	for i := range g.Nodes {
		n := &g.Nodes[i]
		sz := shapeOrScalar(n.Shape).Size()
		total += sz
		if total > MaxTraceElements {
			return &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("the graph's values exceed %d elements in all", MaxTraceElements)}
		}
		var k int
		switch n.Kind.Op {
		case irsem.OpMatmul:
			a := shapeOrScalar(g.Nodes[n.Parents[0]].Shape)
			if len(a) > 0 {
				k = a[len(a)-1]
			}
		case irsem.OpLinear:
			a := shapeOrScalar(g.Nodes[n.Parents[0]].Shape)
			if len(a) > 0 {
				k = a[len(a)-1]
			}
		}
		if k > 0 {
			if sz > MaxTraceWork/k || work+sz*k > MaxTraceWork {
				return &spec.NodeError{Node: i, Op: string(n.Kind.Op), Elem: -1,
					Msg: fmt.Sprintf("the graph's products exceed %d multiply-adds in all", MaxTraceWork)}
			}
			work += sz * k
		}
	}
	return nil
}

// BoxFromFloat32 builds an input box from per-element lower and upper
// bounds of the given shape.
func BoxFromFloat32(shape spec.Shape, lo, hi []float32) (Interval32Tensor, error) {
	n, err := shapeOrScalar(shape).Check(0)
	if err != nil {
		return Interval32Tensor{}, err
	}
	if len(lo) != n || len(hi) != n {
		return Interval32Tensor{}, fmt.Errorf("ranges: box of shape %v needs %d bounds, got %d and %d", shape, n, len(lo), len(hi))
	}
	out := Interval32Tensor{Shape: shapeOrScalar(shape).Clone(), Data: make([]Interval32, n)}
	for i := range out.Data {
		x, err := NewInterval32(lo[i], hi[i])
		if err != nil {
			return Interval32Tensor{}, unplaced(fmt.Sprintf("box element %d", i), err)
		}
		out.Data[i] = x
	}
	return out, nil
}
