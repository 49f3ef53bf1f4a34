//go:build amd64 && !purego

package fastcpu

import "golang.org/x/sys/cpu"

// Kernel selection. golang.org/x/sys/cpu reports AVX2 only when
// CPUID.7:EBX.AVX2 is set and the OS saves the YMM registers
// (CPUID.1:ECX.OSXSAVE and .AVX, XCR0 bits 1–2), and AVX-512F only when
// CPUID.7:EBX.AVX512F is set and the OS also saves the opmask and ZMM
// state (XCR0 bits 5–7): the conditions the vector kernels need. The
// AVX-512 kernels use only AVX-512F instructions (VMULPS, VADDPS,
// VFMADD231PS, VBROADCASTSS, VMOVUPS, VPXORD on Z registers).
//
// With useAVX512, Sgemm and SgemmFast run the panel driver of fast.go with
// the 12×32 kernels below; otherwise Sgemm runs the whole-matrix driver
// of sgemm.go with the 6×16 microKernel (AVX2 or portable) and SgemmFast
// is Sgemm.
//
// These are variables so that tests can force each kernel family in turn
// (AVX-512, AVX2, portable Go) on one machine and compare their bits;
// nothing else writes them.
var (
	useAVX2   = cpu.X86.HasAVX2
	useAVX512 = cpu.X86.HasAVX512F
)

// kernel6x16AVX2 is microKernel for 6×16 blocks with 256-bit vectors:
// twelve YMM accumulators (two per row), VMULPS then VADDPS per product,
// in increasing p. The caller guarantees the extents.
//
//go:noescape
func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool)

// kernel12x32FMA is SgemmFast's micro-kernel: a 12×32 block of C from a
// packed 12-row A strip (a[p·12+r]) and a packed 32-column B strip
// (b[p·32+j]), each element the fused left fold
// c ← fl(a[p·12+r]·b[p·32+j] + c), p = 0…kc−1, from +0 or from c when
// accumulate is set. c must hold 11·ldc+32 elements. next is only
// prefetched (12 rows of 128 bytes at stride ldc from it, the block the
// caller computes next); prefetches never fault, so any address will do.
//
//go:noescape
func kernel12x32FMA(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool)

// kernel12x32MulAdd is kernel12x32FMA with separate rounding: each
// element is the left fold c ← fl(c + fl(a[p·12+r]·b[p·32+j])), p =
// 0…kc−1 (VMULPS then VADDPS), kernelGeneric's fold in the 12×32 layout.
//
//go:noescape
func kernel12x32MulAdd(kc int, a, b, c *float32, ldc int, next *float32, accumulate bool)
