// Package cuda is the native-cuda provider of tlcheck on gorgonia.org/cu
// (the CUDA driver API). The real provider (gpu.go) builds only with the
// tag `cuda` and cgo enabled: gorgonia.org/cu calls cuInit in its package
// init and exits the process on a machine without a driver, so it must
// never be linked into an ordinary build. Elsewhere stub.go's NewProvider
// returns ErrNotBuilt.
//
// # Kernels
//
// The kernels are hand-written PTX (kernels/*.ptx, .version 7.8,
// .target sm_52, embedded with //go:embed and loaded with
// cuModuleLoadData; the launch table kernelSpecs is checked against their
// .entry lines by a test that needs no GPU). Every product and sum is one
// IEEE binary32 operation rounded to nearest even, mul.rn.f32 and
// add.rn.f32 without .ftz (subnormals kept), never fused. The orders:
//
//   - tl_add, tl_sub, tl_mul, tl_neg, tl_relu: one thread per element;
//     tl_broadcast copies bits;
//   - tl_matmul: 16×16 shared-memory tiles; each output is a left fold
//     over k from +0;
//   - tl_linear: a left fold over the input axis from +0, then the bias;
//   - tl_sum_tree: blocks of 256 threads; a block sums its 256 elements
//     (+0 past the end) by the tree sh[t] += sh[t+s], s = 128, …, 1, and
//     the host repeats this on the partials until one value is left;
//   - tl_sum_atomic: the same block trees, each added into the result by a
//     compare-and-swap loop around add.rn.f32 (atom.add.f32 would flush
//     subnormals), in the order the hardware schedules the blocks;
//   - tl_reduce_sum: one block per output; thread t folds j = t, t+256, …
//     from +0, then the block tree.
//
// emu.go replays exactly these orders on the host (Go's float32
// arithmetic on explicitly converted operands is the same binary32
// round-to-nearest-even with subnormals), with the atomic order a chosen
// permutation. On a GPU, TestGPUMatchesEmulation checks the emulation's
// bits against the device for every kernel with a fixed order.
//
// # Refinement
//
// All these orders use at most n−1 additions per output of n terms and one
// rounding per product, so package refine's order-independent bound
// applies to each: |ŝ − s| ≤ γ_g·Σ|terms| + p·2^-149 (see
// refine.ElementBound for the theorem and its argument), with g and p as
// for the fast CPU provider. That is the evidence of the accumulating
// checked_cuda capsules (backend.CUDACertificate); refinement checks it in
// exact rational arithmetic on generated inputs, and a planted one-bit
// fault (refine.FlipBit, bit 20) must fail it. Elementwise kernels are
// single correctly rounded operations: they equal the registry's float32
// rule bit for bit (tested on the emulation here and on the GPU by
// TestGPUMatchesEmulation through it).
//
// # Runtime
//
// One worker goroutine, locked to its OS thread, owns the context; every
// call is a closure run by it. Every device buffer lives for one call and
// is freed before the call returns. Every driver error is a *DriverError
// naming the call, every failed launch a *LaunchError naming kernel, grid,
// block and problem sizes; nothing panics on bad input.
package cuda
