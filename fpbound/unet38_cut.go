package fpbound

import "math"

// parentsCut is the sweep from every element of node j when j is too
// large for the dense sweep (o² > maxDense), every local Jacobian of j to
// a parent an error reaches is diagonal (or zero), and every such
// parent's bounds are all finite: the cut at all of j's erroneous parents
// at once, row by row (doc.go, "Cuts": the stop set {erroneous parents},
// W_j = I, W_q = J_{j,q}),
//
//	F_j[a] = ē_{j,a} + Σ_t (|Ĉ_t[a]| + R_t[a])·F_{p_t}[a],
//
// one term per parent slot t (a parent read in two slots is charged
// twice: Σ_t |J_t| ≥ |Σ_t J_t|), rounded up. It is the fallback sweep's
// bound for such a node (its stops are j's parents) without the o × n_q
// adjoint matrices the dense sweep would hold, and elementwiseCut's with
// more than one erroneous parent (SiLU's x·σ(x) reads x twice through
// two paths; its interval sweep through every node above, which keeps the
// two paths' cancellation, spent half the default budget on the zoo UNet:
// docs/bounds.md, unet38). The loss against that interval sweep is
// |Σ_t J_t·P_t| ≤ Σ_t |J_t|·|P_t| across the slots. It is charged o
// units per erroneous slot, besides the Jacobians; it returns false (and
// spends only the Jacobians) where it does not apply.
func (r *foRun[F]) parentsCut(j int) (bool, error) {
	g, nd := r.g, &r.nodes[j]
	o := len(nd.box)
	if noParentsCut || int64(o)*int64(o) <= maxDense {
		return false, nil
	}
	ps := g.Nodes[j].Parents
	slots := 0
	for _, p := range ps {
		if r.nodes[p].err {
			if !r.nodes[p].foOK || len(r.nodes[p].fo) != o {
				return false, nil
			}
			slots++
		}
	}
	if slots == 0 || r.spent+int64(slots*o) > r.budget {
		return false, nil
	}
	js, reason, err := r.jacobians(j)
	if reason != "" || err != nil {
		if _, na := err.(errDense); na {
			err = nil
		}
		return false, err
	}
	for t, p := range ps {
		if r.nodes[p].err && !js[t].zero && !js[t].diag {
			return false, nil
		}
	}
	bound, ss, resid := make([]float64, o), make([]float64, o), make([]float64, o)
	if nd.local != nil {
		for a, e := range nd.local {
			bound[a], ss[a] = e, e*e // the identity adjoint: exact
			if e != 0 {
				ss[a] = mulUp(e, e)
			}
		}
	}
	lvl, fb := 0, false
	for t, p := range ps {
		if !r.nodes[p].err || js[t].zero {
			continue
		}
		lvl, fb = max(lvl, r.nodes[p].lvl), fb || r.nodes[p].fallback
		J, fq := &js[t], r.nodes[p].fo
		for a := 0; a < o; a++ {
			m := math.Abs(J.p.C[a])
			if J.p.R != nil {
				m = addUp(m, J.p.R[a])
			}
			if m != 0 {
				resid[a] = mulAddUp(resid[a], m, fq[a])
			}
		}
	}
	for a := range bound {
		bound[a] = addUp(bound[a], resid[a])
	}
	r.spent += int64(slots * o)
	r.record(j, bound, ss, resid, "")
	r.finish(j, 1, lvl) // every stop's W is diagonal: no level added
	nd.fallback = fb
	if parentsCutSeen != nil {
		parentsCutSeen(j)
	}
	return true, nil
}

// noParentsCut (tests only) turns parentsCut off: such a node then gets
// the interval sweep, or the fallback, as before unet38.
var noParentsCut bool

// parentsCutSeen (tests only) is called with every node parentsCut bounds.
var parentsCutSeen func(j int)
