package spec

// DenseLinear is implemented by a scalar that has its own dense kernel for
// products with constant weights: the linear layer y = x·Wᵀ + b (X is
// rows×in, W out×in, b of length out, y rows×out, all row-major), which
// conv, conv_transpose and a matmul with one constant operand reduce to
// (denseConv, denseMatmul). A scalar algebra defined above this package
// (fpbound's error bounds) can so run them on contiguous planes instead of
// the element-by-element fold. X's element (r, k) is x[r·in + k] when src
// is nil, and otherwise x[src[r·in + k]], or an absent term (an exact
// zero, which the fold would not add: a window position over the padding)
// where src[r·in + k] < 0. LinearDense fills y and reports true, or reports
// false — having left y's meaning unchanged — when it does not apply (then
// the generic fold runs). The method must not depend on its receiver's
// value (it is called on the zero value) and must return a result that
// satisfies the scalar's own soundness theorem for the generic fold's
// semantics, stated in the implementing package's doc.
type DenseLinear[T any] interface {
	LinearDense(x []T, src []int32, w, b, y []T, rows, out, in int, withBias bool) bool
}

// denseConv runs conv's (transposed: conv_transpose's) forward rule on a
// DenseLinear scalar: per leading slice l and group q, Yᵀ = X·W_qᵀ + b_q
// with X[o, ci·K + a] the input element that kernel offset a of the
// group's input channel ci meets at output position o (the pairs of the
// relation index the generic rule folds over, absent over the padding),
// gathered from the slice's contiguous channels by one src table, and
// W_q[cp, ci·K + a] the group's weights (for conv a contiguous block of W;
// for conv_transpose, whose W is [C_in, C_out/groups, k…], a gathered
// copy). Each output is the fold's dot product of the same terms, plus the
// bias. It reports false, leaving y to the generic rule, when the scalar
// has no dense kernel or the kernel declines.
func denseConv[T Scalar[T]](g *winGeom, x, w []T, b []T, y []T, transposed bool) bool {
	var zero T
	d, ok := any(zero).(DenseLinear[T])
	if !ok {
		return false
	}
	return denseConvWith(g, x, w, b, y, transposed, d.LinearDense)
}

// denseConvWith is denseConv with the weights w of element type W (the
// scalar T itself, or DensePlane's float64 plane) and the kernel lin that
// reads them; the gathering, the group blocks and the scatter into y are
// the same for both.
func denseConvWith[T, W any](g *winGeom, x []T, w []W, b []T, y []T, transposed bool,
	lin func(x []T, src []int32, w []W, b, y []T, rows, out, in int, withBias bool) bool) bool {
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	outSp, inSp, key := S, B, keySmall
	if transposed {
		outSp, inSp, key = B, S, keyBig
	}
	kk := cg * K
	if g.lead*g.cout*outSp*kk < ivDense || int64(cg)*int64(inSp) >= 1<<31 {
		return false
	}
	idx := g.index(key)
	src := make([]int32, outSp*kk)
	for i := range src {
		src[i] = -1
	}
	for o := 0; o < outSp; o++ {
		for ci := 0; ci < cg; ci++ {
			for p := idx.start[o]; p < idx.start[o+1]; p++ {
				src[o*kk+ci*K+idx.a[p]] = int32(ci*inSp + idx.b[p])
			}
		}
	}
	var wq []W
	if transposed {
		wq = make([]W, cog*kk)
	}
	yt := make([]T, outSp*cog)
	var bq []T
	for l := 0; l < g.lead; l++ {
		for q := 0; q < g.groups; q++ {
			if transposed {
				for cp := 0; cp < cog; cp++ {
					for ci := 0; ci < cg; ci++ {
						s := ((q*cg+ci)*cog + cp) * K
						copy(wq[cp*kk+ci*K:cp*kk+ci*K+K], w[s:s+K])
					}
				}
			} else {
				wq = w[q*cog*kk : (q+1)*cog*kk]
			}
			if b != nil {
				bq = b[q*cog : (q+1)*cog]
			}
			x0 := (l*g.cin + q*cg) * inSp
			if !lin(x[x0:x0+cg*inSp], src, wq, bq, yt, outSp, cog, kk, b != nil) {
				return false
			}
			for cp := 0; cp < cog; cp++ {
				base := (l*g.cout + q*cog + cp) * outSp
				for o := 0; o < outSp; o++ {
					y[base+o] = yt[o*cog+cp]
				}
			}
		}
	}
	return true
}

// denseMatmul runs one batch C = A·B (M×K times K×N) of matmul on a
// DenseLinear scalar, bt being B's block transposed (N×K): when B is
// constant, C = A·(bt)ᵀ is a linear layer without bias; when A is, Cᵀ =
// bt·Aᵀ is one, transposed into c. Each element is the fold's dot product
// of the same terms. It reports false when the scalar has no dense kernel
// or the kernel declines both.
func denseMatmul[T Scalar[T]](a, bt, c []T, m, n, k int) bool {
	var zero T
	d, ok := any(zero).(DenseLinear[T])
	if !ok || m*n*k < ivDense {
		return false
	}
	if d.LinearDense(a, nil, bt, nil, c, m, n, k, false) {
		return true
	}
	ct := make([]T, n*m)
	if !d.LinearDense(bt, nil, a, nil, ct, n, m, k, false) {
		return false
	}
	transposeInto(c, ct, n, m)
	return true
}
