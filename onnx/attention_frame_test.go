package onnx

import (
	"strings"
	"testing"
)

// TestAttentionFrame: Attention's structural masks — the opset-25 sliding
// window, the opset-24 nonpad_kv_seqlen padding with its per-batch causal
// offset, and the fully-masked-row guard (a zero row). Q and K are zero, so
// every score is 0 and the softmax is uniform over the keys a query may see:
// y is the mean of V over that set. V = 1, 10, 100, … makes each set's mean
// name the set. Each expected set is read off the operator text (its
// diagrams and the rules written beside each case), not computed by the
// importer's rule.
func TestAttentionFrame(t *testing.T) {
	v6 := floatsTensor(dims(1, 1, 6, 1), 1, 10, 100, 1000, 10000, 100000)
	v4x2 := floatsTensor(dims(2, 1, 4, 1), 1, 10, 100, 1000, 1, 10, 100, 1000)
	z := func(d ...int64) *Tensor {
		n := int64(1)
		for _, x := range d {
			n *= x
		}
		return floatsTensor(d, make([]float32, n)...)
	}
	att := func(opset int64, b, l, s int64, extra func(*mg) *mg, inputs []string, attrs ...*Attribute) *Model {
		m := newMG(opset).in("q", b, 1, l, 2).in("k", b, 1, s, 2).in("v", b, 1, s, 1)
		if extra != nil {
			m = extra(m)
		}
		return m.op("Attention", inputs, ins("y", "", "", "p"), attrs...).out("y", "p").model()
	}
	qkv := ins("q", "k", "v")
	cases := []struct {
		name  string
		m     *Model
		in    []*Tensor
		want  []float64 // y
		wantP []float64 // qk_matmul_output (mode 3) when non-nil
	}{
		// The operator's diagram: S_q = 4, S_k = 6, left 2, right 1, offset 0:
		// q0 {k0,k1}, q1 {k0,k1,k2}, q2 {k0..k3}, q3 {k1..k4}.
		{"window left 2 right 1", att(25, 1, 4, 6, nil, qkv, aI("left_window_size", 2), aI("right_window_size", 1)),
			[]*Tensor{z(1, 1, 4, 2), z(1, 1, 6, 2), v6}, []float64{11.0 / 2, 111.0 / 3, 1111.0 / 4, 11110.0 / 4}, nil},
		// left 1 alone: the right side is unbounded by default (−1): q0 {k0..k5}, q1 {k0..k5}, q2 {k1..k5}.
		{"window left 1, right default", att(25, 1, 3, 6, nil, qkv, aI("left_window_size", 1)),
			[]*Tensor{z(1, 1, 3, 2), z(1, 1, 6, 2), v6}, []float64{111111.0 / 6, 111111.0 / 6, 111110.0 / 5}, nil},
		// is_causal with left 1: q_i sees {k_{i−1}, k_i}.
		{"causal window left 1", att(25, 1, 3, 6, nil, qkv, aI("is_causal", 1), aI("left_window_size", 1)),
			[]*Tensor{z(1, 1, 3, 2), z(1, 1, 6, 2), v6}, []float64{1, 11.0 / 2, 110.0 / 2}, nil},
		// nonpad [2, 4], causal: batch 0 offset 2 − 2 = 0 (q0 {k0}, q1 {k0,k1}); batch 1 offset 2
		// (q0 {k0..k2}, q1 {k0..k3}).
		{"nonpad causal", att(24, 2, 2, 4, func(m *mg) *mg { return m.initI("n", dims(2), 2, 4) }, ins("q", "k", "v", "", "", "", "n"), aI("is_causal", 1)),
			[]*Tensor{z(2, 1, 2, 2), z(2, 1, 4, 2), v4x2}, []float64{1, 11.0 / 2, 111.0 / 3, 1111.0 / 4}, nil},
		// nonpad [1, 3], not causal: every query of batch 0 sees {k0}, of batch 1 {k0,k1,k2}.
		{"nonpad padding only", att(24, 2, 2, 4, func(m *mg) *mg { return m.initI("n", dims(2), 1, 3) }, ins("q", "k", "v", "", "", "", "n")),
			[]*Tensor{z(2, 1, 2, 2), z(2, 1, 4, 2), v4x2}, []float64{1, 1, 37, 37}, nil},
		// nonpad [1] with 2 queries, causal: offset −1, q0 sees no key (a zero row, mode-3 row zero
		// too), q1 sees {k0}.
		{"negative offset: zero row", att(24, 1, 2, 4, func(m *mg) *mg { return m.initI("n", dims(1), 1) }, ins("q", "k", "v", "", "", "", "n"), aI("is_causal", 1), aI("qk_matmul_output_mode", 3)),
			[]*Tensor{z(1, 1, 2, 2), z(1, 1, 4, 2), floatsTensor(dims(1, 1, 4, 1), 1, 10, 100, 1000)}, []float64{0, 1}, []float64{0, 0, 0, 0, 1, 0, 0, 0}},
		// A boolean mask blocking all of row 0 at opset 23: the guard makes it a zero row.
		{"boolean mask fully masked row", att(23, 1, 2, 2, func(m *mg) *mg {
			return m.initI("mi", dims(2, 2), 0, 0, 1, 1).op("Cast", ins("mi"), ins("m"), aI("to", int64(Bool)))
		}, ins("q", "k", "v", "m"), aI("qk_matmul_output_mode", 3)),
			[]*Tensor{z(1, 1, 2, 2), z(1, 1, 2, 2), floatsTensor(dims(1, 1, 2, 1), 1, 10)}, []float64{0, 11.0 / 2}, []float64{0, 0, 0.5, 0.5}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalF64(t, tc.m, Options{}, tc.in...)
			if !nearF64(outs[0].Data, tc.want) {
				t.Errorf("y = %v, want %v", outs[0].Data, tc.want)
			}
			if tc.wantP != nil && !nearF64(outs[1].Data, tc.wantP) {
				t.Errorf("qk_matmul_output = %v, want %v", outs[1].Data, tc.wantP)
			}
		})
	}
}

