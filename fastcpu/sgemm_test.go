package fastcpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

const (
	u32 = 1.0 / (1 << 24) // unit roundoff of binary32
	u64 = 1.0 / (1 << 53) // unit roundoff of binary64
	// eta32 bounds the absolute error of one float32 rounding that
	// underflows: half the smallest subnormal, 2⁻¹⁵⁰; we use 2⁻¹⁴⁹.
	eta32 = 1.401298464324817e-45
)

// gamma returns γ_n = n·u/(1−n·u) in float64, rounded up by a relative
// 2⁻⁴⁰ so that the float64 evaluation cannot make the bound too small.
func gamma(n int, u float64) float64 {
	nu := float64(n) * u
	return nu / (1 - nu) * (1 + 1.0/(1<<40))
}

// dotBound is the a-priori bound on |ŝ − s| for any summation order of n
// float32-rounded products whose magnitudes sum to absSum, plus the error
// of our float64 reference (itself a left fold of n exact products) and a
// gradual-underflow term of one 2⁻¹⁴⁹ per rounding (2n roundings).
func dotBound(n int, absSum float64) float64 {
	return gamma(n, u32)*absSum + gamma(n, u64)*absSum*(1+gamma(n, u32)) + 2*float64(n)*eta32
}

// randMat fills a rows×cols matrix with row stride ld; the padding between
// rows holds NaN, which a kernel must never read.
func randMat(r *rand.Rand, rows, cols, ld int) []float32 {
	n, _ := extent(rows, ld, cols)
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(math.NaN())
	}
	for i := 0; i < rows; i++ {
		for j := 0; j < cols; j++ {
			s[i*ld+j] = randVal(r)
		}
	}
	return s
}

// randVal is a float32 of random sign and magnitude in [2⁻⁶, 2⁶).
func randVal(r *rand.Rand) float32 {
	return float32(math.Ldexp(r.Float64()*2-1, r.IntN(13)-6))
}

// at returns B's (p, j) element for either storage.
func at(transB bool, b []float32, ldb, p, j int) float32 {
	if transB {
		return b[j*ldb+p]
	}
	return b[p*ldb+j]
}

// naiveFold is the reference provider's fixed-left fold in float32, with
// every product rounded before the addition.
func naiveFold(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := float32(0)
			for p := 0; p < k; p++ {
				acc = acc + float32(a[i*lda+p]*at(transB, b, ldb, p, j))
			}
			c[i*ldc+j] = acc
		}
	}
}

// checkAgainstExact checks every element of C against the float64
// reference within the per-element γ_k bound.
func checkAgainstExact(t *testing.T, transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	t.Helper()
	worst := 0.0
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s, abs := 0.0, 0.0
			for p := 0; p < k; p++ {
				prod := float64(a[i*lda+p]) * float64(at(transB, b, ldb, p, j)) // exact
				s += prod
				abs += math.Abs(prod)
			}
			got := float64(c[i*ldc+j])
			bound := dotBound(k, abs)
			err := math.Abs(got - s)
			if !(err <= bound) {
				t.Fatalf("C[%d][%d] = %g, exact ≈ %g: error %g exceeds γ_%d bound %g", i, j, got, s, err, k, bound)
			}
			if bound > 0 {
				worst = max(worst, err/bound)
			}
		}
	}
	if worst > 1 {
		t.Fatalf("error/bound ratio %g", worst)
	}
}

func sameBits(x, y []float32) (int, bool) {
	if len(x) != len(y) {
		return -1, false
	}
	for i := range x {
		if math.Float32bits(x[i]) != math.Float32bits(y[i]) {
			return i, false
		}
	}
	return 0, true
}

// runGemm calls the kernel under test.
func runGemm(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if transB {
		SgemmNT(m, n, k, a, lda, b, ldb, c, ldc)
	} else {
		Sgemm(m, n, k, a, lda, b, ldb, c, ldc)
	}
}

