package fpbound

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// DefaultSweepWork is the default Options.SweepWork: the number of
// interval operations (estimated from the nodes' declared work) that the
// first-order bound may spend on the sweeps that tighten intermediate
// boxes. The sweeps of the output's own elements are always run. A unit
// costs about 35–50 ns of one core as one interval operation of a VJP
// run (matmul, slice, reshape Jacobians of the zoo's 2-block GPT-2,
// 2026-12-03, shared 2-core machine at load 11–18); a dense sweep's
// units (doc.go, "Dense sweep") are an estimate from declared work that
// undercounts its products through matmul nodes, whose dense Jacobians
// cost n_k·n_q multiply-adds per row (measured 0.4–1 ns each, and
// 27–70 ns per diagonal entry or visited element): on that GPT-2
// SharpBounds at the default spends about 12 s of CPU, 2²⁷·45 ns ≈ 6 s
// (docs/bounds.md, sweep31). The output's sweeps may spend up to twice
// it in all, and the fallback sweeps of the nodes past it (doc.go,
// "Cuts") half of it more, from an allowance of their own.
const DefaultSweepWork = 1 << 27

// Sharp is one output element's enclosure under both sound bounds of the
// package (doc.go, "First-order bound"): Bound is the smaller of Classic
// and FirstOrder, Estimate a probabilistic figure that decides nothing.
type Sharp struct {
	Enclosure
	// Classic is the bound of the Err algebra (Bounds).
	Classic float64
	// FirstOrder is the first-order bound (+∞ when none was found; the
	// reason is FirstOrderReason).
	FirstOrder float64
	// FirstOrderReason says why FirstOrder is +∞ ("" when finite).
	FirstOrderReason string
	// Estimate is Hoeffding's figure for independent local errors: with
	// probability at least 1 − 10⁻³ over random signs of the local errors,
	// |v̂ − x| ≤ Estimate (doc.go, "Estimate"). Reported, never deciding.
	Estimate float64
	// Centre names the evaluation that encloses the exact value (Exact):
	// CentreExact, CentreBall or CentreInterval, the same for every
	// element of one evaluation (doc.go, "The exact enclosure").
	Centre string
	// CentreFallback is the exact-arithmetic budget the rational
	// evaluation ran past, where the graph is exact over spec.Rat but its
	// centre is not CentreExact ("" otherwise).
	CentreFallback string
}

// Decider names the bound that decided: "first-order", "classic", or
// "none" when both are +∞.
func (s Sharp) Decider() string {
	switch {
	case math.IsInf(s.Bound, 1):
		return "none"
	case s.FirstOrder <= s.Classic:
		return "first-order"
	}
	return "classic"
}

// hoeffding is √(2·ln(2/δ)) for δ = 10⁻³, rounded up: P(|Σ cᵢεᵢ| ≥
// λ·√Σcᵢ²) ≤ 2·exp(−λ²/2) = δ for independent mean-zero εᵢ ∈ [−1, 1].
const hoeffding = 3.9

// SharpBounds is Bounds with the first-order bound beside the classic
// one: per element of the output, the exact enclosure (the exact rational
// value where the graph is exact over spec.Rat, else an interval
// evaluation intersected with the Err algebra's), both bounds, the smaller
// as Bound, and the estimate.
func SharpBounds(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Sharp, error) {
	return sharp[binary32](g, p, input, o)
}

// SharpBounds64 is SharpBounds for binary64 evaluations.
func SharpBounds64(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Sharp, error) {
	return sharp[binary64](g, p, input, o)
}

// classicTwice restores the old path, for TestClassicOnce only (which
// requires both to give the same bits): the classic enclosures from
// Bounds' own evaluation, and firstOrder evaluating the classic bounds of
// every node again instead of reading SharpBounds' evaluation.
var classicTwice bool

// foNode is one node's state in the first-order bound.
type foNode struct {
	app   *irsem.Application
	box   []spec.Interval // B_j: every value a (partially) perturbed evaluation holds
	steps []spec.Tensor[adj]
	args  [][]spec.Tensor[adj] // every step's argument values, for the sweeps
	local []float64            // e_j per element; nil: all zero
	x     []spec.Interval      // the exact enclosure
	e     []float64            // the current bound E_j per element
	fo    []float64            // the first-order bound F_j per element (nil: not swept)
	foOK  bool                 // every F_j is finite: a sweep may cut at j (sweep.go)
	lvl   int                  // the non-diagonal cuts below F_j (sweep.go, cutLevel)
	err   bool                 // some ancestor (or the node) has a local error
	kids  int
	// fallback: F_j is the fallback sweep's (sweep.go, cutAll), or an
	// elementwise sweep's that stopped at such a node.
	fallback bool
	// pass, passW (cast37, round_cast.go castLocals): a cast node's
	// elements under the identity treatment, and their box widening.
	pass  []bool
	passW []float64
}

func sharp[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Sharp, error) {
	k, err := o.ulps()
	if err != nil {
		return nil, err
	}
	if o.SweepWork < 0 {
		return nil, fmt.Errorf("fpbound: SweepWork %d < 0", o.SweepWork)
	}
	if _, err := checkBoundsArgs(g, p, input, o); err != nil {
		return nil, err
	}
	return sharpFrom[F](g, p, input, o, k, evalClassic[F](g, p, input, o, k))
}

