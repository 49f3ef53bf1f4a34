package spec

import (
	"fmt"
)

// Shape primitives rearrange elements without arithmetic; their VJPs are
// the inverse rearrangements (or the sum over broadcast axes), so all are
// exact and linear.

func shapeReshape(a *Attrs, in []Shape) (Shape, error) {
	n, err := a.Shape.Check(0)
	if err != nil {
		return nil, err
	}
	if n != in[0].Size() {
		return nil, fmt.Errorf("cannot reshape %v (%d elements) to %v (%d elements)", in[0], in[0].Size(), a.Shape, n)
	}
	return a.Shape.Clone(), nil
}

// flattenShape collapses the axes from start onward into one.
func flattenShape(s Shape, start int) (Shape, error) {
	if len(s) == 0 {
		return Shape{1}, nil
	}
	ax, err := normAxis(start, len(s))
	if err != nil {
		return nil, err
	}
	out := append(Shape{}, s[:ax]...)
	return append(out, Shape(s[ax:]).Size()), nil
}

func checkPerm(perm []int, r int) error {
	if len(perm) != r {
		return fmt.Errorf("permutation %v has %d entries for rank %d", perm, len(perm), r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= r || seen[p] {
			return fmt.Errorf("%v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
	}
	return nil
}

func permuteShape(s Shape, perm []int) Shape {
	out := make(Shape, len(perm))
	for i, p := range perm {
		out[i] = s[p]
	}
	return out
}

// Permute rearranges axes: output axis i is input axis perm[i].
func Permute[T any](x Tensor[T], perm []int) (Tensor[T], error) {
	if err := checkPerm(perm, x.Shape.Rank()); err != nil {
		return Tensor[T]{}, err
	}
	os := permuteShape(x.Shape, perm)
	out := Tensor[T]{Shape: os, Data: make([]T, len(x.Data))}
	r := len(perm)
	if rows, cols, ok := swapsLastTwo(x.Shape, perm); ok {
		// The transpose of every trailing rows×cols block (a matrix
		// transpose, or a batch of them): the same element moves, in
		// cache-sized tiles instead of one index computation each.
		if blk := rows * cols; blk > 0 {
			for o := 0; o < len(x.Data); o += blk {
				transposeTiled(out.Data[o:o+blk], x.Data[o:o+blk], rows, cols)
			}
		}
		return out, nil
	}
	ist := x.Shape.Strides()
	idx := make([]int, r)
	for o := range out.Data {
		src := 0
		for i := 0; i < r; i++ {
			src += idx[i] * ist[perm[i]]
		}
		out.Data[o] = x.Data[src]
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < os[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out, nil
}

// swapsLastTwo reports whether perm keeps every axis but the last two in
// place and swaps those two, and returns their extents.
func swapsLastTwo(s Shape, perm []int) (rows, cols int, ok bool) {
	r := len(perm)
	if r < 2 || perm[r-2] != r-1 || perm[r-1] != r-2 {
		return 0, 0, false
	}
	for i := 0; i < r-2; i++ {
		if perm[i] != i {
			return 0, 0, false
		}
	}
	return s[r-2], s[r-1], true
}

// transposeTiled writes the rows×cols row-major block src transposed into
// dst (cols×rows), dst[c·rows+r] = src[r·cols+c], in 32×32 tiles so that
// both sides stay in cache.
func transposeTiled[T any](dst, src []T, rows, cols int) {
	const tile = 32
	for r0 := 0; r0 < rows; r0 += tile {
		r1 := min(r0+tile, rows)
		for c0 := 0; c0 < cols; c0 += tile {
			c1 := min(c0+tile, cols)
			for r := r0; r < r1; r++ {
				row := src[r*cols : r*cols+cols]
				for c := c0; c < c1; c++ {
					dst[c*rows+r] = row[c]
				}
			}
		}
	}
}

func invertPerm(perm []int) []int {
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return inv
}

func transposePerm(r, a1, a2 int) ([]int, error) {
	x, err := normAxis(a1, r)
	if err != nil {
		return nil, err
	}
	y, err := normAxis(a2, r)
	if err != nil {
		return nil, err
	}
	perm := make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[x], perm[y] = perm[y], perm[x]
	return perm, nil
}

// BroadcastShape checks that from broadcasts to to (numpy rules, aligned
// on the right: each source extent equals the target or is 1).
func BroadcastShape(from, to Shape) error {
	if len(from) > len(to) {
		return fmt.Errorf("cannot broadcast %v to lower rank %v", from, to)
	}
	off := len(to) - len(from)
	for i, d := range from {
		if d != to[off+i] && d != 1 {
			return fmt.Errorf("cannot broadcast %v to %v: axis %d has extent %d, target %d", from, to, i, d, to[off+i])
		}
	}
	return nil
}

// broadcastIndex maps each target index to its source index.
func broadcastIndex(from, to Shape) []int {
	n := to.Size()
	src := make([]int, n)
	off := len(to) - len(from)
	fst := from.Strides()
	idx := make([]int, len(to))
	for o := 0; o < n; o++ {
		s := 0
		for i := range from {
			if from[i] != 1 {
				s += idx[off+i] * fst[i]
			}
		}
		src[o] = s
		for i := len(to) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < to[i] {
				break
			}
			idx[i] = 0
		}
	}
	return src
}

// BroadcastTo expands x to shape to.
func BroadcastTo[T any](x Tensor[T], to Shape) (Tensor[T], error) {
	if err := BroadcastShape(x.Shape, to); err != nil {
		return Tensor[T]{}, err
	}
	if _, err := to.Check(0); err != nil {
		return Tensor[T]{}, err
	}
	src := broadcastIndex(x.Shape, to)
	out := Tensor[T]{Shape: to.Clone(), Data: make([]T, len(src))}
	for o, s := range src {
		out.Data[o] = x.Data[s]
	}
	return out, nil
}

// unbroadcast sums a target-shaped cotangent back to the source shape, in
// target index order (a fixed left fold per source element).
func unbroadcast[T Scalar[T]](d Tensor[T], from Shape) Tensor[T] {
	src := broadcastIndex(from, d.Shape)
	out := zerosOf[T](from)
	for o, s := range src {
		out.Data[s] = out.Data[s].Add(d.Data[o])
	}
	return out
}

func shapePrims[T Scalar[T]]() []*Prim[T] {
	reshape := func(x Tensor[T], s Shape) (Tensor[T], error) {
		return Tensor[T]{Shape: s.Clone(), Data: append([]T(nil), x.Data...)}, nil
	}
	return []*Prim[T]{
		linearUnaryPrim[T](&OpInfo{Name: "reshape", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "reshape", Attrs: []string{"in_shape", "out_shape"}, Doc: "same elements, in_shape → out_shape"}, Gen: GenHint{Graph: 16}, Attrs: []string{"Shape"}, Exact: true, Shape: shapeReshape, Doc: "same elements, new shape"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) { return reshape(x, a.Shape) },
			func(_ *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) { return reshape(dy, x.Shape) }),
		linearUnaryPrim[T](&OpInfo{Name: "flatten", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "flatten", Attrs: []string{"in_shape"}, Doc: "in_shape → [size(in_shape)]"}, Gen: GenHint{Graph: 19}, Attrs: []string{"Axis"}, Exact: true,
			Shape: func(a *Attrs, in []Shape) (Shape, error) { return flattenShape(in[0], a.Axis) },
			Doc:   "collapse the axes from Axis (default 0) onward into one"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
				s, err := flattenShape(x.Shape, a.Axis)
				if err != nil {
					return Tensor[T]{}, err
				}
				return reshape(x, s)
			},
			func(_ *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) { return reshape(dy, x.Shape) }),
		linearUnaryPrim[T](&OpInfo{Name: "permute", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "permute", Attrs: []string{"perm"}, Doc: "output axis i is input axis perm[i]"}, Gen: GenHint{Graph: 17}, Attrs: []string{"Perm"}, Exact: true,
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				if err := checkPerm(a.Perm, len(in[0])); err != nil {
					return nil, err
				}
				return permuteShape(in[0], a.Perm), nil
			}, Doc: "output axis i is input axis perm[i]"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) { return Permute(x, a.Perm) },
			func(a *Attrs, _ Tensor[T], dy Tensor[T]) (Tensor[T], error) {
				return Permute(dy, invertPerm(a.Perm))
			}),
		linearUnaryPrim[T](&OpInfo{Name: "transpose", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "transpose", Attrs: []string{"axis1", "axis2"}, Doc: "swap two axes"}, Gen: GenHint{Graph: 18}, Attrs: []string{"Axis", "Axis2"}, Exact: true,
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				p, err := transposePerm(len(in[0]), a.Axis, a.Axis2)
				if err != nil {
					return nil, err
				}
				return permuteShape(in[0], p), nil
			}, Doc: "swap two axes"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
				p, err := transposePerm(x.Shape.Rank(), a.Axis, a.Axis2)
				if err != nil {
					return Tensor[T]{}, err
				}
				return Permute(x, p)
			},
			func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
				p, err := transposePerm(x.Shape.Rank(), a.Axis, a.Axis2)
				if err != nil {
					return Tensor[T]{}, err
				}
				return Permute(dy, p)
			}),
		linearUnaryPrim[T](&OpInfo{Name: "broadcast_to", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "broadcast_to", Attrs: []string{"from_shape", "to_shape"}, Doc: "numpy broadcast from_shape → to_shape"}, Gen: GenHint{Graph: 15}, Attrs: []string{"Shape"}, Exact: true,
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				if err := BroadcastShape(in[0], a.Shape); err != nil {
					return nil, err
				}
				return a.Shape.Clone(), nil
			}, Doc: "numpy broadcast; vjp sums over the broadcast axes"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) { return BroadcastTo(x, a.Shape) },
			func(_ *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) { return unbroadcast(dy, x.Shape), nil }),
		linearUnaryPrim[T](&OpInfo{Name: "slice", IR: &IRForm{Tag: "slice", Attrs: []string{"axis", "start", "end"}, Superset: true, Doc: "the elements [start, end) along axis"}, ZeroPreserving: true, Polynomial: true, Gen: GenHint{Graph: 21}, Attrs: []string{"Axis", "Start", "End"}, Exact: true,
			Shape: func(a *Attrs, in []Shape) (Shape, error) {
				ax, err := normAxis(a.Axis, len(in[0]))
				if err != nil {
					return nil, err
				}
				if a.Start < 0 || a.End < a.Start || a.End > in[0][ax] {
					return nil, fmt.Errorf("slice [%d:%d) out of range for axis %d of extent %d", a.Start, a.End, ax, in[0][ax])
				}
				s := in[0].Clone()
				s[ax] = a.End - a.Start
				return s, nil
			}, Doc: "elements Start..End-1 along Axis; vjp pads with zeros"},
			func(a *Attrs, x Tensor[T]) (Tensor[T], error) {
				ax, _ := normAxis(a.Axis, x.Shape.Rank())
				l := LanesOf(x.Shape, ax)
				s := x.Shape.Clone()
				s[ax] = a.End - a.Start
				out := zerosOf[T](s)
				ol := LanesOf(s, ax)
				for m := 0; m < l.Count(); m++ {
					for j := 0; j < ol.N; j++ {
						out.Data[ol.Base(m)+j*ol.Inner] = x.Data[l.Base(m)+(a.Start+j)*l.Inner]
					}
				}
				return out, nil
			},
			func(a *Attrs, x Tensor[T], dy Tensor[T]) (Tensor[T], error) {
				ax, _ := normAxis(a.Axis, x.Shape.Rank())
				l := LanesOf(x.Shape, ax)
				ol := LanesOf(dy.Shape, ax)
				out := zerosOf[T](x.Shape)
				for m := 0; m < l.Count(); m++ {
					for j := 0; j < ol.N; j++ {
						out.Data[l.Base(m)+(a.Start+j)*l.Inner] = dy.Data[ol.Base(m)+j*ol.Inner]
					}
				}
				return out, nil
			}),
		concatPrim[T](),
	}
}

