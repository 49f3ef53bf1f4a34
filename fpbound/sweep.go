package fpbound

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The dense sweep (doc.go, "Dense sweep"): every element of a node swept
// at once, the adjoints a matrix (elements × node width) on float64
// planes, one enclose product per local Jacobian, the rounding of the
// centres charged against the first-order bounds of the nodes already
// swept.

// maxDense caps the elements of one dense plane (a local Jacobian n_k×n_q
// or an adjoint matrix), and maxDenseTotal those of all the Jacobians kept
// for one evaluation; past them the interval sweep runs instead.
const (
	maxDense      = 1 << 20
	maxDenseTotal = 1 << 24
)

// denseDiscount converts a dense sweep's multiply-adds into the interval
// operations Options.SweepWork counts: a float64 multiply-add on planes
// costs about a sixteenth of an interval operation of the sweep scalar.
const denseDiscount = 16

// sweepFault plants a fault in the dense sweep, for the tests that must
// catch it (0 in every other use): 1 transposes every square dense
// Jacobian, 2 replaces every diagonal Jacobian by the identity (as if
// every elementwise node were the identity), 3 makes linearIn read a
// square M transposed.
var sweepFault int

// sweepStride, when not 0 (tests only), replaces the stride of the
// level-0 sweeps (target); 1 sweeps every node at level 0.
var sweepStride int

// sweepSeen, when set (tests only), receives every dense sweep's bounds
// (nodes[j].lvl is its cut level).
var sweepSeen func(j int, nodes []foNode, bound []float64)

// tiny is the smallest tame magnitude of package enclose (2⁻³⁰⁰).
const tiny = 0x1p-300

// jac is one local Jacobian J_{k,t} = ∂(node k)/∂(parent t) over the
// boxes, rows × cols, in midpoint–radius form: every Clarke Jacobian of
// f_k at a point of the parents' boxes lies in ⟨P.C, P.R⟩ elementwise.
// diag: the Jacobian is diagonal and P holds its diagonal; zero: J = 0;
// sel: every row has at most one entry that is not the point 0 (a node
// that only moves, selects or copies values: reshape, permute, slice,
// broadcast, concat, gather; doc.go, "Cuts").
type jac struct {
	rows, cols      int
	p               enclose.Planes
	diag, zero, sel bool
}

// errDense is the reason the dense sweep does not apply (too large, or
// not tame): the interval sweep then runs.
type errDense string

func (e errDense) Error() string { return string(e) }

// jacobians returns node k's local Jacobians, one per parent position,
// computed once from the registry's VJP rules over adj on the boxes, one
// one-hot cotangent per element of the node (row m of J_{k,t} is the
// contribution to parent t of the cotangent e_m). A reason means no
// first-order bound (a derivative rule void on the boxes); errDense means
// the dense sweep does not apply.
func (r *foRun[F]) jacobians(k int) ([]jac, string, error) {
	if r.jac[k] != nil {
		return r.jac[k], "", nil
	}
	if js, reason, ok, err := r.diagonalJac(k); ok || reason != "" || err != nil {
		return js, reason, err
	}
	g, nodes := r.g, r.nodes
	nk := len(nodes[k].box)
	ps := g.Nodes[k].Parents
	pairs := make([][]float64, len(ps))
	size := 0
	for t, q := range ps {
		if !nodes[q].err {
			// No error reaches parent q: the sweep never reads J_{k,q}
			// (denseSweep skips q, elementwise asks only about erroneous
			// parents), so it is neither computed nor stored (pairs[t]
			// nil; finishJac records it as zero). A matmul by a constant
			// would otherwise hold its rows × weights Jacobian for nothing.
			continue
		}
		nq := len(nodes[q].box)
		if nk > maxDense/max(nq, 1) || r.denseKept+size+nk*nq > maxDenseTotal {
			return nil, "", errDense(fmt.Sprintf("node %d: a %d×%d Jacobian", k, nk, nq))
		}
		size += nk * nq
		pairs[t] = make([]float64, 2*nk*nq)
	}
	// The work counted against the sweep budget is the work done: read
	// off the weights (linearIn), one copy per Jacobian entry kept (size);
	// else nk VJP runs over intervals, each the node's declared work.
	if r.linearIn(k, pairs) {
		r.spent += int64(max(size, 1))
		if jacCompare != nil {
			ref := make([][]float64, len(pairs))
			for t := range pairs {
				ref[t] = make([]float64, len(pairs[t]))
			}
			if reason := r.vjpRows(k, ref); reason == "" {
				jacCompare(k, pairs, ref)
			}
		}
		return r.finishJac(k, pairs)
	}
	work := int64(nk) * r.nodeWork(k)
	if r.spent+work > 2*r.budget {
		return nil, "", errDense("the local Jacobians would spend the sweep budget")
	}
	r.spent += work
	if reason := r.vjpRows(k, pairs); reason != "" {
		return nil, reason, nil
	}
	return r.finishJac(k, pairs)
}

