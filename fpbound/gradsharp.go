package fpbound

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Gradients: the boxed reverse-mode bound.
//
// Model. "The float32 gradient computation" that GradErr and GradErrSharp
// bound is: a forward evaluation of the graph satisfying M1–M3 (package
// doc), then the reverse pass from the cotangent seed (M1: held as the
// nearest binary32): for every node in reverse id order, the registry's
// VJP rules of its steps, in reverse, run at the forward values that
// evaluation computed (its step values; each forward scalar operation is
// performed once and its value read by every consumer, M2), each scalar
// operation of those rules under M2 and M3 — any order, parenthesisation
// and FMA contraction of every sum, the accumulation of a node's
// cotangent over its children and of a parameter's gradient over its
// uses included; a NoGrad step (detach, a mask) passes no gradient, as
// irgrad's tape does. A runtime whose VJP formula differs from the
// registry's is judged relative to the registry's formula.
//
// Theorem. For every gradient element, let (X, E) be GradErrSharp's boxed
// value closed (EncloseErr). If E is finite, the exact gradient (the
// registry's VJP formulas in exact arithmetic at the exact forward
// values) lies in X, and every gradient computation of the model above
// produces a finite binary32 value within E of it. The same holds for
// GradErr's classic value; GradEnclosure takes the smaller bound and the
// intersection of the two enclosures, so the verdict (Judge) is sound
// with either.
//
// Proof. The boxed pass evaluates over Err exactly the operations the
// classic proof (package doc, "Proof") inducts over — the forward rules
// node by node, then the VJP rules in reverse order, the Err sum
// accumulating contributions (a pending sum: "Sums" covers every order
// of the accumulation) — with one change: at each node boundary a closed
// forward value v = (X_v, E_v) of node j becomes (X_v ∩ X_j, min(E_v,
// d_j)) with lower bound B_j.Lo, where B_j is node j's box and X_j its
// exact enclosure from the first-order pass (doc.go, "Boxes" and "The
// exact enclosure") and d_j = max(B_j.Hi − lo, hi − B_j.Lo) over the
// intersected enclosure [lo, hi] (rounded upward). The invariant of a
// closed value — the exact value lies in its enclosure and every
// modelled evaluation holds a value within its bound — survives the
// change: X_j contains node j's exact value, and B_j contains the value
// every evaluation satisfying M1–M3 holds at node j (the box holds node
// j's value in every partially perturbed evaluation T_k, and T_N is the
// modelled evaluation), so that value v̂ and the exact x both lie in
// [B_j] × [lo, hi], whence |v̂ − x| ≤ d_j and v̂ ≥ B_j.Lo (the lower-bound
// fact of "Squares and lower bounds"). The reverse formulas read these
// forward values, so the induction proceeds unchanged to the gradient
// elements. Not tightened: a pending sum (M2(a) lets the runtime never
// round it; its terms carry their own facts) and a node the first-order
// pass fused into its child (its box holds the unrounded virtual value,
// not a runtime one). The boxes are used only when the first-order pass
// went through every node without a reason (else no boxed bound), and,
// as in GradErr, an undecided comparison anywhere in the boxed pass
// makes every element of it unbounded (EncloseErr). ∎
//
// Sharpness. The forward values' errors enter the reverse pass as the
// first-order forward bound (signed Jacobians, per node), not as the
// classic magnitudes propagated through |W|; on tanh MLPs the median
// bound/actual at depth 16 drops from 1.3·10⁹ to 2.9·10⁵ (docs/bounds.md,
// "Gradients"). The reverse pass's own roundings and the propagation of
// the cotangents' errors are still the classic algebra: they reach a
// gradient element through magnitudes |Jᵀ| per layer, which is what
// remains at depth (ReLU MLPs barely gain). A first-order bound of the
// reverse pass itself (dense signed sensitivities of the gradient to each
// reverse node's local error) is not built.
//
// GradBounds is a reverse pass bounded twice (the theorem above): the
// classic bound of GradErr and the boxed bound, the same reverse formulas
// over Err run on forward values tightened to the first-order forward
// bound's boxes. Both are sound; per element a verdict uses the smaller
// (GradEnclosure).
type GradBounds struct {
	// Params is the lowered graph's parameter list (irgrad's context
	// order), shared by both gradients.
	Params []irgrad.Param
	// Classic is GradErr's result, ClassicUndecided its count of
	// undecided comparisons.
	Classic          *irgrad.Gradients[Err]
	ClassicUndecided int64
	// Boxed is the boxed reverse pass (nil when it has none: Reason says
	// why), BoxedUndecided its count of undecided comparisons.
	Boxed          *irgrad.Gradients[Err]
	BoxedUndecided int64
	Reason         string
	// Combined is the combined first-order bound of every element of the
	// input gradient (gradcombined.go; nil when it has none:
	// CombinedReason says why).
	Combined       []Enclosure
	CombinedReason string
	// CombinedParams is the combined first-order bound of every
	// parameter gradient element (Params' order; a nil entry has none:
	// CombinedParamReasons says why), built by GradErrSharpParams only
	// (nil otherwise, and when no boxes were built: CombinedReason says
	// why).
	CombinedParams       [][]Enclosure
	CombinedParamReasons []string
}