// sharpFrom is sharp after the one classic evaluation ce: the classic
// enclosures read its output node, the first-order bound its every node.
func sharpFrom[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options, k int, ce *classicEval[F]) ([]Sharp, error) {
	var out spec.Tensor[ErrOf[F]]
	if ce.err == nil {
		out = ce.all[g.OutputID]
	}
	classic, err := classicEnclosures(g, out, ce.und, ce.err)
	if classicTwice {
		classic, err = bounds[F](g, p, input, o)
	}
	if err != nil {
		return nil, err
	}
	res := make([]Sharp, len(classic))
	for i, c := range classic {
		res[i] = Sharp{Enclosure: c, Classic: c.Bound, FirstOrder: inf, Estimate: inf}
	}
	cen := centre{kind: CentreInterval}
	fo, reason, err := firstOrder[F](g, p, input, o, k, ce, &cen)
	if err != nil {
		return nil, err
	}
	for i := range res {
		r := &res[i]
		r.Centre, r.CentreFallback = cen.kind, cen.fallback
		if fo == nil {
			r.FirstOrderReason = reason
			continue
		}
		f := fo[i]
		r.FirstOrder, r.FirstOrderReason, r.Estimate = f.bound, f.reason, f.estimate
		if x, ok := intersect(r.Exact, f.x); ok {
			r.Exact = x
		}
		r.Bound = min(r.Classic, r.FirstOrder)
		if !math.IsInf(r.Bound, 1) {
			r.Reason = ""
		}
	}
	return res, nil
}

func intersect(a, b spec.Interval) (spec.Interval, bool) {
	x := spec.Interval{Lo: max(a.Lo, b.Lo), Hi: min(a.Hi, b.Hi)}
	return x, x.Lo <= x.Hi
}

// foOut is one output element's first-order result.
type foOut struct {
	x        spec.Interval
	bound    float64
	estimate float64
	reason   string
}

// firstOrder computes the first-order bound of every output element
// (doc.go, "First-order bound"). A nil result with a reason means no
// first-order bound exists for this evaluation (every element then keeps
// the classic bound); an error is a malformed graph or a resource limit.
// ce is the classic evaluation SharpBounds ran (its values are round 0 of
// the boxes; firstOrder does not evaluate over Err again).
// The centre of the exact enclosures is stored in *cen once they are
// known.
func firstOrder[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options, k int, ce *classicEval[F], cen *centre) ([]foOut, string, error) {
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, "", err
	}
	nodes := newFoNodes(g, apps)
	// The exact enclosures: over spec.Rat when every step is exact, else
	// the ball centre, else over spec.Interval.
	used, err := exactEnclosures(g, p, input, apps, nodes)
	if err != nil {
		reason, err := failed(err, "the exact enclosure failed: "+err.Error())
		return nil, reason, err
	}
	*cen = used

	evalMu.Lock()
	defer evalMu.Unlock()
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	defer useFormats(o)() // per-node formats (format_mixed.go)
	adjVoid.Store(0)

	// The classic bounds of every node (round 0 of the boxes): SharpBounds'
	// own evaluation, or (classicTwice, tests only) a second one.
	all, und, err := ce.all, ce.und, ce.err
	if classicTwice {
		before := undecided.Load()
		all, err = denoteAll[F](g, p, irsem.ConvertTensor[ErrOf[F]](input), errRegistry[F](o.Profile))
		und = undecided.Load() - before
	}
	if err != nil {
		reason, err := failed(err, "the evaluation failed: "+err.Error())
		return noBound(g, nodes, reason), "", err
	}
	// An undecided comparison voids the classic values of its node and of
	// every descendant; their round-0 boxes are then the whole line
	// (doc.go, "Undecided classic comparisons").
	var tainted []bool
	if und != 0 {
		if tainted, err = taintedNodes[F](g, p, input, errRegistryOrDefault[F](o.Profile)); err != nil {
			reason, err := failed(err, "the evaluation failed: "+err.Error())
			return noBound(g, nodes, reason), "", err
		}
		if tainted == nil {
			return noBound(g, nodes, "a comparison a registry rule branches on could not be decided"), "", nil
		}
	}
	roundZeroBoxesExcept(nodes, all, tainted)

	r := newFoRun[F](g, input, apps, nodes, o)
	if used.kind == CentreInterval && o.binary32 == nil {
		// The float64 centre (doc.go, "The exact enclosure"): past the
		// rational and ball centres, in place of the interval one where
		// its sweeps run.
		r.c64 = newCentre64(g, p, input)
	}
	for j := range nodes {
		enterNode(j) // node j's local error in its own format (format_mixed.go)
		reason, err := r.local(j)
		leaveNode()
		if reason != "" || err != nil {
			return noBound(g, nodes, reason), "", err
		}
		r.local64(j)
		if g.Nodes[j].Kind.Op != irsem.OpInput {
			if reason, err := r.forward(j); reason != "" || err != nil {
				return noBound(g, nodes, reason), "", err
			}
		}
		if err := r.sweeps(j); err != nil {
			return nil, "", err
		}
		r.seen(j)
		if err := r.centre64(j); err != nil {
			return nil, "", err
		}
	}
	if r.c64 != nil && r.c64.output {
		cen.kind = CentreFloat64
	}
	if centre64Seen != nil {
		centre64Seen(nodes)
	}
	return r.out, "", nil
}

// noBound is firstOrder's result when no first-order bound exists after
// the exact enclosures are known (a reason; nil for a resource limit):
// every element keeps the classic bound, and its exact enclosure is still
// intersected with the output's.
func noBound(g *irsem.Graph, nodes []foNode, reason string) []foOut {
	if reason == "" {
		return nil
	}
	xs := nodes[g.OutputID].x
	out := make([]foOut, len(xs))
	for m, x := range xs {
		out[m] = foOut{x: x, bound: inf, estimate: inf, reason: reason}
	}
	return out
}

// failed returns err when it is a resource limit, else reason: the
// evaluation has no first-order bound, for that reason.
func failed(err error, reason string) (string, error) {
	if limits.IsLimit(err) {
		return "", err
	}
	return reason, nil
}

