package irgrad

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// InputName is the name of context entry 0, the IR input.
const InputName = "input"

// Param describes one payload parameter tensor that the lowering exposes
// as a context entry (entry 1 + its index in Lowered.Params).
type Param struct {
	// Name is "node<ID>.<Field>", e.g. "node3.W".
	Name string
	// Node is the IR node whose payload entry holds it, Field its name
	// there (irsem.ParamW, ParamB, ParamGamma, ParamBeta).
	Node  int
	Field string
	// Shape is the payload tensor's shape (the context entry's shape).
	Shape spec.Shape
}

// ParamName returns the context name of parameter field of node id.
func ParamName(id int, field string) string { return fmt.Sprintf("node%d.%s", id, field) }

type paramKey struct {
	node  int
	field string
}

// Lowered is an IR graph and payload lowered to a typed graph over T.
// It is immutable once built and its methods may run concurrently.
type Lowered[T spec.Scalar[T]] struct {
	// Graph is the typed graph: context input, then Params; its result is
	// the IR output's value.
	Graph *typedgraph.Graph[T]
	// Params lists the context entries after the input.
	Params []Param
	// Entry maps each IR node id to the typed-graph entry that holds its
	// value (0 for the input node).
	Entry []int

	ir       *irsem.Graph
	apps     []irsem.Application
	pidx     map[paramKey]int
	pvals    []spec.Tensor[T] // the parameters converted to T
	reg      *spec.Registry[T]
	entryIR  []int // typed-graph entry id → IR node id it belongs to (context entries: the input node, the parameter's node)
	inShape  spec.Shape
	outShape spec.Shape
}

// nodeErr reports err, raised while lowering or running the part of the
// lowered model that belongs to IR node id, at that node: whatever node
// of the typed graph or tape err names is an internal id, so it is
// replaced (spec.Relocate), and a typed graph's shape error, which cites
// an internal entry id too, keeps only its shapes.
func nodeErr(g *irsem.Graph, id int, err error) error {
	var se *typedgraph.ShapeError
	if errors.As(err, &se) {
		msg := fmt.Sprintf("shape mismatch: expected %v, got %v", se.Expected, se.Got)
		if se.Op != "" {
			msg += " (" + se.Op + ")"
		}
		return spec.NewNodeError(id, string(g.Nodes[id].Kind.Op), msg, nil)
	}
	return spec.Relocate(id, string(g.Nodes[id].Kind.Op), err)
}

func nodeErrf(g *irsem.Graph, id int, format string, args ...any) error {
	return spec.NewNodeError(id, string(g.Nodes[id].Kind.Op), fmt.Sprintf(format, args...), nil)
}

// internalNode returns the internal (typed-graph entry or tape node) id
// that err names: a located spec.NodeError's node, or a typed graph
// ShapeError's entry; ok is false when err names none.
func internalNode(err error) (int, bool) {
	var se *typedgraph.ShapeError
	var ne *spec.NodeError
	switch {
	case errors.As(err, &ne) && ne.Node >= 0:
		return ne.Node, true
	case errors.As(err, &se):
		return se.ID, true
	}
	return -1, false
}

// mapErr reports an error of a run over an internal graph at the IR node
// that owner (internal id → IR node id, −1 for none) assigns to the
// internal node err names; context says what ran ("tape backward"), for
// an error that names no node the map knows.
func (l *Lowered[T]) mapErr(owner []int, context string, err error) error {
	if err == nil {
		return nil
	}
	if k, ok := internalNode(err); ok && k < len(owner) && owner[k] >= 0 {
		return nodeErr(l.ir, owner[k], err)
	}
	return fmt.Errorf("%s: %w", context, err)
}

// ErrNoPrimitive is the cause of Lower's error at a node whose tag has no
// registry primitive (irsem.Application.IROnly), so that the node can be
// recorded neither on a tape nor on a typed graph. Every built-in tag has
// a primitive today (conv, the pools and batch_norm_eval were once
// irsem-only); the check stays for a tag irsem might define itself.
// It says nothing about gradients: Lower also serves forward evaluation.
// Grad, which lowers in order to differentiate, reports such a node as
// "no derivative rules; gradients of this tag are not supported".
var ErrNoPrimitive = errors.New("no registry primitive: the tape and the typed graph record registry primitives only, and irsem evaluates this tag itself (the IR semantics, the forward graph)")

// LowerOptions selects what the lowering exposes as context entries.
type LowerOptions struct {
	// ConstParams makes every const node's value a context entry too,
	// named "node<ID>.value" (Field irsem.ParamValue), in node-id order
	// among the payload parameters, so that the reverse sweep returns the
	// gradient of the output w.r.t. that value: for an imported model
	// whose initializers became const nodes, the gradient w.r.t. each
	// initializer. The forward values are unchanged (the entry holds the
	// const's payload value); only the constants' status changes, from
	// constant nodes that receive no gradient to leaves that do. A const
	// node's entry is its whole value, so with several children the
	// cotangent is the sum over its uses (the sweep accumulates).
	ConstParams bool
}

