package spec

import (
	"fmt"
	"strings"
)

// Tensor is a dense row-major tensor over the scalar T. The Shape is
// carried at run time; len(Data) == Shape.Size() is an invariant that the
// constructors check and that every operation in this package preserves.
type Tensor[T any] struct {
	Shape Shape
	Data  []T
}

// NewTensor builds a tensor, checking the shape against DefaultMaxElements
// and the data length against the shape.
func NewTensor[T any](shape Shape, data []T) (Tensor[T], error) {
	n, err := shape.Check(0)
	if err != nil {
		return Tensor[T]{}, err
	}
	if len(data) != n {
		return Tensor[T]{}, fmt.Errorf("tensor of shape %v needs %d values, got %d", shape, n, len(data))
	}
	return Tensor[T]{Shape: shape.Clone(), Data: data}, nil
}

// Zeros returns a tensor of the given shape filled with the zero of T
// (the zero value of every scalar in this package is its additive zero).
func Zeros[T any](shape Shape) (Tensor[T], error) {
	n, err := shape.Check(0)
	if err != nil {
		return Tensor[T]{}, err
	}
	return Tensor[T]{Shape: shape.Clone(), Data: make([]T, n)}, nil
}

// zerosLike returns a zero tensor with the shape of t. It is only used on
// shapes already validated.
func zerosOf[T any](shape Shape) Tensor[T] {
	return Tensor[T]{Shape: shape.Clone(), Data: make([]T, shape.Size())}
}

// Full returns a tensor of the given shape with every element v.
func Full[T any](shape Shape, v T) (Tensor[T], error) {
	t, err := Zeros[T](shape)
	if err != nil {
		return t, err
	}
	for i := range t.Data {
		t.Data[i] = v
	}
	return t, nil
}

// Scalar0 returns the rank-0 tensor holding v.
func Scalar0[T any](v T) Tensor[T] { return Tensor[T]{Shape: Shape{}, Data: []T{v}} }

// Vector returns the rank-1 tensor holding vs.
func Vector[T any](vs ...T) Tensor[T] {
	return Tensor[T]{Shape: Shape{len(vs)}, Data: append([]T(nil), vs...)}
}

// Clone copies the tensor's shape and data slice. Scalars in this package
// are values (Rat never mutates its big.Rat), so a shallow element copy is
// a deep copy.
func (t Tensor[T]) Clone() Tensor[T] {
	return Tensor[T]{Shape: t.Shape.Clone(), Data: append([]T(nil), t.Data...)}
}

// Len is the element count.
func (t Tensor[T]) Len() int { return len(t.Data) }

// Reshaped returns a tensor sharing t's data under another shape with the
// same element count.
func (t Tensor[T]) Reshaped(s Shape) (Tensor[T], error) {
	n, err := s.Check(0)
	if err != nil {
		return Tensor[T]{}, err
	}
	if n != len(t.Data) {
		return Tensor[T]{}, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", t.Shape, len(t.Data), s, n)
	}
	return Tensor[T]{Shape: s.Clone(), Data: t.Data}, nil
}

// Format prints a tensor with the element formatter f: a rank-0 tensor as
// its element, others as nested [a, b] lists.
func Format[T any](t Tensor[T], f func(T) string) string {
	if len(t.Shape) == 0 {
		if len(t.Data) == 1 {
			return f(t.Data[0])
		}
		return "[]"
	}
	var b strings.Builder
	var rec func(axis, off int)
	st := t.Shape.Strides()
	rec = func(axis, off int) {
		b.WriteByte('[')
		for i := 0; i < t.Shape[axis]; i++ {
			if i > 0 {
				b.WriteString(", ")
			}
			if axis == len(t.Shape)-1 {
				b.WriteString(f(t.Data[off+i]))
			} else {
				rec(axis+1, off+i*st[axis])
			}
		}
		b.WriteByte(']')
	}
	rec(0, 0)
	return b.String()
}

// String prints the tensor with each element's String method when it has
// one.
func (t Tensor[T]) String() string {
	return Format(t, func(v T) string {
		if s, ok := any(v).(fmt.Stringer); ok {
			return s.String()
		}
		return fmt.Sprint(v)
	})
}

// SomeTensor is a shape-erased tensor: a collection such as a parameter
// pack or model state can hold differently shaped entries of one scalar
// type. Its contents are reachable only through Cast, which demands the
// expected shape and checks it, or through Shape for inspection.
type SomeTensor[T any] struct {
	t Tensor[T]
}

// Erase packs a tensor. Erase(t).Cast(t.Shape) returns t unchanged.
func Erase[T any](t Tensor[T]) SomeTensor[T] { return SomeTensor[T]{t: t} }

// Shape is the stored shape.
func (s SomeTensor[T]) Shape() Shape { return s.t.Shape.Clone() }

// Cast recovers a tensor of the requested shape. It never reshapes, pads
// or reinterprets: unless the stored shape equals want it returns an error
// naming both.
func (s SomeTensor[T]) Cast(want Shape) (Tensor[T], error) {
	if !s.t.Shape.Equal(want) {
		return Tensor[T]{}, fmt.Errorf("cast: stored shape %v is not the requested shape %v", s.t.Shape, want)
	}
	return s.t, nil
}
