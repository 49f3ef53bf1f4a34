package irsem

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// opCase is one graph of the test corpus: a graph, its payload and an
// input, with what is known of its output.
type opCase struct {
	name string
	g    *Graph
	p    *Payload
	x    RatTensor
	// want is the exact output over Rat (nil: not checked exactly).
	want *RatTensor
	// inexact marks graphs with a tag that has no exact rational
	// semantics: over Rat, DenoteAll must reject them by name.
	inexact bool
	// ratErr is the error DenoteAll must give over Rat although every tag
	// is exact (a data-dependent failure such as a non-square sqrt).
	ratErr string
	// f64 holds reference values of the output computed with package
	// math, checked to 1e-12 over F64 (nil: not checked).
	f64 []float64
}

func seq(n int) RatTensor {
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(i + 1)
	}
	return ints(spec.Shape{n}, vs...)
}

func reshaped(x RatTensor, s ...int) RatTensor { return RatTensor{Shape: spec.Shape(s), Data: x.Data} }

// binCase builds input [3] ⊙ const [3] for a binary elementwise tag.
func binCase(t testing.TB, op Op, want ...string) opCase {
	return opCase{
		name: string(op),
		g: graphOf(input(3), nd(OpConst, nil, spec.Shape{3}, withValueShape(3)),
			nd(op, []int{0, 1}, spec.Shape{3})),
		p:    payloadOf(map[int]*Params{1: {Value: rtp(t, spec.Shape{3}, "2", "-2", "-1")}}),
		x:    rt(t, spec.Shape{3}, "1", "-2", "1/2"),
		want: rtp(t, spec.Shape{3}, want...),
	}
}

// unaryCase builds op(input [n]).
func unaryCase(t testing.TB, op Op, x []string, want []string) opCase {
	n := len(x)
	c := opCase{name: string(op), g: graphOf(input(n), nd(op, []int{0}, spec.Shape{n})), x: rt(t, spec.Shape{n}, x...)}
	if want != nil {
		c.want = rtp(t, spec.Shape{n}, want...)
	}
	return c
}

// inexactCase builds op(input) for a tag without exact rational semantics
// and its float64 reference.
func inexactCase(t testing.TB, op Op, f func(float64) float64) opCase {
	xs := []string{"1/2", "1", "-3/4", "2"}
	c := unaryCase(t, op, xs, nil)
	c.inexact = true
	for _, s := range xs {
		c.f64 = append(c.f64, f(rat(t, s).Float64()))
	}
	return c
}

func softplus64(x float64) float64 {
	if x > 0 {
		return x + math.Log1p(math.Exp(-x))
	}
	return math.Log1p(math.Exp(x))
}

