package enclose

import (
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"testing"
)

// ivMat is a random interval matrix as endpoint pairs, with its planes.
type ivMat struct {
	pairs []float64
	p     Planes
}

// randPairs draws n intervals: points (float32 values, as model weights
// are) with probability point, else intervals of random width, with
// magnitudes spread over scale binades.
func randPairs(r *rand.Rand, n int, point float64, scale int) []float64 {
	pairs := make([]float64, 2*n)
	for i := 0; i < n; i++ {
		c := float64(float32(r.NormFloat64() * math.Ldexp(1, r.IntN(scale+1)-scale/2)))
		if r.IntN(10) == 0 {
			c = 0
		}
		lo, hi := c, c
		if r.Float64() >= point {
			w := math.Abs(r.NormFloat64()) * math.Ldexp(1, -r.IntN(40))
			lo, hi = c-w*r.Float64(), c+w*r.Float64()
		}
		pairs[2*i], pairs[2*i+1] = lo, hi
	}
	return pairs
}

func mat(t *testing.T, pairs []float64) ivMat {
	t.Helper()
	p := Make(len(pairs) / 2)
	if !FromPairs(pairs, p) {
		t.Fatalf("FromPairs refused tame data")
	}
	return ivMat{pairs, p}
}

// pick returns an exact real in [lo, hi]: an endpoint or an interior
// dyadic, chosen at random (corners are where enclosures are tight).
func pick(r *rand.Rand, lo, hi float64) *big.Rat {
	switch r.IntN(3) {
	case 0:
		return new(big.Rat).SetFloat64(lo)
	case 1:
		return new(big.Rat).SetFloat64(hi)
	}
	l, h := new(big.Rat).SetFloat64(lo), new(big.Rat).SetFloat64(hi)
	f := new(big.Rat).SetFrac64(int64(r.IntN(1<<20)), 1<<20)
	return l.Add(l, h.Mul(h.Sub(h, l), f))
}

// checkContains draws samples points of the operand sets and checks that
// the exact A·B + b lies in the float endpoints of out, element by
// element; it returns the number of elements outside.
func checkContains(r *rand.Rand, m, n, k int, a, b ivMat, transA, transB bool, bias []float64, out []float64, samples int) int {
	bad := 0
	for s := 0; s < samples; s++ {
		av := make([]*big.Rat, m*k)
		for i := range av {
			av[i] = pick(r, a.pairs[2*i], a.pairs[2*i+1])
		}
		bv := make([]*big.Rat, k*n)
		for i := range bv {
			bv[i] = pick(r, b.pairs[2*i], b.pairs[2*i+1])
		}
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				acc := new(big.Rat)
				for p := 0; p < k; p++ {
					x, y := av[i*k+p], bv[p*n+j]
					if transA {
						x = av[p*m+i]
					}
					if transB {
						y = bv[j*k+p]
					}
					acc.Add(acc, new(big.Rat).Mul(x, y))
				}
				if bias != nil {
					acc.Add(acc, pick(r, bias[2*j], bias[2*j+1]))
				}
				lo, hi := out[2*(i*n+j)], out[2*(i*n+j)+1]
				if acc.Cmp(new(big.Rat).SetFloat64(lo)) < 0 || acc.Cmp(new(big.Rat).SetFloat64(hi)) > 0 {
					bad++
				}
			}
		}
	}
	return bad
}

// TestProductContainsExact: on random tame interval and point matrices,
// every transposition, with and without bias, the exact rational product
// of points drawn from the operands (corners and interior) lies in the
// enclosure.
func TestProductContainsExact(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 10))
	cases := []struct {
		m, n, k     int
		pa, pb      float64 // probability of a point element
		scale       int
		bias        bool
		transA, trB bool
	}{
		{1, 1, 1, 0, 1, 4, false, false, false},
		{1, 7, 33, 0.5, 1, 8, true, false, true}, // a linear layer on one row
		{3, 5, 300, 1, 1, 2, true, false, false}, // point data: only rounding
		{6, 9, 17, 0.3, 0.7, 60, false, true, false},
		{5, 4, 64, 0, 0, 10, true, true, true},
		{9, 6, 0, 0, 0, 4, true, false, false}, // k = 0: the bias alone
	}
	for ci, c := range cases {
		ar, ac := c.m, c.k
		if c.transA {
			ar, ac = c.k, c.m
		}
		a := mat(t, randPairs(r, ar*ac, c.pa, c.scale))
		b := mat(t, randPairs(r, c.k*c.n, c.pb, c.scale))
		var bias []float64
		bp := Planes{}
		if c.bias {
			bias = randPairs(r, c.n, 0.5, c.scale)
			bp = mat(t, bias).p
		}
		out := Make(c.m * c.n)
		if !Product(c.m, c.n, c.k, a.p, c.transA, b.p, c.trB, bp, out) {
			t.Fatalf("case %d: Product refused tame data", ci)
		}
		pairs := make([]float64, 2*out.Len())
		ToPairs(out, pairs)
		if bad := checkContains(r, c.m, c.n, c.k, a, b, c.transA, c.trB, bias, pairs, 4); bad > 0 {
			t.Fatalf("case %d: %d exact values outside the enclosure", ci, bad)
		}
	}
}

