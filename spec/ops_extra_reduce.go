package spec

// reduce_prod, the product along one axis (removed): torch.prod(x, dim)
// and ONNX's ReduceProd over one axis. Along a lane x_0, …, x_{n−1}
//
//	y = Π_j x_j   (a left fold from 1; the empty product is 1)
//	∂y/∂x_i = Π_{j≠i} x_j = P_i · S_{i+1},
//	P_i = x_0⋯x_{i−1} (left fold from 1),  S_i = x_i⋯x_{n−1} (right fold),
//
// so the JVP is Σ_i P_i·S_{i+1}·dx_i (a left fold from 0) and the VJP
// gives x_i the cotangent δ·P_i·S_{i+1}. The derivative is computed from
// the prefix and suffix products, never as y/x_i, so it is exact when one
// or more x are 0: with one zero x_k every ∂y/∂x_i with i ≠ k is 0 and
// ∂y/∂x_k is the product of the others; with two or more zeros every
// partial is 0. (PyTorch's prod backward special-cases the zeros for the
// same reason; dividing y by x_i would be 0/0 there.)
//
// Every output element is a polynomial of degree n in its lane with
// coefficient 1, so the primitive is exact and total over Rat,
// Polynomial and zero-preserving (the partials are polynomials). Its
// polynomial degree is n·d for a lane of length n and parents of degree
// d, which no GenHint rule expresses, so it stays out of the random
// graphs' degree-bounded table (Gen.Graph 0). It is Accumulates: an
// output element combines a data-dependent number of its parent's
// elements (the registry's rule is the left fold from 1, and a kernel
// that multiplies in another order declares its policy as a sum does).

// prodLane returns the lane's prefix products P_0..P_n (P_0 = 1) and
// suffix products S_0..S_n (S_n = 1) for the lane starting at b with
// stride in.
func prodLane[T Scalar[T]](x []T, b, n, in int) (pre, suf []T) {
	var z T
	pre, suf = make([]T, n+1), make([]T, n+1)
	pre[0], suf[n] = z.FromInt(1), z.FromInt(1)
	for j := 0; j < n; j++ {
		pre[j+1] = pre[j].Mul(x[b+j*in])
	}
	for j := n - 1; j >= 0; j-- {
		suf[j] = x[b+j*in].Mul(suf[j+1])
	}
	return pre, suf
}

func reduceProdPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "reduce_prod", MinArity: 1, MaxArity: 1, Accumulates: true, ZeroPreserving: true, Polynomial: true, Exact: true, Smooth: true,
		IR:    &IRForm{Tag: "reduce_prod", Attrs: []string{"axis"}, Superset: true, Doc: "Π along axis (removed), left fold from 1 (ONNX ReduceProd over one axis, torch.prod)"},
		Attrs: []string{"Axis"}, Shape: shapeReduceAxis,
		Doc: "Π along an axis (removed), left fold from 1; ∂y/∂x_i = Π_{j≠i} x_j from prefix and suffix products (exact with zeros)"}
	lanes := func(a *Attrs, s Shape) (Lanes, error) {
		ax, err := normAxis(a.Axis, s.Rank())
		if err != nil {
			return Lanes{}, err
		}
		return LanesOf(s, ax), nil
	}
	return &Prim[T]{
		OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			x := xs[0]
			l, err := lanes(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](dropAxis(x.Shape, mustAxis(a.Axis, x.Shape.Rank())))
			for m := 0; m < l.Count(); m++ {
				b := l.Base(m)
				acc := One[T]()
				for j := 0; j < l.N; j++ {
					acc = acc.Mul(x.Data[b+j*l.Inner])
				}
				out.Data[m] = acc
			}
			return out, nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			x, dx := xs[0], dxs[0]
			l, err := lanes(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](y.Shape)
			for m := 0; m < l.Count(); m++ {
				b := l.Base(m)
				pre, suf := prodLane(x.Data, b, l.N, l.Inner)
				var acc T
				for i := 0; i < l.N; i++ {
					acc = acc.Add(pre[i].Mul(suf[i+1]).Mul(dx.Data[b+i*l.Inner]))
				}
				out.Data[m] = acc
			}
			return out, nil
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			x := xs[0]
			l, err := lanes(a, x.Shape)
			if err != nil {
				return nil, err
			}
			g := zerosOf[T](x.Shape)
			for m := 0; m < l.Count(); m++ {
				b := l.Base(m)
				pre, suf := prodLane(x.Data, b, l.N, l.Inner)
				for i := 0; i < l.N; i++ {
					g.Data[b+i*l.Inner] = dy.Data[m].Mul(pre[i].Mul(suf[i+1]))
				}
			}
			return []Tensor[T]{g}, nil
		},
	}
}

// mustAxis is normAxis for an axis already checked.
func mustAxis(axis, rank int) int {
	ax, _ := normAxis(axis, rank)
	return ax
}
