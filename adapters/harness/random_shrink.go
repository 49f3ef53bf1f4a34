package harness

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// shrinkGraph returns the smallest case it finds that still fails r's
// obligation on r's machine, by greedy passes over smaller graphs, the
// first that still fails taken each time (deterministic: candidates in a
// fixed order):
//
//  1. the output moved to an earlier node (the later nodes dropped), the
//     earliest first;
//  2. a node bypassed: its uses read a value it depends on of the same
//     shape instead (its arguments first, then theirs: bypassing a chain
//     exp → log at once keeps the log's argument positive where
//     bypassing the exp alone would not);
//
// each followed by dropping the nodes the output no longer depends on and
// the inputs it no longer reads. A candidate leaving the random cases'
// domain (randomValid: a log whose argument is no longer an exp, say) is
// not tried. Every candidate is a strictly smaller
// graph, so the passes end. The second result is the failing row of the
// smallest case.
func shrinkGraph(e Engine, c Case, r Row) (Case, Row) {
	cur, row := c, r
	for changed := true; changed; {
		changed = false
		for _, cand := range graphCandidates(cur) {
			if s, ok := stillFails(e, cand, r); ok {
				cur, row, changed = cand, s, true
				break
			}
		}
	}
	return cur, row
}

// stillFails runs case c and returns its row failing r's obligation on
// r's machine, if there is one.
func stillFails(e Engine, c Case, r Row) (Row, bool) {
	if supports(e, c.Graph) != nil {
		return Row{}, false
	}
	for _, s := range runCase(e, c) {
		if s.Obligation == r.Obligation && s.Machine == r.Machine && s.Finding() {
			return s, true
		}
	}
	return Row{}, false
}

// graphCandidates lists the smaller graphs of c in the order shrinkGraph
// tries them.
func graphCandidates(c Case) []Case {
	g := c.Graph
	var out []Case
	shapes, err := g.ValueShapes(c.Xs)
	if err != nil {
		return nil
	}
	for j := 0; j+1 < len(g.Nodes); j++ {
		d := c
		d.Graph = Graph{Inputs: g.Inputs, Nodes: g.Nodes[:j+1]}
		d.Cot = cotLike(c.Cot, shapes[g.Inputs+j])
		out = append(out, compact(d))
	}
	for j := range g.Nodes[:len(g.Nodes)-1] { // bypassing the output is moving it (above)
		for _, a := range ancestors(g, j) {
			if !shapes[a].Equal(shapes[g.Inputs+j]) {
				continue
			}
			if d, ok := bypass(c, j, a); ok {
				out = append(out, compact(d))
			}
		}
	}
	var valid []Case
	for _, d := range out {
		if len(d.Graph.Nodes) > 0 && randomValid(d.Graph, d.Xs) {
			if d.Tangents != nil && !smoothAt(d.Graph, d.Xs) {
				d.Tangents = nil
			}
			valid = append(valid, d)
		}
	}
	return valid
}

// ancestors lists the values node j depends on, its arguments first,
// then breadth-first, each once.
func ancestors(g Graph, j int) []int {
	var out []int
	seen := map[int]bool{}
	queue := append([]int(nil), g.Nodes[j].Args...)
	for len(queue) > 0 {
		a := queue[0]
		queue = queue[1:]
		if seen[a] {
			continue
		}
		seen[a] = true
		out = append(out, a)
		if a >= g.Inputs {
			queue = append(queue, g.Nodes[a-g.Inputs].Args...)
		}
	}
	return out
}

// cotLike is a cotangent of shape s with the values of cot, cycled
// (nonzero where cot is).
func cotLike(cot spec.Tensor[spec.Rat], s spec.Shape) spec.Tensor[spec.Rat] {
	if cot.Shape.Equal(s) {
		return cot
	}
	t, _ := spec.Zeros[spec.Rat](s.Clone())
	for k := range t.Data {
		t.Data[k] = cot.Data[k%len(cot.Data)]
	}
	return t
}

// bypass removes node j of c, its uses reading value a instead.
func bypass(c Case, j, a int) (Case, bool) {
	g := c.Graph
	if j == len(g.Nodes)-1 {
		return Case{}, false // the output: moving it is a candidate of its own
	}
	in := g.Inputs
	out := Graph{Inputs: in}
	where := make([]int, in+len(g.Nodes))
	for i := 0; i < in; i++ {
		where[i] = i
	}
	for k, n := range g.Nodes {
		if k == j {
			where[in+k] = where[a]
			continue
		}
		args := make([]int, len(n.Args))
		for i, x := range n.Args {
			args[i] = where[x]
		}
		out.Nodes = append(out.Nodes, Node{Op: n.Op, Attrs: n.Attrs, Args: args})
		where[in+k] = in + len(out.Nodes) - 1
	}
	d := c
	d.Graph = out
	return d, true
}

// compact drops the nodes the output does not depend on and the inputs it
// does not read.
func compact(c Case) Case {
	g := c.Graph
	live := g.Live()
	d := c
	d.Xs, d.Tangents = nil, nil
	inputs := 0
	for i := 0; i < g.Inputs; i++ {
		if live[i] {
			inputs++
			d.Xs = append(d.Xs, c.Xs[i])
			if c.Tangents != nil {
				d.Tangents = append(d.Tangents, c.Tangents[i])
			}
		}
	}
	d.Graph = renumber(g, live, inputs)
	return d
}

// renumber is g without its dead values, inputs first: value indices
// renumbered.
func renumber(g Graph, live []bool, inputs int) Graph {
	where := make([]int, g.Inputs+len(g.Nodes))
	next := 0
	for i := 0; i < g.Inputs; i++ {
		if live[i] {
			where[i] = next
			next++
		}
	}
	out := Graph{Inputs: inputs}
	for j, n := range g.Nodes {
		if !live[g.Inputs+j] {
			continue
		}
		args := make([]int, len(n.Args))
		for k, a := range n.Args {
			args[k] = where[a]
		}
		out.Nodes = append(out.Nodes, Node{Op: n.Op, Attrs: n.Attrs, Args: args})
		where[g.Inputs+j] = inputs + len(out.Nodes) - 1
	}
	return out
}

// shrinkRandom is Shrink for a random case: the graph first
// (shrinkGraph), then one element where the smaller graph is elementwise.
// The detail names the smallest graph and its exact inputs.
func shrinkRandom(e Engine, c Case, r Row) Row {
	small, row := shrinkGraph(e, c, r)
	row.Case = c.Name
	desc := func(d Case) string {
		return fmt.Sprintf("%d node(s): %s; %s", len(d.Graph.Nodes), GraphString(d.Graph), Inputs(d))
	}
	if elementwise(small) && r.Obligation != OblMachines {
		for k := range small.Cot.Data {
			d := element(small, k)
			if s, ok := stillFails(e, d, r); ok {
				s.Case = c.Name
				s.Detail = fmt.Sprintf("smallest: %s (element %d); %s", desc(d), k, s.Detail)
				return s
			}
		}
	}
	row.Detail = fmt.Sprintf("smallest: %s; %s", desc(small), row.Detail)
	return row
}