// TestPlantedRadiusErrorCaught: the same check catches an enclosure whose
// radius omits the rounding terms (g = 0, F = 1) on point data with
// inexact sums, and one whose operands' radii are dropped: the
// containment test is not vacuous.
func TestPlantedRadiusErrorCaught(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 11))
	m, n, k := 4, 6, 200
	a := mat(t, randPairs(r, m*k, 1, 30))
	b := mat(t, randPairs(r, k*n, 1, 30))
	out := Make(m * n)
	product(m, n, k, a.p, false, b.p, false, Planes{}, out, true)
	pairs := make([]float64, 2*out.Len())
	ToPairs(out, pairs)
	if bad := checkContains(r, m, n, k, a, b, false, false, nil, pairs, 1); bad == 0 {
		t.Fatal("an enclosure without the rounding bound was not caught")
	}
	// Interval operands, radii dropped (treated as their centres).
	ai := mat(t, randPairs(r, m*k, 0, 4))
	bi := mat(t, randPairs(r, k*n, 0, 4))
	pt := Planes{C: ai.p.C, R: make([]float64, len(ai.p.R))}
	qt := Planes{C: bi.p.C, R: make([]float64, len(bi.p.R))}
	Product(m, n, k, pt, false, qt, false, Planes{}, out)
	ToPairs(out, pairs)
	if bad := checkContains(r, m, n, k, ai, bi, false, false, nil, pairs, 3); bad == 0 {
		t.Fatal("an enclosure without the operands' radii was not caught")
	}
}

// TestFromToPairs: conversion encloses every interval, lifts tiny values,
// refuses infinite and huge ones, and ToPairs rounds outward.
func TestFromToPairs(t *testing.T) {
	tiny := math.Ldexp(1, -400)
	cases := []struct {
		lo, hi float64
		ok     bool
	}{
		{1, 1, true}, {-3, 5, true}, {0, 0, true}, {0.1, 0.3, true},
		{-tiny, tiny, true}, {tiny, tiny, true}, {5e-324, 1e-300, true},
		{math.Inf(-1), 0, false}, {0, math.Inf(1), false}, {-1e301, 1e301, false},
		{-math.MaxFloat64, math.MaxFloat64, false},
	}
	for _, c := range cases {
		p := Make(1)
		ok := FromPairs([]float64{c.lo, c.hi}, p)
		if ok != c.ok {
			t.Fatalf("[%v, %v]: ok = %v, want %v", c.lo, c.hi, ok, c.ok)
		}
		if !ok {
			continue
		}
		if !Tame(p) {
			t.Fatalf("[%v, %v]: planes not tame: %v", c.lo, c.hi, p)
		}
		out := make([]float64, 2)
		ToPairs(p, out)
		if out[0] > c.lo || out[1] < c.hi {
			t.Fatalf("[%v, %v] → ⟨%v, %v⟩ → [%v, %v] does not enclose", c.lo, c.hi, p.C[0], p.R[0], out[0], out[1])
		}
		if c.lo == c.hi && math.Abs(c.lo) >= 1 && (out[0] != c.lo || out[1] != c.hi) {
			t.Fatalf("point %v widened to [%v, %v]", c.lo, out[0], out[1])
		}
	}
	// ToPairs: ⟨1, 2⁻⁶⁰⟩ has inexact endpoints; they must be rounded outward.
	out := make([]float64, 2)
	ToPairs(Planes{C: []float64{1}, R: []float64{math.Ldexp(1, -60)}}, out)
	if !(out[0] < 1 && out[1] > 1) {
		t.Fatalf("⟨1, 2⁻⁶⁰⟩ → [%v, %v]", out[0], out[1])
	}
}

