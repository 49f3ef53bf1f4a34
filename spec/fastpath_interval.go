package spec

// Dense kernels for the Interval scalar. matmul, linear (forward and
// VJP), conv and conv_transpose (forward) over Interval run on package
// enclose: the operands are converted once to midpoint-radius float64
// planes, the product is enclosed with enclose.Product (two or three
// float64 matrix products whose rounding is charged by the a-priori
// bound proved in enclose's documentation), and the result is converted
// back to outward-rounded endpoints. The result is a sound enclosure of
// the same exact real as the generic rule's interval fold, but not the
// same interval: the generic fold tracks each rounding by an error-free
// transformation, the dense kernel bounds them all at once. Where an
// operand is not tame (an infinite or huge endpoint, see enclose), the
// kernels report false and the generic interval fold runs instead.

import (
	"unsafe"

	"github.com/tlcheck/tlcheck/enclose"
)

// ivPairs views a []Interval as interleaved float64 endpoints (Interval
// is struct{ Lo, Hi float64 }: two float64 fields, no padding).
func ivPairs(d []Interval) []float64 {
	return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(d))), 2*len(d))
}

// ivPlanes converts intervals to planes; ok is false when a value is not
// tame.
func ivPlanes(d []Interval) (enclose.Planes, bool) {
	if p, ok := enclose.PointsFromPairs(ivPairs(d)); ok {
		return p, true // points (weights): no radius plane
	}
	p := enclose.Make(len(d))
	return p, enclose.FromPairs(ivPairs(d), p)
}

// ivDense is the smallest number of multiply-adds for which the dense
// kernels are used; below it the generic fold is as fast.
const ivDense = 64

// linearFwdIv is linearFwd over Interval: y = x·Wᵀ + b on the planes.
func linearFwdIv(x, w, b, y []Interval, rows, out, in int, withBias bool) bool {
	if rows*out*in < ivDense {
		return false
	}
	xp, ok1 := ivPlanes(x[:rows*in])
	wp, ok2 := ivPlanes(w)
	var bp enclose.Planes
	ok3 := true
	if withBias {
		bp, ok3 = ivPlanes(b)
	}
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	yp := enclose.Make(rows * out)
	if !enclose.Product(rows, out, in, xp, false, wp, true, bp, yp) {
		return false
	}
	enclose.ToPairs(yp, ivPairs(y))
	return true
}

// linearVJPIv is the linear VJP over Interval: dx = δ·W, dW = δᵀ·x and
// db = 1ᵀ·δ (the column sums as a product with ones), on the planes.
func linearVJPIv(x, w, dy, dx, dw, db []Interval, rows, out, in int) bool {
	if rows*out*in < ivDense {
		return false
	}
	xp, ok1 := ivPlanes(x[:rows*in])
	wp, ok2 := ivPlanes(w)
	dp, ok3 := ivPlanes(dy[:rows*out])
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	dxp, dwp, dbp := enclose.Make(rows*in), enclose.Make(out*in), enclose.Make(out)
	ones := enclose.Planes{C: make([]float64, rows)} // points: no radius plane
	for i := range ones.C {
		ones.C[i] = 1
	}
	if !enclose.Product(rows, in, out, dp, false, wp, false, enclose.Planes{}, dxp) ||
		!enclose.Product(out, in, rows, dp, true, xp, false, enclose.Planes{}, dwp) ||
		!enclose.Product(1, out, rows, ones, false, dp, false, enclose.Planes{}, dbp) {
		return false
	}
	enclose.ToPairs(dxp, ivPairs(dx))
	enclose.ToPairs(dwp, ivPairs(dw))
	enclose.ToPairs(dbp, ivPairs(db))
	return true
}

// sub is the planes of elements [lo, hi) of p.
func sub(p enclose.Planes, lo, hi int) enclose.Planes {
	s := enclose.Planes{C: p.C[lo:hi]}
	if p.R != nil {
		s.R = p.R[lo:hi]
	}
	return s
}

