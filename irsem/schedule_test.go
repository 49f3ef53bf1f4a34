package irsem

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// branchy is a graph with independent branches: relu(x), neg(x) and
// log(x) read the input, their sums read them; log fails over Rat on a
// non-positive input, at node 3 (the sequential order's first failure).
func branchy() *Graph {
	s := spec.Shape{3}
	return graphOf(input(3),
		nd(OpRelu, []int{0}, s), nd(OpNeg, []int{0}, s), nd(OpLog, []int{0}, s),
		nd(OpAdd, []int{1, 2}, s), nd(OpAdd, []int{2, 3}, s), nd(OpAdd, []int{4, 5}, s))
}

// spell is a value table as text, bit-exact for the float scalars
// (%v of a float64 is its shortest round-trip spelling) and exact for Rat.
func spell[T spec.Scalar[T]](vals []spec.Tensor[T]) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = fmt.Sprint(v.Shape, v.Data)
	}
	return out
}

// atProcs runs f with GOMAXPROCS n.
func atProcs(n int, f func()) {
	old := runtime.GOMAXPROCS(n)
	defer runtime.GOMAXPROCS(old)
	f()
}

// sameSchedules checks, over T, that denote (DenoteAll and the freeing
// Denote) gives the same values and the same error at GOMAXPROCS 1 (the
// sequential loop) and 2 (levels on the pool where the graph is wide),
// and that the level evaluation itself either matches the sequential
// values or declines exactly when the sequential loop fails.
func sameSchedules[T spec.Scalar[T]](t *testing.T, name string, g *Graph, p *Payload, x spec.Tensor[T]) {
	t.Helper()
	for _, free := range []bool{false, true} {
		var v1, v2 []spec.Tensor[T]
		var e1, e2 error
		atProcs(1, func() { v1, e1 = denote(g, p, x, free) })
		atProcs(2, func() { v2, e2 = denote(g, p, x, free) })
		if fmt.Sprint(e1) != fmt.Sprint(e2) {
			t.Fatalf("%s (free %v): errors differ: %v / %v", name, free, e1, e2)
		}
		if fmt.Sprint(spell(v1)) != fmt.Sprint(spell(v2)) {
			t.Fatalf("%s (free %v): values differ between GOMAXPROCS 1 and 2", name, free)
		}
		if g.Check() != nil || CheckPayload(g, p) != nil || checkInput(g, x) != nil {
			continue
		}
		var lv []spec.Tensor[T]
		var ok bool
		levs, depth, _ := levels(g)
		atProcs(2, func() { lv, ok = denoteLevels(g, p, x, spec.Default[T](), free, levs, depth) })
		if ok != (e1 == nil) {
			t.Fatalf("%s (free %v): the level evaluation ok=%v, the sequential error %v", name, free, ok, e1)
		}
		if ok && fmt.Sprint(spell(lv)) != fmt.Sprint(spell(v1)) {
			t.Fatalf("%s (free %v): the level evaluation's values differ from the sequential loop's", name, free)
		}
	}
}

// TestDenoteSchedules: over F64, Interval and Rat, every op case of the
// corpus and the branchy graph (on a positive input, and on one where log
// fails) give identical values and errors whatever GOMAXPROCS; at least
// one graph is wide, so the pool really ran.
func TestDenoteSchedules(t *testing.T) {
	cases := opCases(t)
	s := spec.Shape{3}
	cases = append(cases,
		opCase{name: "branchy", g: branchy(), x: rt(t, s, "1", "2", "1/2")},
		opCase{name: "branchy-fails", g: branchy(), x: rt(t, s, "1", "-2", "1/2")})
	wide := 0
	for _, c := range cases {
		if _, _, w := levels(c.g); w {
			wide++
		}
		sameSchedules(t, c.name, c.g, c.p, ConvertTensor[spec.F64](c.x))
		sameSchedules(t, c.name, c.g, c.p, ConvertTensor[spec.Interval](c.x))
		sameSchedules(t, c.name, c.g, c.p, c.x)
	}
	if wide == 0 {
		t.Fatal("no graph had independent branches")
	}
	t.Logf("%d cases, %d with independent branches", len(cases), wide)
	// The failing branchy graph fails at log (node 3) over Rat either way.
	_, err := DenoteAll(branchy(), nil, rt(t, s, "1", "-2", "1/2"))
	if err == nil {
		t.Fatal("log of −2 over Rat did not fail")
	}
}

// TestLevelSafe: only spec's pure value types take the concurrent schedule;
// any other Scalar (Dual here; fpbound's error algebra and the tests' random-
// order scalars likewise) keeps the sequential one, whose order its
// process-wide state relies on.
func TestLevelSafe(t *testing.T) {
	for _, c := range []struct {
		name string
		got  bool
		want bool
	}{
		{"F64", levelSafe[spec.F64](), true},
		{"F32", levelSafe[spec.F32](), true},
		{"Binary32", levelSafe[spec.Binary32](), true},
		{"Interval", levelSafe[spec.Interval](), true},
		{"Rat", levelSafe[spec.Rat](), true},
		{"Dual[Rat]", levelSafe[spec.Dual[spec.Rat]](), false},
	} {
		if c.got != c.want {
			t.Errorf("levelSafe[%s] = %v, want %v", c.name, c.got, c.want)
		}
	}
}