// opCases is the corpus: every tag of §4 at least once, plus the examples.
func opCases(t testing.TB) []opCase {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	cs := []opCase{
		{name: "input", g: graphOf(input(2)), x: rt(t, s(2), "3", "-3/2"), want: rtp(t, s(2), "3", "-3/2")},
		{name: "const", g: graphOf(input(2), nd(OpConst, nil, s(2), withValueShape(2)), nd(OpAdd, []int{0, 1}, s(2))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(2), "1/2", "2")}}),
			x: rt(t, s(2), "3", "-3/2"), want: rtp(t, s(2), "7/2", "1/2")},
		{name: "const-scalar", g: graphOf(input(), nd(OpConst, nil, s(), withValueShape()), nd(OpMulElem, []int{0, 1}, s())),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(), "-2/3")}}),
			x: rt(t, s(), "3"), want: rtp(t, s(), "-2")},
		{name: "rand_uniform", g: graphOf(input(2), nd(OpRandUniform, nil, s(3), withSeed(7))), x: rt(t, s(2), "0", "0")},
		{name: "bernoulli_mask", g: graphOf(input(2), nd(OpConst, nil, s(), withValueShape()), nd(OpBernoulliMask, []int{1}, s(16), withSeed(11))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(), "1/2")}}), x: rt(t, s(2), "0", "0")},
		binCase(t, OpAdd, "3", "-4", "-1/2"),
		binCase(t, OpSub, "-1", "0", "3/2"),
		binCase(t, OpMulElem, "2", "4", "-1/2"),
		binCase(t, OpMaxElem, "2", "-2", "1/2"),
		binCase(t, OpMinElem, "1", "-2", "-1"),
		unaryCase(t, OpAbs, []string{"-3/2", "0", "2"}, []string{"3/2", "0", "2"}),
		unaryCase(t, OpSqrt, []string{"4", "9/4", "0", "-1"}, []string{"2", "3/2", "0", "0"}),
		unaryCase(t, OpInv, []string{"2", "-1/3"}, []string{"1/2", "-3"}),
		unaryCase(t, OpRelu, []string{"-1", "0", "5/2"}, []string{"0", "0", "5/2"}),
		inexactCase(t, OpTanh, math.Tanh),
		inexactCase(t, OpSigmoid, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }),
		inexactCase(t, OpExp, math.Exp),
		inexactCase(t, OpSin, math.Sin),
		inexactCase(t, OpCos, math.Cos),
		inexactCase(t, OpSoftplus, softplus64),
		inexactCase(t, "erf", math.Erf),
		inexactCase(t, "erf_deriv", func(x float64) float64 { return 2 / math.Sqrt(math.Pi) * math.Exp(-x*x) }),
		// Casts, worked by hand: binary16 1/3 = 1365·2^-12, 2049 a tie to the
		// even 2048; bfloat16 1/3 = 171·2^-9, 257 a tie to 256; binary32 1/3
		// = 11184811·2^-25.
		unaryCase(t, "round_f16", []string{"1/3", "-1/3", "2049", "65504"}, []string{"1365/4096", "-1365/4096", "2048", "65504"}),
		unaryCase(t, "round_bf16", []string{"1/3", "257"}, []string{"171/512", "256"}),
		unaryCase(t, "round_f32", []string{"1/3", "1/2"}, []string{"11184811/33554432", "1/2"}),
		// trunc_int with INT8's range, worked by hand: toward zero, 127.9 and
		// −128.9 at the ends of the range.
		{name: "trunc_int", g: graphOf(input(5), nd("trunc_int", []int{0}, s(5), func(k *Kind) { k.Lo, k.Hi = spec.NewRat(-128, 1), spec.NewRat(127, 1) })),
			x: rt(t, s(5), "7/2", "-7/2", "-1/3", "1279/10", "-1289/10"), want: rtp(t, s(5), "3", "-3", "0", "127", "-128")},
		// round_int, worked by hand: ties to even (1/2 → 0, 3/2 → 2, −5/2 → −2).
		unaryCase(t, "round_int", []string{"1/2", "3/2", "-5/2", "7/3", "-7/3"}, []string{"0", "2", "-2", "2", "-2"}),
		// quant_int with scale 1/4, zero point 3 and INT8's range, worked by
		// hand: 1/8 → rne(1/2) + 3 = 3, 3/8 → rne(3/2) + 3 = 5, −100 →
		// −397 clamped to −128, 10 → 43, 1/3 → fl32(1/3)·4 = 1.33… → 4.
		{name: "quant_int", g: graphOf(input(5), nd("quant_int", []int{0}, s(5), func(k *Kind) {
			k.C, k.Bias, k.Lo, k.Hi = spec.NewRat(1, 4), spec.NewRat(3, 1), spec.NewRat(-128, 1), spec.NewRat(127, 1)
		})),
			x: rt(t, s(5), "1/8", "3/8", "-100", "10", "1/3"), want: rtp(t, s(5), "3", "5", "-128", "43", "4")},
		inexactCase(t, "asinh", math.Asinh),
		{name: "pow", g: graphOf(input(3), nd(OpConst, nil, s(3), withValueShape(3)), nd("pow", []int{0, 1}, s(3))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(3), "2", "-2", "1/2")}}), x: rt(t, s(3), "3/2", "1", "2"), inexact: true,
			f64: []float64{2.25, 1, math.Sqrt2}},
		{name: "log", g: graphOf(input(3), nd(OpLog, []int{0}, s(3))), x: rt(t, s(3), "1/2", "1", "3"),
			inexact: true, f64: []float64{math.Log(0.5), 0, math.Log(3)}},
		{name: "safe_log", g: graphOf(input(3), nd(OpConst, nil, s(), withValueShape()), nd(OpSafeLog, []int{0, 1}, s(3))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(), "1/1000")}}), x: rt(t, s(3), "-2", "0", "3"), inexact: true,
			f64: []float64{math.Log(softplus64(-2) + 0.001), math.Log(softplus64(0) + 0.001), math.Log(softplus64(3) + 0.001)}},
		{name: "matmul", g: graphOf(input(2, 3), nd(OpConst, nil, s(3, 2), withValueShape(3, 2)), nd(OpMatmul, []int{0, 1}, s(2, 2))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(3, 2), "1", "0", "0", "1", "1", "1")}}),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(2, 2), "4", "5", "10", "11")},
		{name: "matmul-vector", g: graphOf(input(3), nd(OpConst, nil, s(3, 2), withValueShape(3, 2)), nd(OpMatmul, []int{0, 1}, s(2))),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(3, 2), "1", "0", "0", "1", "1/2", "1/3")}}),
			x: seq(3), want: rtp(t, s(2), "5/2", "3")},
		{name: "linear", g: graphOf(input(2, 2), nd(OpLinear, []int{0}, s(2, 3))),
			p: payloadOf(map[int]*Params{1: {W: rtp(t, s(3, 2), "1", "0", "0", "1", "1", "1"), B: rtp(t, s(3), "1/2", "0", "-1")}}),
			x: reshaped(seq(4), 2, 2), want: rtp(t, s(2, 3), "3/2", "2", "2", "7/2", "4", "6")},
		{name: "reduce_sum", g: graphOf(input(2, 3), nd(OpReduceSum, []int{0}, s(2), withAxis(1))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(2), "6", "15")},
		{name: "reduce_mean", g: graphOf(input(2, 3), nd(OpReduceMean, []int{0}, s(3), withAxis(0))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(3), "5/2", "7/2", "9/2")},
		{name: "bce_with_logits", g: graphOf(input(3), nd(OpConst, nil, s(3), withValueShape(3)), nd("bce_with_logits", []int{0, 1}, s())),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(3), "0", "1", "1/2")}}), x: rt(t, s(3), "-2", "0", "3"), inexact: true,
			f64: []float64{(math.Log1p(math.Exp(-2)) + math.Log(2) + 3 - 1.5 + math.Log1p(math.Exp(-3))) / 3}},
		{name: "reduce_prod", g: graphOf(input(2, 3), nd("reduce_prod", []int{0}, s(2), withAxis(1))),
			x: rt(t, s(2, 3), "1/2", "-3", "4", "0", "5", "7"), want: rtp(t, s(2), "-6", "0")},
		{name: "scatter", g: graphOf(input(2, 3), nd(OpConst, nil, s(1, 2), withValueShape(1, 2)),
			nd("scatter", []int{0, 1}, s(2, 3), withAxis(1), func(k *Kind) { k.IndicesShape, k.Indices = s(1, 2), []int{2, 0} })),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(1, 2), "9", "-1/2")}}),
			x: rt(t, s(2, 3), "1", "2", "3", "4", "5", "6"), want: rtp(t, s(2, 3), "-1/2", "2", "9", "4", "5", "6")},
		{name: "tile", g: graphOf(input(2, 1), nd("tile", []int{0}, s(4, 3), func(k *Kind) { k.OutShape = s(4, 3) })),
			x: rt(t, s(2, 1), "1/2", "-3"), want: rtp(t, s(4, 3), "1/2", "1/2", "1/2", "-3", "-3", "-3", "1/2", "1/2", "1/2", "-3", "-3", "-3")},
		{name: "renorm", g: graphOf(input(2, 2), nd("renorm", []int{0}, s(2, 2), withAxis(1), func(k *Kind) { k.Maxnorm = spec.NewRat(1, 1) })),
			x: rt(t, s(2, 2), "3", "1", "4", "0"), want: rtp(t, s(2, 2), "3/5", "1", "4/5", "0")}, // columns (3, 4) clamped to norm 1, (1, 0) at the tie
		{name: "l2_normalize", g: graphOf(input(2, 2), nd("l2_normalize", []int{0}, s(2, 2), withAxis(1))),
			x: rt(t, s(2, 2), "3", "4", "0", "5"), want: rtp(t, s(2, 2), "3/5", "4/5", "0", "1")},
		{name: "sum", g: graphOf(input(2, 3), nd(OpSum, []int{0}, s())), x: reshaped(seq(6), 2, 3), want: rtp(t, s(), "21")},
		{name: "softmax", g: graphOf(input(2, 2), nd(OpSoftmax, []int{0}, s(2, 2), withAxis(1))), x: rt(t, s(2, 2), "0", "1", "2", "2"),
			inexact: true, f64: []float64{1 / (1 + math.E), math.E / (1 + math.E), 0.5, 0.5}},
		{name: "hard_masked_softmax", g: graphOf(input(2, 3), nd(OpHardMaskedSoftmax, []int{0}, s(2, 3),
			withMask(HardMask{Shape: s(2, 3), Allowed: []bool{true, false, true, false, false, false}}))),
			x: rt(t, s(2, 3), "0", "5", "1", "1", "2", "3"), inexact: true,
			f64: []float64{1 / (1 + math.E), 0, math.E / (1 + math.E), 0, 0, 0}},
		{name: "layernorm", g: graphOf(input(2, 2), nd(OpLayerNorm, []int{0}, s(2, 2), withAxis(0))),
			p: payloadOf(map[int]*Params{1: {Gamma: rtp(t, s(2, 2), "1", "2", "3", "4"), Beta: rtp(t, s(2, 2), "0", "0", "0", "1"), Eps: ptr(rat(t, "0"))}}),
			x: rt(t, s(2, 2), "1", "3", "1", "3"), want: rtp(t, s(2, 2), "-1", "2", "-3", "5")},
		{name: "layernorm-rows", g: graphOf(input(2, 2), nd(OpLayerNorm, []int{0}, s(2, 2), withAxis(1))),
			p: payloadOf(map[int]*Params{1: {Eps: ptr(rat(t, "0"))}}),
			x: rt(t, s(2, 2), "1", "3", "0", "4"), want: rtp(t, s(2, 2), "-1", "1", "-1", "1")},
		{name: "layernorm-beta-only", g: graphOf(input(1, 2), nd(OpLayerNorm, []int{0}, s(1, 2), withAxis(1))),
			p: payloadOf(map[int]*Params{1: {Beta: rtp(t, s(2), "1/2", "-1/2"), Eps: ptr(rat(t, "0"))}}),
			x: rt(t, s(1, 2), "1", "3"), want: rtp(t, s(1, 2), "-1/2", "1/2")},
		{name: "layernorm-default", g: graphOf(input(1, 2), nd(OpLayerNorm, []int{0}, s(1, 2), withAxis(1))),
			x: rt(t, s(1, 2), "1", "3"), ratErr: "no exact rational square root",
			f64: []float64{-1 / math.Sqrt(1+1e-5), 1 / math.Sqrt(1+1e-5)}},
		{name: "batch_norm_eval", g: graphOf(input(1, 2, 2), nd(OpBatchNormEval, []int{0}, s(1, 2, 2), func(k *Kind) { k.ChannelAxis, k.Channels = 1, 2 })),
			p: payloadOf(map[int]*Params{1: {Mean: rtp(t, s(2), "1", "2"), Var: rtp(t, s(2), "4", "1/4"),
				Gamma: rtp(t, s(2), "1", "2"), Beta: rtp(t, s(2), "0", "1"), Eps: ptr(rat(t, "0"))}}),
			x: rt(t, s(1, 2, 2), "1", "3", "2", "4"), want: rtp(t, s(1, 2, 2), "0", "1", "1", "9")},
		{name: "batch_norm_eval-defaults", g: graphOf(input(2, 1), nd(OpBatchNormEval, []int{0}, s(2, 1), func(k *Kind) { k.ChannelAxis, k.Channels = 1, 1 })),
			p: payloadOf(map[int]*Params{1: {Mean: rtp(t, s(1), "1"), Var: rtp(t, s(1), "-3")}}),
			x: rt(t, s(2, 1), "1", "3"), ratErr: "no exact rational square root",
			f64: []float64{0, 2 / math.Sqrt(1e-5)}},
		{name: "permute", g: graphOf(input(2, 3), nd(OpPermute, []int{0}, s(3, 2), withPerm(1, 0))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(3, 2), "1", "4", "2", "5", "3", "6")},
		{name: "transpose", g: graphOf(input(2, 3), nd(OpTranspose, []int{0}, s(3, 2), withAxes(1, 0))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(3, 2), "1", "4", "2", "5", "3", "6")},
		{name: "broadcast_to", g: graphOf(input(3), nd(OpBroadcastTo, []int{0}, s(2, 3), func(k *Kind) { k.FromShape, k.ToShape = s(3), s(2, 3) })),
			x: seq(3), want: rtp(t, s(2, 3), "1", "2", "3", "1", "2", "3")},
		{name: "reshape", g: graphOf(input(2, 3), nd(OpReshape, []int{0}, s(3, 2), withInOut(s(2, 3), s(3, 2)))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(3, 2), "1", "2", "3", "4", "5", "6")},
		{name: "flatten", g: graphOf(input(2, 3), nd(OpFlatten, []int{0}, s(6), withInOut(s(2, 3), nil))),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(6), "1", "2", "3", "4", "5", "6")},
		{name: "concat", g: graphOf(input(1, 2), nd(OpConst, nil, s(2, 2), withValueShape(2, 2)),
			nd(OpConcat, []int{0, 1, 0}, s(4, 2), withAxis(0)), nd(OpConcat, []int{0, 0}, s(1, 4), withAxis(1)), nd(OpSum, []int{2}, s()), nd(OpSum, []int{3}, s()),
			nd(OpAdd, []int{4, 5}, s())),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(2, 2), "10", "20", "30", "40")}}),
			x: rt(t, s(1, 2), "1", "2"), want: rtp(t, s(), "112")},
		{name: "detach", g: graphOf(input(2), nd(OpDetach, []int{0}, s(2))), x: rt(t, s(2), "3", "-3/2"), want: rtp(t, s(2), "3", "-3/2")},
		{name: "mse_loss", g: graphOf(input(2), nd(OpConst, nil, s(2), withValueShape(2)), nd(OpMSELoss, []int{0, 1}, s())),
			p: payloadOf(map[int]*Params{1: {Value: rtp(t, s(2), "1", "1")}}),
			x: rt(t, s(2), "3", "-3/2"), want: rtp(t, s(), "41/8")},
	}
	cs = append(cs, windowCases(t)...)
	cs = append(cs, windowNDCases(t)...)
	cs = append(cs, regopsCases(t)...)
	cs = append(cs,
		opCase{name: "examples/quad", g: exampleGraph(t, "quad.ir.json"), x: exampleTensor(t, "quad.input.json"), want: rtp(t, s(), "45/2")},
		opCase{name: "examples/quad-detach", g: exampleGraph(t, "quad-detach.ir.json"), x: exampleTensor(t, "quad.input.json"), want: rtp(t, s(), "45/2")},
		opCase{name: "examples/mlp", g: exampleGraph(t, "mlp.ir.json"), p: examplePayload(t, "mlp.payload.json"),
			x: exampleTensor(t, "mlp.input.json"), want: rtp(t, s(1), "9443/28800")},
	)
	// Fill in the outputs of the random tags from the spec stream and the
	// registry's own rules.
	for i := range cs {
		switch cs[i].name {
		case "rand_uniform":
			w := RatTensor{Shape: s(3), Data: make([]spec.Rat, 3)}
			for j := range w.Data {
				w.Data[j] = spec.RatFromBig(spec.UniformRat(7, j))
			}
			cs[i].want = &w
		case "bernoulli_mask":
			prim, _ := spec.Default[spec.Rat]().Lookup("bernoulli_mask")
			w, err := prim.Apply(&spec.Attrs{P: big.NewRat(1, 2), Seed: 11}, []spec.Tensor[spec.Rat]{ints(s(16), make([]int64, 16)...)})
			if err != nil {
				t.Fatal(err)
			}
			cs[i].want = &w
		}
	}
	return cs
}

