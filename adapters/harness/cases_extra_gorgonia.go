package harness

import "github.com/tlcheck/tlcheck/spec"

// CasesExtraGorgonia are one-op cases added for the gorgonia adapter
// (package gorgonia) beside Cases(): shapes and attributes that the
// shared cases leave out and where gorgonia's code has a branch of its
// own: pooling windows whose area differs from the input's width,
// overlapping and padded windows, strided and padded convolution, and
// reductions and softmax along axis 0. Names are unique and distinct from
// Cases().
func CasesExtraGorgonia() []Case {
	win := func(k, s, p int) *spec.Attrs {
		return &spec.Attrs{Window: &spec.Window{Kernel: []int{k, k}, Stride: []int{s, s}, Pads: []int{p, p, p, p}, Dilation: []int{1, 1}, Groups: 1}}
	}
	pwin := func(k, s int) *spec.Attrs {
		return &spec.Attrs{Window: &spec.Window{Kernel: []int{k, k}, Stride: []int{s, s}, Pads: []int{0, 0, 0, 0}}}
	}
	// 2×6 image, 2×2 windows at stride 2: three windows, width 6 ≠ area 4.
	wide := q(spec.Shape{1, 1, 2, 6}, 1, -2, 0, 4, 3, -1, 2, 5, -3, 1, 6, -4)
	wideT := q(wide.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1)
	c13 := q(spec.Shape{1, 1, 1, 3}, 3, -5, 2)
	// 3×3 image, 2×2 windows at stride 1 (overlapping), distinct values.
	sq := q(spec.Shape{1, 1, 3, 3}, 1, -2, 7, 4, 3, -1, 2, 5, -3)
	sqT := q(sq.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2)
	c22 := q(spec.Shape{1, 1, 2, 2}, 3, -1, 2, 5)
	img := q(spec.Shape{1, 1, 3, 4}, 1, -2, 0, 4, 3, -1, 2, 5, -3, 1, 6, -4)
	imgT := q(img.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1)
	kern := q(spec.Shape{1, 1, 2, 2}, 2, -1, 1, 3)
	kernT := q(kern.Shape, 1, -2, 3, 1)
	m24 := q(spec.Shape{2, 4}, 1, -2, 5, 4, 3, -1, 0, 6)
	t24 := q(spec.Shape{2, 4}, -1, 2, 1, 3, -2, 2, 1, -1)
	c24 := q(spec.Shape{2, 4}, 3, -1, 2, 5, -2, 1, 4, -3)
	// Batch 2, channels 2: 2×2×2×4 with distinct values.
	bc := q(spec.Shape{2, 2, 2, 4}, 1, -2, 5, 4, 3, -1, 0, 6, -3, 7, 2, -5, 8, 1, -4, 9, 10, -6, 3, 2, -7, 11, 4, -8, 5, 12, -9, 6, 1, -10, 7, 3)
	bcT := q(bc.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3)
	bcC := q(spec.Shape{2, 2, 1, 2}, 3, -5, 2, 1, -1, 4, -2, 6)
	// conv: batch 2, 2 in-channels, 3 out-channels, 2×2 kernels, 3×3 images.
	cx := q(spec.Shape{2, 2, 3, 3}, 1, -2, 3, 0, 4, -1, 2, 5, -3, 1, 6, -4, 2, -1, 3, 5, -2, 1, 4, -3, 1, 2, -2, 1, 3, -1, 2, 5, -2, 1, 4, -3, 1, 2, -2, 1)
	cw := q(spec.Shape{3, 2, 2, 2}, 2, -1, 1, 3, -2, 1, 1, -1, 2, 3, -3, 1, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1)
	cc := q(spec.Shape{2, 3, 2, 2}, 3, -1, 2, 5, -2, 1, 4, -3, 1, 2, -2, 1, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1)
	n := func(op string, a *spec.Attrs, args ...int) Node { return Node{Op: op, Attrs: a, Args: args} }
	sqm := q(spec.Shape{2, 2}, 1, -3, 2, 5)
	r3 := q(spec.Shape{2, 3, 2}, 1, -2, 0, 4, 3, -1, 2, 5, -3, 1, 6, -4)
	r3T := q(r3.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2, 3, -3, 1)
	r3C := q(r3.Shape, 3, -1, 2, 5, -2, 1, 4, -3, 1, 2, -2, 1)
	img44 := q(spec.Shape{1, 1, 4, 4}, 1, -2, 7, 4, 3, -1, 2, 5, -3, 6, -4, 8, 0, 9, -5, 10)
	img44T := q(img44.Shape, 1, 2, -1, 3, -2, 1, 1, -1, 2)
	return []Case{
		// 2×2 kernel, dilation 2, on 4×4: 2×2 output.
		binary("conv_dilated", "conv", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Pads: []int{0, 0, 0, 0}, Dilation: []int{2, 2}, Groups: 1}},
			img44, kern, q(spec.Shape{1, 1, 2, 2}, 3, -1, 2, 5), img44T, kernT),
		// 2×3 kernel, stride (1, 2), on 3×4 padded by (0, 1): 2×2 output.
		binary("conv_rect", "conv", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 3}, Stride: []int{1, 2}, Pads: []int{0, 1, 0, 1}, Dilation: []int{1, 1}, Groups: 1}},
			img, q(spec.Shape{1, 1, 2, 3}, 2, -1, 1, 3, -2, 1), q(spec.Shape{1, 1, 2, 2}, 3, -1, 2, 5), imgT, q(spec.Shape{1, 1, 2, 3}, 1, -2, 3, 1, 2, -1)),
		// 2×2 windows at stride 2 on 4×4 padded by 1 (distinct values): 3×3 output.
		unary("max_pool_pad", "max_pool", &spec.Attrs{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{1, 1, 1, 1}}},
			img44, q(spec.Shape{1, 1, 3, 3}, 3, -1, 2, 5, -2, 1, 4, -3, 1), img44T),
		// 1×2 windows at stride (1, 2): 4×2 output.
		unary("max_pool_rect", "max_pool", &spec.Attrs{Window: &spec.Window{Kernel: []int{1, 2}, Stride: []int{1, 2}, Pads: []int{0, 0, 0, 0}}},
			img44, q(spec.Shape{1, 1, 4, 2}, 3, -1, 2, 5, -2, 1, 4, -3), img44T),
		unary("max_pool_batch", "max_pool", pwin(2, 2), bc, bcC, bcT),
		binary("conv_batch", "conv", win(2, 1, 0), cx, cw, cc, q(cx.Shape, 1, -1, 2), q(cw.Shape, 2, 1, -1)),
		unary("softmax_mid_axis", "softmax", &spec.Attrs{Axis: 1}, r3, r3C, r3T),
		unary("log_softmax_mid_axis", "log_softmax", &spec.Attrs{Axis: 1}, r3, r3C, r3T),
		unary("reduce_sum_mid_axis", "reduce_sum", &spec.Attrs{Axis: 1}, r3, q(spec.Shape{2, 2}, 3, -5, 2, 1), r3T),
		unary("reduce_mean_mid_axis", "reduce_mean", &spec.Attrs{Axis: 1}, r3, q(spec.Shape{2, 2}, 3, -5, 2, 1), r3T),
		// x·x: a shared leaf read as both matmul operands.
		{Name: "dag_matmul_shared", DAG: true, Graph: Graph{Inputs: 1, Nodes: []Node{n("matmul", nil, 0, 0)}},
			Xs: []spec.Tensor[spec.Rat]{sqm}, Cot: q(spec.Shape{2, 2}, 3, -1, 2, 5), Tangents: []spec.Tensor[spec.Rat]{q(spec.Shape{2, 2}, 2, 1, -1, 1)}},
		// softmax(x) ⊙ x: softmax's input fanned out to a product.
		{Name: "dag_softmax_fanout", DAG: true, Graph: Graph{Inputs: 1, Nodes: []Node{n("softmax", &spec.Attrs{Axis: 1}, 0), n("mul", nil, 1, 0)}},
			Xs: []spec.Tensor[spec.Rat]{m24}, Cot: c24, Tangents: []spec.Tensor[spec.Rat]{t24}},
		// broadcast_to(b) ⊙ broadcast_to(b) + x: a broadcast leaf read twice.
		{Name: "dag_broadcast_shared", DAG: true, Graph: Graph{Inputs: 2, Nodes: []Node{
			n("broadcast_to", &spec.Attrs{Shape: spec.Shape{2, 4}}, 1), n("mul", nil, 2, 2), n("add", nil, 3, 0)}},
			Xs: []spec.Tensor[spec.Rat]{m24, q(spec.Shape{1, 4}, 1, -3, 2, 5)}, Cot: c24, Tangents: []spec.Tensor[spec.Rat]{t24, q(spec.Shape{1, 4}, 2, 1, -1, 1)}},
		// sum(x) − mean(x) along axis 1, both reductions of one leaf.
		{Name: "dag_reduce_fanout", DAG: true, Graph: Graph{Inputs: 1, Nodes: []Node{
			n("reduce_sum", &spec.Attrs{Axis: 1}, 0), n("reduce_mean", &spec.Attrs{Axis: 1}, 0), n("sub", nil, 1, 2)}},
			Xs: []spec.Tensor[spec.Rat]{m24}, Cot: q(spec.Shape{2}, 3, -5), Tangents: []spec.Tensor[spec.Rat]{t24}},
		unary("avg_pool_wide", "avg_pool", pwin(2, 2), wide, c13, wideT),
		unary("max_pool_wide", "max_pool", pwin(2, 2), wide, c13, wideT),
		unary("avg_pool_overlap", "avg_pool", pwin(2, 1), sq, c22, sqT),
		unary("max_pool_overlap", "max_pool", pwin(2, 1), sq, c22, sqT),
		// 3×4 image padded by 1, 2×2 kernel at stride 2: output 2×3.
		binary("conv_pad_stride", "conv", win(2, 2, 1), img, kern, q(spec.Shape{1, 1, 2, 3}, 3, -1, 2, 5, -2, 1), imgT, kernT),
		unary("reduce_sum_axis0", "reduce_sum", &spec.Attrs{Axis: 0}, m24, q(spec.Shape{4}, 3, -5, 2, 1), t24),
		unary("reduce_mean_axis0", "reduce_mean", &spec.Attrs{Axis: 0}, m24, q(spec.Shape{4}, 3, -5, 2, 1), t24),
		unary("softmax_axis0", "softmax", &spec.Attrs{Axis: 0}, m24, c24, t24),
		unary("log_softmax_axis0", "log_softmax", &spec.Attrs{Axis: 0}, m24, c24, t24),
		binary("concat_axis1", "concat", &spec.Attrs{Axis: 1}, m24, q(spec.Shape{2, 1}, 2, -1), q(spec.Shape{2, 5}, 3, -1, 2, 5, -2, 1, 4, -3, 1, 2), t24, q(spec.Shape{2, 1}, 1, 1)),
		unary("slice_axis0", "slice", &spec.Attrs{Axis: 0, Start: 0, End: 2}, q(spec.Shape{3, 2}, 2, 0, -3, 1, 5, -4), q(spec.Shape{2, 2}, 3, -1, 2, 5), q(spec.Shape{3, 2}, 2, 1, -1, -3, 2, 1)),
	}
}
