// Package diffrun is the differential runner behind tlcheck diff and
// tlcheck view: it runs one IR graph, with its payload and input, through
// every execution path the tree has — the IR semantics (irsem.DenoteAll),
// the forward graph (irsem.LowerForward), the typed graph (irgrad.Lower),
// the eager tape, the typed graph's checked lowering onto the tape, and
// the every-node sweep — over the exact rationals, F32, F64, the
// soft-float Binary32 and intervals, and compares them node by node
// (forward values, gradients from the output, gradients of the input and
// every payload parameter).
//
// The law it decides is cross-path agreement (CrossPath): over Rat every path
// must give the same exact value, over the float scalars the same bits
// (any NaN equals any NaN; SameBits), the soft-float Binary32 must equal
// the hardware F32 bit for bit, and every exact value must lie in its
// interval enclosure (IntervalSoundness). Each is an identity of deterministic computations,
// so a disagreement is a proof that some path is wrong: a verdict "fails"
// names the node, the element and both values (a counterexample.Failure).
// "Agree" holds for the graph, payload and input run, nothing more.
//
// obligations decides the same law on generated graphs (CheckIRCrossPath)
// and keeps the other laws; this package knows nothing of generators.
package diffrun

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// The laws DiffIR decides (obligations.CrossPath and
// obligations.IntervalSoundness).
const (
	// CrossPath: every execution path agrees node by node.
	CrossPath = "cross-path"
	// IntervalSoundness: every exact value lies in its interval enclosure.
	IntervalSoundness = "interval-soundness"
)

// The execution paths DiffIR runs on one IR graph.
const (
	PathIR           = "ir"            // irsem.DenoteAll, the IR semantics
	PathForwardGraph = "forward-graph" // irsem.LowerForward, then Run
	PathTypedGraph   = "typed-graph"   // irgrad.Lower: the typed graph (Eval; Exec.Backward)
	PathTape         = "tape"          // irgrad.Lowered.Record: the eager tape (values; dense sweep)
	PathLoweredTape  = "lowered-tape"  // the typed graph's checked lowering, then the tape's dense sweep
	PathBackpropCtx  = "backprop-ctx"  // Graph.BackpropCtx, the every-node sweep
)

// The scalars DiffIR runs over.
var diffScalars = []string{"rat", "f32", "f64", "binary32", "interval"}

// DiffScalars lists the scalars DiffIR knows, in the order it runs them.
func DiffScalars() []string { return append([]string(nil), diffScalars...) }

// DiffOptions configures DiffIR.
type DiffOptions struct {
	// Scalars restricts the run to these scalars (nil: every one that
	// applies). "interval" checks that the interval semantics contains the
	// exact values, so it needs "rat".
	Scalars []string
	// Seed is the output cotangent of the gradient comparisons (nil: ones
	// of the output's shape).
	Seed *spec.Tensor[spec.Rat]
	// RegistryHook, when set, is called with a fresh private registry
	// (a *spec.Registry[T] for the scalar named) before each of the paths
	// that take their rules from a registry — "typed-graph" (with
	// "lowered-tape" and "backprop-ctx", which share its lowering) and
	// "tape" — so that a self-test can Override a primitive on one path
	// and plant a disagreement. The IR semantics and the forward graph
	// always use the reference rules.
	RegistryHook func(scalar, path string, reg any)
}

// DiffCheck is one comparison DiffIR made.
type DiffCheck struct {
	// Scalar is the scalar compared over ("binary32~f32" for the
	// bit-for-bit comparison of the soft-float with the hardware scalar).
	Scalar string
	// What is "forward" (node values), "gradient" (node cotangents of the
	// dense sweep from the output), "context-gradient" (cotangents of the
	// input and every payload parameter) or "containment" (exact values in
	// their interval enclosures).
	What string
	// A and B name the two sides.
	A, B string
	// Nodes counts the nodes (or context entries) compared.
	Nodes int
	// Failure is the first disagreement, nil when the sides agree.
	Failure *counterexample.Failure
}

