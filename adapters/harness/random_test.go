package harness

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// describe prints everything a random case consists of.
func describe(cs []Case) string {
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "%s dag=%v %s; %s tangents=%v\n", c.Name, c.DAG, GraphString(c.Graph), Inputs(c), c.Tangents != nil)
		for _, t := range c.Tangents {
			b.WriteString(tensorString(t) + "\n")
		}
	}
	return b.String()
}

// TestRandomDeterministic: the same seed gives the same cases, case i
// does not depend on n, and another seed gives other cases.
func TestRandomDeterministic(t *testing.T) {
	a, b := describe(RandomCases(7, 40)), describe(RandomCases(7, 40))
	if a != b {
		t.Fatal("RandomCases(7, 40) differs between two calls")
	}
	if c := describe(RandomCases(7, 10)); !strings.HasPrefix(a, c) {
		t.Error("the first 10 of RandomCases(7, 40) are not RandomCases(7, 10)")
	}
	if d := describe(RandomCases(8, 40)); d == a {
		t.Error("seeds 7 and 8 give the same cases")
	}
	if len(RandomCases(1, 0)) != 0 || len(RandomCases(1, -3)) != 0 {
		t.Error("n ≤ 0 gives cases")
	}
}

// TestRandomShape: every random case is what RandomCases promises,
// checked independently of the drawer: 1–3 inputs, 2–7 nodes, every
// node's shape by the registry's rule, inputs k/4 with |k| ≤ 12 of
// rank 1 or 2 with extents 1–4, a nonzero dyadic cotangent of the
// output's shape, the output depending on every input and every node,
// and over the whole draw, fan-out, zeros and ties at some rate.
func TestRandomShape(t *testing.T) {
	cs := RandomCases(1, 300)
	fanout, zeros, ties, tangents := 0, 0, 0, 0
	ops := map[string]bool{}
	for _, c := range cs {
		g := c.Graph
		if g.Inputs < 1 || g.Inputs > 3 || len(g.Nodes) < 2 || len(g.Nodes) > 7 || !c.DAG {
			t.Fatalf("%s: %d inputs, %d nodes, dag %v", c.Name, g.Inputs, len(g.Nodes), c.DAG)
		}
		shapes, err := g.ValueShapes(c.Xs)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		if !shapes[len(shapes)-1].Equal(c.Cot.Shape) {
			t.Fatalf("%s: cotangent %v for output %v", c.Name, c.Cot.Shape, shapes[len(shapes)-1])
		}
		for _, v := range c.Cot.Data {
			if v.IsZero() {
				t.Fatalf("%s: zero in the cotangent", c.Name)
			}
		}
		for i, x := range c.Xs {
			if r := x.Shape.Rank(); r < 1 || r > 2 {
				t.Fatalf("%s: input %d of rank %d", c.Name, i, r)
			}
			for _, d := range x.Shape {
				if d < 1 || d > 4 {
					t.Fatalf("%s: input %d shape %v", c.Name, i, x.Shape)
				}
			}
			seen := map[string]bool{}
			for _, v := range x.Data {
				f := v.Mul(spec.NewRat(4, 1)).Float64()
				if f != math.Trunc(f) || math.Abs(f) > 12 {
					t.Fatalf("%s: input %d value %s is not k/4 with |k| ≤ 12", c.Name, i, v)
				}
				if v.IsZero() {
					zeros++
				}
				if seen[v.String()] {
					ties++
				}
				seen[v.String()] = true
			}
		}
		for _, r := range g.Live() {
			if !r {
				t.Fatalf("%s: a value the output does not read: %s", c.Name, GraphString(g))
			}
		}
		reads := make([]int, g.Inputs+len(g.Nodes))
		for _, n := range g.Nodes {
			ops[n.Op] = true
			for _, a := range n.Args {
				reads[a]++
			}
		}
		for _, r := range reads {
			if r > 1 {
				fanout++
				break
			}
		}
		if c.Tangents != nil {
			tangents++
		}
	}
	// Rates: fan-out in most cases, zeros and ties in many, tangents in
	// most; every kind of primitive drawn.
	if fanout < 100 || zeros < 100 || ties < 100 || tangents < 100 || tangents == len(cs) {
		t.Errorf("fan-out in %d cases, %d zeros, %d ties, tangents in %d of %d cases", fanout, zeros, ties, tangents, len(cs))
	}
	for _, op := range append(append(append(append([]string{}, randUnary...), randPositive...), randBinary...), randShape...) {
		if !ops[op] {
			t.Errorf("%s never drawn", op)
		}
	}
}

