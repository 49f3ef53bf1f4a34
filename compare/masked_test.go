package compare

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// TestApplySpecialsMasked: a Masked −∞ element (scores plus an additive
// −∞ mask) is decided only where fpbound's bound on its finite part is
// finite — then every evaluation's score is finite and the sum is −∞:
// a recorded −∞ holds, a planted 0 or NaN fails; with an unbounded finite
// part (an overflow to +∞ would give NaN) it is inconclusive whatever was
// recorded, also for the planted 0 (no proof that it is wrong).
func TestApplySpecialsMasked(t *testing.T) {
	ninf := math.Inf(-1)
	cases := []struct {
		rec, bound float64
		want       fpbound.Verdict
	}{
		{ninf, 1e-6, fpbound.Holds},
		{0, 1e-6, fpbound.Fails},
		{math.NaN(), 1e-6, fpbound.Fails},
		{ninf, math.Inf(1), fpbound.Inconclusive},
		{0, math.Inf(1), fpbound.Inconclusive},
	}
	for _, tc := range cases {
		om := &model.ONNX{
			Imported: &onnx.Imported{Outputs: []onnx.IOValue{{Name: "qk", Shape: spec.Shape{1}}}},
			Specials: &onnx.Specials{Outputs: [][]onnx.Special{{{Status: onnx.Known, Value: ninf, Masked: true}}}},
		}
		els := []fpbound.Element{{Recorded: float32(tc.rec), Bound: tc.bound, Verdict: fpbound.Holds}}
		applySpecials(om, els, nil)
		if els[0].Verdict != tc.want {
			t.Errorf("recorded %v, finite-part bound %v: %v, want %v", tc.rec, tc.bound, els[0].Verdict, tc.want)
		}
	}
}
