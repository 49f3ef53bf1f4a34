package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/spec"
)

// LinearDense is the dense path of every product with exact point
// weights over ErrOf (spec.DenseLinear; doc.go, "Dense linear layers"):
// the linear layer y = x·Wᵀ + b, and — through src, which gathers the
// rows×in matrix from x — a convolution's kernel×window dot products and
// a matmul with one constant operand. With exact point weights and bias
// it computes, for every output, the pending sum that the element-by-
// element fold would build, its three sums Σ|W|·E, Σ|W|·|x| and the exact
// enclosure taken as float64 matrix products on planes (package enclose)
// instead of one struct operation per multiply-add. It reports false,
// computing nothing, where it does not apply (a weight or bias that is not
// an exact point, an operand without a finite bound or with a magnitude
// outside enclose's tame range, a possible overflow); the generic fold
// then runs.
func (ErrOf[F]) LinearDense(x []ErrOf[F], src []int32, w, b, y []ErrOf[F], rows, out, in int, withBias bool) bool {
	return linearDense(x, src, w, b, y, rows, out, in, withBias, plantNone)
}

// LinearDensePlane is LinearDense with the weights as the float64 plane w
// of their exact values (spec.DensePlane): the weight FromRat(w[i]) is the
// exact point w[i] with bound 0 exactly when w[i] is a value of the
// format F, which is what denseWeights asks of it, so where every weight
// is a tame value of F it computes what LinearDense computes on the
// converted weights — the same planes wc = w, |W| and counts feed the
// same kernel — and otherwise it reports false, as LinearDense would (a
// weight that is not a value of F converts to a point with a non-zero
// bound, which LinearDense declines). It never holds one ErrOf per
// weight: 8 bytes a weight for |W| beside the caller's plane, instead of
// 72 for the converted weights and 16 for their planes.
func (ErrOf[F]) LinearDensePlane(x []ErrOf[F], src []int32, w []float64, b, y []ErrOf[F], rows, out, in int, withBias bool) bool {
	return linearDensePlane(x, src, w, b, y, rows, out, in, withBias, plantNone)
}

// linearDensePlane is LinearDensePlane with a planted fault (tests only).
func linearDensePlane[F format](x []ErrOf[F], src []int32, w []float64, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	if !denseArgs(x, src, len(w), len(b), len(y), rows, out, in, withBias) {
		return false
	}
	wabs, cnt, ok := planeWeights[F](w[:out*in], in)
	if !ok {
		return false
	}
	return linearDenseOn(x, src, w[:out*in], wabs, cnt, b, y, rows, out, in, withBias, pl)
}

// planeWeights is denseWeights for the plane w of exact weight values:
// |W| and each row's number of non-zero weights; ok is false when a weight
// is not a tame value of the format F (FromRat would not make it an exact
// tame point with bound 0).
func planeWeights[F format](w []float64, in int) (wabs []float64, cnt []int64, ok bool) {
	var fm F
	wabs, cnt = make([]float64, len(w)), make([]int64, len(w)/in)
	for i, v := range w {
		a := math.Abs(v)
		if v != 0 && (!fm.holds(v) || a < denseLo || a > denseHi) {
			return nil, nil, false
		}
		wabs[i] = a
		if v != 0 {
			cnt[i/in]++
		}
	}
	return wabs, cnt, true
}

// plant selects a fault that the tests must catch (plantNone in
// production).
type plant int

const (
	plantNone     plant = iota
	plantRounding       // drop the products' relative rounding term u·Σ|W|·|x|
	plantRadius         // drop the enclosure's radius: the float64 centre as a point
)

var (
	denseLo = math.Ldexp(1, -300)
	denseHi = math.Ldexp(1, 300)
)

// liftUp returns an upper bound of v ≥ 0 that enclose accepts as tame (0
// or in [2⁻³⁰⁰, 2³⁰⁰]): v itself, or 2⁻³⁰⁰ for a tiny v; ok is false for
// a v above 2³⁰⁰ (or NaN, +∞).
func liftUp(v float64) (float64, bool) {
	switch {
	case v == 0:
		return 0, true
	case v > 0 && v < denseLo:
		return denseLo, true
	case v >= denseLo && v <= denseHi:
		return v, true
	}
	return 0, false
}

