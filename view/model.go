package view

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// What names a view.
type What string

// The views.
const (
	Tape  What = "tape"
	Grads What = "grads"
	Trace What = "trace"
	Diff  What = "diff"
)

// Whats lists every view, in the order above.
func Whats() []What { return []What{Tape, Grads, Trace, Diff} }

// Node is one drawn box: an IR node, or (Folded > 0) a run of folded
// chain nodes.
type Node struct {
	// ID is the IR node id (the first folded id for a fold).
	ID int
	// Op is the IR tag ("mul_elem", "detach", …).
	Op string
	// Shape is the declared output shape, printed.
	Shape string
	// Name is where the node came from (the ONNX node), if known.
	Name string
	// Detach marks a stop-gradient node.
	Detach bool
	// Input and Output mark the graph's input and output nodes.
	Input, Output bool
	// Reached is whether a cotangent reached the node (grads, trace); an
	// unreached node has no cotangent, which is not a zero one.
	Reached bool
	// Cotangent is the node's cotangent, printed ("" when unreached).
	Cotangent string
	// Trace is the node's 1-based position in the reverse traversal (the
	// first of its tape nodes whose backward ran); 0 when none ran. For a
	// fold, Trace and TraceLast are the first and last steps of the run.
	Trace, TraceLast int
	// Highlight marks the node of the first disagreement (diff).
	Highlight bool
	// Folded counts the chain nodes this box stands for (0: a plain node);
	// LastID is the last of them.
	Folded, LastID int
	// Value is the node's forward value at the input, printed (AddValues;
	// "" when not computed).
	Value string
	// Param marks a parameter box (AddParams): a payload tensor or, for an
	// imported ONNX model, an initializer. Field is its payload field
	// ("W", "b", "gamma", …, "value" for a const node), Reader the IR node
	// that reads it (a const node reads nothing: Reader is 0), Grad its
	// gradient, printed ("" when not computed).
	Param  bool
	Field  string
	Reader int
	Grad   string
}

// Edge is one parent slot: From is the parent, To the node that reads it
// at slot Slot. A parent read twice (x⊙x) is two edges, slots 0 and 1.
type Edge struct {
	From, To, Slot int
	// Cut marks the edge into a detach node: the forward value passes,
	// no cotangent comes back along it.
	Cut bool
	// Contribs are the cotangent contributions the reverse pass sent
	// along this edge, from To to From, printed; Dropped those it
	// discarded because From takes no gradient (a detach node, a const).
	Contribs []string
	Dropped  bool
	// Param marks the edge from a parameter box to its reader (AddParams);
	// Slot is then -1 and Field names the parameter.
	Param bool
	Field string
}

// DiffInfo is the first disagreement between two paths (or scalars), as
// diffrun.DiffIR reports it, plus the comparisons that agreed.
type DiffInfo struct {
	// Found is false when every comparison agreed.
	Found        bool
	Node         int // -1: the whole graph
	Element      int // -1: none
	Op           string
	Scalar, What string
	A, B         string
	LHS, RHS     string
	Message      string
	// Agree lists the comparisons that agreed ("rat forward: ir ~ tape (5
	// compared)": the count of nodes or context entries compared).
	Agree []string
	// Skipped lists the scalars or paths that did not apply, and why.
	Skipped []string
}

// Model is what every renderer draws. Nodes are in IR id order (a
// topological order: parents before children); Edges in the order of the
// children and, within a child, of its slots; edge endpoints are IR ids.
type Model struct {
	What  What
	Title string
	Nodes []Node
	Edges []Edge
	// Scalar is the scalar of the grads, trace and diff values.
	Scalar string
	// Folded counts the nodes folded into chain boxes.
	Folded int
	// Params counts the parameters drawn (AddParams).
	Params int
	// Diff is set by the diff view.
	Diff *DiffInfo
	// Notes are one-line remarks shown under the title.
	Notes []string
}

