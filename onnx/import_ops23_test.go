package onnx

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// ninfInit adds a float initializer in which the entries flagged by neg
// are −∞.
func (m *mg) ninfInit(name string, dims []int64, vs []float32, neg ...int) *mg {
	cp := append([]float32(nil), vs...)
	for _, i := range neg {
		cp[i] = float32(math.Inf(-1))
	}
	return m.init(name, dims, cp...)
}

// TestImportOps23Exact: the folded mask and position ops, the normalisations,
// the new reductions and RotaryEmbedding, evaluated exactly over Rat; each
// expectation is worked out by hand from the operator specification in the
// comment beside it.
func TestImportOps23Exact(t *testing.T) {
	x4 := floatsTensor(dims(4), 1, 2, 3, 4)
	x23 := floatsTensor(dims(2, 3), 1, -5, 3, 4, 2, -6)
	cases := []struct {
		name   string
		m      *Model
		in     []*Tensor
		shapes []spec.Shape
		want   [][]string
	}{
		// Range(0, 4, 1) = [0 1 2 3]; Less(·, 2) = [T T F F]; Where picks x, x, y, y.
		{"Range Less Where", newMG(13).in("x", 4).in("y", 4).initI("a", dims(), 0).initI("b", dims(), 4).initI("d", dims(), 1).initI("two", dims(), 2).
			op("Range", ins("a", "b", "d"), ins("r")).op("Less", ins("r", "two"), ins("c")).op("Where", ins("c", "x", "y"), ins("z")).out("z").model(),
			[]*Tensor{x4, floatsTensor(dims(4), 10, 20, 30, 40)}, []spec.Shape{{4}}, [][]string{{"1", "2", "30", "40"}}},
		// Equal([0 1 2 3], 2) = [F F T F]; Not = [T T F T]; And with Greater(r, 0) = [F T T T] → [F T F T];
		// Or(eq, and) = [F T T T]; Xor(or, not) = [T F T F]; cast to float and added to x.
		{"Equal Not And Or Xor Greater Cast", newMG(13).in("x", 4).initI("a", dims(), 0).initI("b", dims(), 4).initI("d", dims(), 1).initI("two", dims(), 2).initI("z", dims(), 0).
			op("Range", ins("a", "b", "d"), ins("r")).op("Equal", ins("r", "two"), ins("eq")).op("Not", ins("eq"), ins("ne")).
			op("Greater", ins("r", "z"), ins("gt")).op("And", ins("ne", "gt"), ins("an")).op("Or", ins("eq", "an"), ins("or")).
			op("Xor", ins("or", "ne"), ins("xo")).op("Cast", ins("xo"), ins("f"), aI("to", int64(Float))).op("Add", ins("x", "f"), ins("y")).out("y").model(),
			[]*Tensor{x4}, []spec.Shape{{4}}, [][]string{{"2", "2", "4", "4"}}},
		// Integer Div truncates: 7/−2 = −3, −7/3 = −2; Mod fmod=0: −7 mod 3 = 2 (divisor's sign); fmod=1: −7 fmod 3 = −1.
		{"Div Mod of integers", newMG(13).in("x", 3).initI("p", dims(3), 7, -7, -7).initI("q", dims(3), -2, 3, 3).
			op("Div", ins("p", "q"), ins("dv")).op("Mod", ins("p", "q"), ins("m0")).op("Mod", ins("p", "q"), ins("m1"), aI("fmod", 1)).
			op("Cast", ins("dv"), ins("a"), aI("to", int64(Float))).op("Cast", ins("m0"), ins("b"), aI("to", int64(Float))).op("Cast", ins("m1"), ins("c"), aI("to", int64(Float))).
			op("Add", ins("x", "a"), ins("y0")).op("Add", ins("x", "b"), ins("y1")).op("Add", ins("x", "c"), ins("y2")).out("y0", "y1", "y2").model(),
			[]*Tensor{floatsTensor(dims(3), 0, 0, 0)}, []spec.Shape{{3}, {3}, {3}}, [][]string{{"-3", "-2", "-2"}, {"-1", "2", "2"}, {"1", "-1", "-1"}}},
		// Trilu of a computed [2,3]: upper (k=0) keeps j ≥ i; lower with k = −1 keeps j ≤ i − 1.
		{"Trilu computed", newMG(14).in("x", 2, 3).initI("k", dims(), -1).op("Trilu", ins("x"), ins("u")).op("Trilu", ins("x", "k"), ins("l"), aI("upper", 0)).out("u", "l").model(),
			[]*Tensor{x23}, []spec.Shape{{2, 3}, {2, 3}}, [][]string{{"1", "-5", "3", "0", "2", "-6"}, {"0", "0", "0", "4", "0", "0"}}},
		// CumSum of [1 2 3]: [1 3 6]; exclusive [0 1 3]; reverse [6 5 3]; both [5 3 0].
		{"CumSum", newMG(14).in("x", 3).initI("ax", dims(), 0).op("CumSum", ins("x", "ax"), ins("a")).op("CumSum", ins("x", "ax"), ins("b"), aI("exclusive", 1)).
			op("CumSum", ins("x", "ax"), ins("c"), aI("reverse", 1)).op("CumSum", ins("x", "ax"), ins("d"), aI("reverse", 1), aI("exclusive", 1)).out("a", "b", "c", "d").model(),
			[]*Tensor{floatsTensor(dims(3), 1, 2, 3)}, []spec.Shape{{3}, {3}, {3}, {3}}, [][]string{{"1", "3", "6"}, {"0", "1", "3"}, {"6", "5", "3"}, {"5", "3", "0"}}},
		// CumSum along axis 0 of [[1 −5 3] [4 2 −6]]: [[1 −5 3] [5 −3 −3]].
		{"CumSum axis 0 of 2-D", newMG(14).in("x", 2, 3).initI("ax", dims(1), 0).op("CumSum", ins("x", "ax"), ins("y")).out("y").model(),
			[]*Tensor{x23}, []spec.Shape{{2, 3}}, [][]string{{"1", "-5", "3", "5", "-3", "-3"}}},
		// Rows [2 10] and [1 3]: means 6 and 2, d = ±4 and ±1, σ² = 16 and 1, normalised ±1; ·[2 3] + [10 20] = [8 23].
		{"LayerNormalization eps 0", newMG(17).in("x", 2, 2).init("s", dims(2), 2, 3).init("b", dims(2), 10, 20).
			op("LayerNormalization", ins("x", "s", "b"), ins("y"), aF("epsilon", 0)).out("y").model(),
			[]*Tensor{floatsTensor(dims(2, 2), 2, 10, 1, 3)}, []spec.Shape{{2, 2}}, [][]string{{"8", "23", "8", "23"}}},
		// Mean and InvStdDev of rows [2 10], [1 3]: means [6 2], 1/σ = [1/4 1].
		{"LayerNormalization Mean InvStdDev", newMG(17).in("x", 2, 2).init("s", dims(2), 1, 1).
			op("LayerNormalization", ins("x", "s"), ins("y", "mu", "r"), aF("epsilon", 0)).out("mu", "r").model(),
			[]*Tensor{floatsTensor(dims(2, 2), 2, 10, 1, 3)}, []spec.Shape{{2, 1}, {2, 1}}, [][]string{{"6", "2"}, {"1/4", "1"}}},
		// CastLike of a computed float32 to its own type: the same values.
		{"CastLike to its own type", newMG(15).in("x", 2).op("CastLike", ins("x", "x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 1.5, -2)}, []spec.Shape{{2}}, [][]string{{"3/2", "-2"}}},
		// Clip with computed bounds lo = 0, hi = 2 (graph inputs): [−1 1 3] → [0 1 2].
		{"Clip computed bounds", newMG(13).in("x", 3).in("lo").in("hi").op("Clip", ins("x", "lo", "hi"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(3), -1, 1, 3), floatsTensor(dims(), 0), floatsTensor(dims(), 2)}, []spec.Shape{{3}}, [][]string{{"0", "1", "2"}}},
		// Einsum "ij,jk->ik" of [[1 −5 3] [4 2 −6]] and [[1 0] [0 1] [1 1]]: rows (1+3, −5+3) = (4, −2) and (4−6, 2−6) = (−2, −4).
		{"Einsum matmul", newMG(12).in("x", 2, 3).init("w", dims(3, 2), 1, 0, 0, 1, 1, 1).op("Einsum", ins("x", "w"), ins("y"), aS("equation", "ij,jk->ik")).out("y").model(),
			[]*Tensor{x23}, []spec.Shape{{2, 2}}, [][]string{{"4", "-2", "-2", "-4"}}},
		// "ij->ji" transposes; implicit "ij" keeps [2,3]; "ij->" sums to 1−5+3+4+2−6 = −1; "i,i" inner product of [1 2 3 4] with itself = 30.
		{"Einsum transpose sum implicit", newMG(12).in("x", 2, 3).in("v", 4).op("Einsum", ins("x"), ins("t"), aS("equation", "ij->ji")).
			op("Einsum", ins("x"), ins("s"), aS("equation", "ij->")).op("Einsum", ins("v", "v"), ins("d"), aS("equation", "i,i")).out("t", "s", "d").model(),
			[]*Tensor{x23, x4}, []spec.Shape{{3, 2}, {}, {}}, [][]string{{"1", "4", "-5", "2", "3", "-6"}, {"-1"}, {"30"}}},
		// Batched "...ij,...jk" (implicit output ...ik) of [2,1,2] rows [1 2], [3 4] with [2,2,1] columns [1 1]ᵀ, [2 0]ᵀ: [3], [6].
		{"Einsum ellipsis batch", newMG(12).in("a", 2, 1, 2).in("b", 2, 2, 1).op("Einsum", ins("a", "b"), ins("y"), aS("equation", "...ij,...jk")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2, 1, 2), 1, 2, 3, 4), floatsTensor(dims(2, 2, 1), 1, 1, 2, 0)}, []spec.Shape{{2, 1, 1}}, [][]string{{"3", "6"}}},
		// Three operands "i,ij,j->": Σ u_i x_ij v_j with u = [1 1], v = [1 0 1]: (1+3) + (4−6) = 2.
		{"Einsum three operands", newMG(12).in("u", 2).in("x", 2, 3).in("v", 3).op("Einsum", ins("u", "x", "v"), ins("y"), aS("equation", "i,ij,j->")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 1, 1), x23, floatsTensor(dims(3), 1, 0, 1)}, []spec.Shape{{}}, [][]string{{"2"}}},
		// Resize ×2 of [1 5] (half_pixel): x(o) = (o + ½)/2 − ½ = −¼, ¼, ¾, 5/4. nearest (round_prefer_floor,
		// clamped): indices 0 0 1 1 → [1 1 5 5]; linear: 1, ¾·1 + ¼·5 = 2, ¼·1 + ¾·5 = 4, 5.
		{"Resize nearest and linear", newMG(13).in("x", 1, 1, 2).init("sc", dims(3), 1, 1, 2).
			op("Resize", ins("x", "", "sc"), ins("a")).op("Resize", ins("x", "", "sc"), ins("b"), aS("mode", "linear")).out("a", "b").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 2), 1, 5)}, []spec.Shape{{1, 1, 4}, {1, 1, 4}}, [][]string{{"1", "1", "5", "5"}, {"1", "2", "4", "5"}}},
		// sizes [1 1 4], align_corners linear: x(o) = o/3 → 1, 1 + 4/3, 1 + 8/3, 5.
		{"Resize sizes align_corners", newMG(13).in("x", 1, 1, 2).initI("sz", dims(3), 1, 1, 4).
			op("Resize", ins("x", "", "", "sz"), ins("y"), aS("mode", "linear"), aS("coordinate_transformation_mode", "align_corners")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 2), 1, 5)}, []spec.Shape{{1, 1, 4}}, [][]string{{"1", "7/3", "11/3", "5"}}},
		// Neg and Abs of integer constants fold: −(−3) = 3, |−2| = 2; cast and added to x = 0.
		{"Neg Abs of integers", newMG(13).in("x", 2).initI("k", dims(2), -3, -2).op("Neg", ins("k"), ins("n")).op("Abs", ins("n"), ins("a")).
			op("Cast", ins("a"), ins("f"), aI("to", int64(Float))).op("Add", ins("x", "f"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 0, 0)}, []spec.Shape{{2}}, [][]string{{"3", "2"}}},
		// opset 28: Mod fmod 0 of floats is a − floor(a/b)·b: −5.5 mod 2 = 0.5, 5.5 mod −2 = −0.5.
		{"Mod fmod 0 of floats at opset 28", newMG(28).in("x", 2).init("a", dims(2), -5.5, 5.5).init("b", dims(2), 2, -2).op("Mod", ins("a", "b"), ins("m")).op("Add", ins("x", "m"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 0, 0)}, []spec.Shape{{2}}, [][]string{{"1/2", "-1/2"}}},
		// ScatterND on [1 2 3 4]: none writes 10 at 1 and 20 at 3 → [1 10 3 20]; add with index 1 twice
		// → 2 + 10 + 20 = 32; mul at 0 by 5 → 5; max at 2 with 5 → max(3, 5) = 5.
		{"ScatterND reductions", newMG(18).in("x", 4).in("u", 2).in("v", 1).initI("i13", dims(2, 1), 1, 3).initI("i11", dims(2, 1), 1, 1).initI("i0", dims(1, 1), 0).initI("i2", dims(1, 1), 2).
			op("ScatterND", ins("x", "i13", "u"), ins("a")).op("ScatterND", ins("x", "i11", "u"), ins("b"), aS("reduction", "add")).
			op("ScatterND", ins("x", "i0", "v"), ins("c"), aS("reduction", "mul")).op("ScatterND", ins("x", "i2", "v"), ins("d"), aS("reduction", "max")).out("a", "b", "c", "d").model(),
			[]*Tensor{x4, floatsTensor(dims(2), 10, 20), floatsTensor(dims(1), 5)}, []spec.Shape{{4}, {4}, {4}, {4}},
			[][]string{{"1", "10", "3", "20"}, {"1", "32", "3", "4"}, {"5", "2", "3", "4"}, {"1", "2", "5", "4"}}},
		// axis 0 over [2,2] = all four: [1 3 1 3] → mean 2, σ² 1 → [−1 1 −1 1]; no bias, scale [[1 2] [3 4]].
		{"LayerNormalization axis 0 no bias", newMG(17).in("x", 2, 2).init("s", dims(2, 2), 1, 2, 3, 4).
			op("LayerNormalization", ins("x", "s"), ins("y"), aF("epsilon", 0), aI("axis", 0)).out("y").model(),
			[]*Tensor{floatsTensor(dims(2, 2), 1, 3, 1, 3)}, []spec.Shape{{2, 2}}, [][]string{{"-1", "2", "-3", "4"}}},
		// [2 −2]: mean(x²) = 4, rms 2 → [1 −1] · [3 5] = [3 −5].
		{"RMSNormalization", newMG(23).in("x", 1, 2).init("s", dims(2), 3, 5).op("RMSNormalization", ins("x", "s"), ins("y"), aF("epsilon", 0)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 2), 2, -2)}, []spec.Shape{{1, 2}}, [][]string{{"3", "-5"}}},
		// Groups {ch0, ch1} = [1 3 1 3] (mean 2, σ² 1) and {ch2, ch3} = [0 4 0 4] (mean 2, σ² 4): all ±1;
		// opset 21 scale/bias per channel [1 2 3 4] / [0 0 0 10].
		{"GroupNormalization opset 21", newMG(21).in("x", 1, 4, 2).init("s", dims(4), 1, 2, 3, 4).init("b", dims(4), 0, 0, 0, 10).
			op("GroupNormalization", ins("x", "s", "b"), ins("y"), aI("num_groups", 2), aF("epsilon", 0)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 4, 2), 1, 3, 1, 3, 0, 4, 0, 4)}, []spec.Shape{{1, 4, 2}}, [][]string{{"-1", "1", "-2", "2", "-3", "3", "6", "14"}}},
		// opset 18: scale/bias per group [1 2] / [0 10]: group 1's channels ·2 + 10.
		{"GroupNormalization opset 18", newMG(18).in("x", 1, 4, 2).init("s", dims(2), 1, 2).init("b", dims(2), 0, 10).
			op("GroupNormalization", ins("x", "s", "b"), ins("y"), aI("num_groups", 2), aF("epsilon", 0)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 4, 2), 1, 3, 1, 3, 0, 4, 0, 4)}, []spec.Shape{{1, 4, 2}}, [][]string{{"-1", "1", "-1", "1", "8", "12", "8", "12"}}},
		// x·clamp(x/6 + 1/2, 0, 1): −4 → 0, −3 → 0, 0 → 0, 3/2 → 3/2·3/4 = 9/8, 3 → 3, 5 → 5.
		{"HardSwish", newMG(14).in("x", 6).op("HardSwish", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(6), -4, -3, 0, 1.5, 3, 5)}, []spec.Shape{{6}}, [][]string{{"0", "0", "0", "9/8", "3", "5"}}},
		// [[1 −5 3] [4 2 −6]]: row maxima [3 4]; column minima [[1 −5 −6]]; product of all 1·−5·3·4·2·−6 = 720.
		{"ReduceMax Min Prod opset 13", newMG(13).in("x", 2, 3).op("ReduceMax", ins("x"), ins("a"), aIs("axes", 1), aI("keepdims", 0)).
			op("ReduceMin", ins("x"), ins("b"), aIs("axes", 0)).op("ReduceProd", ins("x"), ins("c"), aI("keepdims", 0)).out("a", "b", "c").model(),
			[]*Tensor{x23}, []spec.Shape{{2}, {1, 3}, {}}, [][]string{{"3", "4"}, {"1", "-5", "-6"}, {"720"}}},
		// opset 18 axes as input: L1 rows [9 12], SumSquare rows [35 56]; L2 of [3 4] (row 0 of the second input) is 5.
		{"ReduceL1 SumSquare L2 opset 18", newMG(18).in("x", 2, 3).in("v", 2, 2).initI("ax", dims(1), 1).
			op("ReduceL1", ins("x", "ax"), ins("a"), aI("keepdims", 0)).op("ReduceSumSquare", ins("x", "ax"), ins("b"), aI("keepdims", 0)).
			op("ReduceL2", ins("v", "ax"), ins("c")).out("a", "b", "c").model(),
			[]*Tensor{x23, floatsTensor(dims(2, 2), 3, 4, 0, -2)}, []spec.Shape{{2}, {2}, {2, 1}}, [][]string{{"9", "12"}, {"35", "56"}, {"5", "2"}}},
		// noop_with_empty_axes: ReduceSumSquare acts as a square.
		{"ReduceSumSquare noop", newMG(18).in("x", 2).op("ReduceSumSquare", ins("x"), ins("y"), aI("noop_with_empty_axes", 1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), -3, 2)}, []spec.Shape{{2}}, [][]string{{"9", "4"}}},
		// Channel maxima of [1,2,2,2]: [1 5 2 3] → 5, [−1 −2 −3 −4] → −1.
		{"GlobalMaxPool", newMG(13).in("x", 1, 2, 2, 2).op("GlobalMaxPool", ins("x"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 2, 2, 2), 1, 5, 2, 3, -1, -2, -3, -4)}, []spec.Shape{{1, 2, 1, 1}}, [][]string{{"5", "-1"}}},
		// x = [1 2 3 4], cos = [0 1], sin = [1 0] at position 0: halves x₁ = [1 2], x₂ = [3 4];
		// real = cos⊙x₁ − sin⊙x₂ = [−3 2], imag = sin⊙x₁ + cos⊙x₂ = [1 4].
		{"RotaryEmbedding halves", newMG(23).in("x", 1, 1, 1, 4).init("cos", dims(1, 2), 0, 1).init("sin", dims(1, 2), 1, 0).initI("pos", dims(1, 1), 0).
			op("RotaryEmbedding", ins("x", "cos", "sin", "pos"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 1, 4), 1, 2, 3, 4)}, []spec.Shape{{1, 1, 1, 4}}, [][]string{{"-3", "2", "1", "4"}}},
		// interleaved: x₁ = [1 3], x₂ = [2 4]; real = [−2 3], imag = [1 4], written back as [r₀ i₀ r₁ i₁].
		{"RotaryEmbedding interleaved", newMG(23).in("x", 1, 1, 1, 4).init("cos", dims(1, 2), 0, 1).init("sin", dims(1, 2), 1, 0).initI("pos", dims(1, 1), 0).
			op("RotaryEmbedding", ins("x", "cos", "sin", "pos"), ins("y"), aI("interleaved", 1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 1, 4), 1, 2, 3, 4)}, []spec.Shape{{1, 1, 1, 4}}, [][]string{{"-2", "1", "3", "4"}}},
		// 3-D [B, S, H·D] with 2 heads of 4, rotary_embedding_dim 2 (halves of 1): head 0 [1 2 | 3 4] →
		// real = c·1 − s·2, imag = s·1 + c·2 with c = 0, s = 1 → [−2 1 3 4]; head 1 [5 6 7 8] → [−6 5 7 8].
		{"RotaryEmbedding 3-D partial", newMG(23).in("x", 1, 1, 8).init("cos", dims(1, 1, 1), 0).init("sin", dims(1, 1, 1), 1).
			op("RotaryEmbedding", ins("x", "cos", "sin"), ins("y"), aI("num_heads", 2), aI("rotary_embedding_dim", 2)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 8), 1, 2, 3, 4, 5, 6, 7, 8)}, []spec.Shape{{1, 1, 8}}, [][]string{{"-2", "1", "3", "4", "-6", "5", "7", "8"}}},
		// Floor/Ceil/Round of a constant [−1.5 −0.5 0.5 2.5]: floor [−2 −1 0 2], ceil [−1 −0 1 3], round (half to even) [−2 −0 0 2].
		{"Floor Ceil Round of constants", newMG(13).in("x", 4).init("c", dims(4), -1.5, -0.5, 0.5, 2.5).
			op("Floor", ins("c"), ins("f")).op("Ceil", ins("c"), ins("g")).op("Round", ins("c"), ins("h")).
			op("Add", ins("x", "f"), ins("a")).op("Add", ins("x", "g"), ins("b")).op("Add", ins("x", "h"), ins("d")).out("a", "b", "d").model(),
			[]*Tensor{floatsTensor(dims(4), 0, 0, 0, 0)}, []spec.Shape{{4}, {4}, {4}}, [][]string{{"-2", "-1", "0", "2"}, {"-1", "0", "1", "3"}, {"-2", "0", "0", "2"}}},
		// ArgMax along axis 1 of the constant [[1 7 7] [9 2 3]]: [1 0] (first of the tied 7s), select_last_index: [2 0].
		{"ArgMax of a constant", newMG(13).in("x", 2).init("c", dims(2, 3), 1, 7, 7, 9, 2, 3).
			op("ArgMax", ins("c"), ins("i"), aI("axis", 1), aI("keepdims", 0)).op("ArgMax", ins("c"), ins("j"), aI("axis", 1), aI("keepdims", 0), aI("select_last_index", 1)).
			op("Cast", ins("i"), ins("fi"), aI("to", int64(Float))).op("Cast", ins("j"), ins("fj"), aI("to", int64(Float))).
			op("Add", ins("x", "fi"), ins("a")).op("Add", ins("x", "fj"), ins("b")).out("a", "b").model(),
			[]*Tensor{floatsTensor(dims(2), 0, 0)}, []spec.Shape{{2}, {2}}, [][]string{{"1", "0"}, {"2", "0"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalRat(t, tc.m, Options{}, tc.in...)
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
		})
	}
}