func ptr[T any](v T) *T { return &v }

// windowCases are conv and pooling graphs whose exact outputs come from
// the naive references below.
func windowCases(t testing.TB) []opCase {
	mkx := func(shape spec.Shape, seed int64) RatTensor {
		x := RatTensor{Shape: shape, Data: make([]spec.Rat, shape.Size())}
		for i := range x.Data {
			x.Data[i] = spec.NewRat((int64(i)*seed+3)%11-5, int64(1+i%3))
		}
		return x
	}
	type cc struct {
		name    string
		in      spec.Shape
		w       spec.Window
		bias    bool
		op      Op
		payload bool
	}
	cases := []cc{
		{name: "conv-plain", in: spec.Shape{1, 2, 4, 4}, w: spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1, InChannels: 2, OutChannels: 2}, bias: true, op: OpConv},
		{name: "conv-groups-stride-pad", in: spec.Shape{2, 2, 5, 4}, w: spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 2, InChannels: 2, OutChannels: 4}, bias: true, op: OpConv},
		{name: "conv-dilation-nobias", in: spec.Shape{1, 3, 6, 5}, w: spec.Window{Kernel: []int{2, 3}, Stride: []int{1, 2}, Padding: []int{2, 1}, Dilation: []int{2, 2}, Groups: 1, InChannels: 3, OutChannels: 2}, op: OpConv},
		{name: "conv-1d-chw", in: spec.Shape{2, 7}, w: spec.Window{Kernel: []int{3}, Stride: []int{2}, Padding: []int{1}, Dilation: []int{1}, Groups: 1, InChannels: 2, OutChannels: 1}, bias: true, op: OpConv},
		{name: "max_pool", in: spec.Shape{1, 2, 4, 4}, w: spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}, op: OpMaxPool},
		{name: "max_pool-pad", in: spec.Shape{1, 1, 5, 4}, w: spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 1}, Padding: []int{1, 2}}, op: OpMaxPool},
		{name: "avg_pool", in: spec.Shape{2, 1, 4, 4}, w: spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}, op: OpAvgPool},
		{name: "avg_pool-pad", in: spec.Shape{1, 5, 4}, w: spec.Window{Kernel: []int{3, 2}, Stride: []int{2, 2}, Padding: []int{1, 1}}, op: OpAvgPool},
	}
	var out []opCase
	for k, c := range cases {
		x := mkx(c.in, int64(k+2))
		node := nd(c.op, []int{0}, nil, withWindow(c.w))
		info, _ := lookup(c.op)
		ys, err := inferShape(&node, info, []spec.Shape{c.in})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		node.Shape = ys
		oc := opCase{name: c.name, g: graphOf(nd(OpInput, nil, c.in), node), x: x}
		var want RatTensor
		if c.op == OpConv {
			ws := spec.Shape{c.w.OutChannels, c.w.InChannels / c.w.Groups}
			ws = append(ws, c.w.Kernel...)
			e := &Params{W: ptr(mkx(ws, int64(k+5)))}
			if c.bias {
				e.B = ptr(mkx(spec.Shape{c.w.OutChannels}, 7))
			}
			oc.p = payloadOf(map[int]*Params{1: e})
			want = convRef(x, c.w, *e.W, e.B, ys)
		} else {
			want = poolRef(x, c.w, c.op == OpMaxPool, ys)
		}
		oc.want = &want
		out = append(out, oc)
	}
	return out
}

