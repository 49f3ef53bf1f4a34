package obligations

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/spec"
)

// ForwardTangent is forward mode through a forward rule over DualInterval:
// it evaluates reg's forward rule of op at xs + dxs·ε (one tangent per
// parent, of its shape) and returns the tangent part, element by element
// an enclosure of f′(x)·dx as the same sequence of operations computes it
// over real dual numbers (DualInterval's meaning), for every real x in xs
// and dx in dxs.
//
// A parent element whose enclosure is one point [a, a] is the exact
// rational a, so comparisons between such elements are decided exactly (a
// tie of two equal inputs is a tie, as over the reals). decided is false
// when the evaluation met a choice it could not take soundly (an
// undecided Compare, or Sqrt/Clamp at an undecided side with a non-zero
// tangent; see DualInterval) or a domain error (*spec.DomainError): then
// the tangent is not returned. Other errors (an unknown op, shapes that
// do not fit) are returned.
//
// check.Op uses it to derive a user primitive's JVP over Interval from
// its forward rule when the user gives none.
func ForwardTangent(reg *spec.Registry[DualInterval], op string, attrs *spec.Attrs, xs, dxs []spec.Tensor[spec.Interval]) (t spec.Tensor[spec.Interval], decided bool, err error) {
	p, err := reg.Lookup(op)
	if err != nil {
		return t, false, err
	}
	if len(dxs) != len(xs) {
		return t, false, fmt.Errorf("%s: %d tangents for %d parents", op, len(dxs), len(xs))
	}
	tr := &diTrace{}
	dual := make([]spec.Tensor[DualInterval], len(xs))
	for i, x := range xs {
		if !dxs[i].Shape.Equal(x.Shape) || len(dxs[i].Data) != len(x.Data) {
			return t, false, fmt.Errorf("%s: tangent %d has shape %v, parent %d has %v", op, i, dxs[i].Shape, i, x.Shape)
		}
		dual[i] = spec.Tensor[DualInterval]{Shape: x.Shape.Clone(), Data: make([]DualInterval, len(x.Data))}
		for k, v := range x.Data {
			d := DualInterval{d: spec.MakeDual(v, dxs[i].Data[k]), tr: tr}
			if v.Lo == v.Hi && !math.IsInf(v.Lo, 0) && !math.IsNaN(v.Lo) {
				d.ex, d.exact = spec.RatFromBig(new(big.Rat).SetFloat64(v.Lo)), true
			}
			dual[i].Data[k] = d
		}
	}
	yd, err := p.Apply(attrs, dual)
	if err != nil {
		if tr.undecided > 0 || inexact(err) {
			return t, false, nil
		}
		return t, false, fmt.Errorf("%s forward over %s: %w", op, DualInterval{}.Kind(), err)
	}
	if tr.undecided > 0 {
		return t, false, nil
	}
	t = spec.Tensor[spec.Interval]{Shape: yd.Shape.Clone(), Data: make([]spec.Interval, len(yd.Data))}
	for k, v := range yd.Data {
		t.Data[k] = v.Du()
	}
	return t, true, nil
}