// diagonalNode reports whether every local Jacobian of node k is
// diagonal by the registry's facts: every step of its application is a
// primitive that states spec.OpInfo.Elementwise (output element i reads
// element i of each argument alone), and every step's value and every
// argument has node k's n_k elements (so no argument is broadcast and
// element i of a step reads element i of each parent). Through the
// steps, node element i is then a function of element i of each parent
// alone: ∂(node k)_i/∂(parent t)_m = 0 for m ≠ i.
func (r *foRun[F]) diagonalNode(k int) bool {
	nd := &r.nodes[k]
	nk := len(nd.box)
	if jacVJPOnly || nd.app == nil || len(nd.app.Steps) == 0 || len(nd.args) != len(nd.app.Steps) {
		return false
	}
	for s := range nd.app.Steps {
		st := &nd.app.Steps[s]
		pr, err := r.reg.Lookup(st.Prim)
		if err != nil || !pr.Elementwise || pr.NoGrad || len(nd.steps[s].Data) != nk {
			return false
		}
		for t, a := range st.Args {
			if t >= len(nd.args[s]) || len(nd.args[s][t].Data) != nk {
				return false
			}
			if a.Source == irsem.ArgParent && len(r.nodes[r.g.Nodes[k].Parents[a.Index]].box) != nk {
				return false
			}
		}
	}
	return len(nd.app.Steps[len(nd.app.Steps)-1].Shape) == len(r.g.Nodes[k].Shape)
}

// diagonalJac computes node k's local Jacobians when diagonalNode holds
// (ok false otherwise, and nothing is spent): one VJP run over adj on the
// boxes with the cotangent of ones gives, in the contribution to parent
// t, element i = Σ_m 1·∂y_m/∂x_{t,i} = ∂y_i/∂x_{t,i}, the diagonal, and
// it is the one-hot run's row i entry for entry: element i of every
// step's VJP reads element i of the cotangent alone, so the operations
// that give it are those of the run with the cotangent e_i, and adj's
// 0·v and 0 + v, which that run adds for the other elements, are exact
// (TestDiagonalJacobians compares the two). One VJP run, the node's
// declared work, is what the budget is charged, instead of n_k runs.
func (r *foRun[F]) diagonalJac(k int) ([]jac, string, bool, error) {
	if !r.diagonalNode(k) {
		return nil, "", false, nil
	}
	g, nodes := r.g, r.nodes
	nk := len(nodes[k].box)
	ps := g.Nodes[k].Parents
	kept := 0
	for _, q := range ps {
		if nodes[q].err {
			kept += nk
		}
	}
	if r.denseKept+kept > maxDenseTotal {
		return nil, "", true, errDense(fmt.Sprintf("node %d: %d diagonal entries", k, kept))
	}
	work := r.nodeWork(k) + int64(kept)
	if r.spent+work > 2*r.budget {
		return nil, "", true, errDense("the local Jacobians would spend the sweep budget")
	}
	r.spent += work
	seed := make([]adj, nk)
	for m := range seed {
		seed[m] = adj{iv: spec.Interval{Lo: 1, Hi: 1}}
	}
	pc, err := nodeVJP(g, nodes, k, spec.Tensor[adj]{Shape: g.Nodes[k].Shape, Data: seed}, r.reg)
	if err != nil {
		return nil, fmt.Sprintf("node %d (%s): %v", k, g.Nodes[k].Kind.Op, err), true, nil
	}
	if adjVoid.Load() != 0 {
		adjVoid.Store(0)
		return nil, fmt.Sprintf("node %d (%s): a derivative rule could not be decided on the boxes (a kink or tie inside them)", k, g.Nodes[k].Kind.Op), true, nil
	}
	js := make([]jac, len(ps))
	var ref [][]float64
	if jacCompare != nil {
		ref = make([][]float64, len(ps))
	}
	for t, q := range ps {
		js[t] = jac{rows: nk, cols: len(nodes[q].box), zero: true}
		if !nodes[q].err || t >= len(pc) || pc[t].Data == nil {
			continue
		}
		d := make([]float64, 2*nk)
		for i, v := range pc[t].Data {
			d[2*i], d[2*i+1] = v.iv.Lo, v.iv.Hi
			if sweepFault == 2 {
				d[2*i], d[2*i+1] = 1, 1 // planted: every elementwise node the identity
			}
		}
		if jacCompare != nil {
			ref[t] = make([]float64, 2*nk*nk)
			for i := 0; i < nk; i++ {
				ref[t][2*(i*nk+i)], ref[t][2*(i*nk+i)+1] = d[2*i], d[2*i+1]
			}
		}
		js[t] = diagJac(d, nk)
		if js[t].p.C == nil && !js[t].zero {
			return nil, "", true, errDense(fmt.Sprintf("node %d: a Jacobian entry is not tame", k))
		}
		r.denseKept += len(js[t].p.C)
	}
	if jacCompare != nil {
		vjp := make([][]float64, len(ps))
		for t := range ps {
			if ref[t] != nil {
				vjp[t] = make([]float64, len(ref[t]))
			}
		}
		if reason := r.vjpRows(k, vjp); reason == "" {
			jacCompare(k, ref, vjp)
		}
	}
	r.jac[k] = js
	return js, "", true, nil
}

