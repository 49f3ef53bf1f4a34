package check

import (
	"errors"
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// forwardMode holds what a derived JVP evaluates: the private registry
// of the user's forward rule over Dual, bound once the checker's
// registries exist.
type forwardMode struct {
	name string
	dual *spec.Registry[Dual]
}

// errDerivedDual is the derived JVP over Dual: the derivative obligation,
// its only reader, is not run for a derived JVP (it would compare the
// forward rule's tangent with itself).
var errDerivedDual = errors.New("the JVP is derived from the forward rule; it is not evaluated over Dual")

// deriveJVP returns p with its JVP rules derived from its forward rules
// by forward mode (package doc, "Two rules: the JVP derived"):
//
//   - over Rat, jvp(x, dx) = Du(f(x + dx·ε)) with the user's forward over
//     spec.Dual[spec.Rat] (p.DualRat.Forward): exact, the same value real
//     dual numbers give;
//   - over Interval, the tangent enclosure of the user's forward over Dual
//     (obligations.ForwardTangent); where that evaluation meets a choice
//     it cannot take soundly, the whole line, which decides nothing;
//   - over Dual, an error (errDerivedDual).
func deriveJVP(p Primitive) (Primitive, *forwardMode) {
	fm := &forwardMode{name: p.Name}
	if p.Exact {
		fwd := p.DualRat.Forward
		p.Rat.JVP = func(xs []spec.Tensor[spec.Rat], _ spec.Tensor[spec.Rat], dxs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
			if len(dxs) != len(xs) {
				return spec.Tensor[spec.Rat]{}, fmt.Errorf("%s: %d tangents for %d parents", p.Name, len(dxs), len(xs))
			}
			in := make([]spec.Tensor[spec.Dual[spec.Rat]], len(xs))
			for i, x := range xs {
				if !dxs[i].Shape.Equal(x.Shape) || len(dxs[i].Data) != len(x.Data) {
					return spec.Tensor[spec.Rat]{}, fmt.Errorf("%s: tangent %d has shape %v, parent %d has %v", p.Name, i, dxs[i].Shape, i, x.Shape)
				}
				in[i] = spec.Tensor[spec.Dual[spec.Rat]]{Shape: x.Shape.Clone(), Data: make([]spec.Dual[spec.Rat], len(x.Data))}
				for k := range x.Data {
					in[i].Data[k] = spec.MakeDual(x.Data[k], dxs[i].Data[k])
				}
			}
			y, err := fwd(in)
			if err != nil {
				return spec.Tensor[spec.Rat]{}, err
			}
			return spec.Convert(y, func(v spec.Dual[spec.Rat]) spec.Rat { return v.Du }), nil
		}
	}
	p.Interval.JVP = func(xs []spec.Tensor[spec.Interval], _ spec.Tensor[spec.Interval], dxs []spec.Tensor[spec.Interval]) (spec.Tensor[spec.Interval], error) {
		t, ok, err := obligations.ForwardTangent(fm.dual, fm.name, nil, xs, dxs)
		if err != nil || ok {
			return t, err
		}
		// Undecided: the whole line, whose overlap proves nothing (the
		// obligations count such a case inconclusive). Its shape is the
		// forward's.
		y, err := p.Interval.Forward(xs)
		if err != nil {
			return y, err
		}
		whole := spec.Tensor[spec.Interval]{Shape: y.Shape.Clone(), Data: make([]spec.Interval, len(y.Data))}
		for k := range whole.Data {
			whole.Data[k] = spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
		}
		return whole, nil
	}
	p.Dual.JVP = func([]spec.Tensor[Dual], spec.Tensor[Dual], []spec.Tensor[Dual]) (spec.Tensor[Dual], error) {
		return spec.Tensor[Dual]{}, fmt.Errorf("%s: %w", fm.name, errDerivedDual)
	}
	return p, fm
}

// derivedTangents are the tangents adjointness is decided on when the JVP
// is derived: forward mode through the forward rule imposes the forward
// rule's own choice at a kink or tie (its branch, or Dual's ½/½ split),
// which is one valid convention among several, and a VJP that picks
// another is not wrong. So, as for the derivative obligation
// (derivativeTangents), a case on a declared kink or tie of an
// elementwise op gets tangent 0 at those positions — the VJP's convention
// there is then weighed by 0 on both sides — and the other positions
// decide; for any other op such a case gets zero tangents (a true,
// trivial certificate claim) and noAdj: it decides nothing.
func (c *checker) derivedTangents(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], bool) {
	if m, ok := c.derivativeTangents(inst, dxs); ok {
		return m, false
	}
	out := make([]spec.Tensor[spec.Rat], len(dxs))
	for i, d := range dxs {
		out[i] = d.Clone()
		for k := range out[i].Data {
			out[i].Data[k] = spec.NewRat(0, 1)
		}
	}
	return out, true
}
