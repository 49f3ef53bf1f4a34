package obligations

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// The global obligations: laws about whole graphs and the sweeps that
// differentiate them, as opposed to the per-primitive laws of check.go.
const (
	// GraphComposition: dotList(jvpCtx(g,x,dx), seed) =
	// dotList(dx, backpropCtx(g,x,seed)) exactly over Rat, and the same
	// with a full cotangent array for the every-node sweep.
	GraphComposition Obligation = "graph-composition"
	// PathSum: the tape's cotangent of every node equals the sum, over
	// every path from the output to that node, of the seed times the
	// product of the local Jacobians along the path (duplicate parent
	// slots are two paths, detach cuts paths), and a node is reached
	// exactly when such a path exists.
	PathSum Obligation = "path-sum"
	// SweepAgreement: the sweep that skips unreached nodes (dense-all)
	// equals the sweep that runs every node's VJP (from-all) on a
	// zero-preserving tape.
	SweepAgreement Obligation = "sweep-agreement"
	// SweepSingular: over F32 at a singular point hanging off the graph,
	// the every-node sweep produces NaN where the skipping sweep does not,
	// and the two agree everywhere else.
	SweepSingular Obligation = "sweep-singular"
	// CrossPath: the execution paths agree node by node (forward values
	// and gradients).
	CrossPath Obligation = diffrun.CrossPath
	// IntervalSoundness: the exact value of every node lies in the
	// interval the same graph denotes over spec.Interval.
	IntervalSoundness Obligation = diffrun.IntervalSoundness
	// HessianSymmetry: H[i][j][a,b] = H[j][i][b,a] exactly over Rat.
	HessianSymmetry Obligation = "hessian-symmetry"
	// HVPSymmetry: ⟨Hv, w⟩ = ⟨v, Hw⟩ exactly over Rat.
	HVPSymmetry Obligation = "hvp-symmetry"
)

// recipeText prints a generated graph for its counterexample ("" when
// there is none).
func recipeText(rc *casegen.Recipe) string {
	if rc == nil {
		return ""
	}
	return rc.String()
}

// ErrTooManyPaths is returned by CheckPathSum when a graph has more paths
// than it will enumerate.
var ErrTooManyPaths = errors.New("path-sum: too many paths to enumerate")

// MaxPaths bounds the number of paths CheckPathSum enumerates.
const MaxPaths = 1 << 15

func onehot(s spec.Shape, i int) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](s)
	t.Data[i] = spec.NewRat(1, 1)
	return t
}

func sameRat(a, b spec.Rat) bool { return a.Same(b) }