// nodeWork is node k's own declared work (prefixWork's step at k), at
// least 1: the unit of the sweep budget for one run of k's rule.
func (r *foRun[F]) nodeWork(k int) int64 {
	prev := int64(0)
	if k > 0 {
		prev = r.prefix[k-1]
	}
	return max(r.prefix[k]-prev, 1)
}

// diagJac converts the interleaved pairs of an n × n diagonal Jacobian's
// diagonal to a jac (the zero Jacobian when every entry is the point 0;
// P.C nil when an entry is not tame).
func diagJac(d []float64, n int) jac {
	j := jac{rows: n, cols: n, zero: true, diag: true, sel: true}
	for _, v := range d {
		if v != 0 {
			j.zero = false
			break
		}
	}
	if j.zero {
		return j
	}
	p := enclose.Make(n)
	if !enclose.FromPairs(d, p) {
		return jac{rows: n, cols: n}
	}
	if p.Point() {
		p.R = nil
	}
	j.p = p
	return j
}

// jacCompare, when set (tests only), receives node k's Jacobian pairs
// read off by linearIn or diagonalJac (dense, n_k × n_q) beside the
// one-hot VJP runs' of the same node.
var jacCompare func(k int, linearIn, vjp [][]float64)

// vjpRows fills node k's Jacobian pairs (zeros on entry) by one VJP run
// over adj per element of the node, the one-hot cotangent e_m giving row
// m; a reason when a run fails or a derivative is undecided on the boxes.
func (r *foRun[F]) vjpRows(k int, pairs [][]float64) string {
	g, nodes := r.g, r.nodes
	nk := len(nodes[k].box)
	ps := g.Nodes[k].Parents
	seed := make([]adj, nk)
	for m := 0; m < nk; m++ {
		seed[m] = adj{iv: spec.Interval{Lo: 1, Hi: 1}}
		pc, err := nodeVJP(g, nodes, k, spec.Tensor[adj]{Shape: g.Nodes[k].Shape, Data: seed}, r.reg)
		if err != nil {
			return fmt.Sprintf("node %d (%s): %v", k, g.Nodes[k].Kind.Op, err)
		}
		if adjVoid.Load() != 0 {
			adjVoid.Store(0)
			return fmt.Sprintf("node %d (%s): a derivative rule could not be decided on the boxes (a kink or tie inside them)", k, g.Nodes[k].Kind.Op)
		}
		for t := range ps {
			if pc[t].Data == nil || len(pairs[t]) == 0 {
				continue
			}
			nq := len(nodes[ps[t]].box)
			row := pairs[t][2*m*nq : 2*(m+1)*nq]
			for i, v := range pc[t].Data {
				row[2*i], row[2*i+1] = v.iv.Lo, v.iv.Hi
			}
		}
		// After reading: a rule may return the cotangent's own storage.
		seed[m] = adj{}
	}
	return ""
}

// finishJac converts node k's Jacobian pairs (one per parent position) to
// planes and keeps them.
func (r *foRun[F]) finishJac(k int, pairs [][]float64) ([]jac, string, error) {
	g, nodes := r.g, r.nodes
	nk := len(nodes[k].box)
	ps := g.Nodes[k].Parents
	js := make([]jac, len(ps))
	for t, q := range ps {
		if pairs[t] == nil {
			js[t] = jac{rows: nk, cols: len(nodes[q].box), zero: true} // not read: q carries no error
			continue
		}
		plantSweep(pairs[t], nk, len(nodes[q].box))
		js[t] = toJac(pairs[t], nk, len(nodes[q].box))
		if js[t].p.C == nil && !js[t].zero {
			return nil, "", errDense(fmt.Sprintf("node %d: a Jacobian entry is not tame", k))
		}
		// What stays in memory: a diagonal keeps its rows alone.
		r.denseKept += len(js[t].p.C)
	}
	r.jac[k] = js
	return js, "", nil
}

