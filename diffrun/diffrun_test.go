package diffrun

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// squares is y = Σ relu(x)⊙relu(x) on x ∈ ℚ²: node 0 input, 1 relu, 2
// mul_elem(1, 1), 3 sum.
func squares() *irsem.Graph {
	return &irsem.Graph{InputID: 0, OutputID: 3, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Parents: []int{}, Shape: spec.Shape{2}},
		{ID: 1, Kind: irsem.Kind{Op: irsem.OpRelu}, Parents: []int{0}, Shape: spec.Shape{2}},
		{ID: 2, Kind: irsem.Kind{Op: irsem.OpMulElem}, Parents: []int{1, 1}, Shape: spec.Shape{2}},
		{ID: 3, Kind: irsem.Kind{Op: irsem.OpSum}, Parents: []int{2}, Shape: spec.Shape{}},
	}}
}

// x = (3, −1/2): relu(x) = (3, 0), y = 9, ∂y/∂x = 2·relu(x)·relu′(x) = (6, 0).
func input(t *testing.T) spec.Tensor[spec.Rat] {
	x, err := spec.NewTensor(spec.Shape{2}, []spec.Rat{spec.NewRat(3, 1), spec.NewRat(-1, 2)})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// plant returns a registry hook that, over Rat and on path only, replaces
// relu's forward (shift: y + 1) or its VJP (double: 2·vjp).
func plant(path string, shift bool) func(scalar, p string, reg any) {
	return func(scalar, p string, reg any) {
		r, ok := reg.(*spec.Registry[spec.Rat])
		if !ok || p != path {
			return
		}
		q, _ := r.Lookup("relu")
		bad, fwd, vjp := *q, q.Forward, q.VJP
		two := spec.NewRat(2, 1)
		if shift {
			bad.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
				y, err := fwd(a, xs)
				return spec.MapPure(y, func(v spec.Rat) spec.Rat { return v.Add(spec.NewRat(1, 1)) }), err
			}
		} else {
			bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
				gs, err := vjp(a, xs, y, dy)
				for i := range gs {
					gs[i] = spec.MapPure(gs[i], func(v spec.Rat) spec.Rat { return v.Mul(two) })
				}
				return gs, err
			}
		}
		r.Override(&bad)
	}
}

// TestDiffIR: the correct rules agree on every path and scalar; a fault
// planted on one path is the first disagreement, at the node and element
// worked out by hand, with both exact values.
func TestDiffIR(t *testing.T) {
	for _, tc := range []struct {
		name string
		hook func(scalar, path string, reg any)
		// The first failing comparison, "" when all agree.
		what, a, b   string
		node, elem   int
		op, lhs, rhs string
	}{
		{name: "reference rules"},
		// relu(3) = 3 on the IR path, 3 + 1 = 4 on the planted typed graph.
		{"forward on the typed graph", plant(PathTypedGraph, true), "forward", PathIR, PathTypedGraph, 1, 0, "relu", "3", "4"},
		// ∂y/∂x₀ = 6 on the typed graph, 2·6 = 12 through the tape's
		// doubled relu VJP.
		{"vjp on the tape", plant(PathTape, false), "gradient", PathTape, PathTypedGraph, 0, 0, "input", "12", "6"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := DiffIR(squares(), nil, input(t), DiffOptions{RegistryHook: tc.hook})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.First()
			if tc.what == "" {
				if c != nil || !rep.OK() || rep.Err() != nil {
					t.Fatalf("the reference rules disagree: %v", rep.Err())
				}
				return
			}
			if c == nil || rep.OK() {
				t.Fatal("the planted fault was not caught")
			}
			f := c.Failure
			if c.Scalar != "rat" || c.What != tc.what || c.A != tc.a || c.B != tc.b || f.Law != CrossPath ||
				f.Node != tc.node || f.Element != tc.elem || f.Op != tc.op || f.LHS != tc.lhs || f.RHS != tc.rhs {
				t.Fatalf("first disagreement %s %s %s vs %s: %v", c.Scalar, c.What, c.A, c.B, f)
			}
			var g *counterexample.Failure
			if !errors.As(rep.Err(), &g) || g != f {
				t.Errorf("Err does not return the first failure")
			}
			// The tlcheck.diff.v1 document carries the same first
			// disagreement, its message one line.
			doc := rep.Doc(4, nil)
			var first *jsonout.DiffFailure
			for _, j := range doc.Checks {
				if j.Failure != nil && first == nil {
					first = j.Failure
				}
			}
			if doc.Agree || first == nil || first.Obligation != CrossPath || first.Node != tc.node || first.LHS != tc.lhs ||
				first.RHS != tc.rhs || strings.Contains(first.Message, "\n") || !strings.HasPrefix(first.Message, "cross-path fails at node") {
				t.Errorf("document: agree %v, first failure %+v", doc.Agree, first)
			}
		})
	}
}

// TestDiffIRBadInput: an input of the wrong shape is bad input, not a
// disagreement.
func TestDiffIRBadInput(t *testing.T) {
	x, _ := spec.NewTensor(spec.Shape{3}, []spec.Rat{spec.NewRat(1, 1), spec.NewRat(2, 1), spec.NewRat(3, 1)})
	_, err := DiffIR(squares(), nil, x, DiffOptions{})
	var bad *BadInputError
	if !errors.As(err, &bad) {
		t.Fatalf("err %v, want a *BadInputError", err)
	}
}

// TestContainment: the exact values of the reference semantics lie in
// their enclosures.
func TestContainment(t *testing.T) {
	if err := Containment(squares(), nil, input(t)); err != nil {
		t.Fatal(err)
	}
}

// TestSame: the equalities the runner compares floats with.
func TestSame(t *testing.T) {
	nan := spec.F32(math.NaN())
	for _, tc := range []struct {
		a, b         spec.F32
		bits, values bool
	}{
		{1, 1, true, true},
		{1, 2, false, false},
		{nan, nan, true, true},
		{spec.F32(math.Copysign(0, -1)), 0, false, true},
	} {
		if got := SameBits(tc.a, tc.b); got != tc.bits {
			t.Errorf("SameBits(%v, %v) = %v", tc.a, tc.b, got)
		}
		if got := SameValue(tc.a, tc.b); got != tc.values {
			t.Errorf("SameValue(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}
