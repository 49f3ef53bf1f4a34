package spec

import (
	"fmt"
	"math/big"
)

// The index primitives pad and gather (tlcheck.ir.v1 superset tags, for
// imported ONNX models). Both are index maps: output element o reads input
// element src(o), or (pad's constant mode) the fill value when src(o) = −1.
// So the forward is y_o = x_src(o) (or the fill), the JVP is the same map
// of the tangent with fill 0, and the VJP is the adjoint scatter-add
//
//	g_i = Σ_{o : src(o) = i} δ_o    (a left fold from 0 in row-major o order),
//
// which accumulates: an input element read by several outputs (a
// repeated gather index, a reflected or edge-replicated pad position)
// receives the sum of their cotangents, never only the last one.

// Pad modes.
const (
	PadConstant = "constant" // fill with Value (0 when nil)
	PadReflect  = "reflect"  // mirror about the edge, the edge itself not repeated (ONNX/numpy "reflect")
	PadEdge     = "edge"     // repeat the edge element
)

// padGeometry checks pad's attributes against the input shape x and
// returns the output shape.
func padGeometry(a *Attrs, x Shape) (Shape, error) {
	r := len(x)
	if len(a.Widths) != 2*r {
		return nil, fmt.Errorf("widths has %d entries, expected 2·rank = %d (every begin, then every end)", len(a.Widths), 2*r)
	}
	mode := a.Mode
	switch mode {
	case "", PadConstant:
	case PadReflect, PadEdge:
		if a.Value != nil && a.Value.Sign() != 0 {
			return nil, fmt.Errorf("value %s is only meaningful in constant mode, not %s", a.Value.RatString(), mode)
		}
	default:
		return nil, fmt.Errorf("unknown pad mode %q (constant, reflect or edge)", mode)
	}
	out := make(Shape, r)
	for d := 0; d < r; d++ {
		b, e := a.Widths[d], a.Widths[r+d]
		if b < 0 || e < 0 {
			return nil, fmt.Errorf("axis %d: widths %d, %d must be naturals", d, b, e)
		}
		n := x[d]
		switch {
		case mode == PadReflect && (b >= n || e >= n) && (b > 0 || e > 0):
			return nil, fmt.Errorf("axis %d: reflect widths %d, %d must be smaller than the extent %d", d, b, e, n)
		case mode == PadEdge && n == 0 && (b > 0 || e > 0):
			return nil, fmt.Errorf("axis %d: edge padding of an empty axis has no edge to repeat", d)
		}
		if b > DefaultMaxElements || e > DefaultMaxElements {
			return nil, fmt.Errorf("axis %d: widths %d, %d exceed %d", d, b, e, DefaultMaxElements)
		}
		out[d] = n + b + e
	}
	return out, nil
}

// padSource maps an output index along one axis to its input index, or
// −1 for a constant fill position. n is the extent, b the begin width.
func padSource(mode string, o, b, n int) int {
	i := o - b
	if i >= 0 && i < n {
		return i
	}
	switch mode {
	case PadReflect:
		if i < 0 {
			return -i
		}
		return 2*(n-1) - i
	case PadEdge:
		if i < 0 {
			return 0
		}
		return n - 1
	}
	return -1
}

// padMap is pad's index map over the output shape out.
func padMap(a *Attrs, x, out Shape) []int {
	r := len(x)
	src := make([]int, out.Size())
	if len(src) == 0 {
		return src
	}
	xs := x.Strides()
	idx := make([]int, r)
	for o := range src {
		s := 0
		for d := 0; d < r && s >= 0; d++ {
			i := padSource(a.Mode, idx[d], a.Widths[d], x[d])
			if i < 0 {
				s = -1
				break
			}
			s += i * xs[d]
		}
		src[o] = s
		for d := r - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < out[d] {
				break
			}
			idx[d] = 0
		}
	}
	return src
}

// gatherGeometry checks gather's attributes against the input shape x and
// returns the output shape in[:axis] ++ indices_shape ++ in[axis+1:].
func gatherGeometry(a *Attrs, x Shape) (int, Shape, error) {
	ax, err := normAxis(a.Axis, len(x))
	if err != nil {
		return 0, nil, err
	}
	is := a.IndicesShape
	if is == nil {
		is = Shape{}
	}
	n, err := is.Check(0)
	if err != nil {
		return 0, nil, fmt.Errorf("indices_shape: %w", err)
	}
	if len(a.Indices) != n {
		return 0, nil, fmt.Errorf("indices_shape %v needs %d indices, got %d", is, n, len(a.Indices))
	}
	for j, i := range a.Indices {
		if i < 0 || i >= x[ax] {
			return 0, nil, fmt.Errorf("index %d (entry %d) outside [0, %d) on axis %d", i, j, x[ax], ax)
		}
	}
	out := append(append(x[:ax].Clone(), is...), x[ax+1:]...)
	if len(out) > MaxRank {
		return 0, nil, fmt.Errorf("output rank %d exceeds %d", len(out), MaxRank)
	}
	return ax, out, nil
}

// gatherMap is gather's index map: output (outer, j, inner) reads input
// (outer, indices[j], inner).
func gatherMap(a *Attrs, ax int, x, out Shape) []int {
	outer, inner := x[:ax].Size(), x[ax+1:].Size()
	n := x[ax]
	k := len(a.Indices)
	src := make([]int, out.Size())
	o := 0
	for p := 0; p < outer && len(src) > 0; p++ {
		for j := 0; j < k; j++ {
			base := (p*n + a.Indices[j]) * inner
			for q := 0; q < inner; q++ {
				src[o] = base + q
				o++
			}
		}
	}
	return src
}

