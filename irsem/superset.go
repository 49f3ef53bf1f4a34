package irsem

import (
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// This file maps the wire attributes of the tlcheck.ir.v1 superset tags
// of package spec's other primitives (pad, gather, lrn, shrink,
// instance_norm and the IR forms of scale, clamp and slice) to the
// registry's attributes. Each tag reads exactly the attributes its
// registry IR form lists (spec.IRForm.Attrs), so the mapping is by
// attribute, not by tag.

// regopsAttrs copies the superset attributes that o lists from k into a.
func regopsAttrs(k *Kind, o *TagInfo, a *spec.Attrs) {
	rat := func(r spec.Rat) *big.Rat { return r.Big() }
	for _, name := range o.Attrs {
		switch name {
		case AttrWidths:
			a.Widths = cloneInts(k.Widths)
		case AttrMode:
			a.Mode = k.Mode
		case AttrValue:
			a.Value = rat(k.Value)
		case AttrIndicesShape:
			a.IndicesShape = shapeOrScalar(k.IndicesShape).Clone()
		case AttrIndices:
			a.Indices = cloneInts(k.Indices)
			if a.Indices == nil {
				a.Indices = []int{}
			}
		case AttrSize:
			a.Size = k.Size
		case AttrAlpha:
			a.Alpha = rat(k.Alpha)
		case AttrBeta:
			a.Beta = rat(k.Beta)
		case AttrBias:
			a.Bias = rat(k.Bias)
		case AttrC:
			a.C = rat(k.C)
		case AttrLo:
			a.Lo = rat(k.Lo)
		case AttrHi:
			a.Hi = rat(k.Hi)
		case AttrLambd:
			a.Lambd = rat(k.Lambd)
		case AttrStart:
			a.Start = k.Start
		case AttrEnd:
			a.End = k.End
		case AttrOutShape: // tile (reshape sets it in primAttrs)
			a.Shape = shapeOrScalar(k.OutShape).Clone()
		}
	}
}

// SetRegistryAttrs sets the superset attributes of k that its tag lists
// (pad, gather, lrn, shrink, scale, clamp, slice) from the registry
// attributes a: the inverse of the mapping DenoteAll applies, for
// emitters that build IR graphs from registry applications. Nil
// rationals read as 0; the tag's other attributes are left alone.
func (k *Kind) SetRegistryAttrs(a *spec.Attrs) {
	o, ok := lookup(k.Op)
	if !ok || a == nil {
		return
	}
	rat := func(r *big.Rat) spec.Rat {
		if r == nil {
			return spec.Rat{}
		}
		return spec.RatFromBig(r)
	}
	for _, name := range o.Attrs {
		switch name {
		case AttrWidths:
			k.Widths = cloneInts(a.Widths)
		case AttrMode:
			k.Mode = a.Mode
		case AttrValue:
			k.Value = rat(a.Value)
		case AttrIndicesShape:
			k.IndicesShape = cloneShape(a.IndicesShape)
		case AttrIndices:
			k.Indices = cloneInts(a.Indices)
		case AttrSize:
			k.Size = a.Size
		case AttrAlpha:
			k.Alpha = rat(a.Alpha)
		case AttrBeta:
			k.Beta = rat(a.Beta)
		case AttrBias:
			k.Bias = rat(a.Bias)
		case AttrC:
			k.C = rat(a.C)
		case AttrLo:
			k.Lo = rat(a.Lo)
		case AttrHi:
			k.Hi = rat(a.Hi)
		case AttrLambd:
			k.Lambd = rat(a.Lambd)
		case AttrStart:
			k.Start = a.Start
		case AttrEnd:
			k.End = a.End
		case AttrOutShape: // tile; reshape's out_shape is its Attrs.Shape too
			k.OutShape = cloneShape(a.Shape)
		}
	}
}

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