// DefaultGradSweepWork is GradErrSharp's Options.SweepWork when none is
// given: the forward boxes' intermediate sweeps are the boxed bound's
// main cost (on the tools/models BERT, 2 s at 2^20, 19 s at 2^24 and
// 170 s at DefaultSweepWork = 2^27 on the shared machine); any budget is
// sound, a larger one only tightens boxes.
const DefaultGradSweepWork = 1 << 22

// DefaultCombinedSweepWork is the combined graph's SharpBounds budget
// (Options.SweepWork) when the caller gives none (vitgrad38): at
// DefaultSweepWork = 2^27 that run was the bulk of compare-grad's cost on
// ViT (60 s of 65 s CPU, 3 GB). Any budget is sound; a smaller one only
// leaves more of the combined graph's nodes without a first-order bound.
const DefaultCombinedSweepWork = 1 << 22

// boxesSeen, when set (tests only: TestGradBoxesProfile), receives after
// forwardBoxes' sweeps of node j the budget they spent (Options.SweepWork's
// units: the sweeps' own, and the fallback sweeps' allowance) and the node.
var boxesSeen func(j int, spent, cutSpent int64, nd *foNode)

// GradErrSharp is GradErr with the boxed bound beside the classic one
// (the theorem in GradBounds' doc): the forward pass's first-order boxes (the
// machinery of SharpBounds, "Boxes") replace every closed forward value
// the reverse formulas read by the tighter of its classic Err value and
// its box, and the registry's VJP rules then run over Err on those
// values, node by node in reverse id order. With classicOnly set the
// boxed pass is not run (Boxed nil): the old path, for comparison.
func GradErrSharp(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options, classicOnly bool) (*GradBounds, error) {
	return gradErrSharp(g, p, input, seed, o, classicOnly, false)
}

// GradErrSharpParams is GradErrSharp with the combined first-order bound
// of the parameter gradients too (GradBounds.CombinedParams; the package
// doc, "Gradients: the combined first-order bound"). It is a separate
// call because its cost grows with the number of parameter elements (one
// SharpBounds output element each: on a width-16, depth-16 MLP's 4352 it
// is tens of seconds), where GradErrSharp's combined bound covers the
// input gradient only.
func GradErrSharpParams(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options) (*GradBounds, error) {
	return gradErrSharp(g, p, input, seed, o, false, true)
}

func gradErrSharp(g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, o Options, classicOnly, withParams bool) (*GradBounds, error) {
	cl, params, und, err := GradErr(g, p, input, seed, o)
	if err != nil {
		return nil, err
	}
	gb := &GradBounds{Params: params, Classic: cl, ClassicUndecided: und}
	if classicOnly {
		gb.Reason = "the boxed bound was not asked for"
		gb.CombinedReason = gb.Reason
		return gb, nil
	}
	k, err := o.ulps()
	if err != nil {
		return nil, err
	}
	co := o // the combined graph's SharpBounds: its own budget
	if co.SweepWork == 0 {
		co.SweepWork = DefaultCombinedSweepWork
	}
	if o.SweepWork == 0 {
		o.SweepWork = DefaultGradSweepWork
	}
	boxes, reason, err := forwardBoxes[binary32](g, p, input, o, k)
	if err != nil {
		return nil, err
	}
	if reason != "" {
		gb.Reason = "no forward boxes: " + reason
		gb.CombinedReason = gb.Reason
		return gb, nil
	}
	bx, bund, reason, err := boxedReverse[binary32](g, p, input, seed, params, boxes, errRegistryOrDefault[binary32](o.Profile), k)
	if err != nil {
		return nil, err
	}
	gb.Boxed, gb.BoxedUndecided, gb.Reason = bx, bund, reason
	gb.Combined, gb.CombinedReason, err = combinedBound(g, p, input, seed, boxes, co)
	if err != nil {
		return nil, err
	}
	if withParams && len(params) > 0 {
		gb.CombinedParams, gb.CombinedParamReasons, err = combinedParamBounds(g, p, input, seed, boxes, params, co)
		if err != nil {
			return nil, err
		}
	}
	return gb, nil
}

