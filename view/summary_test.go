package view

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestValueText: small tensors print in full; a tensor of 10 elements
// 1..10 is summarised with min 1, max 10 and norm sqrt(385) ≈ 19.62 (by
// hand: 1² + … + 10² = 385).
func TestValueText(t *testing.T) {
	small := spec.Tensor[spec.Rat]{Shape: spec.Shape{2}, Data: []spec.Rat{spec.NewRat(1, 2), spec.NewRat(3, 1)}}
	if got := valueText(small); got != "[1/2, 3]" {
		t.Errorf("small tensor: %q", got)
	}
	big := spec.Tensor[spec.Rat]{Shape: spec.Shape{10}}
	for i := 1; i <= 10; i++ {
		big.Data = append(big.Data, spec.NewRat(int64(i), 1))
	}
	if got, want := valueText(big), "10 elements: min ≈ 1, max ≈ 10, ‖·‖₂ ≈ 19.62"; got != want {
		t.Errorf("big tensor: %q, want %q", got, want)
	}
	iv := spec.Tensor[spec.Interval]{Shape: spec.Shape{9}}
	for i := 0; i < 9; i++ {
		iv.Data = append(iv.Data, spec.Interval{Lo: -1, Hi: -1})
	}
	if got := valueText(iv); !strings.HasPrefix(got, "9 elements: min ≈ -1, max ≈ -1, ‖·‖₂ ≈ 3") {
		t.Errorf("interval tensor: %q", got)
	}
	pair := spec.Tensor[spec.Interval]{Shape: spec.Shape{1, 2}, Data: []spec.Interval{{Lo: 0.5, Hi: 0.5}, {Lo: 1, Hi: 1.5}}}
	if got, want := valueText(pair), "[[0.5, ≈1.25]]"; got != want {
		t.Errorf("small interval tensor: %q, want %q (a point as its value, else ≈ its midpoint)", got, want)
	}
}
