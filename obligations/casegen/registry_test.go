package casegen

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestGraphTableFollowsRegistry: the graph generator's op table holds
// exactly the registry primitives with a graph place, in place order,
// each with flags read off its registry facts, and an IR recipe step of a
// primitive gets the registry's IR tag.
func TestGraphTableFollowsRegistry(t *testing.T) {
	ops, err := genOps()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, info := range spec.Infos() {
		if info.Gen.Graph > 0 {
			n++
		}
	}
	if len(ops) != n || n == 0 {
		t.Fatalf("%d generator ops, %d registry primitives with a graph place", len(ops), n)
	}
	last := 0
	for _, op := range ops {
		info, err := spec.Info(op.name)
		if err != nil {
			t.Fatal(err)
		}
		if info.Gen.Graph <= last {
			t.Errorf("%s at place %d after place %d", op.name, info.Gen.Graph, last)
		}
		last = info.Gen.Graph
		want := opFlags(0)
		if info.Exact && !info.Partial {
			want |= fExact
		}
		if info.ZeroPreserving {
			want |= fZP
		}
		if info.Polynomial {
			want |= fPoly
		}
		if info.IR != nil {
			want |= fIR
		}
		if op.flags != want {
			t.Errorf("%s: flags %b, want %b", op.name, op.flags, want)
		}
		if _, custom := graphBuilders[op.name]; !custom && !plainElementwise(info) {
			t.Errorf("%s is placed generically but is not plain elementwise", op.name)
		}
	}
	rc := &Recipe{IR: true, Ctx: []spec.Shape{{2}}, Shapes: []spec.Shape{{2}, {2}, {2}},
		Steps: []Step{{Op: "mul", In: []int{0, 0}, Attrs: &spec.Attrs{}}, {Op: "max", In: []int{1, 0}, Attrs: &spec.Attrs{}}}, Result: 2}
	g, _, err := rc.IRGraph()
	if err != nil || g.Nodes[1].Kind.Op != "mul_elem" || g.Nodes[2].Kind.Op != "max_elem" {
		t.Fatalf("IRGraph: %v, %v", g, err)
	}
	rc.Steps[1].Op = "dropout" // no IR tag
	if _, _, err := rc.IRGraph(); err == nil {
		t.Errorf("a primitive without an IR tag was emitted")
	}
}
