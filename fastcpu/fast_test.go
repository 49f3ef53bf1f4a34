package fastcpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// fma32 is fl(x·y + z) in binary32 with one rounding, computed exactly
// in float64: x·y is exact (48 bits); TwoSum gives s + e = x·y + z exactly
// with s = fl64(x·y + z); replacing s by its neighbour towards e when e ≠ 0
// and s's last bit is even rounds x·y + z to odd at 53 bits, and a
// round-to-odd result with at least two more bits than the target rounds
// to nearest binary32 exactly as x·y + z does (the classic round-to-odd
// theorem; binary64 keeps 53 bits even where binary32 is subnormal).
func fma32(x, y, z float32) float32 {
	p := float64(x) * float64(y)
	s := p + float64(z)
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	bb := s - p
	e := (p - (s - bb)) + (float64(z) - bb)
	if e != 0 && math.Float64bits(s)&1 == 0 {
		s = math.Nextafter(s, math.Inf(int(math.Copysign(1, e))))
	}
	return float32(s)
}

// fmaFold is the fused left fold c = fl(a·b + c) from +0, p increasing:
// what SgemmFast's AVX-512 kernel is documented to compute.
func fmaFold(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			acc := float32(0)
			for p := 0; p < k; p++ {
				acc = fma32(a[i*lda+p], at(transB, b, ldb, p, j), acc)
			}
			c[i*ldc+j] = acc
		}
	}
}

// fastReference is what SgemmFast is documented to compute on this
// machine: the fused fold when the AVX-512 kernels are selected and the
// product is above the naive threshold, Sgemm's fold otherwise.
func fastReference(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	if useAVX512 && 2*float64(m)*float64(n)*float64(k) > naiveFlops {
		fmaFold(transB, m, n, k, a, lda, b, ldb, c, ldc)
		return
	}
	naiveFold(transB, m, n, k, a, lda, b, ldb, c, ldc)
}

// fastCase runs SgemmFast / SgemmFastNT with padded strides and checks the
// bits against fastReference, every element against the γ_k bound of the
// exact product (the contract: the fold itself is not promised), and the
// padding of C.
func fastCase(t *testing.T, r *rand.Rand, transB bool, m, n, k int) {
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
	c, want := make([]float32, nc), make([]float32, nc)
	for i := range c {
		c[i] = float32(math.NaN())
		want[i] = c[i]
	}
	if transB {
		SgemmFastNT(m, n, k, a, lda, b, ldb, c, ldc)
	} else {
		SgemmFast(m, n, k, a, lda, b, ldb, c, ldc)
	}
	fastReference(transB, m, n, k, a, lda, b, ldb, want, ldc)
	if i, ok := sameBits(c, want); !ok {
		t.Fatalf("m=%d n=%d k=%d transB=%v: element %d is %g (bits %08x), the documented fold gives %g (bits %08x)",
			m, n, k, transB, i, c[i], math.Float32bits(c[i]), want[i], math.Float32bits(want[i]))
	}
	checkAgainstExact(t, transB, m, n, k, a, lda, b, ldb, c, ldc)
}

// TestSgemmFast crosses every edge of the FMA path: the 12×32 micro-tile
// (11, 12, 13 rows; 31, 32, 33 columns), the 144-row A block, the 256-deep
// k block (255, 256, 257, 513) and the 1024-column panel, with each of
// m, n, k in turn taking the edge sizes 1, 15, 16, 17, 63, 64, 65, 1023.
func TestSgemmFast(t *testing.T) {
	shapes := [][3]int{
		{12, 32, 256}, {11, 31, 255}, {13, 33, 257}, {145, 70, 513}, {25, 1025, 20}, {fmc + fmr + 1, 2*fnr + 1, 2*fkc + 1},
		{1, 1, 1}, {2, 3, 4}, {100, 3, 50},
	}
	for _, s := range []int{1, 15, 16, 17, 63, 64, 65, 1023} {
		shapes = append(shapes, [3]int{s, 33, 40}, [3]int{13, s, 40}, [3]int{13, 33, s})
	}
	for _, transB := range []bool{false, true} {
		r := rand.New(rand.NewPCG(31, 32))
		for _, s := range shapes {
			t.Run(fmt.Sprintf("%dx%dx%d/nt=%v", s[0], s[1], s[2], transB), func(t *testing.T) {
				fastCase(t, r, transB, s[0], s[1], s[2])
			})
		}
	}
}

