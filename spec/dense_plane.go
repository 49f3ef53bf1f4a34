package spec

// DensePlane is implemented by a DenseLinear scalar whose dense kernel can
// also read the constant weights as a plane of float64 values: w[i] is
// the exact value of the weight that the scalar's FromRat would convert
// (every such value is a float64: Rat.ExactFloat64). LinearDensePlane(x,
// src, w, b, y, …) must fill y exactly as LinearDense(x, src, W, b, y, …)
// does with W[i] = FromRat(w[i]), and report true, or report false
// (having left y's meaning unchanged) where LinearDense would not apply or
// the plane form cannot decide that it does; the caller then converts the
// weights and runs the rule as before. So a product with constant weights
// never holds one scalar per weight (fpbound's ErrOf is 72 bytes a
// weight, the plane 8): LinearPlane and ConvPlane are linear's, conv's
// and conv_transpose's forward rules on such a plane.
type DensePlane[T any] interface {
	LinearDensePlane(x []T, src []int32, w []float64, b, y []T, rows, out, in int, withBias bool) bool
}

// DensePlane32 is DensePlane for weights held as binary32 values: w[i]
// is the weight's exact value as a float32, which widens to float64
// exactly. LinearDensePlane32(x, src, w, b, y, …) must fill y exactly as
// LinearDensePlane(x, src, w64, b, y, …) does with w64[i] = float64(w[i]),
// and report what it reports: the kernel reads the binary32 storage
// directly, so a layer's weights are never widened to a whole float64
// plane (8 bytes a weight) for it. LinearPlane32 and ConvPlane32 are
// LinearPlane and ConvPlane on such a plane.
type DensePlane32[T any] interface {
	LinearDensePlane32(x []T, src []int32, w []float32, b, y []T, rows, out, in int, withBias bool) bool
}

// LinearPlane is linear's forward rule (prim "linear", Apply: shapes
// checked as linearShape checks them) for x and bias b with the weights
// W, of shape w, given as the float64 plane wp (DensePlane): the same
// tensor that Apply(x, W, b) returns with W converted from wp, when T is a
// DensePlane scalar whose kernel applies; ok is false otherwise (a shape
// Apply would refuse included, so that its error comes from Apply).
func LinearPlane[T Scalar[T]](x Tensor[T], w Shape, wp []float64, b Tensor[T]) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DensePlane[T])
	if !ok {
		return Tensor[T]{}, false
	}
	return linearPlaneWith(x, w, wp, b, d.LinearDensePlane)
}

// LinearPlane32 is LinearPlane for the binary32 plane wp (DensePlane32):
// the same tensor LinearPlane returns on wp widened to float64, when T is
// a DensePlane32 scalar whose kernel applies; ok is false otherwise.
func LinearPlane32[T Scalar[T]](x Tensor[T], w Shape, wp []float32, b Tensor[T]) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DensePlane32[T])
	if !ok {
		return Tensor[T]{}, false
	}
	return linearPlaneWith(x, w, wp, b, d.LinearDensePlane32)
}

// linearPlaneWith is LinearPlane and LinearPlane32 with the kernel lin.
func linearPlaneWith[T Scalar[T], W any](x Tensor[T], w Shape, wp []W, b Tensor[T],
	lin func(x []T, src []int32, w []W, b, y []T, rows, out, in int, withBias bool) bool) (Tensor[T], bool) {
	if len(wp) != w.Size() || len(x.Data) != x.Shape.Size() || len(b.Data) != b.Shape.Size() {
		return Tensor[T]{}, false
	}
	s, err := linearShape(nil, []Shape{x.Shape, w, b.Shape})
	if err != nil {
		return Tensor[T]{}, false
	}
	// As linearFwd: the F32 and Interval kernels come first there, and
	// neither type is a DensePlane; then the dense kernel at ivDense.
	out, in := w[0], w[1]
	if in <= 0 || out <= 0 {
		return Tensor[T]{}, false
	}
	rows := len(x.Data) / in
	if rows*out*in < ivDense {
		return Tensor[T]{}, false
	}
	y := zerosOf[T](s)
	if !lin(x.Data[:rows*in], nil, wp, b.Data, y.Data, rows, out, in, true) {
		return Tensor[T]{}, false
	}
	return y, true
}

// ConvPlane is conv's forward rule (transposed: conv_transpose's; Apply,
// the window planned from a as planWin plans it) for x and the optional
// bias b with the weights W, of shape w, given as the float64 plane wp
// (DensePlane): the tensor that Apply returns with W converted from wp,
// when T is a DensePlane scalar and the dense path applies (denseConv);
// ok is false otherwise.
func ConvPlane[T Scalar[T]](a *Attrs, x Tensor[T], w Shape, wp []float64, b *Tensor[T], transposed bool) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DensePlane[T])
	if !ok {
		return Tensor[T]{}, false
	}
	return convPlaneWith(a, x, w, wp, b, transposed, d.LinearDensePlane)
}

// ConvPlane32 is ConvPlane for the binary32 plane wp (DensePlane32): the
// same tensor ConvPlane returns on wp widened to float64, when T is a
// DensePlane32 scalar whose kernel applies; ok is false otherwise.
func ConvPlane32[T Scalar[T]](a *Attrs, x Tensor[T], w Shape, wp []float32, b *Tensor[T], transposed bool) (Tensor[T], bool) {
	var zero T
	d, ok := any(zero).(DensePlane32[T])
	if !ok {
		return Tensor[T]{}, false
	}
	return convPlaneWith(a, x, w, wp, b, transposed, d.LinearDensePlane32)
}

// convPlaneWith is ConvPlane and ConvPlane32 with the kernel lin
// (denseConvWith gathers and, for conv_transpose, reorders W's rows as
// the same elements of either storage).
func convPlaneWith[T Scalar[T], W any](a *Attrs, x Tensor[T], w Shape, wp []W, b *Tensor[T], transposed bool,
	lin func(x []T, src []int32, w []W, b, y []T, rows, out, in int, withBias bool) bool) (Tensor[T], bool) {
	if a == nil || len(wp) != w.Size() || len(x.Data) != x.Shape.Size() {
		return Tensor[T]{}, false
	}
	kind := winConv
	if transposed {
		kind = winConvT
	}
	in := []Shape{x.Shape, w}
	var bd []T
	if b != nil {
		if len(b.Data) != b.Shape.Size() {
			return Tensor[T]{}, false
		}
		in, bd = append(in, b.Shape), b.Data
	}
	g, err := planWin(kind, a, in)
	if err != nil {
		return Tensor[T]{}, false
	}
	// As convFwd / convTFwd: the Interval kernel first (Interval is no
	// DensePlane), then denseConv.
	y := zerosOf[T](g.out)
	if !denseConvWith(g, x.Data, wp, bd, y.Data, transposed, lin) {
		return Tensor[T]{}, false
	}
	return y, true
}