// jacVJPOnly (tests only) turns linearIn off: every local Jacobian is
// then computed by the one-hot VJP runs.
var jacVJPOnly bool

// linearIn fills node k's Jacobian pairs (zeros on entry) from the
// weights where the registry states the node's one step linear in the
// parent an error reaches (spec.OpInfo.LinearIn): row (r, j) of the
// Jacobian with respect to that parent is M[j, ·] on block r, M the
// step's Matrix argument over the boxes (a payload's weights: points),
// each entry M's box with a −0 end made +0 — the one-hot VJP run's row
// entry for entry, since adj's 0·v and 0 + v are exact and m·[1, 1] is m
// (TestLinearInJacobians). Every Clarke Jacobian at a point of the boxes
// is then M at a point of its box, inside. The contributions to the other
// parents are the VJP runs' zeros: false (the VJP runs then) unless every
// other parent position is error-free.
func (r *foRun[F]) linearIn(k int, pairs [][]float64) bool {
	nd := &r.nodes[k]
	if jacVJPOnly || len(nd.app.Steps) != 1 || len(nd.args) != 1 {
		return false
	}
	st := &nd.app.Steps[0]
	pr, err := r.reg.Lookup(st.Prim)
	if err != nil || pr.LinearIn == nil || pr.NoGrad {
		return false
	}
	li := pr.LinearIn
	if li.X >= len(st.Args) || li.Matrix >= len(st.Args) || st.Args[li.X].Source != irsem.ArgParent {
		return false
	}
	ps := r.g.Nodes[k].Parents
	xt := st.Args[li.X].Index
	for t, a := range st.Args {
		if t != li.X && a.Source == irsem.ArgParent && r.nodes[ps[a.Index]].err {
			return false
		}
	}
	for t, q := range ps {
		if t != xt && r.nodes[q].err {
			return false
		}
	}
	if !r.nodes[ps[xt]].err {
		return false
	}
	xs, err := stepArgs(nd.app, 0, nd.args[0])
	if err != nil {
		return false
	}
	x, mt := xs[li.X], xs[li.Matrix]
	m := mt.Data
	if len(x.Shape) == 0 || (li.InnerOut && len(mt.Shape) > 2) {
		return false
	}
	inner := x.Shape[len(x.Shape)-1]
	nk, nq := len(nd.box), len(x.Data)
	if inner == 0 || len(m)%inner != 0 || nq != len(r.nodes[ps[xt]].box) {
		return false
	}
	out := len(m) / inner
	// at reads M's coefficient of x[r, c] in y[r, j] (spec.LinearJac).
	at := func(j, c int) adj { return m[j*inner+c] }
	if li.InnerOut {
		at = func(j, c int) adj { return m[c*out+j] }
	}
	rows := nq / inner
	if rows*out != nk || len(pairs[xt]) != 2*nk*nq {
		return false
	}
	for _, v := range m {
		if !(v.iv.Lo <= v.iv.Hi) || math.IsInf(v.iv.Lo, 0) || math.IsInf(v.iv.Hi, 0) {
			return false
		}
	}
	p := pairs[xt]
	for rr := 0; rr < rows; rr++ {
		for j := 0; j < out; j++ {
			row := p[2*(rr*out+j)*nq : 2*(rr*out+j+1)*nq]
			for c := 0; c < inner; c++ {
				v := at(j, c)
				if sweepFault == 3 && out == inner {
					v = at(c, j) // planted: M read transposed
				}
				iv := plusZero(v.iv)
				row[2*(rr*inner+c)], row[2*(rr*inner+c)+1] = iv.Lo, iv.Hi
			}
		}
	}
	return true
}

// plantSweep applies sweepFault 1 or 2 to a Jacobian's pairs.
func plantSweep(pairs []float64, rows, cols int) {
	if rows != cols || sweepFault < 1 || sweepFault > 2 {
		return
	}
	diag := true
	for e := 0; e < rows*cols; e++ {
		if e/cols != e%cols && (pairs[2*e] != 0 || pairs[2*e+1] != 0) {
			diag = false
		}
	}
	switch {
	case sweepFault == 1 && !diag:
		for a := 0; a < rows; a++ {
			for b := a + 1; b < cols; b++ {
				x, y := 2*(a*cols+b), 2*(b*cols+a)
				pairs[x], pairs[y] = pairs[y], pairs[x]
				pairs[x+1], pairs[y+1] = pairs[y+1], pairs[x+1]
			}
		}
	case sweepFault == 2 && diag:
		for a := 0; a < rows; a++ {
			pairs[2*(a*cols+a)], pairs[2*(a*cols+a)+1] = 1, 1
		}
	}
}