// padded reads x at a multi-index (lead…, spatial…) with the spatial part
// possibly outside: ok is false there.
func readPadded(x RatTensor, idx []int) (spec.Rat, bool) {
	off := 0
	st := x.Shape.Strides()
	for d, i := range idx {
		if i < 0 || i >= x.Shape[d] {
			return spec.Rat{}, false
		}
		off += i * st[d]
	}
	return x.Data[off], true
}

// forEach calls f with every multi-index of shape s in row-major order.
func forEach(s []int, f func(idx []int)) {
	if spec.Shape(s).Size() == 0 {
		return
	}
	idx := make([]int, len(s))
	for {
		f(idx)
		d := len(s) - 1
		for ; d >= 0; d-- {
			idx[d]++
			if idx[d] < s[d] {
				break
			}
			idx[d] = 0
		}
		if d < 0 {
			return
		}
	}
}

// convRef is a naive convolution straight from the definition, over the
// zero-padded input.
func convRef(x RatTensor, w spec.Window, wt RatTensor, b *RatTensor, out spec.Shape) RatTensor {
	y := RatTensor{Shape: out, Data: make([]spec.Rat, out.Size())}
	r := len(w.Kernel)
	cg, cog := w.InChannels/w.Groups, w.OutChannels/w.Groups
	wst := wt.Shape.Strides()
	i := 0
	forEach(out, func(o []int) {
		lead, co, os := o[:len(o)-r-1], o[len(o)-r-1], o[len(o)-r:]
		g := co / cog
		var acc spec.Rat
		for ci := 0; ci < cg; ci++ {
			forEach(w.Kernel, func(j []int) {
				idx := append(append(append([]int{}, lead...), g*cg+ci), make([]int, r)...)
				for d := 0; d < r; d++ {
					idx[len(lead)+1+d] = os[d]*w.Stride[d] - w.Padding[d] + j[d]*w.Dilation[d]
				}
				v, ok := readPadded(x, idx)
				if !ok {
					return
				}
				wi := co*wst[0] + ci*wst[1]
				for d := 0; d < r; d++ {
					wi += j[d] * wst[2+d]
				}
				acc = acc.Add(v.Mul(wt.Data[wi]))
			})
		}
		if b != nil {
			acc = acc.Add(b.Data[co])
		}
		y.Data[i] = acc
		i++
	})
	return y
}