// A foRun is the node-by-node pass of firstOrder, after the classic
// bounds: each node's local error, forward enclosure and sweeps.
type foRun[F format] struct {
	g         *irsem.Graph
	input     irsem.RatTensor
	apps      []irsem.Application
	nodes     []foNode
	reg       *spec.Registry[adj]
	regE      *spec.Registry[ErrOf[F]]
	budget    int64 // the sweeps' work budget (Options.SweepWork)
	spent     int64
	cutSpent  int64 // the fallback sweeps' own spending (fallback), at most budget/2
	fusedVals []spec.Tensor[ErrOf[F]]
	jac       [][]jac   // each node's local Jacobians, once computed (sweep.go)
	pool      planePool // the dense sweeps' free planes (sweep.go)
	denseKept int       // the elements of the Jacobians in jac
	prefix    []int64   // prefixWork of every node
	swept     int       // the intermediate nodes swept so far (target)
	lastFull  int       // the last node swept at level 0 with finite bounds (−1: none)
	out       []foOut   // the output's elements, once swept
	// c64 is the float64 centre's state (firstorder_centre64.go; nil:
	// not used); gmode is set while the sweeps compute its G_j.
	c64   *centre64
	gmode bool
	// floors: each node's sign floors (box_sign.go; nil: none known).
	floors [][]float64
}

// local computes node j's local error e_j, or fuses a pending sum into
// its one child, and whether an error reaches j. A non-empty reason
// means no first-order bound exists.
func (r *foRun[F]) local(j int) (string, error) {
	g, nd := r.g, &r.nodes[j]
	loc, reason, err := r.localMin(j)
	if reason != "" || err != nil {
		return reason, err
	}
	pending := false
	for _, v := range loc.Data {
		if v.n >= 2 {
			pending = true
			break
		}
	}
	if pending && nd.kids == 1 && j != g.OutputID && !nd.app.Source && g.Nodes[j].Kind.Op != irsem.OpInput {
		r.fusedVals[j] = loc // e_j = 0: the child charges the sum
	} else {
		for m, v := range loc.Data {
			c := v.close()
			if c.e != 0 {
				if nd.local == nil {
					nd.local = make([]float64, len(loc.Data))
				}
				nd.local[m] = c.e
			}
		}
	}
	r.castLocals(j) // a cast as the identity plus δ(x) (round_cast.go)
	r.recordFloor(j, loc)
	nd.err = nd.local != nil
	for _, q := range g.Nodes[j].Parents {
		nd.err = nd.err || r.nodes[q].err
	}
	return "", nil
}

// localMin is node j's local values over Err (localErr), each element
// the smaller of two bounds of the same local error (doc.go, "Sums closed
// before a repeated read"): with every fused parent's pending sums
// carried into j's formula, and with the pending sums of each fused
// parent whose every element j reads in no slot or in two or more
// (rereadsAll) closed first. A comparison undecided in one of the two
// evaluations leaves the other; undecided in both, no first-order bound
// exists (the reason).
func (r *foRun[F]) localMin(j int) (spec.Tensor[ErrOf[F]], string, error) {
	g := r.g
	eval := func(fused []spec.Tensor[ErrOf[F]]) (spec.Tensor[ErrOf[F]], bool, string, error) {
		before := undecided.Load()
		loc, err := localErr[F](g, j, r.apps, r.nodes, fused, r.input, r.regE)
		if undecided.Load() != before {
			return loc, false, "", nil
		}
		if err != nil {
			reason, err := failed(err, fmt.Sprintf("node %d (%s): the local error failed: %v", j, g.Nodes[j].Kind.Op, err))
			return loc, false, reason, err
		}
		return loc, true, "", nil
	}
	undecidedReason := fmt.Sprintf("node %d (%s): a comparison in its formula could not be decided on its input boxes", j, g.Nodes[j].Kind.Op)
	loc, ok, reason, err := eval(r.fusedVals)
	if reason != "" || err != nil {
		return loc, reason, err
	}
	closed := r.closedParents(j)
	if closed == nil {
		if !ok {
			return loc, undecidedReason, nil
		}
		return loc, "", nil
	}
	loc2, ok2, reason, err := eval(closed)
	switch {
	case reason != "" || err != nil:
		return loc2, reason, err
	case !ok && !ok2:
		return loc, undecidedReason, nil
	case !ok:
		return loc2, "", nil
	case !ok2:
		return loc, "", nil
	}
	for m, v := range loc2.Data {
		if v.close().e < loc.Data[m].close().e {
			loc.Data[m] = v
		}
	}
	return loc, "", nil
}

// closeBeforeRereads turns on "Sums closed before a repeated read"
// (doc.go); shareRepeatedSlots "Repeated parent slots". Both are true but
// in tests, which turn them off to compare with the bound before them.
var closeBeforeRereads, shareRepeatedSlots = true, true

// closedParents returns r.fusedVals with the pending sums of every fused
// parent q of node j that j rereads (rereadsAll(j, q)) closed, or nil when
// there is none (doc.go, "Sums closed before a repeated read").
func (r *foRun[F]) closedParents(j int) []spec.Tensor[ErrOf[F]] {
	if !closeBeforeRereads {
		return nil
	}
	var out []spec.Tensor[ErrOf[F]]
	for _, q := range r.g.Nodes[j].Parents {
		// A fused parent has one child slot (kids = 1), so no q repeats.
		if r.fusedVals[q].Data == nil || !rereadsAll(r.g, r.apps, j, q) {
			continue
		}
		if out == nil {
			out = slices.Clone(r.fusedVals)
		}
		d := make([]ErrOf[F], len(r.fusedVals[q].Data))
		for m, v := range r.fusedVals[q].Data {
			d[m] = v.close()
		}
		out[q] = spec.Tensor[ErrOf[F]]{Shape: r.fusedVals[q].Shape, Data: d}
	}
	return out
}