// withKernels runs f once with each micro-kernel family this machine
// can run: AVX-512, AVX2 and portable Go, forced in turn through useAVX512
// and useAVX2.
func withKernels(t *testing.T, f func(t *testing.T)) {
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	if saved512 {
		t.Run("avx512", f)
	}
	useAVX512 = false
	if saved2 {
		t.Run("avx2", f)
	}
	useAVX2 = false
	t.Run("portable", f)
}

// gemmCase runs one product with padded strides and checks (1) the bits
// equal the naive fixed-left fold, (2) every element is within the γ_k
// bound of the exact result, (3) the stride padding of C is untouched.
func gemmCase(t *testing.T, r *rand.Rand, transB bool, m, n, k int) {
	t.Helper()
	lda, ldc := k+3, n+5
	ldb := n + 2
	if transB {
		ldb = k + 2
	}
	a := randMat(r, m, k, max(lda, 1))
	var b []float32
	if transB {
		b = randMat(r, n, k, ldb)
	} else {
		b = randMat(r, k, n, ldb)
	}
	nc, _ := extent(m, ldc, n)
	c := make([]float32, nc)
	want := make([]float32, nc)
	for i := range c {
		c[i] = float32(math.NaN()) // a kernel must not read C before writing it
		want[i] = c[i]
	}
	runGemm(transB, m, n, k, a, lda, b, ldb, c, ldc)
	naiveFold(transB, m, n, k, a, lda, b, ldb, want, ldc)
	if i, ok := sameBits(c, want); !ok {
		t.Fatalf("m=%d n=%d k=%d transB=%v: element %d is %g (bits %08x), the left fold gives %g (bits %08x)",
			m, n, k, transB, i, c[i], math.Float32bits(c[i]), want[i], math.Float32bits(want[i]))
	}
	checkAgainstExact(t, transB, m, n, k, a, lda, b, ldb, c, ldc)
}

var edgeSizes = []int{0, 1, 2, 3, 7, 8, 9, 63, 64, 65, 130}

func TestSgemmEdgeSizes(t *testing.T) {
	run := withKernels
	if raceEnabled {
		// The 11³ cube per family takes ~1 s per family uninstrumented, 10×
		// that under -race, which adds nothing to a single-goroutine
		// kernel check: there, only the selected family runs the cube
		// (TestSgemmKernelsAgree still runs every family).
		run = func(t *testing.T, f func(t *testing.T)) { f(t) }
	}
	run(t, func(t *testing.T) {
		for _, transB := range []bool{false, true} {
			r := rand.New(rand.NewPCG(1, 2))
			for _, m := range edgeSizes {
				for _, n := range edgeSizes {
					for _, k := range edgeSizes {
						gemmCase(t, r, transB, m, n, k)
					}
				}
			}
		}
	})
}

// TestSgemmBlockBoundaries crosses the kc, mc and nc block edges, where
// the kernel parks partial sums in C and reloads them.
func TestSgemmBlockBoundaries(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		r := rand.New(rand.NewPCG(3, 4))
		for _, s := range [][3]int{
			{tileM, tileN, kcBlock}, {tileM + 1, tileN + 1, kcBlock + 1},
			{2*tileM - 1, 2*tileN + 3, 2*kcBlock + 5}, {5, 300, 600}, {200, 17, 513}, {1, 1, 1000},
			{packStrips*mr + 1, packStrips*nr + 1, 40}, {2 * packStrips * mr, 2 * packStrips * nr, 3},
		} {
			for _, transB := range []bool{false, true} {
				t.Run(fmt.Sprintf("%dx%dx%d/nt=%v", s[0], s[1], s[2], transB), func(t *testing.T) {
					gemmCase(t, r, transB, s[0], s[1], s[2])
				})
			}
		}
	})
}

// kernelFamily is a micro-kernel family and the settings of useAVX512
// and useAVX2 that force it.
type kernelFamily struct {
	name         string
	avx512, avx2 bool
}

