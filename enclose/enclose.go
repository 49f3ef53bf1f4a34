package enclose

import (
	"math"
	"sync"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/internal/par"
)

// Planes is an enclosure of a real vector in midpoint-radius form:
// element i is ⟨C[i], R[i]⟩ = [C[i] − R[i], C[i] + R[i]], R[i] ≥ 0.
// C and R have the same length, or R is nil, which means every radius is
// 0 (a vector of points, such as a model's weights: no radius plane is
// stored or read). A Planes with nil C stands for "absent" (no bias).
// Product's output must have an R plane.
type Planes struct{ C, R []float64 }

// Make returns planes of n zero elements (the point 0).
func Make(n int) Planes { return Planes{C: make([]float64, n), R: make([]float64, n)} }

// Len is the number of elements.
func (p Planes) Len() int { return len(p.C) }

var (
	tameLo = math.Ldexp(1, -300)
	tameHi = math.Ldexp(1, 300)
)

// The bit patterns of tameLo and tameHi: for non-negative float64s (and
// NaN, whose patterns lie above +∞'s) the order of the patterns as
// unsigned integers is the order of the values.
const (
	tameLoBits = (1023 - 300) << 52
	tameHiBits = (1023 + 300) << 52
)

// tame reports whether x = 0 or 2⁻³⁰⁰ ≤ |x| ≤ 2³⁰⁰ (false for NaN and ±∞),
// comparing |x|'s bit pattern with those of the bounds.
func tame(x float64) bool {
	b := math.Float64bits(x) &^ (1 << 63)
	return b == 0 || (b >= tameLoBits && b <= tameHiBits)
}

// TameValue reports whether x is tame: x = 0 or 2⁻³⁰⁰ ≤ |x| ≤ 2³⁰⁰ (false
// for NaN and ±∞); Tame asks it of every centre and radius.
func TameValue(x float64) bool { return tame(x) }

// Tame reports whether every centre and radius of p is tame (see the
// package documentation).
func Tame(p Planes) bool {
	var wild atomic.Bool // an AND over the elements: the same for any split
	forElems(len(p.C), func(lo, hi int) {
		for _, c := range p.C[lo:hi] {
			if !tame(c) {
				wild.Store(true)
				return
			}
		}
	})
	if wild.Load() {
		return false
	}
	forElems(len(p.R), func(lo, hi int) {
		for _, r := range p.R[lo:hi] {
			if !tame(r) || r < 0 {
				wild.Store(true)
				return
			}
		}
	})
	return !wild.Load()
}

// parMin is the plane length from which the elementwise passes here
// (Tame, product's |·| and radius passes) run on par's pool, in chunks of
// parGrain elements.
const (
	parMin   = 1 << 16
	parGrain = 1 << 14
)

// forElems runs body over [0, n): on par's pool (par.For, fixed chunks)
// when n ≥ parMin, else in one call. Every body here computes element i
// from the inputs' element i alone and writes only element i (or ORs a
// flag), so the result is the same bits for any GOMAXPROCS and schedule,
// each element's arithmetic being the serial loop's.
func forElems(n int, body func(lo, hi int)) {
	if n < parMin {
		body(0, n)
		return
	}
	par.For(n, parGrain, body)
}

// radius is p's radius i (0 when p has no radius plane).
func (p Planes) radius(i int) float64 {
	if p.R == nil {
		return 0
	}
	return p.R[i]
}

// Point reports whether every radius of p is 0.
func (p Planes) Point() bool {
	for _, r := range p.R {
		if r != 0 {
			return false
		}
	}
	return true
}

// up returns the next float64 above x (x finite, not NaN; +∞ stays +∞
// only through the caller never passing it): math.Nextafter(x, +∞) by
// stepping the bit pattern, which is what Nextafter does, without its
// special-case branches.
func up(x float64) float64 {
	switch {
	case x > 0:
		return math.Float64frombits(math.Float64bits(x) + 1)
	case x < 0:
		return math.Float64frombits(math.Float64bits(x) - 1)
	case x == 0:
		return math.Float64frombits(1) // the smallest subnormal
	}
	return x // NaN
}

// down is −up(−x): the next float64 below x.
func down(x float64) float64 { return -up(-x) }