// GradSharp is a gradient element's Sharp (GradEnclosure) with its two
// first-order bounds apart: Boxed the boxed bound and Combined the
// combined one (+∞ where there is none); FirstOrder is their minimum.
type GradSharp struct {
	Sharp
	Boxed, Combined float64
}

// GradEnclosure combines element k's bounds into a GradSharp: the two Err
// values (the sum of a target's parts in each gradient; boxed may be
// absent, hasBoxed false) and the combined first-order enclosure of an
// input-gradient element (GradBounds.Combined) or of a parameter-gradient
// element (GradBounds.CombinedParams) — combined, nil where there is
// none. Bound is the least of the bounds, Exact the
// intersection of the exact enclosures (each contains the exact gradient,
// and every modelled evaluation lies within each bound of it, so within
// the least of them: the verdict is sound with the combination), Classic
// the classic bound, Boxed and Combined the two first-order bounds and
// FirstOrder the smaller of them (both are built from the forward's
// first-order boxes). Estimate is Bound: no estimate is made for
// gradients.
func GradEnclosure(classic Err, classicUnd int64, boxed Err, boxedUnd int64, hasBoxed bool, reason string, combined *Enclosure) GradSharp {
	c := EncloseErr(classic, classicUnd)
	s := GradSharp{Sharp: Sharp{Enclosure: c, Classic: c.Bound, FirstOrder: inf, FirstOrderReason: reason}, Boxed: inf, Combined: inf}
	take := func(b Enclosure) {
		if x, ok := intersect(s.Exact, b.Exact); ok && !math.IsInf(b.Bound, 1) {
			s.Exact = x
		}
		if b.Bound < s.FirstOrder {
			s.FirstOrder, s.FirstOrderReason = b.Bound, b.Reason
		}
		if b.Bound < s.Bound {
			s.Bound, s.Reason = b.Bound, ""
		}
	}
	if hasBoxed {
		b := EncloseErr(boxed, boxedUnd)
		s.FirstOrder, s.FirstOrderReason = b.Bound, b.Reason
		s.Boxed = b.Bound
		take(b)
	}
	if combined != nil {
		s.Combined = combined.Bound
		take(*combined)
	}
	s.Estimate = s.Bound
	return s
}

// The names GradSharp.Decider gives the sound bound a gradient element's
// verdict used (compare-grad's report and its tlcheck.compare-grad.v3
// document).
const (
	GradByClassic  = "classic"  // GradErr's classic bound
	GradByBoxed    = "boxed"    // the boxed first-order bound (GradBounds.Boxed)
	GradByCombined = "combined" // the combined first-order bound (GradBounds.Combined, CombinedParams)
	GradByNone     = "none"     // none is finite: no verdict but inconclusive
)

// Decider names the bound that decided an element judged against s
// (s.Bound the least of its three bounds): GradByNone when s.Bound is
// +∞; else GradByClassic unless a first-order bound is strictly below
// the classic one (a tie is the classic bound's, as the report's count
// has it); else GradByCombined when the combined bound is strictly below
// the boxed one, GradByBoxed otherwise (a tie is the boxed bound's, the
// older of the two).
func (s GradSharp) Decider() string {
	switch {
	case math.IsInf(s.Bound, 1) || math.IsNaN(s.Bound):
		return GradByNone
	case !(s.FirstOrder < s.Classic):
		return GradByClassic
	case s.Combined < s.Boxed:
		return GradByCombined
	}
	return GradByBoxed
}

