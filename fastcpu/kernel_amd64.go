//go:build amd64 && !purego

package fastcpu

// useAVX2 selects the AVX2 micro-kernel. It is a variable so that tests
// can force the portable kernel and compare the bits of both.
var useAVX2 = hasAVX2()

// hasAVX2 reports whether the CPU has AVX2 and the OS saves the YMM
// registers (CPUID.1:ECX.OSXSAVE and .AVX, XCR0 bits 1–2, CPUID.7:EBX.AVX2).
func hasAVX2() bool {
	maxID, _, _, _ := cpuid(0, 0)
	if maxID < 7 {
		return false
	}
	_, _, ecx1, _ := cpuid(1, 0)
	const osxsave, avx = 1 << 27, 1 << 28
	if ecx1&osxsave == 0 || ecx1&avx == 0 {
		return false
	}
	if xcr0, _ := xgetbv(); xcr0&6 != 6 {
		return false
	}
	_, ebx7, _, _ := cpuid(7, 0)
	return ebx7&(1<<5) != 0
}

// cpuid executes CPUID with EAX=leaf, ECX=sub.
//
//go:noescape
func cpuid(leaf, sub uint32) (eax, ebx, ecx, edx uint32)

// xgetbv reads XCR0.
//
//go:noescape
func xgetbv() (eax, edx uint32)

// kernel6x16AVX2 is microKernel for 6×16 blocks with 256-bit vectors:
// twelve YMM accumulators (two per row), VMULPS then VADDPS per product,
// in increasing p. The caller guarantees the extents.
//
//go:noescape
func kernel6x16AVX2(kc int, a, b, c *float32, ldc int, accumulate bool)
