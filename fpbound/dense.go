package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/spec"
)

// LinearDense is the dense path of the linear layer y = x·Wᵀ + b over
// ErrOf (spec.DenseLinear; doc.go, "Dense linear layers"): with exact
// point weights and bias it computes, for every output, the pending sum
// that the element-by-element fold would build, its three sums Σ|W|·E,
// Σ|W|·|x| and the exact enclosure taken as float64 matrix products on
// planes (package enclose) instead of one struct operation per
// multiply-add. It reports false, computing nothing, where it does not
// apply (a weight or bias that is not an exact point, an operand without
// a finite bound or with a magnitude outside enclose's tame range, a
// possible overflow); the generic fold then runs.
func (ErrOf[F]) LinearDense(x, w, b, y []ErrOf[F], rows, out, in int, withBias bool) bool {
	return linearDense(x, w, b, y, rows, out, in, withBias, false)
}

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

// linearDense is LinearDense; plant (tests only) drops the relative
// rounding term u·Σ|W|·|x| of the products, an unsound bound the tests
// must catch.
func linearDense[F format](x, w, b, y []ErrOf[F], rows, out, in int, withBias, plant bool) bool {
	if rows <= 0 || out <= 0 || in <= 0 || len(x) < rows*in || len(w) < out*in || len(y) < rows*out || (withBias && len(b) < out) {
		return false
	}
	c := constsOf[F]()
	// Weights: exact tame points; |W| and the number of non-zero weights
	// of each output row.
	wc := make([]float64, out*in)
	cnt := make([]int64, out)
	for i := range wc {
		v, ok := pointOf(w[i])
		if !ok {
			return false
		}
		wc[i] = v
		if v != 0 {
			cnt[i/in]++
		}
	}
	var bp enclose.Planes
	bc := make([]float64, out)
	if withBias {
		for j := range bc {
			v, ok := pointOf(b[j])
			if !ok {
				return false
			}
			bc[j] = v
		}
		bp = enclose.Planes{C: bc}
	}
	// Inputs: closed, finite bound and enclosure; the endpoint pairs for
	// the enclosure and, stacked, the planes E (bounds) over M (magnitudes).
	pairs := make([]float64, 2*rows*in)
	em := make([]float64, 2*rows*in)
	for i := 0; i < rows*in; i++ {
		v := x[i].close()
		if math.IsInf(v.e, 1) || math.IsInf(v.x.Lo, 0) || math.IsInf(v.x.Hi, 0) {
			return false
		}
		pairs[2*i], pairs[2*i+1] = v.x.Lo, v.x.Hi
		e, ok1 := liftUp(v.e)
		m, ok2 := liftUp(mag(v.x))
		if !ok1 || !ok2 {
			return false
		}
		em[i], em[rows*in+i] = e, m
	}
	xp, ok := enclose.PointsFromPairs(pairs)
	if !ok {
		xp = enclose.Make(rows * in)
		if !enclose.FromPairs(pairs, xp) {
			return false
		}
	}
	wabs := make([]float64, len(wc))
	for i, v := range wc {
		wabs[i] = math.Abs(v)
	}
	// The exact values: enclose's theorem gives ⟨Ĉ, ρ⟩ ∋ (x·Wᵀ + b) for
	// every x in the enclosures; ToPairs rounds outward.
	yp := enclose.Make(rows * out)
	if !enclose.Product(rows, out, in, xp, false, enclose.Planes{C: wc}, true, bp, yp) {
		return false
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
	uq := c.u
	if plant {
		uq = 0
	}
	res := make([]ErrOf[F], rows*out)
	for r := 0; r < rows; r++ {
		for j := 0; j < out; j++ {
			i := r*out + j
			p, q := pqpairs[2*i+1], pqpairs[2*(rows*out+i)+1]
			if !c.fits(addUp(p, q)) {
				return false // a product may overflow: the fold says so per term
			}
			// Σ_k e_k with e_k = |W|E_k + u·(|W||x_k| + |W|E_k) + 2η.
			e := addUp(addUp(mulUp(addUp(1, c.u), p), mulUp(uq, q)), mulUp(float64(cnt[j]), c.sub))
			s := addUp(q, e) // Σ_k (|W||x_k| + e_k)
			n := cnt[j]
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
	copy(y, res)
	return true
}