// applyMap is y_o = x_src(o), or fill where src(o) < 0.
func applyMap[T Scalar[T]](x Tensor[T], out Shape, src []int, fill T) Tensor[T] {
	y := zerosOf[T](out)
	for o, s := range src {
		if s < 0 {
			y.Data[o] = fill
		} else {
			y.Data[o] = x.Data[s]
		}
	}
	return y
}

// scatterAdd is the adjoint of an index map: g_i = Σ_{src(o)=i} δ_o, a
// left fold from 0 in increasing o.
func scatterAdd[T Scalar[T]](x Shape, src []int, dy Tensor[T]) Tensor[T] {
	g := zerosOf[T](x)
	for o, s := range src {
		if s >= 0 {
			g.Data[s] = g.Data[s].Add(dy.Data[o])
		}
	}
	return g
}

func indexPrims[T Scalar[T]]() []*Prim[T] {
	padInfo := &OpInfo{Name: "pad", MinArity: 1, MaxArity: 1, Attrs: []string{"Widths", "Mode", "Value"},
		Exact: true, Smooth: true, ZeroPreserving: true, Polynomial: true,
		IR: &IRForm{Tag: "pad", Attrs: []string{"widths", "mode", "value"}, Superset: true,
			Doc: "ONNX Pad: widths (2·rank naturals, begins then ends), mode constant (fill value) | reflect (widths < extent) | edge"},
		Shape: func(a *Attrs, in []Shape) (Shape, error) { return padGeometry(a, in[0]) },
		Doc:   "pad by Widths (every begin, then every end) in Mode: constant (Value, 0 when nil), reflect (mirror, edge not repeated; widths < extent) or edge; vjp scatter-adds (reflected and edge positions accumulate)"}
	pad := &Prim[T]{OpInfo: padInfo,
		Forward: func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
			out, err := padGeometry(a, xs[0].Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			return applyMap(xs[0], out, padMap(a, xs[0].Shape, out), rc[T](attrRat(a.Value, new(big.Rat)))), nil
		},
		JVP: func(a *Attrs, xs []Tensor[T], _ Tensor[T], dxs []Tensor[T]) (Tensor[T], error) {
			if err := checkTangents(padInfo.Name, xs, dxs); err != nil {
				return Tensor[T]{}, err
			}
			out, err := padGeometry(a, xs[0].Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			var zero T
			return applyMap(dxs[0], out, padMap(a, xs[0].Shape, out), zero), nil
		},
		VJP: func(a *Attrs, xs []Tensor[T], y Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			if err := checkCotangent(padInfo.Name, y, dy); err != nil {
				return nil, err
			}
			out, err := padGeometry(a, xs[0].Shape)
			if err != nil {
				return nil, err
			}
			return []Tensor[T]{scatterAdd(xs[0].Shape, padMap(a, xs[0].Shape, out), dy)}, nil
		},
	}
	gather := linearUnaryPrim[T](&OpInfo{Name: "gather", Attrs: []string{"Axis", "IndicesShape", "Indices"},
		Exact: true, ZeroPreserving: true, Polynomial: true,
		IR: &IRForm{Tag: "gather", Attrs: []string{"axis", "indices_shape", "indices"}, Superset: true,
			Doc: "ONNX Gather with constant indices (naturals < the extent of axis): out shape in[:axis] ++ indices_shape ++ in[axis+1:]"},
		Shape: func(a *Attrs, in []Shape) (Shape, error) {
			_, out, err := gatherGeometry(a, in[0])
			return out, err
		},
		Doc: "y[p, j, q] = x[p, Indices[j], q] along Axis; vjp scatter-adds (repeated indices accumulate)"},
		func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
			ax, out, err := gatherGeometry(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			var zero T
			return applyMap(x, out, gatherMap(a, ax, x.Shape, out), zero), nil
		},
		func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
			ax, out, err := gatherGeometry(a, x.Shape)
			if err != nil {
				return Tensor[T]{}, err
			}
			return scatterAdd(x.Shape, gatherMap(a, ax, x.Shape, out), dy), nil
		})
	return []*Prim[T]{pad, gather}
}

// importedPrims lists the primitives added for imported models other than
// the window ones: pad, gather, sign, shrink, batch_norm_eval,
// instance_norm, lrn, hard_masked_softmax and keep_mask.
func importedPrims[T Scalar[T]]() []*Prim[T] {
	ps := indexPrims[T]()
	ps = append(ps, signShrinkPrims[T]()...)
	ps = append(ps, channelNormPrims[T]()...)
	return append(ps, maskPrims[T]()...)
}

// PadMap returns pad's index map for input shape x: entry o (row-major
// over the output) is the flat input index output o reads, or −1 for a
// constant fill position. It returns nil when the attributes do not fit x.
// Exported for tests that plant faults in pad's VJP.
func PadMap(a *Attrs, x Shape) []int {
	out, err := padGeometry(a, x)
	if err != nil {
		return nil
	}
	return padMap(a, x, out)
}

// GatherMap returns gather's index map for input shape x (entry o is the
// flat input index output o reads), or nil when the attributes do not fit
// x. Exported for tests that plant faults in gather's VJP.
func GatherMap(a *Attrs, x Shape) []int {
	ax, out, err := gatherGeometry(a, x)
	if err != nil {
		return nil
	}
	return gatherMap(a, ax, x, out)
}
