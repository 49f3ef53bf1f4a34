package harness

import "github.com/tlcheck/tlcheck/spec"

// CasesExtraRandom are the smallest counterexamples the random cases
// (RandomCases, tlcheck adapters run --random) found, kept as fixed,
// engine-independent cases under descriptive names: each is a shrunk
// random case (graph, inputs and cotangent as the shrinker printed
// them, a tangent added where the point is smooth) whose failure on some
// engine was new (adapters/FINDINGS.md). They are checked against
// tlcheck's own rules by TestCasesExtraRandomSelf. Names are unique and
// distinct from every other case list.
//
//	broadcast_one_to_vector      broadcast_to [3] of a one-element vector
//	one_element_exp, _tanh,      exp, tanh, x ⊙ x and concat of
//	_mul_self, _concat           one-element vectors
//	log_sigmoid                  log(sigmoid(x)), which gorgonia rewrites
//	reshape_scalar               reshape of a mean (a scalar) to [1]
//	exp_reshape_square           exp(x) reshaped, then squared
//	abs_by_max_reshape_relu      relu(reshape(max(x, −x)))
//	one_element_concat           concat(y, x) with a one-element y
//	log_softmax_and_softmax      log(softmax(x)) + softmax(x)
//	neg_neg                      −(−x)
//	softplus_far_negative        softplus at x = −30, −24, −20, 1/2
//	softmax_times_log_softmax    softmax(x) ⊙ log_softmax(x)
//	max_transposed               max(xᵀ, y): an operand that is an
//	                             operator's output (spago's Max backward)
func CasesExtraRandom() []Case {
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	dag := func(name string, xs, tans []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], inputs int, nodes ...Node) Case {
		return Case{Name: name, DAG: len(nodes) > 1, Graph: Graph{Inputs: inputs, Nodes: nodes}, Xs: xs, Cot: cot, Tangents: tans}
	}
	ts := func(t ...spec.Tensor[spec.Rat]) []spec.Tensor[spec.Rat] { return t }
	one := func(k int64) spec.Tensor[spec.Rat] { return q(spec.Shape{1}, k) }
	x4 := q(spec.Shape{4}, 2, -2, -4, 7)
	x41 := q(spec.Shape{4, 1}, 2, 9, -3, 12)
	return []Case{
		// rand-1-282, shrunk: x (shape [1]) broadcast to [3].
		dag("broadcast_one_to_vector", ts(one(5)), ts(one(1)), q(spec.Shape{3}, 3, -5, 2), 1,
			n("broadcast_to", &spec.Attrs{Shape: spec.Shape{3}}, 0)),
		// rand-1-110, shrunk: exp of x = [5/4], c = [−7/4].
		dag("one_element_exp", ts(one(5)), ts(one(1)), one(-7), 1, n("exp", nil, 0)),
		// rand-1-42, shrunk: tanh of x = [−3], c = [3/2].
		dag("one_element_tanh", ts(one(-12)), ts(one(1)), one(6), 1, n("tanh", nil, 0)),
		// rand-1-13, shrunk: x ⊙ x at x = [5/2], c = [−2].
		dag("one_element_mul_self", ts(one(10)), ts(one(1)), one(-8), 1, n("mul", nil, 0, 0)),
		// rand-1-171, shrunk (on two elements): log(sigmoid(x)).
		dag("log_sigmoid", ts(q(spec.Shape{2}, 10, -4)), ts(q(spec.Shape{2}, 1, 2)), q(spec.Shape{2}, 2, -3), 1,
			n("sigmoid", nil, 0), n("log", nil, 1)),
		// rand-1-164, shrunk: reshape(reduce_mean(x, 0), [1]).
		dag("reshape_scalar", ts(q(spec.Shape{2}, 7, 5)), ts(q(spec.Shape{2}, 1, -2)), one(-4), 1,
			n("reduce_mean", &spec.Attrs{Axis: 0}, 0), n("reshape", &spec.Attrs{Shape: spec.Shape{1}}, 1)),
		// rand-1-1753, shrunk, with square for its scale: exp(x) reshaped
		// to a column, squared.
		dag("exp_reshape_square", ts(x4), ts(q(spec.Shape{4}, 1, -1, 2, 1)), q(spec.Shape{4, 1}, -6, -5, 3, -6), 1,
			n("exp", nil, 0), n("reshape", &spec.Attrs{Shape: spec.Shape{4, 1}}, 1), n("square", nil, 2)),
		// rand-1-659, shrunk by hand further (the clamp replaced by −x):
		// relu(reshape(max(x, −x), [1, 4])) = |x|, no tie or kink.
		dag("abs_by_max_reshape_relu", ts(x41), ts(q(spec.Shape{4, 1}, 1, -1, 2, 1)), q(spec.Shape{1, 4}, -2, -1, 6, -4), 1,
			n("neg", nil, 0), n("max", nil, 0, 1), n("reshape", &spec.Attrs{Shape: spec.Shape{1, 4}}, 2), n("relu", nil, 3)),
		// rand-1-649, shrunk: concat(y, x) along axis 0 for a
		// one-element y.
		dag("one_element_concat", ts(q(spec.Shape{2}, -5, -10), one(-11)), ts(q(spec.Shape{2}, 1, 2), one(-1)), q(spec.Shape{3}, -5, -8, 3), 2,
			n("concat", &spec.Attrs{Axis: 0}, 1, 0)),
		// rand-3-1917, shrunk by hand: log(softmax(x)) + softmax(x), both
		// read (a cross-entropy and the probabilities).
		dag("log_softmax_and_softmax", ts(q(spec.Shape{4}, 3, -2, 11, -12)), ts(q(spec.Shape{4}, 1, -1, 2, 1)), q(spec.Shape{4}, -7, 6, -4, 4), 1,
			n("softmax", &spec.Attrs{Axis: 0}, 0), n("log", nil, 1), n("add", nil, 2, 1)),
		// rand-3-1608, shrunk: −(−x).
		dag("neg_neg", ts(q(spec.Shape{2}, -7, 4)), ts(q(spec.Shape{2}, 1, 2)), q(spec.Shape{2}, 4, 6), 1,
			n("neg", nil, 0), n("neg", nil, 1)),
		// rand-2-345, shrunk by hand: softplus far below 0, where
		// log(1 + eˣ) ≈ eˣ and 1 + eˣ rounds.
		dag("softplus_far_negative", ts(q(spec.Shape{4}, -120, -96, -80, 2)), ts(q(spec.Shape{4}, 1, -1, 2, 1)), q(spec.Shape{4}, 3, -5, 2, 4), 1,
			n("softplus", nil, 0)),
		// rand-2-1902, shrunk: softmax(x) ⊙ log_softmax(x) (minus the
		// entropy), x without a tie.
		dag("softmax_times_log_softmax", ts(q(spec.Shape{4}, 0, 5, 8, -3)), ts(q(spec.Shape{4}, 1, -1, 2, 1)), q(spec.Shape{4}, 2, -4, -6, -5), 1,
			n("softmax", &spec.Attrs{Axis: 0}, 0), n("log_softmax", &spec.Attrs{Axis: 0}, 0), n("mul", nil, 1, 2)),
		// rand-1-3 (spago's process exit), shrunk by hand: max(xᵀ, y)
		// with distinct values (no tie).
		dag("max_transposed", ts(q(spec.Shape{2, 3}, -11, 9, -4, -3, 3, -10), q(spec.Shape{3, 2}, 1, 2, -5, 4, 6, -12)),
			ts(q(spec.Shape{2, 3}, 1, -1, 2, 1, -2, 1), q(spec.Shape{3, 2}, 2, 1, -1, 1, 1, -2)),
			q(spec.Shape{3, 2}, -7, -1, 3, 8, 2, 8), 2,
			n("transpose", &spec.Attrs{Axis: 0, Axis2: 1}, 0), n("max", nil, 2, 1)),
	}
}
