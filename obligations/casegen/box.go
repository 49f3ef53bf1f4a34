package casegen

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Sign patterns of a box element [lo, hi]. Every pattern an interval
// operation must distinguish appears: a point, entirely positive, entirely
// negative, straddling 0, and touching 0 from either side.
const (
	BoxPoint      = iota // [x, x], x the instance's value
	BoxPositive          // 0 < lo < hi
	BoxNegative          // lo < hi < 0
	BoxStraddling        // lo < 0 < hi
	BoxZeroLo            // lo = 0 < hi
	BoxZeroHi            // lo < 0 = hi
)

// boxPatterns lists the patterns allowed in a domain: a box must lie in
// the primitive's domain (log needs Lo > 0, a divisor must not straddle 0
// to be meaningful; squares are non-negative).
func boxPatterns(d Domain) []int {
	switch d {
	case Positive:
		return []int{BoxPoint, BoxPositive}
	case NonZero:
		return []int{BoxPoint, BoxPositive, BoxNegative}
	case Square:
		return []int{BoxPoint, BoxPositive, BoxZeroLo}
	}
	return []int{BoxPoint, BoxPositive, BoxNegative, BoxStraddling, BoxZeroLo, BoxZeroHi}
}

// Box is an input box around a point: per parent tensor, per element, the
// rational endpoints Lo ≤ Hi and a point P with Lo ≤ P ≤ Hi.
type Box struct {
	Lo, Hi, P []spec.Tensor[spec.Rat]
}

// genMagnitude draws a small positive rational p/q, 1 ≤ p ≤ 6, 1 ≤ q ≤ 4
// (shrinks toward 1).
func genMagnitude(src Source, label string) spec.Rat {
	return spec.NewRat(int64(1+src.Intn(6, label+".num")), int64(1+src.Intn(4, label+".den")))
}

// GenBoxElem draws one box element in domain d around x: its sign
// pattern, its endpoints and the point inside it (an endpoint or the
// midpoint: the corners are where a dropped case of an interval rule
// shows).
func GenBoxElem(src Source, d Domain, x spec.Rat, label string) (lo, hi, p spec.Rat) {
	pats := boxPatterns(d)
	pat := pats[src.Intn(len(pats), label+".pattern")]
	a := genMagnitude(src, label+".a")
	b := a.Add(genMagnitude(src, label+".w"))
	switch pat {
	case BoxPoint:
		return x, x, x
	case BoxPositive:
		lo, hi = a, b
	case BoxNegative:
		lo, hi = b.Neg(), a.Neg()
	case BoxStraddling:
		lo, hi = a.Neg(), genMagnitude(src, label+".b")
	case BoxZeroLo:
		lo, hi = spec.NewRat(0, 1), a
	case BoxZeroHi:
		lo, hi = a.Neg(), spec.NewRat(0, 1)
	}
	switch src.Intn(3, label+".at") {
	case 0:
		p = lo
	case 1:
		p = hi
	default:
		p = lo.Add(hi).Mul(spec.NewRat(1, 2))
	}
	return lo, hi, p
}

// GenBox draws a box for every parent element of inst (see GenBoxElem).
func GenBox(src Source, inst *Instance) *Box {
	bx := &Box{}
	for i, x := range inst.Xs {
		d := Any
		if i < len(inst.Domains) {
			d = inst.Domains[i]
		}
		lo, hi, p := x.Clone(), x.Clone(), x.Clone()
		for k := range x.Data {
			lo.Data[k], hi.Data[k], p.Data[k] = GenBoxElem(src, d, x.Data[k], fmt.Sprintf("box%d[%d]", i, k))
		}
		bx.Lo, bx.Hi, bx.P = append(bx.Lo, lo), append(bx.Hi, hi), append(bx.P, p)
	}
	return bx
}

func (bx *Box) String() string {
	parts := make([]string, len(bx.Lo))
	for i := range bx.Lo {
		el := make([]string, len(bx.Lo[i].Data))
		for k := range el {
			el[k] = "[" + bx.Lo[i].Data[k].String() + ", " + bx.Hi[i].Data[k].String() + "]"
		}
		parts[i] = "[" + strings.Join(el, " ") + "]"
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// GenGraphBox draws a box around every element of a graph's input (see
// GenBoxElem; the input's domain is Any).
func GenGraphBox(src Source, gc *GraphCase) *Box {
	return GenBox(src, &Instance{Xs: []spec.Tensor[spec.Rat]{gc.Input}})
}