// fwdBox is one forward node's facts from the first-order pass: box
// holds every value a (partially) perturbed evaluation holds at the
// node, x its exact value; fused marks a node whose pending sum the pass
// fused into its child (its box holds a virtual value, not a runtime
// one).
type fwdBox struct {
	box, x []spec.Interval
	fused  bool
}

// forwardBoxes runs the first-order pass of SharpBounds over every node
// (the steps of firstOrder: exact enclosures, classic round 0, then per
// node its local error, forward enclosure and sweeps) and returns every
// node's box; a reason when the pass stopped, when no box is claimed.
func forwardBoxes[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options, k int) ([]fwdBox, string, error) {
	if o.SweepWork < 0 {
		return nil, "", fmt.Errorf("fpbound: SweepWork %d < 0", o.SweepWork)
	}
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, "", err
	}
	n := len(g.Nodes)
	nodes := newFoNodes(g, apps)
	if _, err := exactEnclosures(g, p, input, apps, nodes); err != nil {
		return failedBoxes(err, "the exact enclosure failed: "+err.Error())
	}
	evalMu.Lock()
	defer evalMu.Unlock()
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	adjVoid.Store(0)
	before := undecided.Load()
	all, err := denoteAll[F](g, p, irsem.ConvertTensor[ErrOf[F]](input), errRegistry[F](o.Profile))
	if undecided.Load() != before {
		return nil, "a comparison a registry rule branches on could not be decided", nil
	}
	if err != nil {
		return failedBoxes(err, "the evaluation failed: "+err.Error())
	}
	roundZeroBoxes(nodes, all)
	r := newFoRun[F](g, input, apps, nodes, o)
	skipOut := outputBoxUnread(g, apps) && !sweepOutputBox
	for j := range nodes {
		if reason, err := r.local(j); reason != "" || err != nil {
			return nil, reason, err
		}
		if g.Nodes[j].Kind.Op != irsem.OpInput {
			if reason, err := r.forward(j); reason != "" || err != nil {
				return nil, reason, err
			}
		}
		sp, cs := r.spent, r.cutSpent
		if !(j == g.OutputID && skipOut) {
			if err := r.sweeps(j); err != nil {
				return nil, "", err
			}
		}
		if boxesSeen != nil {
			boxesSeen(j, r.spent-sp, r.cutSpent-cs, &r.nodes[j])
		}
	}
	out := make([]fwdBox, n)
	for j := range nodes {
		out[j] = fwdBox{box: nodes[j].box, x: nodes[j].x, fused: r.fusedVals[j].Data != nil}
	}
	return out, "", nil
}

// outputBoxUnread reports whether no reader of forwardBoxes' result
// gains from the output's sweeps (outsweep38), so forwardBoxes skips them:
// the output is the last node (no node reads it, and no later node's
// sweeps share the budget its sweeps would spend) and the last step of
// its application is a registry primitive marked Linear.
//
// Claim: with the output's sweeps skipped, the boxed and combined
// gradient bounds are the same, and sound. Proof. Soundness: a sweep of
// node j only narrows j's box, by intersecting it with X_j ± F_j
// (record1); the box it starts from, round 0's X_j ± e_j narrowed by the
// forward enclosure f_j(boxes) ± local_j (forward) and the sign floor,
// already holds every value a modelled evaluation takes at j (the
// package doc, "Boxes"), so the unswept box is a sound box too. The
// sweeps of j change nothing but j's own F, E and box and the spent
// budget (r.spent, r.cutSpent), which only sweeps of later nodes read;
// there are none. Sameness: forwardBoxes' result is read (1) by
// boxedReverse, which tightens each node's closed value to its box
// (tighten) and hands the output's to one rule only, the VJP of the
// output's last step, as its y (nodeVJP: no node reads the output, and
// the steps before the last keep their untightened values); a Linear
// primitive's derivative is its constant transpose, and the registry's
// VJP rules of the Linear primitives read neither y nor their
// arguments' values (TestOutputSweepSkipLossless checks the gradients
// on graphs ending in each); and (2) by the combined graph's builder
// (reverseNodes), whose declarative VJP rules read the box of their own
// node only for relu and sqrt, and the box of a parent only for max
// pooling (the output is no parent) — relu and sqrt are not Linear. So
// every reader gets what it got with the swept box. ∎
//
// On ViT (zoo_vit, output an add of 544 elements) the output's sweeps
// spent 3.0M of the default 2^22 units (0.2 s of forwardBoxes' 1.4 s),
// and 15.7 s at 2^25 (vitgrad37), for a box no reader used.
func outputBoxUnread(g *irsem.Graph, apps []irsem.Application) bool {
	out := g.OutputID
	if out != len(g.Nodes)-1 || out < 0 || len(apps[out].Steps) == 0 {
		return false
	}
	st := apps[out].Steps[len(apps[out].Steps)-1]
	in, err := spec.Info(st.Prim)
	return err == nil && in.Linear
}

