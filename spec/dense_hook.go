package spec

// DenseLinear is implemented by a scalar that has its own dense kernel for
// the linear layer y = x·Wᵀ + b (x is rows×in, W out×in, b of length out,
// y rows×out, all row-major): a scalar algebra defined above this package
// (fpbound's error bounds) can so run linear on contiguous planes instead
// of the element-by-element fold. LinearDense fills y and reports true,
// or reports false — having left y's meaning unchanged — when it does not
// apply (then the generic fold runs). The method must not depend on its
// receiver's value (it is called on the zero value) and must return a
// result that satisfies the scalar's own soundness theorem for the
// generic fold's semantics, stated in the implementing package's doc.
type DenseLinear[T any] interface {
	LinearDense(x, w, b, y []T, rows, out, in int, withBias bool) bool
}