// CheckGraphComposition decides the graph theorem of §3 on a typed
// recipe built with reg (nil: the reference registry): for tangents dx
// (one per context input) and a cotangent seed of the result's shape,
//
//	dot(jvpCtx(g, x, dx)[result], seed) = dotList(dx, backpropCtx(g, x, seed))
//
// exactly over Rat, and, for the every-node sweep, with a full cotangent
// array init (one per entry; nil skips this half)
//
//	dotList(jvpCtx(g, x, dx), init) = dotList(dx, backpropAllFrom(g, x, init)[:ctx]).
//
// On failure it localizes the fault: the first node whose local law
// ⟨jvp(ctx, dctx), e_k⟩ = Σ_i ⟨dctx_i, vjp(ctx, e_k)_i⟩ fails for a
// one-hot cotangent e_k is reported with its element k.
func CheckGraphComposition(reg *spec.Registry[spec.Rat], tc *casegen.TypedCase, dx []spec.Tensor[spec.Rat], seed spec.Tensor[spec.Rat], init []spec.Tensor[spec.Rat]) error {
	rc := tc.Recipe
	g, err := casegen.BuildTyped(rc, reg)
	if err != nil {
		return err
	}
	fail := func(f *counterexample.Failure) error {
		f.Law, f.Scalar, f.Graph, f.Inputs = string(GraphComposition), "rat", recipeText(rc), tc.Inputs
		f.Extra = fmt.Sprintf("dx: %s\nseed: %v", counterexample.FormatTensors(dx), seed)
		return f
	}
	jv, err := g.JVPCtx(tc.Inputs, dx)
	if err != nil {
		return fmt.Errorf("jvpCtx: %w", err)
	}
	lhs, err := spec.Dot(jv[rc.Result], seed)
	if err != nil {
		return err
	}
	bp, err := g.BackpropCtx(tc.Inputs, seed)
	if err != nil {
		return fmt.Errorf("backpropCtx: %w", err)
	}
	rhs, err := spec.DotList(dx, bp)
	if err != nil {
		return err
	}
	if !lhs.Same(rhs) {
		f := localizeComposition(g, tc.Inputs, jv)
		f.Sides = "dot(jvpCtx, seed) vs dotList(dx, backpropCtx)"
		f.Detail = fmt.Sprintf("graph law: %s ≠ %s", lhs, rhs)
		if f.Node < 0 {
			f.LHS, f.RHS = lhs.String(), rhs.String()
		}
		return fail(f)
	}
	if init == nil {
		return nil
	}
	lhs, err = spec.DotList(jv, init)
	if err != nil {
		return err
	}
	all, err := g.BackpropAllFrom(tc.Inputs, init)
	if err != nil {
		return fmt.Errorf("backpropAllFrom: %w", err)
	}
	rhs, err = spec.DotList(dx, all[:len(rc.Ctx)])
	if err != nil {
		return err
	}
	if !lhs.Same(rhs) {
		f := localizeComposition(g, tc.Inputs, jv)
		f.Sides = "dotList(jvpCtx, init) vs dotList(dx, backpropAllFrom(init))"
		f.Detail = fmt.Sprintf("graph law: %s ≠ %s; init %s", lhs, rhs, counterexample.FormatTensors(init))
		if f.Node < 0 {
			f.LHS, f.RHS = lhs.String(), rhs.String()
		}
		return fail(f)
	}
	return nil
}

// localizeComposition finds the first node whose local adjointness law
// fails for a one-hot cotangent, at the tangents jv of the graph's own
// forward mode.
func localizeComposition(g *typedgraph.Graph[spec.Rat], inputs, jv []spec.Tensor[spec.Rat]) *counterexample.Failure {
	vals, err := g.Eval(inputs)
	if err != nil {
		return &counterexample.Failure{Node: -1, Element: -1}
	}
	for id := g.CtxLen(); id < g.Len(); id++ {
		n, err := g.Node(id)
		if err != nil {
			break
		}
		jn, err := n.JVP(vals[:id], jv[:id])
		if err != nil {
			continue
		}
		for k := range jn.Data {
			vj, err := n.VJP(vals[:id], onehot(n.Shape(), k))
			if err != nil {
				break
			}
			rhs, err := spec.DotList(jv[:id], vj)
			if err != nil {
				break
			}
			if !jn.Data[k].Same(rhs) {
				return &counterexample.Failure{Node: id, Op: n.Op(), Element: k,
					LHS: "⟨jvp,e_k⟩=" + jn.Data[k].String(), RHS: "Σ⟨dctx,vjp(e_k)⟩=" + rhs.String()}
			}
		}
	}
	return &counterexample.Failure{Node: -1, Element: -1}
}

// Sweep is a reverse sweep of a tape from output out with cotangent seed:
// it returns one cotangent per node (zeros where unreached) and which
// nodes a cotangent reached. TapeSweep is the tape's own; a self-test may
// substitute a deliberately wrong one.
type Sweep func(t *tape.Tape[spec.Rat], out int, seed spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], []bool, error)

