package harness

import "github.com/tlcheck/tlcheck/spec"

// CasesExtraSpago are engine-independent cases written for the spago
// adapter, beyond Cases. Max pooling edge cases: a window whose elements
// are all negative (an engine that starts its running maximum at 0 or at
// the smallest positive number instead of −∞ gets its value and its
// argmax wrong) and non-square kernels (an engine that mixes up the
// kernel's height and width reads the wrong elements); no tie, so the
// exact gradient is unique and the bound is 0. And three primitives Cases
// has no case for: shrink at its kinks ±λ (Clarke [0, 1]), detach in a
// DAG (y = x ⊙ detach(x): ∂/∂x = x ⊙ c only), and gather with repeated
// indices (a fan-out: the repeated element's gradient is the sum of its
// cotangents). log_softmax with logits 800 apart (exp(−800) underflows in
// binary64: log(softmax(x)) computed naively is −∞ where log_softmax is
// −800, and its gradient NaN where log_softmax is smooth), and linear on
// a vector (W·x + b, which an engine may map to a fused affine operator),
// and sqrt at 0 (the registry's sqrt′(0) = 0; the one-sided derivative is
// +∞, and ∞ times a zero cotangent is NaN).
func CasesExtraSpago() []Case {
	zero, one := spec.Rat{}, spec.NewRat(1, 1)
	win := func(kh, kw int) *spec.Attrs {
		return &spec.Attrs{Window: &spec.Window{Kernel: []int{kh, kw}, Stride: []int{kh, kw}, Pads: []int{0, 0, 0, 0}}}
	}
	// Window {0,1}×{0,1} is −1, −2, −3, −1/2 (max −1/2 at [1,1]);
	// window {0,1}×{2,3} is 1, 2, 3, 1/4 (max 3 at [1,2]).
	neg := q(spec.Shape{1, 1, 2, 4}, -4, -8, 4, 8, -12, -2, 12, 1)
	// Windows of 1×2 on rows 1, 3, 2, 5 / 4, 6, −1, 2: every maximum is
	// the window's second element.
	wide := q(spec.Shape{1, 1, 2, 4}, 4, 12, 8, 20, 16, 24, -4, 8)
	// Windows of 2×1 on 1, −1, 2 / 3, 5, −2: maxima at the bottom row for
	// columns 0 and 1, the top row for column 2.
	tall := q(spec.Shape{1, 1, 2, 3}, 4, -4, 8, 12, 20, -8)
	shrinkX := q(spec.Shape{6}, 4, -2, 0, 12, -12, 2) // 1, −1/2, 0, 3, −3, 1/2: kinks at ±1/2
	shrink := unary("shrink_kinks", "shrink", &spec.Attrs{Lambd: rat(1, 2), Bias: rat(1, 2)}, shrinkX, vC, maskZeros(vT, shrinkX, -2, 2))
	shrink.Kinks = kinks(shrinkX, zero, one, -2, 2)
	detach := Case{Name: "dag_detach", DAG: true, Graph: Graph{Inputs: 1, Nodes: []Node{{Op: "detach", Args: []int{0}}, {Op: "mul", Args: []int{0, 1}}}},
		Xs: []spec.Tensor[spec.Rat]{vA}, Cot: vC, Tangents: []spec.Tensor[spec.Rat]{vT}}
	gather := unary("gather_repeat", "gather", &spec.Attrs{Axis: 0, IndicesShape: spec.Shape{5}, Indices: []int{2, 0, 2, 5, 2}},
		vS, q(spec.Shape{5}, 3, -5, 2, 1, -2), vT)
	gatherRows := unary("gather_rows_repeat", "gather", &spec.Attrs{Axis: 0, IndicesShape: spec.Shape{3}, Indices: []int{1, 1, 0}},
		mA, q(spec.Shape{3, 3}, 3, -1, 2, 5, -2, 1, 4, -3, 1), mT23)
	// Logits 800 apart: exp(−800) underflows in binary64, so log(softmax)
	// computed naively is −∞ where log_softmax is −800.
	wideX := q(spec.Shape{2, 3}, 0, 3200, -3, 1, -2, 0)
	lsmWide := unary("log_softmax_wide", "log_softmax", &spec.Attrs{Axis: 1}, wideX, mC23, mT23)
	linVec := Case{Name: "linear_vector", Graph: Graph{Inputs: 3, Nodes: []Node{{Op: "linear", Args: []int{0, 1, 2}}}},
		Xs: []spec.Tensor[spec.Rat]{q(spec.Shape{3}, 1, -2, 3), q(spec.Shape{2, 3}, 2, 0, -3, 1, 5, -4), q(spec.Shape{2}, 1, -3)}, Cot: q(spec.Shape{2}, 3, -5),
		Tangents: []spec.Tensor[spec.Rat]{q(spec.Shape{3}, 2, 1, -1), mT23, q(spec.Shape{2}, 2, 1)}}
	// sqrt at 0, where the registry has sqrt′(0) = 0 and the one-sided
	// derivative is +∞: an engine with 1/(2√x) returns ±∞·c, and NaN for a
	// zero cotangent.
	sqrtX := q(spec.Shape{6}, 0, 1, 4, 9, 0, 16) // 0, 1/4, 1, 9/4, 0, 4
	sqrt0 := unary("sqrt_zero", "sqrt", nil, sqrtX, vC, maskZeros(vT, sqrtX, 0))
	for _, v := range sqrtX.Data {
		sqrt0.Singular = append(sqrt0.Singular, v.IsZero())
	}
	return []Case{
		shrink, detach, gather, gatherRows, lsmWide, linVec, sqrt0,
		unary("max_pool_negative", "max_pool", win(2, 2), neg, q(spec.Shape{1, 1, 1, 2}, 3, -5), q(neg.Shape, 1, -1, 2, 3, -2, 3, 1, 2)),
		unary("max_pool_1x2", "max_pool", win(1, 2), wide, q(spec.Shape{1, 1, 2, 2}, 3, -5, 2, 1), q(wide.Shape, 1, -1, 2, 3, -2, 1, 1, 2)),
		unary("max_pool_2x1", "max_pool", win(2, 1), tall, q(spec.Shape{1, 1, 1, 3}, 3, -5, 2), q(tall.Shape, 1, -1, 2, 3, -2, 1)),
	}
}