// sweepOutputBox (tests only) turns outputBoxUnread's skip off:
// forwardBoxes then sweeps the output as every other node.
var sweepOutputBox bool

func failedBoxes(err error, reason string) ([]fwdBox, string, error) {
	reason, err = failed(err, reason)
	return nil, reason, err
}

// tighten returns the closed forward value v of a node with the facts
// of its box b and exact enclosure x (the theorem in GradBounds' doc): the exact
// value lies in v.x ∩ x, and every modelled evaluation's value lies in b,
// so within max(b.Hi − lo, hi − b.Lo) of it, and at or above b.Lo. A
// pending sum is returned unchanged (the runtime may never round it).
func tighten[F format](v ErrOf[F], b, x spec.Interval) ErrOf[F] {
	if v.n >= 2 || math.IsInf(b.Lo, 0) || math.IsInf(b.Hi, 0) || !(b.Lo <= b.Hi) {
		return v
	}
	nx, ok := intersect(v.x, x)
	if !ok || math.IsInf(nx.Lo, 0) || math.IsInf(nx.Hi, 0) {
		return v
	}
	e := max(addUpSigned(b.Hi, -nx.Lo), addUpSigned(nx.Hi, -b.Lo), 0)
	if math.IsNaN(e) || math.IsInf(e, 1) {
		return v
	}
	v.x = nx
	if e < v.e {
		v.e = e
	}
	if v.hasLB {
		v.lb = max(v.lb, b.Lo)
	} else {
		v.lb, v.hasLB = b.Lo, true
	}
	return v
}

// boxedReverse is the boxed pass (the theorem in GradBounds' doc): every node's
// steps over Err on its parents' (tightened) values, each closed node
// value tightened to its box; then the reverse pass from seed, each
// node's steps' VJP rules over Err in reverse on the step values, a
// node's cotangent the Err sum of its children's contributions, a
// payload parameter's gradient the sum of the contributions to it, a
// const node's (Options.ConstParams) and the input's their cotangents.
// It returns the gradients in params' order and the count of undecided
// comparisons; a reason when the pass fails (no boxed bound).
func boxedReverse[F format](g *irsem.Graph, p *irsem.Payload, input, seed irsem.RatTensor, params []irgrad.Param, boxes []fwdBox, reg *spec.Registry[ErrOf[F]], k int) (*irgrad.Gradients[ErrOf[F]], int64, string, error) {
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, 0, "", err
	}
	evalMu.Lock()
	defer evalMu.Unlock()
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	before := undecided.Load()
	run := &revRun[F]{g: g, apps: apps, reg: reg, n: len(g.Nodes)}
	if reason, err := run.forward(input, boxes); reason != "" || err != nil {
		return nil, 0, reason, err
	}
	gr, reason, err := run.reverse(seed, params)
	if reason != "" || err != nil {
		return nil, 0, reason, err
	}
	if run.where != "" {
		reason = "a comparison could not be decided first at " + run.where
	}
	return gr, undecided.Load() - before, reason, nil
}

// revRun holds the boxed pass's forward values: every node's value, and
// every step's arguments and result.
type revRun[F format] struct {
	g    *irsem.Graph
	apps []irsem.Application
	reg  *spec.Registry[ErrOf[F]]
	n    int
	vals []spec.Tensor[ErrOf[F]]
	// where names the first node whose rules met an undecided comparison
	// ("" when none did).
	where string
	args  [][][]spec.Tensor[ErrOf[F]]
	outs  [][]spec.Tensor[ErrOf[F]]
}