// TestImportOps23Float: the ops without exact rational values (softmax,
// square roots of non-squares), over float64 against values computed here
// from the operator formulas with package math.
func TestImportOps23Float(t *testing.T) {
	third, half := 1.0/3, 0.5
	inf := float32(math.Inf(-1))
	// Attention with Q = [1 0 0 0], K rows [1 0 0 0] and 0: scores [1/√4, 0] = [1/2, 0];
	// p₀ = e^½/(e^½ + 1); y = p₀·2 + (1 − p₀)·6.
	p0 := math.Exp(0.5) / (math.Exp(0.5) + 1)
	// LayerNormalization with ε = 1/2 of [1 3]: σ² = 1, (x − 2)/√(3/2).
	ln := 1 / math.Sqrt(1.5)
	cases := []struct {
		name string
		m    *Model
		in   []*Tensor
		want [][]float64
	}{
		// generate_square_subsequent_mask(3) added to zero scores: rows [1], [½ ½], [⅓ ⅓ ⅓] over the allowed keys.
		{"-inf mask initializer + Softmax", newMG(13).in("s", 1, 3, 3).ninfInit("m", dims(3, 3), make([]float32, 9), 1, 2, 5).
			op("Add", ins("s", "m"), ins("a")).op("Softmax", ins("a"), ins("y"), aI("axis", -1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 3, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0)}, [][]float64{{1, 0, 0, half, half, 0, third, third, third}}},
		// The same mask built as Llama/GPT-2 exports do: Trilu of ones (lower), Equal 0, Where(−∞, 0), mask first in the Add.
		{"-inf mask folded from Trilu Equal Where", newMG(14).in("s", 1, 3, 3).init("ones", dims(3, 3), 1, 1, 1, 1, 1, 1, 1, 1, 1).init("zero", dims(), 0).
			ninfInit("ninf", dims(), []float32{0}, 0).
			op("Trilu", ins("ones"), ins("tri"), aI("upper", 0)).op("Equal", ins("tri", "zero"), ins("blk")).op("Where", ins("blk", "ninf", "zero"), ins("m")).
			op("Add", ins("m", "s"), ins("a")).op("Softmax", ins("a"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 3, 3), 0, 0, 0, 0, 0, 0, 0, 0, 0)}, [][]float64{{1, 0, 0, half, half, 0, third, third, third}}},
		// Where(mask, −∞ constant, computed scores) then Softmax: row 0 keeps only key 0.
		{"Where -inf over computed scores", newMG(13).in("s", 2, 2).init("ninf", dims(), inf).init("blk", dims(2, 2), 0, 1, 0, 0).
			op("Cast", ins("blk"), ins("b"), aI("to", int64(Bool))).op("Where", ins("b", "ninf", "s"), ins("a")).op("Softmax", ins("a"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(2, 2), 0, 5, 0, 0)}, [][]float64{{1, 0, half, half}}},
		{"Attention scale and softmax", newMG(23).in("q", 1, 1, 1, 4).in("k", 1, 1, 2, 4).in("v", 1, 1, 2, 1).op("Attention", ins("q", "k", "v"), ins("y")).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 1, 4), 1, 0, 0, 0), floatsTensor(dims(1, 1, 2, 4), 1, 0, 0, 0, 0, 0, 0, 0), floatsTensor(dims(1, 1, 2, 1), 2, 6)},
			[][]float64{{p0*2 + (1-p0)*6}}},
		// is_causal with zero scores: query 0 sees key 0 (y = 2), query 1 both (y = 4).
		{"Attention causal", newMG(23).in("q", 1, 1, 2, 2).in("k", 1, 1, 2, 2).in("v", 1, 1, 2, 1).op("Attention", ins("q", "k", "v"), ins("y"), aI("is_causal", 1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 2, 2), 0, 0, 0, 0), floatsTensor(dims(1, 1, 2, 2), 0, 0, 0, 0), floatsTensor(dims(1, 1, 2, 1), 2, 6)},
			[][]float64{{2, 4}}},
		// 3-D with 2 query heads of size 1 sharing one key/value head (grouped), boolean mask blocking key 1:
		// both heads read v₀ = 3 (y [1, 1, 2] = [3 3]).
		{"Attention 3-D grouped with boolean mask", newMG(23).in("q", 1, 1, 2).in("k", 1, 2, 1).in("v", 1, 2, 1).initI("m", dims(1, 2), 1, 0).
			op("Cast", ins("m"), ins("mb"), aI("to", int64(Bool))).
			op("Attention", ins("q", "k", "v", "mb"), ins("y"), aI("q_num_heads", 2), aI("kv_num_heads", 1)).out("y").model(),
			[]*Tensor{floatsTensor(dims(1, 1, 2), 1, 2), floatsTensor(dims(1, 2, 1), 1, 1), floatsTensor(dims(1, 2, 1), 3, 5)},
			[][]float64{{3, 3}}},
		// Gelu (none) at 1: (1 + erf(1/√2))/2 = Φ(1) = 0.841344746068542948… (the normal CDF table);
		// tanh form at 1: (1 + tanh(√(2/π)·1.044715))/2; Erf at 1/2 = 0.520499877813046537… (A&S Table 7.1).
		{"Gelu Erf", newMG(20).in("x", 1).in("h", 1).op("Gelu", ins("x"), ins("a")).op("Gelu", ins("x"), ins("b"), aS("approximate", "tanh")).op("Erf", ins("h"), ins("c")).out("a", "b", "c").model(),
			[]*Tensor{floatsTensor(dims(1), 1), floatsTensor(dims(1), 0.5)},
			[][]float64{{0.8413447460685429}, {(1 + math.Tanh(math.Sqrt(2/math.Pi)*1.044715)) / 2}, {0.5204998778130465}}},
		{"LayerNormalization eps 1/2", newMG(17).in("x", 2).init("s", dims(2), 1, 1).op("LayerNormalization", ins("x", "s"), ins("y"), aF("epsilon", 0.5)).out("y").model(),
			[]*Tensor{floatsTensor(dims(2), 1, 3)}, [][]float64{{-ln, ln}}},
		// ReduceLogSumExp of [0 l] = ln(1 + eˡ), l the float32 nearest ln 3; ReduceLogSum of [1 3] = ln 4.
		{"ReduceLogSumExp LogSum", newMG(13).in("x", 2).in("w", 2).op("ReduceLogSumExp", ins("x"), ins("a"), aI("keepdims", 0)).op("ReduceLogSum", ins("w"), ins("b"), aI("keepdims", 0)).out("a", "b").model(),
			[]*Tensor{floatsTensor(dims(2), 0, float32(math.Log(3))), floatsTensor(dims(2), 1, 3)}, [][]float64{{math.Log(1 + math.Exp(float64(float32(math.Log(3)))))}, {math.Log(4)}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, outs := evalF64(t, tc.m, Options{}, tc.in...)
			if len(outs) != len(tc.want) {
				t.Fatalf("%d outputs, want %d", len(outs), len(tc.want))
			}
			for i := range outs {
				if !nearF64(outs[i].Data, tc.want[i]) {
					t.Errorf("output %d: %v, want %v", i, outs[i].Data, tc.want[i])
				}
			}
		})
	}
}

