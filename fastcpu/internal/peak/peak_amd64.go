//go:build amd64

package peak

import "golang.org/x/sys/cpu"

// FMA512 runs iters iterations of 12 independent VFMADD231PS on ZMM
// registers (12·16·2 = 384 flops per iteration; twelve chains cover a
// 4-cycle latency on two FMA ports).
//
//go:noescape
func FMA512(iters int)

// MulAdd512 runs iters iterations of 12 VMULPS + 12 VADDPS on ZMM
// registers, twelve independent add chains (384 flops per iteration):
// the instruction mix of the bit-identical kernel.
//
//go:noescape
func MulAdd512(iters int)

// MulAdd256 runs iters iterations of 12 VMULPS + 12 VADDPS on YMM
// registers, six independent add chains (192 flops per iteration): the
// AVX2 kernel's mix.
//
//go:noescape
func MulAdd256(iters int)

// Kernels lists the microkernels this CPU can run.
func Kernels() []Kernel {
	var ks []Kernel
	if cpu.X86.HasAVX512F {
		ks = append(ks, Kernel{"avx512-fma", FMA512, 384}, Kernel{"avx512-mul+add", MulAdd512, 384})
	}
	if cpu.X86.HasAVX2 {
		ks = append(ks, Kernel{"avx2-mul+add", MulAdd256, 192})
	}
	return ks
}
