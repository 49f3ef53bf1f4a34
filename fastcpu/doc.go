// Package fastcpu holds the compute kernels of tlcheck's fast float32 CPU
// provider: a cache-blocked, register-blocked, multi-goroutine matrix
// multiply (Sgemm, SgemmNT), a linear layer built on it (Linear), and
// unrolled, chunked reductions (Sum, Dot) — all with a documented,
// fixed order — and the implementation-defined product of the fast
// provider (SgemmFast, SgemmFastNT, LinearFast: fused multiply-add on
// AVX-512, GotoBLAS-style panel packing); and the float64 product Dgemm
// that the sound interval kernels of package enclose run on (AVX-512,
// AVX2 or portable micro-kernels, every one the naive left fold).
//
// The kernels work on plain row-major []float32 (Dgemm: []float64) slices
// and import nothing of tlcheck's, so that even the bottom package spec can
// run its float32 matmul on them. Registration as backend capsules and the refinement
// checks live elsewhere.
//
// # Rounding and summation order
//
// Every fixed-order kernel rounds each product a·b to float32 and then
// adds it to a float32 accumulator with a second rounding: no fused
// multiply-add is used on any of their paths (the Go code converts every
// product explicitly to float32, which the Go specification says prevents
// fusion, and the AVX2 and AVX-512 kernels use separate multiply and add
// instructions, vectorised across output elements so that each element's
// fold is unchanged). Their results therefore do not depend on the
// instruction set, the GOAMD64 level, the architecture, GOMAXPROCS or
// goroutine scheduling: the same inputs give the same bits. The
// implementation-defined SgemmFast family is the exception: with AVX-512
// it fuses (see SgemmFast); it too is independent of GOMAXPROCS and
// scheduling.
//
// The order in which terms are added is documented on each function, with
// the largest number of product terms that any single output accumulates.
// That count n is all an order-independent error bound needs: for any
// order of summation of n rounded products,
//
//	|ŝ − s| ≤ γ_n · Σ|a_i·b_i|,  γ_n = n·u/(1−n·u),  u = 2⁻²⁴,
//
// for results in the normal range (gradual underflow adds an absolute
// term proportional to n times the smallest subnormal, 2⁻¹⁴⁹).
//
// In summary:
//
//   - Sgemm, SgemmNT: each C element is a left fold over the k index from
//     +0 — exactly the naive triple loop's order — so at most k terms. The
//     blocking only decides when an accumulator is parked in C and reloaded,
//     which is exact in float32. The results are bit-identical to the
//     reference provider's fixed-left matmul.
//   - Linear: each output is that left fold over the in index of
//     x[r,i]·w[o,i], then + b[o]: at most in+1 terms, bit-identical to the
//     reference provider's linear (left fold, then bias).
//   - SgemmFast, SgemmFastNT: at most k roundings per output (the fused
//     left fold with AVX-512, Sgemm's fold otherwise), so the same γ_k
//     bound; LinearFast: at most in+1.
//   - Dgemm (float64, u = 2⁻⁵³): each C element is the left fold over k
//     from +0 with separately rounded products and sums, on every kernel
//     family (AVX-512 VMULPD+VADDPD, AVX2 VMULPD+VADDPD, portable Go), so
//     at most k terms and bit-identical to the naive triple loop on every
//     machine. No FMA: the portable path would have to fuse too (a
//     software math.FMA where the hardware has none) for the bits to agree
//     across machines.
//   - Sum, Dot: fixed chunks of ChunkLen elements, each summed with eight
//     interleaved accumulators combined pairwise, chunk results combined
//     left to right: at most n terms for length n.
//
// # Special values
//
// NaN and infinities propagate as IEEE 754 arithmetic makes them: a NaN in
// any term of an output gives a NaN output, as does ∞ − ∞ or 0·∞ (the
// packing pads partial blocks with zeros, but padded lanes are never
// written back to C, so a zero pad never meets a real infinity in an
// output). The payload of a NaN result is not specified. Subnormal inputs
// and results are handled by the hardware with gradual underflow (Go
// never enables flush-to-zero).
package fastcpu
