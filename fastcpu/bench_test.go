package fastcpu

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"
)

// benchGemm times f on n×n×n operands and reports GFLOP/s (2n³ flops per
// call) alongside the allocations.
func benchGemm(b *testing.B, n int, f func(a, bm, c []float32)) {
	r := rand.New(rand.NewPCG(1, 1))
	a, bm, c := randMat(r, n, n, n), randMat(r, n, n, n), make([]float32, n*n)
	f(a, bm, c) // warm the pools
	b.ReportAllocs()
	b.SetBytes(int64(3 * 4 * n * n))
	b.ResetTimer()
	for b.Loop() {
		f(a, bm, c)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemm is this package's C = A·B.
func BenchmarkSgemm(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchGemm(b, n, func(a, bm, c []float32) { Sgemm(n, n, n, a, n, bm, n, c, n) })
		})
	}
}

// BenchmarkSgemmNT is C = A·Bᵀ (the linear-layer product).
func BenchmarkSgemmNT(b *testing.B) {
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchGemm(b, n, func(a, bm, c []float32) { SgemmNT(n, n, n, a, n, bm, n, c, n) })
		})
	}
}

// BenchmarkSgemmPortable forces the portable Go micro-kernel (what runs
// without AVX2 and AVX-512, off amd64, or under the purego tag).
func BenchmarkSgemmPortable(b *testing.B) {
	saved2, saved512 := useAVX2, useAVX512
	useAVX2, useAVX512 = false, false
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchGemm(b, n, func(a, bm, c []float32) { Sgemm(n, n, n, a, n, bm, n, c, n) })
		})
	}
}

// BenchmarkGonumSgemm is gonum's pure-Go/assembly float32 GEMM on the
// same operands, for comparison.
func BenchmarkGonumSgemm(b *testing.B) {
	impl := gonum.Implementation{}
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchGemm(b, n, func(a, bm, c []float32) {
				impl.Sgemm(blas.NoTrans, blas.NoTrans, n, n, n, 1, a, n, bm, n, 0, c, n)
			})
		})
	}
}

// BenchmarkNaiveSgemm is the reference provider's fixed-left-fold triple
// loop (one goroutine). 1024³ takes seconds per call, so it runs at 256
// and 512 only.
func BenchmarkNaiveSgemm(b *testing.B) {
	for _, n := range []int{256, 512} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			benchGemm(b, n, func(a, bm, c []float32) { naiveFold(false, n, n, n, a, n, bm, n, c, n) })
		})
	}
}

// BenchmarkSum reports GB/s read (SetBytes) at a serial size and at two
// sizes above parallelLen.
func BenchmarkSum(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1 << 20, 1 << 24} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			x := randVec(rand.New(rand.NewPCG(2, 2)), n)
			Sum(x)
			b.ReportAllocs()
			b.SetBytes(int64(4 * n))
			for b.Loop() {
				Sum(x)
			}
		})
	}
}

// BenchmarkDot is BenchmarkSum for Dot (bytes of both operands).
func BenchmarkDot(b *testing.B) {
	for _, n := range []int{1000, 100_000, 1 << 20, 1 << 24} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(3, 3))
			x, y := randVec(r, n), randVec(r, n)
			Dot(x, y)
			b.ReportAllocs()
			b.SetBytes(int64(8 * n))
			for b.Loop() {
				Dot(x, y)
			}
		})
	}
}

// BenchmarkLinear is a batch-256, 512→512 layer with bias.
func BenchmarkLinear(b *testing.B) {
	rows, in, out := 256, 512, 512
	r := rand.New(rand.NewPCG(4, 4))
	x, w, bias, y := randVec(r, rows*in), randVec(r, out*in), randVec(r, out), make([]float32, rows*out)
	Linear(x, rows, in, w, out, bias, y)
	b.ReportAllocs()
	for b.Loop() {
		Linear(x, rows, in, w, out, bias, y)
	}
	b.ReportMetric(2*float64(rows*in*out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkSgemmFamilies compares, interleaved, the fixed-left Sgemm with
// each kernel family forced in turn (AVX-512, AVX2, portable) and the
// implementation-defined SgemmFast: each iteration of the benchmark loop
// runs every variant once, and the best time of each over the loop is
// reported as GFLOP/s (best-of is what survives other processes' load on
// a shared machine; the median is reported too).
func BenchmarkSgemmFamilies(b *testing.B) {
	saved2, saved512 := useAVX2, useAVX512
	defer func() { useAVX2, useAVX512 = saved2, saved512 }()
	for _, n := range []int{256, 1024} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, bm, c := randMat(r, n, n, n), randMat(r, n, n, n), make([]float32, n*n)
			type variant struct {
				name         string
				avx512, avx2 bool
				f            func()
			}
			var vs []variant
			for _, f := range kernelFamilies() {
				if f.name == "portable" && n > 256 {
					continue
				}
				vs = append(vs, variant{f.name, f.avx512, f.avx2, func() { Sgemm(n, n, n, a, n, bm, n, c, n) }})
			}
			vs = append(vs, variant{"fast", saved512, saved2, func() { SgemmFast(n, n, n, a, n, bm, n, c, n) }})
			times := make([][]float64, len(vs))
			for i, v := range vs { // warm the pools
				useAVX512, useAVX2 = v.avx512, v.avx2
				vs[i].f()
			}
			b.ReportAllocs()
			for b.Loop() {
				for i, v := range vs {
					useAVX512, useAVX2 = v.avx512, v.avx2
					start := time.Now()
					v.f()
					times[i] = append(times[i], time.Since(start).Seconds())
				}
			}
			flops := 2 * float64(n) * float64(n) * float64(n)
			for i, v := range vs {
				slices.Sort(times[i])
				b.ReportMetric(flops/times[i][0]/1e9, v.name+"-best-GFLOP/s")
				b.ReportMetric(flops/times[i][len(times[i])/2]/1e9, v.name+"-median-GFLOP/s")
			}
		})
	}
}
