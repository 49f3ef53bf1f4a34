//go:build !amd64 || purego

package fastcpu

// useAVX2 is always false off amd64 (or with the purego tag): the
// portable kernel runs.
var useAVX2 = false

func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool) {
	panic("fastcpu: no vector kernel on this platform")
}
