//go:build !amd64 || purego

package fastcpu

// Off amd64 (or with the purego tag) useAVX2 and useAVX512 are false and
// these are never called: Dgemm runs its portable kernels.

func dkernel6x8AVX2(kc int, a, b, c *float64, ldc int, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}

func dkernel12x16AVX512(kc int, a, b, c *float64, ldc int, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}

func daxpyAVX2(n int, s float64, x, y *float64) {
	panic("fastcpu: no vector kernel on this platform")
}
