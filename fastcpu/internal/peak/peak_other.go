//go:build !amd64

package peak

// Kernels lists the microkernels this CPU can run: none off amd64.
func Kernels() []Kernel { return nil }
