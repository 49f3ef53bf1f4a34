//go:build amd64 && !purego

package fastcpu

// The float64 vector kernels of Dgemm, selected by the same CPU-feature
// variables as the float32 ones (useAVX512, then useAVX2; see
// kernel_amd64.go). They use separate multiply and add instructions
// (VMULPD, VADDPD; AVX2 for the 6×8 kernel and daxpyAVX2, AVX-512F for the
// 12×16 kernel), vectorised across the columns of C, so that each element
// of C is the same left fold as in the portable kernel.

// dkernel6x8AVX2 computes a 6×8 block of C from a packed 6-row A strip
// (a[p·6+r]) and a packed 8-column B panel (b[p·8+j]): c[r·ldc+j] is the
// left fold c ← fl(c + fl(a[p·6+r]·b[p·8+j])), p = 0 … kc−1, from +0, or
// from c[r·ldc+j] when accumulate is set. c must hold 5·ldc+8 elements;
// the caller guarantees every extent.
//
//go:noescape
func dkernel6x8AVX2(kc int, a, b, c *float64, ldc int, accumulate bool)

// dkernel12x16AVX512 is dkernel6x8AVX2 for a 12×16 block (a[p·12+r],
// b[p·16+j]; c holds 11·ldc+16 elements).
//
//go:noescape
func dkernel12x16AVX512(kc int, a, b, c *float64, ldc int, accumulate bool)

// daxpyAVX2 sets y[j] = fl(y[j] + fl(s·x[j])) for j < n (x and y hold n
// elements).
//
//go:noescape
func daxpyAVX2(n int, s float64, x, y *float64)