// kernelFamilies lists the micro-kernel families this machine can run.
func kernelFamilies() []kernelFamily {
	fams := []kernelFamily{{"portable", false, false}}
	if useAVX2 {
		fams = append(fams, kernelFamily{"avx2", false, true})
	}
	if useAVX512 {
		fams = append(fams, kernelFamily{"avx512", true, useAVX2})
	}
	return fams
}

// TestSgemmKernelsAgree compares every available micro-kernel family bit
// for bit with the naive fixed-left fold (the generic Binary32 rule) on
// products with every kind of edge: each of m, n, k in turn takes the edge
// sizes around the vector width (15, 16, 17), the register and packing
// blocks (63, 64, 65) and a long fold (1023), the other two held at sizes
// with ragged edges.
func TestSgemmKernelsAgree(t *testing.T) {
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	sizes := []int{1, 15, 16, 17, 63, 64, 65, 1023}
	var shapes [][3]int
	for _, s := range sizes {
		shapes = append(shapes, [3]int{s, 17, 33}, [3]int{13, s, 33}, [3]int{13, 17, s})
	}
	shapes = append(shapes, [3]int{101, 77, 300}, [3]int{65, 65, 65}, [3]int{16, 16, 16}, [3]int{1023, 15, 17}, [3]int{17, 1023, 15})
	for _, f := range kernelFamilies() {
		useAVX512, useAVX2 = f.avx512, f.avx2
		for _, transB := range []bool{false, true} {
			r := rand.New(rand.NewPCG(5, 6))
			for _, s := range shapes {
				t.Run(fmt.Sprintf("%s/%dx%dx%d/nt=%v", f.name, s[0], s[1], s[2], transB), func(t *testing.T) {
					gemmCase(t, r, transB, s[0], s[1], s[2])
				})
			}
		}
	}
}

// TestSgemmKernelFamiliesDiffer is the planted-fault check of the
// bit-identity tests: a fused multiply-add left fold, which a kernel
// using FMA would compute, differs from the separate-rounding fold on
// these operands, so sameBits would catch such a kernel.
func TestSgemmKernelFamiliesDiffer(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	m, n, k := 13, 17, 65
	a, b := randMat(r, m, k, k), randMat(r, k, n, n)
	want, fused := make([]float32, m*n), make([]float32, m*n)
	naiveFold(false, m, n, k, a, k, b, n, want, n)
	fmaFold(false, m, n, k, a, k, b, n, fused, n)
	if _, ok := sameBits(want, fused); ok {
		t.Fatal("fused and separate folds agree on every element: the bit-identity test could not tell an FMA kernel")
	}
}

// TestSgemmDeterministicAcrossGOMAXPROCS checks bit-identical results
// for GOMAXPROCS 1, 2 and 8, repeated to give the scheduler a chance.
func TestSgemmDeterministicAcrossGOMAXPROCS(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 250, 530, 300
	a, b, bt := randMat(r, m, k, k), randMat(r, k, n, n), randMat(r, n, k, k)
	run := func(procs int) ([]float32, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		c, cnt := make([]float32, m*n), make([]float32, m*n)
		Sgemm(m, n, k, a, k, b, n, c, n)
		SgemmNT(m, n, k, a, k, bt, k, cnt, n)
		return c, cnt
	}
	c1, nt1 := run(1)
	for _, procs := range []int{2, 8, 1, 8, 2} {
		c, nt := run(procs)
		if i, ok := sameBits(c, c1); !ok {
			t.Fatalf("Sgemm GOMAXPROCS=%d: element %d differs: %g vs %g", procs, i, c[i], c1[i])
		}
		if i, ok := sameBits(nt, nt1); !ok {
			t.Fatalf("SgemmNT GOMAXPROCS=%d: element %d differs: %g vs %g", procs, i, nt[i], nt1[i])
		}
	}
}

