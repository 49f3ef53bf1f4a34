package harness

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// q is the exact tensor of shape s with values k/4, cycling through ks.
func q(s spec.Shape, ks ...int64) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](s)
	for i := range t.Data {
		t.Data[i] = spec.NewRat(ks[i%len(ks)], 4)
	}
	return t
}

// maskZeros returns t with zeros where at is exactly one of the values ks/4:
// a tangent that leaves the kinks alone.
func maskZeros(t, at spec.Tensor[spec.Rat], ks ...int64) spec.Tensor[spec.Rat] {
	out := t.Clone()
	for i, v := range at.Data {
		for _, k := range ks {
			if v.Same(spec.NewRat(k, 4)) {
				out.Data[i] = spec.Rat{}
			}
		}
	}
	return out
}

func ones(s spec.Shape) spec.Tensor[spec.Rat] { return q(s, 4) }

func rat(n, d int64) *big.Rat { return big.NewRat(n, d) }

// Shared inputs: multiples of 1/4 in [−3, 3], with zeros (the kinks of
// relu, abs, sign) and equal pairs (the ties of max and min) on purpose.
var (
	vA   = q(spec.Shape{6}, 4, -2, 0, 12, -12, 1)  // 1, −1/2, 0, 3, −3, 1/4
	vB   = q(spec.Shape{6}, -3, -2, 5, 0, 7, 1)    // ties with vA at 1 and 5
	vC   = q(spec.Shape{6}, 3, -5, 2, 8, 1, -4)    // cotangent, no zero
	vT   = q(spec.Shape{6}, 1, 2, -3, -1, 2, 3)    // tangent
	vP   = q(spec.Shape{6}, 1, 3, 6, 9, 2, 11)     // positive (log, sqrt)
	vS   = q(spec.Shape{6}, 2, -3, 1, 5, -6, -1)   // smooth points (no zero, |x| ≤ 3/2)
	mA   = q(spec.Shape{2, 3}, 1, -2, 0, 4, 3, -1) // matrices
	mB   = q(spec.Shape{3, 2}, 2, 0, -3, 1, 5, -4)
	mC23 = q(spec.Shape{2, 3}, 3, -1, 2, 5, -2, 1)
	mC22 = q(spec.Shape{2, 2}, 3, -1, 2, 5)
	mT23 = q(spec.Shape{2, 3}, -1, 2, 1, 3, -2, 2)
	mT32 = q(spec.Shape{3, 2}, 2, 1, -1, -3, 2, 1)
)

func unary(name, op string, a *spec.Attrs, x, cot, tan spec.Tensor[spec.Rat]) Case {
	return Case{Name: name, Graph: Graph{Inputs: 1, Nodes: []Node{{Op: op, Attrs: a, Args: []int{0}}}},
		Xs: []spec.Tensor[spec.Rat]{x}, Cot: cot, Tangents: []spec.Tensor[spec.Rat]{tan}}
}

func binary(name, op string, a *spec.Attrs, x, y, cot, tx, ty spec.Tensor[spec.Rat]) Case {
	return Case{Name: name, Graph: Graph{Inputs: 2, Nodes: []Node{{Op: op, Attrs: a, Args: []int{0, 1}}}},
		Xs: []spec.Tensor[spec.Rat]{x, y}, Cot: cot, Tangents: []spec.Tensor[spec.Rat]{tx, ty}}
}

// kinks marks the elements of x equal to one of ks/4 with the Clarke
// interval [lo, hi].
func kinks(x spec.Tensor[spec.Rat], lo, hi spec.Rat, ks ...int64) []*[2]spec.Rat {
	out := make([]*[2]spec.Rat, len(x.Data))
	for i, v := range x.Data {
		for _, k := range ks {
			if v.Same(spec.NewRat(k, 4)) {
				out[i] = &[2]spec.Rat{lo, hi}
			}
		}
	}
	return out
}

