package irsem

import (
	"github.com/tlcheck/tlcheck/spec"
)

// normApplication: batch_norm_eval is the registry's batch_norm_eval(x,
// μ, σ², γ, β) along channel_axis and instance_norm its instance_norm(x,
// γ, β), with ε from the payload (1/100000 when absent). batch_norm_eval's
// γ and β are always passed: the payload's, or the defaults γ = 1, β = 0
// as ArgConst, which give the same values as the primitive's own
// defaults.
func normApplication(a Application, n *Node, e *Params, in []spec.Shape, full bool) Application {
	c := spec.Shape{n.Kind.Channels}
	eps := spec.DefaultNormEps()
	if e != nil && e.Eps != nil {
		eps = e.Eps.Big()
	}
	x := parentArg(0, in[0])
	if n.Kind.Op == OpInstanceNorm {
		a.Steps = []Step{{Prim: "instance_norm", Attrs: &spec.Attrs{Eps: eps},
			Args: []Arg{x, paramArg(e, ParamGamma, c), paramArg(e, ParamBeta, c)}, Shape: n.Shape.Clone()}}
		return a
	}
	gamma, beta := paramArg(e, ParamGamma, c), paramArg(e, ParamBeta, c)
	if full && gamma.Value == nil {
		gamma = Arg{Source: ArgConst, Param: ParamGamma, Shape: c.Clone(), Value: filled(c, 1)}
	}
	if full && beta.Value == nil {
		beta = Arg{Source: ArgConst, Param: ParamBeta, Shape: c.Clone(), Value: filled(c, 0)}
	}
	a.Steps = []Step{{Prim: "batch_norm_eval", Attrs: &spec.Attrs{Axis: n.Kind.ChannelAxis, Eps: eps},
		Args: []Arg{x, paramArg(e, ParamMean, c), paramArg(e, ParamVar, c), gamma, beta}, Shape: n.Shape.Clone()}}
	return a
}

// normStep evaluates batch_norm_eval and instance_norm for DenoteAll as
// their Application does: the registry primitive on x and the payload's
// parameters converted with FromRat (γ = 1, β = 0 for batch_norm_eval
// when absent), ε from the payload.
func normStep[T spec.Scalar[T]](run func(*spec.Attrs, []spec.Tensor[T]) (spec.Tensor[T], error), n *Node, e *Params) step[T] {
	c := spec.Shape{n.Kind.Channels}
	attrs := &spec.Attrs{Axis: n.Kind.ChannelAxis, Eps: spec.DefaultNormEps()}
	if e.Eps != nil {
		attrs.Eps = e.Eps.Big()
	}
	conv := func(t *RatTensor, def int64) spec.Tensor[T] {
		if t == nil {
			return ConvertTensor[T](*filled(c, def))
		}
		v := ConvertTensor[T](*t)
		v.Shape = c.Clone()
		return v
	}
	var params []spec.Tensor[T]
	if n.Kind.Op == OpInstanceNorm {
		attrs.Axis = 0
		params = []spec.Tensor[T]{conv(e.Gamma, 1), conv(e.Beta, 0)}
	} else {
		params = []spec.Tensor[T]{conv(e.Mean, 0), conv(e.Var, 0), conv(e.Gamma, 1), conv(e.Beta, 0)}
	}
	return func(xs []spec.Tensor[T]) (spec.Tensor[T], error) {
		return run(attrs, append([]spec.Tensor[T]{xs[0]}, params...))
	}
}
