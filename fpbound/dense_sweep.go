package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/enclose"
)

// The dense sweep's kernels (sweep38): its products over their live terms
// only, and its residual charges and rounding bounds without calls in the
// common case (doc.go, "Dense sweep", "Live terms").

// liveProduct computes out = ⟨Ĉ, ρ⟩ ∋ s.c·J for every J in its enclosure
// (enclose's theorem) over the live terms of s (liveTerms): Product of
// the gathered columns of s.c and rows of J, with N = kk terms. It
// returns the gathered operands for the radius product (the caller puts
// them back in pool when gathered) and false when Product declines.
func liveProduct(s *adjMat, J *jac, o, n, nq int, out enclose.Planes, pool planePool) (sc, sr []float64, jp enclose.Planes, kk int, gathered, ok bool) {
	sc, sr, jp, kk, gathered = liveTerms(s, J, o, n, nq, pool)
	if !enclose.Product(o, nq, kk, enclose.Planes{C: sc}, false, jp, false, enclose.Planes{}, out) {
		return sc, sr, jp, kk, gathered, false
	}
	for ; liveShrink > 0 && gathered; liveShrink-- { // planted (tests only)
		for i, r := range out.R {
			if r > 0 {
				out.R[i] = math.Nextafter(r, 0)
			}
		}
	}
	return sc, sr, jp, kk, gathered, true
}

// liveShrink (tests only) plants a fault: the next gathered product's
// radii, each lowered by liveShrink ulps.
var liveShrink int

// diagRound is addUp(mulUp(2⁻⁵², |v|), 2⁻¹⁰⁷⁴) bit for bit, the bound of
// a diagonal product's rounding: for 0 < |v| < +∞, |v| ≠ 1, mulUp is
// up(2⁻⁵²·|v|) > 0 and finite, and addUp of it and 2⁻¹⁰⁷⁴ (neither 0
// nor +∞) is up of their sum; the other cases call the two.
func diagRound(v float64) float64 {
	if av := math.Abs(v); av > 0 && av < inf && av != 1 {
		return up(up(0x1p-52*av) + 0x1p-1074)
	}
	return addUp(mulUp(0x1p-52, math.Abs(v)), 0x1p-1074)
}

// finiteAll reports whether no element of f is +∞.
func finiteAll(f []float64) bool {
	for _, v := range f {
		if v == inf {
			return false
		}
	}
	return true
}

// settleCharged is settle's loop when every bound fo[i] is finite: row a
// of rho (o×n) is charged Σ_i rho[a,i]·fo[i] into resid[a], term by term
// in order, each step mulAddUp(acc, rho, fo) bit for bit. The common case
// (both factors positive, neither 1, acc finite: mulAddUp's own fast
// path) is written out here so that the loop makes no call; a zero factor
// adds nothing (mulUp gives 0 and addUp(acc, 0) is acc), and the other
// cases call mulAddUp.
func settleCharged(rho, fo []float64, o, n int, resid []float64) {
	for a := 0; a < o; a++ {
		row := rho[a*n : (a+1)*n]
		acc := resid[a]
		for i, v := range row {
			f := fo[i]
			switch {
			case v == 0 || f == 0:
				continue
			case v > 0 && v < inf && f > 0 && v != 1 && f != 1 && acc < inf:
				p := up(v * f)
				switch {
				case acc == 0:
					acc = p
				case p == inf:
					acc = inf
				default:
					acc = up(acc + p)
				}
			default:
				acc = mulAddUp(acc, v, f)
			}
		}
		resid[a] = acc
	}
}

// getRaw is get without clearing: for a plane whose every element is
// written before it is read.
func (p planePool) getRaw(n int) []float64 {
	if l := p[n]; len(l) > 0 {
		b := l[len(l)-1]
		p[n] = l[:len(l)-1]
		return b
	}
	return make([]float64, n)
}

// liveTerms returns the operands of the product s·J (s: o×n, J: n×nq)
// restricted to its live terms: the columns p of s with some centre
// s.c[·,p] or radius s.rad[·,p] not 0, and the rows p of J. sc (o×kk)
// and sr (o×kk, nil when s.rad is) are those columns of s.c and s.rad,
// jp (kk×nq) those rows of J's planes; gathered reports that they are
// copies from pool (every column is live: s's and J's own planes, kk =
// n). A dead column's terms s[a,p]·J[p,q] are the exact 0 for every J in
// its enclosure, and Dgemm's fold from +0 is unchanged, bit for bit, by
// dropping a ±0 term (doc.go, "Dense sweep", "Live terms").
func liveTerms(s *adjMat, J *jac, o, n, nq int, pool planePool) (sc, sr []float64, jp enclose.Planes, kk int, gathered bool) {
	live := make([]int, 0, n)
	for p := 0; p < n; p++ {
		for a := 0; a < o; a++ {
			if s.c[a*n+p] != 0 || (s.rad != nil && s.rad[a*n+p] != 0) {
				live = append(live, p)
				break
			}
		}
	}
	kk = len(live)
	if kk == n || sweepAllTerms {
		return s.c, s.rad, J.p, n, false
	}
	sc = pool.getRaw(o * kk)
	if s.rad != nil {
		sr = pool.getRaw(o * kk)
	}
	for a := 0; a < o; a++ {
		for t, p := range live {
			sc[a*kk+t] = s.c[a*n+p]
			if sr != nil {
				sr[a*kk+t] = s.rad[a*n+p]
			}
		}
	}
	jp.C = pool.getRaw(kk * nq)
	if J.p.R != nil {
		jp.R = pool.getRaw(kk * nq)
	}
	for t, p := range live {
		copy(jp.C[t*nq:(t+1)*nq], J.p.C[p*nq:(p+1)*nq])
		if jp.R != nil {
			copy(jp.R[t*nq:(t+1)*nq], J.p.R[p*nq:(p+1)*nq])
		}
	}
	return sc, sr, jp, kk, true
}

// sweepAllTerms (tests only) turns liveTerms off: every product runs over
// all n terms, as before sweep38.
var sweepAllTerms bool