// FromPairs converts intervals given as interleaved endpoints pairs[2i] =
// lo, pairs[2i+1] = hi into p (which must have len(pairs)/2 elements),
// each ⟨c, r⟩ ⊇ [lo, hi]: c = lo/2 + hi/2 (lo itself for a point),
// r = max(nextUp(fl(c − lo)), nextUp(fl(hi − c))), which is ≥ both exact
// distances; then tiny values are lifted (|c| < 2⁻³⁰⁰ moves into the
// radius, 0 < r < 2⁻³⁰⁰ becomes 2⁻³⁰⁰), which only enlarges the set. It
// reports whether every resulting value is tame; when it is not (an
// infinite or huge endpoint) p holds unspecified values and the caller
// must not use it.
func FromPairs(pairs []float64, p Planes) bool {
	ok := true
	for i := range p.C {
		lo, hi := pairs[2*i], pairs[2*i+1]
		var c, r float64
		if lo == hi {
			c = lo
		} else {
			c = lo/2 + hi/2
			r = max(up(c-lo), up(hi-c))
		}
		if a := math.Abs(c); a != 0 && a < tameLo {
			r, c = up(r+a), 0
		}
		if r != 0 && r < tameLo {
			r = tameLo
		}
		p.C[i], p.R[i] = c, r
		ok = ok && tame(c) && tame(r)
	}
	return ok
}

// PointsFromPairs is FromPairs for intervals that are all points (lo =
// hi): it returns planes with no radius plane, or ok false — having
// converted nothing — when some interval is not a point or some value is
// not tame (then use FromPairs).
func PointsFromPairs(pairs []float64) (p Planes, ok bool) {
	n := len(pairs) / 2
	if n > 0 && (pairs[0] != pairs[1] || !tame(pairs[0])) {
		return Planes{}, false // the common refusal, before allocating
	}
	c := make([]float64, n)
	for i := range c {
		lo := pairs[2*i]
		if lo != pairs[2*i+1] || !tame(lo) {
			return Planes{}, false
		}
		c[i] = lo
	}
	return Planes{C: c}, true
}

// twoSum returns fl(a+b) and the exact error a + b − fl(a+b) (Knuth's
// TwoSum; exact when nothing overflows).
func twoSum(a, b float64) (s, e float64) {
	s = a + b
	bb := s - a
	e = (a - (s - bb)) + (b - bb)
	return s, e
}

// ToPairs writes the endpoints of p as interleaved pairs: lo ≤ C − R and
// C + R ≤ hi exactly (the rounding of each difference is detected with
// TwoSum and corrected by one ulp outward only when it went inward). Zero
// endpoints are +0. An infinite radius gives infinite endpoints.
func ToPairs(p Planes, pairs []float64) {
	for i, c := range p.C {
		r := p.R[i]
		if r == 0 {
			if c == 0 {
				c = 0 // +0
			}
			pairs[2*i], pairs[2*i+1] = c, c
			continue
		}
		lo, e := twoSum(c, -r)
		if e < 0 {
			lo = down(lo)
		}
		hi, f := twoSum(c, r)
		if f > 0 {
			hi = up(hi)
		}
		if lo == 0 {
			lo = 0
		}
		if hi == 0 {
			hi = 0
		}
		pairs[2*i], pairs[2*i+1] = lo, hi
	}
}

// maxTerms bounds N, the terms one output sums (Product refuses more).
const maxTerms = 1 << 40

// gammaBound returns a float64 g ≥ γ_N = N·u/(1 − N·u), u = 2⁻⁵³, for
// 1 ≤ N ≤ 2⁴⁰ (see the package documentation).
func gammaBound(n int) float64 {
	nu := math.Ldexp(float64(n), -53)
	if n <= 1<<26 {
		return up(nu + 2*nu*nu)
	}
	return math.Ldexp(float64(n), -52)
}

// absInto writes |src| into dst.
func absInto(dst, src []float64) {
	forElems(len(src), func(lo, hi int) {
		for i, v := range src[lo:hi] {
			dst[lo+i] = math.Abs(v)
		}
	})
}

// scratchPool recycles Product's scratch planes (every element is written
// before it is read, so reuse never changes a result).
var scratchPool sync.Pool

// getScratch returns a pooled slice of length n.
func getScratch(n int) *[]float64 {
	if p, _ := scratchPool.Get().(*[]float64); p != nil && cap(*p) >= n {
		*p = (*p)[:n]
		return p
	}
	s := make([]float64, n)
	return &s
}