// TestRandomKinks: a case at a kink or tie has no tangents, and the
// check itself is right on hand-made graphs.
func TestRandomKinks(t *testing.T) {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	x := q(spec.Shape{3}, 4, 0, -2)
	y := q(spec.Shape{3}, 4, 1, -3) // ties x at element 0
	clamp := &spec.Attrs{Lo: rat(-1, 2), Hi: rat(1, 1)}
	tests := []struct {
		name   string
		g      Graph
		xs     []spec.Tensor[spec.Rat]
		smooth bool
	}{
		{"relu at 0", Graph{Inputs: 1, Nodes: []Node{n("relu", nil, 0)}}, []spec.Tensor[spec.Rat]{x}, false},
		{"relu off 0", Graph{Inputs: 1, Nodes: []Node{n("relu", nil, 0)}}, []spec.Tensor[spec.Rat]{y}, true},
		{"abs of x − x", Graph{Inputs: 1, Nodes: []Node{n("sub", nil, 0, 0), n("abs", nil, 1)}}, []spec.Tensor[spec.Rat]{y}, false},
		{"clamp at its bounds", Graph{Inputs: 1, Nodes: []Node{n("clamp", clamp, 0)}}, []spec.Tensor[spec.Rat]{x}, false},
		{"clamp inside", Graph{Inputs: 1, Nodes: []Node{n("clamp", clamp, 0)}}, []spec.Tensor[spec.Rat]{q(spec.Shape{2}, 1, -1)}, true},
		{"max tie", Graph{Inputs: 2, Nodes: []Node{n("max", nil, 0, 1)}}, []spec.Tensor[spec.Rat]{x, y}, false},
		{"max of x, x", Graph{Inputs: 1, Nodes: []Node{n("max", nil, 0, 0)}}, []spec.Tensor[spec.Rat]{y}, false},
		{"min apart", Graph{Inputs: 2, Nodes: []Node{n("min", nil, 0, 1)}}, []spec.Tensor[spec.Rat]{q(spec.Shape{2}, 1, 2), q(spec.Shape{2}, 2, 1)}, true},
		{"relu of tanh, off 0", Graph{Inputs: 1, Nodes: []Node{n("tanh", nil, 0), n("relu", nil, 1)}}, []spec.Tensor[spec.Rat]{y}, true},
		{"relu of sin(0)", Graph{Inputs: 1, Nodes: []Node{n("sin", nil, 0), n("relu", nil, 1)}}, []spec.Tensor[spec.Rat]{x}, false},
		{"a dead kink", Graph{Inputs: 1, Nodes: []Node{n("relu", nil, 0), n("exp", nil, 0)}}, []spec.Tensor[spec.Rat]{x}, true},
	}
	for _, tc := range tests {
		if got := smoothAt(tc.g, tc.xs); got != tc.smooth {
			t.Errorf("%s: smoothAt = %v", tc.name, got)
		}
	}
	for _, c := range RandomCases(2, 300) {
		if c.Tangents != nil && !smoothAt(c.Graph, c.Xs) {
			t.Errorf("%s: tangents at a kink", c.Name)
		}
	}
}

