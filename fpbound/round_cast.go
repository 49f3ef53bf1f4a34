package fpbound

import (
	"math"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Casts (the registry's round_f16, round_bf16, round_f32: ONNX Cast to a
// narrower float format T). The exact value of the node is y = R(x),
// R = round_T, the nearest value of T to the exact x, ties to even; the
// runtime computes R(x̂) of the value x̂ it holds, IEEE 754's conversion,
// correctly rounded: the cast adds no rounding of its own to the model
// (M2: the node's formula is the one operation R, and the conversion
// performs it exactly). Write u_T = 2^-p_T, η_T = 2^(emin_T − p_T) (half
// the least subnormal of T) and Ω_T for T's overflow threshold.
//
// Lemma. For every real t with |t| < Ω_T, |R(t) − t| ≤ max(u_T·|t|, η_T):
// in T's normal range R(t) is within half an ulp of t and ulp(t)/2 ≤
// 2^-p_T·|t|; below 2^emin_T, within half the subnormal spacing,
// 2^(emin_T − p_T). (This is the standard model of the format, fl(t) =
// t(1+δ) + η, |δ| ≤ u_T, |η| ≤ η_T, δ·η = 0.)
//
// Theorem (the case Cast of doc.go's proof). Let the operand be closed,
// (X, E): x ∈ X and every modelled x̂ satisfies |x̂ − x| ≤ E, so x̂ ∈ H =
// [X.Lo − E, X.Hi + E]. Then R(x) ∈ R(X) := [R(X.Lo), R(X.Hi)] (R is
// monotone non-decreasing), and, unless H reaches Ω_T in magnitude (then
// some x̂ may convert to ±∞: no bound, +∞), every R(x̂) is finite and
//
//	|R(x̂) − R(x)| ≤ E′ = min(E + u_T·(mag X + mag H) + 2η_T,
//	                         max(R(H.Hi) − R(X.Lo), R(X.Hi) − R(H.Lo))),
//
// and E′ = 0 when E = 0 (then x̂ = x, so R(x̂) = R(x) exactly).
// Proof. The first term: |R(x̂) − R(x)| ≤ |R(x̂) − x̂| + |x̂ − x| + |x − R(x)|
// and the lemma at x̂ and at x (|x̂| ≤ mag H, |x| ≤ mag X). The second:
// R(x̂) ∈ R(H) and R(x) ∈ R(X), both intervals by monotonicity, and the
// distance of two points of two intervals is at most the larger of the two
// end-to-end differences. ∎ Ties, overflow and subnormals are inside the
// lemma: R is discontinuous at each midpoint of adjacent values of T, so
// an x̂ and an x on either side of one convert one ulp of T apart however
// close they are — the u_T·|·| and η_T terms charge that jump, which is why
// the bound is not E alone; at x̂ near Ω_T the overflow test refuses, and
// below 2^emin_T the lemma's absolute η_T takes over from the relative
// term. The float64 arithmetic on bounds rounds upward (round.go); every
// R of a float64 is a float64 exactly (spec.FloatFormat.RoundFloat64).
//
// Formats. The other cases of the proof assume that every closed value is
// a value of the evaluation's format F (a sum in F's subnormal range is
// exact; a product by ±2^k is exact unless subnormal). R(x̂) is a value of
// F when T's values are values of F (binary16 and bfloat16 in binary32 and
// binary64, binary32 in binary64), and when F's values are values of T (a
// binary16 value converted to binary32 is itself). binary16 and bfloat16
// nest neither way (binary16 has 3 more significand bits, bfloat16 a wider
// range): a round_bf16 in a binary16 evaluation, or round_f16 in a
// bfloat16 one, gets no bound (+∞).
//
// Theorem (classic, final form). E′ is 0 when R(H) is one point (R is
// constant on H, which holds x and every x̂), else max(E, min(lip, hull))
// with lip and hull the two terms above. Proof: the first case is the
// monotonicity argument; in the second, E′ ≥ min(lip, hull), which bounds
// |R(x̂) − R(x)| by the proof above. The max with E costs at most the gap
// between hull and E (under one ulp of T at mag H) and is what the
// first-order bound's boxes need: an evaluation of the first-order proof
// in which the cast is the identity plus δ(x) (below) holds x̃ + δ(x) at
// the node for an operand value x̃ with |x̃ − x| ≤ E, which is within
// |x̃ − x| ≤ E ≤ E′ of the exact R(x) = x + δ(x).
//
// Casts in the first-order bound (cast37).
//
// Semantics. The exact reference keeps the rounding: the exact value of
// the node is R(x), as ONNX's Cast defines it (the value after a Cast to
// FLOAT is a binary32 value) and as irsem's exact evaluation, compare's
// Exact enclosure and every verdict read it. A verdict "r lies within F
// of the exact value" is therefore a claim about ONNX's graph, casts
// included. The cast is not replaced by the identity in the reference —
// that would be a different function, whose exact value differs from
// ONNX's by the cast's own rounding, and a runtime that computes the
// graph exactly as ONNX says would be charged that difference.
//
// Model. As above: the runtime computes R(x̂) of the value x̂ it holds,
// exactly (IEEE 754's conversion, M2). u_T, η_T as above; δ(t) := R(t) − t,
// so |δ(t)| ≤ max(u_T|t|, η_T) ≤ u_T|t| + η_T for |t| < Ω_T (the lemma).
//
// Theorem (cast as identity plus a fixed offset). Let node c be a cast
// R of its one parent q, elementwise, x_i the exact value of element i of
// q. In the first-order proof (doc.go, "First-order bound") the exact
// function of element i of c may be taken to be
//
//	f_c,i(v) = v + δ(x_i)     (an affine function of v: derivative 1),
//
// with the local error e_c,i = v̂_c,i − f_c,i(v̂_q,i) bounded by
//
//	ē_c,i = E_i + 2·(u_T·m_i + η_T),
//
// where B_i is q's box, E_i = 0 and H_i = B_i when q is not fused into c,
// else (E_i, H_i) are the closed bound and hull of q's pending sum on its
// terms' boxes; m_i = max(mag H_i, mag B_i); provided R(H_i) and R(B_i)
// do not reach Ω_T. Where R(B_i) is one point, f_c,i = R (constant on the
// box, derivative 0, ē_c,i as the Err algebra gives it) as before. The
// node's box (b) for element i is B_i ± (ē_c,i + u_T·m_i + η_T).
//
// Proof. The telescoping of the first-order proof needs, of each node's
// f_j, only (1) that the exact evaluation, every f_j at the exact
// values, gives the exact values: f_c,i(x_i) = x_i + δ(x_i) = R(x_i) ✓;
// (2) that v̂_j = f_j(v̂ of the parents) + e_j with |e_j| ≤ ē_j, the
// definition of e_c,i and the bound: v̂_c,i = R(ŝ) where ŝ = v̂_q,i (not
// fused) or ŝ = fl(s), the runtime's sum of the virtual exact sum s =
// v̂_q,i (fused, |ŝ − s| ≤ E_i, |ŝ| ≤ mag H_i); e_c,i = R(ŝ) − v̂_q,i −
// δ(x_i) = δ(ŝ) + (ŝ − v̂_q,i) − δ(x_i), and |δ(ŝ)| ≤ u_T·mag H_i + η_T,
// |δ(x_i)| ≤ u_T·mag B_i + η_T (x_i ∈ B_i: the exact evaluation is one
// the boxes hold); (3) that each Φ_k is Lipschitz on the boxes with the
// sweep's adjoints enclosing its Clarke gradients: f_c,i is affine with
// Jacobian 1, which the sweep uses (nodeVJP, castVJP), and composes with
// the others by the chain rule; where f_c,i = R on a box with one-point
// image, R is constant there (Jacobian 0, as before); (4) that the boxes
// hold node c's value in every partial evaluation T_k and on every
// segment: those values are v + δ(x_i) + t·e_c,i with v in B_i (q's
// values), t ∈ [0, 1], hence in B_i ± (u_T·m_i + η_T + ē_c,i), box (b);
// box (a), X_c ± E′_c, holds them by the classic theorem's final form
// (a partial value is within E of x at q, hence within E ≤ E′ of R(x)
// at c, and the computed one within E′ by the classic theorem; a segment
// point is a convex combination of the two); box (c) by the theorem
// itself, which bounds every partial evaluation. Nothing in the argument
// crosses a discontinuity: R is never differentiated, only δ(ŝ) and
// δ(x_i) are bounded, each at one point. So the Theorem of "First-order
// bound" holds with the cast treated this way. ∎
//
// The charge is twice a rounding's (the hint of issue 22's cast37 brief:
// |δ(x̂) − δ(x)| ≤ u_T(|x| + |x̂|) + 2η_T), not one: the exact reference
// rounds too, and δ(x) and δ(x̂) may have opposite signs (x and x̂ on
// either side of a midpoint). Where no error reaches q (v̂_q = x exactly,
// not fused), e_c,i = δ(x_i) − δ(x_i) = 0 and ē_c,i = 0. A cast into a
// format that does not nest with the evaluation's (see "Formats") keeps
// the old treatment (a straddling box voids the bound). A cast that is
// one step of a larger application (not a node of its own) keeps it too.
// TestCastIdentityFirstOrder checks the theorem on graphs whose cast
// input straddles a binary32 midpoint: finite bounds (void before), every
// float32/float64 evaluation order within them, one ulp past them caught.

// castConsts are T's u_T, η_T, least subnormal and Ω_T, as float64 values
// (each exact for the formats of spec: p ≤ 24, emin ≥ −126, emax ≤ 127).
type castConsts struct{ u, eta, sub, omega float64 }

func castConstsOf(f spec.FloatFormat) castConsts {
	return castConsts{
		u:     math.Ldexp(1, -f.P),
		eta:   math.Ldexp(1, f.Emin-f.P),
		sub:   math.Ldexp(1, f.Emin-f.P+1),
		omega: math.Ldexp(2-math.Ldexp(1, -f.P), f.Emax),
	}
}

// nests reports that the values of T are values of F or those of F are
// values of T (see "Formats" above): precision, least subnormal and
// overflow threshold all ordered the same way.
func (t castConsts) nests(c *consts) bool {
	tInF := t.u >= c.u && t.sub >= c.sub && t.omega <= c.omega
	fInT := c.u >= t.u && c.sub >= t.sub && c.omega <= t.omega
	return tInF || fInT
}

// RoundTo bounds the cast R = round_T of v (see the theorem above).
func (v ErrOf[F]) RoundTo(f spec.FloatFormat) (ErrOf[F], error) {
	a := v.close()
	x, err := a.x.RoundTo(f)
	if err != nil {
		// The exact enclosure reaches Ω_T: no claim on the value (an exact
		// value that overflows has no real semantics, and the exact
		// evaluation refuses it).
		return unbounded[F](spec.Interval{Lo: math.Inf(-1), Hi: inf}), nil
	}
	if f.Quant != nil {
		return quantBound(a, x, f), nil // quant.go
	}
	if f.IsInt() {
		return truncBound(a, x, f), nil
	}
	t := castConstsOf(f)
	switch {
	case !t.nests(constsOf[F]()), math.IsInf(a.e, 1):
		return unbounded[F](x), nil
	case a.e == 0:
		return ErrOf[F]{x: x}, nil
	}
	h := a.hull()
	rh, err := h.RoundTo(f)
	if err != nil {
		return unbounded[F](x), nil // a computed value may convert to ±∞
	}
	if rh.Lo == rh.Hi {
		return ErrOf[F]{x: x}, nil // R is constant on H ⊇ X: R(x̂) = R(x)
	}
	lip := addUp(a.e, addUp(mulUp(t.u, addUp(mag(a.x), mag(h))), 2*t.eta))
	hull := max(0, up(rh.Hi-x.Lo), up(x.Hi-rh.Lo))
	// At least E: the first-order bound's boxes read this bound for the
	// evaluations in which the cast is the identity plus δ(x) (see
	// "Casts in the first-order bound" above).
	return ErrOf[F]{x: x, e: max(a.e, min(lip, hull))}, nil
}

// Casts to an integer type (the registry's trunc_int: ONNX Cast from a
// float type to INT8 … UINT64). The exact value is y = trunc(x), truncation
// toward zero, defined when it lies in the type's range [lo, hi]; the
// runtime computes trunc(x̂) of the value x̂ it holds (an exact operation:
// the truncation of a value of F is a value of F and of the integer type
// whenever it is in range). trunc is discontinuous at every non-zero
// integer, so no error bound of the form E + c holds across one: x̂ and x
// on either side of an integer convert one apart however close they are.
//
// Theorem (the integer cast). Let the operand be closed, (X, E), and H =
// [X.Lo − E, X.Hi + E] ⊇ X. If trunc(H.Lo) = trunc(H.Hi) = k and lo ≤ k ≤
// hi, then trunc(x̂) = trunc(x) = k for every modelled x̂, and E′ = 0.
// Proof: trunc is monotone non-decreasing, so it maps H, which holds x and
// every x̂, onto the one point k. ∎ Otherwise — H straddles an integer
// (trunc jumps inside it), or reaches past [lo, hi] where ONNX leaves the
// conversion undefined — there is no claim: E′ = +∞, and compare's verdict
// on the element is inconclusive, never holds within a bound that a jump
// would make meaningless. When E = 0, x̂ = x and E′ = 0 (the exact
// evaluation refuses a value outside [lo, hi] itself). In the first-order
// bound the Jacobian is 0 on a box whose image is one point (R constant
// there), and a box that straddles a jump voids it, as for the float
// casts (adj.RoundTo below serves both).

// truncBound is the integer cast's bound (see above), for a closed operand a
// whose exact enclosure's truncation x is already computed.
func truncBound[F format](a ErrOf[F], x spec.Interval, f spec.FloatFormat) ErrOf[F] {
	if a.e == 0 {
		return ErrOf[F]{x: x}
	}
	if math.IsInf(a.e, 1) {
		return unbounded[F](x)
	}
	rh, err := a.hull().RoundTo(f)
	if err != nil || rh.Lo != rh.Hi {
		return unbounded[F](x)
	}
	return ErrOf[F]{x: x}
}

// RoundTo is spec.Interval's enclosure [R(lo), R(hi)]; a box whose image
// is not one point straddles a jump of R, which voids the mean value
// argument (see "First-order bound" above) unless the node is a cast
// under the identity treatment (castAccounted clears it there).
func (a adj) RoundTo(f spec.FloatFormat) (adj, error) {
	r, err := a.iv.RoundTo(f)
	if err != nil {
		return adj{iv: r}, err
	}
	if r.Lo != r.Hi {
		jump()
	}
	return adj{iv: r}, nil
}

// castNodeFormat reports that node j of g is a cast into a binary float
// format T of its one parent, element by element (its application is the
// one step round_T reading parent 0 in the node's own shape), and T.
func castNodeFormat(g *irsem.Graph, a *irsem.Application, j int) (spec.FloatFormat, bool) {
	nd := &g.Nodes[j]
	if a == nil || a.Source || len(a.Steps) != 1 || len(nd.Parents) != 1 {
		return spec.FloatFormat{}, false
	}
	s := &a.Steps[0]
	f, ok := spec.FloatCastFormat(s.Prim)
	if !ok || len(s.Args) != 1 || s.Args[0].Source != irsem.ArgParent || s.Args[0].Index != 0 {
		return spec.FloatFormat{}, false
	}
	q := &g.Nodes[nd.Parents[0]]
	if !s.Shape.Equal(nd.Shape) || !s.Args[0].Shape.Equal(nd.Shape) || q.Shape.Size() != nd.Shape.Size() {
		return spec.FloatFormat{}, false
	}
	return f, true
}

// castLocals applies the identity treatment ("Casts in the first-order
// bound" above) to node j when it is a cast (castNodeFormat) into a
// format that nests with the evaluation's: every element whose parent
// box has an image under R of more than one point gets f_c,i(v) = v +
// δ(x_i), the local error bound ē_c,i and the box widening of the
// theorem (nd.pass, nd.local, nd.passW); every other element keeps the
// Err algebra's local error and the registry's Jacobian 0. The caller
// holds evalMu inside node j's format (enterNode).
func (r *foRun[F]) castLocals(j int) {
	g, nd := r.g, &r.nodes[j]
	f, ok := castNodeFormat(g, nd.app, j)
	if !ok || !castIdentity {
		return
	}
	t := castConstsOf(f)
	if !t.nests(constsOf[F]()) {
		return
	}
	q := g.Nodes[j].Parents[0]
	pq := &r.nodes[q]
	fused := r.fusedVals[q].Data
	for i, b := range pq.box {
		rb, err := b.RoundTo(f)
		if err != nil || rb.Lo == rb.Hi {
			continue // the old treatment: constant on the box, or no bound
		}
		m, e := mag(b), 0.0
		if fused != nil {
			a := fused[i].close()
			h := a.hull()
			if _, err := h.RoundTo(f); err != nil || math.IsInf(a.e, 1) {
				continue // a computed value may convert to ±∞: no bound
			}
			m, e = max(m, mag(h)), a.e
		}
		c := addUp(mulUp(t.u, m), t.eta)
		loc := 0.0
		if fused != nil || pq.err {
			loc = addUp(e, addUp(c, c))
		}
		if nd.pass == nil {
			nd.pass = make([]bool, len(pq.box))
			nd.passW = make([]float64, len(pq.box))
		}
		if nd.local == nil && loc != 0 {
			nd.local = make([]float64, len(pq.box))
		}
		nd.pass[i] = true
		if nd.local != nil {
			nd.local[i] = loc
		}
		nd.passW[i] = addUp(loc, c)
	}
}

// castIdentity turns on "Casts in the first-order bound" (above); tests
// turn it off to show the bound it makes finite was void without it.
var castIdentity = true

// castBox is box (b) of element i of a cast node under the identity
// treatment: the parent's box widened by ē_c,i + u_T·m_i + η_T (passW).
func (r *foRun[F]) castBox(j, i int) spec.Interval {
	q := r.g.Nodes[j].Parents[0]
	return widen(r.nodes[q].box[i], r.nodes[j].passW[i])
}

// castAccounted reports that every element of cast node j whose forward
// value y (the rounded parent box) is not one point — every jump
// adj.RoundTo recorded — is under the identity treatment, so the jumps
// void nothing.
func (r *foRun[F]) castAccounted(j int, y spec.Tensor[adj]) bool {
	nd := &r.nodes[j]
	if nd.pass == nil || len(y.Data) != len(nd.pass) {
		return false
	}
	for i, v := range y.Data {
		if v.iv.Lo != v.iv.Hi && !nd.pass[i] {
			return false
		}
	}
	return true
}

// castVJP is the contribution of cast node k to its parent for the
// cotangent dy: dy_i where element i is under the identity treatment
// (Jacobian 1), else 0 (the registry's rule, R constant on the box).
func castVJP(g *irsem.Graph, nd *foNode, k int, dy spec.Tensor[adj]) []spec.Tensor[adj] {
	q := g.Nodes[k].Parents[0]
	d := make([]adj, len(nd.pass))
	for i, p := range nd.pass {
		if p {
			d[i] = adj{iv: dy.Data[i].iv}
		}
	}
	return []spec.Tensor[adj]{{Shape: g.Nodes[q].Shape, Data: d}}
}