// DiffReport is everything DiffIR ran.
type DiffReport struct {
	// Hash is irsem.GraphHash of the graph and payload.
	Hash string
	// Checks lists the comparisons in the order they ran.
	Checks []DiffCheck
	// Skipped says, one line each, which scalars or paths did not apply
	// and why.
	Skipped []string
	// limit is a resource limit the IR semantics refused the input with
	// (package limits): DiffIR reports it as bad input.
	limit error
}

// OK reports that every comparison agreed and at least one ran.
func (r *DiffReport) OK() bool { return r.First() == nil && len(r.Checks) > 0 }

// First returns the first failing comparison, or nil.
func (r *DiffReport) First() *DiffCheck {
	for i := range r.Checks {
		if r.Checks[i].Failure != nil {
			return &r.Checks[i]
		}
	}
	return nil
}

// Err returns the first disagreement as an error, or nil.
func (r *DiffReport) Err() error {
	if c := r.First(); c != nil {
		return c.Failure
	}
	return nil
}

// BadInputError wraps a problem with DiffIR's inputs themselves (an
// ill-formed graph, a payload that does not fit it, an input of the wrong
// shape), as opposed to a disagreement between paths.
type BadInputError struct{ Err error }

// Error returns the cause's message.
func (e *BadInputError) Error() string { return e.Err.Error() }

// Unwrap returns the cause.
func (e *BadInputError) Unwrap() error { return e.Err }

// diffRun carries one scalar's results to the cross-scalar comparisons.
type diffRun[T spec.Scalar[T]] struct {
	ir    []spec.Tensor[T] // DenoteAll's value table
	grads []spec.Tensor[T] // the tape's node cotangents (nil when the tape path did not run)
}

