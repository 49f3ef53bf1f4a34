package spec

import "github.com/tlcheck/tlcheck/enclose"

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
	// As linearFwd: the F32 kernel comes first there (F32 is no
	// DensePlane), then Interval's linearFwdIv (Interval's plane kernel
	// computes what it computes, or declines), then the dense kernel at
	// ivDense, which linearFwdIv's threshold equals.
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

// planeTileElems is the number of weights an Interval plane kernel's tile
// holds at most (whole rows of W, at least one); tests lower it.
var planeTileElems = 1 << 20

// LinearDensePlane is Interval's DensePlane kernel for a linear layer
// (src nil; a gathered product — conv's — is declined, and the caller
// converts the weights and runs Interval's own conv kernel as before).
// Claim: where it reports true it fills y exactly as linearFwdIv does on
// the weights converted (FromRat / FromSmallFrac of w[i]: the point [w[i],
// w[i]]). Proof: it declines unless every w[i] is tame, and then ivPlanes
// of those points is the centre plane of their values with no radius
// plane (PointsFromPairs) — w itself (a -0 in w gives the same products'
// sums from +0, the same |w| and the same outward pairs). It runs the
// same enclose.Product on the same input and bias planes, W's rows a tile
// at a time: Product's output (r, j) depends on row r of x's planes, row j
// of W and bias element j alone (fastcpu.Dgemm's per-element left fold
// whatever the number of columns; fpbound's doc, "Dense linear layers",
// tiles), so the tiles' outward pairs are linearFwdIv's. A weight that is
// not tame is declined: linearFwdIv then lifts it (FromPairs), as before.
func (Interval) LinearDensePlane(x []Interval, src []int32, w []float64, b, y []Interval, rows, out, in int, withBias bool) bool {
	if src != nil || out <= 0 || in <= 0 || len(w) < out*in {
		return false
	}
	for _, v := range w[:out*in] {
		if !enclose.TameValue(v) {
			return false
		}
	}
	return ivLinearTiles(x, b, y, rows, out, in, withBias, func(j0, j1 int, _ *[]float64) []float64 { return w[j0*in : j1*in] })
}

// LinearDensePlane32 is LinearDensePlane for the binary32 plane w
// (DensePlane32), read in place a tile at a time: every binary32 value
// widens to float64 exactly (and is tame), so the tiles are those of w
// widened, and the result the same bit for bit.
func (Interval) LinearDensePlane32(x []Interval, src []int32, w []float32, b, y []Interval, rows, out, in int, withBias bool) bool {
	if src != nil || out <= 0 || in <= 0 || len(w) < out*in {
		return false
	}
	return ivLinearTiles(x, b, y, rows, out, in, withBias, func(j0, j1 int, buf *[]float64) []float64 {
		n := (j1 - j0) * in
		if cap(*buf) < n {
			*buf = make([]float64, n)
		}
		c := (*buf)[:n]
		for i, v := range w[j0*in : j1*in] {
			c[i] = float64(v)
		}
		return c
	})
}

// ivLinearTiles is linearFwdIv with W's rows [j0, j1) given by rowsOf as
// exact tame point values, one tile of at most planeTileElems weights at
// a time; y is written only when every tile succeeded.
func ivLinearTiles(x, b, y []Interval, rows, out, in int, withBias bool, rowsOf func(j0, j1 int, buf *[]float64) []float64) bool {
	if rows <= 0 || len(x) < rows*in || len(y) < rows*out || (withBias && len(b) < out) {
		return false
	}
	xp, ok := ivPlanes(x[:rows*in])
	if !ok {
		return false
	}
	var bp enclose.Planes
	if withBias {
		if bp, ok = ivPlanes(b[:out]); !ok {
			return false
		}
	}
	var buf []float64
	tr := min(out, max(1, planeTileElems/in))
	pairs, ok := enclose.ProductTiles(rows, out, in, tr, xp, func(j0, j1 int) enclose.Planes { return enclose.Planes{C: rowsOf(j0, j1, &buf)} }, withBias, bp, 1)
	if !ok {
		return false
	}
	copy(ivPairs(y[:rows*out]), pairs)
	return true
}