// TestSgemmFastWithoutAVX512: with the AVX-512 kernels switched off the
// fast product falls back to Sgemm's fold, bit for bit.
func TestSgemmFastWithoutAVX512(t *testing.T) {
	saved := useAVX512
	defer func() { useAVX512 = saved }()
	useAVX512 = false
	r := rand.New(rand.NewPCG(33, 34))
	for _, s := range [][3]int{{13, 33, 257}, {70, 90, 40}} {
		fastCase(t, r, false, s[0], s[1], s[2])
		fastCase(t, r, true, s[0], s[1], s[2])
	}
}

// TestFMAReferenceDetectsSeparateRounding is the planted-fault check of
// TestSgemmFast: on these operands the separate-rounding fold differs
// from the fused one, so a kernel that did not fuse (or fused in another
// order) would fail sameBits.
func TestFMAReferenceDetectsSeparateRounding(t *testing.T) {
	// By hand: x = 1+2⁻¹², x·x = 1+2⁻¹¹+2⁻²⁴. Rounded first, x·x becomes
	// 1+2⁻¹¹ (the 2⁻²⁴ is half an ulp, tie to even), and adding −1 gives
	// 2⁻¹¹; fused, x·x − 1 = 2⁻¹¹+2⁻²⁴ exactly.
	x := float32(1 + 1.0/4096)
	if got, want := fma32(x, x, -1), float32(1.0/2048+1.0/(1<<24)); got != want {
		t.Fatalf("fma32 = %g, want %g", got, want)
	}
	if got, want := float32(x*x)+(-1), float32(1.0/2048); got != want {
		t.Fatalf("separate = %g, want %g", got, want)
	}
	if !useAVX512 {
		t.Skip("no AVX-512: SgemmFast runs the separate-rounding fold")
	}
	// A 13×33×40 product whose element (0, 0) is the fold of 1·(−1) then
	// x·x: fused, −1 then fl(x·x − 1) = 2⁻¹¹+2⁻²⁴.
	m, n, k := 13, 33, 40
	a, b := make([]float32, m*k), make([]float32, k*n)
	a[0], a[1], b[0], b[n] = 1, x, -1, x
	c := make([]float32, m*n)
	SgemmFast(m, n, k, a, k, b, n, c, n)
	if c[0] != float32(1.0/2048+1.0/(1<<24)) {
		t.Fatalf("SgemmFast c[0][0] = %g, want the fused %g", c[0], float32(1.0/2048+1.0/(1<<24)))
	}
}

// TestSgemmFastDeterministicAcrossGOMAXPROCS: the unit grid depends on
// GOMAXPROCS, the bits must not.
func TestSgemmFastDeterministicAcrossGOMAXPROCS(t *testing.T) {
	r := rand.New(rand.NewPCG(35, 36))
	m, n, k := 250, 530, 300
	a, b, bt := randMat(r, m, k, k), randMat(r, k, n, n), randMat(r, n, k, k)
	run := func(procs int) ([]float32, []float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		c, cnt := make([]float32, m*n), make([]float32, m*n)
		SgemmFast(m, n, k, a, k, b, n, c, n)
		SgemmFastNT(m, n, k, a, k, bt, k, cnt, n)
		return c, cnt
	}
	c1, nt1 := run(1)
	for _, procs := range []int{2, 8, 3} {
		c, nt := run(procs)
		if i, ok := sameBits(c, c1); !ok {
			t.Fatalf("SgemmFast GOMAXPROCS=%d: element %d differs", procs, i)
		}
		if i, ok := sameBits(nt, nt1); !ok {
			t.Fatalf("SgemmFastNT GOMAXPROCS=%d: element %d differs", procs, i)
		}
	}
}

