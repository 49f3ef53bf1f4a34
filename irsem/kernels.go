package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// The forward rules of the tags that have no spec registry primitive
// (hard_masked_softmax, batch_norm_eval, bernoulli_mask with a runtime
// keep probability, conv, max_pool, avg_pool), generic over spec.Scalar.
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

// hardMaskedSoftmax normalizes every last-axis row over its allowed
// entries: m = the max of the allowed entries (a left fold of Max from the
// first); numerator e_j = exp(x_j − m) where allowed and 0 elsewhere; the
// denominator a left fold from 0 over all numerators of the row; y_j =
// e_j/denominator. A row with no allowed entry is all zeros. A rank-0
// input gives 1 when allowed and 0 otherwise.
func hardMaskedSoftmax[T spec.Scalar[T]](x spec.Tensor[T], allowed []bool) (spec.Tensor[T], error) {
	out := zerosOf[T](x.Shape)
	var z T
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
					return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
				}
				num[j] = e
			}
			den = den.Add(num[j])
		}
		for j := 0; j < n; j++ {
			q, err := num[j].Div(den)
			if err != nil {
				return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", base+j, err)
			}
			out.Data[base+j] = q
		}
	}
	return out, nil
}

// batchNorm holds batch_norm_eval's per-channel constants over T. Gamma
// and Beta are nil when the payload gives none (γ = 1, β = 0).
type batchNorm[T spec.Scalar[T]] struct {
	axis        int
	mean, std   []T
	gamma, beta []T
}

// newBatchNorm computes std_c = sqrt(max(var_c, 0) + ε) once per channel.
func newBatchNorm[T spec.Scalar[T]](axis int, mean, vr, gamma, beta []T, eps T) (*batchNorm[T], error) {
	bn := &batchNorm[T]{axis: axis, mean: mean, gamma: gamma, beta: beta, std: make([]T, len(vr))}
	var z T
	for c, v := range vr {
		s, err := v.Max(z).Add(eps).Sqrt()
		if err != nil {
			return nil, fmt.Errorf("channel %d: sqrt(max(var,0)+eps): %w", c, err)
		}
		bn.std[c] = s
	}
	return bn, nil
}

// apply computes y = ((x − μ_c)/std_c)·γ_c + β_c elementwise.
func (bn *batchNorm[T]) apply(x spec.Tensor[T]) (spec.Tensor[T], error) {
	out := zerosOf[T](x.Shape)
	if len(x.Data) == 0 {
		return out, nil
	}
	c := x.Shape[bn.axis]
	inner := prod(x.Shape[bn.axis+1:])
	var z T
	one := z.FromInt(1)
	for i, v := range x.Data {
		ch := (i / inner) % c
		q, err := v.Sub(bn.mean[ch]).Div(bn.std[ch])
		if err != nil {
			return spec.Tensor[T]{}, fmt.Errorf("element %d: %w", i, err)
		}
		g, b := one, z
		if bn.gamma != nil {
			g = bn.gamma[ch]
		}
		if bn.beta != nil {
			b = bn.beta[ch]
		}
		out.Data[i] = q.Mul(g).Add(b)
	}
	return out, nil
}

// bernoulliMask draws a 0/1 mask of shape s from the keep probability q:
// element i is 1 − step((1−q) − u_i) with u_i = UniformRat(seed, i) as a
// T, i.e. 1 exactly when u_i ≥ 1 − q. Over Rat this is the registry's
// bernoulli_mask with drop probability P = 1 − q.
func bernoulliMask[T spec.Scalar[T]](s spec.Shape, seed uint64, q T) spec.Tensor[T] {
	out := zerosOf[T](s)
	var z T
	one := z.FromInt(1)
	drop := one.Sub(q)
	for i := range out.Data {
		u := FromRat[T](spec.RatFromBig(spec.UniformRat(seed, i)))
		out.Data[i] = one.Sub(drop.Sub(u).Step())
	}
	return out
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
