package fpbound

import (
	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/spec"
)

// LinearDense is adj's dense path (spec.DenseLinear; doc.go, "Dense
// interval adjoints"): the interval linear layer y = x·Wᵀ + b, and through
// src a conv's or conv_transpose's windows, on enclose's midpoint-radius
// planes instead of spec.Interval's fold of corner products and outward-
// rounded sums. Weights, bias and inputs may be intervals. Each result
// is a sound enclosure of every real Σ_k x_k·w_k + b with x_k, w_k, b in
// the operands' intervals (enclose's theorem), with a fresh id (a sum, as
// the fold's Add gives it). It reports false, computing nothing, where an
// operand is not tame (an infinite, huge or NaN end): the fold then runs.
func (adj) LinearDense(x []adj, src []int32, w, b, y []adj, rows, out, in int, withBias bool) bool {
	return adjLinearDense(x, src, w, b, y, rows, out, in, withBias, 1)
}

// DenseVJP opts adj's LinearDense into the VJP rules of conv and
// conv_transpose in x (spec.DenseVJP): the sweeps' adjoints.
func (adj) DenseVJP() {}

// adjPlanes converts adj intervals to planes (no radius plane when every
// one is a point); ok is false when an interval is not ordered or an end
// is not tame. It is adjPlanesPairs without the 16-byte pair per element
// when every interval is a point (a layer's converted weights): the
// centre plane is then the points' values, which PointsFromPairs would
// return from the pairs (the same values, accepted under the same
// condition: every value tame, enclose.Tame), so the planes are the same
// bit for bit (TestAdjPlanesAgree); otherwise adjPlanesPairs runs.
func adjPlanes(x []adj) (enclose.Planes, bool) {
	points := true
	for i := range x {
		lo, hi := x[i].iv.Lo, x[i].iv.Hi
		if !(lo <= hi) {
			return enclose.Planes{}, false
		}
		points = points && lo == hi
	}
	if points {
		c := make([]float64, len(x))
		for i := range x {
			c[i] = x[i].iv.Lo
		}
		if p := (enclose.Planes{C: c}); enclose.Tame(p) {
			return p, true
		}
	}
	return adjPlanesPairs(x)
}

// planesOf is adjLinearDense's conversion to planes: adjPlanes (tests
// compare it with adjPlanesPairs).
var planesOf = adjPlanes

// adjPlanesPairs is adjPlanes through the interleaved endpoint pairs:
// enclose.PointsFromPairs, else enclose.FromPairs.
func adjPlanesPairs(x []adj) (enclose.Planes, bool) {
	pairs := make([]float64, 2*len(x))
	for i := range x {
		lo, hi := x[i].iv.Lo, x[i].iv.Hi
		if !(lo <= hi) {
			return enclose.Planes{}, false
		}
		pairs[2*i], pairs[2*i+1] = lo, hi
	}
	if p, ok := enclose.PointsFromPairs(pairs); ok {
		return p, true
	}
	p := enclose.Make(len(x))
	return p, enclose.FromPairs(pairs, p)
}

// gatherPlanes is the len(src)-element planes whose element i is element
// src[i] of p, or the exact 0 where src[i] < 0 (a window position over
// the padding: the fold's absent term).
func gatherPlanes(p enclose.Planes, src []int32) enclose.Planes {
	g := enclose.Planes{C: make([]float64, len(src))}
	if p.R != nil {
		g.R = make([]float64, len(src))
	}
	for i, s := range src {
		if s < 0 {
			continue
		}
		g.C[i] = p.C[s]
		if p.R != nil {
			g.R[i] = p.R[s]
		}
	}
	return g
}

