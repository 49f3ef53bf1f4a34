package fpbound

import "math"

// elementwiseCut is the sweep from every element of node j when j's
// local Jacobian to its one erroneous parent q has at most one non-zero
// entry per row and q's bounds are all finite (elementwise), for a node
// too large for the dense sweep (o² > maxDense): the dense sweep from j
// with target ≥ 1 would charge j's local error through the identity
// adjoint and stop at q at once (cutLevel: one entry per row, q's level
// at most the target), settling element a against Σ_i mag(J[a,i])·F_{q,i};
// this computes the same bound row by row, without the o × n_q adjoint
// matrix (doc.go, "Cuts": |Σ_p J[a,p]·P[p,i]| = |J[a,p*]|·|P[p*,i]| for
// the one p* of row a, so the cut loses nothing). It is charged o units
// (one row each) within the budget, besides the Jacobians; it returns
// false (and spends only the Jacobians) where it does not apply.
func (r *foRun[F]) elementwiseCut(j int) (bool, error) {
	g, nd := r.g, &r.nodes[j]
	if noElementwiseCut || r.spent+int64(len(nd.box)) > r.budget {
		return false, nil
	}
	q, ok := r.elementwise(j)
	if !ok {
		return false, nil
	}
	js, reason, err := r.jacobians(j)
	if reason != "" || err != nil {
		return false, err
	}
	o := len(nd.box)
	fq := r.nodes[q].fo
	bound, ss, resid := make([]float64, o), make([]float64, o), make([]float64, o)
	for a := 0; a < o; a++ {
		if nd.local != nil {
			e := nd.local[a]
			bound[a], ss[a] = e, e*e // the identity adjoint: exact
			if e != 0 {
				ss[a] = mulUp(e, e)
			}
		}
	}
	for t, p := range g.Nodes[j].Parents {
		if p != q || js[t].zero {
			continue
		}
		J := &js[t]
		n := len(fq)
		for a := 0; a < o; a++ {
			lo, hi, step := a*n, (a+1)*n, 1
			if J.diag {
				lo, hi = a, a+1
			}
			acc := 0.0
			for i := lo; i < hi; i += step {
				m := math.Abs(J.p.C[i])
				if J.p.R != nil {
					m = addUp(m, J.p.R[i])
				}
				if m == 0 {
					continue
				}
				col := i - a*n
				if J.diag {
					col = a
				}
				acc = mulAddUp(acc, m, fq[col])
			}
			resid[a] = addUp(resid[a], acc)
		}
	}
	for a := range bound {
		bound[a] = addUp(bound[a], resid[a])
	}
	r.spent += int64(o)
	r.record(j, bound, ss, resid, "")
	r.finish(j, 1, r.nodes[q].lvl)
	return true, nil
}

// noElementwiseCut (tests only) turns elementwiseCut off: such a node
// then gets the interval sweep, or the fallback, as before unet36.
var noElementwiseCut bool