// forward computes the step values of node j over its parents' boxes,
// and narrows its box to the forward enclosure f_j(boxes) ± e_j.
func (r *foRun[F]) forward(j int) (string, error) {
	g, nd := r.g, &r.nodes[j]
	fwd, args, err := forwardSteps(g, j, r.nodes, r.reg)
	if err != nil {
		return failed(err, fmt.Sprintf("node %d (%s): the interval evaluation failed: %v", j, g.Nodes[j].Kind.Op, err))
	}
	if adjVoid.Load() != 0 && len(fwd) == 1 && r.castAccounted(j, fwd[0]) {
		adjVoid.Store(0) // every jump is a cast's under the identity treatment (round_cast.go)
	}
	if adjVoid.Load() != 0 {
		return fmt.Sprintf("node %d (%s): its input boxes contain a discontinuity of its formula", j, g.Nodes[j].Kind.Op), nil
	}
	nd.steps, nd.args = fwd, args
	if len(fwd) == 0 {
		return "", nil
	}
	last := fwd[len(fwd)-1]
	for m := range nd.box {
		el := 0.0
		if nd.local != nil {
			el = nd.local[m]
		}
		fb := widen(last.Data[m].iv, el)
		if nd.pass != nil && nd.pass[m] {
			fb = r.castBox(j, m) // round_cast.go
		}
		if b, ok := intersect(nd.box[m], fb); ok {
			nd.box[m] = b
		}
	}
	r.applyFloor(j)
	return "", nil
}

// newFoNodes is one node state per graph node: its application and the
// number of its children (parent slots that read it).
func newFoNodes(g *irsem.Graph, apps []irsem.Application) []foNode {
	nodes := make([]foNode, len(g.Nodes))
	for i := range nodes {
		nodes[i].app = &apps[i]
	}
	for i := range g.Nodes {
		for _, q := range g.Nodes[i].Parents {
			nodes[q].kids++
		}
	}
	return nodes
}

// roundZeroBoxes sets round 0 of every node's boxes from the classic
// bounds all: the exact enclosure x intersected with the Err value's
// enclosure, its error bound e, and the box x ± e that holds every value
// an evaluation within the bound can take.
func roundZeroBoxes[F format](nodes []foNode, all []spec.Tensor[ErrOf[F]]) {
	roundZeroBoxesExcept(nodes, all, nil)
}

// roundZeroBoxesExcept is roundZeroBoxes, except that a node marked in
// tainted (a classic value that rests on an undecided comparison) gets
// the whole line as its box and +∞ as its bound, and its exact enclosure
// is not intersected with the classic one.
func roundZeroBoxesExcept[F format](nodes []foNode, all []spec.Tensor[ErrOf[F]], tainted []bool) {
	for i := range nodes {
		nd := &nodes[i]
		nd.e = make([]float64, len(all[i].Data))
		nd.box = make([]spec.Interval, len(all[i].Data))
		if tainted != nil && tainted[i] {
			for m := range nd.e {
				nd.e[m], nd.box[m] = inf, spec.Interval{Lo: math.Inf(-1), Hi: inf}
			}
			continue
		}
		for m, v := range all[i].Data {
			c := v.close()
			if x, ok := intersect(nd.x[m], c.x); ok {
				nd.x[m] = x
			}
			nd.e[m] = c.e
			nd.box[m] = widen(nd.x[m], c.e)
		}
	}
}

// newFoRun is the state of one first-order run over the nodes' round-0
// boxes: the one constructor, so every caller (firstOrder, and the
// gradient bound's forwardBoxes) starts the sweeps from the same state.
func newFoRun[F format](g *irsem.Graph, input irsem.RatTensor, apps []irsem.Application, nodes []foNode, o Options) *foRun[F] {
	n := len(g.Nodes)
	r := &foRun[F]{
		g: g, input: input, apps: apps, nodes: nodes,
		reg: spec.Default[adj](), regE: errRegistryOrDefault[F](o.Profile),
		budget:    o.SweepWork,
		fusedVals: make([]spec.Tensor[ErrOf[F]], n),
		jac:       make([][]jac, n),
	}
	if r.budget == 0 {
		r.budget = DefaultSweepWork
	}
	r.prefix, r.lastFull = prefixWorks(g), -1
	return r
}

// sweeps runs the sweeps from every element of node j within the
// budget: F_j and E_j, and the box X_j ± E_j; at the output, the results.
// The dense sweep (sweep.go) runs where it applies, the interval sweep of
// each element elsewhere.
func (r *foRun[F]) sweeps(j int) error {
	g, nd := r.g, &r.nodes[j]
	isOut := j == g.OutputID
	if isOut {
		if !r.gmode {
			r.out = make([]foOut, len(nd.e))
		}
	} else if !nd.err {
		return nil
	}
	// An interval sweep from one element of j runs the VJP rule of every
	// node it visits once: sweepWork(j, 0), not the whole prefix's
	// declared work (unet36_budget.go).
	per := r.intervalSweepWork(j)
	target := r.target(j)
	if !isOut && target >= 1 && r.fallbackParent(j) {
		// An elementwise sweep that stops at a node only the fallback
		// bounded: without the fallback it would not run here (its
		// parent has no bounds), so it spends the fallback's allowance,
		// not the budget, and is the fallback sweep (the same cut).
		return r.fallback(j)
	}
	cost := int64(len(nd.e)) * per
	// The dense sweep's estimate is the declared work of the nodes it
	// visits (sweepWork: none for a node no error reaches).
	if dc := max(int64(len(nd.e))*r.sweepWork(j, target)/denseDiscount, 1); r.spent+dc <= r.budget || (isOut && r.spent+dc <= 2*r.budget) {
		b, ss, resid, lvl, reason, err := r.denseSweep(j, target)
		if _, na := err.(errDense); err != nil && !na {
			return err
		}
		if err == nil {
			r.spent += dc
			r.record(j, b, ss, resid, reason)
			r.finish(j, target, lvl)
			if sweepSeen != nil && reason == "" && !r.gmode {
				sweepSeen(j, r.nodes, b)
			}
			return nil
		}
	}
	if !isOut && target >= 1 {
		// Too large for the dense sweep: the same cut, row by row.
		if ok, err := r.elementwiseCut(j); ok || err != nil {
			return err
		}
	}
	if !isOut {
		// Too large for the dense sweep, diagonal to every erroneous
		// parent: the cut at all of them, row by row (unet38_cut.go).
		if ok, err := r.parentsCut(j); ok || err != nil {
			return err
		}
	}
	if !isOut && r.spent+cost > r.budget {
		return r.fallback(j)
	}
	if !isOut {
		r.spent += cost
	}
	b := make([]float64, len(nd.e))
	ss := make([]float64, len(nd.e))
	reasons := make([]string, len(nd.e))
	for m := range nd.e {
		if isOut {
			// The output's sweeps may spend up to twice the budget in
			// all; past it an element keeps the classic bound.
			if r.spent+per > 2*r.budget {
				b[m], reasons[m] = inf, "the sweep budget (Options.SweepWork) is spent"
				continue
			}
			r.spent += per
		}
		var err error
		b[m], ss[m], reasons[m], err = sweep(g, r.nodes, j, m, r.reg)
		if err != nil {
			if limits.IsLimit(err) {
				return err
			}
			b[m], reasons[m] = inf, err.Error()
		}
	}
	for m := range b {
		r.record1(j, m, b[m], ss[m], 0, reasons[m])
	}
	r.finish(j, 0, 0)
	return nil
}