// TestProductRefusesUntame: a huge or infinite operand is refused and
// nothing is written.
func TestProductRefusesUntame(t *testing.T) {
	a := Planes{C: []float64{math.Ldexp(1, 400)}, R: []float64{0}}
	b := Planes{C: []float64{1}, R: []float64{0}}
	out := Planes{C: []float64{7}, R: []float64{7}}
	if Product(1, 1, 1, a, false, b, false, Planes{}, out) || out.C[0] != 7 {
		t.Fatal("huge operand not refused")
	}
	a.C[0] = math.NaN()
	if Product(1, 1, 1, a, false, b, false, Planes{}, out) {
		t.Fatal("NaN operand not refused")
	}
}

// TestProductDeterministic: bit-identical results at GOMAXPROCS 1, 2, 4.
func TestProductDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 12))
	m, n, k := 37, 150, 120
	a := mat(t, randPairs(r, m*k, 0.5, 10))
	b := mat(t, randPairs(r, k*n, 0.5, 10))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var first Planes
	for _, procs := range []int{1, 2, 4} {
		runtime.GOMAXPROCS(procs)
		out := Make(m * n)
		Product(m, n, k, a.p, false, b.p, false, Planes{}, out)
		if first.C == nil {
			first = out
			continue
		}
		for i := range out.C {
			if math.Float64bits(out.C[i]) != math.Float64bits(first.C[i]) || math.Float64bits(out.R[i]) != math.Float64bits(first.R[i]) {
				t.Fatalf("GOMAXPROCS=%d: element %d differs", procs, i)
			}
		}
	}
}

// TestUpDown: up and down agree with math.Nextafter on finite values,
// zeros, subnormals and the largest finite values.
func TestUpDown(t *testing.T) {
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 5e-324, -5e-324, math.MaxFloat64, -math.MaxFloat64, 0.1, -3e300, math.SmallestNonzeroFloat64 * 3, 2.2250738585072014e-308} {
		if u, w := up(x), math.Nextafter(x, math.Inf(1)); math.Float64bits(u) != math.Float64bits(w) && !(u == 0 && w == 0) {
			t.Errorf("up(%v) = %v, want %v", x, u, w)
		}
		if d, w := down(x), math.Nextafter(x, math.Inf(-1)); math.Float64bits(d) != math.Float64bits(w) && !(d == 0 && w == 0) {
			t.Errorf("down(%v) = %v, want %v", x, d, w)
		}
	}
}

// TestPointPlanesWithoutRadius: operands without a radius plane (R nil)
// give bit for bit the result of the same operands with an explicit
// zero radius plane; PointsFromPairs refuses non-points and untame
// values.
func TestPointPlanesWithoutRadius(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 13))
	m, n, k := 5, 7, 40
	ap := randPairs(r, m*k, 1, 8)
	bp := randPairs(r, n*k, 1, 8)
	biasp := randPairs(r, n, 1, 8)
	a, ok1 := PointsFromPairs(ap)
	b, ok2 := PointsFromPairs(bp)
	bias, ok3 := PointsFromPairs(biasp)
	if !ok1 || !ok2 || !ok3 || a.R != nil {
		t.Fatal("PointsFromPairs refused points")
	}
	got, want := Make(m*n), Make(m*n)
	Product(m, n, k, a, false, b, true, bias, got)
	Product(m, n, k, mat(t, ap).p, false, mat(t, bp).p, true, mat(t, biasp).p, want)
	for i := range got.C {
		if math.Float64bits(got.C[i]) != math.Float64bits(want.C[i]) || math.Float64bits(got.R[i]) != math.Float64bits(want.R[i]) {
			t.Fatalf("element %d: ⟨%v, %v⟩ without radius plane, ⟨%v, %v⟩ with", i, got.C[i], got.R[i], want.C[i], want.R[i])
		}
	}
	if _, ok := PointsFromPairs([]float64{1, 2}); ok {
		t.Fatal("a non-point accepted")
	}
	if _, ok := PointsFromPairs([]float64{math.Inf(1), math.Inf(1)}); ok {
		t.Fatal("an infinite point accepted")
	}
}
