//go:build amd64 && !purego

package fastcpu

import "golang.org/x/sys/cpu"

// useAVX2 selects the AVX2 micro-kernel: golang.org/x/sys/cpu reports AVX2
// only when CPUID.7:EBX.AVX2 is set and the OS saves the YMM registers
// (CPUID.1:ECX.OSXSAVE and .AVX, XCR0 bits 1–2), the conditions the
// kernel needs. It is a variable so that tests can force the portable
// kernel and compare the bits of both.
var useAVX2 = cpu.X86.HasAVX2

// kernel6x16AVX2 is microKernel for 6×16 blocks with 256-bit vectors:
// twelve YMM accumulators (two per row), VMULPS then VADDPS per product,
// in increasing p. The caller guarantees the extents.
//
//go:noescape
func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool)
