package spec

import "fmt"

// The rules of the two IR tags that irsem had forward-only:
// hard_masked_softmax and keep_mask (the IR's bernoulli_mask).
//
// hard_masked_softmax: the softmax of every last-axis row over its allowed
// entries (Mask, row-major over x's shape), blocked entries exactly 0, a
// fully blocked row all 0. Because y_j = 0 on blocked entries, the
// softmax rules written with y are its rules: JVP y⊙(dx − Σ y⊙dx), VJP
// y⊙(δ − Σ δ⊙y), per row; a blocked entry's tangent and cotangent are 0.
//
// keep_mask (the IR's bernoulli_mask): the 0/1 mask of shape Shape from a
// scalar keep probability q, element i = 1 − step((1 − q) − u_i) with u_i =
// UniformRat(Seed, i), i.e. 1 exactly when u_i ≥ 1 − q. It is piecewise
// constant in q, so its derivative is 0 wherever it exists (every q except
// the jumps q = 1 − u_i, where the convention is 0 too): NoGrad.

// HardMaskedSoftmax normalises every last-axis row of x over its allowed
// entries (allowed is row-major over x's shape): m = the max of the
// allowed entries (a left fold of Max from the first); numerator
// e_j = exp(x_j − m) where allowed and 0 elsewhere; the denominator a left
// fold from 0 over all numerators of the row; y_j = e_j/denominator. A row
// with no allowed entry is all zeros; a rank-0 input gives 1 when allowed
// and 0 otherwise.
func HardMaskedSoftmax[T Scalar[T]](x Tensor[T], allowed []bool) (Tensor[T], error) {
	out := zerosOf[T](x.Shape)
	var z T
	if len(allowed) != len(x.Data) {
		return out, fmt.Errorf("mask has %d entries for %d elements", len(allowed), len(x.Data))
	}
	if len(x.Shape) == 0 {
		if allowed[0] {
			out.Data[0] = z.FromInt(1)
		}
		return out, nil
	}
	n := x.Shape[len(x.Shape)-1]
	if n == 0 {
		return out, nil
	}
	num := make([]T, n)
	for base := 0; base < len(x.Data); base += n {
		var m T
		found := false
		for j := 0; j < n; j++ {
			if !allowed[base+j] {
				continue
			}
			if !found {
				m, found = x.Data[base+j], true
			} else {
				m = m.Max(x.Data[base+j])
			}
		}
		if !found {
			continue
		}
		var den T
		for j := 0; j < n; j++ {
			num[j] = z
			if allowed[base+j] {
				e, err := x.Data[base+j].Sub(m).Exp()
				if err != nil {
					return Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
				}
				num[j] = e
			}
			den = den.Add(num[j])
		}
		for j := 0; j < n; j++ {
			q, err := num[j].Div(den)
			if err != nil {
				return Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
			}
			out.Data[base+j] = q
		}
	}
	return out, nil
}

// rowsOf calls f for every last-axis row [base, base+n) of shape s (one
// row of length 1 for a scalar).
func rowsOf(s Shape, f func(base, n int)) {
	n := 1
	if len(s) > 0 {
		n = s[len(s)-1]
	}
	if n == 0 {
		return
	}
	for base := 0; base < s.Size(); base += n {
		f(base, n)
	}
}

func hardMaskedSoftmaxPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "hard_masked_softmax", MinArity: 1, MaxArity: 1, Attrs: []string{"Mask"}, Smooth: true, ZeroPreserving: true, Accumulates: true,
		IR: &IRForm{Tag: "hard_masked_softmax", Attrs: []string{"mask"},
			Doc: "last-axis softmax over the allowed entries only; blocked entries get exactly 0, a fully blocked row is all 0"},
		Shape: func(a *Attrs, in []Shape) (Shape, error) {
			if len(a.Mask) != in[0].Size() {
				return nil, fmt.Errorf("mask has %d entries, the input %v has %d elements", len(a.Mask), in[0], in[0].Size())
			}
			return in[0].Clone(), nil
		},
		Doc: "last-axis softmax over the Mask's allowed entries, blocked entries 0; jvp y⊙(dx − Σ y⊙dx), vjp y⊙(δ − Σ δ⊙y) per row"}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) { return HardMaskedSoftmax(xs[0], a.Mask) },
		JVP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			out := zerosOf[T](y.Shape)
			rowsOf(y.Shape, func(base, n int) {
				var s T
				for j := base; j < base+n; j++ {
					s = s.Add(y.Data[j].Mul(dxs[0].Data[j]))
				}
				for j := base; j < base+n; j++ {
					out.Data[j] = y.Data[j].Mul(dxs[0].Data[j].Sub(s))
				}
			})
			return out, nil
		},
		VJP: func(a *Attrs, _ []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g := zerosOf[T](y.Shape)
			rowsOf(y.Shape, func(base, n int) {
				var s T
				for j := base; j < base+n; j++ {
					s = s.Add(dy.Data[j].Mul(y.Data[j]))
				}
				for j := base; j < base+n; j++ {
					g.Data[j] = y.Data[j].Mul(dy.Data[j].Sub(s))
				}
			})
			return []Tensor[T]{g}, nil
		},
	}
}

// KeepMask is keep_mask's forward: the 0/1 mask of shape s from the keep
// probability q, element i = 1 − step((1 − q) − u_i), u_i = UniformRat(seed,
// i) as a T.
func KeepMask[T Scalar[T]](s Shape, seed uint64, q T) Tensor[T] {
	out := zerosOf[T](s)
	one := q.FromInt(1)
	drop := one.Sub(q)
	for i := range out.Data {
		u := rc[T](UniformRat(seed, i))
		out.Data[i] = one.Sub(drop.Sub(u).Step())
	}
	return out
}

func keepMaskPrim[T Scalar[T]]() *Prim[T] {
	return noGradPrim[T](&OpInfo{Name: "keep_mask", ZeroPreserving: true, MinArity: 1, MaxArity: 1, Attrs: []string{"Shape", "Seed"},
		IR: &IRForm{Tag: "bernoulli_mask", Attrs: []string{"seed"},
			Doc: "0/1 mask of the node's shape from a scalar keep-probability parent q: 1 where draw ≥ 1−q (the registry's bernoulli_mask with P = 1−q)"},
		Shape: func(a *Attrs, in []Shape) (Shape, error) {
			if len(in[0]) != 0 {
				return nil, fmt.Errorf("the keep probability must be a scalar (shape []), got %v", in[0])
			}
			if _, err := a.Shape.Check(0); err != nil {
				return nil, err
			}
			return a.Shape.Clone(), nil
		},
		Doc: "0/1 mask of shape Shape, 1 where UniformRat(Seed, i) ≥ 1 − q for the scalar keep probability q; piecewise constant in q, so no gradient (0 at the jumps too)"},
		func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return KeepMask(a.Shape, a.Seed, xs[0].Data[0]), nil
		})
}

// maskPrims lists hard_masked_softmax and keep_mask.
func maskPrims[T Scalar[T]]() []*Prim[T] {
	return []*Prim[T]{hardMaskedSoftmaxPrim[T](), keepMaskPrim[T]()}
}
