package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"sync"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// Options configures the bound.
type Options struct {
	// ULPs is the accuracy, in ulps of the result in the bound's format
	// (binary32 for Bounds, GradErr and Err; binary64 for Bounds64,
	// GradErr64 and Err64), assumed of the runtime's exp, log, log1p,
	// tanh, sin and cos (0 → DefaultULPs).
	// Square roots are correctly rounded (IEEE 754) whatever ULPs is.
	ULPs int
	// SweepWork caps the interval operations the first-order bound spends
	// on sweeps from intermediate nodes, which tighten the boxes of later
	// nodes (0 → DefaultSweepWork); with the sweeps from the output's own
	// elements the total stays below twice SweepWork (an output element
	// past it has no first-order bound), and the fallback sweeps of the
	// nodes past it add at most half of SweepWork (doc.go, "Cuts"). Any
	// value gives a sound bound; more work gives a tighter one.
	SweepWork int64
	// Profile names the runtime profile of the elementary functions
	// (Profiles; "" → ProfileIEEE, today's model M3): doc.go, "Runtime
	// profiles".
	Profile string
	// ConstParams makes GradErr and GradErr64 differentiate w.r.t. every
	// const node's value as well (irgrad.LowerOptions.ConstParams): an
	// imported ONNX model's initializers read as data (LayerNormalization's
	// scale and bias, PRelu's slope, a MatMul's weight), whose gradients
	// compare-grad then judges. The forward values and every other
	// gradient are unchanged (irgrad's doc, "Context").
	ConstParams bool
	// binary32, set by SharpBoundsMixed and BoundsMixed only: per node,
	// that its operations round to binary32 in a binary64 evaluation
	// (format_mixed.go); nil: every node in the evaluation's format.
	binary32 []bool
}

// MaxULPs bounds Options.ULPs.
const MaxULPs = 1 << 20

// Verdict is the judgement of one recorded element.
type Verdict int

// The verdicts. The zero value is Inconclusive.
const (
	// Inconclusive: neither provably inside nor provably outside the
	// bound (or no finite bound is known).
	Inconclusive Verdict = iota
	// Holds: |recorded − x| ≤ Bound for every x in Exact, hence for the
	// exact value.
	Holds
	// Fails: |recorded − x| > Bound for every x in Exact, hence no
	// evaluation of the model produces the recorded value.
	Fails
)

