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
// converted weights — the same values wc = w, |W| and counts feed the
// same kernel — and otherwise it reports false, as LinearDense would (a
// weight that is not a value of F converts to a point with a non-zero
// bound, which LinearDense declines). It never holds one ErrOf per
// weight, nor a |W| plane of the whole layer: |W| is derived tile by tile
// (weightRows), instead of 72 bytes a weight for the converted weights
// and 16 for their planes.
func (ErrOf[F]) LinearDensePlane(x []ErrOf[F], src []int32, w []float64, b, y []ErrOf[F], rows, out, in int, withBias bool) bool {
	return linearDensePlane(x, src, w, b, y, rows, out, in, withBias, plantNone)
}

// LinearDensePlane32 is LinearDensePlane for the binary32 plane w of the
// weights' exact values (spec.DensePlane32): it reads w in place, tile by
// tile, and fills y exactly as LinearDensePlane does on w widened to
// float64. Proof: every binary32 value widens to float64 exactly, so the
// tile planes it builds (weightRows.tile) hold, element for element, the
// float64s LinearDensePlane would read from the widened plane; the
// acceptance test (a tame value of F) and the counts are taken of those
// same float64s; and the kernel computes every output from those values
// alone (linearDenseOn). So nothing about the bound changes; only no
// whole-layer float64 plane (8 bytes a weight) is made.
func (ErrOf[F]) LinearDensePlane32(x []ErrOf[F], src []int32, w []float32, b, y []ErrOf[F], rows, out, in int, withBias bool) bool {
	if len(w) < out*in || out <= 0 || in <= 0 {
		return false
	}
	return linearDenseRows(x, src, weightRows{f32: w[:out*in]}, b, y, rows, out, in, withBias, plantNone)
}

// linearDensePlane is LinearDensePlane with a planted fault (tests only).
func linearDensePlane[F format](x []ErrOf[F], src []int32, w []float64, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	if len(w) < out*in || out <= 0 || in <= 0 {
		return false
	}
	return linearDenseRows(x, src, weightRows{c: w[:out*in]}, b, y, rows, out, in, withBias, pl)
}

// linearDenseRows is LinearDensePlane and LinearDensePlane32 on the
// weights w (c or f32, out×in exactly), with a planted fault (tests only).
func linearDenseRows[F format](x []ErrOf[F], src []int32, w weightRows, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	if !denseArgs(x, src, out*in, len(b), len(y), rows, out, in, withBias) {
		return false
	}
	cnt, ok := planeWeights[F](w, out, in)
	if !ok {
		return false
	}
	return linearDenseOn(x, src, w, cnt, b, y, rows, out, in, withBias, pl)
}