// TapeSweep is tape.Backward (the dense sweep that skips unreached nodes)
// in the form of a Sweep.
func TapeSweep(t *tape.Tape[spec.Rat], out int, seed spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], []bool, error) {
	g, err := t.Backward(out, seed)
	if err != nil {
		return nil, nil, err
	}
	reached := make([]bool, t.Len())
	for id := range reached {
		reached[id] = g.Reached(id)
	}
	return g.Dense(), reached, nil
}

// PathSums enumerates, explicitly and one at a time, every path from node
// out of t back through the parent slots of nodes that require a
// gradient (a duplicate parent slot is a separate path; detach, const and
// leaves end paths; a parent that does not require a gradient receives
// nothing), multiplying seed by the local Jacobian of each edge. The
// local Jacobian of slot k of a node is read off the registry's JVP rule
// with a one-hot tangent in that slot alone. It returns, per node, the sum
// over its paths and the number of paths that end there.
func PathSums(reg *spec.Registry[spec.Rat], t *tape.Tape[spec.Rat], out int, seed spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], []int, error) {
	if reg == nil {
		reg = spec.Default[spec.Rat]()
	}
	n := t.Len()
	acc := make([]spec.Tensor[spec.Rat], n)
	count := make([]int, n)
	nodes := make([]*tape.Node[spec.Rat], n)
	for id := range nodes {
		nd, err := t.Node(id)
		if err != nil {
			return nil, nil, err
		}
		nodes[id] = nd
		acc[id] = spec.ZerosLike(nd.Value)
	}
	type edge struct{ id, slot int }
	jacs := map[edge][][]spec.Rat{}
	jac := func(id, slot int) ([][]spec.Rat, error) {
		if j, ok := jacs[edge{id, slot}]; ok {
			return j, nil
		}
		nd := nodes[id]
		p, err := reg.Lookup(nd.Op)
		if err != nil {
			return nil, err
		}
		xs := make([]spec.Tensor[spec.Rat], len(nd.Parents))
		dxs := make([]spec.Tensor[spec.Rat], len(nd.Parents))
		for k, pid := range nd.Parents {
			xs[k] = nodes[pid].Value
			dxs[k] = spec.ZerosLike(xs[k])
		}
		in := len(xs[slot].Data)
		j := make([][]spec.Rat, len(nd.Value.Data)) // j[row][col] = ∂y_row/∂x_col
		for r := range j {
			j[r] = make([]spec.Rat, in)
		}
		for c := 0; c < in; c++ {
			dxs[slot] = onehot(xs[slot].Shape, c)
			col, err := p.JVP(nd.Attrs, xs, nd.Value, dxs)
			if err != nil {
				return nil, spec.NewNodeError(id, nd.Op, "jvp", err)
			}
			if len(col.Data) != len(j) {
				return nil, spec.NewNodeError(id, nd.Op, fmt.Sprintf("jvp has %d elements, the value %d", len(col.Data), len(j)), nil)
			}
			for r := range j {
				j[r][c] = col.Data[r]
			}
		}
		jacs[edge{id, slot}] = j
		return j, nil
	}
	paths := 0
	var walk func(id int, v spec.Tensor[spec.Rat]) error
	walk = func(id int, v spec.Tensor[spec.Rat]) error {
		if paths++; paths > MaxPaths {
			return ErrTooManyPaths
		}
		sum, err := spec.AddT(acc[id], v)
		if err != nil {
			return err
		}
		acc[id] = sum
		count[id]++
		nd := nodes[id]
		if !nd.RequiresGrad || nd.Kind != tape.KindOp || nd.Backward == nil {
			return nil // leaves, detach and const end every path
		}
		for k, pid := range nd.Parents {
			if !nodes[pid].RequiresGrad {
				continue // the tape drops this contribution
			}
			j, err := jac(id, k)
			if err != nil {
				return err
			}
			w := spec.ZerosLike(nodes[pid].Value)
			for c := range w.Data {
				s := spec.Rat{}
				for r := range j {
					s = s.Add(v.Data[r].Mul(j[r][c]))
				}
				w.Data[c] = s
			}
			if err := walk(pid, w); err != nil {
				return err
			}
		}
		return nil
	}
	if out < 0 || out >= n {
		return nil, nil, fmt.Errorf("path-sum: invalid output id %d", out)
	}
	if !seed.Shape.Equal(nodes[out].Value.Shape) {
		return nil, nil, fmt.Errorf("path-sum: seed has shape %v, output %v", seed.Shape, nodes[out].Value.Shape)
	}
	if err := walk(out, seed); err != nil {
		return nil, nil, err
	}
	return acc, count, nil
}