// poolRef is naive pooling: the max of the in-bounds window elements, or
// their sum over the full kernel size.
func poolRef(x RatTensor, w spec.Window, isMax bool, out spec.Shape) RatTensor {
	y := RatTensor{Shape: out, Data: make([]spec.Rat, out.Size())}
	r := len(w.Kernel)
	i := 0
	forEach(out, func(o []int) {
		lead, os := o[:len(o)-r], o[len(o)-r:]
		var acc spec.Rat
		first := true
		forEach(w.Kernel, func(j []int) {
			idx := append(append([]int{}, lead...), make([]int, r)...)
			for d := 0; d < r; d++ {
				idx[len(lead)+d] = os[d]*w.Stride[d] - w.Padding[d] + j[d]
			}
			v, ok := readPadded(x, idx)
			switch {
			case !ok:
			case isMax && first:
				acc, first = v, false
			case isMax:
				acc = acc.Max(v)
			default:
				acc = acc.Add(v)
			}
		})
		if !isMax {
			acc, _ = acc.Div(spec.NewRat(int64(spec.Shape(w.Kernel).Size()), 1))
		}
		y.Data[i] = acc
		i++
	})
	return y
}

// TestCorpusCoversEveryTag guards the corpus: every tag appears.
func TestCorpusCoversEveryTag(t *testing.T) {
	seen := map[Op]bool{}
	for _, c := range opCases(t) {
		for _, n := range c.g.Nodes {
			seen[n.Kind.Op] = true
		}
	}
	for _, o := range Ops() {
		if !seen[o.Op] {
			t.Errorf("no corpus graph uses %s", o.Op)
		}
	}
}