// DiffIR runs every execution path over every scalar that applies on one
// IR graph, payload and exact input, and compares them node by node:
//
//   - forward values: ir (DenoteAll) against forward-graph, typed-graph
//     (irgrad's lowering, evaluated) and tape (irgrad's eager recording),
//     over rat (when every tag has exact rational semantics), f32, f64
//     and binary32;
//   - gradients: the tape's dense sweep against the typed graph's compiled
//     sweep, node by node on every node that requires a gradient, and the
//     cotangents of the input and every payload parameter along
//     lowered-tape (and, over rat, backprop-ctx, the every-node sweep,
//     which equals the others when the zero-preservation condition holds
//     — always over rat, not at singular points over floats);
//   - binary32 against f32, bit for bit (the same rules run the same
//     reduction orders), forward values and tape gradients;
//   - interval: every exact rat value lies in its DenoteAll enclosure over
//     spec.Interval.
//
// Values are compared with Same — exactly over rat, bit for bit over the
// float scalars (any NaN equals any NaN). A *BadInputError reports an
// unusable graph, payload or input; disagreements are in the report.
func DiffIR(g *irsem.Graph, p *irsem.Payload, input spec.Tensor[spec.Rat], o DiffOptions) (*DiffReport, error) {
	if err := g.Check(); err != nil {
		return nil, &BadInputError{err}
	}
	if err := irsem.CheckPayload(g, p); err != nil {
		return nil, &BadInputError{err}
	}
	in := g.Nodes[g.InputID].Shape
	if !input.Shape.Equal(in) || len(input.Data) != in.Size() {
		return nil, &BadInputError{fmt.Errorf("input has shape %v (%d values), the graph's input node %d has shape %v", input.Shape, len(input.Data), g.InputID, in)}
	}
	out := g.Nodes[g.OutputID].Shape
	seed := spec.Tensor[spec.Rat]{Shape: out.Clone(), Data: make([]spec.Rat, out.Size())}
	for i := range seed.Data {
		seed.Data[i] = spec.NewRat(1, 1)
	}
	if o.Seed != nil {
		if !o.Seed.Shape.Equal(out) || len(o.Seed.Data) != out.Size() {
			return nil, &BadInputError{fmt.Errorf("the output cotangent has shape %v, the output node %d has shape %v", o.Seed.Shape, g.OutputID, out)}
		}
		seed = *o.Seed
	}
	want := map[string]bool{}
	for _, s := range o.Scalars {
		known := false
		for _, k := range diffScalars {
			known = known || k == s
		}
		if !known {
			return nil, &BadInputError{fmt.Errorf("unknown scalar %q (want %s)", s, strings.Join(diffScalars, ", "))}
		}
		want[s] = true
	}
	run := func(s string) bool { return len(want) == 0 || want[s] }
	hash, err := irsem.GraphHash(g, p)
	if err != nil {
		return nil, &BadInputError{err}
	}
	rep := &DiffReport{Hash: hash}
	var exactReason string
	for _, n := range g.Nodes {
		if info, ok := irsem.LookupTag(n.Kind.Op); ok && !info.Exact {
			exactReason = fmt.Sprintf("node %d (%s) has no exact rational semantics", n.ID, n.Kind.Op)
			break
		}
	}
	var rat *diffRun[spec.Rat]
	switch {
	case !run("rat") && !run("interval"):
	case exactReason != "":
		rep.Skipped = append(rep.Skipped, "rat: "+exactReason)
		if run("interval") {
			rep.Skipped = append(rep.Skipped, "interval: containment needs the exact values ("+exactReason+")")
		}
	default:
		rat = diffOver[spec.Rat](rep, "rat", g, p, input, seed, o.RegistryHook)
		if rep.limit != nil {
			return nil, &BadInputError{rep.limit}
		}
	}
	var f32 *diffRun[spec.F32]
	if run("f32") || run("binary32") {
		f32 = diffOver[spec.F32](rep, "f32", g, p, input, seed, o.RegistryHook)
	}
	if run("f64") {
		diffOver[spec.F64](rep, "f64", g, p, input, seed, o.RegistryHook)
	}
	if run("binary32") {
		b32 := diffOver[spec.Binary32](rep, "binary32", g, p, input, seed, o.RegistryHook)
		if b32 != nil && f32 != nil {
			crossBits(rep, g, "forward", b32.ir, f32.ir)
			if b32.grads != nil && f32.grads != nil {
				crossBits(rep, g, "gradient", b32.grads, f32.grads)
			}
		}
	}
	if run("interval") && rat != nil {
		containment(rep, g, p, input, rat.ir)
	}
	if len(rep.Checks) == 0 {
		rep.Skipped = append(rep.Skipped, "no comparison applies")
	}
	return rep, nil
}

// nodeFailure completes a failure with the IR node's tag and the input.
func nodeFailure(f *counterexample.Failure, g *irsem.Graph, input spec.Tensor[spec.Rat]) *counterexample.Failure {
	f.Law = CrossPath
	if f.Node >= 0 && f.Node < len(g.Nodes) {
		f.Op = string(g.Nodes[f.Node].Kind.Op)
	}
	f.Inputs = []spec.Tensor[spec.Rat]{input}
	return f
}

// compareTables compares two value tables indexed by IR node id, in id
// order (in reverse id order, the order of a reverse sweep, for
// cotangents), skipping nodes for which skip is true.
func compareTables[T spec.Scalar[T]](rep *DiffReport, g *irsem.Graph, input spec.Tensor[spec.Rat], scalar, what, a, b string, x, y []spec.Tensor[T], skip func(id int) bool) {
	c := DiffCheck{Scalar: scalar, What: what, A: a, B: b}
	for k := range x {
		id := k
		if what == "gradient" {
			id = len(x) - 1 - k
		}
		if skip != nil && skip(id) {
			continue
		}
		c.Nodes++
		if id >= len(y) {
			c.Failure = nodeFailure(&counterexample.Failure{Sides: a + " vs " + b, Scalar: scalar, Node: id, Element: -1, LHS: "a value", RHS: "none"}, g, input)
			break
		}
		if f := counterexample.TensorDiff(CrossPath, a+" "+what+" vs "+b, id, "", x[id], y[id], SameBits[T]); f != nil {
			c.Failure = nodeFailure(f, g, input)
			break
		}
	}
	rep.Checks = append(rep.Checks, c)
}

