package harness

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// Node is one operation of a case graph: a registry primitive applied to
// earlier values. Args index the graph's values: k < Graph.Inputs is input
// k, and Graph.Inputs + j is node j (so a node reads only inputs and
// earlier nodes).
type Node struct {
	Op    string
	Attrs *spec.Attrs
	Args  []int
}

// Graph is a small DAG in the registry's primitives; its output is the
// last node. Every input is differentiated.
type Graph struct {
	Inputs int
	Nodes  []Node
}

// Ops lists the distinct primitives of g in order of first use.
func (g Graph) Ops() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range g.Nodes {
		if !seen[n.Op] {
			seen[n.Op] = true
			out = append(out, n.Op)
		}
	}
	return out
}

// Check reports the first structural error of g: no node, an argument
// that is not an input or an earlier node, or an unknown primitive.
func (g Graph) Check() error {
	if len(g.Nodes) == 0 {
		return fmt.Errorf("graph has no node")
	}
	reg := spec.Default[spec.Rat]()
	for j, n := range g.Nodes {
		if _, err := reg.Lookup(n.Op); err != nil {
			return fmt.Errorf("node %d: %w", j, err)
		}
		for _, a := range n.Args {
			if a < 0 || a >= g.Inputs+j {
				return fmt.Errorf("node %d (%s): argument %d is not an input or an earlier node", j, n.Op, a)
			}
		}
	}
	return nil
}

// Expand replaces every node whose primitive has a convention in convs by
// the convention's graph, wired to the node's arguments, and returns the
// expanded graph (the same graph when no convention applies). A
// convention's graph reads its Inputs from the replaced node's arguments
// and its last node becomes the replaced node's value.
func (g Graph) Expand(convs []Convention) Graph { return g.ExpandAt(convs, nil) }

// ExpandAt is Expand where shapes gives the shape of every value of g
// (inputs, then nodes; ValueShapes computes them): a convention with only
// ExpandAt applies too, at the node's argument shapes. With shapes nil it
// is Expand.
func (g Graph) ExpandAt(convs []Convention, shapes []spec.Shape) Graph {
	by := map[string]Convention{}
	for _, c := range convs {
		if c.Expand != nil || (c.ExpandAt != nil && shapes != nil) {
			by[c.Op] = c
		}
	}
	out := Graph{Inputs: g.Inputs}
	where := make([]int, g.Inputs+len(g.Nodes)) // value index in g → in out
	for i := 0; i < g.Inputs; i++ {
		where[i] = i
	}
	for j, n := range g.Nodes {
		args := make([]int, len(n.Args))
		for k, a := range n.Args {
			args[k] = where[a]
		}
		c, ok := by[n.Op]
		var sub Graph
		if ok && c.Expand != nil {
			sub = c.Expand(n.Attrs)
		} else if ok {
			in := make([]spec.Shape, len(n.Args))
			for k, a := range n.Args {
				in[k] = shapes[a]
			}
			var err error
			if sub, err = c.ExpandAt(n.Attrs, in); err != nil {
				ok = false
			}
		}
		if !ok {
			out.Nodes = append(out.Nodes, Node{Op: n.Op, Attrs: n.Attrs, Args: args})
			where[g.Inputs+j] = g.Inputs + len(out.Nodes) - 1
			continue
		}
		base := g.Inputs + len(out.Nodes) // index of sub's first node in out
		for _, m := range sub.Nodes {
			margs := make([]int, len(m.Args))
			for k, a := range m.Args {
				if a < sub.Inputs {
					margs[k] = args[a]
				} else {
					margs[k] = base + a - sub.Inputs
				}
			}
			out.Nodes = append(out.Nodes, Node{Op: m.Op, Attrs: m.Attrs, Args: margs})
		}
		where[g.Inputs+j] = g.Inputs + len(out.Nodes) - 1
	}
	return out
}

// ValueShapes returns the shape of every value of g (inputs, then nodes)
// at inputs xs, from the registry's forward rules over float64 (only the
// shapes are used).
func (g Graph) ValueShapes(xs []spec.Tensor[spec.Rat]) ([]spec.Shape, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if len(xs) != g.Inputs {
		return nil, fmt.Errorf("%d inputs for a graph of %d", len(xs), g.Inputs)
	}
	reg := spec.Default[spec.F64]()
	vals := make([]spec.Tensor[spec.F64], 0, g.Inputs+len(g.Nodes))
	for _, x := range xs {
		vals = append(vals, spec.Convert(x, func(r spec.Rat) spec.F64 { return spec.F64(r.Float64()) }))
	}
	for j, n := range g.Nodes {
		p, err := reg.Lookup(n.Op)
		if err != nil {
			return nil, err
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		ins := make([]spec.Tensor[spec.F64], len(n.Args))
		for k, arg := range n.Args {
			ins[k] = vals[arg]
		}
		y, err := p.Forward(a, ins)
		if err != nil {
			return nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		vals = append(vals, y)
	}
	shapes := make([]spec.Shape, len(vals))
	for i, v := range vals {
		shapes[i] = v.Shape.Clone()
	}
	return shapes, nil
}

// Tensor64 is a row-major float64 tensor, the engines' currency.
type Tensor64 struct {
	Shape []int
	Data  []float64
}

// Float64s converts an exact tensor whose values are binary64 numbers
// (the cases' dyadics are) to a Tensor64, exactly.
func Float64s(t spec.Tensor[spec.Rat]) Tensor64 {
	out := Tensor64{Shape: append([]int(nil), t.Shape...), Data: make([]float64, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = v.Float64()
	}
	return out
}

// Live marks the values of g (inputs, then nodes) the output depends on
// through some path.
func (g Graph) Live() []bool {
	live := make([]bool, g.Inputs+len(g.Nodes))
	if len(g.Nodes) > 0 {
		live[len(live)-1] = true
	}
	for j := len(g.Nodes) - 1; j >= 0; j-- {
		if live[g.Inputs+j] {
			for _, a := range g.Nodes[j].Args {
				if a >= 0 && a < len(live) {
					live[a] = true
				}
			}
		}
	}
	return live
}

// Reached reports, per input, whether the output depends on it through
// some path of g (an unreached input's gradient is exactly zero).
func (g Graph) Reached() []bool { return g.Live()[:g.Inputs] }