// TestImportOps23Refused: what is data-dependent, or would need −∞ where
// the IR has none, is refused with one line naming the node and the input.
func TestImportOps23Refused(t *testing.T) {
	inf := float32(math.Inf(-1))
	cases := []struct {
		name string
		m    *Model
		want []string
	}{
		// (Greater and Less feeding a Where import: import_datacmp.go.)
		{"comparison of a computed value", newMG(13).in("x", 2).init("z", dims(), 0).op("Equal", ins("x", "z"), ins("c")).op("Where", ins("c", "x", "z"), ins("y")).out("y").model(),
			[]string{`node "c" (Equal)`, `input 0 ("x")`, "data-dependent"}},
		{"ArgMax of a computed value", newMG(13).in("x", 2).op("ArgMax", ins("x"), ins("i")).op("Cast", ins("i"), ins("y"), aI("to", int64(Float))).out("y").model(),
			[]string{`(ArgMax)`, "data-dependent"}},
		{"-inf used as data", newMG(13).in("x", 2).init("m", dims(2), 0, inf).op("Mul", ins("x", "m"), ins("y")).out("y").model(),
			[]string{`(Mul)`, "−∞", "element 1"}},
		{"softmax of a fully masked row", newMG(13).in("x", 1, 2).init("m", dims(2), inf, inf).op("Add", ins("x", "m"), ins("a")).op("Softmax", ins("a"), ins("y")).out("y").model(),
			[]string{`(Softmax)`, "row 0", "NaN"}},
		{"masked softmax on a non-last axis", newMG(13).in("x", 2, 2).init("m", dims(2, 2), 0, inf, 0, 0).op("Add", ins("x", "m"), ins("a")).op("Softmax", ins("a"), ins("y"), aI("axis", 0)).out("y").model(),
			[]string{`(Softmax)`, "last axis"}},
		{"Einsum diagonal of unequal extents", newMG(12).in("x", 2, 3).op("Einsum", ins("x"), ins("y"), aS("equation", "ii->i")).out("y").model(),
			[]string{`(Einsum)`, `attribute "equation"`, "diagonal", "extents 2 and 3"}},
		{"ScatterND none writing twice", newMG(13).in("x", 4).in("u", 2).initI("i", dims(2, 1), 1, 1).op("ScatterND", ins("x", "i", "u"), ins("y")).out("y").model(),
			[]string{`(ScatterND)`, "written 2 times"}},
		{"opset 29", newMG(29).in("x", 2).op("Relu", ins("x"), ins("y")).out("y").model(), []string{"opset 29", "1…28"}},
		{"Mod fmod 0 of floats before opset 28", newMG(27).in("x", 1).init("a", dims(1), 5).init("b", dims(1), 3).op("Mod", ins("a", "b"), ins("m")).op("Add", ins("x", "m"), ins("y")).out("y").model(),
			[]string{`(Mod)`, `attribute "fmod"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Import(tc.m, Options{})
			if err == nil {
				t.Fatal("imported")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") {
				t.Errorf("two lines: %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}
