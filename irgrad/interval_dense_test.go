package irgrad

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestIntervalGradDenseEnclosesRat: the interval gradient of a 16-layer
// MLP (its linear layers on the dense midpoint-radius kernels of package
// enclose) is the same on every path, interval for interval, and
// contains the exact rational gradient — output, input and every
// parameter.
func TestIntervalGradDenseEnclosesRat(t *testing.T) {
	g, p, x := deepMLP(t, 16, 12)
	lr, err := Lower[spec.Rat](nil, g, p)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := lr.Grad(PathTape, x)
	if err != nil {
		t.Fatal(err)
	}
	li, err := Lower[spec.Interval](nil, g, p)
	if err != nil {
		t.Fatal(err)
	}
	xi := spec.Tensor[spec.Interval]{Shape: x.Shape.Clone(), Data: make([]spec.Interval, len(x.Data))}
	for i, r := range x.Data {
		xi.Data[i] = spec.Interval{}.FromRat(r.Big())
	}
	var first *Gradients[spec.Interval]
	for _, path := range Paths() {
		gi, err := li.Grad(path, xi)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		tensors := append([]spec.Tensor[spec.Interval]{gi.Output, gi.Input}, gi.Params...)
		want := append([]spec.Tensor[spec.Rat]{exact.Output, exact.Input}, exact.Params...)
		for k := range tensors {
			for j, v := range tensors[k].Data {
				if !v.Contains(want[k].Data[j].Big()) {
					t.Fatalf("%s: tensor %d element %d: %v does not contain %s", path, k, j, v, want[k].Data[j])
				}
				if first != nil {
					ref := append([]spec.Tensor[spec.Interval]{first.Output, first.Input}, first.Params...)
					if !v.Same(ref[k].Data[j]) {
						t.Fatalf("%s: tensor %d element %d: %v, but %s gives %v", path, k, j, v, first.Path, ref[k].Data[j])
					}
				}
			}
		}
		if first == nil {
			first = gi
		}
	}
}
