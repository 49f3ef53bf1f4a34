package onnx

import (
	"math"
	"strings"
	"testing"
)

// TestAttentionQKMatmulOutput: Attention's fourth output in each
// qk_matmul_output_mode, on Q = [1 2], K = [[1 0] [0 1]], V = [[1] [0]],
// scale 1 and the float mask [3 0]: raw scores Q·Kᵀ = [1 2]; after the
// softcap c = 2: 2·tanh([1/2 1]); with the mask: capped + [3 0]; after the
// softmax: the softmax of that row. Expectations computed here in float64
// from those formulas, not by the importer.
func TestAttentionQKMatmulOutput(t *testing.T) {
	softmax := func(a, b float64) []float64 {
		return []float64{1 / (1 + math.Exp(b-a)), 1 / (1 + math.Exp(a-b))}
	}
	ct := func(x float64) float64 { return 2 * math.Tanh(x/2) }
	cases := []struct {
		mode    int64
		softcap bool
		want    []float64
	}{
		{0, false, []float64{1, 2}},
		{1, false, []float64{1, 2}},
		{2, false, []float64{4, 2}},
		{3, false, softmax(4, 2)},
		{0, true, []float64{1, 2}},
		{1, true, []float64{ct(1), ct(2)}},
		{2, true, []float64{ct(1) + 3, ct(2)}},
		{3, true, softmax(ct(1)+3, ct(2))},
	}
	for _, tc := range cases {
		attrs := []*Attribute{aF("scale", 1), aI("qk_matmul_output_mode", tc.mode)}
		if tc.softcap {
			attrs = append(attrs, aF("softcap", 2))
		}
		m := newMG(23).in("q", 1, 1, 1, 2).in("k", 1, 1, 2, 2).init("v", dims(1, 1, 2, 1), 1, 0).init("m", dims(1, 2), 3, 0).
			op("Attention", ins("q", "k", "v", "m"), ins("y", "", "", "qk"), attrs...).out("qk").model()
		_, outs := evalF64(t, m, Options{}, floatsTensor(dims(1, 1, 1, 2), 1, 2), floatsTensor(dims(1, 1, 2, 2), 1, 0, 0, 1))
		if !nearF64(outs[0].Data, tc.want) {
			t.Errorf("mode %d softcap %v: got %v, want %v", tc.mode, tc.softcap, outs[0].Data, tc.want)
		}
	}
}

// TestAttentionQKMatmulOutputRefused: mode 2 under a −∞ (causal) mask holds
// −∞, which the IR does not compute; a mode outside 0…3 is refused.
func TestAttentionQKMatmulOutputRefused(t *testing.T) {
	cases := []struct {
		name  string
		attrs []*Attribute
		want  string
	}{
		{"mode 2 causal", []*Attribute{aI("qk_matmul_output_mode", 2), aI("is_causal", 1)}, "holds −∞"},
		{"mode 4", []*Attribute{aI("qk_matmul_output_mode", 4)}, "not a mode"},
	}
	for _, tc := range cases {
		m := newMG(23).in("q", 1, 1, 2, 2).in("k", 1, 1, 2, 2).init("v", dims(1, 1, 2, 1), 1, 0).
			op("Attention", ins("q", "k", "v"), ins("y", "", "", "qk"), tc.attrs...).out("qk").model()
		if _, err := Import(m, Options{}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}
