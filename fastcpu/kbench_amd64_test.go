//go:build amd64 && !purego

package fastcpu

import "testing"

// BenchmarkMicroKernels times each AVX-512 micro-kernel alone on
// L1-resident packed strips (kc = 256), reporting GFLOP/s.
func BenchmarkMicroKernels(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512")
	}
	const kc = 256
	a := make([]float32, fmr*kc)
	bb := make([]float32, fnr*kc)
	for i := range a {
		a[i] = 1.0 / float32(i+1)
	}
	for i := range bb {
		bb[i] = float32(i%7) * 0.25
	}
	c := make([]float32, fmr*fnr)
	for _, k := range []struct {
		name string
		f    func(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool)
	}{{"fma12x32", kernel12x32FMA}, {"muladd12x32", kernel12x32MulAdd}} {
		b.Run(k.name, func(b *testing.B) {
			for b.Loop() {
				k.f(kc, &a[0], &bb[0], &c[0], fnr, &c[0], true)
			}
			b.ReportMetric(2*fmr*fnr*kc*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