// Lower lowers g with payload p to a typed graph over T whose rules come
// from reg (nil: spec.Default[T]()). It checks g and p (irsem.Applications),
// rejects tags without a registry primitive ("node N (tag): " followed by
// ErrNoPrimitive's text) and, over spec.Rat,
// tags without exact rational semantics, and checks every node's shape
// against the IR's declared shape. Errors are *irsem.Error values naming
// the node. The graph g is not retained beyond reading it; the payload's
// tensors are converted to T once, here.
func Lower[T spec.Scalar[T]](reg *spec.Registry[T], g *irsem.Graph, p *irsem.Payload) (*Lowered[T], error) {
	return LowerWith(reg, g, p, LowerOptions{})
}

// LowerWith is Lower with options (LowerOptions): with ConstParams, the
// const nodes' values are context entries as well.
func LowerWith[T spec.Scalar[T]](reg *spec.Registry[T], g *irsem.Graph, p *irsem.Payload, opt LowerOptions) (*Lowered[T], error) {
	if reg == nil {
		reg = spec.Default[T]()
	}
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return nil, err
	}
	rat := spec.KindOf[T]() == "rat"
	l := &Lowered[T]{ir: g.Clone(), apps: apps, pidx: map[paramKey]int{}, reg: reg}
	for i := range apps {
		a := &apps[i]
		info, _ := irsem.LookupTag(a.Op)
		if a.IROnly {
			return nil, spec.NewNodeError(i, string(a.Op), "", ErrNoPrimitive)
		}
		if rat && !info.Exact {
			return nil, nodeErrf(g, i, "%s has no exact rational semantics; evaluate it over f32, f64, binary32 or interval", a.Op)
		}
		if opt.ConstParams && a.Source && a.Op == irsem.OpConst {
			if a.Value == nil {
				return nil, nodeErrf(g, i, "const node has no payload value")
			}
			l.pidx[paramKey{i, irsem.ParamValue}] = len(l.Params)
			l.Params = append(l.Params, Param{Name: ParamName(i, irsem.ParamValue), Node: i, Field: irsem.ParamValue, Shape: a.Value.Shape.Clone()})
			l.pvals = append(l.pvals, irsem.ConvertTensor[T](*a.Value))
			continue
		}
		for _, s := range a.Steps {
			for _, arg := range s.Args {
				if arg.Source != irsem.ArgParam {
					continue
				}
				if !arg.Present() {
					return nil, nodeErrf(g, i, "payload parameter %q has no value", arg.Param)
				}
				k := paramKey{i, arg.Param}
				if _, ok := l.pidx[k]; ok {
					continue
				}
				l.pidx[k] = len(l.Params)
				v := arg.Rats() // either storage (a W plane's rationals are derived here)
				l.Params = append(l.Params, Param{Name: ParamName(i, arg.Param), Node: i, Field: arg.Param, Shape: v.Shape.Clone()})
				l.pvals = append(l.pvals, irsem.ConvertTensor[T](*v))
			}
		}
	}
	l.inShape = g.Nodes[g.InputID].Shape.Clone()
	l.outShape = g.Nodes[g.OutputID].Shape.Clone()

	b := typedgraph.NewBuilder[T](reg)
	ctx := make([]typedgraph.Var, 0, 1+len(l.Params))
	v, err := b.Input(InputName, l.inShape)
	if err != nil {
		return nil, nodeErr(g, g.InputID, err)
	}
	ctx = append(ctx, v)
	for _, prm := range l.Params {
		v, err := b.Input(prm.Name, prm.Shape)
		if err != nil {
			return nil, nodeErr(g, prm.Node, err)
		}
		ctx = append(ctx, v)
	}
	var owner []int
	refs, err := build[T, typedgraph.Var](l, b, ctx, b.Shape, func(v typedgraph.Var, node int) {
		for len(owner) <= v.ID() {
			owner = append(owner, -1)
		}
		if owner[v.ID()] < 0 && v.ID() >= len(ctx) {
			owner[v.ID()] = node
		}
	})
	if err != nil {
		return nil, err
	}
	if l.Graph, err = b.Finish(refs[g.OutputID]); err != nil {
		return nil, nodeErr(g, g.OutputID, err)
	}
	l.Entry = make([]int, len(refs))
	for i, r := range refs {
		l.Entry[i] = r.ID()
	}
	l.entryIR = make([]int, l.Graph.Len())
	for i := range l.entryIR {
		l.entryIR[i] = -1
		if i < len(owner) {
			l.entryIR[i] = owner[i]
		}
	}
	l.entryIR[0] = g.InputID
	for i, prm := range l.Params {
		l.entryIR[1+i] = prm.Node
	}
	return l, nil
}

