package harness

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// The deciders a forward Bound names (Bound.TightBy, Bound.LooseBy):
// the classic bound (fpbound.Err, Err64 over the case's tape) or
// fpbound's first-order bound (fpbound.SharpBounds, SharpBounds64 over
// the case's IR graph), whichever is smaller (package doc, "The sharp
// bound").
const (
	DecidedClassic    = "classic"
	DecidedFirstOrder = "first-order"
)

// irGraph converts case graph g at inputs xs to the canonical IR graph
// fpbound takes, its payload and its one input. The IR has a single
// input node, so a graph of several inputs reads them from one vector
// (their elements concatenated, row-major): input k is slice(x, axis 0,
// its offset, + its size), reshaped to its shape. Slices and reshapes
// only move values (exact, identity Jacobians), so the IR graph computes
// the same registry formulas on the same exact data. Each node of g is
// the IR node of its primitive's tag (casegen.Recipe.IRGraph); a
// primitive without an IR tag, or one whose tag takes an argument from
// the payload (linear, conv: a weight the case passes as an input), is
// an error.
func irGraph(g Graph, xs []spec.Tensor[spec.Rat]) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, error) {
	shapes, err := g.ValueShapes(xs)
	if err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	rc := &casegen.Recipe{IR: true}
	where := make([]int, g.Inputs+len(g.Nodes)) // value of g → recipe entry
	var in irsem.RatTensor
	if g.Inputs == 1 {
		in = xs[0]
		rc.Ctx, rc.Shapes = []spec.Shape{xs[0].Shape.Clone()}, []spec.Shape{xs[0].Shape.Clone()}
	} else {
		total := 0
		for _, x := range xs {
			total += len(x.Data)
			in.Data = append(in.Data, x.Data...)
		}
		in.Shape = spec.Shape{total}
		rc.Ctx, rc.Shapes = []spec.Shape{{total}}, []spec.Shape{{total}}
		off := 0
		for k, x := range xs {
			n := len(x.Data)
			rc.Steps = append(rc.Steps, casegen.Step{Op: "slice", Attrs: &spec.Attrs{Axis: 0, Start: off, End: off + n}, In: []int{0}})
			rc.Shapes = append(rc.Shapes, spec.Shape{n})
			if !x.Shape.Equal(spec.Shape{n}) {
				rc.Steps = append(rc.Steps, casegen.Step{Op: "reshape", Attrs: &spec.Attrs{Shape: x.Shape.Clone()}, In: []int{len(rc.Shapes) - 1}})
				rc.Shapes = append(rc.Shapes, x.Shape.Clone())
			}
			where[k] = len(rc.Shapes) - 1
			off += n
		}
	}
	for i := 1; g.Inputs == 1 && i < len(where); i++ {
		where[i] = 0
	}
	for j, n := range g.Nodes {
		info, err := spec.Info(n.Op)
		if err != nil || info.IR == nil {
			return nil, nil, irsem.RatTensor{}, fmt.Errorf("node %d (%s): no IR tag", j, n.Op)
		}
		tag, ok := irsem.LookupTag(irsem.Op(info.IR.Tag))
		if !ok || tag.Prim != n.Op || len(tag.Params) > 0 {
			return nil, nil, irsem.RatTensor{}, fmt.Errorf("node %d (%s): its IR tag %s is not the primitive on its arguments", j, n.Op, info.IR.Tag)
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		args := make([]int, len(n.Args))
		for k, v := range n.Args {
			args[k] = where[v]
		}
		rc.Steps = append(rc.Steps, casegen.Step{Op: n.Op, Attrs: a, In: args})
		rc.Shapes = append(rc.Shapes, shapes[g.Inputs+j].Clone())
		where[g.Inputs+j] = len(rc.Shapes) - 1
	}
	rc.Result = len(rc.Shapes) - 1
	ig, p, err := rc.IRGraph()
	if err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	if err := ig.Check(); err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	return ig, p, in, nil
}

// sharpen lowers the forward bounds of ref (its Y) to a sharper sound
// bound where there is one, per element and per format (package doc, "The
// sharp bound"). The case's IR graph (irGraph) is bounded with
// fpbound.SharpBounds64 and fpbound.SharpBounds. Two checks that the IR
// graph computes the same registry formulas on the same data, or ref keeps
// its bounds and Sharp says why: its evaluation over spec.Interval equals
// that of g's forward pass node by node (sameIntervals), and its classic
// bounds equal those of g's forward pass alone evaluated over
// fpbound.Err64 and fpbound.Err (forwardClassic), element by element and
// bit for bit. The bound of an element is then the least of the
// tape's (ref's), the forward pass's classic and the first-order bound,
// and its exact enclosure the intersection of the two (each contains the
// exact value).
func (r *Reference) sharpen(g Graph, xs []spec.Tensor[spec.Rat]) {
	why := r.trySharpen(g, xs)
	if why != "" {
		r.Sharp = "classic bound only: " + why
	}
}

func (r *Reference) trySharpen(g Graph, xs []spec.Tensor[spec.Rat]) string {
	ig, p, in, err := irGraph(g, xs)
	if err != nil {
		return err.Error()
	}
	if err := sameIntervals(g, xs, ig, p, in); err != nil {
		return err.Error()
	}
	o := fpbound.Options{ULPs: ULPs}
	s64, err := fpbound.SharpBounds64(ig, p, in, o)
	if err != nil {
		return "first-order bound: " + err.Error()
	}
	s32, err := fpbound.SharpBounds(ig, p, in, o)
	if err != nil {
		return "first-order bound: " + err.Error()
	}
	f64, err := forwardClassic(g, xs, func(v fpbound.Err64, u int64) fpbound.Enclosure { return fpbound.EncloseErr(v, u) })
	if err != nil {
		return err.Error()
	}
	f32, err := forwardClassic(g, xs, func(v fpbound.Err, u int64) fpbound.Enclosure { return fpbound.EncloseErr(v, u) })
	if err != nil {
		return err.Error()
	}
	if len(s64) != len(r.Y) || len(s32) != len(r.Y) || len(f64) != len(r.Y) || len(f32) != len(r.Y) {
		return fmt.Sprintf("the IR graph has %d outputs for %d", len(s64), len(r.Y))
	}
	y := make([]Bound, len(r.Y))
	for k, b := range r.Y {
		t, ok1 := sharpOne(b.Tight, f64[k], s64[k])
		l, ok2 := sharpOne(b.Loose, f32[k], s32[k])
		if !ok1 || !ok2 {
			return fmt.Sprintf("element %d: the IR graph's classic bound differs from the forward pass's", k)
		}
		y[k] = Bound{Tight: t.Enclosure, Loose: l.Enclosure, f32: b.f32, TightBy: t.by, LooseBy: l.by}
	}
	r.Y = y
	return ""
}

// forwardClassic evaluates g's forward pass alone, node by node with the
// registry's rules over B (fpbound.Err64 or fpbound.Err) under
// fpbound.Evaluate, and encloses the output's elements: fpbound's classic
// theorem for that evaluation.
func forwardClassic[B spec.Scalar[B]](g Graph, xs []spec.Tensor[spec.Rat], enc func(B, int64) fpbound.Enclosure) ([]fpbound.Enclosure, error) {
	var out spec.Tensor[B]
	und, err := fpbound.Evaluate(fpbound.Options{ULPs: ULPs}, func() error {
		var err error
		out, err = forwardValues[B](g, xs)
		return err
	})
	if err != nil {
		return nil, err
	}
	es := make([]fpbound.Enclosure, len(out.Data))
	for k, v := range out.Data {
		es[k] = enc(v, und)
	}
	return es, nil
}

// forwardValues evaluates g's forward pass node by node with the
// registry's rules over B and returns the output.
func forwardValues[B spec.Scalar[B]](g Graph, xs []spec.Tensor[spec.Rat]) (spec.Tensor[B], error) {
	reg := spec.Default[B]()
	vals := make([]spec.Tensor[B], 0, g.Inputs+len(g.Nodes))
	for _, x := range xs {
		vals = append(vals, toB[B](x))
	}
	for j, n := range g.Nodes {
		p, err := reg.Lookup(n.Op)
		if err != nil {
			return spec.Tensor[B]{}, err
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		ins := make([]spec.Tensor[B], len(n.Args))
		for k, arg := range n.Args {
			ins[k] = vals[arg]
		}
		y, err := p.Apply(a, ins)
		if err != nil {
			return spec.Tensor[B]{}, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		vals = append(vals, y)
	}
	return vals[len(vals)-1], nil
}

// sameIntervals reports whether the IR graph ig evaluated over
// spec.Interval (irsem.Denote) gives, bit for bit on every output element,
// what g's forward pass gives over spec.Interval at xs: the identity
// check that holds whatever the bounds (an evaluation with an undecided
// comparison has no finite classic bound to compare).
func sameIntervals(g Graph, xs []spec.Tensor[spec.Rat], ig *irsem.Graph, p *irsem.Payload, in irsem.RatTensor) error {
	want, err := forwardValues[spec.Interval](g, xs)
	if err != nil {
		return err
	}
	got, err := irsem.Denote(ig, p, irsem.ConvertTensor[spec.Interval](in))
	if err != nil {
		return err
	}
	if len(got.Data) != len(want.Data) {
		return fmt.Errorf("the IR graph has %d outputs for %d", len(got.Data), len(want.Data))
	}
	for k := range got.Data {
		a, b := got.Data[k], want.Data[k]
		if math.Float64bits(a.Lo) != math.Float64bits(b.Lo) || math.Float64bits(a.Hi) != math.Float64bits(b.Hi) {
			return fmt.Errorf("element %d: the IR graph's interval evaluation %v differs from the forward pass's %v", k, a, b)
		}
	}
	return nil
}

type decided struct {
	fpbound.Enclosure
	by string
}

// sharpOne combines the tape's enclosure c of one element with the forward
// pass's classic f and fpbound's s of the same element: ok is false when
// s's classic bound is not f's (the IR graph would not be the case's
// formula) or two exact enclosures are disjoint (one of them would not
// contain the exact value). Each of the three is a theorem only where its
// bound is finite (fpbound's Theorem: E = +∞ claims nothing, X included),
// so the result is the intersection of the finite ones' enclosures with
// the least of their bounds, and c itself when none is finite. It is named
// first-order only where the first-order bound is strictly the least.
func sharpOne(c, f fpbound.Enclosure, s fpbound.Sharp) (decided, bool) {
	if f.Bound != s.Classic && !(math.IsNaN(f.Bound) && math.IsNaN(s.Classic)) {
		return decided{}, false
	}
	out := decided{Enclosure: c, by: DecidedClassic}
	first := true
	for _, e := range []fpbound.Enclosure{c, f, s.Enclosure} {
		if !(e.Bound < math.Inf(1)) {
			continue
		}
		if first {
			out.Enclosure, first = e, false
			continue
		}
		lo, hi := math.Max(out.Exact.Lo, e.Exact.Lo), math.Min(out.Exact.Hi, e.Exact.Hi)
		if !(lo <= hi) {
			return decided{}, false
		}
		out.Exact = spec.Interval{Lo: lo, Hi: hi}
		if e.Bound < out.Bound {
			out.Bound, out.Reason = e.Bound, e.Reason
		}
	}
	if s.FirstOrder < c.Bound && s.FirstOrder < f.Bound && s.FirstOrder < s.Classic {
		out.by = DecidedFirstOrder
	}
	return out, true
}