// TestSgemmSpecialValues: a NaN in row i of A makes row i of C NaN and
// leaves the other rows finite; an infinity in B gives ±Inf where it
// meets a nonzero finite term and NaN where it meets 0 or an opposite
// infinity.
func TestSgemmSpecialValues(t *testing.T) {
	withKernels(t, func(t *testing.T) {
		for _, transB := range []bool{false, true} {
			for _, sz := range [][3]int{{3, 4, 5}, {70, 40, 300}} {
				m, n, k := sz[0], sz[1], sz[2]
				r := rand.New(rand.NewPCG(9, 10))
				a := randMat(r, m, k, k)
				var b []float32
				if transB {
					b = randMat(r, n, k, k)
				} else {
					b = randMat(r, k, n, n)
				}
				ldb := n
				if transB {
					ldb = k
				}
				nanRow := m / 2
				a[nanRow*k+k-1] = float32(math.NaN())
				c := make([]float32, m*n)
				runGemm(transB, m, n, k, a, k, b, ldb, c, n)
				for i := 0; i < m; i++ {
					for j := 0; j < n; j++ {
						v := c[i*n+j]
						if i == nanRow && !math.IsNaN(float64(v)) {
							t.Fatalf("C[%d][%d] = %g, want NaN", i, j, v)
						}
						if i != nanRow && (math.IsNaN(float64(v)) || math.IsInf(float64(v), 0)) {
							t.Fatalf("C[%d][%d] = %g, want finite", i, j, v)
						}
					}
				}

				// +Inf in B(0, 1); A(0, 0) = 0 gives NaN in C[0][1]; A(1, 0) = 2
				// gives +Inf in C[1][1] (the other terms are finite).
				a[nanRow*k+k-1] = 1
				inf := float32(math.Inf(1))
				if transB {
					b[1*k+0] = inf
				} else {
					b[0*n+1] = inf
				}
				a[0], a[k] = 0, 2
				runGemm(transB, m, n, k, a, k, b, ldb, c, n)
				if v := c[1]; !math.IsNaN(float64(v)) {
					t.Fatalf("0·Inf term: C[0][1] = %g, want NaN", v)
				}
				if v := c[n+1]; !math.IsInf(float64(v), 1) {
					t.Fatalf("2·Inf term: C[1][1] = %g, want +Inf", v)
				}
				if v := c[n+0]; math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
					t.Fatalf("C[1][0] = %g, want finite", v)
				}
			}
		}
	})
}

// TestSgemmZeroK: k = 0 writes +0 over whatever C held.
func TestSgemmZeroK(t *testing.T) {
	c := []float32{float32(math.NaN()), -1, float32(math.Inf(-1)), 7, 9}
	Sgemm(2, 2, 0, nil, 1, nil, 2, c, 3)
	want := []float32{0, 0, float32(math.Inf(-1)), 0, 0}
	if i, ok := sameBits(c, want); !ok {
		t.Fatalf("element %d: got %g, want %g", i, c[i], want[i])
	}
}

// TestSgemmSignedZero: the fold starts at +0, so −0·x terms give +0.
func TestSgemmSignedZero(t *testing.T) {
	a := []float32{float32(math.Copysign(0, -1))}
	b := []float32{1}
	c := []float32{5}
	Sgemm(1, 1, 1, a, 1, b, 1, c, 1)
	if math.Float32bits(c[0]) != 0 {
		t.Fatalf("got %g (bits %08x), want +0", c[0], math.Float32bits(c[0]))
	}
}

