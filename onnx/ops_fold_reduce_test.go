package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// kNinf is a Constant node's float32 value tensor with −∞ at the indices neg.
func kNinf(dims []int64, vs []float32, neg ...int) *Attribute {
	cp := append([]float32(nil), vs...)
	for _, i := range neg {
		cp[i] = float32(math.Inf(-1))
	}
	return aT("value", ftensor("", dims, cp...))
}

// TestFoldConstantMaskRows: the row guard of the Attention decompositions
// (ReduceMax of a constant mask, Equal with −∞, Where) folds at import, and
// so does the Add of a zero bias and a −∞ mask. Each expectation is worked
// out by hand in the comment beside it; a fold that took the minimum, lost
// a −∞, or kept a row's −∞ maximum finite gives other numbers.
func TestFoldConstantMaskRows(t *testing.T) {
	// mask rows: [2 −∞ −1] (max 2, min −∞), [−∞ −∞ −∞] (max −∞), bias 0.
	mask := kNinf(dims(2, 3), []float32{2, 0, -1, 0, 0, 0}, 1, 3, 4, 5)
	ninf := kNinf(dims(1), []float32{0}, 0)
	guard := func(op string, keep int64) *mg {
		return newMG(18).in("x", 2).initI("shape", dims(2), 2, 3).initI("ax", dims(1), -1).
			op("Constant", nil, ins("m"), mask).op("Constant", nil, ins("ninf"), ninf).
			op("Constant", nil, ins("seven"), aT("value", ftensor("", dims(1), 7))).
			op("ConstantOfShape", ins("shape"), ins("z")).
			op("Add", ins("z", "m"), ins("bias")).
			op(op, ins("bias", "ax"), ins("rm"), aI("keepdims", keep)).
			op("Equal", ins("rm", "ninf"), ins("all")).
			op("Where", ins("all", "seven", "rm"), ins("g"))
	}
	cases := []struct {
		name string
		m    *Model
		want []string
	}{
		// rm = [2 −∞]; all = [F T]; g = [2 7]; x + g = [1+2 10+7].
		{"ReduceMax row guard", guard("ReduceMax", 0).op("Add", ins("x", "g"), ins("y")).out("y").model(), []string{"3", "17"}},
		// keepdims: rm is [2,1]; g = [[2] [7]]; reshaped to [2]: the same.
		{"ReduceMax keepdims", guard("ReduceMax", 1).initI("two", dims(1), 2).op("Reshape", ins("g", "two"), ins("g2")).
			op("Add", ins("x", "g2"), ins("y")).out("y").model(), []string{"3", "17"}},
		// ReduceMin rows: [−∞ −∞]: all = [T T]; g = [7 7].
		{"ReduceMin row guard", guard("ReduceMin", 0).op("Add", ins("x", "g"), ins("y")).out("y").model(), []string{"8", "17"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			im, outs := evalRat(t, tc.m, Options{}, floatsTensor(dims(2), 1, 10))
			if got := ratStrings(outs[0].Data); got != "["+strings.Join(tc.want, " ")+"]" {
				t.Fatalf("got %s, want %s", got, strings.Join(tc.want, " "))
			}
			if n := countOp(im, irsem.OpMaxPoolND); n != 0 {
				t.Errorf("the reduction of a constant was not folded (%d max_pool_nd nodes)", n)
			}
		})
	}
}

// TestFoldConstantReduceShapes: ReduceMax and ReduceMin of a finite or
// integer constant over several axes, keepdims and not, by hand.
func TestFoldConstantReduceShapes(t *testing.T) {
	// c = [[[1 −4] [3 0]] [[−2 5] [6 −7]]] of shape [2,2,2].
	c := aT("value", ftensor("", dims(2, 2, 2), 1, -4, 3, 0, -2, 5, 6, -7))
	cases := []struct {
		name  string
		op    string
		axes  []int64
		keep  int64
		shape spec.Shape
		want  string
	}{
		// max over axes 0 and 2: j = 0: {1 −4 −2 5} → 5; j = 1: {3 0 6 −7} → 6.
		{"max axes 0 2", "ReduceMax", []int64{0, 2}, 0, spec.Shape{2}, "5 6"},
		{"max axes 0 2 keepdims", "ReduceMax", []int64{2, 0}, 1, spec.Shape{1, 2, 1}, "5 6"},
		// min over axis 1: i = 0: (min(1,3), min(−4,0)) = (1, −4); i = 1: (−2, −7).
		{"min axis 1", "ReduceMin", []int64{1}, 0, spec.Shape{2, 2}, "1 -4 -2 -7"},
		// min over every axis: −7.
		{"min all", "ReduceMin", nil, 0, spec.Shape{}, "-7"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			attrs := []*Attribute{aI("keepdims", tc.keep)}
			if tc.axes != nil {
				attrs = append(attrs, aIs("axes", tc.axes...))
			}
			dd := make([]int64, len(tc.shape))
			for i, d := range tc.shape {
				dd[i] = int64(d)
			}
			m := newMG(13).in("x", dd...).op("Constant", nil, ins("c"), c).op(tc.op, ins("c"), ins("r"), attrs...).
				op("Add", ins("x", "r"), ins("y")).out("y").model()
			x := make([]float32, tc.shape.Size())
			im, outs := evalRat(t, m, Options{}, floatsTensor(dd, x...))
			if got := ratStrings(outs[0].Data); got != "["+tc.want+"]" {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
			if n := countOp(im, irsem.OpMaxPoolND); n != 0 {
				t.Errorf("%d max_pool_nd nodes: the constant was not folded", n)
			}
		})
	}
}

// TestFoldMaskedAddOnlyWhenExact: a masked Add of two constants folds only
// when every finite sum is a float32; 1 + 2⁻³⁰ is not, so that Add stays an
// IR node whose rounding the bound charges (folding it would make the
// reference the exact sum, which no float32 runtime computes). An
// initializer operand is never folded either.
func TestFoldMaskedAddOnlyWhenExact(t *testing.T) {
	tiny := float32(math.Ldexp(1, -30))
	mk := func(b *mg) *Model {
		return b.op("Add", ins("a", "m"), ins("s")).op("Add", ins("x", "s"), ins("t")).op("Softmax", ins("t"), ins("y")).out("y").model()
	}
	mask := kNinf(dims(2), []float32{0, 0}, 1)
	cases := []struct {
		name    string
		m       *Model
		wantAdd int // add nodes in the IR
	}{
		{"exact sum folds", mk(newMG(13).in("x", 2).op("Constant", nil, ins("a"), aT("value", ftensor("", dims(2), 1, 3))).op("Constant", nil, ins("m"), mask)), 1},
		{"rounded sum stays", mk(newMG(13).in("x", 2).op("Constant", nil, ins("a"), aT("value", ftensor("", dims(2), 1, 3))).
			op("Constant", nil, ins("m"), kNinf(dims(2), []float32{tiny, 0}, 1))), 2},
		{"initializer stays", mk(newMG(13).in("x", 2).init("a", dims(2), 1, 3).op("Constant", nil, ins("m"), mask)), 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			im, err := Import(tc.m, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if n := countOp(im, irsem.OpAdd); n != tc.wantAdd {
				t.Fatalf("%d add nodes, want %d", n, tc.wantAdd)
			}
		})
	}
}