// TestRandomSelf: every random case holds on the baseline engine for
// seeds 1..3 × 300 cases; inconclusive rows (a comparison a rule
// branches on that the enclosures cannot decide: a softmax's maximum at
// a tie) are allowed, but rare.
func TestRandomSelf(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 100
	}
	for seed := uint64(1); seed <= 3; seed++ {
		rows, skipped := Run(Self(), RandomCases(seed, n), Options{})
		if len(skipped) > 0 {
			t.Errorf("seed %d: skipped %v", seed, skipped)
		}
		inc := 0
		for _, r := range rows {
			switch r.Verdict {
			case Holds:
			case Inconclusive:
				inc++
			default:
				t.Errorf("seed %d: %s %s: %s: %s", seed, r.Case, r.Obligation, r.Verdict, r.Detail)
			}
		}
		if inc*20 > len(rows) {
			t.Errorf("seed %d: %d of %d rows inconclusive", seed, inc, len(rows))
		}
	}
}

// TestRandomPlantedFault: a fault planted in the baseline engine (one
// gradient element of input 0 perturbed by 2³⁰ ulps; the sign of input
// 0's gradient flipped) is found on random cases, and every gradient
// finding (path_sum, zero) shrinks to a graph of at most two nodes that
// still fails. An adjoint finding may keep more: a smaller graph can
// hide the fault along the case's tangent (⟨g, v⟩ unchanged when v sums
// to zero over equal gradient elements), so it is only required to
// shrink to a case that still fails.
func TestRandomPlantedFault(t *testing.T) {
	faults := []struct {
		name    string
		perturb func(string, []Tensor64)
	}{
		{"ulps", func(_ string, gs []Tensor64) {
			if len(gs) > 0 && len(gs[0].Data) > 0 {
				v := gs[0].Data[0]
				gs[0].Data[0] = math.Float64frombits(math.Float64bits(v) + 1<<30)
				if v == 0 {
					gs[0].Data[0] = 0x1p-20
				}
			}
		}},
		{"sign", func(_ string, gs []Tensor64) {
			if len(gs) > 0 {
				for k := range gs[0].Data {
					gs[0].Data[k] = -gs[0].Data[k] + 1.0/8
				}
			}
		}},
	}
	for _, f := range faults {
		e := newSelf()
		e.perturb = f.perturb
		cs := RandomCases(1, 40)
		rep := RunAll([]Engine{e}, cs, Options{})
		if rep.Findings() == 0 {
			t.Errorf("%s: the planted fault is not found", f.name)
			continue
		}
		for _, r := range rep.Engines[0].Rows {
			if !r.Finding() {
				continue
			}
			if !strings.HasPrefix(r.Detail, "smallest: ") {
				t.Errorf("%s: %s %s not shrunk: %s", f.name, r.Case, r.Obligation, r.Detail)
			}
			if r.Obligation == OblAdjoint {
				continue
			}
			if !strings.HasPrefix(r.Detail, "smallest: 1 node(s)") && !strings.HasPrefix(r.Detail, "smallest: 2 node(s)") {
				t.Errorf("%s: %s %s not shrunk to ≤ 2 nodes: %s", f.name, r.Case, r.Obligation, r.Detail)
			}
		}
	}
}

