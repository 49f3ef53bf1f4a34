package spec

// Devirtualised kernels for the hardware float scalars. They perform
// exactly the operations of the generic rules in exactly the same order —
// a left fold from +0 with one rounding per multiply and per add (the
// explicit conversions forbid fused multiply-add) — so results are
// bit-identical; they only avoid a method call per element. The float32
// ones run on package fastcpu, a leaf of plain []float32 kernels whose
// blocked, vectorised matmul keeps exactly this fold (it is the one
// dependency of spec, and it imports nothing of tlcheck's).

import (
	"unsafe"

	"github.com/tlcheck/tlcheck/fastcpu"
)

// f32 views a []F32 as []float32 (F32's underlying type) without copying.
func f32(d []F32) []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(d))), len(d))
}

// matmulFwdF32 is matmulFwd for F32 on fastcpu.Sgemm, whose every element
// is the same left fold from +0 of rounded products with rounded additions
// (fastcpu documents and tests this): bit-identical to the generic rule.
func matmulFwdF32(p *mmPlan, a, b, out []F32) {
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		fastcpu.Sgemm(p.M, p.N, p.K, f32(a[ao:ao+mk]), max(p.K, 1), f32(b[bo:bo+kn]), max(p.N, 1), f32(out[co:co+mn]), max(p.N, 1))
	}
}

// matmulFwdF64 is matmulFwd for F64.
func matmulFwdF64(p *mmPlan, a, b, out []F64) {
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		for i := 0; i < p.M; i++ {
			arow := a[ao+i*p.K : ao+i*p.K+p.K]
			crow := out[co+i*p.N : co+i*p.N+p.N]
			for j := range crow {
				var acc float64
				for k, av := range arow {
					acc = acc + float64(float64(av)*float64(b[bo+k*p.N+j]))
				}
				crow[j] = F64(acc)
			}
		}
	}
}

// matmulVJPF32 is matmulVJP for F32: per batch, the fold dA[i,k] =
// Σ_j δ[i,j]·B[k,j] by SgemmNT and dB[k,j] = Σ_i A[i,k]·δ[i,j] by Sgemm on
// a transposed copy of A, each added into its (broadcast-shared) block in
// batch order, exactly as the generic rule accumulates.
func matmulVJPF32(p *mmPlan, a, b, d, da, db []F32) {
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	ta := make([]float32, mk) // a batch's fold of dA
	tb := make([]float32, kn) // a batch's fold of dB
	at := make([]float32, mk) // A transposed
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		fastcpu.SgemmNT(p.M, p.K, p.N, f32(d[co:co+mn]), max(p.N, 1), f32(b[bo:bo+kn]), max(p.N, 1), ta, max(p.K, 1))
		av := a[ao : ao+mk]
		for i := 0; i < p.M; i++ {
			for k := 0; k < p.K; k++ {
				at[k*p.M+i] = float32(av[i*p.K+k])
			}
		}
		fastcpu.Sgemm(p.K, p.N, p.M, at, max(p.M, 1), f32(d[co:co+mn]), max(p.N, 1), tb, max(p.N, 1))
		for i, v := range ta {
			da[ao+i] = F32(float32(da[ao+i]) + v)
		}
		for i, v := range tb {
			db[bo+i] = F32(float32(db[bo+i]) + v)
		}
	}
}

// linearFwdF32 is linearFwd for F32 on fastcpu.Linear: the left fold over
// the input axis from +0, then + b (no bias when b is nil) — the generic
// rule's operations in its order.
func linearFwdF32(x, w, b, y []F32, rows, out, in int) {
	var bias []float32
	if b != nil {
		bias = f32(b)
	}
	fastcpu.Linear(f32(x), rows, in, f32(w), out, bias, f32(y))
}

// linearVJPF32 is the linear VJP for F32: dx = δ·W by Sgemm (the fold over
// outputs), dW = δᵀ·x by Sgemm on a transposed copy of δ (the fold over
// rows from +0, as the rule accumulates row by row), db the fold over rows.
func linearVJPF32(x, w, dy, dx, dw, db []F32, rows, out, in int) {
	fastcpu.Sgemm(rows, in, out, f32(dy), max(out, 1), f32(w), max(in, 1), f32(dx), max(in, 1))
	dt := make([]float32, out*rows)
	for r := 0; r < rows; r++ {
		for j := 0; j < out; j++ {
			dt[j*rows+r] = float32(dy[r*out+j])
		}
	}
	fastcpu.Sgemm(out, in, rows, dt, max(rows, 1), f32(x), max(in, 1), f32(dw), max(in, 1))
	for j := 0; j < out; j++ {
		var acc float32
		for r := 0; r < rows; r++ {
			acc = acc + float32(dy[r*out+j])
		}
		db[j] = F32(acc)
	}
}