// Cases are the engine-independent cases: one-op cases for the registry
// primitives an engine is likely to have, ties and kinks on purpose, and
// small DAGs with fan-out and shared leaves. Names are unique.
func Cases() []Case {
	one, zero, mone := spec.NewRat(1, 1), spec.Rat{}, spec.NewRat(-1, 1)
	relu := unary("relu", "relu", nil, vA, vC, maskZeros(vT, vA, 0))
	relu.Kinks = kinks(vA, zero, one, 0)
	abs := unary("abs", "abs", nil, vA, vC, maskZeros(vT, vA, 0))
	abs.Kinks = kinks(vA, mone, one, 0)
	clampX := q(spec.Shape{6}, -2, 4, 0, -8, 2, 12) // hits lo = −1/2 and hi = 1
	clamp := unary("clamp", "clamp", &spec.Attrs{Lo: rat(-1, 2), Hi: rat(1, 1)}, clampX, vC, maskZeros(vT, clampX, -2, 4))
	clamp.Kinks = kinks(clampX, zero, one, -2, 4)
	maxTie := binary("max_tie", "max", nil, vA, vB, vC, ones(vA.Shape), ones(vB.Shape))
	maxTie.Tie = true
	minTie := binary("min_tie", "min", nil, vA, vB, vC, ones(vA.Shape), ones(vB.Shape))
	minTie.Tie = true
	nonzero := q(spec.Shape{6}, 4, -2, 6, 12, -8, 1)

	img := q(spec.Shape{1, 1, 3, 4}, 1, -2, 0, 4, 3, -1, 2, 5, -3, 1, 6, -4)
	imgC := q(spec.Shape{1, 1, 2, 3}, 3, -1, 2, 5, -2, 1)
	kern := q(spec.Shape{1, 1, 2, 2}, 2, -1, 1, 3)
	conv := binary("conv", "conv", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Pads: []int{0, 0, 0, 0}, Dilation: []int{1, 1}, Groups: 1}},
		img, kern, imgC, q(img.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1), q(kern.Shape, 1, -2, 3, 1))
	poolX := q(spec.Shape{1, 1, 2, 4}, 4, 4, -2, 3, 1, 0, 3, -1) // window {0,1}×{0,1} ties at 1
	pool := unary("max_pool_tie", "max_pool", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 0, 0, 0}}},
		poolX, q(spec.Shape{1, 1, 1, 2}, 3, -5), ones(poolX.Shape))
	pool.Tie = true
	avg := unary("avg_pool", "avg_pool", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 0, 0, 0}}},
		poolX, q(spec.Shape{1, 1, 1, 2}, 3, -5), q(poolX.Shape, 1, -1, 2, 3, -2, 1, 1, 2))

	m24 := q(spec.Shape{2, 4}, 1, -2, 5, 4, 3, -1, 0, 6)
	c24 := q(spec.Shape{2, 4}, 3, -1, 2, 5, -2, 1, 4, -3)
	t24 := q(spec.Shape{2, 4}, -1, 2, 1, 3, -2, 2, 1, -1)
	p232 := q(spec.Shape{2, 3, 2}, 1, -2, 0, 4, 3, -1, 2, 5, -3, 1, 6, -4)
	c232 := q(spec.Shape{2, 2, 3}, 3, -1, 2, 5, -2, 1, 4, -3, 1, 2, -2, 1)

	cs := []Case{
		unary("neg", "neg", nil, vA, vC, vT),
		unary("square", "square", nil, vA, vC, vT),
		abs, relu, clamp,
		unary("scale", "scale", &spec.Attrs{C: rat(-3, 2)}, vA, vC, vT),
		unary("sigmoid", "sigmoid", nil, vS, vC, vT),
		unary("tanh", "tanh", nil, vS, vC, vT),
		unary("exp", "exp", nil, vS, vC, vT),
		unary("log", "log", nil, vP, vC, vT),
		unary("sqrt", "sqrt", nil, vP, vC, vT),
		unary("inv", "inv", nil, nonzero, vC, vT),
		unary("sin", "sin", nil, vS, vC, vT),
		unary("cos", "cos", nil, vS, vC, vT),
		unary("softplus", "softplus", nil, vS, vC, vT),
		unary("gelu", "gelu", nil, vS, vC, vT),
		binary("add", "add", nil, vA, vB, vC, vT, vS),
		binary("sub", "sub", nil, vA, vB, vC, vT, vS),
		binary("mul", "mul", nil, vA, vB, vC, vT, vS),
		binary("div", "div", nil, vA, nonzero, vC, vT, vS),
		maxTie, minTie,
		binary("matmul", "matmul", nil, mA, mB, mC22, mT23, mT32),
		{Name: "linear", Graph: Graph{Inputs: 3, Nodes: []Node{{Op: "linear", Args: []int{0, 1, 2}}}},
			Xs: []spec.Tensor[spec.Rat]{mA, q(spec.Shape{2, 3}, 2, 0, -3, 1, 5, -4), q(spec.Shape{2}, 1, -3)}, Cot: mC22,
			Tangents: []spec.Tensor[spec.Rat]{mT23, mT23, q(spec.Shape{2}, 2, 1)}},
		unary("sum", "sum", nil, mA, spec.Scalar0(spec.NewRat(-5, 4)), mT23),
		unary("reduce_sum", "reduce_sum", &spec.Attrs{Axis: 1}, mA, q(spec.Shape{2}, 3, -5), mT23),
		unary("reduce_mean", "reduce_mean", &spec.Attrs{Axis: 1}, m24, q(spec.Shape{2}, 3, -5), t24),
		binary("mse_loss", "mse_loss", nil, vA, vB, spec.Scalar0(spec.NewRat(3, 4)), vT, vS),
		unary("reshape", "reshape", &spec.Attrs{Shape: spec.Shape{3, 2}}, mA, q(spec.Shape{3, 2}, 3, -1, 2, 5, -2, 1), mT23),
		unary("flatten", "flatten", nil, mA, vC, mT23),
		unary("transpose", "transpose", &spec.Attrs{Axis: 0, Axis2: 1}, mA, q(spec.Shape{3, 2}, 3, -1, 2, 5, -2, 1), mT23),
		unary("permute", "permute", &spec.Attrs{Perm: []int{0, 2, 1}}, p232, c232, q(p232.Shape, 1, 2, -1, 3, -2, 1)),
		unary("broadcast_to", "broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 3}}, q(spec.Shape{1, 3}, 1, -2, 3), mC23, q(spec.Shape{1, 3}, 2, 1, -1)),
		unary("slice", "slice", &spec.Attrs{Axis: 1, Start: 1, End: 3}, m24, mC22, t24),
		binary("concat", "concat", &spec.Attrs{Axis: 0}, mA, q(spec.Shape{1, 3}, 2, -1, 3), q(spec.Shape{3, 3}, 3, -1, 2, 5, -2, 1, 4, -3, 1), mT23, q(spec.Shape{1, 3}, 1, 1, -2)),
		unary("softmax", "softmax", &spec.Attrs{Axis: 1}, mA, mC23, mT23),
		unary("log_softmax", "log_softmax", &spec.Attrs{Axis: 1}, mA, mC23, mT23),
		unary("layer_norm", "layer_norm", &spec.Attrs{Axis: 1, Eps: rat(1, 100000)}, m24, c24, t24),
		conv, pool, avg,
	}
	cs = append(cs, dags()...)
	seen := map[string]bool{}
	for _, c := range cs {
		if seen[c.Name] {
			panic(fmt.Sprint("harness: duplicate case ", c.Name))
		}
		seen[c.Name] = true
	}
	return cs
}