// TestShrinkGraph: the graph shrinker's candidates on a hand-made case
// (output moved earlier, a node bypassed, dead nodes and inputs
// dropped), and the smallest graph it finds for a fault planted in one
// primitive only.
func TestShrinkGraph(t *testing.T) {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	x := q(spec.Shape{3}, 1, -2, 3)
	y := q(spec.Shape{3}, 2, 2, -1)
	c := Case{Name: "rand-t-0", DAG: true, random: true, Xs: []spec.Tensor[spec.Rat]{x, y}, Cot: q(spec.Shape{3}, 3, -1, 2),
		// v1 = sin(x0); v2 = mul(v1, x1); v3 = neg(v2); v4 = add(v3, x0)
		Graph: Graph{Inputs: 2, Nodes: []Node{n("sin", nil, 0), n("mul", nil, 2, 1), n("neg", nil, 3), n("add", nil, 4, 0)}}}
	var got []string
	for _, d := range graphCandidates(c) {
		got = append(got, fmt.Sprintf("%d:%s", d.Graph.Inputs, GraphString(d.Graph)))
	}
	want := []string{
		"1:v1 = sin(x0)",
		"2:v1 = sin(x0); v2 = mul(v1, x1)",
		"2:v1 = sin(x0); v2 = mul(v1, x1); v3 = neg(v2)",
		"2:v1 = mul(x0, x1); v2 = neg(v1); v3 = add(v2, x0)", // sin bypassed to x0
		"1:v1 = sin(x0); v2 = neg(v1); v3 = add(v2, x0)",     // mul bypassed to v1, x1 unread
		"2:v1 = neg(x1); v2 = add(v1, x0)",                   // mul bypassed to x1, sin dead
		"1:v1 = neg(x0); v2 = add(v1, x0)",                   // mul bypassed to x0 (through sin)
		"2:v1 = sin(x0); v2 = mul(v1, x1); v3 = add(v2, x0)", // neg bypassed to mul
		"1:v1 = sin(x0); v2 = add(v1, x0)",                   // neg bypassed to sin
		"2:v1 = add(x1, x0)",                                 // neg bypassed to x1
		"1:v1 = add(x0, x0)",                                 // neg bypassed to x0
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("candidates:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A fault in neg only: the baseline with every gradient flipped where
	// the graph has a neg.
	e := &negFault{newSelf()}
	rows, _ := Run(e, []Case{c}, Options{})
	var r Row
	for _, row := range rows {
		if row.Finding() && row.Obligation == OblPathSum {
			r = row
		}
	}
	if !r.Finding() {
		t.Fatalf("the neg fault is not found: %v", rows)
	}
	s := Shrink(e, c, r)
	if !strings.HasPrefix(s.Detail, "smallest: 1 node(s): v1 = neg(x0)") || s.Case != c.Name || !s.Finding() {
		t.Errorf("shrunk to %s", s.Detail)
	}
}

// negFault is the baseline engine with input 0's gradient negated on
// every graph with a neg node.
type negFault struct{ *self }

func (e *negFault) Run(m string, g Graph, xs []Tensor64, cot Tensor64) (Tensor64, []Tensor64, error) {
	y, gs, err := e.self.Run(m, g, xs, cot)
	for _, n := range g.Nodes {
		if n.Op == "neg" && err == nil {
			for k := range gs[0].Data {
				gs[0].Data[k] = -gs[0].Data[k] + 1
			}
			break
		}
	}
	return y, gs, err
}

// TestRandomValid: the shrinker's domain check refuses a log whose
// argument may be ≤ 1/8 and an exp of a value beyond 6.
func TestRandomValid(t *testing.T) {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	x := q(spec.Shape{2}, 1, -2)
	big := q(spec.Shape{2}, 12, 12)
	tests := []struct {
		g    Graph
		xs   spec.Tensor[spec.Rat]
		want bool
	}{
		{Graph{Inputs: 1, Nodes: []Node{n("exp", nil, 0), n("log", nil, 1)}}, x, true},
		{Graph{Inputs: 1, Nodes: []Node{n("log", nil, 0)}}, x, false},
		{Graph{Inputs: 1, Nodes: []Node{n("square", nil, 0), n("sqrt", nil, 1)}}, q(spec.Shape{2}, 1, 2), false}, // 1/16 < 1/8
		{Graph{Inputs: 1, Nodes: []Node{n("square", nil, 0), n("sqrt", nil, 1)}}, q(spec.Shape{2}, 2, -2), true},
		{Graph{Inputs: 1, Nodes: []Node{n("square", nil, 0), n("exp", nil, 1)}}, big, false},
		{Graph{Inputs: 1, Nodes: []Node{n("div", nil, 0, 0)}}, x, false},
		{Graph{Inputs: 1, Nodes: []Node{n("square", nil, 0), n("square", nil, 1)}}, big, false}, // 81 > 64
	}
	for i, tc := range tests {
		if got := randomValid(tc.g, []spec.Tensor[spec.Rat]{tc.xs}); got != tc.want {
			t.Errorf("%d %s: %v", i, GraphString(tc.g), got)
		}
	}
}