// matmulFwdIv is matmulFwd over Interval: per batch, C = A·B on planes.
func matmulFwdIv(p *mmPlan, a, b, out []Interval) bool {
	if len(p.AIndex)*p.M*p.N*p.K < ivDense {
		return false
	}
	ap, ok1 := ivPlanes(a)
	bp, ok2 := ivPlanes(b)
	if !ok1 || !ok2 {
		return false
	}
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	cp := enclose.Make(len(out))
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		if !enclose.Product(p.M, p.N, p.K, sub(ap, ao, ao+mk), false, sub(bp, bo, bo+kn), false,
			enclose.Planes{}, enclose.Planes{C: cp.C[co : co+mn], R: cp.R[co : co+mn]}) {
			return false
		}
	}
	enclose.ToPairs(cp, ivPairs(out))
	return true
}

// convFwdIv is conv's and conv_transpose's forward rule over Interval
// (transposed selects conv_transpose). Per leading slice and group q it
// gathers the input into columns X[o, ci·K + a] (the input element that
// kernel offset a of input channel ci meets at output position o, 0
// where the window hangs over the padding; the pairs come from the same
// relation index the generic rule folds over) and encloses
// Yᵀ = X·W_qᵀ + b_q with W_q[cp, ci·K + a] the group's weights (for conv
// a contiguous block of W; for conv_transpose, whose W is [C_in,
// C_out/groups, k…], a gathered copy). Every output sums cg·K terms
// (zeros included), plus the bias.
func convFwdIv(g *winGeom, x, w []Interval, b []Interval, y []Interval, transposed bool) bool {
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	outSp, inSp, key := S, B, keySmall
	if transposed {
		outSp, inSp, key = B, S, keyBig
	}
	if g.lead*g.cout*outSp*cg*K < ivDense {
		return false
	}
	xp, ok1 := ivPlanes(x)
	wp, ok2 := ivPlanes(w)
	var bp enclose.Planes
	ok3 := true
	if b != nil {
		bp, ok3 = ivPlanes(b)
	}
	if !ok1 || !ok2 || !ok3 {
		return false
	}
	idx := g.index(key)
	kk := cg * K
	cols := enclose.Make(outSp * kk)
	yt := enclose.Make(outSp * cog)
	yp := enclose.Make(len(y))
	var wq enclose.Planes
	if transposed {
		wq = enclose.Make(cog * kk)
	}
	for l := 0; l < g.lead; l++ {
		for q := 0; q < g.groups; q++ {
			clear(cols.C)
			clear(cols.R)
			for o := 0; o < outSp; o++ {
				row := o * kk
				for ci := 0; ci < cg; ci++ {
					xb := (l*g.cin + q*cg + ci) * inSp
					for p := idx.start[o]; p < idx.start[o+1]; p++ {
						cols.C[row+ci*K+idx.a[p]] = xp.C[xb+idx.b[p]]
						if xp.R != nil {
							cols.R[row+ci*K+idx.a[p]] = xp.R[xb+idx.b[p]]
						}
					}
				}
			}
			if transposed {
				for cp := 0; cp < cog; cp++ {
					for ci := 0; ci < cg; ci++ {
						src := ((q*cg+ci)*cog + cp) * K
						copy(wq.C[cp*kk+ci*K:cp*kk+ci*K+K], wp.C[src:src+K])
						if wp.R != nil {
							copy(wq.R[cp*kk+ci*K:cp*kk+ci*K+K], wp.R[src:src+K])
						}
					}
				}
			} else {
				w0 := q * cog * kk
				wq = enclose.Planes{C: wp.C[w0 : w0+cog*kk]}
				if wp.R != nil {
					wq.R = wp.R[w0 : w0+cog*kk]
				}
			}
			var bq enclose.Planes
			if b != nil {
				bq = enclose.Planes{C: bp.C[q*cog : q*cog+cog]}
				if bp.R != nil {
					bq.R = bp.R[q*cog : q*cog+cog]
				}
			}
			if !enclose.Product(outSp, cog, kk, cols, false, wq, true, bq, yt) {
				return false
			}
			for cp := 0; cp < cog; cp++ {
				base := (l*g.cout + q*cog + cp) * outSp
				for o := 0; o < outSp; o++ {
					yp.C[base+o] = yt.C[o*cog+cp]
					yp.R[base+o] = yt.R[o*cog+cp]
				}
			}
		}
	}
	enclose.ToPairs(yp, ivPairs(y))
	return true
}
