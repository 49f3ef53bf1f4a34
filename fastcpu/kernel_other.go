//go:build !amd64 || purego

package fastcpu

// useAVX2 and useAVX512 are always false off amd64 (or with the purego
// tag): the portable kernels run.
var (
	useAVX2   = false
	useAVX512 = false
)

func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}

func kernel12x32FMA(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}

func kernel12x32MulAdd(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}
