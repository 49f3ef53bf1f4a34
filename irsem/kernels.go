package irsem

import "github.com/tlcheck/tlcheck/spec"

// Every tag's forward rule is its registry primitive's (spec); these are
// the small tensor helpers irsem's own steps share.

func zerosOf[T any](s spec.Shape) spec.Tensor[T] {
	return spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
}

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}