// toJac converts interleaved interval pairs of a rows × cols Jacobian to
// planes: the zero Jacobian, its diagonal (every off-diagonal entry the
// point 0), or the dense matrix; P.C nil (not zero) when an entry is not
// tame.
func toJac(pairs []float64, rows, cols int) jac {
	j := jac{rows: rows, cols: cols, zero: true, diag: rows == cols, sel: true}
	for a := 0; a < rows; a++ {
		nz := 0
		for i := 2 * a * cols; i < 2*(a+1)*cols; i += 2 {
			if pairs[i] != 0 || pairs[i+1] != 0 {
				nz++
				j.zero = false
				if e := i / 2; e/cols != e%cols {
					j.diag = false
				}
			}
		}
		if nz > 1 {
			j.sel = false
		}
	}
	if j.zero {
		return j
	}
	if j.diag {
		d := make([]float64, 2*rows)
		for i := 0; i < rows; i++ {
			d[2*i], d[2*i+1] = pairs[2*(i*cols+i)], pairs[2*(i*cols+i)+1]
		}
		pairs = d
	}
	p := enclose.Make(len(pairs) / 2)
	if !enclose.FromPairs(pairs, p) {
		return jac{rows: rows, cols: cols}
	}
	if p.Point() {
		p.R = nil
	}
	j.p = p
	return j
}

// adjMat is the adjoint of one node in a dense sweep from node j: for
// element o of node j and i of this node, the exact adjoint lies within
// c[o,i] ± (rad[o,i] + the part of rho[o,i] not yet settled); rho bounds
// the rounding and the Jacobians' radii of this node's own products
// (doc.go, "Dense sweep"), rad what was carried from the nodes above.
type adjMat struct {
	c, rho, rad []float64
	set         bool // c holds a contribution
}

// denseSweep is the dense sweep from node j: for every element o of node
// j the bound F_o ≥ Σ_k Σ_i mag(A_{k,o,i})·ē_{k,i} plus the settled
// residuals, Σ (mag(A)·ē)² for the estimate, and the settled residuals (doc.go, "Dense sweep").
// A non-empty reason means no first-order bound exists for the evaluation;
// errDense that the dense sweep does not apply.
func (r *foRun[F]) denseSweep(j, target int) (bound, ss, resid []float64, lvl int, reason string, err error) {
	g, nodes := r.g, r.nodes
	o := len(nodes[j].box)
	if o > maxDense/max(o, 1) {
		return nil, nil, nil, 0, "", errDense("too many elements")
	}
	st := make([]*adjMat, j+1)
	if r.pool == nil {
		r.pool = planePool{}
	}
	pool := r.pool
	id := pool.get(o * o)
	for i := 0; i < o; i++ {
		id[i*o+i] = 1
	}
	st[j] = &adjMat{c: id, set: true}
	bound, ss = make([]float64, o), make([]float64, o)
	resid = make([]float64, o)
	for k := j; k >= 0; k-- {
		s := st[k]
		if s == nil {
			continue
		}
		st[k] = nil
		nd := &nodes[k]
		n := len(nd.box)
		r.settle(s, nd, o, n, resid, target < 1)
		if target >= 1 && k != j && nd.foOK {
			if l, ok := cutLevel(s, nd, o, n, target); ok {
				cut(s, nd, o, n, resid)
				lvl = max(lvl, l)
				pool.release(s)
				continue
			}
		}
		if nd.local != nil {
			for a := 0; a < o; a++ {
				for i, e := range nd.local {
					if e == 0 {
						continue
					}
					m := math.Abs(s.c[a*n+i])
					if s.rad != nil {
						m = addUp(m, s.rad[a*n+i])
					}
					t := mulUp(m, e)
					bound[a] = addUp(bound[a], t)
					ss[a] = mulAddUp(ss[a], t, t)
				}
			}
		}
		if nd.app.Source || g.Nodes[k].Kind.Op == irsem.OpInput {
			pool.release(s)
			continue
		}
		reach := false
		for _, q := range g.Nodes[k].Parents {
			reach = reach || nodes[q].err
		}
		if !reach {
			pool.release(s)
			continue
		}
		js, reason, err := r.jacobians(k)
		if reason != "" || err != nil {
			return nil, nil, nil, 0, reason, err
		}
		if err := lift(s); err != nil {
			return nil, nil, nil, 0, "", err
		}
		for t, q := range g.Nodes[k].Parents {
			if !nodes[q].err || js[t].zero {
				continue
			}
			if st[q] == nil {
				nq := len(nodes[q].box)
				if o > maxDense/max(nq, 1) {
					return nil, nil, nil, 0, "", errDense("an adjoint matrix too large")
				}
				st[q] = &adjMat{c: pool.get(o * nq), rho: pool.get(o * nq)}
			}
			if err := propagate(s, &js[t], st[q], o, pool); err != nil {
				return nil, nil, nil, 0, "", err
			}
		}
		pool.release(s)
	}
	for a := range bound {
		bound[a] = addUp(bound[a], resid[a]) // +∞: see record
	}
	return bound, ss, resid, lvl, "", nil
}

