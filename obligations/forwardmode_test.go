package obligations

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestForwardTangent: forward mode through the registry's forward rule
// encloses f′(x)·dx where every choice is decided, says undecided where
// one is not, and errors on an unknown op.
func TestForwardTangent(t *testing.T) {
	reg := spec.Default[DualInterval]()
	pt := func(vs ...float64) spec.Tensor[spec.Interval] {
		d := make([]spec.Interval, len(vs))
		for i, v := range vs {
			d[i] = spec.Interval{Lo: v, Hi: v}
		}
		return spec.Tensor[spec.Interval]{Shape: spec.Shape{len(vs)}, Data: d}
	}
	wide := spec.Tensor[spec.Interval]{Shape: spec.Shape{1}, Data: []spec.Interval{{Lo: -1, Hi: 1}}}
	tests := []struct {
		name    string
		op      string
		xs, dxs []spec.Tensor[spec.Interval]
		decided bool
		want    []float64 // a point each enclosure must contain
	}{
		// d(x·y) = dx·y + x·dy = 1·3 + 2·(−1) = 1.
		{"mul", "mul", []spec.Tensor[spec.Interval]{pt(2), pt(3)}, []spec.Tensor[spec.Interval]{pt(1), pt(-1)}, true, []float64{1}},
		// max at an exact tie of point inputs averages the tangents: (4 + 2)/2.
		{"max tie", "max", []spec.Tensor[spec.Interval]{pt(5), pt(5)}, []spec.Tensor[spec.Interval]{pt(4), pt(2)}, true, []float64{3}},
		// √x on [−1, 1] with a non-zero tangent: the side of 0 is undecided.
		{"sqrt undecided", "sqrt", []spec.Tensor[spec.Interval]{wide}, []spec.Tensor[spec.Interval]{pt(1)}, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := ForwardTangent(reg, tc.op, nil, tc.xs, tc.dxs)
			if err != nil || ok != tc.decided {
				t.Fatalf("decided %v, err %v; want decided %v", ok, err, tc.decided)
			}
			for k, w := range tc.want {
				// Contains w, and tightly: point inputs are exact, so a
				// tie is decided (not the hull of both tangents).
				if iv := got.Data[k]; iv.Lo > w || iv.Hi < w || iv.Hi-iv.Lo > 1e-12 {
					t.Errorf("element %d: %v does not tightly contain %v", k, iv, w)
				}
			}
		})
	}
	if _, _, err := ForwardTangent(reg, "no_such_op", nil, []spec.Tensor[spec.Interval]{pt(1)}, []spec.Tensor[spec.Interval]{pt(1)}); err == nil {
		t.Errorf("unknown op: no error")
	}
}
