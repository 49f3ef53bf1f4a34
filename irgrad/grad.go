package irgrad

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Path names a route by which a lowered model is differentiated.
type Path string

// The differentiation paths (see the package documentation).
const (
	PathTape        Path = "tape"
	PathTypedGraph  Path = "typed-graph"
	PathLoweredTape Path = "lowered-tape"
	PathBackpropCtx Path = "backprop-ctx"
)

// Paths lists every path, in the order above.
func Paths() []Path { return []Path{PathTape, PathTypedGraph, PathLoweredTape, PathBackpropCtx} }

// Gradients is the result of a reverse pass: the output's value and the
// cotangent of every context entry.
type Gradients[T spec.Scalar[T]] struct {
	// Path is the route that computed it.
	Path Path
	// Output is the IR output's value.
	Output spec.Tensor[T]
	// Input is the cotangent of the IR input.
	Input spec.Tensor[T]
	// Params holds one cotangent per Lowered.Params entry, in order.
	Params []spec.Tensor[T]
}

// Grad is the gradient of a single-element output (shape [], [1], [1,1],
// …) with respect to the input and every parameter: VJP with the seed 1
// of the output's shape. Any other output shape is an error naming the
// output node.
func (l *Lowered[T]) Grad(path Path, input spec.Tensor[T]) (*Gradients[T], error) {
	if l.outShape.Size() != 1 {
		return nil, nodeErrf(l.ir, l.ir.OutputID, "grad needs a single-element (scalar) output, but the output has shape %v; use a reducing node such as sum or mse_loss", l.outShape)
	}
	seed, err := spec.Full(l.outShape.Clone(), spec.One[T]())
	if err != nil {
		return nil, err
	}
	return l.VJP(path, input, seed)
}

// VJP runs the model at input and the reverse pass along path from the
// output with cotangent seed (of the output's shape). Every returned
// tensor is fresh. Errors name the IR node where they can.
func (l *Lowered[T]) VJP(path Path, input, seed spec.Tensor[T]) (*Gradients[T], error) {
	if len(seed.Data) != seed.Shape.Size() || !seed.Shape.Equal(l.outShape) {
		return nil, nodeErrf(l.ir, l.ir.OutputID, "seed shape mismatch: expected %v, got %v (%d values)", l.outShape, seed.Shape, len(seed.Data))
	}
	ctx, err := l.Context(input)
	if err != nil {
		return nil, err
	}
	var out spec.Tensor[T]
	var cts []spec.Tensor[T] // one per context entry
	switch path {
	case PathTape:
		run, err := l.Record(input)
		if err != nil {
			return nil, err
		}
		o := run.Nodes[l.ir.OutputID]
		if out, err = run.Tape.Value(o); err != nil {
			return nil, err
		}
		gs, err := run.Tape.Backward(o, seed)
		if err != nil {
			return nil, l.mapErr(run.Owner, "tape backward", err)
		}
		dense := gs.Dense()
		for _, id := range run.Ctx {
			cts = append(cts, dense[id])
		}
	case PathTypedGraph:
		e, err := l.Graph.Compile()
		if err != nil {
			return nil, err
		}
		if out, err = e.Forward(ctx); err != nil {
			return nil, l.mapErr(l.entryIR, "typed graph", err)
		}
		out = out.Clone()
		all, err := e.Backward(seed)
		if err != nil {
			return nil, l.mapErr(l.entryIR, "typed graph backward", err)
		}
		for i := range ctx {
			cts = append(cts, all[i].Clone())
		}
	case PathLoweredTape:
		tp, ids, err := l.Graph.Lower(ctx)
		if err != nil {
			return nil, l.mapErr(l.entryIR, "lowered tape", err)
		}
		// tape node id → IR node, through the typed-graph entry it lowers.
		owner := make([]int, tp.Len())
		for i := range owner {
			owner[i] = -1
		}
		for k, id := range ids {
			if id >= 0 && id < len(owner) && owner[id] < 0 {
				owner[id] = l.entryIR[k]
			}
		}
		r, _ := l.Graph.Result()
		if out, err = tp.Value(ids[r]); err != nil {
			return nil, err
		}
		gs, err := tp.Backward(ids[r], seed)
		if err != nil {
			return nil, l.mapErr(owner, "lowered tape backward", err)
		}
		dense := gs.Dense()
		for i := range ctx {
			cts = append(cts, dense[ids[i]])
		}
	case PathBackpropCtx:
		if out, err = l.Graph.EvalResult(ctx); err != nil {
			return nil, l.mapErr(l.entryIR, "typed graph", err)
		}
		if cts, err = l.Graph.BackpropCtx(ctx, seed); err != nil {
			return nil, l.mapErr(l.entryIR, "typed graph backprop", err)
		}
	default:
		return nil, fmt.Errorf("unknown differentiation path %q (want %s, %s, %s or %s)", path, PathTape, PathTypedGraph, PathLoweredTape, PathBackpropCtx)
	}
	if len(cts) != len(ctx) {
		return nil, fmt.Errorf("%s: %d cotangents for %d context entries", path, len(cts), len(ctx))
	}
	return &Gradients[T]{Path: path, Output: out, Input: cts[0], Params: cts[1:]}, nil
}

// Grad lowers g with payload p over T (spec.Default registry) and returns
// the gradient of its single-element output at input along path. A node
// whose tag has no registry primitive is reported as "node N (tag): no
// derivative rules; gradients of this tag are not supported".
func Grad[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, input spec.Tensor[T], path Path) (*Gradients[T], []Param, error) {
	l, err := Lower[T](nil, g, p)
	if err != nil {
		return nil, nil, noGrad(err)
	}
	gr, err := l.Grad(path, input)
	if err != nil {
		return nil, nil, err
	}
	return gr, l.Params, nil
}

// GradWith lowers g with payload p over T (spec.Default registry) with
// the options opt and returns the vector-Jacobian product of its output at
// input along path with the cotangent seed: the gradient of ⟨seed, f(x)⟩
// w.r.t. the input and every context entry (with opt.ConstParams, the
// const nodes' values too). A nil seed is all ones of the output's shape,
// which makes the result the gradient of the sum of the output's elements
// (for a single-element output, Grad's gradient). Errors are Grad's.
func GradWith[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, input spec.Tensor[T], seed *spec.Tensor[T], path Path, opt LowerOptions) (*Gradients[T], []Param, error) {
	l, err := LowerWith[T](nil, g, p, opt)
	if err != nil {
		return nil, nil, noGrad(err)
	}
	var s spec.Tensor[T]
	if seed != nil {
		s = *seed
	} else if s, err = spec.Full(l.outShape.Clone(), spec.One[T]()); err != nil {
		return nil, nil, err
	}
	gr, err := l.VJP(path, input, s)
	if err != nil {
		return nil, nil, err
	}
	return gr, l.Params, nil
}

// noGrad rewords Lower's ErrNoPrimitive for a caller that asked for a
// gradient: such a tag has no derivative rules. Other errors pass.
func noGrad(err error) error {
	var e *spec.NodeError
	if !errors.Is(err, ErrNoPrimitive) || !errors.As(err, &e) {
		return err
	}
	return spec.NewNodeError(e.Node, e.Op, "no derivative rules; gradients of this tag are not supported", nil)
}