// String names the verdict.
func (v Verdict) String() string {
	switch v {
	case Holds:
		return "holds"
	case Fails:
		return "fails"
	case Inconclusive:
		return "inconclusive"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Enclosure is one output element's exact enclosure and a-priori bound.
type Enclosure struct {
	// Exact encloses the exact real value of the element.
	Exact spec.Interval
	// Bound bounds |v̂ − x| for every value v̂ that an evaluation of the
	// model (doc.go) in the format of the bound (binary32 for Bounds and
	// Err, binary64 for Bounds64 and Err64) produces; +∞ when none is
	// known.
	Bound float64
	// Reason says why Bound is +∞ ("" when it is finite).
	Reason string
}

// Element is one output element's verdict.
type Element struct {
	// Recorded is the runtime's value.
	Recorded float32
	// Exact encloses the exact real value.
	Exact spec.Interval
	// Bound is the a-priori bound on |any modelled evaluation − exact|.
	Bound float64
	// Dist encloses |Recorded − exact| (rounded outward); [MaxFloat64, +∞]
	// for a NaN or infinite Recorded, unbounded above when Exact is.
	Dist spec.Interval
	// Verdict is Fails iff min over Exact of |Recorded − x| > Bound,
	// Holds iff max over Exact of |Recorded − x| ≤ Bound (both decided in
	// exact rational arithmetic), Inconclusive otherwise.
	Verdict Verdict
	// Reason explains an Inconclusive verdict without a finite bound.
	Reason string
	// Classic and FirstOrder are the two sound bounds Bound is the
	// smaller of (Compare; both equal Bound when the element was judged
	// against a plain Enclosure, +∞ where there is none).
	Classic, FirstOrder float64
	// Estimate is the probabilistic figure of doc.go, "Estimate":
	// reported, never deciding (+∞ where none; equal to Bound when the
	// element was judged against a plain Enclosure).
	Estimate float64
}

// Summary aggregates a run of elements.
type Summary struct {
	// MaxErr encloses max |recorded − exact| over the elements.
	MaxErr spec.Interval
	// MaxBound is the largest Bound (+∞ if any is).
	MaxBound float64
	// Holds, Fails and Inconclusive count the verdicts.
	Holds, Fails, Inconclusive int
	// FirstFail is the index of the first failing element (relative to
	// the run), −1 when none fails.
	FirstFail int
	// MaxEstimate is the largest Estimate (reported, never deciding).
	MaxEstimate float64
	// ByFirstOrder counts the elements whose finite Bound is the
	// first-order bound, strictly below the classic one.
	ByFirstOrder int
}

// Result is the verdict of every output element of one evaluation.
type Result struct {
	// Elements lists the output elements in row-major order (the IR
	// output's flat order).
	Elements []Element
	// Summary aggregates all of them.
	Summary
	// Centre and CentreFallback are the evaluation's Sharp.Centre and
	// Sharp.CentreFallback: which evaluation encloses the exact values,
	// and the exact-arithmetic budget that ruled out the rational one.
	Centre, CentreFallback string
}

// Summarize aggregates elems (for example the elements of one ONNX output
// inside the packed IR output).
func Summarize(elems []Element) Summary {
	s := Summary{FirstFail: -1}
	for i, el := range elems {
		switch el.Verdict {
		case Holds:
			s.Holds++
		case Fails:
			s.Fails++
			if s.FirstFail < 0 {
				s.FirstFail = i
			}
		default:
			s.Inconclusive++
		}
		if el.FirstOrder < el.Classic {
			s.ByFirstOrder++
		}
		if i == 0 {
			s.MaxErr, s.MaxBound, s.MaxEstimate = el.Dist, el.Bound, el.Estimate
			continue
		}
		s.MaxEstimate = max(s.MaxEstimate, el.Estimate)
		s.MaxErr = spec.Interval{Lo: max(s.MaxErr.Lo, el.Dist.Lo), Hi: max(s.MaxErr.Hi, el.Dist.Hi)}
		s.MaxBound = max(s.MaxBound, el.Bound)
	}
	return s
}

// evalMu serialises the evaluations over Err: the count of undecided
// comparisons and the ULPs setting are package state read around one
// evaluation (DenoteAll runs on the calling goroutine only).
var evalMu sync.Mutex

// Bounds evaluates g with payload p on the exact input over Err and
// returns, per element of the output (row-major), an enclosure of the
// exact value and the a-priori bound of doc.go. A graph, payload or input
// that is malformed, or options out of range, is an error; a failure of
// the evaluation itself (a raw log whose argument may be ≤ 0, an
// undecidable comparison a registry rule branches on) makes every element
// unbounded, with the reason, and is not an error.
func Bounds(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Enclosure, error) {
	return bounds[binary32](g, p, input, o)
}

// Bounds64 is Bounds for binary64 evaluations (over Err64): the bound of
// every evaluation of the registry's formulas in IEEE 754 binary64 that
// satisfies M1–M3 with binary64's constants (doc.go, "Formats"), the
// library within o.ULPs binary64 ulps.
func Bounds64(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Enclosure, error) {
	return bounds[binary64](g, p, input, o)
}

func bounds[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) ([]Enclosure, error) {
	k, err := checkBoundsArgs(g, p, input, o)
	if err != nil {
		return nil, err
	}
	evalMu.Lock()
	restore := useFormats(o)
	x := convertInput[F](g, input)
	curULPs.Store(int64(k))
	before := undecided.Load()
	out, err := denoteOut[F](g, p, x, errRegistry[F](o.Profile))
	und := undecided.Load() - before
	curULPs.Store(DefaultULPs)
	restore()
	evalMu.Unlock()
	return classicEnclosures(g, out, und, err)
}

// checkBoundsArgs refuses a malformed graph, payload or input, or options
// out of range, and returns the ulps of the library functions.
func checkBoundsArgs(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options) (int, error) {
	k, err := o.ulps()
	if err != nil {
		return 0, err
	}
	if g == nil {
		return 0, fmt.Errorf("fpbound: nil graph")
	}
	if err := g.Check(); err != nil {
		return 0, err
	}
	if err := irsem.CheckPayload(g, p); err != nil {
		return 0, err
	}
	in := &g.Nodes[g.InputID]
	if len(input.Data) != input.Shape.Size() || !input.Shape.Equal(in.Shape) {
		return 0, fmt.Errorf("fpbound: node %d (input): shape mismatch: expected %v, got %v with %d values", in.ID, in.Shape, input.Shape, len(input.Data))
	}
	return k, nil
}

// classicEval is one evaluation of the graph over Err (the classic
// bound): every node's value, the comparisons a registry rule branched on
// that it could not decide, and its error. SharpBounds runs it once; the
// classic enclosures read its output node and the first-order bound its
// every node (round 0 of the boxes).
type classicEval[F format] struct {
	all []spec.Tensor[ErrOf[F]]
	und int64
	err error
}

// evalClassic evaluates g over Err at input with the library within k
// ulps, keeping every node's value.
func evalClassic[F format](g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, o Options, k int) *classicEval[F] {
	evalMu.Lock()
	defer evalMu.Unlock()
	defer useFormats(o)()
	x := convertInput[F](g, input)
	curULPs.Store(int64(k))
	defer curULPs.Store(DefaultULPs)
	before := undecided.Load()
	all, err := denoteAll[F](g, p, x, errRegistry[F](o.Profile))
	return &classicEval[F]{all: all, und: undecided.Load() - before, err: err}
}

// classicEnclosures is the classic bound of every output element from
// the output's value out over Err, the undecided comparisons und and the
// evaluation's error err (see Bounds).
func classicEnclosures[F format](g *irsem.Graph, out spec.Tensor[ErrOf[F]], und int64, err error) ([]Enclosure, error) {
	n := g.Nodes[g.OutputID].Shape.Size()
	res := make([]Enclosure, n)
	whole := spec.Interval{Lo: math.Inf(-1), Hi: inf}
	switch {
	case err != nil && limits.IsLimit(err):
		return nil, err
	case err != nil:
		for i := range res {
			res[i] = Enclosure{Exact: whole, Bound: inf, Reason: "the evaluation failed: " + err.Error()}
		}
		return res, nil
	case len(out.Data) != n:
		return nil, fmt.Errorf("fpbound: internal error: output has %d values, shape %v", len(out.Data), g.Nodes[g.OutputID].Shape)
	}
	for i, v := range out.Data {
		c := v.close()
		res[i] = Enclosure{Exact: c.x, Bound: c.e}
		switch {
		case und > 0:
			res[i].Bound = inf
			res[i].Reason = fmt.Sprintf("%d comparison(s) a registry rule branches on could not be decided (a value within its error bound of the branch point): the runtime may take the other branch", und)
		case math.IsInf(c.e, 1):
			res[i].Reason = "no finite bound: an operation may overflow, or a divisor, log or sqrt argument may reach its singularity"
		}
	}
	return res, nil
}

func (o Options) ulps() (int, error) {
	if _, err := lookupProfile(o.Profile); err != nil {
		return 0, err
	}
	switch {
	case o.ULPs < 0 || o.ULPs > MaxULPs:
		return 0, fmt.Errorf("fpbound: ULPs %d out of range [0, %d]", o.ULPs, MaxULPs)
	case o.ULPs == 0:
		return DefaultULPs, nil
	}
	return o.ULPs, nil
}

// Compare judges the recorded binary32 output of g (row-major, one value
// per element of the output node) against SharpBounds (the smaller of the
// classic and the first-order bound, and the exact enclosure of both): per element, Fails iff
// the recorded value is provably farther than the bound from the exact
// value, Holds iff it is provably within it (Element.Verdict). A NaN or
// infinite recorded value fails wherever the bound is finite, since every
// modelled evaluation then is finite.
func Compare(g *irsem.Graph, p *irsem.Payload, input irsem.RatTensor, recorded []float32, o Options) (*Result, error) {
	sh, err := SharpBounds(g, p, input, o)
	if err != nil {
		return nil, err
	}
	encl := make([]Enclosure, len(sh))
	for i, s := range sh {
		encl[i] = s.Enclosure
	}
	if len(recorded) != len(encl) {
		return nil, fmt.Errorf("fpbound: node %d (output): %d recorded values for an output of %d elements (shape %v)",
			g.OutputID, len(recorded), len(encl), g.Nodes[g.OutputID].Shape)
	}
	r := &Result{Elements: make([]Element, len(encl))}
	for i, en := range encl {
		el := Judge(recorded[i], en)
		el.Classic, el.FirstOrder, el.Estimate = sh[i].Classic, sh[i].FirstOrder, sh[i].Estimate
		r.Elements[i] = el
	}
	r.Summary = Summarize(r.Elements)
	if len(sh) > 0 {
		r.Centre, r.CentreFallback = sh[0].Centre, sh[0].CentreFallback
	}
	return r, nil
}

// Judge decides one recorded value against its enclosure (see Element).
func Judge(rec float32, en Enclosure) Element {
	el := JudgeFloat64(float64(rec), en)
	el.Recorded = rec
	return el
}

// JudgeFloat64 is Judge for a recorded binary64 value (a DOUBLE output
// judged against Bounds64): the verdict and Dist are decided on rec
// itself; Element.Recorded holds rec rounded to float32, for display only.
func JudgeFloat64(rec float64, en Enclosure) Element {
	el := Element{Recorded: float32(rec), Exact: en.Exact, Bound: en.Bound, Reason: en.Reason, Classic: en.Bound, FirstOrder: en.Bound, Estimate: en.Bound}
	f := rec
	bounded := !math.IsInf(en.Exact.Lo, 0) && !math.IsInf(en.Exact.Hi, 0)
	finiteB := !math.IsInf(en.Bound, 1) && en.Bound >= 0
	if math.IsNaN(f) || math.IsInf(f, 0) {
		el.Dist = spec.Point(inf)
		if finiteB && bounded {
			el.Verdict = Fails
		}
		return el
	}
	r := new(big.Rat).SetFloat64(f)
	// dlo = the distance from r to Exact; dhi = the distance to its
	// farthest point (nil: unbounded).
	dlo := new(big.Rat)
	var dhi *big.Rat
	if !math.IsInf(en.Exact.Lo, -1) {
		if d := new(big.Rat).Sub(new(big.Rat).SetFloat64(en.Exact.Lo), r); d.Sign() > 0 {
			dlo = d
		}
	}
	if !math.IsInf(en.Exact.Hi, 1) {
		if d := new(big.Rat).Sub(r, new(big.Rat).SetFloat64(en.Exact.Hi)); d.Sign() > 0 {
			dlo = d
		}
	}
	if bounded {
		a := new(big.Rat).Abs(new(big.Rat).Sub(r, new(big.Rat).SetFloat64(en.Exact.Lo)))
		b := new(big.Rat).Abs(new(big.Rat).Sub(r, new(big.Rat).SetFloat64(en.Exact.Hi)))
		dhi = a
		if b.Cmp(a) > 0 {
			dhi = b
		}
	}
	el.Dist = spec.Interval{Lo: ratDown(dlo), Hi: inf}
	if dhi != nil {
		el.Dist.Hi = ratUp(dhi)
	}
	if !finiteB {
		return el
	}
	b := new(big.Rat).SetFloat64(en.Bound)
	switch {
	case dlo.Cmp(b) > 0:
		el.Verdict = Fails
	case dhi != nil && dhi.Cmp(b) <= 0:
		el.Verdict = Holds
	}
	return el
}

// ratDown returns a float64 ≤ r (r ≥ 0).
func ratDown(r *big.Rat) float64 {
	f, _ := r.Float64()
	if new(big.Rat).SetFloat64(f).Cmp(r) > 0 {
		f = down(f)
	}
	return max(f, 0)
}

// ratUp returns a float64 ≥ r (r ≥ 0).
func ratUp(r *big.Rat) float64 {
	f, _ := r.Float64()
	if math.IsInf(f, 1) {
		return f
	}
	if new(big.Rat).SetFloat64(f).Cmp(r) < 0 {
		f = up(f)
	}
	return f
}
