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
func regopsAttrs(k *Kind, o *OpInfo, a *spec.Attrs) {
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
		}
	}
}