// planeWeights is denseWeights for a plane of exact weight values (w.c or
// w.f32, read as float64s, exact): each row's number of non-zero weights;
// ok is false when a weight is not a tame value of the format F (FromRat
// would not make it an exact tame point with bound 0). One pass, nothing
// per weight allocated (|W| is the kernel's, per tile).
func planeWeights[F format](w weightRows, out, in int) (cnt []int64, ok bool) {
	var fm F
	cnt = make([]int64, out)
	check := func(i int, v float64) bool {
		if v == 0 {
			return true
		}
		a := math.Abs(v)
		if !fm.holds(v) || a < denseLo || a > denseHi {
			return false
		}
		cnt[i/in]++
		return true
	}
	if w.f32 != nil {
		for i, v := range w.f32 {
			if !check(i, float64(v)) {
				return nil, false
			}
		}
		return cnt, true
	}
	for i, v := range w.c {
		if !check(i, v) {
			return nil, false
		}
	}
	return cnt, true
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

// denseWeights is W (out×in) as a plane of exact points and the number
// of non-zero weights of each row; ok is false when a weight is not an
// exact tame point. (|W| is derived per tile by linearDenseOn.)
func denseWeights[F format](w []ErrOf[F], out, in int) (wc []float64, cnt []int64, ok bool) {
	wc, cnt = make([]float64, out*in), make([]int64, out)
	for i := range wc {
		v, ok := pointOf(w[i])
		if !ok {
			return nil, nil, false
		}
		wc[i] = v
		if v != 0 {
			cnt[i/in]++
		}
	}
	return wc, cnt, true
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
	wc, cnt, ok := denseWeights(w, out, in)
	if !ok {
		return false
	}
	return linearDenseOn(x, src, weightRows{c: wc}, cnt, b, y, rows, out, in, withBias, pl)
}

// denseArgs reports whether the operands' lengths fit the dense kernel's
// dimensions (nw, nb, ny: the lengths of w, b and y).
func denseArgs[F format](x []ErrOf[F], src []int32, nw, nb, ny, rows, out, in int, withBias bool) bool {
	n := rows * in
	if sumOrderOn() {
		return false // a summation-order profile needs each sum's terms in order (order.go)
	}
	if rows <= 0 || out <= 0 || in <= 0 || nw < out*in || ny < rows*out || (withBias && nb < out) {
		return false
	}
	return (src == nil && len(x) >= n) || (src != nil && len(src) >= n)
}

// linearDenseOn is the kernel of linearDense once the weights are planes:
// w their exact values (out×in, weightRows) and cnt each row's number of
// non-zero weights.
//
// Tiles: the three products (the enclosure x·Wᵀ + b, P and Q against |W|,
// and the term counts against [W ≠ 0]) run on W's rows [j0, j1) at a time
// (tileRows: every row at once for a layer of at most denseTileElems
// weights), each tile's |W| and [W ≠ 0] derived from its rows, and the
// results copied into their columns. Every output (r, j) is the same bit
// for bit as with one product over all of W: enclose.Product computes
// each output element from row r of its left operand, row j of W and
// the bias element j alone — fastcpu.Dgemm's element is the left fold
// over k of the rounded products whatever the blocking or the number of
// columns (its documented summation order), and g, F and the bias term
// depend on k and j only — and the left operands (the input planes, [E;
// M], the non-zero indicators) are the same for every tile.
func linearDenseOn[F format](x []ErrOf[F], src []int32, w weightRows, cnt []int64, b, y []ErrOf[F], rows, out, in int, withBias bool, pl plant) bool {
	n := rows * in
	ok := true
	// Bias: exact tame points.
	bc := make([]float64, out)
	if withBias {
		for j := range bc {
			if bc[j], ok = pointOf(b[j]); !ok {
				return false
			}
		}
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
	nz, zeros := nonZeroInputs(em, n)
	ypairs := make([]float64, 2*rows*out)
	pqpairs := make([]float64, 4*rows*out)
	counts := make([]float64, rows*out)
	var wbuf, abuf []float64
	tr := tileRows(out, in)
	for j0 := 0; j0 < out; j0 += tr {
		j1 := min(out, j0+tr)
		nt := j1 - j0
		wt := w.tile(j0, j1, in, &wbuf)
		// The exact values: enclose's theorem gives ⟨Ĉ, ρ⟩ ∋ (x·Wᵀ + b)
		// for every x in the enclosures; ToPairs rounds outward.
		var bp enclose.Planes
		if withBias {
			bp = enclose.Planes{C: bc[j0:j1]}
		}
		yp := enclose.Make(rows * nt)
		if !enclose.Product(rows, nt, in, xp, false, wt, true, bp, yp) {
			return false
		}
		if pl == plantRadius {
			clear(yp.R)
		}
		t := make([]float64, 4*rows*nt)
		enclose.ToPairs(yp, t[:2*rows*nt])
		scatterTile(ypairs, t, rows, out, j0, nt, 2)
		// P = Σ|W|·E (rows 0…rows−1) and Q = Σ|W|·M (rows
		// rows…2·rows−1), enclosed likewise: their upper endpoints are
		// upper bounds of the exact real sums.
		if cap(abuf) < nt*in {
			abuf = make([]float64, nt*in)
		}
		wabs := abuf[:nt*in]
		for i, v := range wt.C {
			wabs[i] = math.Abs(v)
		}
		pq := enclose.Make(2 * rows * nt)
		if !enclose.Product(2*rows, nt, in, enclose.Planes{C: em}, false, enclose.Planes{C: wabs}, true, enclose.Planes{}, pq) {
			return false
		}
		enclose.ToPairs(pq, t)
		scatterTile(pqpairs, t, 2*rows, out, j0, nt, 2)
		ct := termCounts(nz, zeros, wt.C, cnt[j0:j1], wabs, rows, nt, in)
		scatterTile(counts, ct, rows, out, j0, nt, 1)
	}
	res, ok := denseCharges[F](ypairs, pqpairs, bc, counts, rows, out, withBias, pl == plantRounding)
	if !ok {
		return false
	}
	copy(y, res)
	return true
}

// nonZeroInputs is the 0/1 plane [input i is not an exact zero] (bound
// and magnitude not both 0) of the n gathered inputs, and whether some
// input is an exact zero.
func nonZeroInputs(em []float64, n int) (nz []float64, zeros bool) {
	nz = make([]float64, n)
	for i := range nz {
		if em[i] != 0 || em[n+i] != 0 {
			nz[i] = 1
		} else {
			zeros = true
		}
	}
	return nz, zeros
}

// termCounts is the number of terms of each output (r, j) that the fold
// keeps, for the out rows of W given as wc (out×in) with cnt their
// counts of non-zero weights: the k with W[j,k] ≠ 0 whose input is not an
// exact zero (the fold drops the exact-zero product, and a gathered
// padding position is one). Without exact-zero inputs it is the row's
// count of non-zero weights; otherwise the product of the 0/1 indicator
// matrices nz and [W ≠ 0], which float64 computes exactly (integer sums
// below 2⁵³), built in scratch (len(wc) elements, overwritten).
func termCounts(nz []float64, zeros bool, wc []float64, cnt []int64, scratch []float64, rows, out, in int) []float64 {
	counts := make([]float64, rows*out)
	if !zeros {
		for i := range counts {
			counts[i] = float64(cnt[i%out])
		}
		return counts
	}
	wnz := scratch[:len(wc)]
	for i, v := range wc {
		wnz[i] = 0
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