func (r *revRun[F]) forward(input irsem.RatTensor, boxes []fwdBox) (string, error) {
	r.vals = make([]spec.Tensor[ErrOf[F]], r.n)
	r.args = make([][][]spec.Tensor[ErrOf[F]], r.n)
	r.outs = make([][]spec.Tensor[ErrOf[F]], r.n)
	for j := range r.g.Nodes {
		nd := &r.g.Nodes[j]
		a := &r.apps[j]
		var v spec.Tensor[ErrOf[F]]
		before := undecided.Load()
		switch {
		case nd.Kind.Op == irsem.OpInput:
			v = irsem.ConvertTensor[ErrOf[F]](input)
		case a.Source:
			if a.Value == nil {
				return fmt.Sprintf("node %d (%s): no value", j, nd.Kind.Op), nil
			}
			v = irsem.ConvertTensor[ErrOf[F]](*a.Value)
		default:
			parents := make([]spec.Tensor[ErrOf[F]], len(nd.Parents))
			for t, q := range nd.Parents {
				parents[t] = r.vals[q]
			}
			for s := range a.Steps {
				st := &a.Steps[s]
				xs := make([]spec.Tensor[ErrOf[F]], len(st.Args))
				for t, arg := range st.Args {
					x, err := irsem.ArgValue(a, s, arg, parents, r.outs[j])
					if err != nil {
						return failed(err, err.Error())
					}
					xs[t] = x
				}
				pr, err := r.reg.Lookup(st.Prim)
				if err != nil {
					return failed(err, fmt.Sprintf("node %d (%s): %v", j, nd.Kind.Op, err))
				}
				y, err := pr.Apply(st.Attrs, xs)
				if err != nil {
					return failed(err, fmt.Sprintf("node %d (%s): %v", j, nd.Kind.Op, err))
				}
				if len(y.Data) != st.Shape.Size() {
					return fmt.Sprintf("node %d (%s): step %d: %d values for shape %v", j, nd.Kind.Op, s, len(y.Data), st.Shape), nil
				}
				r.args[j] = append(r.args[j], xs)
				r.outs[j] = append(r.outs[j], y)
			}
			if len(r.outs[j]) == 0 {
				return fmt.Sprintf("node %d (%s): no steps", j, nd.Kind.Op), nil
			}
			v = r.outs[j][len(r.outs[j])-1]
		}
		if b := boxes[j]; !b.fused && len(b.box) == len(v.Data) {
			d := make([]ErrOf[F], len(v.Data))
			for m, e := range v.Data {
				d[m] = tighten(e, b.box[m], b.x[m])
			}
			v = spec.Tensor[ErrOf[F]]{Shape: v.Shape, Data: d}
			if len(r.outs[j]) > 0 {
				r.outs[j][len(r.outs[j])-1] = v
			}
		}
		r.vals[j] = v
		r.watch(before, j, "forward")
	}
	return "", nil
}

// watch records node j as where when its rules (pass: "forward" or
// "reverse") met the first undecided comparison.
func (r *revRun[F]) watch(before int64, j int, pass string) {
	if r.where == "" && undecided.Load() != before {
		r.where = fmt.Sprintf("node %d (%s), %s pass", j, r.g.Nodes[j].Kind.Op, pass)
	}
}

// accumErr adds src into *dst element by element (a fresh tensor of
// shape when *dst is empty).
func accumErr[F format](dst *spec.Tensor[ErrOf[F]], shape spec.Shape, src []ErrOf[F]) error {
	if dst.Data == nil {
		*dst = spec.Tensor[ErrOf[F]]{Shape: shape.Clone(), Data: append([]ErrOf[F]{}, src...)}
		return nil
	}
	if len(dst.Data) != len(src) {
		return fmt.Errorf("a contribution of %d values for a cotangent of %d", len(src), len(dst.Data))
	}
	for i, v := range src {
		dst.Data[i] = dst.Data[i].Add(v)
	}
	return nil
}

type pkey struct {
	node  int
	field string
}