// CheckPathSum decides the path-sum obligation on a typed recipe recorded
// eagerly on a tape with reg (nil: the reference registry): the sweep
// (nil: TapeSweep) from the result with cotangent seed must give every
// node exactly the sum over its paths (PathSums), and must reach exactly
// the nodes some path ends at. It returns the number of paths enumerated.
func CheckPathSum(reg *spec.Registry[spec.Rat], tc *casegen.TypedCase, seed spec.Tensor[spec.Rat], sweep Sweep) (int, error) {
	if sweep == nil {
		sweep = TapeSweep
	}
	rc := tc.Recipe
	tp, err := casegen.RecordTape(rc, reg, tc.Inputs)
	if err != nil {
		return 0, err
	}
	want, count, err := PathSums(reg, tp, rc.Result, seed)
	if err != nil {
		return 0, err
	}
	got, reached, err := sweep(tp, rc.Result, seed)
	if err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	total := 0
	for _, c := range count {
		total += c
	}
	for id := range want {
		f := counterexample.TensorDiff(string(PathSum), "tape sweep vs explicit path sum", id, rc.OpOf(id), got[id], want[id], sameRat)
		if f == nil && reached[id] != (count[id] > 0) {
			f = &counterexample.Failure{Law: string(PathSum), Sides: "tape sweep vs explicit path sum", Scalar: "rat", Node: id, Op: rc.OpOf(id), Element: -1,
				LHS: fmt.Sprintf("reached=%v", reached[id]), RHS: fmt.Sprintf("%d paths", count[id])}
		}
		if f != nil {
			f.Graph, f.Inputs = recipeText(rc), tc.Inputs
			f.Detail = fmt.Sprintf("%d paths end at node %d", count[id], id)
			f.Extra = fmt.Sprintf("seed: %v", seed)
			return total, f
		}
	}
	return total, nil
}

// CheckSweeps decides sweep agreement on a typed recipe over Rat: the
// tape's dense-all sweep (which skips unreached nodes) equals its from-all
// sweep (which runs every node's VJP) node by node, and the typed graph's
// compiled skipping sweep (Exec.Backward) equals its every-node sweep
// (BackpropAllCtx) entry by entry. It holds when every rule is
// zero-preserving, which is the case for the exact rules over Rat.
func CheckSweeps(reg *spec.Registry[spec.Rat], tc *casegen.TypedCase, seed spec.Tensor[spec.Rat]) error {
	rc := tc.Recipe
	fail := func(f *counterexample.Failure) error {
		f.Graph, f.Inputs, f.Extra = recipeText(rc), tc.Inputs, fmt.Sprintf("seed: %v", seed)
		return f
	}
	tp, err := casegen.RecordTape(rc, reg, tc.Inputs)
	if err != nil {
		return err
	}
	dense, err := tp.BackwardAll(rc.Result, seed)
	if err != nil {
		return fmt.Errorf("dense-all: %w", err)
	}
	all, err := tp.BackwardEvery(rc.Result, seed)
	if err != nil {
		return fmt.Errorf("from-all: %w", err)
	}
	for id := range dense {
		if f := counterexample.TensorDiff(string(SweepAgreement), "tape dense-all vs tape from-all", id, rc.OpOf(id), dense[id], all[id], sameRat); f != nil {
			return fail(f)
		}
	}
	g, err := casegen.BuildTyped(rc, reg)
	if err != nil {
		return err
	}
	e, err := g.Compile()
	if err != nil {
		return err
	}
	if _, err := e.Forward(tc.Inputs); err != nil {
		return fmt.Errorf("exec forward: %w", err)
	}
	skip, err := e.Backward(seed)
	if err != nil {
		return fmt.Errorf("exec backward: %w", err)
	}
	every, err := g.BackpropAllCtx(tc.Inputs, seed)
	if err != nil {
		return fmt.Errorf("backpropAllCtx: %w", err)
	}
	for id := range rc.Ctx {
		if f := counterexample.TensorDiff(string(SweepAgreement), "typed-graph skipping sweep vs backpropAllCtx", id, rc.OpOf(id), skip[id], every[id], sameRat); f != nil {
			return fail(f)
		}
	}
	return nil
}