// adjLinearDense is LinearDense with every radius of the result scaled by
// shrink before the conversion to endpoints: 1 in production; the tests
// plant shrink < 1 (0 drops the radius, and with it the a-priori rounding
// term) and must catch it.
func adjLinearDense(x []adj, src []int32, w, b, y []adj, rows, out, in int, withBias bool, shrink float64) bool {
	n := rows * in
	if rows <= 0 || out <= 0 || in <= 0 || len(w) < out*in || len(y) < rows*out || (withBias && len(b) < out) {
		return false
	}
	if (src == nil && len(x) < n) || (src != nil && len(src) < n) {
		return false
	}
	wp, ok := planesOf(w[:out*in])
	if !ok {
		return false
	}
	return adjLinearDenseWith(x, src, wp, b, y, rows, out, in, withBias, shrink)
}

// LinearDensePlane32 is adj's LinearDensePlane for the binary32 plane w
// of the weights' exact values (spec.DensePlane32): the same intervals, bit
// for bit, as LinearDensePlane on w widened to float64 — every binary32
// value widens exactly, so the tame check and every tile's centre plane
// are of the same float64s — read in place, tile by tile, so no float64
// plane of the whole layer is made.
func (adj) LinearDensePlane32(x []adj, src []int32, w []float32, b, y []adj, rows, out, in int, withBias bool) bool {
	if rows <= 0 || out <= 0 || in <= 0 || len(w) < out*in {
		return false
	}
	for _, v := range w[:out*in] {
		if !enclose.TameValue(float64(v)) {
			return false
		}
	}
	return adjLinearDenseRows(x, src, weightRows{f32: w[:out*in]}, b, y, rows, out, in, withBias, 1)
}

// adjLinearDenseWith is adjLinearDense after the weights' conversion to
// the planes wp (out×in): from adj intervals (adjPlanes) or from the
// payload's exact values (LinearDensePlane).
func adjLinearDenseWith(x []adj, src []int32, wp enclose.Planes, b, y []adj, rows, out, in int, withBias bool, shrink float64) bool {
	if out <= 0 || in <= 0 || len(wp.C) < out*in {
		return false
	}
	w := weightRows{c: wp.C[:out*in]}
	if wp.R != nil {
		w.r = wp.R[:out*in]
	}
	return adjLinearDenseRows(x, src, w, b, y, rows, out, in, withBias, shrink)
}

// adjLinearDenseRows is adjLinearDenseWith on the weights w (weightRows),
// one tile of W's rows at a time (tileRows), each tile's enclosures copied
// into their columns. Each output is the same bit for bit as with one
// product over all of W (linearDenseOn's argument: enclose.Product's
// element (r, j) depends on row r of x's planes, row j of W and bias j
// alone). One more case arises here, where W has radii: Product adds the
// radius product (|Xᶜ| + Xʳ)·Wʳ only when some radius of its W operand is
// non-zero, so a tile whose radii are all 0 skips it where the whole
// product would add, to those columns, the fold of products of a finite
// non-negative float64 and +0: +0 exactly, and R + (+0) = R (R ≥ 0). The
// fresh ids are drawn in the same order (output by output, after every
// tile), so they do not differ either.
func adjLinearDenseRows(x []adj, src []int32, w weightRows, b, y []adj, rows, out, in int, withBias bool, shrink float64) bool {
	n := rows * in
	if rows <= 0 || out <= 0 || in <= 0 || len(y) < rows*out || (withBias && len(b) < out) {
		return false
	}
	if (src == nil && len(x) < n) || (src != nil && len(src) < n) {
		return false
	}
	var ok bool
	var bp enclose.Planes
	if withBias {
		if bp, ok = planesOf(b[:out]); !ok {
			return false
		}
	}
	if src == nil {
		x = x[:n]
	}
	xp, ok := planesOf(x)
	if !ok {
		return false
	}
	if src != nil {
		xp = gatherPlanes(xp, src[:n])
	}
	var wbuf []float64
	pairs, ok := enclose.ProductTiles(rows, out, in, tileRows(out, in), xp, func(j0, j1 int) enclose.Planes { return w.tile(j0, j1, in, &wbuf) }, withBias, bp, shrink)
	if !ok {
		return false
	}
	for i := range y[:rows*out] {
		y[i] = adj{iv: spec.Interval{Lo: pairs[2*i], Hi: pairs[2*i+1]}, id: fresh()}
	}
	return true
}
