package enclose

import "math"

// Sums along lanes (reduce_sum, reduce_mean, sum) work on intervals as
// interleaved endpoint pairs — the layout the interval tensors already
// have — rather than on centre and radius planes: a sum of intervals is
// the interval of the sums of the endpoints, so the lower and the upper
// endpoints are each a plain float64 sum, and converting to midpoint-
// radius form and back would cost more than the sums themselves. The
// rounding of each sum is charged a priori by the same γ_n argument as
// Product (see "Lane sums" in the package documentation).

// SumPairs encloses the sums (mean: the means) of intervals along lanes.
// x holds outer·n·inner intervals as pairs x[2e] = lo, x[2e+1] = hi; lane
// (o, i), o < outer, i < inner, holds the n elements e = (o·n + j)·inner + i,
// j < n, and its result is written to y as the pair of element o·inner + i
// (y holds 2·outer·inner values). Every result [lo, hi] satisfies
// lo ≤ Σ_j lo_j and Σ_j hi_j ≤ hi (divided by n for the mean), so it
// encloses the sum (mean) of every choice of reals from the lane's
// intervals. It reports false, with y unspecified, when n = 0, n > 2⁴⁰,
// or a sum or bound is not finite (an infinite endpoint; an overflow);
// the caller then folds element by element.
func SumPairs(x []float64, outer, n, inner int, mean bool, y []float64) bool {
	return sumPairs(x, outer, n, inner, mean, y, false)
}

// sumPairs is SumPairs; unsound (tests only) drops the rounding bound.
func sumPairs(x []float64, outer, n, inner int, mean bool, y []float64, unsound bool) bool {
	if n <= 0 || n > maxTerms || outer < 0 || inner < 0 {
		return false
	}
	lanes := outer * inner
	_ = x[:2*lanes*n]
	_ = y[:2*lanes]
	g, f := gammaBound(n), 1+math.Ldexp(float64(n), -52)
	if unsound {
		g, f = 0, 1
	}
	if inner == 1 {
		return sumContiguous(x, outer, n, mean, y, g, f)
	}
	// acc[4i…4i+3]: the folds of lo, |lo|, hi, |hi| of lane (o, i).
	acc := make([]float64, 4*inner)
	for o := 0; o < outer; o++ {
		clear(acc)
		for j := 0; j < n; j++ {
			row := x[2*(o*n+j)*inner : 2*(o*n+j+1)*inner]
			for i := 0; i < inner; i++ {
				lo, hi := row[2*i], row[2*i+1]
				a := acc[4*i : 4*i+4 : 4*i+4]
				a[0] = a[0] + lo
				a[1] = a[1] + math.Abs(lo)
				a[2] = a[2] + hi
				a[3] = a[3] + math.Abs(hi)
			}
		}
		for i := 0; i < inner; i++ {
			a := acc[4*i : 4*i+4 : 4*i+4]
			lo, hi, ok := sumBounds(a[0], a[1], a[2], a[3], g, f)
			if !ok {
				return false
			}
			if mean {
				lo, hi = down(lo/float64(n)), up(hi/float64(n))
			}
			y[2*(o*inner+i)], y[2*(o*inner+i)+1] = plusZero(lo), plusZero(hi)
		}
	}
	return true
}

// sumContiguous is sumPairs for contiguous lanes (inner = 1): the same
// four folds per lane, in four scalar accumulators.
func sumContiguous(x []float64, outer, n int, mean bool, y []float64, g, f float64) bool {
	for o := 0; o < outer; o++ {
		var sLo, aLo, sHi, aHi float64
		lane := x[2*o*n : 2*(o+1)*n]
		for j := 0; j+1 < len(lane); j += 2 {
			lo, hi := lane[j], lane[j+1]
			sLo = sLo + lo
			aLo = aLo + math.Abs(lo)
			sHi = sHi + hi
			aHi = aHi + math.Abs(hi)
		}
		lo, hi, ok := sumBounds(sLo, aLo, sHi, aHi, g, f)
		if !ok {
			return false
		}
		if mean {
			lo, hi = down(lo/float64(n)), up(hi/float64(n))
		}
		y[2*o], y[2*o+1] = plusZero(lo), plusZero(hi)
	}
	return true
}

// sumBounds turns the computed folds of one lane — sLo of the lower
// endpoints, aLo of their magnitudes, likewise sHi and aHi — into
// endpoints lo ≤ Σ lo_j and Σ hi_j ≤ hi, given g ≥ γ_n and F = 1 + n·2⁻⁵²
// (see the package documentation); ok is false when a value is not
// finite.
func sumBounds(sLo, aLo, sHi, aHi, g, f float64) (lo, hi float64, ok bool) {
	lo, hi = sLo, sHi // every term 0: the fold is exact
	if aLo != 0 {
		lo = down(sLo - up(f*up(g*aLo)))
	}
	if aHi != 0 {
		hi = up(sHi + up(f*up(g*aHi)))
	}
	if math.IsInf(aLo, 0) || math.IsInf(aHi, 0) || math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return 0, 0, false
	}
	return lo, hi, true
}

// plusZero returns x with a zero made +0.
func plusZero(x float64) float64 {
	if x == 0 {
		return 0
	}
	return x
}

// DivPairs writes into y (same length as x) an enclosure of each interval
// of x (interleaved pairs) divided by the positive integer n: lo′ ≤ lo/n
// and hi/n ≤ hi′ (the pairs are copied when n = 1). It reports false,
// with y unspecified, when n < 1 or an endpoint is not finite.
func DivPairs(x []float64, n int, y []float64) bool {
	if n < 1 {
		return false
	}
	y = y[:len(x)]
	d := float64(n)
	for e := 0; e+1 < len(x); e += 2 {
		lo, hi := x[e], x[e+1]
		if math.IsInf(lo, 0) || math.IsInf(hi, 0) || math.IsNaN(lo) || math.IsNaN(hi) {
			return false
		}
		if n > 1 {
			lo, hi = down(lo/d), up(hi/d)
		}
		y[e], y[e+1] = plusZero(lo), plusZero(hi)
	}
	return true
}