func concatShape(a *Attrs, in []Shape) (Shape, error) {
	ax, err := normAxis(a.Axis, len(in[0]))
	if err != nil {
		return nil, err
	}
	out := in[0].Clone()
	for i := 1; i < len(in); i++ {
		if len(in[i]) != len(in[0]) {
			return nil, fmt.Errorf("parent %d has rank %d, expected %d", i, len(in[i]), len(in[0]))
		}
		for k := range in[i] {
			if k != ax && in[i][k] != in[0][k] {
				return nil, fmt.Errorf("parent %d has shape %v, incompatible with %v off axis %d", i, in[i], in[0], ax)
			}
		}
		out[ax] += in[i][ax]
	}
	return out, nil
}

// concatPrim joins its parents along Axis; the VJP slices the cotangent
// back into one piece per parent.
func concatPrim[T Scalar[T]]() *Prim[T] {
	info := &OpInfo{Name: "concat", ZeroPreserving: true, Polynomial: true, IR: &IRForm{Tag: "concat", MinArity: 2, MaxArity: -1, Attrs: []string{"axis"}, Doc: "join the parents along axis"}, Gen: GenHint{Graph: 20}, MinArity: 1, MaxArity: -1, Attrs: []string{"Axis"}, Exact: true, Linear: true, Smooth: true,
		Shape: concatShape, Doc: "join parents along Axis"}
	fwd := func(a *Attrs, xs []Tensor[T]) (Tensor[T], error) {
		in := make([]Shape, len(xs))
		for i, x := range xs {
			in[i] = x.Shape
		}
		s, err := concatShape(a, in)
		if err != nil {
			return Tensor[T]{}, err
		}
		ax, _ := normAxis(a.Axis, len(s))
		out := zerosOf[T](s)
		ol := LanesOf(s, ax)
		off := 0
		for _, x := range xs {
			l := LanesOf(x.Shape, ax)
			for m := 0; m < l.Count(); m++ {
				for j := 0; j < l.N; j++ {
					out.Data[ol.Base(m)+(off+j)*ol.Inner] = x.Data[l.Base(m)+j*l.Inner]
				}
			}
			off += l.N
		}
		return out, nil
	}
	return jointlyLinearPrim(info, fwd,
		func(a *Attrs, xs []Tensor[T], dy Tensor[T]) ([]Tensor[T], error) {
			ax, _ := normAxis(a.Axis, len(dy.Shape))
			ol := LanesOf(dy.Shape, ax)
			outs := make([]Tensor[T], len(xs))
			off := 0
			for i, x := range xs {
				g := zerosOf[T](x.Shape)
				l := LanesOf(x.Shape, ax)
				for m := 0; m < l.Count(); m++ {
					for j := 0; j < l.N; j++ {
						g.Data[l.Base(m)+j*l.Inner] = dy.Data[ol.Base(m)+(off+j)*ol.Inner]
					}
				}
				off += l.N
				outs[i] = g
			}
			return outs, nil
		})
}