// build runs the applications under the interpreter o, reading the
// context references ctx (input, then parameters), and returns the
// reference of every IR node's value. shapeOf reports a reference's shape
// (each step's result is checked against the application's shape); seen
// is told the IR node each new reference belongs to.
func build[T spec.Scalar[T], R any](l *Lowered[T], o typedgraph.Ops[T, R], ctx []R,
	shapeOf func(R) (spec.Shape, error), seen func(R, int)) ([]R, error) {
	g := l.ir
	refs := make([]R, len(g.Nodes))
	check := func(i int, r R, want spec.Shape, what string) error {
		s, err := shapeOf(r)
		if err != nil {
			return nodeErr(g, i, err)
		}
		if !s.Equal(want) {
			return nodeErrf(g, i, "%s: shape mismatch: expected %v, got %v", what, want, s)
		}
		seen(r, i)
		return nil
	}
	for i := range l.apps {
		a := &l.apps[i]
		n := &g.Nodes[i]
		switch {
		case a.Op == irsem.OpInput:
			refs[i] = ctx[0]
			continue
		case a.Source:
			if pi, ok := l.pidx[paramKey{i, irsem.ParamValue}]; ok {
				// ConstParams: the const's value is a context entry.
				r := ctx[1+pi]
				if err := check(i, r, n.Shape, "const"); err != nil {
					return nil, err
				}
				refs[i] = r
				continue
			}
			r, err := o.Const(ParamName(i, irsem.ParamValue), irsem.ConvertTensor[T](*a.Value))
			if err != nil {
				return nil, nodeErr(g, i, err)
			}
			if err := check(i, r, n.Shape, "const"); err != nil {
				return nil, err
			}
			refs[i] = r
			continue
		}
		steps := make([]R, 0, len(a.Steps))
		for k := range a.Steps {
			s := &a.Steps[k]
			args := make([]R, len(s.Args))
			for j, arg := range s.Args {
				var r R
				switch arg.Source {
				case irsem.ArgParent:
					r = refs[n.Parents[arg.Index]]
				case irsem.ArgStep:
					r = steps[arg.Index]
				case irsem.ArgParam:
					pi := l.pidx[paramKey{i, arg.Param}]
					r = ctx[1+pi]
					if !l.Params[pi].Shape.Equal(arg.Shape) {
						var err error
						if r, err = o.Apply("reshape", &spec.Attrs{Shape: arg.Shape.Clone()}, r); err != nil {
							return nil, nodeErr(g, i, err)
						}
						if err := check(i, r, arg.Shape, "reshape of "+arg.Param); err != nil {
							return nil, err
						}
					}
				case irsem.ArgConst:
					v := irsem.ConvertTensor[T](*arg.Value)
					v.Shape = arg.Shape.Clone()
					var err error
					if r, err = o.Const(ParamName(i, arg.Param)+".default", v); err != nil {
						return nil, nodeErr(g, i, err)
					}
					if err := check(i, r, arg.Shape, "default "+arg.Param); err != nil {
						return nil, err
					}
				default:
					return nil, nodeErrf(g, i, "step %d: unknown argument source %v", k, arg.Source)
				}
				args[j] = r
			}
			var r R
			var err error
			if s.Prim == "detach" {
				r, err = o.Detach(args[0])
			} else {
				r, err = o.Apply(s.Prim, s.Attrs, args...)
			}
			if err != nil {
				return nil, nodeErr(g, i, err)
			}
			if err := check(i, r, s.Shape, s.Prim); err != nil {
				return nil, err
			}
			steps = append(steps, r)
		}
		refs[i] = steps[len(steps)-1]
	}
	return refs, nil
}

// IR returns a copy of the IR graph the model was lowered from.
func (l *Lowered[T]) IR() *irsem.Graph { return l.ir.Clone() }

// InputShape is the shape of the IR input (context entry 0).
func (l *Lowered[T]) InputShape() spec.Shape { return l.inShape.Clone() }

// OutputShape is the shape of the IR output.
func (l *Lowered[T]) OutputShape() spec.Shape { return l.outShape.Clone() }

// ParamValues returns the payload parameters converted to T, one per
// Params entry (shared: treat them as read-only).
func (l *Lowered[T]) ParamValues() []spec.Tensor[T] {
	return append([]spec.Tensor[T](nil), l.pvals...)
}

// Context returns the typed graph's context values for input: the input
// (checked against the IR input's shape), then the parameters.
func (l *Lowered[T]) Context(input spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if len(input.Data) != input.Shape.Size() || !input.Shape.Equal(l.inShape) {
		return nil, nodeErrf(l.ir, l.ir.InputID, "shape mismatch: expected %v, got %v (%d values)", l.inShape, input.Shape, len(input.Data))
	}
	ctx := make([]spec.Tensor[T], 0, 1+len(l.pvals))
	ctx = append(ctx, input)
	return append(ctx, l.pvals...), nil
}

