package counterexample

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func rat(a, b int64) spec.Rat { return spec.NewRat(a, b) }

// TestError pins the one-line text of each kind of counterexample; the
// expected lines are written out by hand from the layout the package doc
// states.
func TestError(t *testing.T) {
	x := spec.Tensor[spec.Rat]{Shape: spec.Shape{2}, Data: []spec.Rat{rat(1, 2), rat(-3, 1)}}
	s := spec.Tensor[spec.Rat]{Shape: spec.Shape{}, Data: []spec.Rat{rat(2, 1)}}
	cause := errors.New("mul: Shape drew [2] [3]")
	for _, tc := range []struct {
		name string
		f    Failure
		want string
	}{
		{"law, scalar", Failure{Law: "adjointness", Op: "mul", Oracle: "rat", Element: -1, LHS: "3", RHS: "4"},
			"adjointness fails for mul (oracle rat): 3 ≠ 4"},
		{"law, element, detail, inputs, attrs, tangents", Failure{Law: "derivative", Op: "scale", Oracle: "dual-rat", Element: 1,
			Inputs: []spec.Tensor[spec.Rat]{x}, Attrs: "{c=2}", Dx: []spec.Tensor[spec.Rat]{x, s}, Delta: s, LHS: "1", RHS: "2", Detail: "off by 1"},
			"derivative fails for scale (oracle dual-rat) at element 1: 1 ≠ 2 (off by 1); inputs (" + x.String() + ") attrs {c=2} dx (" +
				x.String() + ", " + s.String() + ") δ " + s.String()},
		{"law, inputs without attrs", Failure{Law: "zero-preservation", Op: "relu", Oracle: "rat", Element: 0, Inputs: []spec.Tensor[spec.Rat]{s}, LHS: "1", RHS: "0"},
			"zero-preservation fails for relu (oracle rat) at element 0: 1 ≠ 0; inputs (" + s.String() + ")"},
		{"refinement at an element", Failure{Law: "bound", Op: "sum", Provider: "fast_cpu", Capsule: "fast_cpu.sum", Kind: "wide", Case: 3, Element: 0, Detail: "too far"},
			"refine: sum on provider fast_cpu (capsule fast_cpu.sum), case 3 (wide), element 0: too far"},
		{"refinement, provider error", Failure{Op: "sum", Provider: "p", Capsule: "p.sum", Kind: "normal", Case: 0, Element: -1, Detail: "the provider failed: boom"},
			"refine: sum on provider p (capsule p.sum), case 0 (normal): the provider failed: boom"},
		{"graph law, located", Failure{Law: "cross-path", Node: 2, Op: "exp", Element: 0, Scalar: "f32", Sides: "tape vs typed-graph", LHS: "1", RHS: "2",
			Detail: "d", Graph: "g0 = x", Inputs: []spec.Tensor[spec.Rat]{s}, Extra: "seed: 3"},
			"cross-path fails at node 2 (exp) element 0 over f32 [tape vs typed-graph]: 1 ≠ 2 (d)\ngraph:\ng0 = x\ninputs: (" + s.String() + ")\nseed: 3"},
		{"graph law, whole graph", Failure{Law: "path-sum", Node: -1, Element: -1, LHS: "a", RHS: "b"},
			"path-sum fails: a ≠ b"},
		{"ill-formed case", Failure{Err: cause, Seed: 7, Case: 2}, "mul: Shape drew [2] [3]"},
		// A law's counterexample that also records a seed and case prints
		// the law's line: the seed and case are printed by the caller.
		{"law with seed", Failure{Law: "vjp-linearity", Op: "exp", Oracle: "interval", Element: -1, LHS: "a", RHS: "b", Seed: 9, Case: 4},
			"vjp-linearity fails for exp (oracle interval): a ≠ b"},
	} {
		if got := tc.f.Error(); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

// TestUnwrap: an ill-formed case's error stays reachable with errors.Is;
// a law's failure wraps nothing.
func TestUnwrap(t *testing.T) {
	cause := errors.New("cause")
	if f := (&Failure{Err: cause}); !errors.Is(f, cause) {
		t.Error("the ill-formed case's error is not reachable")
	}
	if f := (&Failure{Law: "adjointness"}); f.Unwrap() != nil {
		t.Error("a law's failure wraps an error")
	}
}

func TestFormatTensors(t *testing.T) {
	s := spec.Tensor[spec.Rat]{Shape: spec.Shape{}, Data: []spec.Rat{rat(2, 1)}}
	for _, tc := range []struct {
		ts   []spec.Tensor[spec.Rat]
		want string
	}{
		{nil, "()"},
		{[]spec.Tensor[spec.Rat]{s}, "(" + s.String() + ")"},
		{[]spec.Tensor[spec.Rat]{s, s}, "(" + s.String() + ", " + s.String() + ")"},
	} {
		if got := FormatTensors(tc.ts); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}