// fallback runs the fallback sweep of node j (sweep.go, cutAll) where no
// other sweep of j fits the budget: it stops at every parent with finite
// bounds, so it costs about o_j × the declared work of j and of its
// parents without them, and the local Jacobians it computes (a later
// sweep reuses them). It spends its own allowance, half the budget
// (cutSpent; one node's Jacobians may pass it), not the budget the other
// sweeps share, and so does an elementwise sweep that stops at a node it
// bounded (sweeps): the budget is spent only by the sweeps that would
// run without it (less the Jacobians the fallback computed for them), so
// the sweeps spend about 2.5 budgets at most in all.
func (r *foRun[F]) fallback(j int) error {
	nd := &r.nodes[j]
	if noCutFallback || !nd.err {
		return nil
	}
	dc := max(int64(len(nd.e))*r.sweepWork(j, cutAll)/denseDiscount, 1)
	if r.cutSpent+dc > r.budget/2 {
		return nil
	}
	// The local Jacobians this sweep computes (jacobians charges r.spent)
	// are charged to the allowance too.
	sp := r.spent
	b, ss, resid, lvl, reason, err := r.denseSweep(j, cutAll)
	r.cutSpent += r.spent - sp
	r.spent = sp
	if _, na := err.(errDense); na {
		return nil
	} else if err != nil {
		return err
	}
	r.cutSpent += dc
	r.record(j, b, ss, resid, reason)
	r.finish(j, cutAll, lvl)
	nd.fallback = true
	if sweepSeen != nil && reason == "" && !r.gmode {
		sweepSeen(j, r.nodes, b)
	}
	return nil
}

// fallbackParent reports whether node j's elementwise sweep (target)
// stops at a parent that only the fallback sweep bounded.
func (r *foRun[F]) fallbackParent(j int) bool {
	q, ok := r.elementwise(j)
	return ok && r.nodes[q].fallback
}

// target returns the cut level node j's dense sweep may reach (doc.go,
// "Cuts"): 0, a sweep without cuts, at the output and at every stride-th
// swept node (stride ⌈√nodes⌉), 1 (one non-diagonal cut, at a level-0
// node) elsewhere. (Its work is sweepWork's, sweep.go.)
func (r *foRun[F]) target(j int) int {
	if j == r.g.OutputID {
		return 0
	}
	if !sweepNonDiagonal {
		// Only the cut at an elementwise node's one erroneous parent:
		// the sweep processes node j alone, carries nothing further.
		if _, ok := r.elementwise(j); ok {
			return 1
		}
		return 0
	}
	stride := sweepStride
	if stride == 0 {
		stride = max(1, int(math.Ceil(math.Sqrt(float64(len(r.nodes))))))
	}
	r.swept++
	if (r.swept-1)%stride == 0 || r.lastFull < 0 {
		return 0
	}
	return 1
}

// elementwise reports the one parent q an error reaches when node j's
// local Jacobian to it is diagonal, or has at most one non-zero entry per
// row (a node that moves or selects values), and q's bounds are all
// finite (a sweep from j then stops at q at once, losing nothing).
func (r *foRun[F]) elementwise(j int) (int, bool) {
	q := -1
	for _, p := range r.g.Nodes[j].Parents {
		if r.nodes[p].err {
			if q >= 0 && p != q {
				return 0, false
			}
			q = p
		}
	}
	if q < 0 || !r.nodes[q].foOK || r.nodes[q].lvl > 1 || sweepStride == 1 {
		return 0, false
	}
	js, reason, err := r.jacobians(j)
	if reason != "" || err != nil {
		return 0, false // the sweep itself meets the same answer
	}
	for pt, p := range r.g.Nodes[j].Parents {
		if p == q && !js[pt].diag && !js[pt].zero && !js[pt].sel {
			return 0, false
		}
	}
	return q, true
}

// noCutFallback (tests only) turns the fallback sweep (sweep.go, cutAll)
// off: a node past the budget then keeps the interval sweep or none.
var noCutFallback bool

// finish records node j's cut level lvl and whether later sweeps may cut
// at it (every F_j finite); a level-0 node so swept is the next window's
// floor.
func (r *foRun[F]) finish(j, target, lvl int) {
	nd := &r.nodes[j]
	nd.lvl, nd.foOK = lvl, nd.fo != nil
	for _, f := range nd.fo {
		if math.IsInf(f, 1) {
			nd.foOK = false
			break
		}
	}
	if target == 0 && nd.foOK {
		r.lastFull = j
	}
}

// record stores a dense sweep's results for node j (a reason: every
// element +∞; an element whose bound is +∞ gets its own reason).
func (r *foRun[F]) record(j int, b, ss, resid []float64, reason string) {
	for m := range r.nodes[j].e {
		switch {
		case reason != "":
			r.record1(j, m, inf, inf, 0, reason)
		case math.IsInf(b[m], 1):
			r.record1(j, m, inf, inf, 0, fmt.Sprintf("node %d: an adjoint is unbounded on the boxes", j))
		default:
			r.record1(j, m, b[m], ss[m], resid[m], "")
		}
	}
}

