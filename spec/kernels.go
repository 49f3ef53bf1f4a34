package spec

import (
	"fmt"

	"github.com/tlcheck/tlcheck/internal/par"
)

// Helpers shared by the primitive rules. They assume shapes were checked
// by the caller (Prim.Apply or the rule itself) and report element-level
// failures with the element index.

func sameShape(op string, in []Shape) error {
	for i := 1; i < len(in); i++ {
		if !in[i].Equal(in[0]) {
			return fmt.Errorf("parent %d has shape %v, expected %v (shapes must agree; use broadcast_to)", i, in[i], in[0])
		}
	}
	return nil
}

func shapeSame(_ *Attrs, in []Shape) (Shape, error) {
	if err := sameShape("", in); err != nil {
		return nil, err
	}
	return in[0].Clone(), nil
}

func shapeScalar(_ *Attrs, _ []Shape) (Shape, error) { return Shape{}, nil }

// Map applies f to every element of x, reporting the first failing index.
func Map[T Scalar[T]](x Tensor[T], f func(T) (T, error)) (Tensor[T], error) {
	out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
	for i, v := range x.Data {
		r, err := f(v)
		if err != nil {
			return Tensor[T]{}, ElemError(i, err)
		}
		out.Data[i] = r
	}
	return out, nil
}

// MapPure applies a total f to every element.
func MapPure[T Scalar[T]](x Tensor[T], f func(T) T) Tensor[T] {
	out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
	for i, v := range x.Data {
		out.Data[i] = f(v)
	}
	return out
}

// Zip applies f elementwise to two tensors of the same shape.
func Zip[T Scalar[T]](x, y Tensor[T], f func(a, b T) (T, error)) (Tensor[T], error) {
	if !x.Shape.Equal(y.Shape) {
		return Tensor[T]{}, fmt.Errorf("shape mismatch: %v vs %v", x.Shape, y.Shape)
	}
	out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
	for i := range x.Data {
		r, err := f(x.Data[i], y.Data[i])
		if err != nil {
			return Tensor[T]{}, ElemError(i, err)
		}
		out.Data[i] = r
	}
	return out, nil
}

// ZipPure applies a total f elementwise to two tensors of the same shape.
func ZipPure[T Scalar[T]](x, y Tensor[T], f func(a, b T) T) (Tensor[T], error) {
	if !x.Shape.Equal(y.Shape) {
		return Tensor[T]{}, fmt.Errorf("shape mismatch: %v vs %v", x.Shape, y.Shape)
	}
	out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
	for i := range x.Data {
		out.Data[i] = f(x.Data[i], y.Data[i])
	}
	return out, nil
}

// AddT returns x+y elementwise (shapes must agree). It is the one place
// where tensors are added: the tape's gradient accumulation calls it with
// the existing value on the left.
func AddT[T Scalar[T]](x, y Tensor[T]) (Tensor[T], error) {
	return ZipPure(x, y, func(a, b T) T { return a.Add(b) })
}

// SubT returns x-y elementwise.
func SubT[T Scalar[T]](x, y Tensor[T]) (Tensor[T], error) {
	return ZipPure(x, y, func(a, b T) T { return a.Sub(b) })
}

// MulT returns x⊙y.
func MulT[T Scalar[T]](x, y Tensor[T]) (Tensor[T], error) {
	return ZipPure(x, y, func(a, b T) T { return a.Mul(b) })
}

// NegT returns -x.
func NegT[T Scalar[T]](x Tensor[T]) Tensor[T] { return MapPure(x, func(a T) T { return a.Neg() }) }

// ScaleT returns c·x.
func ScaleT[T Scalar[T]](c T, x Tensor[T]) Tensor[T] {
	return MapPure(x, func(a T) T { return c.Mul(a) })
}

// Dot is the inner product Σ x_i·y_i as a left fold from zero.
func Dot[T Scalar[T]](x, y Tensor[T]) (T, error) {
	var acc T
	if !x.Shape.Equal(y.Shape) {
		return acc, fmt.Errorf("dot: shape mismatch: %v vs %v", x.Shape, y.Shape)
	}
	for i := range x.Data {
		acc = acc.Add(x.Data[i].Mul(y.Data[i]))
	}
	return acc, nil
}

// DotList is Σ_k dot(xs[k], ys[k]).
func DotList[T Scalar[T]](xs, ys []Tensor[T]) (T, error) {
	var acc T
	if len(xs) != len(ys) {
		return acc, fmt.Errorf("dotList: %d tensors vs %d", len(xs), len(ys))
	}
	for k := range xs {
		d, err := Dot(xs[k], ys[k])
		if err != nil {
			return acc, fmt.Errorf("entry %d: %w", k, err)
		}
		acc = acc.Add(d)
	}
	return acc, nil
}

