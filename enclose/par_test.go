package enclose

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// TestProductParallelBits: Product's elementwise passes on par's pool
// (planes of at least parMin elements) give the same centre and radius
// bits at GOMAXPROCS 1, 2 and 8, for a point and an interval B and with a
// bias; and Tame finds one wild element wherever it lies, at each count.
func TestProductParallelBits(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	r := rand.New(rand.NewSource(37))
	m, n, k := 48, 40, 1500 // a: 72 000, b: 60 000 + its radii: above parMin
	if m*k < parMin {
		t.Fatal("a is below the parallel threshold")
	}
	plane := func(size int, withR bool) Planes {
		p := Planes{C: make([]float64, size)}
		for i := range p.C {
			p.C[i] = math.Ldexp(r.Float64()-0.5, r.Intn(40)-20)
		}
		if withR {
			p.R = make([]float64, size)
			for i := range p.R {
				p.R[i] = math.Ldexp(r.Float64(), -30)
			}
		}
		return p
	}
	a, bPoint, bBox, bias := plane(m*k, true), plane(k*n, false), plane(k*n, true), plane(n, true)
	for _, b := range []Planes{bPoint, bBox} {
		var want Planes
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			out := Make(m * n)
			if !Product(m, n, k, a, false, b, false, bias, out) {
				t.Fatal("Product declined tame planes")
			}
			if procs == 1 {
				want = out
				continue
			}
			for i := range out.C {
				if math.Float64bits(out.C[i]) != math.Float64bits(want.C[i]) || math.Float64bits(out.R[i]) != math.Float64bits(want.R[i]) {
					t.Fatalf("GOMAXPROCS %d, point B %v: element %d differs", procs, b.R == nil, i)
				}
			}
		}
	}
	for _, procs := range []int{1, 2, 8} {
		runtime.GOMAXPROCS(procs)
		for _, at := range []int{0, parGrain - 1, parGrain, m*k - 1} {
			for _, inR := range []bool{false, true} {
				p := Planes{C: append([]float64(nil), a.C...), R: append([]float64(nil), a.R...)}
				if inR {
					p.R[at] = -1
				} else {
					p.C[at] = math.Inf(1)
				}
				if Tame(p) {
					t.Fatalf("GOMAXPROCS %d: a wild element at %d (radius %v) was missed", procs, at, inR)
				}
			}
		}
		if !Tame(a) {
			t.Fatalf("GOMAXPROCS %d: tame planes reported wild", procs)
		}
	}
}