func isNaN32(x spec.F32) bool { return x != x }

// eqF32 compares by value: +0 = −0, NaN = NaN.
func eqF32(a, b spec.F32) bool { return a == b || (isNaN32(a) && isNaN32(b)) }

// CheckSingularSweep demonstrates, on a typed recipe over F32 with the
// reference rules, why the skipping sweep exists: after SingularBranch
// hangs s = a − a and inv(s) off entry a, the every-node sweep (from-all)
// runs inv's VJP with a zero cotangent at s = 0 and gets 0·∞ = NaN, which
// flows into s and a; the skipping sweep (dense-all) never runs it. The
// obligation: the every-node sweep's cotangent of s and of a is NaN in
// every element; the skipping sweep's contains no NaN anywhere (the
// recipe must be zero-preserving with finite values); and the two agree
// (by value) on every node that is not an ancestor of s.
func CheckSingularSweep(tc *casegen.TypedCase, k int) error {
	rc, a, s := casegen.SingularBranch(tc.Recipe, k)
	fail := func(f *counterexample.Failure) error {
		f.Law, f.Scalar, f.Graph, f.Inputs = string(SweepSingular), "f32", recipeText(rc), tc.Inputs
		return f
	}
	tp, err := casegen.RecordTape(rc, nil, casegen.ConvertInputs[spec.F32](tc.Inputs))
	if err != nil {
		return err
	}
	out, _ := tp.Node(rc.Result)
	seed := spec.MapPure(out.Value, func(spec.F32) spec.F32 { return 1 })
	skip, err := tp.BackwardAll(rc.Result, seed)
	if err != nil {
		return fmt.Errorf("dense-all: %w", err)
	}
	every, err := tp.BackwardEvery(rc.Result, seed)
	if err != nil {
		return fmt.Errorf("from-all: %w", err)
	}
	for id := range skip {
		for i, v := range skip[id].Data {
			if isNaN32(v) {
				return fail(&counterexample.Failure{Sides: "skipping sweep", Node: id, Op: rc.OpOf(id), Element: i, LHS: "NaN", RHS: "a number",
					Detail: "the skipping sweep produced NaN"})
			}
		}
	}
	for _, id := range []int{s, a} {
		for i, v := range every[id].Data {
			if !isNaN32(v) {
				return fail(&counterexample.Failure{Sides: "every-node sweep", Node: id, Op: rc.OpOf(id), Element: i, LHS: v.String(), RHS: "NaN",
					Detail: "the every-node sweep did not run inv's VJP at the singular point"})
			}
		}
	}
	// Ancestors of s through requiresGrad edges may be contaminated.
	anc := make([]bool, rc.Len())
	anc[s] = true
	for id := s; id >= 0; id-- {
		if !anc[id] || id < len(rc.Ctx) {
			continue
		}
		nd, _ := tp.Node(id)
		if nd.Backward == nil {
			continue
		}
		for _, p := range nd.Parents {
			anc[p] = true
		}
	}
	for id := range skip {
		if anc[id] || id == s+1 {
			continue
		}
		if f := counterexample.TensorDiff(string(SweepSingular), "skipping sweep vs every-node sweep off the singular branch", id, rc.OpOf(id), skip[id], every[id], eqF32); f != nil {
			return fail(f)
		}
	}
	return nil
}

