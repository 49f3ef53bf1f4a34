package onnx

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestImportSupersetOps: the ops that map to tlcheck.ir.v1 superset tags
// of branches winops and regops (pad, gather, sign, shrink, strided slice,
// conv_transpose, max_pool_nd, avg_pool_nd, lrn, instance_norm). Each case
// is evaluated over float64 (and over Rat when every tag of the imported
// graph is exact) against hand-derived values. A case whose tag the
// registry does not have is skipped, naming it.
func TestImportSupersetOps(t *testing.T) {
	x4 := floatsTensor(dims(1, 1, 4), 1, 2, 3, 4)
	x5 := floatsTensor(dims(1, 1, 5), 1, 5, 2, 4, 3)
	cases := []struct {
		name  string
		needs []irsem.Op
		m     *Model
		o     Options
		in    *Tensor
		shape spec.Shape
		want  []float64
	}{
		{"Pad constant opset 11", []irsem.Op{irsem.OpPad}, newMG(11).in("x", 1, 2).initI("p", dims(4), 0, 1, 0, 2).init("v", dims(), 9).
			op("Pad", ins("x", "p", "v"), ins("y")).out("y").model(), Options{}, floatsTensor(dims(1, 2), 1, 2), spec.Shape{1, 5}, []float64{9, 1, 2, 9, 9}},
		// reflect of 1 2 3 by 2 before, 1 after: 3 2 | 1 2 3 | 2.
		{"Pad reflect opset 2", []irsem.Op{irsem.OpPad}, newMG(2).in("x", 3).op("Pad", ins("x"), ins("y"), aS("mode", "reflect"), aIs("pads", 2, 1)).out("y").model(), Options{},
			floatsTensor(dims(3), 1, 2, 3), spec.Shape{6}, []float64{3, 2, 1, 2, 3, 2}},
		{"Pad edge", []irsem.Op{irsem.OpPad}, newMG(11).in("x", 3).initI("p", dims(2), 2, 1).op("Pad", ins("x", "p"), ins("y"), aS("mode", "edge")).out("y").model(), Options{},
			floatsTensor(dims(3), 1, 2, 3), spec.Shape{6}, []float64{1, 1, 1, 2, 3, 3}},
		// pads (−1, 1): pad one 0 at the end, crop one at the start.
		{"Pad negative crops", []irsem.Op{irsem.OpPad}, newMG(11).in("x", 3).initI("p", dims(2), -1, 1).op("Pad", ins("x", "p"), ins("y")).out("y").model(), Options{},
			floatsTensor(dims(3), 1, 2, 3), spec.Shape{3}, []float64{2, 3, 0}},
		// axis 1, indices [[−1, 0]] of (1 2 3 / 4 5 6) → [2,1,2]: (3 1), (6 4).
		{"Gather negative indices", []irsem.Op{irsem.OpGather}, newMG(13).in("x", 2, 3).initI("i", dims(1, 2), -1, 0).op("Gather", ins("x", "i"), ins("y"), aI("axis", 1)).out("y").model(), Options{},
			floatsTensor(dims(2, 3), 1, 2, 3, 4, 5, 6), spec.Shape{2, 1, 2}, []float64{3, 1, 6, 4}},
		// Embedding: the table is an initializer, the indices a bound input.
		{"Gather embedding bound", []irsem.Op{irsem.OpGather}, newMG(13).in("x", 1).inT("idx", Int64, 2).init("e", dims(3, 2), 1, 2, 3, 4, 5, 6).
			op("Gather", ins("e", "idx"), ins("g")).op("Mul", ins("g", "x"), ins("y")).out("y").model(),
			Options{Bind: map[string]*Tensor{"idx": itensor("idx", dims(2), 2, 0)}}, floatsTensor(dims(1), 2), spec.Shape{2, 2}, []float64{10, 12, 2, 4}},
		// starts −1, ends −10 (clamped to −1: through index 0), step −2: indices 3, 1.
		{"Slice negative step", []irsem.Op{irsem.OpGather}, newMG(13).in("x", 4).initI("s", dims(1), -1).initI("e", dims(1), -10).initI("a", dims(1), 0).initI("k", dims(1), -2).
			op("Slice", ins("x", "s", "e", "a", "k"), ins("y")).out("y").model(), Options{}, floatsTensor(dims(4), 1, 2, 3, 4), spec.Shape{2}, []float64{4, 2}},
		{"Sign", []irsem.Op{irsem.OpSign}, newMG(13).in("x", 3).op("Sign", ins("x"), ins("y")).out("y").model(), Options{},
			floatsTensor(dims(3), -2, 0, 3), spec.Shape{3}, []float64{-1, 0, 1}},
		// λ = 1, bias 1/2: x < −1 → x + 1/2, x > 1 → x − 1/2, else 0.
		{"Shrink", []irsem.Op{irsem.OpShrink}, newMG(13).in("x", 4).op("Shrink", ins("x"), ins("y"), aF("lambd", 1), aF("bias", 0.5)).out("y").model(), Options{},
			floatsTensor(dims(4), -3, -1, 0.5, 2), spec.Shape{4}, []float64{-2.5, 0, 0, 1.5}},
		// pads (1, 0): 0 1 2 3 under W = (1, 1): 1, 3, 5.
		{"Conv asymmetric pads", []irsem.Op{irsem.OpPad}, newMG(13).in("x", 1, 1, 3).init("w", dims(1, 1, 2), 1, 1).op("Conv", ins("x", "w"), ins("y"), aIs("pads", 1, 0)).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 3), 1, 2, 3), spec.Shape{1, 1, 3}, []float64{1, 3, 5}},
		// stride 2: y[2i+k] += x[i]·W[k]: 1 1 2 2.
		{"ConvTranspose stride 2", []irsem.Op{"conv_transpose"}, newMG(13).in("x", 1, 1, 2).init("w", dims(1, 1, 2), 1, 1).op("ConvTranspose", ins("x", "w"), ins("y"), aIs("strides", 2)).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 2), spec.Shape{1, 1, 4}, []float64{1, 1, 2, 2}},
		// stride 1 overlaps accumulate: 1, 1+2, 2; bias 1/2.
		{"ConvTranspose overlap bias", []irsem.Op{"conv_transpose"}, newMG(13).in("x", 1, 1, 2).init("w", dims(1, 1, 2), 1, 1).init("b", dims(1), 0.5).op("ConvTranspose", ins("x", "w", "b"), ins("y")).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 2), spec.Shape{1, 1, 3}, []float64{1.5, 3.5, 2.5}},
		// output_shape 3 of the full 1 1 2 2: total padding 2·1 + 2 − 3 = 1, at the
		// begin (NOTSET) → 1 2 2; at the end with SAME_UPPER → 1 1 2.
		{"ConvTranspose output_shape", []irsem.Op{"conv_transpose"}, newMG(13).in("x", 1, 1, 2).init("w", dims(1, 1, 2), 1, 1).op("ConvTranspose", ins("x", "w"), ins("y"), aIs("strides", 2), aIs("output_shape", 3)).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 2), spec.Shape{1, 1, 3}, []float64{1, 2, 2}},
		{"ConvTranspose output_shape SAME_UPPER", []irsem.Op{"conv_transpose"}, newMG(13).in("x", 1, 1, 2).init("w", dims(1, 1, 2), 1, 1).op("ConvTranspose", ins("x", "w"), ins("y"), aIs("strides", 2), aIs("output_shape", 3), aS("auto_pad", "SAME_UPPER")).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 2), spec.Shape{1, 1, 3}, []float64{1, 1, 2}},
		// auto_pad SAME_LOWER asks for n·s = 4: no padding, the full 1 1 2 2.
		{"ConvTranspose SAME_LOWER", []irsem.Op{"conv_transpose"}, newMG(13).in("x", 1, 1, 2).init("w", dims(1, 1, 2), 1, 1).op("ConvTranspose", ins("x", "w"), ins("y"), aIs("strides", 2), aS("auto_pad", "SAME_LOWER")).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 2), spec.Shape{1, 1, 4}, []float64{1, 1, 2, 2}},
		// dilation 2, kernel 2 on 1 5 2 4 3: windows {0,2} {1,3} {2,4}.
		{"MaxPool dilation", []irsem.Op{"max_pool_nd"}, newMG(12).in("x", 1, 1, 5).op("MaxPool", ins("x"), ins("y"), aIs("kernel_shape", 2), aIs("dilations", 2)).out("y").model(), Options{},
			x5, spec.Shape{1, 1, 3}, []float64{2, 5, 3}},
		// ceil_mode: kernel 2 stride 2 on 5 elements: a third window holding 3 alone.
		{"MaxPool ceil_mode", []irsem.Op{"max_pool_nd"}, newMG(12).in("x", 1, 1, 5).op("MaxPool", ins("x"), ins("y"), aIs("kernel_shape", 2), aIs("strides", 2), aI("ceil_mode", 1)).out("y").model(), Options{},
			x5, spec.Shape{1, 1, 3}, []float64{5, 4, 3}},
		// SAME_UPPER, kernel 2, stride 1 on 1 5 2: pads 0/1, windows (1,5) (5,2) (2,pad).
		{"MaxPool SAME_UPPER", []irsem.Op{"max_pool_nd"}, newMG(12).in("x", 1, 1, 3).op("MaxPool", ins("x"), ins("y"), aIs("kernel_shape", 2), aS("auto_pad", "SAME_UPPER")).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 3), 1, 5, 2), spec.Shape{1, 1, 3}, []float64{5, 5, 2}},
		// SAME_LOWER: pads 1/0, windows (pad,1) (1,5) (5,2), averaging real elements only.
		{"AveragePool SAME_LOWER", []irsem.Op{"avg_pool_nd"}, newMG(13).in("x", 1, 1, 3).op("AveragePool", ins("x"), ins("y"), aIs("kernel_shape", 2), aS("auto_pad", "SAME_LOWER")).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 3), 1, 5, 2), spec.Shape{1, 1, 3}, []float64{1, 3, 3.5}},
		// count_include_pad = 0: windows (pad,1) (2,3) (4,pad) average their real elements.
		{"AveragePool exclude pad", []irsem.Op{"avg_pool_nd"}, newMG(13).in("x", 1, 1, 4).op("AveragePool", ins("x"), ins("y"), aIs("kernel_shape", 2), aIs("strides", 2), aIs("pads", 1, 1)).out("y").model(), Options{},
			x4, spec.Shape{1, 1, 3}, []float64{1, 2.5, 4}},
		// size 1, α = β = bias = 1: x / (1 + x²).
		{"LRN", []irsem.Op{irsem.OpLRN}, newMG(13).in("x", 1, 2, 1).op("LRN", ins("x"), ins("y"), aI("size", 1), aF("alpha", 1), aF("beta", 1), aF("bias", 1)).out("y").model(), Options{},
			floatsTensor(dims(1, 2, 1), 2, 1), spec.Shape{1, 2, 1}, []float64{0.4, 0.5}},
		// (1, 3): mean 2, variance 1, ε = 0 → (−1, 1)·2 + 1.
		{"InstanceNormalization", []irsem.Op{irsem.OpInstanceNorm}, newMG(13).in("x", 1, 1, 2).init("g", dims(1), 2).init("b", dims(1), 1).
			op("InstanceNormalization", ins("x", "g", "b"), ins("y"), aF("epsilon", 0)).out("y").model(), Options{},
			floatsTensor(dims(1, 1, 2), 1, 3), spec.Shape{1, 1, 2}, []float64{-1, 3}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, op := range tc.needs {
				if _, ok := irsem.LookupTag(op); !ok {
					t.Skipf("IR tag %q is not in the registry yet (branches winops/regops); the mapping is not checked", op)
				}
			}
			im, outs := evalF64(t, tc.m, tc.o, tc.in)
			if !outs[0].Shape.Equal(tc.shape) {
				t.Fatalf("shape %v, want %v", outs[0].Shape, tc.shape)
			}
			for i, w := range tc.want {
				if math.Abs(float64(outs[0].Data[i])-w) > 1e-12 {
					t.Errorf("element %d: %v, want %v", i, outs[0].Data[i], w)
				}
			}
			exact := true
			for _, n := range im.Graph.Nodes {
				info, _ := irsem.LookupTag(n.Kind.Op)
				exact = exact && info.Exact
			}
			if !exact {
				return
			}
			_, ro := evalRat(t, tc.m, tc.o, tc.in)
			for i, w := range tc.want {
				r, _ := spec.RatFromFloat64(w)
				if !ro[0].Data[i].Same(r) {
					t.Errorf("exact element %d: %v, want %v", i, ro[0].Data[i], r)
				}
			}
		})
	}
}
