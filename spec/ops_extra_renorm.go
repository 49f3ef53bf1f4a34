package spec

import (
	"errors"
	"fmt"
)

// renorm is torch.renorm(x, p=2, dim=Axis, maxnorm=Maxnorm) with p = 2
// only. Unlike l2_normalize's lanes, torch's dim keeps its slice: the lane
// of index i is the sub-tensor x[…, i, …] of every element whose index on
// Axis is i (row-major order, the sum of squares a left fold from 0).
// With ν the sub-tensor's 2-norm, c = Maxnorm ≥ 0 and m = max(ν, c),
//
//	s = min(1, c/ν) = c/m,  y = s·x.
//
// torch scales by c/(ν + 1e-7) where ν > c; the registry takes the exact
// c/ν (the 1e-7 is a float guard, not the semantics), so the two are
// continuous at ν = c and agree to within 1e-7/ν relatively elsewhere.
// With w the max's weight on ν (1 if ν > c, 0 if ν < c, ½ at the tie
// ν = c, the registry's max convention, as in l2_normalize) and
// p = Σ_j (x_j/m)·dx_j,
//
//	dy_j = c·(dx_j − w·p·x_j/m) / m,
//
// which is s·dx − w·(c/ν)·(x̂·dx)·x̂ with x̂ = x/ν, because dm = w·dν and
// dν = x̂·dx, and w ≠ 0 only where m = ν. It is c times l2_normalize's
// tangent with ε = c on the sub-tensor, so it shares l2Lane and
// l2LaneTangent. The Jacobian is symmetric, so the VJP is the same
// expression in δ. For c > 0, m ≥ c > 0: a zero sub-tensor (ν = 0 < c)
// takes s = 1 and the rule never divides by ν. For c = 0 the function is
// identically 0 (torch: s = 0/(ν + 1e-7) for ν > 0, and x = 0 otherwise),
// so y = 0 and dy = 0. c < 0 and an absent Maxnorm are refused. Exact
// over Rat where every sub-tensor's norm is rational (Partial: √ of a
// non-square is refused); Accumulates; zero-preserving (c/m ≤ 1 and
// |x/m| ≤ 1: no pole); not Smooth (the tie ν = c). ONNX has no renorm,
// so no ONNX operator maps to it.

// renormLanes resolves the axis and c of an application: the lanes along
// the axis (lane i of the sub-tensor is lane i of each outer block) and c.
func renormLanes[T Scalar[T]](a *Attrs, s Shape) (Lanes, T, bool, error) {
	var c T
	ax, err := normAxis(a.Axis, s.Rank())
	if err != nil {
		return Lanes{}, c, false, err
	}
	switch {
	case a.Maxnorm == nil:
		return Lanes{}, c, false, errors.New("maxnorm is absent (renorm needs the bound)")
	case a.Maxnorm.Sign() < 0:
		return Lanes{}, c, false, fmt.Errorf("maxnorm %s is negative", a.Maxnorm.RatString())
	}
	return LanesOf(s, ax), rc[T](a.Maxnorm), a.Maxnorm.Sign() == 0, nil
}

// subTensorIndices lists the flat indices of the sub-tensor x[…, i, …]
// along l's axis, in row-major order.
func subTensorIndices(l Lanes, i int, idx []int) []int {
	idx = idx[:0]
	for o := 0; o < l.Outer; o++ {
		b := (o*l.N + i) * l.Inner
		for j := 0; j < l.Inner; j++ {
			idx = append(idx, b+j)
		}
	}
	return idx
}

// renormApply computes y = c·x/m (tangent false) or the tangent
// c·(d − w·p·x/m)/m (tangent true) sub-tensor by sub-tensor.
func renormApply[T Scalar[T]](a *Attrs, x, d Tensor[T], tangent bool) (Tensor[T], error) {
	l, c, zero, err := renormLanes[T](a, x.Shape)
	if err != nil {
		return Tensor[T]{}, err
	}
	out := zerosOf[T](x.Shape)
	if zero {
		return out, nil
	}
	var idx []int
	for i := 0; i < l.N; i++ {
		idx = subTensorIndices(l, i, idx)
		m, w, err := l2Lane(x.Data, idx, c)
		if err != nil {
			return Tensor[T]{}, fmt.Errorf("sub-tensor %d: %w", i, err)
		}
		if tangent {
			// (d − w·p·x/m)/m, then times c.
			if err := l2LaneTangent(x.Data, d.Data, out.Data, idx, m, w); err != nil {
				return Tensor[T]{}, fmt.Errorf("sub-tensor %d: %w", i, err)
			}
			for _, k := range idx {
				out.Data[k] = c.Mul(out.Data[k])
			}
			continue
		}
		for _, k := range idx {
			if out.Data[k], err = c.Mul(x.Data[k]).Div(m); err != nil {
				return Tensor[T]{}, fmt.Errorf("sub-tensor %d: %w", i, err)
			}
		}
	}
	return out, nil
}

func renormPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "renorm", MinArity: 1, MaxArity: 1, Attrs: []string{"Axis", "Maxnorm"},
		Exact: true, Partial: true, Accumulates: true, ZeroPreserving: true,
		IR: &IRForm{Tag: "renorm", Attrs: []string{"axis", "maxnorm"}, Superset: true,
			Doc: "torch.renorm with p = 2: each sub-tensor x[…, i, …] along axis scaled by min(1, maxnorm/‖·‖₂)"},
		Ties: "s = c/max(ν, c): at ν = c the max's ½/½", Shape: func(a *Attrs, in []Shape) (Shape, error) {
			if _, err := normAxis(a.Axis, len(in[0])); err != nil {
				return nil, err
			}
			return in[0].Clone(), nil
		},
		Doc: "torch.renorm p=2: each sub-tensor x[…, i, …] along Axis scaled by s = min(1, c/‖·‖₂), c = Maxnorm (exact c/ν, not torch's c/(ν+1e-7)); dy = s·dx − w(c/ν)(x̂·dx)x̂, w the tie weight at ν = c; no ONNX operator"}
	return &Prim[T]{OpInfo: info,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			return renormApply(a, xs[0], Tensor[T]{}, false)
		},
		JVP: func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(info.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			return renormApply(a, xs[0], dxs[0], true)
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(info.Name, y, dy); err != nil {
				return nil, err
			}
			g, err := renormApply(a, xs[0], dy, true)
			if err != nil {
				return nil, err
			}
			return []Tensor[T]{g}, nil
		},
	}
}