// CheckIntervalSoundness decides that the exact value of every node of
// an exact IR graph lies in the interval the same graph denotes over
// spec.Interval: diffrun.Containment on the case, its counterexample
// carrying the generated graph.
func CheckIntervalSoundness(gc *casegen.GraphCase) error {
	err := diffrun.Containment(gc.Graph, gc.Payload, gc.Input)
	if f, ok := err.(*counterexample.Failure); ok {
		c := *f
		c.Graph = recipeText(gc.Recipe)
		return &c
	}
	return err
}

// CheckHessian decides, on a typed recipe with a scalar result over Rat
// (polynomial primitives, so that second derivatives are exact), that the
// forward-over-reverse Hessian (typedgraph.HessianGraph of the dual
// rebuild) is exactly symmetric, H[i][j][a,b] = H[j][i][b,a], and that
// Hessian-vector products satisfy ⟨Hv, w⟩ = ⟨v, Hw⟩ for the directions v
// and w (one tensor per context input). The element index of a symmetry
// failure is the row-major index a·size(input j)+b into block [i][j].
func CheckHessian(reg *spec.Registry[spec.Rat], tc *casegen.TypedCase, v, w []spec.Tensor[spec.Rat]) error {
	rc := tc.Recipe
	fail := func(f *counterexample.Failure) error {
		f.Scalar, f.Graph, f.Inputs, f.Node = "rat", recipeText(rc), tc.Inputs, -1
		return f
	}
	g, err := casegen.BuildTyped(rc, reg)
	if err != nil {
		return err
	}
	gd, err := typedgraph.ToDual(g)
	if err != nil {
		return err
	}
	h, err := typedgraph.HessianGraph(gd, tc.Inputs)
	if err != nil {
		return fmt.Errorf("hessian: %w", err)
	}
	for i := range h {
		for j := range h {
			ni, nj := rc.Ctx[i].Size(), rc.Ctx[j].Size()
			for a := 0; a < ni; a++ {
				for b := 0; b < nj; b++ {
					x, y := h[i][j].Data[a*nj+b], h[j][i].Data[b*ni+a]
					if !x.Same(y) {
						return fail(&counterexample.Failure{Law: string(HessianSymmetry), Sides: fmt.Sprintf("H[%d][%d][%d,%d] vs H[%d][%d][%d,%d]", i, j, a, b, j, i, b, a),
							Element: a*nj + b, LHS: x.String(), RHS: y.String()})
					}
				}
			}
		}
	}
	hv, err := typedgraph.HVPGraph(gd, tc.Inputs, v)
	if err != nil {
		return fmt.Errorf("hvp: %w", err)
	}
	hw, err := typedgraph.HVPGraph(gd, tc.Inputs, w)
	if err != nil {
		return fmt.Errorf("hvp: %w", err)
	}
	lhs, err := spec.DotList(hv, w)
	if err != nil {
		return err
	}
	rhs, err := spec.DotList(v, hw)
	if err != nil {
		return err
	}
	if !lhs.Same(rhs) {
		return fail(&counterexample.Failure{Law: string(HVPSymmetry), Sides: "⟨Hv,w⟩ vs ⟨v,Hw⟩", Element: -1, LHS: lhs.String(), RHS: rhs.String(),
			Extra: fmt.Sprintf("v: %s\nw: %s", counterexample.FormatTensors(v), counterexample.FormatTensors(w))})
	}
	// The HVP agrees with the assembled Hessian: (Hv)_i = Σ_j H[i][j]·v_j.
	for i := range h {
		ni := rc.Ctx[i].Size()
		for a := 0; a < ni; a++ {
			s := spec.Rat{}
			for j := range h {
				nj := rc.Ctx[j].Size()
				for b := 0; b < nj; b++ {
					s = s.Add(h[i][j].Data[a*nj+b].Mul(v[j].Data[b]))
				}
			}
			if !s.Same(hv[i].Data[a]) {
				return fail(&counterexample.Failure{Law: string(HVPSymmetry), Sides: fmt.Sprintf("(Hv)[%d] from hvp vs from the Hessian", i), Element: a,
					LHS: hv[i].Data[a].String(), RHS: s.String(), Extra: fmt.Sprintf("v: %s", counterexample.FormatTensors(v))})
			}
		}
	}
	return nil
}