func (r *revRun[F]) reverse(seed irsem.RatTensor, params []irgrad.Param) (*irgrad.Gradients[ErrOf[F]], string, error) {
	pidx := map[pkey]int{}
	for i, prm := range params {
		pidx[pkey{prm.Node, prm.Field}] = i
	}
	pg := make([]spec.Tensor[ErrOf[F]], len(params))
	cot := make([]spec.Tensor[ErrOf[F]], r.n)
	out := r.g.OutputID
	sd := irsem.ConvertTensor[ErrOf[F]](seed)
	if len(sd.Data) != len(r.vals[out].Data) {
		return nil, "", fmt.Errorf("fpbound: the cotangent has %d values, the output %d", len(sd.Data), len(r.vals[out].Data))
	}
	cot[out] = spec.Tensor[ErrOf[F]]{Shape: r.vals[out].Shape, Data: sd.Data}
	for j := r.n - 1; j >= 0; j-- {
		if cot[j].Data == nil {
			continue
		}
		a := &r.apps[j]
		if a.Source {
			if i, ok := pidx[pkey{j, "value"}]; ok && r.g.Nodes[j].Kind.Op != irsem.OpInput {
				if err := accumErr(&pg[i], params[i].Shape, cot[j].Data); err != nil {
					return nil, fmt.Sprintf("node %d: %v", j, err), nil
				}
			}
			continue
		}
		before := undecided.Load()
		if reason, err := r.nodeVJP(j, cot, pg, pidx, params); reason != "" || err != nil {
			return nil, reason, err
		}
		r.watch(before, j, "reverse")
	}
	gr := &irgrad.Gradients[ErrOf[F]]{Output: r.vals[out], Input: cot[r.g.InputID], Params: pg}
	if gr.Input.Data == nil {
		gr.Input = zeroTensor[F](r.g.Nodes[r.g.InputID].Shape)
	}
	for i := range pg {
		if pg[i].Data == nil {
			pg[i] = zeroTensor[F](params[i].Shape)
		}
	}
	return gr, "", nil
}

func zeroTensor[F format](s spec.Shape) spec.Tensor[ErrOf[F]] {
	return spec.Tensor[ErrOf[F]]{Shape: s.Clone(), Data: make([]ErrOf[F], s.Size())}
}

// nodeVJP runs node j's steps' VJP rules over Err in reverse from its
// cotangent, adding the contributions to its parents' cotangents and to
// its payload parameters' gradients. A NoGrad step (detach, a mask) stops
// the gradient, as irgrad's tape does.
func (r *revRun[F]) nodeVJP(j int, cot, pg []spec.Tensor[ErrOf[F]], pidx map[pkey]int, params []irgrad.Param) (string, error) {
	a := &r.apps[j]
	ps := r.g.Nodes[j].Parents
	sc := make([]spec.Tensor[ErrOf[F]], len(a.Steps))
	last := len(a.Steps) - 1
	sc[last] = cot[j]
	for s := last; s >= 0; s-- {
		if sc[s].Data == nil {
			continue
		}
		st := &a.Steps[s]
		pr, err := r.reg.Lookup(st.Prim)
		if err != nil {
			return failed(err, fmt.Sprintf("node %d: %v", j, err))
		}
		if pr.NoGrad {
			continue
		}
		dxs, err := pr.VJP(st.Attrs, r.args[j][s], r.outs[j][s], sc[s])
		if err != nil {
			return failed(err, fmt.Sprintf("node %d (%s): step %d (%s): %v", j, r.g.Nodes[j].Kind.Op, s, st.Prim, err))
		}
		for t, arg := range st.Args {
			if t >= len(dxs) || dxs[t].Data == nil {
				continue
			}
			var err error
			switch arg.Source {
			case irsem.ArgParent:
				q := ps[arg.Index]
				err = accumErr(&cot[q], r.g.Nodes[q].Shape, dxs[t].Data)
			case irsem.ArgStep:
				err = accumErr(&sc[arg.Index], a.Steps[arg.Index].Shape, dxs[t].Data)
			case irsem.ArgParam:
				if i, ok := pidx[pkey{j, arg.Param}]; ok {
					err = accumErr(&pg[i], params[i].Shape, dxs[t].Data)
				}
			}
			if err != nil {
				return fmt.Sprintf("node %d (%s): step %d (%s): %v", j, r.g.Nodes[j].Kind.Op, s, st.Prim, err), nil
			}
		}
	}
	return "", nil
}
