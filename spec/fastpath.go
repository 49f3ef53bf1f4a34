package spec

// Devirtualised kernels for the hardware float scalars. They perform
// exactly the operations of the generic rules in exactly the same order —
// a left fold from +0 with one rounding per multiply and per add (the
// explicit conversions forbid fused multiply-add) — so results are
// bit-identical; they only avoid a method call per element.

// matmulFwdF32 is matmulFwd for F32.
func matmulFwdF32(p *mmPlan, a, b, out []F32) {
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		for i := 0; i < p.M; i++ {
			arow := a[ao+i*p.K : ao+i*p.K+p.K]
			crow := out[co+i*p.N : co+i*p.N+p.N]
			for j := range crow {
				var acc float32
				for k, av := range arow {
					acc = acc + float32(float32(av)*float32(b[bo+k*p.N+j]))
				}
				crow[j] = F32(acc)
			}
		}
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

// matmulVJPF32 is matmulVJP for F32.
func matmulVJPF32(p *mmPlan, a, b, d, da, db []F32) {
	mk, kn, mn := p.M*p.K, p.K*p.N, p.M*p.N
	for bt := range p.AIndex {
		ao, bo, co := p.AIndex[bt]*mk, p.BIndex[bt]*kn, bt*mn
		for i := 0; i < p.M; i++ {
			drow := d[co+i*p.N : co+i*p.N+p.N]
			for k := 0; k < p.K; k++ {
				brow := b[bo+k*p.N : bo+k*p.N+p.N]
				var acc float32
				for j, dv := range drow {
					acc = acc + float32(float32(dv)*float32(brow[j]))
				}
				da[ao+i*p.K+k] = F32(float32(da[ao+i*p.K+k]) + acc)
			}
		}
		for k := 0; k < p.K; k++ {
			for j := 0; j < p.N; j++ {
				var acc float32
				for i := 0; i < p.M; i++ {
					acc = acc + float32(float32(a[ao+i*p.K+k])*float32(d[co+i*p.N+j]))
				}
				db[bo+k*p.N+j] = F32(float32(db[bo+k*p.N+j]) + acc)
			}
		}
	}
}