// sweepWork is the estimated work of the dense sweep from node j per
// element of j, in Options.SweepWork's units: the declared work of the
// nodes the sweep visits. It visits node j and, from a visited node k
// that is not a source, every parent an error reaches; a node no error
// reaches is never visited, and its declared work costs the sweep
// nothing (a conv whose input and weights are exact, below the first
// reshape of a UNet, was charged its whole declared work before). With
// target ≥ 1 and the non-diagonal cuts off (target's elementwise case)
// the sweep stops at a visited k ≠ j whose bounds are finite (its
// adjoint there has one entry per row: cutLevel holds), so nothing above
// such a k is counted.
func (r *foRun[F]) sweepWork(j, target int) int64 {
	g, nodes := r.g, r.nodes
	stopAtCut := target == cutAll || (target >= 1 && !sweepNonDiagonal)
	vis := make([]bool, j+1)
	vis[j] = true
	var w int64
	for k := j; k >= 0; k-- {
		if !vis[k] {
			continue
		}
		w += r.nodeWork(k)
		nd := &nodes[k]
		if nd.app.Source || g.Nodes[k].Kind.Op == irsem.OpInput || (stopAtCut && k != j && nd.foOK && nd.lvl <= target) {
			continue
		}
		for _, q := range g.Nodes[k].Parents {
			if nodes[q].err {
				vis[q] = true
			}
		}
	}
	return max(w, 1)
}

// cutLevel decides whether a sweep of target level target ≥ 1 stops at
// node k, whose adjoint (rows: the swept node's o elements; columns: k's
// n) is s, and at which level (doc.go, "Cuts"): at a diagonal adjoint (o
// = n, every off-diagonal centre and radius 0) when k's own level is at
// most target — the cut then loses nothing —, else when k's level is
// below target, one non-diagonal cut more.
func cutLevel(s *adjMat, nd *foNode, o, n, target int) (int, bool) {
	if nd.lvl <= target && onePerRow(s, o, n) {
		return nd.lvl, true
	}
	if target == cutAll {
		return nd.lvl + 1, true
	}
	if sweepNonDiagonal && nd.lvl+1 <= target {
		return nd.lvl + 1, true
	}
	return 0, false
}

// cutAll is the target of a fallback sweep (doc.go, "Cuts"): it stops at
// every visited node k ≠ j whose bounds are all finite, whatever its
// adjoint (level k's + 1 where the adjoint is not one entry per row), so
// it processes node j and, beyond its parents with finite bounds, only
// those without. sweeps runs it for a node whose level-0 sweep the budget
// does not admit: its bounds are those of a cut sweep (sound, looser by
// the cancellations across the stops), where the node would otherwise
// have none — its box stays the classic and forward one, and every later
// level-0 sweep carries the residual it meets there as a radius through
// |J| down to the input instead of charging it against F (docs/bounds.md,
// sweep32: on the zoo's 2-block GPT-2 the radius so carried was 0.59 of
// the largest bound 0.594).
const cutAll = math.MaxInt32

// sweepNonDiagonal enables the non-diagonal cuts (doc.go, "Cuts"). They
// are sound but off: on the Kaiming ReLU MLPs the boxes of the cut nodes,
// looser by one product's cancellations, straddle more kinks, and the
// output's bound grew 18× at depth 32 (and lost its finite figure at 64).
// The tests run with them on.
var sweepNonDiagonal = false

// onePerRow reports whether every row of the o×n adjoint s has at most
// one entry with a centre or radius other than 0 (a diagonal adjoint is
// one): a cut there loses nothing, since |W[a,p]·P[p,·]| = |W[a,p]|·|P[p,·]|
// for the one p of row a (doc.go, "Cuts").
func onePerRow(s *adjMat, o, n int) bool {
	for a := 0; a < o; a++ {
		nz := 0
		for i := a * n; i < (a+1)*n; i++ {
			if s.c[i] != 0 || (s.rad != nil && s.rad[i] != 0) {
				nz++
			}
		}
		if nz > 1 {
			return false
		}
	}
	return true
}

