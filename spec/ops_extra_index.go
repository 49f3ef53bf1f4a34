package spec

import "fmt"

// The index-map primitives of issue 25's missing ops: tile (torch's
// Tensor.repeat, numpy.tile, ONNX Tile).
//
// tile copies its parent r_d times along every axis d. Its attribute is
// the output shape (Attrs.Shape; the IR's out_shape), of the parent's
// rank, each extent a multiple of the parent's (r_d = out_d / in_d; an
// empty parent axis has only the empty output extent). Output element o,
// with coordinates (o_0, …, o_{k−1}), reads the input element at
// (o_0 mod in_0, …, o_{k−1} mod in_{k−1}). So
//
//	y_o = x_src(o),   dy_o = dx_src(o),   g_i = Σ_{o : src(o) = i} δ_o
//
// (the VJP sums the Π r_d copies of each element, a left fold from 0 in
// row-major o order). The primitive is linear, exact and total over Rat,
// polynomial of degree 1 and zero-preserving; it has no kinks.

// tileGeometry checks that out (tile's attribute) tiles the parent shape
// x, and returns out.
func tileGeometry(a *Attrs, x Shape) (Shape, error) {
	out := a.Shape
	if len(out) != len(x) {
		return nil, fmt.Errorf("output shape %v has rank %d, the parent %v rank %d", out, len(out), x, len(x))
	}
	for d, e := range out {
		switch {
		case e < 0:
			return nil, fmt.Errorf("output extent %d on axis %d is negative", e, d)
		case x[d] == 0 && e != 0:
			return nil, fmt.Errorf("output extent %d on axis %d repeats an empty axis", e, d)
		case x[d] != 0 && e%x[d] != 0:
			return nil, fmt.Errorf("output extent %d on axis %d is not a multiple of the parent's %d", e, d, x[d])
		}
	}
	return out.Clone(), nil
}

// tileMap is tile's index map: output o reads input src(o), the
// coordinates of o reduced modulo the parent's extents.
func tileMap(x, out Shape) []int {
	src := make([]int, out.Size())
	ost, ist := out.Strides(), x.Strides()
	for o := range src {
		i, rem := 0, o
		for d := range out {
			c := rem / ost[d]
			rem -= c * ost[d]
			i += (c % x[d]) * ist[d]
		}
		src[o] = i
	}
	return src
}

func tilePrim[T Scalar[T]]() *Prim[T] {
	return linearUnaryPrim[T](&OpInfo{Name: "tile", Attrs: []string{"Shape"},
		Exact: true, ZeroPreserving: true, Polynomial: true,
		IR: &IRForm{Tag: "tile", Attrs: []string{"out_shape"}, Superset: true,
			Doc: "ONNX Tile, torch repeat: out_shape of the parent's rank, each extent a multiple of the parent's; y[o] = x[o mod in_shape]"},
		Shape: func(a *Attrs, in []Shape) (Shape, error) { return tileGeometry(a, in[0]) },
		Doc:   "repeat the parent along every axis to the output Shape (each extent a multiple of the parent's): y[o] = x[o mod in]; vjp sums the copies"},
		func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
			out, err := tileGeometry(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			var zero T
			return applyMap(x, out, tileMap(x.Shape, out), zero), nil
		},
		func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
			out, err := tileGeometry(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			return scatterAdd(x.Shape, tileMap(x.Shape, out), dy), nil
		})
}