// dags are small multi-op graphs with fan-out (a value read by several
// nodes, or twice by one) and shared leaves (an input read at several
// depths): their gradients are path sums.
func dags() []Case {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	dag := func(name string, inputs int, xs, tans []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], nodes ...Node) Case {
		return Case{Name: name, DAG: true, Graph: Graph{Inputs: inputs, Nodes: nodes}, Xs: xs, Cot: cot, Tangents: tans}
	}
	w := q(spec.Shape{3, 2}, 2, -1, 1, 3, -2, 1)
	return []Case{
		// y = x⊙x + x⊙x: x read four times, the product twice.
		dag("dag_fanout", 1, []spec.Tensor[spec.Rat]{vA}, []spec.Tensor[spec.Rat]{vT}, vC,
			n("mul", nil, 0, 0), n("add", nil, 1, 1)),
		// y = relu(x⊙w) − w: w read at two depths (off the kinks).
		dag("dag_shared_leaf", 2, []spec.Tensor[spec.Rat]{vS, vB}, []spec.Tensor[spec.Rat]{vT, vS}, vC,
			n("mul", nil, 0, 1), n("relu", nil, 2), n("sub", nil, 3, 1)),
		// y = exp(x)⊙sin(x): a diamond.
		dag("dag_diamond", 1, []spec.Tensor[spec.Rat]{vS}, []spec.Tensor[spec.Rat]{vT}, vC,
			n("exp", nil, 0), n("sin", nil, 0), n("mul", nil, 1, 2)),
		// A two-layer perceptron's loss: sum(tanh(x·W1)·W2) + sum(x).
		dag("dag_mlp", 3, []spec.Tensor[spec.Rat]{mA, mB, q(spec.Shape{2, 2}, 1, -3, 2, 1)},
			[]spec.Tensor[spec.Rat]{mT23, mT32, q(spec.Shape{2, 2}, 2, 1, -1, 1)}, spec.Scalar0(spec.NewRat(3, 4)),
			n("matmul", nil, 0, 1), n("tanh", nil, 3), n("matmul", nil, 4, 2), n("sum", nil, 5), n("sum", nil, 0), n("add", nil, 6, 7)),
		// A residual block: x + relu(x·W)·Wᵀ… in one dimension: x + tanh(x)⊙x.
		dag("dag_residual", 1, []spec.Tensor[spec.Rat]{vS}, []spec.Tensor[spec.Rat]{vT}, vC,
			n("tanh", nil, 0), n("mul", nil, 1, 0), n("add", nil, 0, 2)),
		// Cross-entropy with soft targets t: −sum(log_softmax(z·W) ⊙ t).
		dag("dag_xent", 3, []spec.Tensor[spec.Rat]{mA, w, q(spec.Shape{2, 2}, 1, 3, 2, 2)},
			[]spec.Tensor[spec.Rat]{mT23, mT32, q(spec.Shape{2, 2}, 0, 0, 0, 0)}, spec.Scalar0(spec.NewRat(-1, 1)),
			n("matmul", nil, 0, 1), n("log_softmax", &spec.Attrs{Axis: 1}, 3), n("mul", nil, 4, 2), n("sum", nil, 5)),
	}
}

// AllCases are Cases followed by every extra case list (shapes and
// attributes added while writing an adapter: CasesExtraGorgonia,
// CasesExtraSpago, CasesExtraGomlx; and the random cases' shrunk
// findings, CasesExtraRandom): the list tlcheck adapters run gives every
// engine.
func AllCases() []Case {
	out := append(Cases(), CasesExtraGorgonia()...)
	out = append(out, CasesExtraSpago()...)
	out = append(out, CasesExtraGomlx()...)
	return append(out, CasesExtraRandom()...)
}

// CaseNamed returns the case of AllCases with this name.
func CaseNamed(name string) (Case, bool) {
	for _, c := range AllCases() {
		if c.Name == name {
			return c, true
		}
	}
	return Case{}, false
}