// TestAttentionFrameRefused: the window attributes before opset 25 and
// nonpad_kv_seqlen before opset 24 are not the operator's, and a
// nonpad_kv_seqlen out of contract is refused, each naming the field.
func TestAttentionFrameRefused(t *testing.T) {
	base := func(opset int64) *mg { return newMG(opset).in("q", 1, 1, 2, 2).in("k", 1, 1, 2, 2).in("v", 1, 1, 2, 1) }
	cases := []struct {
		name string
		m    *Model
		want []string
	}{
		{"window at opset 24", base(24).op("Attention", ins("q", "k", "v"), ins("y"), aI("left_window_size", 1)).out("y").model(),
			[]string{`attribute "left_window_size"`, "opset 24"}},
		{"nonpad at opset 23", base(23).initI("n", dims(1), 2).op("Attention", ins("q", "k", "v", "", "", "", "n"), ins("y")).out("y").model(),
			[]string{"3 to 6 inputs"}},
		{"nonpad beyond the keys", base(24).initI("n", dims(1), 3).op("Attention", ins("q", "k", "v", "", "", "", "n"), ins("y")).out("y").model(),
			[]string{"input 6", "element 0 is 3"}},
		{"nonpad of the wrong shape", base(24).initI("n", dims(2), 1, 1).op("Attention", ins("q", "k", "v", "", "", "", "n"), ins("y")).out("y").model(),
			[]string{"input 6", "batch size"}},
		{"nonpad with past", base(24).in("pk", 1, 1, 1, 2).in("pv", 1, 1, 1, 1).initI("n", dims(1), 2).op("Attention", ins("q", "k", "v", "", "pk", "pv", "n"), ins("y")).out("y").model(),
			[]string{"input 6", "past_key"}},
		{"window below -1", base(25).op("Attention", ins("q", "k", "v"), ins("y"), aI("right_window_size", -2)).out("y").model(),
			[]string{`attribute "right_window_size"`, "-2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(tc.m, Options{})
			if err == nil {
				t.Fatal("imported")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}