// TestSgemmFastSpecialValues: NaN in row 0 of A poisons row 0 of C only;
// +∞ in column 0 of B gives +∞ against positive A terms.
func TestSgemmFastSpecialValues(t *testing.T) {
	m, n, k := 30, 40, 300
	a, b := make([]float32, m*k), make([]float32, k*n)
	for i := range a {
		a[i] = 1
	}
	for i := range b {
		b[i] = 0.5
	}
	a[5] = float32(math.NaN())
	b[7*n] = float32(math.Inf(1))
	c := make([]float32, m*n)
	SgemmFast(m, n, k, a, k, b, n, c, n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			v := float64(c[i*n+j])
			switch {
			case i == 0 && !math.IsNaN(v):
				t.Fatalf("c[0][%d] = %g, want NaN", j, v)
			case i > 0 && j == 0 && !math.IsInf(v, 1):
				t.Fatalf("c[%d][0] = %g, want +Inf", i, v)
			case i > 0 && j > 0 && v != 150:
				t.Fatalf("c[%d][%d] = %g, want 150", i, j, v)
			}
		}
	}
}

// TestLinearFast: LinearFast is SgemmFastNT then the bias, bit for bit
// with fastReference + bias, and the checked form rejects overlap.
func TestLinearFast(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 38))
	rows, in, out := 33, 70, 45
	x, w, bias := randMat(r, rows, in, in), randMat(r, out, in, in), randMat(r, 1, out, out)
	y, want := make([]float32, rows*out), make([]float32, rows*out)
	LinearFast(x, rows, in, w, out, bias, y)
	fastReference(true, rows, out, in, x, in, w, in, want, out)
	for i := range want {
		want[i] += bias[i%out]
	}
	if i, ok := sameBits(y, want); !ok {
		t.Fatalf("element %d: %g, want %g", i, y[i], want[i])
	}
	if err := LinearFastChecked(x, rows, in, w, out, bias, x); err == nil {
		t.Fatal("LinearFastChecked accepted y overlapping x")
	}
	if err := SgemmFastChecked(2, 2, 2, make([]float32, 3), 2, make([]float32, 4), 2, make([]float32, 4), 2); err == nil {
		t.Fatal("SgemmFastChecked accepted a short A")
	}
}

// TestSgemmFastAllocs: a parallel call allocates nothing once the pools
// are warm.
func TestSgemmFastAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops Puts at random")
	}
	r := rand.New(rand.NewPCG(39, 40))
	m, n, k := 40, 40, 40
	a, b, c := randMat(r, m, k, k), randMat(r, k, n, n), make([]float32, m*n)
	SgemmFast(m, n, k, a, k, b, n, c, n)
	if allocs := testing.AllocsPerRun(20, func() { SgemmFast(m, n, k, a, k, b, n, c, n) }); allocs != 0 {
		t.Fatalf("%v allocations per serial call, want 0", allocs)
	}
}