// SumAll is the left fold from zero over every element.
func SumAll[T Scalar[T]](x Tensor[T]) T {
	var acc T
	for _, v := range x.Data {
		acc = acc.Add(v)
	}
	return acc
}

// ZerosLike returns a zero tensor of x's shape.
func ZerosLike[T any](x Tensor[T]) Tensor[T] { return zerosOf[T](x.Shape) }

// SameTensor reports equal shapes and Same elements: exactly equal over
// Rat, the same bits over the float scalars.
func SameTensor[T Scalar[T]](x, y Tensor[T]) bool {
	_, ok := FirstDiff(x, y, nil)
	return ok
}

// FirstDiff is the one tensor comparison: it compares x and y element by
// element in row-major order with same (nil: the scalar's Same) and
// returns ok = true when their shapes are equal, they hold as many
// elements as each other and every pair of elements is the same; i is
// then −1. Otherwise ok is false and i is the first element at which
// they differ, or −1 when the shapes (or element counts) already differ.
func FirstDiff[T Scalar[T]](x, y Tensor[T], same func(a, b T) bool) (i int, ok bool) {
	if !x.Shape.Equal(y.Shape) || len(x.Data) != len(y.Data) {
		return -1, false
	}
	for i := range x.Data {
		if same == nil {
			if !x.Data[i].Same(y.Data[i]) {
				return i, false
			}
		} else if !same(x.Data[i], y.Data[i]) {
			return i, false
		}
	}
	return -1, true
}

// IsZeroTensor reports that every element is an exact zero.
func IsZeroTensor[T Scalar[T]](x Tensor[T]) bool {
	for _, v := range x.Data {
		if !v.IsZero() {
			return false
		}
	}
	return true
}

// Convert maps a tensor over one scalar to another with f.
func Convert[S, T any](x Tensor[S], f func(S) T) Tensor[T] {
	out := Tensor[T]{Shape: x.Shape.Clone(), Data: make([]T, len(x.Data))}
	for i, v := range x.Data {
		out.Data[i] = f(v)
	}
	return out
}

// ConcurrentRules is implemented by a Scalar outside this package whose
// arithmetic (Add, Mul, FoldDot's hook, …) may run on several goroutines
// at once with results that do not depend on the interleaving: every
// process-wide state its rules touch is atomic and either read-only while
// a rule runs or a counter whose final value is a sum (commutative), and
// any identity it draws (a fresh id) is compared only for equality. The
// method itself does nothing.
type ConcurrentRules interface{ ConcurrentRules() }

// elemParallel reports that T's rules may run element-parallel inside one
// kernel call: this package's value types (pure functions of their
// operands) and the ConcurrentRules scalars. (irsem's levelSafe is the
// stronger, node-level property: a whole rule on another goroutine.)
func elemParallel[T any]() bool {
	var z T
	switch any(z).(type) {
	case F64, F32, Binary32, Interval, Rat:
		return true
	}
	_, ok := any(z).(ConcurrentRules)
	return ok
}

// parMinWork is the fewest multiply-adds (rows × perRow) a kernel call
// must do before parRows spreads it over goroutines (below it a
// goroutine's start costs more than it saves); parGrainWork is about the
// multiply-adds of one chunk. Tests lower parMinWork.
var (
	parMinWork   = 1 << 16
	parGrainWork = 1 << 14
)

// parRows runs body over the rows [0, rows) of a kernel whose rows cost
// about perRow multiply-adds each: on par's pool (par.For, chunks of
// about parGrainWork multiply-adds, fixed by rows and perRow alone) when T
// is elemParallel and the work reaches parMinWork, else on the caller's
// goroutine in one call. Determinism: body must compute each row's
// elements from its own indices and from data no row writes, and write
// only that row's elements (every kernel here folds each output element
// in its own fixed order), so the result is the same bits (over Rat the
// same values) for any GOMAXPROCS and schedule — each element's
// arithmetic is exactly the serial loop's.
func parRows[T any](rows, perRow int, body func(r0, r1 int)) {
	perRow = max(perRow, 1)
	if rows <= 1 || !elemParallel[T]() || rows*perRow < parMinWork {
		body(0, rows)
		return
	}
	par.For(rows, max(1, parGrainWork/perRow), body)
}