// record1 stores element m's first-order bound b of node j: F_j, E_j and
// the box, and at the output the result (estimate: Hoeffding's figure for
// Σ(mag A·ē)² = ss, plus the settled residuals resid).
func (r *foRun[F]) record1(j, m int, b, ss, resid float64, reason string) {
	nd := &r.nodes[j]
	if nd.fo == nil {
		nd.fo = make([]float64, len(nd.e))
	}
	nd.fo[m] = b
	if r.gmode {
		return // G_j (firstorder_centre64.go): no box, bound or result
	}
	if j == r.g.OutputID {
		r.out[m] = foOut{x: nd.x[m], bound: b, estimate: inf, reason: reason}
		if !math.IsInf(b, 1) {
			r.out[m].estimate = min(b, addUp(mulUp(hoeffding, up(math.Sqrt(ss))), resid))
		}
	}
	if b < nd.e[m] {
		nd.e[m] = b
		if bx, ok := intersect(nd.box[m], widen(nd.x[m], b)); ok {
			nd.box[m] = bx
		}
	}
}

// widen returns [x.Lo − e, x.Hi + e] rounded outward (the whole line for
// e = +∞).
func widen(x spec.Interval, e float64) spec.Interval {
	if math.IsInf(e, 1) || !(e >= 0) {
		return spec.Interval{Lo: math.Inf(-1), Hi: inf}
	}
	if e == 0 {
		return x
	}
	return spec.Interval{Lo: subDown(x.Lo, e), Hi: addUpSigned(x.Hi, e)}
}

// prefixWork estimates the interval operations of one sweep from node j:
// the declared work of the nodes up to j.
func prefixWork(g *irsem.Graph, j int) int64 {
	var w int64
	for i := 0; i <= j; i++ {
		nd := &g.Nodes[i]
		in := make([]spec.Shape, len(nd.Parents))
		for t, q := range nd.Parents {
			in[t] = g.Nodes[q].Shape
		}
		w += irsem.DeclaredWork(nd, in)
	}
	return max(w, 1)
}

// prefixWorks is prefixWork(g, j) for every node j, in one pass.
func prefixWorks(g *irsem.Graph) []int64 {
	ws := make([]int64, len(g.Nodes))
	var w int64
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		in := make([]spec.Shape, len(nd.Parents))
		for t, q := range nd.Parents {
			in[t] = g.Nodes[q].Shape
		}
		w += irsem.DeclaredWork(nd, in)
		ws[i] = max(w, 1)
	}
	return ws
}

// The centres of the exact enclosure (Sharp.Centre): which evaluation
// encloses every node's exact value (doc.go, "The exact enclosure").
const (
	// CentreExact: the exact rational value (spec.Rat), in the nearest
	// float64 interval.
	CentreExact = "exact"
	// CentreBall: BallCentre's high-precision ball enclosure.
	CentreBall = "ball"
	// CentreFloat64: the float64 evaluation ŷ₆₄ with its binary64
	// first-order bound G, ŷ₆₄ ± G (doc.go, "The exact enclosure"),
	// intersected with the interval evaluation.
	CentreFloat64 = "float64"
	// CentreInterval: the float64 interval evaluation (spec.Interval), or
	// the classic Err algebra's own enclosure where the first-order pass
	// did not run.
	CentreInterval = "interval"
)

// centre is the centre exactEnclosures used, and why not the exact one
// where the graph is exact over spec.Rat but its evaluation there ran
// past an exact-arithmetic budget ("" otherwise).
type centre struct {
	kind, fallback string
}

// ratBudget reports that err is one of the exact-arithmetic budgets
// (rat-work, rat-bits, rat-bits-total): limits on the cost of evaluating
// over spec.Rat, not on the input itself, so the enclosure falls back to
// the ball or interval evaluation, which bounds the same exact values.
func ratBudget(err error) bool {
	var le *limits.Error
	return errors.As(err, &le) && strings.HasPrefix(le.Limit, "rat-")
}

// exactEnclosures sets nodes[i].x for every node: the exact value over
// spec.Rat when every primitive of the graph is exact (and the evaluation
// succeeds), else the ball centre (BallCentre) within its work cap, else
// the interval evaluation. Each is an enclosure of the node's exact value
// (doc.go, "Boxes"). A graph exact over Rat whose rational evaluation
// exceeds an exact-arithmetic budget (ratBudget) gets the ball, else the
// interval centre, for the whole graph, never a refusal; every other
// resource limit is returned.
func exactEnclosures(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, apps []irsem.Application, nodes []foNode) (centre, error) {
	var used centre
	ball := true
	if ratExact(apps) {
		all, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Rat](input))
		if err == nil {
			for i := range nodes {
				nodes[i].x = make([]spec.Interval, len(all[i].Data))
				for m, v := range all[i].Data {
					nodes[i].x[m] = spec.Interval{}.FromRat(v.Big())
				}
			}
			return centre{kind: CentreExact}, nil
		}
		switch {
		case ratBudget(err):
			used.fallback = err.Error()
		case limits.IsLimit(err):
			return centre{}, err
		default:
			ball = false
		}
	}
	if ball {
		c, err := BallCentre(g, p, input)
		if err == nil && len(c.Nodes) == len(nodes) {
			for i := range nodes {
				nodes[i].x = c.Nodes[i]
			}
			used.kind = CentreBall
			return used, nil
		}
		if limits.IsLimit(err) && !errors.Is(err, errBallWork) {
			return centre{}, err
		}
	}
	all, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Interval](input))
	if err != nil {
		return centre{}, err
	}
	for i := range nodes {
		nodes[i].x = all[i].Data
	}
	used.kind = CentreInterval
	return used, nil
}

