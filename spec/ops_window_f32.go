package spec

// convFwdF32 is convFwd's element fold for F32, the binary32 evaluation
// (compare's own float32 run, whose distance it reports as "ours"): the
// same sums in the same order, without the generic gather.
//
// convFwd's fold computes, for each output element (l, co, o),
//
//	acc₀ = +0, acc_{k+1} = fl32(acc_k + fl32(x_{i_k} · w_{j_k})), then
//	y = fl32(acc_m + b_co) when there is a bias,
//
// where (i_k, j_k) enumerates ci = 0…cg−1 and, inside it, the window
// positions p = idx.start[o] … idx.start[o+1]−1 of the relation index in
// that order (padded positions are absent, not zero terms). This kernel
// evaluates exactly that recurrence for each element: every product and
// every sum is an explicit float32 conversion (Go's spec: an explicit
// conversion rounds to the target precision, so no product is fused into
// the following add), and the order of the terms of each element is the
// one above. It only interleaves the recurrences of four output channels
// of one group (independent accumulators, each with its own terms in its
// own order), which changes no rounding. So the result equals the generic
// fold bit for bit, NaN payloads aside (TestConvFwdF32MatchesFold).
func convFwdF32(g *winGeom, x, w, b, y []F32) {
	idx := g.index(keySmall)
	cg, cog := g.cin/g.groups, g.cout/g.groups
	S, B, K := g.smallSize(), g.bigSize(), g.kSize()
	ia, ib := idx.a, idx.b
	bias := func(acc float32, co int) float32 {
		if b != nil {
			acc = acc + float32(b[co])
		}
		return acc
	}
	for l := 0; l < g.lead; l++ {
		for q := 0; q < g.groups; q++ {
			xq := x[(l*g.cin+q*cg)*B:]
			for o := 0; o < S; o++ {
				lo, hi := idx.start[o], idx.start[o+1]
				co, end := q*cog, (q+1)*cog
				for ; co+4 <= end; co += 4 {
					var a0, a1, a2, a3 float32
					for ci := 0; ci < cg; ci++ {
						xc := xq[ci*B : (ci+1)*B]
						w0 := w[(co*cg+ci)*K : (co*cg+ci+1)*K]
						w1 := w[((co+1)*cg+ci)*K : ((co+1)*cg+ci+1)*K]
						w2 := w[((co+2)*cg+ci)*K : ((co+2)*cg+ci+1)*K]
						w3 := w[((co+3)*cg+ci)*K : ((co+3)*cg+ci+1)*K]
						for p := lo; p < hi; p++ {
							xv, k := float32(xc[ib[p]]), ia[p]
							a0 = a0 + float32(xv*float32(w0[k]))
							a1 = a1 + float32(xv*float32(w1[k]))
							a2 = a2 + float32(xv*float32(w2[k]))
							a3 = a3 + float32(xv*float32(w3[k]))
						}
					}
					base := (l*g.cout+co)*S + o
					y[base] = F32(bias(a0, co))
					y[base+S] = F32(bias(a1, co+1))
					y[base+2*S] = F32(bias(a2, co+2))
					y[base+3*S] = F32(bias(a3, co+3))
				}
				for ; co < end; co++ {
					var a0 float32
					for ci := 0; ci < cg; ci++ {
						xc := xq[ci*B : (ci+1)*B]
						w0 := w[(co*cg+ci)*K : (co*cg+ci+1)*K]
						for p := lo; p < hi; p++ {
							a0 = a0 + float32(float32(xc[ib[p]])*float32(w0[ia[p]]))
						}
					}
					y[(l*g.cout+co)*S+o] = F32(bias(a0, co))
				}
			}
		}
	}
}