// pointOf reports the value of an exact closed point with bound 0 whose
// magnitude is tame.
func pointOf[F format](v ErrOf[F]) (float64, bool) {
	if v.n >= 2 || v.e != 0 || v.x.Lo != v.x.Hi {
		return 0, false
	}
	a := math.Abs(v.x.Lo)
	return v.x.Lo, a == 0 || (a >= denseLo && a <= denseHi)
}

// denseWeights is W (out×in) as a plane of exact points, |W|, and the
// number of non-zero weights of each row; ok is false when a weight is
// not an exact tame point.
func denseWeights[F format](w []ErrOf[F], out, in int) (wc, wabs []float64, cnt []int64, ok bool) {
	wc, wabs, cnt = make([]float64, out*in), make([]float64, out*in), make([]int64, out)
	for i := range wc {
		v, ok := pointOf(w[i])
		if !ok {
			return nil, nil, nil, false
		}
		wc[i], wabs[i] = v, math.Abs(v)
		if v != 0 {
			cnt[i/in]++
		}
	}
	return wc, wabs, cnt, true
}

// inputPlanes closes every input and returns its enclosure as planes and,
// stacked, the planes E (bounds, em[:n]) over M (magnitudes, em[n:]);
// ok is false for an input without a finite bound or enclosure, or one
// whose bound or magnitude exceeds 2³⁰⁰.
func inputPlanes[F format](x []ErrOf[F]) (xp enclose.Planes, em []float64, ok bool) {
	n := len(x)
	pairs := make([]float64, 2*n)
	em = make([]float64, 2*n)
	for i := range x {
		v := x[i].close()
		if math.IsInf(v.e, 1) || math.IsInf(v.x.Lo, 0) || math.IsInf(v.x.Hi, 0) {
			return xp, nil, false
		}
		pairs[2*i], pairs[2*i+1] = v.x.Lo, v.x.Hi
		e, ok1 := liftUp(v.e)
		m, ok2 := liftUp(mag(v.x))
		if !ok1 || !ok2 {
			return xp, nil, false
		}
		em[i], em[n+i] = e, m
	}
	if xp, ok = enclose.PointsFromPairs(pairs); ok {
		return xp, em, true
	}
	xp = enclose.Make(n)
	return xp, em, enclose.FromPairs(pairs, xp)
}

// gather is the n = len(src) element matrix whose element i is element
// src[i] of (xp, em), or the exact zero (bound and magnitude 0) where
// src[i] < 0.
func gather(xp enclose.Planes, em []float64, src []int32) (enclose.Planes, []float64) {
	n, m := len(src), len(xp.C)
	gp := enclose.Planes{C: make([]float64, n)}
	if xp.R != nil {
		gp.R = make([]float64, n)
	}
	gm := make([]float64, 2*n)
	for i, s := range src {
		if s < 0 {
			continue
		}
		gp.C[i] = xp.C[s]
		if xp.R != nil {
			gp.R[i] = xp.R[s]
		}
		gm[i], gm[n+i] = em[s], em[m+int(s)]
	}
	return gp, gm
}

// linearDense is LinearDense with a planted fault (tests only).
func linearDense[F format](x []ErrOf[F], src []int32, w, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	if !denseArgs(x, src, len(w), len(b), len(y), rows, out, in, withBias) {
		return false
	}
	// Weights: exact tame points.
	wc, wabs, cnt, ok := denseWeights(w, out, in)
	if !ok {
		return false
	}
	return linearDenseOn(x, src, wc, wabs, cnt, b, y, rows, out, in, withBias, pl)
}

// denseArgs reports whether the operands' lengths fit the dense kernel's
// dimensions (nw, nb, ny: the lengths of w, b and y).
func denseArgs[F format](x []ErrOf[F], src []int32, nw, nb, ny, rows, out, in int, withBias bool) bool {
	n := rows * in
	if rows <= 0 || out <= 0 || in <= 0 || nw < out*in || ny < rows*out || (withBias && nb < out) {
		return false
	}
	return (src == nil && len(x) >= n) || (src != nil && len(src) >= n)
}

