package spec

// Devirtualised kernels for the hardware float scalars. They perform
// exactly the operations of the generic rules in exactly the same order —
// a left fold from +0 with one rounding per multiply and per add (the
// explicit conversions forbid fused multiply-add) — so results are
// bit-identical; they only avoid a method call per element.

// matmulFwdF32 is matmulFwd for F32.
func matmulFwdF32(p *mmPlan, a, b, out []F32) {
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	for bt := range p.aIdx {
		ao, bo, co := p.aIdx[bt]*mk, p.bIdx[bt]*kn, bt*mn
		for i := 0; i < p.m; i++ {
			arow := a[ao+i*p.k : ao+i*p.k+p.k]
			crow := out[co+i*p.n : co+i*p.n+p.n]
			for j := range crow {
				var acc float32
				for k, av := range arow {
					acc = acc + float32(float32(av)*float32(b[bo+k*p.n+j]))
				}
				crow[j] = F32(acc)
			}
		}
	}
}

// matmulFwdF64 is matmulFwd for F64.
func matmulFwdF64(p *mmPlan, a, b, out []F64) {
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	for bt := range p.aIdx {
		ao, bo, co := p.aIdx[bt]*mk, p.bIdx[bt]*kn, bt*mn
		for i := 0; i < p.m; i++ {
			arow := a[ao+i*p.k : ao+i*p.k+p.k]
			crow := out[co+i*p.n : co+i*p.n+p.n]
			for j := range crow {
				var acc float64
				for k, av := range arow {
					acc = acc + float64(float64(av)*float64(b[bo+k*p.n+j]))
				}
				crow[j] = F64(acc)
			}
		}
	}
}

// matmulVJPF32 is matmulVJP for F32.
func matmulVJPF32(p *mmPlan, a, b, d, da, db []F32) {
	mk, kn, mn := p.m*p.k, p.k*p.n, p.m*p.n
	for bt := range p.aIdx {
		ao, bo, co := p.aIdx[bt]*mk, p.bIdx[bt]*kn, bt*mn
		for i := 0; i < p.m; i++ {
			drow := d[co+i*p.n : co+i*p.n+p.n]
			for k := 0; k < p.k; k++ {
				brow := b[bo+k*p.n : bo+k*p.n+p.n]
				var acc float32
				for j, dv := range drow {
					acc = acc + float32(float32(dv)*float32(brow[j]))
				}
				da[ao+i*p.k+k] = F32(float32(da[ao+i*p.k+k]) + acc)
			}
		}
		for k := 0; k < p.k; k++ {
			for j := 0; j < p.n; j++ {
				var acc float32
				for i := 0; i < p.m; i++ {
					acc = acc + float32(float32(a[ao+i*p.k+k])*float32(d[co+i*p.n+j]))
				}
				db[bo+k*p.n+j] = F32(float32(db[bo+k*p.n+j]) + acc)
			}
		}
	}
}
