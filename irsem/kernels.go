package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// The forward rules of the tags that have no spec registry primitive
// (conv, max_pool, avg_pool), generic over spec.Scalar.
// Every sum is a left fold from the scalar's zero in the order stated, so
// a float result is determined bit for bit and a Rat result exactly.

func zerosOf[T any](s spec.Shape) spec.Tensor[T] {
	return spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
}

func prod(xs []int) int {
	n := 1
	for _, x := range xs {
		n *= x
	}
	return n
}

// windowRange returns the kernel positions [lo, hi) along one spatial axis
// whose input index base + j·dil lies in [0, n), for j in [0, k).
func windowRange(base, k, dil, n int) (lo, hi int) {
	if base < 0 {
		lo = (-base + dil - 1) / dil
	}
	if n-1-base < 0 {
		return lo, lo
	}
	hi = (n-1-base)/dil + 1
	if hi > k {
		hi = k
	}
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

// nextIndex advances the row-major multi-index idx within [lo, hi) and
// reports whether it is still inside.
func nextIndex(idx, lo, hi []int) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < hi[d] {
			return true
		}
		idx[d] = lo[d]
	}
	return false
}

func stridesOf(xs []int) []int {
	st := make([]int, len(xs))
	acc := 1
	for i := len(xs) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= xs[i]
	}
	return st
}

// windowIter walks the in-bounds kernel positions of one output position.
type windowIter struct {
	r                  int
	kernel, stride     []int
	padding, dilation  []int
	inSp, inStr        []int
	base, lo, hi, j, o []int
}

func newWindowIter(p *windowPlan) *windowIter {
	w := p.w
	r := len(w.Kernel)
	dil := w.Dilation
	if dil == nil {
		dil = make([]int, r)
		for i := range dil {
			dil[i] = 1
		}
	}
	return &windowIter{r: r, kernel: w.Kernel, stride: w.Stride, padding: w.Padding, dilation: dil,
		inSp: p.inSp, inStr: stridesOf(p.inSp),
		base: make([]int, r), lo: make([]int, r), hi: make([]int, r), j: make([]int, r), o: make([]int, r)}
}

// start prepares the window of the current output index it.o and reports
// whether it holds any in-bounds position.
func (it *windowIter) start() bool {
	nonEmpty := true
	for d := 0; d < it.r; d++ {
		it.base[d] = it.o[d]*it.stride[d] - it.padding[d]
		it.lo[d], it.hi[d] = windowRange(it.base[d], it.kernel[d], it.dilation[d], it.inSp[d])
		if it.lo[d] >= it.hi[d] {
			nonEmpty = false
		}
		it.j[d] = it.lo[d]
	}
	return nonEmpty
}

// offset is the flat spatial input index of kernel position it.j.
func (it *windowIter) offset() int {
	s := 0
	for d := 0; d < it.r; d++ {
		s += (it.base[d] + it.j[d]*it.dilation[d]) * it.inStr[d]
	}
	return s
}

// pool computes max_pool (maxPool) or avg_pool over the trailing spatial
// axes. Max: a left fold of Max from the first in-bounds element of the
// window in row-major order (padding positions are ignored, as PyTorch's
// −∞ padding). Avg: a left fold from 0 over the in-bounds elements (the
// zero padding contributes nothing), divided by the full kernel size
// (count_include_pad).
func pool[T spec.Scalar[T]](p *windowPlan, x spec.Tensor[T], maxPool bool) (spec.Tensor[T], error) {
	out := zerosOf[T](p.out)
	inSize, outSize := prod(p.inSp), prod(p.outSp)
	var z T
	kSize := z.FromInt(int64(prod(p.w.Kernel)))
	it := newWindowIter(p)
	zero := make([]int, it.r)
	lead := prod(p.lead)
	for l := 0; l < lead; l++ {
		for i := range it.o {
			it.o[i] = 0
		}
		for oi := 0; oi < outSize; oi++ {
			xb := l * inSize
			if maxPool {
				if !it.start() {
					return spec.Tensor[T]{}, fmt.Errorf("output %d: empty pooling window", l*outSize+oi)
				}
				m := x.Data[xb+it.offset()]
				for nextIndex(it.j, it.lo, it.hi) {
					m = m.Max(x.Data[xb+it.offset()])
				}
				out.Data[l*outSize+oi] = m
			} else {
				var acc T
				if it.start() {
					acc = acc.Add(x.Data[xb+it.offset()])
					for nextIndex(it.j, it.lo, it.hi) {
						acc = acc.Add(x.Data[xb+it.offset()])
					}
				}
				q, err := acc.Div(kSize)
				if err != nil {
					return spec.Tensor[T]{}, fmt.Errorf("output %d: %w", l*outSize+oi, err)
				}
				out.Data[l*outSize+oi] = q
			}
			nextIndex(it.o, zero, p.outSp)
		}
	}
	return out, nil
}

// conv computes the grouped convolution
//
//	y[l, co, o] = (Σ_{ci} Σ_{j} x[l, g·Cg+ci, o·s − p + j·d] · W[co, ci, j]) + b[co]
//
// with g = co / (out_channels/groups) and Cg = in_channels/groups: a left
// fold from 0 with ci outer and the kernel positions j in row-major order
// inner, padding positions skipped (they are zeros), the bias added last
// (not at all when the payload has none).
func conv[T spec.Scalar[T]](p *windowPlan, x, w spec.Tensor[T], b *spec.Tensor[T]) spec.Tensor[T] {
	out := zerosOf[T](p.out)
	win := p.w
	c, cout, groups := p.channel, win.OutChannels, win.Groups
	cg, cog := c/groups, cout/groups
	inSize, outSize, kSize := prod(p.inSp), prod(p.outSp), prod(win.Kernel)
	kStr := stridesOf(win.Kernel)
	it := newWindowIter(p)
	zero := make([]int, it.r)
	lead := prod(p.lead)
	for l := 0; l < lead; l++ {
		for co := 0; co < cout; co++ {
			g := co / cog
			for i := range it.o {
				it.o[i] = 0
			}
			for oi := 0; oi < outSize; oi++ {
				var acc T
				if it.start() {
					for ci := 0; ci < cg; ci++ {
						xb := (l*c + g*cg + ci) * inSize
						wb := (co*cg + ci) * kSize
						copy(it.j, it.lo)
						for {
							wi := wb
							for d := 0; d < it.r; d++ {
								wi += it.j[d] * kStr[d]
							}
							acc = acc.Add(x.Data[xb+it.offset()].Mul(w.Data[wi]))
							if !nextIndex(it.j, it.lo, it.hi) {
								break
							}
						}
					}
				}
				if b != nil {
					acc = acc.Add(b.Data[co])
				}
				out.Data[(l*cout+co)*outSize+oi] = acc
				nextIndex(it.o, zero, p.outSp)
			}
		}
	}
	return out
}
