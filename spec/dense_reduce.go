package spec

import "github.com/tlcheck/tlcheck/enclose"

// DenseReduce is implemented by a scalar that has its own dense kernels for
// the lane sums of reduce_sum, reduce_mean and sum and for their VJP's
// broadcast. x (and dx) hold outer·n·inner elements, lane (o, i) being the
// n elements (o·n + j)·inner + i, j < n (Lanes's layout: lane o·inner + i);
// y (and dy) hold one element per lane.
//
//   - ReduceDense sets y[o·inner + i] to an enclosure of the lane's sum
//     (mean: the sum divided by n).
//   - SpreadDense sets every element of lane (o, i) of dx to an enclosure
//     of dy[o·inner + i] (mean: divided by n).
//
// Each reports true, or false — leaving the output's meaning unchanged —
// when it does not apply (then the generic fold runs). The methods must
// not depend on their receiver's value (they are called on the zero value)
// and must return results that satisfy the scalar's own soundness theorem
// for the generic rule's semantics, stated in the implementing package's
// doc (for Interval: enclose's "Lane sums").
type DenseReduce[T any] interface {
	ReduceDense(x []T, outer, n, inner int, mean bool, y []T) bool
	SpreadDense(dy []T, outer, n, inner int, mean bool, dx []T) bool
}

// reduceDense is reduceLanes (mean: with scale 1/n) on a DenseReduce
// scalar, for tensors of at least ivDense elements; ok is false when the
// scalar has no dense kernel or it declines.
func reduceDense[T Scalar[T]](x Tensor[T], axis int, mean bool) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DenseReduce[T])
	if !ok || len(x.Data) < ivDense {
		return Tensor[T]{}, false
	}
	l := LanesOf(x.Shape, axis)
	out := zerosOf[T](dropAxis(x.Shape, axis))
	if !d.ReduceDense(x.Data, l.Outer, l.N, l.Inner, mean, out.Data) {
		return Tensor[T]{}, false
	}
	return out, true
}

// sumAllDense is SumAll on a DenseReduce scalar (one lane of every
// element).
func sumAllDense[T Scalar[T]](x Tensor[T]) (T, bool) {
	var zero T
	d, ok := any(zero).(DenseReduce[T])
	if !ok || len(x.Data) < ivDense {
		return zero, false
	}
	y := make([]T, 1)
	if !d.ReduceDense(x.Data, 1, len(x.Data), 1, false, y) {
		return zero, false
	}
	return y[0], true
}

// spreadDense is spreadLanes (mean: with scale 1/n) on a DenseReduce
// scalar, for outputs of at least ivDense elements.
func spreadDense[T Scalar[T]](dy Tensor[T], s Shape, axis int, mean bool) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DenseReduce[T])
	if !ok || s.Size() < ivDense {
		return Tensor[T]{}, false
	}
	l := LanesOf(s, axis)
	out := zerosOf[T](s)
	if !d.SpreadDense(dy.Data, l.Outer, l.N, l.Inner, mean, out.Data) {
		return Tensor[T]{}, false
	}
	return out, true
}

// ReduceDense encloses lane sums and means of intervals with
// enclose.SumPairs (each endpoint one float64 sum, its rounding charged by
// the a-priori γ_n bound of enclose's "Lane sums"); it declines infinite
// endpoints and overflow.
func (Interval) ReduceDense(x []Interval, outer, n, inner int, mean bool, y []Interval) bool {
	return enclose.SumPairs(ivPairs(x), outer, n, inner, mean, ivPairs(y))
}

// SpreadDense broadcasts dy along the lanes, divided by n for the mean
// (enclose.DivPairs: outward-rounded quotients); it declines infinite
// endpoints.
func (Interval) SpreadDense(dy []Interval, outer, n, inner int, mean bool, dx []Interval) bool {
	v := dy[:outer*inner]
	if mean {
		v = make([]Interval, len(v))
		if !enclose.DivPairs(ivPairs(dy[:outer*inner]), n, ivPairs(v)) {
			return false
		}
	}
	for o := 0; o < outer; o++ {
		src := v[o*inner : (o+1)*inner]
		for j := 0; j < n; j++ {
			copy(dx[(o*n+j)*inner:(o*n+j+1)*inner], src)
		}
	}
	return true
}
