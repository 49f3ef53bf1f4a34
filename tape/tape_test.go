package tape

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func vec(vs ...int64) spec.Tensor[spec.Rat] {
	out := make([]spec.Rat, len(vs))
	for i, v := range vs {
		out[i] = spec.Rat{}.FromInt(v)
	}
	return spec.Vector(out...)
}

func x0() spec.Tensor[spec.Rat] { return spec.Vector(spec.NewRat(3, 1), spec.NewRat(-3, 2)) }

func mustApply(t *testing.T, tp *Tape[spec.Rat], op string, ps ...int) int {
	t.Helper()
	id, err := tp.Apply(op, nil, ps...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func gradOf(t *testing.T, tp *Tape[spec.Rat], out, leaf int) (spec.Tensor[spec.Rat], bool) {
	t.Helper()
	g, err := tp.BackwardScalar(out)
	if err != nil {
		t.Fatal(err)
	}
	return g.Get(leaf)
}

// Experiment 1: a third x*x branch adds another 2x: the gradient is 6x.
func TestExperimentThirdBranch(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	a := mustApply(t, tp, "mul", x, x)
	b := mustApply(t, tp, "mul", x, x)
	c := mustApply(t, tp, "mul", x, x)
	if n, _ := tp.Node(c); len(n.Parents) != 2 || n.Parents[0] != x || n.Parents[1] != x {
		t.Fatalf("third mul parents %v, want [0 0]", n.Parents)
	}
	z := mustApply(t, tp, "add", mustApply(t, tp, "add", a, b), c)
	l := mustApply(t, tp, "sum", z)
	g, ok := gradOf(t, tp, l, x)
	if !ok || !spec.SameTensor(g, vec(18, -9)) {
		t.Fatalf("gradient %v, want [18, -9]", g)
	}
}

// Experiment 2: a leaf with requiresGrad=false keeps no cotangent.
func TestExperimentLeafWithoutGrad(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Leaf("x", x0(), false)
	a := mustApply(t, tp, "mul", x, x)
	l := mustApply(t, tp, "sum", a)
	if _, ok := gradOf(t, tp, l, x); ok {
		t.Fatal("leaf without requiresGrad received a gradient")
	}
	if n, _ := tp.Node(a); n.RequiresGrad {
		t.Fatal("requiresGrad must be the OR of the parents' flags")
	}
}

// Experiment 3: moving the detach from b to a keeps the derivative 2x but
// changes the ids on the surviving path.
func TestExperimentMoveDetach(t *testing.T) {
	build := func(detachFirst bool) (*Tape[spec.Rat], int, []int) {
		tp := New[spec.Rat](nil)
		x, _ := tp.Param("x", x0())
		a := mustApply(t, tp, "mul", x, x)
		b := mustApply(t, tp, "mul", x, x)
		if detachFirst {
			a, _ = tp.Detach(a)
		} else {
			b, _ = tp.Detach(b)
		}
		l := mustApply(t, tp, "sum", mustApply(t, tp, "add", a, b))
		g, err := tp.BackwardScalar(l)
		if err != nil {
			t.Fatal(err)
		}
		return tp, l, g.ReachedIDs()
	}
	tb, lb, rb := build(false)
	ta, la, ra := build(true)
	gb, _ := gradOf(t, tb, lb, 0)
	ga, _ := gradOf(t, ta, la, 0)
	if !spec.SameTensor(ga, gb) || !spec.SameTensor(ga, vec(6, -3)) {
		t.Fatalf("gradients %v and %v, want [6, -3] both", ga, gb)
	}
	if stringInts(rb) != "[0 1 4 5]" || stringInts(ra) != "[0 2 4 5]" {
		t.Fatalf("reached ids %v (detach b) and %v (detach a)", rb, ra)
	}
}

func stringInts(v []int) string { return fmt.Sprint(v) }

// Experiment 4: an output independent of the leaf leaves node 0 absent
// from the gradient map (absent, not zero).
func TestExperimentIndependentOutput(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	y, _ := tp.Param("y", vec(1, 2))
	l := mustApply(t, tp, "sum", mustApply(t, tp, "mul", y, y))
	g, err := tp.BackwardScalar(l)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Sparse()[x]; ok {
		t.Fatal("unreached leaf present in the sparse gradient map")
	}
	dense := g.Dense()
	if !spec.IsZeroTensor(dense[x]) || !dense[x].Shape.Equal(spec.Shape{2}) {
		t.Fatalf("dense-all should zero-fill the unreached leaf, got %v", dense[x])
	}
	// Reached with a zero cotangent is a different answer: x·0 reaches x.
	tp2 := New[spec.Rat](nil)
	x2, _ := tp2.Param("x", x0())
	z, _ := tp2.Const("zero", vec(0, 0))
	l2 := mustApply(t, tp2, "sum", mustApply(t, tp2, "mul", x2, z))
	g2, _ := tp2.BackwardScalar(l2)
	v, ok := g2.Get(x2)
	if !ok || !spec.IsZeroTensor(v) {
		t.Fatalf("x·0: want reached zero, got %v %v", v, ok)
	}
}

// Experiment 5: incompatible operand shapes give an error value.
func TestExperimentShapeMismatch(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	y, _ := tp.Param("y", vec(1, 2, 3))
	_, err := tp.Apply("mul", nil, x, y)
	if err == nil || !strings.Contains(err.Error(), "node 2") || !strings.Contains(err.Error(), "mul") || !strings.Contains(err.Error(), "[3]") {
		t.Fatalf("got %v", err)
	}
	if tp.Len() != 2 {
		t.Fatalf("a failed operation appended a node: len %d", tp.Len())
	}
}

// Experiment 6: changing a constant in one construction makes it a
// different function; comparing with the unchanged tape detects it.
func TestExperimentChangedConstant(t *testing.T) {
	run := func(c int64) spec.Tensor[spec.Rat] {
		tp := New[spec.Rat](nil)
		x, _ := tp.Param("x", x0())
		k, _ := tp.Const("c", vec(c, c))
		l := mustApply(t, tp, "sum", mustApply(t, tp, "mul", mustApply(t, tp, "mul", x, x), k))
		g, _ := gradOf(t, tp, l, x)
		return g
	}
	if spec.SameTensor(run(2), run(3)) {
		t.Fatal("a changed constant went undetected")
	}
	if !spec.SameTensor(run(2), vec(12, -6)) {
		t.Fatalf("2x² has gradient 4x, got %v", run(2))
	}
}

func TestBackwardErrors(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	a := mustApply(t, tp, "mul", x, x)
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"invalid output", func() error { _, err := tp.Backward(9, vec(1, 1)); return err }, "invalid output id"},
		{"seed shape", func() error { _, err := tp.Backward(a, vec(1)); return err }, "node 1 (mul): backward: seed has shape [1], the node [2]"},
		{"scalar seed on vector", func() error { _, err := tp.BackwardScalar(a); return err }, "seed has shape []"},
		{"invalid parent", func() error { _, err := tp.Apply("add", nil, x, 7); return err }, "invalid node id 7"},
		{"unknown op", func() error { _, err := tp.Apply("frobnicate", nil, x); return err }, "unknown primitive"},
		{"log domain", func() error {
			n, _ := tp.Param("n", vec(0, 1))
			_, err := tp.Apply("log", nil, n)
			return err
		}, "safe_log"},
		{"hostile leaf", func() error {
			_, err := tp.Param("h", spec.Tensor[spec.Rat]{Shape: spec.Shape{1 << 40, 1 << 40}})
			return err
		}, "over the axis limit"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBadContributions(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	bad := []struct {
		bw   Backward[spec.Rat]
		want string
	}{
		{func(ct spec.Tensor[spec.Rat]) ([]Contribution[spec.Rat], error) {
			return []Contribution[spec.Rat]{{Parent: 42, Grad: ct}}, nil
		}, "node 1 (custom): backward: invalid parent id 42"},
		{func(ct spec.Tensor[spec.Rat]) ([]Contribution[spec.Rat], error) {
			return []Contribution[spec.Rat]{{Parent: x, Grad: vec(1, 2, 3)}}, nil
		}, "node 2 (custom): backward: gradient contribution has wrong shape for parent 0: got [3], expected [2]"},
	}
	for _, b := range bad {
		id, err := tp.Append("custom", []int{x}, vec(1, 1), true, b.bw)
		if err != nil {
			t.Fatal(err)
		}
		_, err = tp.Backward(id, vec(1, 1))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("got %v, want %q", err, b.want)
		}
	}
}

// TestSweepsAgreeWhenZeroPreserving: on exact linear rules the skipping
// sweep equals the every-node sweep.
func TestSweepsAgreeWhenZeroPreserving(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	y, _ := tp.Param("y", vec(5, 7))
	a := mustApply(t, tp, "mul", x, x)
	mustApply(t, tp, "mul", y, y) // unreached branch
	l := mustApply(t, tp, "sum", a)
	dense, err := tp.BackwardAll(l, spec.Scalar0(spec.One[spec.Rat]()))
	if err != nil {
		t.Fatal(err)
	}
	all, err := tp.BackwardEvery(l, spec.Scalar0(spec.One[spec.Rat]()))
	if err != nil {
		t.Fatal(err)
	}
	for id := range dense {
		if !spec.SameTensor(dense[id], all[id]) {
			t.Fatalf("node %d: dense-all %v vs from-all %v", id, dense[id], all[id])
		}
	}
}

// TestEveryNodeSweepNaN: over F32 at a singular point, the every-node
// sweep evaluates a disconnected sqrt rule with a zero cotangent and
// produces NaN (0·(1/0)); the skipping sweep does not.
func TestEveryNodeSweepNaN(t *testing.T) {
	tp := New[spec.F32](nil)
	x, _ := tp.Param("x", spec.Vector[spec.F32](1))
	z, _ := tp.Param("z", spec.Vector[spec.F32](0))
	if _, err := tp.Apply("inv", nil, z); err != nil { // disconnected: 1/0 = +Inf
		t.Fatal(err)
	}
	l, _ := tp.Apply("sum", nil, x)
	seed := spec.Scalar0(spec.One[spec.F32]())
	dense, err := tp.BackwardAll(l, seed)
	if err != nil {
		t.Fatal(err)
	}
	all, err := tp.BackwardEvery(l, seed)
	if err != nil {
		t.Fatal(err)
	}
	if v := float64(dense[z].Data[0]); v != 0 {
		t.Fatalf("skipping sweep: z cotangent %v, want 0", v)
	}
	if v := float64(all[z].Data[0]); !math.IsNaN(v) {
		t.Fatalf("every-node sweep: z cotangent %v, want NaN", v)
	}
}

func TestSessions(t *testing.T) {
	s := NewSession[spec.Rat](nil)
	other := NewSession[spec.Rat](nil)
	x, err := s.Param("x", x0())
	if err != nil {
		t.Fatal(err)
	}
	ox, _ := other.Param("x", x0())
	if _, err := s.Apply("mul", nil, x, ox); err == nil || !strings.Contains(err.Error(), "tensor reference belongs to a different session") {
		t.Fatalf("foreign handle: %v", err)
	}
	s.Reset()
	x2, _ := s.Param("x", x0())
	if x2.ID() != x.ID() {
		t.Fatalf("reset should reuse id 0, got %d", x2.ID())
	}
	_, err = s.Apply("mul", nil, x, x2)
	if err == nil || !strings.Contains(err.Error(), "stale tensor reference from generation 0; current generation is 1 (resetTape invalidates recorded references)") {
		t.Fatalf("stale handle: %v", err)
	}
	a, err := s.Apply("mul", nil, x2, x2)
	if err != nil {
		t.Fatal(err)
	}
	l, _ := s.Apply("sum", nil, a)
	g, err := s.Backward(l)
	if err != nil {
		t.Fatal(err)
	}
	gx, ok, err := s.Grad(g, x2)
	if err != nil || !ok || !spec.SameTensor(gx, vec(6, -3)) {
		t.Fatalf("grad %v %v %v", gx, ok, err)
	}
}

func TestViews(t *testing.T) {
	tp := New[spec.Rat](nil)
	x, _ := tp.Param("x", x0())
	y, _ := tp.Param("y", vec(1, 1))
	a := mustApply(t, tp, "mul", x, x)
	l := mustApply(t, tp, "sum", a)
	g, _ := tp.BackwardScalar(l)
	want := "0 x []: [6, -3]\n1 y []: unreached\n2 mul [0 0]: [1, 1]\n3 sum [2]: 1\n"
	if got := tp.GradsView(g); got != want {
		t.Fatalf("grads view:\n%s\nwant\n%s", got, want)
	}
	if got := tp.TraceView(g); got != "3:sum -> 2:mul" {
		t.Fatalf("trace %q", got)
	}
	_ = y
}
