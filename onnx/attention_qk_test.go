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

// TestAttentionQKMatmulOutputRefused: a mode outside 0…3 is refused (mode
// 2 under a −∞ mask: TestAttentionQKMatmulMasked).
func TestAttentionQKMatmulOutputRefused(t *testing.T) {
	cases := []struct {
		name  string
		attrs []*Attribute
		want  string
	}{
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

// TestAttentionQKMatmulMasked: mode 2 under a causal mask, two queries
// and two keys: query 0 may not see key 1 (j > i), so element (0, 1) of
// qk_matmul_output is −∞ (the score plus the blocked mask), the other
// three are the scores (Real). The −∞ element is Masked (decided only
// where the score's bound is finite); the required −∞ holds, and planted
// values — 0, +∞, NaN, the score itself — fail. Commands other than
// compare refuse the output, naming it.
func TestAttentionQKMatmulMasked(t *testing.T) {
	m := newMG(23).in("q", 1, 1, 2, 2).in("k", 1, 1, 2, 2).init("v", dims(1, 1, 2, 1), 1, 0).
		op("Attention", ins("q", "k", "v"), ins("y", "", "", "qk"), aI("qk_matmul_output_mode", 2), aI("is_causal", 1)).out("qk").model()
	in := []*Tensor{floatsTensor(dims(1, 1, 2, 2), 1, 2, 3, 4), floatsTensor(dims(1, 1, 2, 2), 1, 0, 0, 1)}
	o, fl, err := OptionsFor(m, in)
	if err != nil {
		t.Fatal(err)
	}
	im, err := Import(m, o)
	if err != nil {
		t.Fatal(err)
	}
	if nr := im.NonReal(); !strings.Contains(nr, `"qk"`) || !strings.Contains(nr, "element 1") {
		t.Errorf("NonReal() = %q, want output \"qk\" element 1", nr)
	}
	sp, _, err := im.Analyze(m, fl)
	if err != nil {
		t.Fatal(err)
	}
	st := sp.Outputs[0]
	if len(st) != 4 {
		t.Fatalf("statuses %v, want 4", st)
	}
	for j, s := range st {
		if j == 1 {
			if s.Status != Known || !math.IsInf(s.Value, -1) || !s.Masked {
				t.Errorf("element 1: %+v, want Known −∞ Masked", s)
			}
			continue
		}
		if s.Status != Real {
			t.Errorf("element %d: %+v, want Real", j, s)
		}
	}
	if h, ok := st[1].Judge(math.Inf(-1)); !h || !ok {
		t.Errorf("the required −∞ does not hold")
	}
	for _, p := range []float64{0, math.Inf(1), math.NaN(), 2} { // 2 = q0·k1, the score
		if h, ok := st[1].Judge(p); h || !ok {
			t.Errorf("planted %v where −∞ is due: holds=%v decided=%v, want FAILS", p, h, ok)
		}
	}
}

// TestAttentionRecordedMask: a float attn_mask given as a recorded graph
// input holding −∞ blocks those keys, as a constant mask does: the
// masked softmax gives them weight exp(−∞) = 0 whatever finite part the
// IR reads there, so Analyze keeps Y Real (decided by the bound). A NaN
// in the mask is no blocked key: Y's elements that read it are Unknown.
func TestAttentionRecordedMask(t *testing.T) {
	ninf, nan := float32(math.Inf(-1)), float32(math.NaN())
	m := newMG(23).in("q", 1, 1, 1, 2).in("k", 1, 1, 2, 2).init("v", dims(1, 1, 2, 1), 1, 0).in("m", 1, 2).
		op("Attention", ins("q", "k", "v", "m"), ins("y")).out("y").model()
	for _, tc := range []struct {
		name    string
		mask    []float32
		unknown bool
	}{
		{"−∞ blocks key 0", []float32{ninf, 0}, false},
		{"NaN", []float32{nan, 0}, true},
	} {
		in := []*Tensor{floatsTensor(dims(1, 1, 1, 2), 1, 2), floatsTensor(dims(1, 1, 2, 2), 1, 0, 0, 1), floatsTensor(dims(1, 2), tc.mask...)}
		o, fl, err := OptionsFor(m, in)
		if err != nil {
			t.Fatal(err)
		}
		o.Values = map[string]*Tensor{"q": in[0], "k": in[1], "m": in[2]}
		im, err := Import(m, o)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sp, _, err := im.Analyze(m, fl)
		if err != nil {
			t.Fatal(err)
		}
		got := sp.Outputs[0] != nil && sp.Outputs[0][0].Status == Unknown
		if got != tc.unknown {
			t.Errorf("%s: Y statuses %v, want Unknown %v", tc.name, sp.Outputs[0], tc.unknown)
		}
	}
}