// CheckTypedCrossPath decides, on a typed recipe over the scalar T, that
// the eager tape and the typed graph agree: forward values entry by entry,
// and the cotangents of the dense-all sweep from the result with seed
// (tape.BackwardAll vs the compiled plan's Exec.Backward) on every entry
// that requires a gradient on the tape. Values are compared with Same —
// exactly over Rat, bit for bit over the float scalars (any NaN equals any
// NaN).
func CheckTypedCrossPath[T spec.Scalar[T]](reg *spec.Registry[T], tc *casegen.TypedCase, seed spec.Tensor[spec.Rat]) error {
	rc := tc.Recipe
	fail := func(f *counterexample.Failure) error {
		f.Law, f.Graph, f.Inputs = string(CrossPath), recipeText(rc), tc.Inputs
		return f
	}
	in := casegen.ConvertInputs[T](tc.Inputs)
	sd := spec.Convert(seed, irsem.FromRat[T])
	tp, err := casegen.RecordTape(rc, reg, in)
	if err != nil {
		return err
	}
	g, err := casegen.BuildTyped(rc, reg)
	if err != nil {
		return err
	}
	e, err := g.Compile()
	if err != nil {
		return err
	}
	if _, err := e.Forward(in); err != nil {
		return fmt.Errorf("typed graph forward: %w", err)
	}
	vals, err := e.Values()
	if err != nil {
		return err
	}
	for id := range vals {
		tv, _ := tp.Value(id)
		if f := counterexample.TensorDiff(string(CrossPath), "tape vs typed-graph forward", id, rc.OpOf(id), tv, vals[id], diffrun.SameBits[T]); f != nil {
			return fail(f)
		}
	}
	tg, err := tp.BackwardAll(rc.Result, sd)
	if err != nil {
		return fmt.Errorf("tape backward: %w", err)
	}
	gg, err := e.Backward(sd)
	if err != nil {
		return fmt.Errorf("typed graph backward: %w", err)
	}
	for id := range tg {
		nd, _ := tp.Node(id)
		if !nd.RequiresGrad {
			continue
		}
		if f := counterexample.TensorDiff(string(CrossPath), "tape vs typed-graph gradient", id, rc.OpOf(id), tg[id], gg[id], diffrun.SameBits[T]); f != nil {
			f.Extra = fmt.Sprintf("seed: %v", seed)
			return fail(f)
		}
	}
	return nil
}

// CheckIRCrossPath decides cross-path agreement on a generated IR graph:
// diffrun.DiffIR over every scalar that applies, with the seed given (nil: ones),
// must agree everywhere. The first disagreement is returned as a
// *counterexample.Failure carrying the recipe.
func CheckIRCrossPath(gc *casegen.GraphCase, seed *spec.Tensor[spec.Rat]) (*diffrun.DiffReport, error) {
	rep, err := diffrun.DiffIR(gc.Graph, gc.Payload, gc.Input, diffrun.DiffOptions{Seed: seed})
	if err != nil {
		return nil, err
	}
	if c := rep.First(); c != nil {
		f := *c.Failure
		f.Graph = recipeText(gc.Recipe)
		return rep, &f
	}
	return rep, nil
}
