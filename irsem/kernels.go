package irsem

import (
	"github.com/tlcheck/tlcheck/spec"
)

// The forward rules of the tags that have no spec registry primitive
// (none remain: every tag is a registry primitive), generic over spec.Scalar.
// Every sum is a left fold from the scalar's zero in the order stated, so
// a float result is determined bit for bit and a Rat result exactly.

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
