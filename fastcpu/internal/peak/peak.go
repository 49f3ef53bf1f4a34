// Package peak holds register-only floating-point throughput
// microkernels: they touch no memory, so that their rate is the core's
// arithmetic ceiling for the instruction mix, against which gemmbench
// states fastcpu's products.
package peak

// Kernel is one microkernel.
type Kernel struct {
	Name string
	// Run executes Iters iterations of FlopsPerIter float32 flops.
	Run          func(iters int)
	FlopsPerIter float64
}
