package harness

import (
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// CasesExtraGomlx are engine-independent cases added with the GoMLX
// adapter, at points the shared cases leave out (sqrt at 0 is
// CasesExtraSpago's sqrt_zero): the L2 norm sqrt(Σx²) of a zero row
// (not differentiable there, 0 a valid subgradient: the Clarke
// subdifferential of ‖x‖ at 0 is the unit ball); x/(‖x‖ + ε) at a zero
// row (differentiable there, so a NaN is wrong under any convention);
// softplus at 0 (where an engine that computes it as max(x, 0) +
// log1p(e^−|x|) meets two ties at once); softmax over a row with tied
// maxima (an engine that subtracts the row maximum differentiates
// through, or stops at, a tied max); an input the output does not depend
// on (its gradient is zero); and shapes where an adapter's axis or
// broadcast semantics can go wrong unseen by rank-2 cases. Every engine
// may run them; the self engine holds on all of them
// (TestCasesExtraGomlxSelf).
func CasesExtraGomlx() []Case {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	spX := q(spec.Shape{6}, 0, 4, -4, 0, 2, -2)
	p232 := q(spec.Shape{2, 3, 2}, 1, -2, 3, 5, 7, 1, -2, 3, 5, 7, 1, -2)
	c232b := q(spec.Shape{2, 3, 2}, 3, -1, 2, 4, -2, 1)
	t232 := q(spec.Shape{2, 3, 2}, 1, 2, -1, 3, -2, 1)
	smX := q(spec.Shape{2, 3}, 4, 4, -2, 0, 0, 0) // row 0: a tied maximum; row 1: all tied
	return []Case{
		unary("softplus_tie", "softplus", nil, spX, vC, vT),
		unary("softmax_tie", "softmax", &spec.Attrs{Axis: 1}, smX, mC23, mT23),
		// Shapes where an adapter's axis or broadcast semantics can differ
		// from the registry's without a rank-2 case noticing: layer_norm
		// along one middle axis (the registry normalizes along Axis
		// only), numpy broadcasting of a middle 1, of a scalar and to a
		// higher rank (new axes in front), a reshape to rank 0, and a
		// batched matmul.
		unary("layer_norm_mid_axis", "layer_norm", &spec.Attrs{Axis: 1, Eps: big.NewRat(1, 100000)}, p232, c232b, t232),
		unary("broadcast_to_mid", "broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 4, 3}}, q(spec.Shape{2, 1, 3}, 1, -2, 3, 5, 7, -1),
			q(spec.Shape{2, 4, 3}, 3, -1, 2, 5, 1), q(spec.Shape{2, 1, 3}, 2, 1, -1, 3, -2, 1)),
		unary("broadcast_to_scalar", "broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 3}}, spec.Scalar0(spec.NewRat(3, 4)),
			q(spec.Shape{2, 3}, 3, -1, 2, 5, 1, -2), spec.Scalar0(spec.NewRat(-1, 2))),
		unary("broadcast_to_rank", "broadcast_to", &spec.Attrs{Shape: spec.Shape{4, 2, 3}}, q(spec.Shape{3}, 1, -2, 3),
			q(spec.Shape{4, 2, 3}, 3, -1, 2, 5, 1), q(spec.Shape{3}, 2, 1, -1)),
		unary("reshape_to_scalar", "reshape", &spec.Attrs{Shape: spec.Shape{}}, q(spec.Shape{1, 1}, 5), spec.Scalar0(spec.NewRat(-3, 4)), q(spec.Shape{1, 1}, 2)),
		binary("matmul_batched", "matmul", nil, q(spec.Shape{2, 2, 3}, 1, -2, 3, 5, 7), q(spec.Shape{2, 3, 2}, 2, -1, 0, 3, -5),
			q(spec.Shape{2, 2, 2}, 3, -1, 2, 4), q(spec.Shape{2, 2, 3}, 1, 2, -1), q(spec.Shape{2, 3, 2}, -1, 1, 2)),
		// ‖x_r‖ per row r of x = [[0, 0, 0], [1/4, −1/2, 1/2]]: the first
		// row's norm is 0, the second's 3/4 (exact). No tangent: the norm
		// is not differentiable along any direction moving the zero row.
		// y = −x0 with x1 unused: the gradient of x1 is exactly zero, of
		// x1's shape (an engine may return none, or fail).
		{Name: "dag_unused_input", DAG: true, Graph: Graph{Inputs: 2, Nodes: []Node{n("neg", nil, 0)}},
			Xs: []spec.Tensor[spec.Rat]{vA, vS}, Cot: vC, Tangents: []spec.Tensor[spec.Rat]{vT, vS}},
		// x/(‖x_r‖ + ε) per row r, ε an input (1/4 for both rows), at
		// x = [[0, 0, 0], [1/4, −1/2, 1/2]]: differentiable everywhere
		// (at the zero row the Jacobian is I/ε: the ‖x‖ term is
		// o(‖x‖)), so no convention is involved; an engine whose sqrt′(0)
		// is ∞ computes Inf·0 = NaN there.
		{Name: "dag_l2normalize_eps_zero", DAG: true, Graph: Graph{Inputs: 2, Nodes: []Node{
			n("square", nil, 0), n("reduce_sum", &spec.Attrs{Axis: 1}, 2), n("sqrt", nil, 3), n("add", nil, 4, 1),
			n("reshape", &spec.Attrs{Shape: spec.Shape{2, 1}}, 5), n("broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 3}}, 6), n("div", nil, 0, 7)}},
			Xs:       []spec.Tensor[spec.Rat]{q(spec.Shape{2, 3}, 0, 0, 0, 1, -2, 2), q(spec.Shape{2}, 1)},
			Cot:      q(spec.Shape{2, 3}, 3, -5, 2, 1, 2, -3),
			Tangents: []spec.Tensor[spec.Rat]{q(spec.Shape{2, 3}, 1, 2, -1, -2, 1, 3), q(spec.Shape{2}, 2, -1)}},
		{Name: "dag_l2norm_zero", DAG: true, Graph: Graph{Inputs: 1, Nodes: []Node{
			n("square", nil, 0), n("reduce_sum", &spec.Attrs{Axis: 1}, 1), n("sqrt", nil, 2)}},
			Xs: []spec.Tensor[spec.Rat]{q(spec.Shape{2, 3}, 0, 0, 0, 1, -2, 2)}, Cot: q(spec.Shape{2}, 3, -5)},
	}
}
