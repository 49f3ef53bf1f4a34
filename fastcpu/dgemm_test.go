package fastcpu

import (
	"math"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// naiveDgemm is the reference: the left fold from +0 over p of rounded
// products, written independently of Dgemm's packing.
func naiveDgemm(transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int) []float64 {
	c := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := 0.0
			for p := 0; p < k; p++ {
				var av, bv float64
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				acc = acc + float64(av*bv)
			}
			c[i*n+j] = acc
		}
	}
	return c
}

// TestDgemmMatchesNaive: for every micro-kernel family this machine can
// run (AVX-512, AVX2, portable Go, forced in turn), every transposition
// and sizes around the blocking edges (strips of 4, 6 and 12 rows, panels
// of 4, 8 and 16 columns, 256-deep k blocks, 128-column groups, fewer
// than 4 rows, work above the parallel threshold split by rows and by
// columns) and twelve random shapes, Dgemm's result is bit-identical to
// the naive left fold, at GOMAXPROCS 1, 2 and 3, and the stride padding
// of C is untouched.
func TestDgemmMatchesNaive(t *testing.T) {
	sizes := [][3]int{{1, 1, 1}, {3, 5, 7}, {4, 4, 4}, {5, 9, 257}, {17, 131, 300}, {64, 64, 64},
		{6, 8, 5}, {12, 16, 256}, {13, 17, 257}, {11, 15, 2}, {1, 37, 300}, {2, 9, 513}, {3, 3, 1},
		{130, 7, 513}, {9, 200, 1}, {6, 3, 0}, {25, 129, 600}, {36, 48, 33}, {130, 40, 300}, {40, 300, 200}}
	if testing.Short() {
		sizes = sizes[:13]
	}
	shapes := rand.New(rand.NewPCG(24, 4)) // random shapes: ragged edges, 1–3 k blocks
	for range 12 {
		sizes = append(sizes, [3]int{1 + shapes.IntN(40), 1 + shapes.IntN(70), 1 + shapes.IntN(700)})
	}
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(24, 1))
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
		for _, s := range sizes {
			for _, tr := range [][2]bool{{false, false}, {false, true}, {true, false}, {true, true}} {
				dgemmCase(t, r, tr, s[0], s[1], s[2])
			}
		}
	})
}

// dgemmCase runs one product with padded strides at GOMAXPROCS 1, 2 and 3
// and compares it with naiveDgemm bit for bit.
func dgemmCase(t *testing.T, r *rand.Rand, tr [2]bool, m, n, k int) {
	t.Helper()
	lda, ldb := k+1, n+2
	ar, br := m, k
	if tr[0] {
		lda, ar = m+1, k
	}
	if tr[1] {
		ldb, br = k+3, n
	}
	a := make([]float64, ar*lda)
	b := make([]float64, br*ldb)
	for i := range a {
		a[i] = r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20)
	}
	for i := range b {
		b[i] = r.NormFloat64()
	}
	want := naiveDgemm(tr[0], tr[1], m, n, k, a, lda, b, ldb)
	for _, procs := range []int{1, 2, 3} {
		runtime.GOMAXPROCS(procs)
		c := make([]float64, m*(n+1))
		for i := range c {
			c[i] = math.NaN() // never read; the padding never written
		}
		Dgemm(tr[0], tr[1], m, n, k, a, lda, b, ldb, c, n+1)
		for i := 0; i < m; i++ {
			if g := c[i*(n+1)+n]; !math.IsNaN(g) {
				t.Fatalf("m=%d n=%d k=%d trans=%v procs=%d: padding of row %d written (%v)", m, n, k, tr, procs, i, g)
			}
			for j := 0; j < n; j++ {
				if g, w := c[i*(n+1)+j], want[i*n+j]; math.Float64bits(g) != math.Float64bits(w) {
					t.Fatalf("m=%d n=%d k=%d trans=%v procs=%d: c[%d][%d] = %v, want %v", m, n, k, tr, procs, i, j, g, w)
				}
			}
		}
	}
}

// TestDgemmPlantedFault: the comparison above catches a one-ulp change of
// one element (the test is not vacuous).
func TestDgemmPlantedFault(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 2))
	m, n, k := 9, 10, 300
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = r.Float64() - 0.5
	}
	for i := range b {
		b[i] = r.Float64() - 0.5
	}
	c := make([]float64, m*n)
	Dgemm(false, false, m, n, k, a, k, b, n, c, n)
	want := naiveDgemm(false, false, m, n, k, a, k, b, n)
	c[37] = math.Nextafter(c[37], 2)
	bad := 0
	for i := range c {
		if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
			bad++
		}
	}
	if bad != 1 {
		t.Fatalf("planted one-ulp fault: %d mismatches, want 1", bad)
	}
}

// TestDgemmChecked: size violations are errors naming the matrix, and
// Dgemm panics on them before writing.
func TestDgemmChecked(t *testing.T) {
	for _, c := range []struct {
		m, n, k, lda, ldb, ldc, la, lb, lc int
		want                               string
	}{
		{-1, 1, 1, 1, 1, 1, 1, 1, 1, "negative size"},
		{2, 2, 2, 1, 2, 2, 4, 4, 4, "A stride"},
		{2, 2, 2, 2, 2, 2, 3, 4, 4, "A holds 3"},
		{2, 2, 2, 2, 2, 2, 4, 3, 4, "B holds 3"},
		{2, 2, 2, 2, 2, 2, 4, 4, 3, "C holds 3"},
	} {
		err := DgemmChecked(false, false, c.m, c.n, c.k, make([]float64, c.la), c.lda, make([]float64, c.lb), c.ldb, make([]float64, c.lc), c.ldc)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want %q", c, err, c.want)
		}
	}
	if err := DgemmChecked(false, false, 2, 2, 2, make([]float64, 4), 2, make([]float64, 4), 2, make([]float64, 4), 2); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkDgemm measures a square product and a conv-shaped one.
func BenchmarkDgemm(b *testing.B) {
	for _, s := range [][3]int{{256, 256, 256}, {64, 3136, 576}} {
		m, n, k := s[0], s[1], s[2]
		a, bb, c := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
		for i := range a {
			a[i] = float64(i%7) - 3
		}
		for i := range bb {
			bb[i] = float64(i%5) - 2
		}
		b.Run(strings.Join([]string{itoa(m), itoa(n), itoa(k)}, "x"), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				Dgemm(false, false, m, n, k, a, k, bb, n, c, n)
			}
			b.ReportMetric(2*float64(m)*float64(n)*float64(k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func itoa(v int) string {
	s := ""
	for {
		s = string(rune('0'+v%10)) + s
		v /= 10
		if v == 0 {
			return s
		}
	}
}