// TestFma32 checks the reference fused multiply-add on cases worked by
// hand, ties and subnormals included.
func TestFma32(t *testing.T) {
	x := float32(1 + 1.0/4096)
	tiny := float32(math.SmallestNonzeroFloat32)
	for _, c := range []struct{ x, y, z, want float32 }{
		{x, x, -1, float32(1.0/2048 + 1.0/(1<<24))},
		{x, x, 0, float32(1 + 1.0/2048)}, // 1+2⁻¹¹+2⁻²⁴: a tie, to even
		// (1+2⁻²³)·(2⁻²⁴−2⁻⁴⁷) + (1+2⁻²³) = 1+3·2⁻²⁴−2⁻⁷⁰: just below the
		// tie between 1+2⁻²³ and 1+2⁻²², so down to 1+2⁻²³; rounding to
		// float64 first would give the tie and then the even 1+2⁻²².
		{1 + 1.0/(1<<23), 1.0/(1<<24) - 1.0/(1<<47), 1 + 1.0/(1<<23), 1 + 1.0/(1<<23)},
		{2, 3, 4, 10},
		{tiny, 0.5, 0, 0},     // 2⁻¹⁵⁰: a tie between 0 and 2⁻¹⁴⁹, to even (0)
		{tiny, 0.75, 0, tiny}, // 1.5·2⁻¹⁵⁰ rounds up to 2⁻¹⁴⁹
		{tiny, 1.5, 0, 2 * tiny},
	} {
		if got := fma32(c.x, c.y, c.z); math.Float32bits(got) != math.Float32bits(c.want) {
			t.Errorf("fma32(%g, %g, %g) = %g, want %g", c.x, c.y, c.z, got, c.want)
		}
	}
}

// TestSgemmFastConcurrentCallers runs SgemmFast and Sgemm from several
// goroutines at once, sharing helpers and scratch pools; each result must
// still equal its documented fold.
func TestSgemmFastConcurrentCallers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	errs := make(chan error, 6)
	for g := range 6 {
		go func() {
			r := rand.New(rand.NewPCG(uint64(g), 77))
			m, n, k := 50+7*g, 90+5*g, 260+3*g
			a, b := randMat(r, m, k, k), randMat(r, k, n, n)
			want, wantFixed := make([]float32, m*n), make([]float32, m*n)
			fastReference(false, m, n, k, a, k, b, n, want, n)
			naiveFold(false, m, n, k, a, k, b, n, wantFixed, n)
			for range 3 {
				c, cf := make([]float32, m*n), make([]float32, m*n)
				SgemmFast(m, n, k, a, k, b, n, c, n)
				Sgemm(m, n, k, a, k, b, n, cf, n)
				if i, ok := sameBits(c, want); !ok {
					errs <- fmt.Errorf("caller %d: SgemmFast element %d is %g, want %g", g, i, c[i], want[i])
					return
				}
				if i, ok := sameBits(cf, wantFixed); !ok {
					errs <- fmt.Errorf("caller %d: Sgemm element %d is %g, want %g", g, i, cf[i], wantFixed[i])
					return
				}
			}
			errs <- nil
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// TestSgemmFastScratchBounded measures the heap a call allocates (with
// pools that may be cold) and checks it against the documented scratch
// bound: per goroutine one B panel (fkc × ≤ fncMax) plus the fixed A block
// and edge tile, however large the product. A 2100-column product would
// need 4.6 MiB in Sgemm's whole-matrix packing; here at most 2 × 1.14 MiB
// (GOMAXPROCS 2) plus a few KiB for the job and helpers.
func TestSgemmFastScratchBounded(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512: SgemmFast is Sgemm")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	r := rand.New(rand.NewPCG(41, 42))
	m, n, k := 30, 2100, 520
	a, b, c := randMat(r, m, k, k), randMat(r, k, n, n), make([]float32, m*n)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	SgemmFast(m, n, k, a, k, b, n, c, n)
	runtime.ReadMemStats(&after)
	perWorker := (fkc*fncMax + fmc*fkc + fmr*fnr) * 4
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("SgemmFast %d×%d×%d allocated %d bytes (cold or warm pools)", m, n, k, got)
	if limit := uint64(2*perWorker + 64<<10); got > limit {
		t.Fatalf("SgemmFast allocated %d bytes, above 2 × %d + 64 KiB", got, perWorker)
	}
	if perWorker > 1_200_000 {
		t.Fatalf("documented per-goroutine scratch is 1.14 MiB, constants give %d bytes", perWorker)
	}
}
