package fastcpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// dgemmMismatch runs one product through dgemmBlock with family f (no
// naive path, one goroutine) and returns the first element whose bits
// differ from naiveDgemm's, or -1.
func dgemmMismatch(f dfamily, transA, transB bool, m, n, k int, a []float64, lda int, b []float64, ldb int) int {
	want := naiveDgemm(transA, transB, m, n, k, a, lda, b, ldb)
	c := make([]float64, m*n)
	dgemmBlock(f, transA, transB, 0, (m+f.mr-1)/f.mr, 0, (n+f.nr-1)/f.nr, m, n, k, a, lda, b, ldb, c, n)
	for i := range c {
		if math.Float64bits(c[i]) != math.Float64bits(want[i]) {
			return i
		}
	}
	return -1
}

// fusedKernel4x4 is a planted fault: the portable family's kernel with a
// fused multiply-add, c ← fl(a·b + c) (one rounding instead of two).
func fusedKernel4x4(kc int, ap, bp, c []float64, ldc int, accumulate bool) {
	for r := 0; r < 4; r++ {
		for j := 0; j < 4; j++ {
			acc := 0.0
			if accumulate {
				acc = c[r*ldc+j]
			}
			for p := 0; p < kc; p++ {
				acc = math.FMA(ap[p*4+r], bp[p*4+j], acc)
			}
			c[r*ldc+j] = acc
		}
	}
}

// TestDgemmFamiliesCatchFusion: the bit comparison that every family
// passes (TestDgemmMatchesNaive) rejects a kernel that fuses its
// multiply-adds, on data whose products are inexact; and each family
// itself passes it on subnormal products and on ragged shapes.
func TestDgemmFamiliesCatchFusion(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 3))
	m, n, k := 13, 11, 300
	a, b := make([]float64, m*k), make([]float64, k*n)
	for i := range a {
		a[i] = r.Float64() - 0.5
		if i%7 == 0 {
			a[i] = math.Ldexp(a[i], -1040) // subnormal products
		}
	}
	for i := range b {
		b[i] = r.Float64() - 0.5
	}
	if i := dgemmMismatch(dfamily{"fused", 4, 4, fusedKernel4x4}, false, false, m, n, k, a, k, b, n); i < 0 {
		t.Fatal("a fused kernel matched the naive fold bit for bit: the comparison is vacuous")
	}
	withKernels(t, func(t *testing.T) {
		f := dgemmFamily()
		for _, tr := range [][2]bool{{false, false}, {true, true}} {
			lda, ldb := k, n
			if tr[0] {
				lda = m
			}
			if tr[1] {
				ldb = k
			}
			if i := dgemmMismatch(f, tr[0], tr[1], m, n, k, a, lda, b, ldb); i >= 0 {
				t.Fatalf("family %s trans=%v: element %d differs from the naive fold", f.name, tr, i)
			}
		}
	})
}

// BenchmarkDgemmFamilies runs Dgemm with each float64 kernel family this
// machine has (AVX-512, AVX2, portable Go), interleaved: each iteration
// runs every family once, so that load from other processes hits them
// alike, and reports each family's best and median GFLOP/s (2·m·n·k over
// wall time) over the iterations, and GFLOP/s per CPU-second (2·m·n·k
// over the median process CPU time of a call, every thread counted: on a
// shared machine this moves much less than the wall time, and with
// GOMAXPROCS > 1 it is the rate per busy core). Shapes: 256³, 512³ and a ResNet conv
// as a product (64 output channels × 3136 positions × 576 = 64·3·3).
func BenchmarkDgemmFamilies(b *testing.B) {
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	for _, s := range [][3]int{{256, 256, 256}, {512, 512, 512}, {64, 3136, 576}} {
		m, n, k := s[0], s[1], s[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 5))
			a, bb, c := make([]float64, m*k), make([]float64, k*n), make([]float64, m*n)
			for i := range a {
				a[i] = r.Float64() - 0.5
			}
			for i := range bb {
				bb[i] = r.Float64() - 0.5
			}
			fams := kernelFamilies()
			times := make([][]float64, len(fams))
			cpus := make([][]float64, len(fams))
			for _, f := range fams { // warm up
				useAVX512, useAVX2 = f.avx512, f.avx2
				Dgemm(false, false, m, n, k, a, k, bb, n, c, n)
			}
			for b.Loop() {
				for i, f := range fams {
					useAVX512, useAVX2 = f.avx512, f.avx2
					c0, start := processCPU(), time.Now()
					Dgemm(false, false, m, n, k, a, k, bb, n, c, n)
					times[i] = append(times[i], time.Since(start).Seconds())
					cpus[i] = append(cpus[i], float64(processCPU()-c0)/1e9)
				}
			}
			flops := 2 * float64(m) * float64(n) * float64(k)
			for i, f := range fams {
				slices.Sort(times[i])
				b.ReportMetric(flops/times[i][0]/1e9, f.name+"-best-GFLOP/s")
				b.ReportMetric(flops/times[i][len(times[i])/2]/1e9, f.name+"-median-GFLOP/s")
				if slices.Sort(cpus[i]); cpus[i][0] >= 0 {
					b.ReportMetric(flops/cpus[i][len(cpus[i])/2]/1e9, f.name+"-cpu-GFLOP/s")
				}
			}
		})
	}
}