// cut settles node k's whole adjoint against its first-order bound:
// element a of the swept node is charged Σ_i (|c[a,i]| + rad[a,i])·F_{k,i}
// (its residual rho was charged by settle), and the sweep does not go
// below k along this adjoint (doc.go, "Cuts").
func cut(s *adjMat, nd *foNode, o, n int, resid []float64) {
	for a := 0; a < o; a++ {
		t := 0.0
		for i := 0; i < n; i++ {
			m := math.Abs(s.c[a*n+i])
			if s.rad != nil {
				m = addUp(m, s.rad[a*n+i])
			}
			if m != 0 {
				t = mulAddUp(t, m, nd.fo[i])
			}
		}
		resid[a] = addUp(resid[a], t)
	}
}

// settle disposes of node k's residual bound rho: element i's column is
// charged against node k's own first-order bound F_{k,i} (added to resid,
// per element of the swept node) where that bound was computed and charge
// is set (a sweep without cuts), and is carried on as radius otherwise.
func (r *foRun[F]) settle(s *adjMat, nd *foNode, o, n int, resid []float64, charge bool) {
	if s.rho == nil {
		return
	}
	var fo []float64
	if charge {
		fo = nd.fo
	}
	if fo != nil && finiteAll(fo[:n]) {
		settleCharged(s.rho, fo[:n], o, n, resid)
		r.pool.put(s.rho)
		s.rho = nil
		return
	}
	for a := 0; a < o; a++ {
		row := s.rho[a*n : (a+1)*n]
		acc := resid[a]
		for i, v := range row {
			if v == 0 {
				continue
			}
			if fo != nil && !math.IsInf(fo[i], 1) {
				acc = mulAddUp(acc, v, fo[i])
				continue
			}
			if s.rad == nil {
				s.rad = r.pool.get(o * n)
			}
			s.rad[a*n+i] = addUp(s.rad[a*n+i], v)
		}
		resid[a] = acc
	}
	r.pool.put(s.rho)
	s.rho = nil
}

// lift makes s tame for enclose: a centre of magnitude below 2⁻³⁰⁰ moves
// into the radius, a radius below 2⁻³⁰⁰ rises to it (both only enlarge the
// set); a centre or radius above 2³⁰⁰ is errDense.
func lift(s *adjMat) error {
	if s.rad == nil && enclose.Tame(enclose.Planes{C: s.c}) {
		return nil // every centre 0 or in [2⁻³⁰⁰, 2³⁰⁰]: nothing to move
	}
	for i, c := range s.c {
		if a := math.Abs(c); a != 0 && a < tiny {
			if s.rad == nil {
				s.rad = make([]float64, len(s.c))
			}
			s.rad[i] = addUp(s.rad[i], a)
			s.c[i] = 0
		} else if a > 1/tiny {
			return errDense("an adjoint above 2³⁰⁰")
		}
	}
	for i, v := range s.rad {
		if v != 0 && v < tiny {
			s.rad[i] = tiny
		} else if v > 1/tiny {
			return errDense("an adjoint radius above 2³⁰⁰")
		}
	}
	return nil
}