// Product encloses out = op(A)·op(B) + bias, where op(A) is m×k and
// op(B) is k×n, stored as for fastcpu.Dgemm with tight row strides (A is
// m×k, or k×m with transA; B is k×n, or n×k with transB); bias is absent
// (nil C) or has n elements, added to every row; out has m·n elements,
// row-major. It computes the centre and radius of the package
// documentation's theorem, so every exact real A·B + b with A, B, b in
// the operand enclosures lies in the corresponding ⟨out.C, out.R⟩.
//
// It reports false, having written nothing, when an operand is not tame
// or the term count N = k (+1 with a bias) exceeds 2⁴⁰; the caller then
// evaluates by other means. Its scratch planes (the size of A and B, and
// of the output when B has radii) come from a pool.
func Product(m, n, k int, a Planes, transA bool, b Planes, transB bool, bias Planes, out Planes) bool {
	return product(m, n, k, a, transA, b, transB, bias, out, false)
}

// product is Product; unsound (tests only) drops the rounding terms (g =
// 0, F = 1), which the tests must catch.
func product(m, n, k int, a Planes, transA bool, b Planes, transB bool, bias Planes, out Planes, unsound bool) bool {
	withBias := bias.C != nil
	terms := k
	if withBias {
		terms++
	}
	if terms > maxTerms || !Tame(a) || !Tame(b) || (withBias && !Tame(bias)) {
		return false
	}
	lda, ldb := k, n
	if transA {
		lda = m
	}
	if transB {
		ldb = k
	}
	if m == 0 || n == 0 {
		return true
	}
	if terms == 0 { // k = 0, no bias: the exact 0
		clear(out.C)
		clear(out.R)
		return true
	}
	g, f := gammaBound(terms), 1+math.Ldexp(float64(k+6), -52)
	if unsound {
		g, f = 0, 1
	}
	// Centre.
	fastcpu.Dgemm(transA, transB, m, n, k, a.C, max(lda, 1), b.C, max(ldb, 1), out.C, n)
	// A′ = Aʳ + g·|Aᶜ| and |Bᶜ|.
	buf := getScratch(len(a.C) + len(b.C))
	defer scratchPool.Put(buf)
	scratch := *buf
	ap, babs := scratch[:len(a.C):len(a.C)], scratch[len(a.C):]
	forElems(len(a.C), func(lo, hi int) {
		if a.R == nil {
			for i, c := range a.C[lo:hi] {
				ap[lo+i] = float64(g * math.Abs(c))
			}
		} else {
			for i, c := range a.C[lo:hi] {
				ap[lo+i] = a.R[lo+i] + float64(g*math.Abs(c))
			}
		}
	})
	absInto(babs, b.C)
	fastcpu.Dgemm(transA, transB, m, n, k, ap, max(lda, 1), babs, max(ldb, 1), out.R, n)
	if !b.Point() {
		// + (|Aᶜ| + Aʳ)·Bʳ
		forElems(len(a.C), func(lo, hi int) {
			for i, c := range a.C[lo:hi] {
				ap[lo+i] = math.Abs(c) + a.radius(lo+i)
			}
		})
		tbuf := getScratch(m * n)
		defer scratchPool.Put(tbuf)
		tmp := *tbuf
		fastcpu.Dgemm(transA, transB, m, n, k, ap, max(lda, 1), b.R, max(ldb, 1), tmp, n)
		forElems(len(tmp), func(lo, hi int) {
			for i, v := range tmp[lo:hi] {
				out.R[lo+i] = out.R[lo+i] + v
			}
		})
	}
	if withBias {
		t := make([]float64, n)
		for j, c := range bias.C {
			t[j] = bias.radius(j) + float64(g*math.Abs(c))
		}
		for i := 0; i < m; i++ {
			oc, or := out.C[i*n:i*n+n], out.R[i*n:i*n+n]
			for j := range oc {
				oc[j] = oc[j] + bias.C[j]
				or[j] = or[j] + t[j]
			}
		}
	}
	forElems(len(out.R), func(lo, hi int) {
		for i, r := range out.R[lo:hi] {
			if r != 0 {
				out.R[lo+i] = up(f * r)
			}
		}
	})
	return true
}