func TestSgemmCheckedErrors(t *testing.T) {
	buf := make([]float32, 100)
	cases := []struct {
		name    string
		transB  bool
		m, n, k int
		a       []float32
		lda     int
		b       []float32
		ldb     int
		c       []float32
		ldc     int
	}{
		{"negative m", false, -1, 2, 2, buf, 2, buf, 2, make([]float32, 4), 2},
		{"negative k", false, 2, 2, -3, buf, 2, buf, 2, make([]float32, 4), 2},
		{"lda < k", false, 2, 2, 3, buf, 2, buf, 2, make([]float32, 4), 2},
		{"ldb < n", false, 2, 3, 2, buf, 2, buf, 2, make([]float32, 6), 3},
		{"ldb < k for NT", true, 2, 3, 4, buf, 4, buf, 3, make([]float32, 6), 3},
		{"ldc < n", false, 2, 3, 2, buf, 2, buf, 3, make([]float32, 6), 2},
		{"lda zero", false, 2, 2, 0, buf, 0, buf, 2, make([]float32, 4), 2},
		{"short A", false, 3, 2, 4, make([]float32, 11), 4, buf, 2, make([]float32, 6), 2},
		{"short B", false, 2, 3, 4, buf, 4, make([]float32, 11), 3, make([]float32, 6), 3},
		{"short B for NT", true, 2, 3, 4, buf, 4, make([]float32, 11), 4, make([]float32, 6), 3},
		{"short C", false, 2, 3, 2, buf, 2, buf, 3, make([]float32, 5), 3},
		{"short C with stride", false, 2, 3, 2, buf, 2, buf, 3, make([]float32, 7), 5},
		{"overflowing extent", false, 3, 1, 1, buf, math.MaxInt / 2, buf, 1, make([]float32, 3), 1},
		{"C overlaps A", false, 2, 2, 2, buf[:4], 2, buf[50:54], 2, buf[2:6], 2},
		{"C overlaps B", true, 2, 2, 2, buf[:4], 2, buf[50:54], 2, buf[52:56], 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := append([]float32(nil), tc.c...)
			var err error
			if tc.transB {
				err = SgemmNTChecked(tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
			} else {
				err = SgemmChecked(tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
			}
			if !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("got %v, want ErrInvalidArgument", err)
			}
			if _, ok := sameBits(before, tc.c); !ok {
				t.Fatal("C modified on error")
			}
			// The raw kernel panics on size violations (not on overlap,
			// which it documents as a precondition).
			if tc.name != "C overlaps A" && tc.name != "C overlaps B" {
				func() {
					defer func() {
						if recover() == nil {
							t.Fatal("raw kernel did not panic")
						}
					}()
					runGemm(tc.transB, tc.m, tc.n, tc.k, tc.a, tc.lda, tc.b, tc.ldb, tc.c, tc.ldc)
				}()
			}
		})
	}
	// Exact-length slices and the empty product are accepted.
	if err := SgemmChecked(2, 3, 4, make([]float32, 8), 4, make([]float32, 12), 3, make([]float32, 6), 3); err != nil {
		t.Fatal(err)
	}
	if err := SgemmChecked(0, 0, 0, nil, 1, nil, 1, nil, 1); err != nil {
		t.Fatal(err)
	}
	if err := SgemmNTChecked(1, 1, 0, nil, 1, nil, 1, make([]float32, 1), 1); err != nil {
		t.Fatal(err)
	}
}

// TestSgemmAllocs: a serial call allocates nothing once the pools are
// warm.
func TestSgemmAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops Puts at random, so pooled scratch is reallocated by design")
	}
	r := rand.New(rand.NewPCG(11, 12))
	m, n, k := 40, 40, 40 // below parallelFlops
	a, b, c := randMat(r, m, k, k), randMat(r, k, n, n), make([]float32, m*n)
	Sgemm(m, n, k, a, k, b, n, c, n)
	if allocs := testing.AllocsPerRun(20, func() { Sgemm(m, n, k, a, k, b, n, c, n) }); allocs != 0 {
		t.Fatalf("%v allocations per serial call, want 0", allocs)
	}
}

// TestSgemmConcurrentCallers runs products from several goroutines at
// once, so that calls share the parked helpers; each must still equal
// the naive fold.
func TestSgemmConcurrentCallers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	errs := make(chan error, 8)
	for g := range 8 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 99))
			m, n, k := 60+7*g, 100+3*g, 90+11*g
			a, b := randMat(r, m, k, k), randMat(r, k, n, n)
			want := make([]float32, m*n)
			naiveFold(false, m, n, k, a, k, b, n, want, n)
			for range 5 {
				c := make([]float32, m*n)
				Sgemm(m, n, k, a, k, b, n, c, n)
				if i, ok := sameBits(c, want); !ok {
					errs <- fmt.Errorf("caller %d: element %d is %g, want %g", g, i, c[i], want[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
