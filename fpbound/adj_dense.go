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

// adjLinearDenseWith is adjLinearDense after the weights' conversion to
// the planes wp (out×in): from adj intervals (adjPlanes) or from the
// payload's exact values (LinearDensePlane).
func adjLinearDenseWith(x []adj, src []int32, wp enclose.Planes, b, y []adj, rows, out, in int, withBias bool, shrink float64) bool {
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
	yp := enclose.Make(rows * out)
	if !enclose.Product(rows, out, in, xp, false, wp, true, bp, yp) {
		return false
	}
	if shrink != 1 {
		for i := range yp.R {
			yp.R[i] *= shrink
		}
	}
	pairs := make([]float64, 2*rows*out)
	enclose.ToPairs(yp, pairs)
	for i := range y[:rows*out] {
		y[i] = adj{iv: spec.Interval{Lo: pairs[2*i], Hi: pairs[2*i+1]}, id: fresh()}
	}
	return true
}
