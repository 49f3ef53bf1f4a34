package spec_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestRequiresGrad: a node requires a gradient when a parent does, unless
// its primitive is NoGrad (detach, const, …).
func TestRequiresGrad(t *testing.T) {
	info := func(name string) *spec.OpInfo {
		i, err := spec.Info(name)
		if err != nil {
			t.Fatal(err)
		}
		return i
	}
	cases := []struct {
		op      string
		parents []bool
		want    bool
	}{
		{"mul", []bool{false, true}, true},
		{"mul", []bool{false, false}, false},
		{"add", nil, false},
		{"detach", []bool{true}, false},
		{"bernoulli_mask", []bool{true}, false},
	}
	for _, c := range cases {
		if got := spec.RequiresGrad(info(c.op), c.parents...); got != c.want {
			t.Errorf("%s %v: got %v, want %v", c.op, c.parents, got, c.want)
		}
	}
}

// TestStopTangent: over duals, detach of 2 + 3ε is 2 + 0ε (its JVP is 0),
// while a primitive that is not NoGrad is returned unchanged.
func TestStopTangent(t *testing.T) {
	type D = spec.Dual[spec.Rat]
	reg := spec.Default[D]()
	detach, err := reg.Lookup("detach")
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Tensor[D]{Shape: spec.Shape{1}, Data: []D{spec.MakeDual(spec.NewRat(2, 1), spec.NewRat(3, 1))}}
	plain, err := detach.Forward(nil, []spec.Tensor[D]{x})
	if err != nil {
		t.Fatal(err)
	}
	if !plain.Data[0].Du.Same(spec.NewRat(3, 1)) {
		t.Fatalf("the plain dual detach should carry the tangent (the reason for the rule), got %v", plain.Data[0])
	}
	y, err := spec.StopTangent(detach).Forward(nil, []spec.Tensor[D]{x})
	if err != nil {
		t.Fatal(err)
	}
	if !y.Data[0].Re.Same(spec.NewRat(2, 1)) || !y.Data[0].Du.IsZero() {
		t.Errorf("stopped detach of 2+3ε: got %v, want 2+0ε", y.Data[0])
	}
	if !x.Data[0].Du.Same(spec.NewRat(3, 1)) {
		t.Error("DropTangent modified its input")
	}
	mul, _ := reg.Lookup("mul")
	if spec.StopTangent(mul) != mul {
		t.Error("StopTangent must leave a primitive that is not NoGrad alone")
	}
}