// FromGraph builds the tape view of g: one node per IR node, one edge per
// parent slot, the edge into each detach node cut. origin, when not nil,
// names the source of each node (onnx.Imported.Origin).
func FromGraph(g *irsem.Graph, origin []string) (*Model, error) {
	if g == nil {
		return nil, errors.New("view: no graph")
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	m := &Model{What: Tape, Nodes: make([]Node, len(g.Nodes))}
	for i, n := range g.Nodes {
		op := string(n.Kind.Op)
		m.Nodes[i] = Node{ID: n.ID, Op: op, Shape: n.Shape.String(), Detach: op == "detach", Input: i == g.InputID, Output: i == g.OutputID}
		if i < len(origin) {
			m.Nodes[i].Name = origin[i]
		}
		for s, p := range n.Parents {
			m.Edges = append(m.Edges, Edge{From: p, To: n.ID, Slot: s, Cut: op == "detach"})
		}
	}
	return m, nil
}

// AddGrads runs the reverse pass of g over T along the eager tape
// (irgrad's PathTape: the IR recorded on a tape with the registry's VJPs,
// the dense sweep from the output seeded with ones of its shape) and
// annotates m with every node's cotangent, the reached set, the
// contributions along every edge and the traversal order. The
// contributions are those of the sweep itself: each reached tape node's
// recorded backward is applied to its final cotangent, and every
// contribution that crosses from one IR node to another is attached to the
// IR edge it travels along (the k-th contribution from node c to parent p
// to the k-th slot of c that reads p). Their sum at a node, taken in the
// order the sweep visits them (tape ids from the last down, a node's slots
// in order, the running sum on the left: the tape's accumulate), is its
// cotangent — exactly, over every scalar, floats included, since it is the
// same sum in the same order. AddGrads checks that at every node
// (checkSum) and returns an error if it ever fails, so a picture whose
// contributions do not add up to the cotangents it shows is never drawn.
func AddGrads[T spec.Scalar[T]](m *Model, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T]) error {
	l, err := irgrad.Lower[T](nil, g, p)
	if err != nil {
		return err
	}
	run, err := l.Record(x)
	if err != nil {
		return err
	}
	tp := run.Tape
	out := run.Nodes[g.OutputID]
	ov, err := tp.Value(out)
	if err != nil {
		return err
	}
	seed, err := spec.Full(ov.Shape.Clone(), spec.One[T]())
	if err != nil {
		return err
	}
	gs, err := tp.Backward(out, seed)
	if err != nil {
		return l.TapeErr(run, err)
	}
	m.Scalar = string(spec.KindOf[T]())
	for i := range m.Nodes {
		v, ok := gs.Get(run.Nodes[m.Nodes[i].ID])
		m.Nodes[i].Reached = ok
		if ok {
			m.Nodes[i].Cotangent = valueText(v)
		}
	}
	// Traversal order, per IR node: the first of its tape nodes to run.
	pos := 0
	for _, tid := range gs.Order {
		o := run.Owner[tid]
		if m.Nodes[o].Trace == 0 {
			pos++
			m.Nodes[o].Trace = pos
		}
	}
	// Contributions: replay each reached tape node's backward.
	edgeAt := map[[2]int][]int{} // (child, parent) → edge indices in slot order
	for i, e := range m.Edges {
		k := [2]int{e.To, e.From}
		edgeAt[k] = append(edgeAt[k], i)
	}
	used := map[[2]int]int{}
	recv := make([][]spec.Tensor[T], len(m.Nodes)) // per IR node, in sweep order
	for tid := tp.Len() - 1; tid >= 0; tid-- {
		n, _ := tp.Node(tid)
		ct, ok := gs.Get(tid)
		if !ok || !n.RequiresGrad || n.Backward == nil {
			continue
		}
		cs, err := n.Backward(ct)
		if err != nil {
			return l.TapeErr(run, err)
		}
		c := run.Owner[tid]
		for _, cb := range cs {
			par := run.Owner[cb.Parent]
			if par == c {
				continue
			}
			k := [2]int{c, par}
			idx := edgeAt[k]
			if len(idx) == 0 {
				return spec.NewNodeError(c, m.Nodes[c].Op, fmt.Sprintf("a contribution reaches node %d, which it does not read", par), nil)
			}
			j := min(used[k], len(idx)-1)
			used[k]++
			e := &m.Edges[idx[j]]
			pn, _ := tp.Node(cb.Parent)
			if !pn.RequiresGrad {
				e.Dropped = true
				continue
			}
			e.Contribs = append(e.Contribs, valueText(cb.Grad))
			if cb.Parent == run.Nodes[par] {
				recv[par] = append(recv[par], cb.Grad)
			}
		}
	}
	for i := range m.Nodes {
		if len(recv[i]) == 0 {
			continue
		}
		ct, _ := gs.Get(run.Nodes[i])
		if err := checkSum(ct, recv[i]); err != nil {
			return spec.NewNodeError(i, m.Nodes[i].Op, "", err)
		}
	}
	return nil
}

// checkSum reports whether the contributions cs, summed left to right,
// equal ct exactly (spec.SameTensor).
func checkSum[T spec.Scalar[T]](ct spec.Tensor[T], cs []spec.Tensor[T]) error {
	sum := cs[0]
	for _, c := range cs[1:] {
		var err error
		if sum, err = spec.AddT(sum, c); err != nil {
			return fmt.Errorf("contributions do not add: %w", err)
		}
	}
	if !spec.SameTensor(sum, ct) {
		return fmt.Errorf("the %d contributions drawn sum to %s, but the sweep's cotangent is %s", len(cs), sum, ct)
	}
	return nil
}

// AddDiff runs diffrun.DiffIR on g (the comparisons of tlcheck diff)
// and records the first disagreement in m: the node it names is
// highlighted, and the comparisons that agreed are listed.
func AddDiff(m *Model, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat], o diffrun.DiffOptions) (*diffrun.DiffReport, error) {
	rep, err := diffrun.DiffIR(g, p, x, o)
	if err != nil {
		return nil, err
	}
	d := &DiffInfo{Node: -1, Element: -1, Skipped: rep.Skipped}
	for _, c := range rep.Checks {
		if c.Failure == nil {
			d.Agree = append(d.Agree, fmt.Sprintf("%s %s: %s ~ %s (%d compared)", c.Scalar, c.What, c.A, c.B, c.Nodes))
		}
	}
	if c := rep.First(); c != nil {
		f := c.Failure
		d.Found, d.Node, d.Element, d.Op = true, f.Node, f.Element, f.Op
		d.Scalar, d.What, d.A, d.B, d.LHS, d.RHS = c.Scalar, c.What, c.A, c.B, f.LHS, f.RHS
		first, _, _ := strings.Cut(f.Error(), "\n")
		d.Message = first
		if f.Node >= 0 && f.Node < len(m.Nodes) {
			m.Nodes[f.Node].Highlight = true
		}
	}
	m.Diff = d
	return rep, nil
}
