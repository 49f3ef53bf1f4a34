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

// scatter is ONNX ScatterElements with reduction "none" (torch's
// Tensor.scatter(dim, index, src); index_fill is scatter of a constant):
// parents x (the data) and u (the updates, of the indices' shape), and
// the constant Indices along Axis. Update element e, at coordinates
// (e_0, …, e_{k−1}), is written to the data position t(e) with the same
// coordinates except Indices[e] on Axis:
//
//	y_p = u_e   where p = t(e),   y_p = x_p   at every position no update writes.
//
// The indices' shape has the data's rank and extents ≤ the data's off
// Axis (ScatterElements' rule); each index is a natural below the Axis
// extent. **Duplicate targets are refused** (ONNX leaves reduction
// "none" with a position written twice undefined and torch picks one
// nondeterministically): t is then injective, so y is linear in (x, u)
// jointly — the JVP is the forward rule on the tangents and the VJP is
//
//	ḡ_x = δ with every written position set to 0,   ḡ_u[e] = δ_{t(e)}.
//
// Exact and total over Rat, polynomial of degree 1, zero-preserving; no
// kinks (the indices are constants, never differentiated).

// ScatterTargets returns scatter's map t: entry e (row-major over the
// indices' shape) is the flat position of x that update element e writes,
// or an error naming the first index out of range or the first position
// written twice.
func ScatterTargets(a *Attrs, x Shape) ([]int, error) {
	ax, err := normAxis(a.Axis, len(x))
	if err != nil {
		return nil, err
	}
	is := a.IndicesShape
	if len(is) != len(x) {
		return nil, fmt.Errorf("indices_shape %v has rank %d, the data %v rank %d", is, len(is), x, len(x))
	}
	n, err := is.Check(0)
	if err != nil {
		return nil, fmt.Errorf("indices_shape: %w", err)
	}
	for d, e := range is {
		if d != ax && e > x[d] {
			return nil, fmt.Errorf("indices_shape %v exceeds the data %v on axis %d", is, x, d)
		}
	}
	if len(a.Indices) != n {
		return nil, fmt.Errorf("indices_shape %v needs %d indices, got %d", is, n, len(a.Indices))
	}
	ist, xst := is.Strides(), x.Strides()
	t := make([]int, n)
	writer := make(map[int]int, n)
	for e := range t {
		i := a.Indices[e]
		if i < 0 || i >= x[ax] {
			return nil, fmt.Errorf("index %d (entry %d) outside [0, %d) on axis %d", i, e, x[ax], ax)
		}
		p, rem := 0, e
		for d := range is {
			c := rem / ist[d]
			rem -= c * ist[d]
			if d == ax {
				c = i
			}
			p += c * xst[d]
		}
		if w, dup := writer[p]; dup {
			return nil, fmt.Errorf("data element %d is written by entries %d and %d (duplicate indices are refused: reduction none leaves them undefined)", p, w, e)
		}
		writer[p] = e
		t[e] = p
	}
	return t, nil
}

// scatterShape is scatter's shape rule: the updates have the indices'
// shape, and the output the data's.
func scatterShape(a *Attrs, in []Shape) (Shape, error) {
	if _, err := ScatterTargets(a, in[0]); err != nil {
		return nil, err
	}
	if !in[1].Equal(a.IndicesShape) {
		return nil, fmt.Errorf("updates of shape %v, expected the indices' shape %v", in[1], a.IndicesShape)
	}
	return in[0].Clone(), nil
}

// scatterApply writes u into a copy of x at the targets t.
func scatterApply[T Scalar[T]](x, u Tensor[T], t []int) Tensor[T] {
	y := Tensor[T]{Shape: x.Shape.Clone(), Data: append([]T(nil), x.Data...)}
	for e, p := range t {
		y.Data[p] = u.Data[e]
	}
	return y
}

func scatterPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "scatter", MinArity: 2, MaxArity: 2, Attrs: []string{"Axis", "IndicesShape", "Indices"},
		Exact: true, Linear: true, Smooth: true, ZeroPreserving: true, Polynomial: true,
		IR: &IRForm{Tag: "scatter", Attrs: []string{"axis", "indices_shape", "indices"}, Superset: true,
			Doc: "ONNX ScatterElements, reduction none: (data, updates) with constant indices of the updates' shape along axis; duplicate targets refused"},
		Shape: scatterShape,
		Doc:   "y = x with y[t(e)] = u[e], t(e) the coordinates of e with Indices[e] on Axis (ScatterElements, torch scatter); duplicate targets refused; vjp: δ with written positions zeroed, δ[t(e)]"}
	fwd := func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
		t, err := ScatterTargets(a, xs[0].Shape)
		if err != nil {
			return Tensor[T]{}, err
		}
		return scatterApply(xs[0], xs[1], t), nil
	}
	return jointlyLinearPrim(info, fwd,
		func(a *Attrs, xs []Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			t, err := ScatterTargets(a, xs[0].Shape)
			if err != nil {
				return nil, err
			}
			gx := Tensor[T]{Shape: xs[0].Shape.Clone(), Data: append([]T(nil), dy.Data...)}
			gu := zerosOf[T](xs[1].Shape)
			var zero T
			for e, p := range t {
				gu.Data[e] = dy.Data[p]
				gx.Data[p] = zero
			}
			return []Tensor[T]{gx, gu}, nil
		})
}