// Values evaluates the typed graph (Graph.Eval) at input and returns the
// value of every IR node, indexed by IR node id. An evaluation error is
// attributed to the IR node whose lowering failed.
func (l *Lowered[T]) Values(input spec.Tensor[T]) ([]spec.Tensor[T], error) {
	ctx, err := l.Context(input)
	if err != nil {
		return nil, err
	}
	all, err := l.Graph.Eval(ctx)
	if err != nil {
		return nil, l.mapErr(l.entryIR, "typed graph", err)
	}
	out := make([]spec.Tensor[T], len(l.Entry))
	for i, e := range l.Entry {
		out[i] = all[e]
	}
	return out, nil
}

// GraphErr reports an error of a run of l.Graph — Eval, a compiled Exec's
// Forward or Backward, BackpropCtx — at the IR node that the failing
// typed-graph entry belongs to, so that a caller running the typed graph
// itself never shows the user an internal entry id. An error that names no
// entry is returned wrapped as "typed graph: …"; nil stays nil.
func (l *Lowered[T]) GraphErr(err error) error { return l.mapErr(l.entryIR, "typed graph", err) }

// TapeErr reports an error of the tape that Record recorded (its Backward,
// say) at the IR node that the failing tape node belongs to; see GraphErr.
func (l *Lowered[T]) TapeErr(run *TapeRun[T], err error) error {
	return l.mapErr(run.Owner, "tape", err)
}

// TapeRun is the IR recorded directly on an eager tape.
type TapeRun[T spec.Scalar[T]] struct {
	// Tape is the recording.
	Tape *tape.Tape[T]
	// Nodes holds the tape id of every IR node's value.
	Nodes []int
	// Ctx holds the tape ids of the leaves: the input, then the Params.
	// All are parameter leaves (requiresGrad = true), so that the sweep
	// computes the input's gradient too.
	Ctx []int
	// Owner maps every tape node id to the IR node it belongs to (the
	// input node and the parameters' nodes for the leaves), so that an
	// error of the tape, which names tape ids, is reported at the IR node.
	Owner []int
}

// Record records the model at input directly on a fresh eager tape with
// the typed graph's eager interpreter: each step is one tape.Apply with
// the registry's rules (detach is the tape's stop-gradient node, a const
// a constant leaf). Errors name the IR node.
func (l *Lowered[T]) Record(input spec.Tensor[T]) (*TapeRun[T], error) {
	ctxVals, err := l.Context(input)
	if err != nil {
		return nil, err
	}
	e := typedgraph.NewEager[T](l.reg)
	ctx := make([]tape.Ref, len(ctxVals))
	for i, v := range ctxVals {
		name, node := InputName, l.ir.InputID
		if i > 0 {
			name, node = l.Params[i-1].Name, l.Params[i-1].Node
		}
		if ctx[i], err = e.Session.Param(name, v); err != nil {
			return nil, nodeErr(l.ir, node, err)
		}
	}
	shapeOf := func(r tape.Ref) (spec.Shape, error) {
		v, err := e.Session.Value(r)
		return v.Shape, err
	}
	var owner []int
	own := func(id, node int) {
		for len(owner) <= id {
			owner = append(owner, -1)
		}
		if owner[id] < 0 {
			owner[id] = node
		}
	}
	for i, r := range ctx {
		if i == 0 {
			own(r.ID(), l.ir.InputID)
		} else {
			own(r.ID(), l.Params[i-1].Node)
		}
	}
	refs, err := build[T, tape.Ref](l, e, ctx, shapeOf, func(r tape.Ref, node int) { own(r.ID(), node) })
	if err != nil {
		return nil, err
	}
	run := &TapeRun[T]{Tape: e.Session.Tape(), Nodes: make([]int, len(refs)), Ctx: make([]int, len(ctx)), Owner: owner}
	for i, r := range refs {
		run.Nodes[i] = r.ID()
	}
	for i, r := range ctx {
		run.Ctx[i] = r.ID()
	}
	return run, nil
}

// TapeValues records the model at input on a tape (Record) and returns
// the value of every IR node, indexed by IR node id.
func (l *Lowered[T]) TapeValues(input spec.Tensor[T]) ([]spec.Tensor[T], error) {
	run, err := l.Record(input)
	if err != nil {
		return nil, err
	}
	out := make([]spec.Tensor[T], len(run.Nodes))
	for i, id := range run.Nodes {
		if out[i], err = run.Tape.Value(id); err != nil {
			return nil, nodeErr(l.ir, i, err)
		}
	}
	return out, nil
}
