package harness

import "github.com/tlcheck/tlcheck/spec"

// PoolEdgeCases are max pooling cases beyond Cases' tie case, found for
// the spago adapter but engine-independent: a window whose elements are
// all negative (an engine that starts its running maximum at 0 or at the
// smallest positive number instead of −∞ gets its value and its argmax
// wrong) and non-square kernels (an engine that mixes up the kernel's
// height and width reads the wrong elements). No tie, no kink: the exact
// gradient is unique and the bound is 0.
func PoolEdgeCases() []Case {
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
	return []Case{
		unary("max_pool_negative", "max_pool", win(2, 2), neg, q(spec.Shape{1, 1, 1, 2}, 3, -5), q(neg.Shape, 1, -1, 2, 3, -2, 3, 1, 2)),
		unary("max_pool_1x2", "max_pool", win(1, 2), wide, q(spec.Shape{1, 1, 2, 2}, 3, -5, 2, 1), q(wide.Shape, 1, -1, 2, 3, -2, 1, 1, 2)),
		unary("max_pool_2x1", "max_pool", win(2, 1), tall, q(spec.Shape{1, 1, 1, 3}, 3, -5, 2), q(tall.Shape, 1, -1, 2, 3, -2, 1)),
	}
}
