package onnx

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func dims(ds ...int64) []int64 { return ds }

// TestImportExactOps: per op, a model built in Go, evaluated exactly over
// Rat; every expectation is derived by hand from the ONNX operator
// specification (the comment on each case shows the arithmetic).
func TestImportExactOps(t *testing.T) {
	x23 := floatsTensor(dims(2, 3), 1, 2, 3, 4, 5, 6)
	cases := []struct {
		name   string
		m      *Model
		o      Options
		in     []*Tensor
		shapes []spec.Shape
		want   [][]string
	}{
		{"Add broadcast [2,3]+[3]", newMG(13).in("x", 2, 3).init("b", dims(3), 10, 20, 30).op("Add", ins("x", "b"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"11", "22", "33", "14", "25", "36"}}},
		{"Sub scalar", newMG(13).in("x", 2, 3).init("h", dims(), 0.5).op("Sub", ins("x", "h"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"1/2", "3/2", "5/2", "7/2", "9/2", "11/2"}}},
		// [2,1]·[1,3] → [2,3]: rows 1·(3,4,5), 2·(3,4,5).
		{"Mul multidirectional", newMG(13).in("x", 2, 1).init("c", dims(1, 3), 3, 4, 5).op("Mul", ins("x", "c"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2, 1), 1, 2)}, []spec.Shape{{2, 3}}, [][]string{{"3", "4", "5", "6", "8", "10"}}},
		{"Div", newMG(13).in("x", 2, 3).init("d", dims(3), 2, 4, 8).op("Div", ins("x", "d"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"1/2", "1/2", "3/8", "2", "5/4", "3/4"}}},
		// opset 6, broadcast=1, axis=0: B [2] runs along axis 0 of A [2,3].
		{"Add legacy broadcast axis", newMG(6).in("x", 2, 3).init("b", dims(2), 100, 200).op("Add", ins("x", "b"), ins("y"), aI("broadcast", 1), aI("axis", 0)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"101", "102", "103", "204", "205", "206"}}},
		{"Sum of three", newMG(13).in("x", 2, 3).init("a", dims(3), 1, 1, 1).init("b", dims(2, 1), 10, 20).op("Sum", ins("x", "a", "b"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"12", "13", "14", "25", "26", "27"}}},
		{"Mean of two", newMG(13).in("x", 2, 3).init("a", dims(), 1).op("Mean", ins("x", "a"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"1", "3/2", "2", "5/2", "3", "7/2"}}},
		{"Max Min", newMG(13).in("x", 2, 3).init("a", dims(), 3.5).op("Max", ins("x", "a"), ins("u")).op("Min", ins("u", "a"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"7/2", "7/2", "7/2", "7/2", "7/2", "7/2"}}},
		{"Pow integer 3", newMG(13).in("x", 3).initI("p", dims(), 3).op("Pow", ins("x", "p"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(3), -2, 0.5, 3)}, []spec.Shape{{3}}, [][]string{{"-8", "1/8", "27"}}},
		{"Pow -1 and 0.5", newMG(13).in("x", 3).init("m", dims(), -1).init("h", dims(1), 0.5).op("Pow", ins("x", "m"), ins("a")).op("Pow", ins("a", "h"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(3), 4, 0.25, 16)}, []spec.Shape{{3}}, [][]string{{"1/2", "2", "1/4"}}},
		{"Pow 0", newMG(13).in("x", 2).init("z", dims(), 0).op("Pow", ins("x", "z"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2), 7, -3)}, []spec.Shape{{2}}, [][]string{{"1", "1"}}},
		{"Neg Abs Relu Sqrt Reciprocal", newMG(13).in("x", 3).op("Neg", ins("x"), ins("a")).op("Abs", ins("a"), ins("b")).op("Relu", ins("a"), ins("c")).
			op("Sqrt", ins("b"), ins("d")).op("Reciprocal", ins("d"), ins("e")).out("c", "e").model(), Options{},
			[]*Tensor{floatsTensor(dims(3), 4, -9, 0.25)}, []spec.Shape{{3}, {3}}, [][]string{{"0", "9", "0"}, {"1/2", "1/3", "2"}}},
		// relu(x) + α·min(x,0), α = 0.5: −2 → −1.
		{"LeakyRelu", newMG(13).in("x", 3).op("LeakyRelu", ins("x"), ins("y"), aF("alpha", 0.5)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(3), -2, 0, 3)}, []spec.Shape{{3}}, [][]string{{"-1", "0", "3"}}},
		// opset 9: slope [2] broadcast along the last axis.
		{"PRelu numpy slope", newMG(9).in("x", 2, 2).init("s", dims(2), 0.5, 0.25).op("PRelu", ins("x", "s"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2, 2), -1, 2, -4, -8)}, []spec.Shape{{2, 2}}, [][]string{{"-1/2", "2", "-2", "-2"}}},
		// opset 6: slope [2] runs along the channel axis 1 of [1,2,2].
		{"PRelu opset 6 channels", newMG(6).in("x", 1, 2, 2).init("s", dims(2), 0.5, 0.25).op("PRelu", ins("x", "s"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 2, 2), -2, 4, -8, 1)}, []spec.Shape{{1, 2, 2}}, [][]string{{"-1", "4", "-2", "1"}}},
		{"Clip opset 6 attributes", newMG(6).in("x", 4).op("Clip", ins("x"), ins("y"), aF("min", -1), aF("max", 2)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(4), -3, -0.5, 1.5, 7)}, []spec.Shape{{4}}, [][]string{{"-1", "-1/2", "3/2", "2"}}},
		{"Clip opset 13 min input only", newMG(13).in("x", 4).init("lo", dims(), 0.5).op("Clip", ins("x", "lo"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(4), -3, -0.5, 1.5, 7)}, []spec.Shape{{4}}, [][]string{{"1/2", "1/2", "3/2", "7"}}},
		// x/(1+|x|): −3 → −3/4, 1 → 1/2.
		{"Softsign", newMG(13).in("x", 2).op("Softsign", ins("x"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2), -3, 1)}, []spec.Shape{{2}}, [][]string{{"-3/4", "1/2"}}},
		// clamp(x/2 + 1/2, 0, 1).
		{"HardSigmoid", newMG(13).in("x", 3).op("HardSigmoid", ins("x"), ins("y"), aF("alpha", 0.5), aF("beta", 0.5)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(3), -2, 0, 4)}, []spec.Shape{{3}}, [][]string{{"0", "1/2", "1"}}},
		// [2,3] → shape (0, -1, 1): 0 copies 2, −1 is 3.
		{"Reshape 0 and -1", newMG(13).in("x", 2, 3).initI("s", dims(3), 0, -1, 1).op("Reshape", ins("x", "s"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 3, 1}}, [][]string{{"1", "2", "3", "4", "5", "6"}}},
		{"Flatten axis 0", newMG(13).in("x", 2, 3).op("Flatten", ins("x"), ins("y"), aI("axis", 0)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{1, 6}}, [][]string{{"1", "2", "3", "4", "5", "6"}}},
		{"Transpose default", newMG(13).in("x", 2, 3).op("Transpose", ins("x"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{3, 2}}, [][]string{{"1", "4", "2", "5", "3", "6"}}},
		{"Unsqueeze Squeeze opset 11", newMG(11).in("x", 2, 3).op("Unsqueeze", ins("x"), ins("u"), aIs("axes", 0, -1)).op("Squeeze", ins("u"), ins("y"), aIs("axes", 0)).out("u", "y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{1, 2, 3, 1}, {2, 3, 1}}, [][]string{{"1", "2", "3", "4", "5", "6"}, {"1", "2", "3", "4", "5", "6"}}},
		{"Squeeze opset 13 axes input", newMG(13).in("x", 1, 3, 1).initI("a", dims(1), 2).op("Squeeze", ins("x", "a"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 3, 1), 1, 2, 3)}, []spec.Shape{{1, 3}}, [][]string{{"1", "2", "3"}}},
		{"Concat axis -1", newMG(13).in("x", 2, 3).init("c", dims(2, 1), 7, 8).op("Concat", ins("x", "c"), ins("y"), aI("axis", -1)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 4}}, [][]string{{"1", "2", "3", "7", "4", "5", "6", "8"}}},
		{"Split opset 11 sizes, two outputs", newMG(11).in("x", 2, 3).op("Split", ins("x"), ins("a", "b"), aI("axis", 1), aIs("split", 1, 2)).out("a", "b").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 1}, {2, 2}}, [][]string{{"1", "4"}, {"2", "3", "5", "6"}}},
		{"Split opset 13 equal", newMG(13).in("x", 4).op("Split", ins("x"), ins("a", "b")).out("b", "a").model(), Options{},
			[]*Tensor{floatsTensor(dims(4), 1, 2, 3, 4)}, []spec.Shape{{2}, {2}}, [][]string{{"3", "4"}, {"1", "2"}}},
		// starts/ends clamped: axis 1 [1, 1000) → 1…2; axis 0 [-1, 10) → row 1.
		{"Slice opset 10 clamp", newMG(10).in("x", 2, 3).initI("s", dims(2), 1, -1).initI("e", dims(2), 1000, 10).initI("a", dims(2), 1, 0).
			op("Slice", ins("x", "s", "e", "a"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{1, 2}}, [][]string{{"5", "6"}}},
		{"Slice opset 9 attributes", newMG(9).in("x", 2, 3).op("Slice", ins("x"), ins("y"), aIs("starts", 0), aIs("ends", 2), aIs("axes", 1)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 2}}, [][]string{{"1", "2", "4", "5"}}},
		// [3,1] expanded with shape [2,1,2] → [2,3,2].
		{"Expand bidirectional", newMG(13).in("x", 3, 1).initI("s", dims(3), 2, 1, 2).op("Expand", ins("x", "s"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(3, 1), 1, 2, 3)}, []spec.Shape{{2, 3, 2}}, [][]string{{"1", "1", "2", "2", "3", "3", "1", "1", "2", "2", "3", "3"}}},
		{"Tile", newMG(13).in("x", 1, 2).initI("r", dims(2), 2, 2).op("Tile", ins("x", "r"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 2), 1, 2)}, []spec.Shape{{2, 4}}, [][]string{{"1", "2", "1", "2", "1", "2", "1", "2"}}},
		{"ConstantOfShape Constant", newMG(13).in("x", 2).
			op("Constant", nil, ins("s"), aT("value", itensor("", dims(1), 2))).
			op("ConstantOfShape", ins("s"), ins("c"), aT("value", ftensor("", dims(1), 0.25))).
			op("Constant", nil, ins("k"), aFs("value_floats", 1, 2)).
			op("Add", ins("x", "c"), ins("u")).op("Mul", ins("u", "k"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2), 1, 2)}, []spec.Shape{{2}}, [][]string{{"5/4", "9/2"}}},
		{"Identity Dropout opset 12", newMG(12).in("x", 2).init("r", dims(), 0.5).op("Identity", ins("x"), ins("a")).op("Dropout", ins("a", "r"), ins("y"), aI("seed", 3)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(2), 1, 2)}, []spec.Shape{{2}}, [][]string{{"1", "2"}}},
		{"ReduceSum opset 11 axes attr keepdims 0", newMG(11).in("x", 2, 3).op("ReduceSum", ins("x"), ins("y"), aIs("axes", 1), aI("keepdims", 0)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2}}, [][]string{{"6", "15"}}},
		{"ReduceSum opset 13 axes input keepdims", newMG(13).in("x", 2, 3).initI("a", dims(1), 0).op("ReduceSum", ins("x", "a"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{1, 3}}, [][]string{{"5", "7", "9"}}},
		{"ReduceMean all axes", newMG(13).in("x", 2, 3).op("ReduceMean", ins("x"), ins("y"), aI("keepdims", 0)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{}}, [][]string{{"7/2"}}},
		// [2,3]·[3] (1-D promotion) → [2]: (1,2,3)·(1,0,−1) = −2, (4,5,6)·… = −2.
		{"MatMul 1-D", newMG(13).in("x", 2, 3).init("v", dims(3), 1, 0, -1).op("MatMul", ins("x", "v"), ins("y")).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2}}, [][]string{{"-2", "-2"}}},
		// Y = 2·Aᵀ·B + ½·C, A [3,2] = x23 reshaped… here A = x [2,3] with transA: Aᵀ [3,2]; B = I₂; C = [1].
		{"Gemm general", newMG(13).in("x", 2, 3).init("b", dims(2, 2), 1, 0, 0, 1).init("c", dims(1), 1).
			op("Gemm", ins("x", "b", "c"), ins("y"), aI("transA", 1), aF("alpha", 2), aF("beta", 0.5)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{3, 2}}, [][]string{{"5/2", "17/2", "9/2", "21/2", "13/2", "25/2"}}},
		// linear: W [2,3] = rows (1,1,1), (0,1,0); b = (1/2, −1).
		{"Gemm linear", newMG(13).in("x", 2, 3).init("w", dims(2, 3), 1, 1, 1, 0, 1, 0).init("c", dims(2), 0.5, -1).
			op("Gemm", ins("x", "w", "c"), ins("y"), aI("transB", 1)).out("y").model(), Options{},
			[]*Tensor{x23}, []spec.Shape{{2, 2}}, [][]string{{"13/2", "1", "31/2", "4"}}},
		// 1-D conv, W = (1, −1), b = 1/2, pads 1/1, stride 2 on (1,2,3,4):
		// padded 0,1,2,3,4,0; windows at 0, 2, 4: 0−1, 2−3, 4−0, + 1/2.
		{"Conv 1-D pads stride", newMG(13).in("x", 1, 1, 4).init("w", dims(1, 1, 2), 1, -1).init("b", dims(1), 0.5).
			op("Conv", ins("x", "w", "b"), ins("y"), aIs("pads", 1, 1), aIs("strides", 2)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 1, 4), 1, 2, 3, 4)}, []spec.Shape{{1, 1, 3}}, [][]string{{"-1/2", "-1/2", "9/2"}}},
		// depthwise (group 2), kernel 1: channel 0 ×2, channel 1 ×(−1).
		{"Conv groups", newMG(13).in("x", 1, 2, 2).init("w", dims(2, 1, 1), 2, -1).
			op("Conv", ins("x", "w"), ins("y"), aI("group", 2)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 2, 2), 1, 2, 3, 4)}, []spec.Shape{{1, 2, 2}}, [][]string{{"2", "4", "-3", "-4"}}},
		// SAME_UPPER, kernel 3, stride 1 on 3 elements: pads 1/1; W = (1,1,1) sums neighbours.
		{"Conv auto_pad SAME_UPPER", newMG(13).in("x", 1, 1, 3).init("w", dims(1, 1, 3), 1, 1, 1).
			op("Conv", ins("x", "w"), ins("y"), aS("auto_pad", "SAME_UPPER")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 1, 3), 1, 2, 4)}, []spec.Shape{{1, 1, 3}}, [][]string{{"3", "7", "6"}}},
		// 2×2 windows of (1 2 3 4 / 5 6 7 8 / 9 10 11 12 / 13 14 15 16).
		{"MaxPool 2-D", newMG(13).in("x", 1, 1, 4, 4).op("MaxPool", ins("x"), ins("y"), aIs("kernel_shape", 2, 2), aIs("strides", 2, 2)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 1, 4, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)}, []spec.Shape{{1, 1, 2, 2}}, [][]string{{"6", "8", "14", "16"}}},
		// count_include_pad: (0+1)/2, (2+3)/2, (4+0)/2 on 1,2,3,4 with pads 1/1, kernel 2, stride 2.
		{"AveragePool count_include_pad", newMG(13).in("x", 1, 1, 4).op("AveragePool", ins("x"), ins("y"), aIs("kernel_shape", 2), aIs("strides", 2), aIs("pads", 1, 1), aI("count_include_pad", 1)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 1, 4), 1, 2, 3, 4)}, []spec.Shape{{1, 1, 3}}, [][]string{{"1/2", "5/2", "2"}}},
		{"GlobalAveragePool", newMG(13).in("x", 1, 2, 2, 2).op("GlobalAveragePool", ins("x"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 2, 2, 2), 1, 2, 3, 4, 5, 6, 7, 9)}, []spec.Shape{{1, 2, 1, 1}}, [][]string{{"5/2", "27/4"}}},
		// (x − μ)/√(σ²+ε)·γ + β with σ² = 3, ε = 1 (√4 = 2), μ = 1, γ = 2, β = 1: 5 → 5, −1 → −1; channel 2: σ²=0, ε=1, μ=0, γ=1, β=0.
		{"BatchNormalization", newMG(15).in("x", 1, 2, 2).init("g", dims(2), 2, 1).init("b", dims(2), 1, 0).init("m", dims(2), 1, 0).init("v", dims(2), 3, 0).
			op("BatchNormalization", ins("x", "g", "b", "m", "v"), ins("y"), aF("epsilon", 1)).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 2, 2), 5, -1, 3, -7)}, []spec.Shape{{1, 2, 2}}, [][]string{{"5", "-1", "3", "-7"}}},
		// Two inputs (packed), two outputs (packed): a+b and a·b.
		{"packing", newMG(13).in("a", 2).in("b", 2).op("Add", ins("a", "b"), ins("s")).op("Mul", ins("a", "b"), ins("p")).out("p", "s").model(), Options{},
			[]*Tensor{floatsTensor(dims(2), 1, 2), floatsTensor(dims(2), 3, 5)}, []spec.Shape{{2}, {2}}, [][]string{{"3", "10"}, {"4", "7"}}},
		// PyTorch's dynamic flatten: Shape → Gather → Unsqueeze → Concat → Reshape,
		// with Mul of two extents (3·2 = 6): [1,3,2] → [1, 6], folded at import.
		{"shape arithmetic folded", newMG(11).in("x", 1, 3, 2).initI("i0", dims(), 0).initI("i1", dims(), 1).initI("i2", dims(), 2).
			op("Shape", ins("x"), ins("s")).op("Gather", ins("s", "i0"), ins("n")).op("Gather", ins("s", "i1"), ins("h")).op("Gather", ins("s", "i2"), ins("w")).
			op("Mul", ins("h", "w"), ins("hw")).op("Unsqueeze", ins("n"), ins("un"), aIs("axes", 0)).op("Unsqueeze", ins("hw"), ins("uhw"), aIs("axes", 0)).
			op("Concat", ins("un", "uhw"), ins("shape"), aI("axis", 0)).op("Reshape", ins("x", "shape"), ins("y")).out("y").model(), Options{},
			[]*Tensor{floatsTensor(dims(1, 3, 2), 1, 2, 3, 4, 5, 6)}, []spec.Shape{{1, 6}}, [][]string{{"1", "2", "3", "4", "5", "6"}}},
		// Bound integer input as Reshape's shape.
		{"bound shape input", newMG(13).in("x", 2, 3).inT("s", Int64, 2).op("Reshape", ins("x", "s"), ins("y")).out("y").model(),
			Options{Bind: map[string]*Tensor{"s": itensor("s", dims(2), 3, 2)}},
			[]*Tensor{x23}, []spec.Shape{{3, 2}}, [][]string{{"1", "2", "3", "4", "5", "6"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			im, outs := evalRat(t, tc.m, tc.o, tc.in...)
			if len(outs) != len(tc.want) {
				t.Fatalf("%d outputs, want %d", len(outs), len(tc.want))
			}
			for i := range outs {
				if !outs[i].Shape.Equal(tc.shapes[i]) {
					t.Errorf("output %d: shape %v, want %v", i, outs[i].Shape, tc.shapes[i])
				}
				if w := rats(t, tc.want[i]...); !sameRats(outs[i].Data, w) {
					t.Errorf("output %d: %s, want %s", i, ratStrings(outs[i].Data), ratStrings(w))
				}
			}
			if len(im.Origin) != len(im.Graph.Nodes) {
				t.Errorf("%d origins for %d nodes", len(im.Origin), len(im.Graph.Nodes))
			}
		})
	}
}