// pathError records a path that failed where the IR semantics succeeded:
// a disagreement at the node the error names.
func pathError(rep *DiffReport, g *irsem.Graph, input spec.Tensor[spec.Rat], scalar, what, a, b string, err error) {
	node := -1
	var ie *irsem.Error
	if errors.As(err, &ie) {
		node = ie.Node
	}
	f := nodeFailure(&counterexample.Failure{Sides: a + " " + what + " vs " + b, Scalar: scalar, Node: node, Element: -1, LHS: "a value", RHS: "error: " + err.Error()}, g, input)
	rep.Checks = append(rep.Checks, DiffCheck{Scalar: scalar, What: what, A: a, B: b, Failure: f})
}

// hooked returns the reference registry, or a private copy passed through
// the hook.
func hooked[T spec.Scalar[T]](hook func(scalar, path string, reg any), scalar, path string) *spec.Registry[T] {
	if hook == nil {
		return nil
	}
	reg := spec.New[T]()
	hook(scalar, path, reg)
	return reg
}

// noGradient reports that irgrad cannot differentiate a graph (a tag
// without derivative rules, or without exact semantics over rat).
func noGradient(err error) bool {
	var ie *irsem.Error
	return errors.As(err, &ie)
}

func diffOver[T spec.Scalar[T]](rep *DiffReport, scalar string, g *irsem.Graph, p *irsem.Payload, input, seed spec.Tensor[spec.Rat],
	hook func(scalar, path string, reg any)) *diffRun[T] {
	in := spec.Convert(input, irsem.FromRat[T])
	sd := spec.Convert(seed, irsem.FromRat[T])
	ir, err := irsem.DenoteAll(g, p, in)
	if limits.IsLimit(err) {
		rep.limit = err // a refusal, not a scalar that does not apply
		return nil
	}
	if err != nil {
		rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: the IR semantics fails, nothing to compare: %v", scalar, err))
		return nil
	}
	res := &diffRun[T]{ir: ir}
	if fg, err := irsem.LowerForward[T](g, p); err != nil {
		pathError(rep, g, input, scalar, "forward", PathIR, PathForwardGraph, err)
	} else if fv, err := fg.Run(in); err != nil {
		pathError(rep, g, input, scalar, "forward", PathIR, PathForwardGraph, err)
	} else {
		compareTables(rep, g, input, scalar, "forward", PathIR, PathForwardGraph, ir, fv, nil)
	}
	lt, err := irgrad.Lower(hooked[T](hook, scalar, PathTypedGraph), g, p)
	if err != nil {
		rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: typed-graph and tape paths: %v", scalar, err))
		return res
	}
	lp, err := irgrad.Lower(hooked[T](hook, scalar, PathTape), g, p)
	if err != nil {
		rep.Skipped = append(rep.Skipped, fmt.Sprintf("%s: tape path: %v", scalar, err))
		return res
	}
	tv, terr := lt.Values(in)
	if terr != nil {
		pathError(rep, g, input, scalar, "forward", PathIR, PathTypedGraph, terr)
	} else {
		compareTables(rep, g, input, scalar, "forward", PathIR, PathTypedGraph, ir, tv, nil)
	}
	trun, perr := lp.Record(in)
	if perr != nil {
		pathError(rep, g, input, scalar, "forward", PathIR, PathTape, perr)
		return res
	}
	pv := make([]spec.Tensor[T], len(trun.Nodes))
	for id, tid := range trun.Nodes {
		pv[id], _ = trun.Tape.Value(tid)
	}
	compareTables(rep, g, input, scalar, "forward", PathIR, PathTape, ir, pv, nil)
	if terr != nil {
		return res
	}
	// Gradients: the tape's dense sweep against the typed graph's
	// compiled sweep, node by node.
	out := trun.Nodes[g.OutputID]
	gs, err := trun.Tape.Backward(out, sd)
	if err != nil {
		pathError(rep, g, input, scalar, "gradient", PathTypedGraph, PathTape, lp.TapeErr(trun, err))
		return res
	}
	dense := gs.Dense()
	res.grads = make([]spec.Tensor[T], len(trun.Nodes))
	for id, tid := range trun.Nodes {
		res.grads[id] = dense[tid]
	}
	ctx, err := lt.Context(in)
	if err != nil {
		pathError(rep, g, input, scalar, "gradient", PathTape, PathTypedGraph, err)
		return res
	}
	e, err := lt.Graph.Compile()
	if err == nil {
		_, err = e.Forward(ctx)
	}
	var all []spec.Tensor[T]
	if err == nil {
		all, err = e.Backward(sd)
	}
	if err != nil {
		pathError(rep, g, input, scalar, "gradient", PathTape, PathTypedGraph, lt.GraphErr(err))
		return res
	}
	typed := make([]spec.Tensor[T], len(lt.Entry))
	for id, ent := range lt.Entry {
		typed[id] = all[ent]
	}
	compareTables(rep, g, input, scalar, "gradient", PathTape, PathTypedGraph, res.grads, typed, func(id int) bool {
		nd, err := trun.Tape.Node(trun.Nodes[id])
		return err != nil || !nd.RequiresGrad
	})
	// Context gradients (input and payload parameters) along every path.
	ctxGrads := func(path irgrad.Path) ([]spec.Tensor[T], error) {
		l := lt
		if path == irgrad.PathTape {
			l = lp
		}
		gr, err := l.VJP(path, in, sd)
		if err != nil {
			return nil, err
		}
		return append([]spec.Tensor[T]{gr.Input}, gr.Params...), nil
	}
	base, err := ctxGrads(irgrad.PathTape)
	if err != nil {
		pathError(rep, g, input, scalar, "context-gradient", PathTape, PathTape, err)
		return res
	}
	for _, path := range []irgrad.Path{irgrad.PathTypedGraph, irgrad.PathLoweredTape, irgrad.PathBackpropCtx} {
		if path == irgrad.PathBackpropCtx && scalar != "rat" {
			continue // the every-node sweep may differ at singular points over floats
		}
		cg, err := ctxGrads(path)
		if err != nil {
			pathError(rep, g, input, scalar, "context-gradient", PathTape, string(path), err)
			continue
		}
		c := DiffCheck{Scalar: scalar, What: "context-gradient", A: PathTape, B: string(path), Nodes: len(base)}
		same, detail := SameBits[T], ""
		if path == irgrad.PathLoweredTape && scalar != "rat" {
			// The checked lowering sends explicit zero contributions through
			// stop-gradient and constant nodes, so VJPs run on synthetic
			// zero cotangents: −0 may arrive where the tape leaves +0.
			same, detail = SameValue[T], "; compared by value (±0 equal): the lowered tape runs VJPs on synthetic zero cotangents, so a NaN here is a zero-preservation failure at a singular point"
		}
		for i := range base {
			name := irgrad.InputName
			node := g.InputID
			if i > 0 {
				name, node = lt.Params[i-1].Name, lt.Params[i-1].Node
			}
			if f := counterexample.TensorDiff(CrossPath, "tape vs "+string(path)+" cotangent of "+name, node, "", base[i], cg[i], same); f != nil {
				c.Failure = nodeFailure(f, g, input)
				c.Failure.Detail = "context entry " + name + detail
				break
			}
		}
		rep.Checks = append(rep.Checks, c)
	}
	return res
}