// linearDenseOn is the kernel of linearDense once the weights are planes:
// wc their exact values (out×in), wabs |W| and cnt each row's number of
// non-zero weights.
func linearDenseOn[F format](x []ErrOf[F], src []int32, wc, wabs []float64, cnt []int64, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	n := rows * in
	ok := true
	// Bias: exact tame points.
	var bp enclose.Planes
	bc := make([]float64, out)
	if withBias {
		for j := range bc {
			if bc[j], ok = pointOf(b[j]); !ok {
				return false
			}
		}
		bp = enclose.Planes{C: bc}
	}
	// Inputs: closed, finite bound and enclosure, gathered by src.
	if src == nil {
		x = x[:n]
	}
	xp, em, ok := inputPlanes(x)
	if !ok {
		return false
	}
	if src != nil {
		xp, em = gather(xp, em, src[:n])
	}
	// The exact values: enclose's theorem gives ⟨Ĉ, ρ⟩ ∋ (x·Wᵀ + b) for
	// every x in the enclosures; ToPairs rounds outward.
	yp := enclose.Make(rows * out)
	if !enclose.Product(rows, out, in, xp, false, enclose.Planes{C: wc}, true, bp, yp) {
		return false
	}
	if pl == plantRadius {
		clear(yp.R)
	}
	ypairs := make([]float64, 2*rows*out)
	enclose.ToPairs(yp, ypairs)
	// P = Σ|W|·E (rows 0…rows−1) and Q = Σ|W|·M (rows rows…2·rows−1),
	// enclosed likewise: their upper endpoints are upper bounds of the
	// exact real sums.
	pq := enclose.Make(2 * rows * out)
	if !enclose.Product(2*rows, out, in, enclose.Planes{C: em}, false, enclose.Planes{C: wabs}, true, enclose.Planes{}, pq) {
		return false
	}
	pqpairs := make([]float64, 4*rows*out)
	enclose.ToPairs(pq, pqpairs)
	res, ok := denseCharges[F](ypairs, pqpairs, bc, termCounts(em, wc, cnt, rows, out, in), rows, out, withBias, pl == plantRounding)
	if !ok {
		return false
	}
	copy(y, res)
	return true
}

// termCounts is the number of terms of each output (r, j) that the fold
// keeps: the k with W[j,k] ≠ 0 whose input is not an exact zero (bound
// and magnitude 0; the fold drops the exact-zero product, and a gathered
// padding position is one). Without exact-zero inputs it is the row's
// count of non-zero weights; otherwise the product of the 0/1 indicator
// matrices, which float64 computes exactly (integer sums below 2⁵³).
func termCounts(em, wc []float64, cnt []int64, rows, out, in int) []float64 {
	n := rows * in
	nz := make([]float64, n)
	zeros := false
	for i := range nz {
		if em[i] != 0 || em[n+i] != 0 {
			nz[i] = 1
		} else {
			zeros = true
		}
	}
	counts := make([]float64, rows*out)
	if !zeros {
		for i := range counts {
			counts[i] = float64(cnt[i%out])
		}
		return counts
	}
	wnz := make([]float64, len(wc))
	for i, v := range wc {
		if v != 0 {
			wnz[i] = 1
		}
	}
	fastcpu.Dgemm(false, true, rows, out, in, nz, in, wnz, in, counts, out)
	return counts
}

// denseCharges builds the pending sums from the enclosures ypairs, the
// upper bounds P, Q in pqpairs and the weights' counts (doc.go, "Dense
// linear layers"); dropU (tests only) drops the relative rounding term
// u·Q, an unsound bound the tests must catch.
func denseCharges[F format](ypairs, pqpairs, bc, cnt []float64, rows, out int, withBias, dropU bool) ([]ErrOf[F], bool) {
	c := constsOf[F]()
	uq := c.u
	if dropU {
		uq = 0
	}
	res := make([]ErrOf[F], rows*out)
	for r := 0; r < rows; r++ {
		for j := 0; j < out; j++ {
			i := r*out + j
			p, q := pqpairs[2*i+1], pqpairs[2*(rows*out+i)+1]
			if !c.fits(addUp(p, q)) {
				return nil, false // a product may overflow: the fold says so per term
			}
			// Σ_k e_k with e_k = |W|E_k + u·(|W||x_k| + |W|E_k) + 2η.
			e := addUp(addUp(mulUp(addUp(1, c.u), p), mulUp(uq, q)), mulUp(cnt[i], c.sub))
			s := addUp(q, e) // Σ_k (|W||x_k| + e_k)
			n := int64(cnt[i])
			if withBias && bc[j] != 0 {
				s = addUp(s, math.Abs(bc[j]))
				n++
			}
			v := ErrOf[F]{x: spec.Interval{Lo: ypairs[2*i], Hi: ypairs[2*i+1]}, e: e}
			if n >= 2 {
				v.s, v.n = s, n
			}
			res[i] = v
		}
	}
	return res, true
}