// TestImportFloatOps: ops without exact rational semantics, over float64
// against math's functions.
func TestImportFloatOps(t *testing.T) {
	sm := func(xs ...float64) []float64 {
		m := math.Inf(-1)
		for _, x := range xs {
			m = math.Max(m, x)
		}
		s := 0.0
		for _, x := range xs {
			s += math.Exp(x - m)
		}
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Exp(x-m) / s
		}
		return out
	}
	cat := func(xss ...[]float64) []float64 {
		var out []float64
		for _, x := range xss {
			out = append(out, x...)
		}
		return out
	}
	logs := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = math.Log(x)
		}
		return out
	}
	x222 := floatsTensor(dims(2, 2, 2), 0, 1, 2, 3, 4, 5, 6, 8)
	// opset 11, axis 1 coerces [2,2,2] to [2,4]: each batch row of 4 is one softmax.
	soft11 := cat(sm(0, 1, 2, 3), sm(4, 5, 6, 8))
	// opset 13, axis 1 is one axis: pairs (x[n,0,k], x[n,1,k]).
	p := [][]float64{sm(0, 2), sm(1, 3), sm(4, 6), sm(5, 8)}
	soft13 := []float64{p[0][0], p[1][0], p[0][1], p[1][1], p[2][0], p[3][0], p[2][1], p[3][1]}
	selu := func(x float64) float64 {
		a, g := float64(float32(1.67326319217681884765625)), float64(float32(1.05070102214813232421875))
		if x > 0 {
			return g * x
		}
		return g * a * (math.Exp(x) - 1)
	}
	cases := []struct {
		name string
		m    *Model
		in   *Tensor
		want []float64
	}{
		{"Softmax opset 11 coerced", newMG(11).in("x", 2, 2, 2).op("Softmax", ins("x"), ins("y"), aI("axis", 1)).out("y").model(), x222, soft11},
		{"Softmax opset 13 one axis", newMG(13).in("x", 2, 2, 2).op("Softmax", ins("x"), ins("y"), aI("axis", 1)).out("y").model(), x222, soft13},
		{"LogSoftmax opset 13 default axis", newMG(13).in("x", 1, 3).op("LogSoftmax", ins("x"), ins("y")).out("y").model(), floatsTensor(dims(1, 3), 1, 2, 4), logs(sm(1, 2, 4))},
		{"Softmin", newMG(13).in("x", 1, 3).op("Softmin", ins("x"), ins("y")).out("y").model(), floatsTensor(dims(1, 3), 1, 2, 4), sm(-1, -2, -4)},
		{"Elu", newMG(13).in("x", 2).op("Elu", ins("x"), ins("y"), aF("alpha", 0.5)).out("y").model(), floatsTensor(dims(2), -1, 2), []float64{0.5 * (math.Exp(-1) - 1), 2}},
		{"Selu defaults", newMG(13).in("x", 2).op("Selu", ins("x"), ins("y")).out("y").model(), floatsTensor(dims(2), -1, 2), []float64{selu(-1), selu(2)}},
		// GLU as PyTorch exports it: Split in halves, Sigmoid of the second, Mul.
		{"GLU", newMG(6).in("x", 1, 4).op("Split", ins("x"), ins("a", "b"), aI("axis", 1)).op("Sigmoid", ins("b"), ins("s")).op("Mul", ins("a", "s"), ins("y")).out("y").model(),
			floatsTensor(dims(1, 4), 1, 2, -1, 0.5), []float64{1 / (1 + math.Exp(1)), 2 / (1 + math.Exp(-0.5))}},
		{"Pow 1.5", newMG(13).in("x", 2).init("p", dims(), 1.5).op("Pow", ins("x", "p"), ins("y")).out("y").model(), floatsTensor(dims(2), 4, 9), []float64{8, 27}},
		{"Sigmoid Tanh Exp Log Softplus", newMG(13).in("x", 1).op("Sigmoid", ins("x"), ins("a")).op("Tanh", ins("a"), ins("b")).op("Exp", ins("b"), ins("c")).
			op("Log", ins("c"), ins("d")).op("Softplus", ins("d"), ins("y")).out("y").model(), floatsTensor(dims(1), 0.5),
			[]float64{math.Log1p(math.Exp(math.Tanh(1 / (1 + math.Exp(-0.5)))))}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalF64(t, tc.m, Options{}, tc.in)
			got := outs[0].Data
			if len(got) != len(tc.want) {
				t.Fatalf("%d values, want %d", len(got), len(tc.want))
			}
			for i := range got {
				if math.Abs(float64(got[i])-tc.want[i]) > 1e-12 {
					t.Errorf("element %d: %v, want %v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