// propagate adds s·J to dst: the centre product into dst.c (the rounding
// of the accumulation, exact by TwoSum, into dst.rho), the product's own
// rounding and |s.c|·rad(J) into dst.rho, and the carried radius times
// mag(J) into dst.rad, every bound rounded upward. Into a dst without a
// contribution yet (its planes zero) the products are written in place:
// accumulate would copy c and add rho to zeros, which is rho itself.
func propagate(s *adjMat, J *jac, dst *adjMat, o int, pool planePool) error {
	n, nq := J.rows, J.cols
	var c, rho, rad []float64
	direct := !dst.set
	if J.diag {
		if direct {
			c, rho = dst.c, dst.rho
		} else {
			c, rho = pool.get(o*n), pool.get(o*n)
		}
		for a := 0; a < o; a++ {
			for i := 0; i < n; i++ {
				x := s.c[a*n+i]
				if x == 0 {
					continue
				}
				v := x * J.p.C[i]
				c[a*n+i] = v
				// |fl(x·y) − x·y| ≤ 2u·|fl(x·y)| + 2⁻¹⁰⁷⁴ (normal or
				// not); 0 for y = 0
				e := 0.0
				if v != 0 || J.p.C[i] != 0 {
					e = diagRound(v)
				}
				if J.p.R != nil {
					e = addUp(e, mulUp(math.Abs(x), J.p.R[i]))
				}
				rho[a*n+i] = e
			}
		}
		if s.rad != nil {
			rad = make([]float64, o*n)
			for a := 0; a < o; a++ {
				for i := 0; i < n; i++ {
					m := math.Abs(J.p.C[i])
					if J.p.R != nil {
						m = addUp(m, J.p.R[i])
					}
					rad[a*n+i] = mulUp(s.rad[a*n+i], m)
				}
			}
		}
	} else {
		out := enclose.Planes{C: dst.c, R: dst.rho}
		if !direct {
			// Product writes every element of out (Dgemm overwrites).
			out = enclose.Planes{C: pool.getRaw(o * nq), R: pool.getRaw(o * nq)}
		}
		sc, sr, jp, kk, gathered, ok := liveProduct(s, J, o, n, nq, out, pool)
		if !ok {
			return errDense("a product is not tame")
		}
		c, rho = out.C, out.R
		if sr != nil {
			mj := pool.getRaw(len(jp.C))
			for i, v := range jp.C {
				mj[i] = math.Abs(v)
				if jp.R != nil {
					mj[i] = addUp(mj[i], jp.R[i])
				}
			}
			pr := enclose.Make(o * nq)
			if !enclose.Product(o, nq, kk, enclose.Planes{C: sr}, false, enclose.Planes{C: mj}, false, enclose.Planes{}, pr) {
				return errDense("a radius product is not tame")
			}
			pool.put(mj)
			rad = pr.C
			for i := range rad {
				rad[i] = addUp(math.Abs(rad[i]), pr.R[i])
			}
		}
		if gathered {
			pool.put(sc)
			pool.put(sr)
			pool.put(jp.C)
			pool.put(jp.R)
		}
	}
	if direct {
		dst.set = true
		if rad != nil {
			accumulate(dst, nil, nil, rad)
		}
		return nil
	}
	accumulate(dst, c, rho, rad)
	pool.put(c)
	pool.put(rho)
	return nil
}

// mulAddUp is addUp(acc, mulUp(x, y)) for acc, x, y ≥ 0, bit for bit,
// with the common case (every operand positive and finite, no factor 1)
// taken without the two calls: mulUp is then up(x·y) > 0, and addUp of
// it is that value for acc = 0, +∞ for an infinite one, else up(acc + ·).
func mulAddUp(acc, x, y float64) float64 {
	if x > 0 && x < inf && y > 0 && y < inf && x != 1 && y != 1 && acc < inf {
		p := up(x * y)
		switch {
		case acc == 0:
			return p
		case p == inf:
			return inf
		}
		return up(acc + p)
	}
	return addUp(acc, mulUp(x, y))
}

// planePool is a free list of float64 planes by length, for one run's
// dense sweeps: adjoint planes are returned once their node is swept, so
// a sweep allocates a few planes instead of one per product. Allocation
// only: get returns a zeroed plane, as make does.
type planePool map[int][][]float64

func (p planePool) get(n int) []float64 {
	if l := p[n]; len(l) > 0 {
		b := l[len(l)-1]
		p[n] = l[:len(l)-1]
		clear(b)
		return b
	}
	return make([]float64, n)
}

// put returns b to the pool (nil: nothing); the caller keeps no use of it.
func (p planePool) put(b []float64) {
	if b != nil {
		p[len(b)] = append(p[len(b)], b)
	}
}

// release returns an adjoint's planes to the pool once its node is swept.
func (p planePool) release(s *adjMat) {
	p.put(s.c)
	p.put(s.rho)
	p.put(s.rad)
	s.c, s.rho, s.rad = nil, nil, nil
}

// accumulate adds (c, rho, rad) into dst.
func accumulate(dst *adjMat, c, rho, rad []float64) {
	if !dst.set {
		copy(dst.c, c)
		dst.set = true
	} else {
		for i, b := range c {
			a := dst.c[i]
			sum := a + b
			bb := sum - a
			if e := math.Abs((a - (sum - bb)) + (b - bb)); e != 0 {
				dst.rho[i] = addUp(dst.rho[i], e)
			}
			dst.c[i] = sum
		}
	}
	for i, v := range rho {
		if v != 0 {
			dst.rho[i] = addUp(dst.rho[i], v)
		}
	}
	if rad != nil {
		if dst.rad == nil {
			dst.rad = make([]float64, len(dst.c))
		}
		for i, v := range rad {
			dst.rad[i] = addUp(dst.rad[i], v)
		}
	}
}