// localErr evaluates node j's application over Err on its parents' boxes
// with bound 0 (or, for a parent fused into j, on that parent's pending
// local values): the result's bound is e_j (doc.go, "Local errors").
func localErr[F format](g *irsem.Graph, j int, apps []irsem.Application, nodes []foNode, fused []spec.Tensor[ErrOf[F]], input irsem.RatTensor, reg *spec.Registry[ErrOf[F]]) (spec.Tensor[ErrOf[F]], error) {
	nd := &g.Nodes[j]
	if nd.Kind.Op == irsem.OpInput {
		return irsem.ConvertTensor[ErrOf[F]](input), nil
	}
	parents := make([]spec.Tensor[ErrOf[F]], len(nd.Parents))
	for t, q := range nd.Parents {
		if fused[q].Data != nil {
			parents[t] = fused[q]
			continue
		}
		if u := slices.Index(nd.Parents, q); u < t {
			parents[t] = parents[u] // the same value in every slot (see boxTensors)
			continue
		}
		rep := shareRepeatedSlots && repeated(nd.Parents, q)
		d := make([]ErrOf[F], len(nodes[q].box))
		for m, b := range nodes[q].box {
			d[m] = ErrOf[F]{x: b}
			if rep {
				d[m].id = fresh()
			}
		}
		parents[t] = spec.Tensor[ErrOf[F]]{Shape: g.Nodes[q].Shape, Data: d}
	}
	// The registry's rule, run as Apply (RunApplicationPlanes: a dense
	// layer reads its weights as a plane, no ErrOf per weight).
	return irsem.RunApplicationPlanes(reg, &apps[j], parents, func(_ int, s *irsem.Step, xs []spec.Tensor[ErrOf[F]]) (spec.Tensor[ErrOf[F]], error) {
		pr, err := reg.Lookup(s.Prim)
		if err != nil {
			return spec.Tensor[ErrOf[F]]{}, err
		}
		before := undecided.Load()
		y, err := pr.Apply(s.Attrs, xs)
		if err == nil && undecided.Load() != before && splitLocal && pr.Smooth && pr.Unary != nil && len(xs) == 1 {
			// Split the comparisons of exact values (doc.go, "Split
			// primitives in the local errors"); evaluations over Err are
			// serialised (evalMu), so the count is this step's.
			if ys, ok := splitStep(pr, s.Attrs, xs[0]); ok {
				undecided.Store(before)
				return ys, nil
			}
		}
		return y, err
	})
}

// splitLocal turns on "Split primitives in the local errors" (doc.go);
// tests turn it off to compare with the bound before it.
var splitLocal = true

// boxTensor is node q's box as an adj tensor.
func boxTensor(g *irsem.Graph, nodes []foNode, q int) spec.Tensor[adj] {
	d := make([]adj, len(nodes[q].box))
	for m, b := range nodes[q].box {
		d[m] = adj{iv: b}
	}
	return spec.Tensor[adj]{Shape: g.Nodes[q].Shape, Data: d}
}

// repeated reports that node q fills more than one of the parent slots ps.
func repeated(ps []int, q int) bool {
	n := 0
	for _, p := range ps {
		if p == q {
			n++
		}
	}
	return n > 1
}

// boxTensors is node j's parents' boxes as adj tensors, one per parent
// slot. A parent that fills several slots (mul_elem(d, d), the square
// of an imported layer norm's variance) is one tensor in all of them,
// each element with a fresh id: the slots hold one and the same value in
// every evaluation the boxes cover, so adj's Mul of an element by itself
// is the square's range, never below 0 (doc.go, "Squares and lower
// bounds"), as in the classic evaluation, where the slots share the
// parent's Err values.
func boxTensors(g *irsem.Graph, nodes []foNode, j int) []spec.Tensor[adj] {
	ps := g.Nodes[j].Parents
	parents := make([]spec.Tensor[adj], len(ps))
	for t, q := range ps {
		if u := slices.Index(ps, q); u < t && shareRepeatedSlots {
			parents[t] = parents[u]
			continue
		}
		parents[t] = boxTensor(g, nodes, q)
		if shareRepeatedSlots && repeated(ps, q) {
			for m := range parents[t].Data {
				parents[t].Data[m].id = fresh()
			}
		}
	}
	return parents
}

// forwardSteps runs a node's steps over adj on its parents' boxes and
// returns every step's value (a const's value as its one step).
func forwardSteps(g *irsem.Graph, j int, nodes []foNode, reg *spec.Registry[adj]) ([]spec.Tensor[adj], [][]spec.Tensor[adj], error) {
	a := nodes[j].app
	if a.Source {
		if a.Value == nil {
			return nil, nil, nil
		}
		return []spec.Tensor[adj]{irsem.ConvertTensor[adj](*a.Value)}, nil, nil
	}
	parents := boxTensors(g, nodes, j)
	adjForward.Store(true)
	defer adjForward.Store(false)
	steps := make([]spec.Tensor[adj], 0, len(a.Steps))
	args := make([][]spec.Tensor[adj], 0, len(a.Steps))
	for k := range a.Steps {
		s := &a.Steps[k]
		// A dense layer's weights as a plane of the payload's values:
		// no adj per weight, in the step or in args (adj_plane.go).
		if y, xs, ok, err := planeForward(a, k, parents, steps); err != nil {
			return nil, nil, err
		} else if ok {
			if !y.Shape.Equal(s.Shape) || len(y.Data) != s.Shape.Size() {
				return nil, nil, fmt.Errorf("step %d (%s): shape mismatch: expected %v, got %v", k, s.Prim, s.Shape, y.Shape)
			}
			steps = append(steps, y)
			args = append(args, xs)
			continue
		}
		xs := make([]spec.Tensor[adj], 0, len(s.Args))
		for _, arg := range s.Args {
			v, err := irsem.ArgValue(a, k, arg, parents, steps)
			if err != nil {
				return nil, nil, err
			}
			xs = append(xs, v)
		}
		pr, err := reg.Lookup(s.Prim)
		if err != nil {
			return nil, nil, err
		}
		adjNonSmooth.Store(watchesUndecided(pr.OpInfo))
		y, err := pr.Apply(s.Attrs, xs)
		adjNonSmooth.Store(false)
		if err != nil {
			return nil, nil, err
		}
		if !y.Shape.Equal(s.Shape) || len(y.Data) != s.Shape.Size() {
			return nil, nil, fmt.Errorf("step %d (%s): shape mismatch: expected %v, got %v", k, s.Prim, s.Shape, y.Shape)
		}
		steps = append(steps, y)
		args = append(args, xs)
	}
	return steps, args, nil
}