// crossBits compares binary32 tables with f32 tables bit for bit (any
// NaN equals any NaN).
func crossBits(rep *DiffReport, g *irsem.Graph, what string, b32 []spec.Tensor[spec.Binary32], f32 []spec.Tensor[spec.F32]) {
	c := DiffCheck{Scalar: "binary32~f32", What: what, A: "binary32", B: "f32", Nodes: len(b32)}
	for id := range b32 {
		if len(b32[id].Data) != len(f32[id].Data) {
			c.Failure = &counterexample.Failure{Law: CrossPath, Sides: "binary32 vs f32 " + what, Node: id, Op: string(g.Nodes[id].Kind.Op), Element: -1,
				LHS: b32[id].Shape.String(), RHS: f32[id].Shape.String()}
			break
		}
		for i := range b32[id].Data {
			x, y := b32[id].Data[i].Float32(), float32(f32[id].Data[i])
			if math.Float32bits(x) != math.Float32bits(y) && !(x != x && y != y) {
				c.Failure = &counterexample.Failure{Law: CrossPath, Sides: "binary32 vs f32 " + what + ", bit for bit", Scalar: "binary32~f32",
					Node: id, Op: string(g.Nodes[id].Kind.Op), Element: i,
					LHS: fmt.Sprintf("%s (0x%08x)", b32[id].Data[i], math.Float32bits(x)), RHS: fmt.Sprintf("%s (0x%08x)", f32[id].Data[i], math.Float32bits(y))}
				break
			}
		}
		if c.Failure != nil {
			break
		}
	}
	rep.Checks = append(rep.Checks, c)
}

// containment checks that every exact value lies in its interval
// enclosure.
func containment(rep *DiffReport, g *irsem.Graph, p *irsem.Payload, input spec.Tensor[spec.Rat], exact []spec.Tensor[spec.Rat]) {
	c := DiffCheck{Scalar: "interval", What: "containment", A: "rat", B: "interval", Nodes: len(exact)}
	err := Containment(g, p, input)
	var f *counterexample.Failure
	switch {
	case errors.As(err, &f):
		c.Failure = f
	case err != nil:
		pathError(rep, g, input, "interval", "containment", "rat", "interval", err)
		return
	}
	rep.Checks = append(rep.Checks, c)
}

// SameBits is the runner's equality for the float scalars: any two NaNs
// are equal (Go does not specify which NaN a NaN result carries) and
// otherwise bit for bit; for other scalars it is Same.
func SameBits[T spec.Scalar[T]](a, b T) bool {
	if a.Same(b) {
		return true
	}
	fa, fb := a.Float64(), b.Float64()
	return math.IsNaN(fa) && math.IsNaN(fb)
}

// SameValue is SameBits with +0 equal to −0.
func SameValue[T spec.Scalar[T]](a, b T) bool {
	return SameBits(a, b) || (a.IsZero() && b.IsZero())
}

// Containment decides (law IntervalSoundness) that the exact value of every node of
// an exact IR graph lies in the interval the same graph denotes over
// spec.Interval (irsem.DenoteAll over both scalars, the input enclosed
// with FromRat), element by element with Interval.Contains. Interval arithmetic
// encloses every exact result (spec.Interval rounds outward), so a value
// outside its enclosure proves the interval rules (or the semantics) wrong.
func Containment(g *irsem.Graph, p *irsem.Payload, input spec.Tensor[spec.Rat]) error {
	exact, err := irsem.DenoteAll(g, p, input)
	if err != nil {
		return fmt.Errorf("denote over rat: %w", err)
	}
	iv, err := irsem.DenoteAll(g, p, spec.Convert(input, irsem.FromRat[spec.Interval]))
	if err != nil {
		return fmt.Errorf("denote over interval: %w", err)
	}
	for id := range exact {
		if !exact[id].Shape.Equal(iv[id].Shape) {
			return &counterexample.Failure{Law: IntervalSoundness, Sides: "rat vs interval", Node: id, Op: string(g.Nodes[id].Kind.Op), Element: -1,
				LHS: exact[id].Shape.String(), RHS: iv[id].Shape.String(), Inputs: []spec.Tensor[spec.Rat]{input}}
		}
		for i, r := range exact[id].Data {
			if !iv[id].Data[i].Contains(r.Big()) {
				return &counterexample.Failure{Law: IntervalSoundness, Sides: "exact value ∈ interval", Scalar: "interval", Node: id,
					Op: string(g.Nodes[id].Kind.Op), Element: i, LHS: r.String(), RHS: iv[id].Data[i].String(),
					Detail: "the exact value lies outside its enclosure", Inputs: []spec.Tensor[spec.Rat]{input}}
			}
		}
	}
	return nil
}