// sweep runs the reverse interval sweep from element m of node j over
// nodes j, j−1, …, 0 and returns Σ_k Σ_i mag(A_{k,i})·e_{k,i} (rounded
// up), Σ (mag(A)·e)² for the estimate, and a reason when the bound is +∞.
func sweep(g *irsem.Graph, nodes []foNode, j, m int, reg *spec.Registry[adj]) (float64, float64, string, error) {
	cot := make([]spec.Tensor[adj], j+1)
	seed := make([]adj, len(nodes[j].box))
	seed[m] = adj{iv: spec.Interval{Lo: 1, Hi: 1}}
	cot[j] = spec.Tensor[adj]{Shape: g.Nodes[j].Shape, Data: seed}
	total, ss := 0.0, 0.0
	for k := j; k >= 0; k-- {
		if cot[k].Data == nil {
			continue
		}
		nd := &nodes[k]
		if nd.local != nil {
			for i, a := range cot[k].Data {
				e := nd.local[i]
				if e == 0 {
					continue
				}
				c := mulUp(mag(a.iv), e)
				total = addUp(total, c)
				ss = addUp(ss, mulUp(c, c))
			}
			if math.IsInf(total, 1) {
				return inf, inf, fmt.Sprintf("node %d (%s): an adjoint is unbounded on the boxes", k, g.Nodes[k].Kind.Op), nil
			}
		}
		if nd.app.Source || g.Nodes[k].Kind.Op == irsem.OpInput {
			continue
		}
		reach := false
		for _, q := range g.Nodes[k].Parents {
			reach = reach || nodes[q].err
		}
		if !reach {
			continue
		}
		pc, err := nodeVJP(g, nodes, k, cot[k], reg)
		if err != nil {
			return inf, inf, fmt.Sprintf("node %d (%s): %v", k, g.Nodes[k].Kind.Op, err), nil
		}
		if adjVoid.Load() != 0 {
			adjVoid.Store(0)
			return inf, inf, fmt.Sprintf("node %d (%s): a derivative rule could not be decided on the boxes (a kink or tie inside them)", k, g.Nodes[k].Kind.Op), nil
		}
		for t, q := range g.Nodes[k].Parents {
			if !nodes[q].err || pc[t].Data == nil {
				continue
			}
			if cot[q].Data == nil {
				cot[q] = spec.Tensor[adj]{Shape: g.Nodes[q].Shape, Data: make([]adj, len(nodes[q].box))}
			}
			d := cot[q].Data
			for i, v := range pc[t].Data {
				d[i] = d[i].Add(v)
			}
		}
	}
	return total, ss, "", nil
}

// nodeVJP maps node k's output cotangent to one contribution per parent
// (nil where none), running its steps' VJP rules over adj on the step
// values of forwardSteps, in reverse.
func nodeVJP(g *irsem.Graph, nodes []foNode, k int, dy spec.Tensor[adj], reg *spec.Registry[adj]) ([]spec.Tensor[adj], error) {
	nd := &nodes[k]
	a := nd.app
	ps := g.Nodes[k].Parents
	if nd.pass != nil {
		return castVJP(g, nd, k, dy), nil // Jacobian 1 where the cast is the identity (round_cast.go)
	}
	out := make([]spec.Tensor[adj], len(ps))
	sc := make([]spec.Tensor[adj], len(a.Steps))
	last := len(a.Steps) - 1
	if last < 0 {
		return out, nil
	}
	sc[last] = spec.Tensor[adj]{Shape: a.Steps[last].Shape, Data: dy.Data}
	for s := last; s >= 0; s-- {
		if sc[s].Data == nil {
			continue
		}
		st := &a.Steps[s]
		pr, err := reg.Lookup(st.Prim)
		if err != nil {
			return nil, err
		}
		if pr.NoGrad {
			if len(st.Args) > 0 {
				return nil, fmt.Errorf("step %d (%s) has no derivative rule for its value", s, st.Prim)
			}
			continue
		}
		xs, err := stepArgs(a, s, nd.args[s])
		if err != nil {
			return nil, err
		}
		// Only the contributions the sweep propagates: to a parent an
		// error reaches, or to an earlier step (payload parameters' M1
		// errors are in e_k).
		need := make([]bool, len(st.Args))
		for t, arg := range st.Args {
			need[t] = arg.Source == irsem.ArgStep || (arg.Source == irsem.ArgParent && nodes[ps[arg.Index]].err)
		}
		adjNonSmooth.Store(watchesUndecided(pr.OpInfo))
		dxs, err := pr.VJPNeed(st.Attrs, xs, nd.steps[s], sc[s], need)
		adjNonSmooth.Store(false)
		if err != nil {
			return nil, err
		}
		for t, arg := range st.Args {
			if t >= len(dxs) || dxs[t].Data == nil {
				continue
			}
			var dst *spec.Tensor[adj]
			var size int
			var shape spec.Shape
			switch arg.Source {
			case irsem.ArgParent:
				q := ps[arg.Index]
				dst, size, shape = &out[arg.Index], len(nodes[q].box), g.Nodes[q].Shape
			case irsem.ArgStep:
				dst, size, shape = &sc[arg.Index], len(nd.steps[arg.Index].Data), nd.steps[arg.Index].Shape
			default:
				continue // payload parameters: their M1 error is in e_k
			}
			if len(dxs[t].Data) != size {
				return nil, fmt.Errorf("step %d (%s): a contribution of %d values for an argument of %d", s, st.Prim, len(dxs[t].Data), size)
			}
			if dst.Data == nil {
				*dst = spec.Tensor[adj]{Shape: shape, Data: make([]adj, size)}
			}
			for i, v := range dxs[t].Data {
				dst.Data[i] = dst.Data[i].Add(v)
			}
		}
	}
	return out, nil
}
