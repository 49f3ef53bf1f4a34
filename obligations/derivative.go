package obligations

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// CheckDerivative decides the derivative obligation of one instance: the
// op's JVP rule, at the exact case point x and tangent dx, equals the
// directional derivative f′(x)·dx of the op's forward rule. It is the
// oracle for primitives without exact rational semantics, where the Rat
// laws (adjointness, linearity) cannot tell a consistently wrong
// derivative from a right one. The argument is in the package doc
// ("The derivative oracle"); in short, two enclosures are computed over
// DualInterval from the enclosures [x] ∋ x and [dx] ∋ dx (FromRat):
//
//   - D, the tangent part of the forward rule evaluated at [x] + [dx]·ε:
//     the scalar chain rule (spec.Dual) of +, ×, ÷, exp, log, tanh, …
//     applied to the forward rule, independent of the op-level JVP rule;
//   - J, the primal part of the JVP rule evaluated at [x], [dx] (tangents
//     zero), i.e. the JVP rule over intervals.
//
// If D and J are disjoint in some element, the JVP rule is provably wrong
// there (the real derivative lies in D, the real JVP value in J) and the
// case fails. If they overlap in every element, the case holds with the
// proven bound |jvp − f′(x)·dx| ≤ width(D) + width(J) per element. The
// Outcome's measure is the worst relative resolution, the largest
// (width(D_k) + width(J_k)) / min|D_k| over the elements whose D_k
// excludes 0 (0 when there are none or all are exact points): on each such
// element the JVP rule is proven within that relative distance of the
// derivative; conversely a JVP rule off by a relative error e on element
// k is caught there whenever e·|f′(x)·dx|_k > width(D_k) + (1+e)·width(J_k),
// i.e. for e roughly above the measure. Elements
// whose D_k contains 0 (a derivative that may be 0, often exactly, as for
// a softmax lane of length 1) have only the absolute bound.
//
// A case is inconclusive (Oracle OracleInconclusive, neither fails nor
// holds, not counted as decided) when an evaluation met a choice it could
// not decide soundly (see DualInterval), when an interval rule reported a
// domain error, or when an enclosure of an element is unbounded, so the
// overlap would prove nothing.
func (r Registries) CheckDerivative(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) (Outcome, error) {
	D, J, decided, err := r.derivativeEnclosures(inst, dxs)
	if err != nil {
		return Outcome{}, err
	}
	if !decided {
		return Outcome{Oracle: OracleInconclusive}, nil
	}
	worst, unbounded := 0.0, false
	for k := range D {
		d, j := D[k], J[k]
		if d.Hi < j.Lo || j.Hi < d.Lo {
			return Outcome{Oracle: OracleDualInterval}, &counterexample.Failure{Op: inst.Op, Law: string(Derivative), Oracle: string(OracleDualInterval),
				Element: k, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: dxs, LHS: "jvp∈" + j.String(), RHS: "f′(x)·dx∈" + d.String(),
				Detail: "disjoint enclosures: the JVP rule differs from the forward rule's derivative by about " +
					spec.F64(gapOf(d, j)).String() + " or more"}
		}
		w := d.Width() + j.Width()
		if math.IsInf(w, 0) || math.IsNaN(w) {
			unbounded = true
			continue
		}
		if w > 0 && (d.Lo > 0 || d.Hi < 0) {
			worst = math.Max(worst, w/math.Min(math.Abs(d.Lo), math.Abs(d.Hi)))
		}
	}
	if unbounded {
		return Outcome{Oracle: OracleInconclusive}, nil
	}
	return Outcome{Oracle: OracleDualInterval, Measure: worst}, nil
}

// derivativeEnclosures evaluates, over DualInterval, the forward rule at
// [x] + [dx]·ε and the JVP rule at [x], [dx]; it returns per output
// element the enclosure D of f′(x)·dx (the forward's tangent part) and the
// enclosure J of the JVP rule's value (the JVP's primal part). decided is
// false when an evaluation met an undecidable choice or an interval rule
// reported a domain error: then D and J are nil and enclose nothing.
func (r Registries) derivativeEnclosures(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) (D, J []spec.Interval, decided bool, err error) {
	reg := r.Dual
	if reg == nil {
		reg = spec.Default[DualInterval]()
	}
	p, err := reg.Lookup(inst.Op)
	if err != nil {
		return nil, nil, false, err
	}
	if len(dxs) != len(inst.Xs) {
		return nil, nil, false, fmt.Errorf("%s: %d tangents for %d parents", inst.Op, len(dxs), len(inst.Xs))
	}
	tr := &diTrace{}
	inconclusive := func() bool { return tr.undecided > 0 }
	enc := func(v spec.Rat) spec.Interval { return spec.Interval{}.FromRat(v.Big()) }
	n := len(inst.Xs)
	dual, px, pdx := make([]spec.Tensor[DualInterval], n), make([]spec.Tensor[DualInterval], n), make([]spec.Tensor[DualInterval], n)
	for i, x := range inst.Xs {
		if !dxs[i].Shape.Equal(x.Shape) || len(dxs[i].Data) != len(x.Data) {
			return nil, nil, false, fmt.Errorf("%s: tangent %d has shape %v, parent %d has %v", inst.Op, i, dxs[i].Shape, i, x.Shape)
		}
		mk := func() spec.Tensor[DualInterval] {
			return spec.Tensor[DualInterval]{Shape: x.Shape.Clone(), Data: make([]DualInterval, len(x.Data))}
		}
		dual[i], px[i], pdx[i] = mk(), mk(), mk()
		for k := range x.Data {
			xi, di := enc(x.Data[k]), enc(dxs[i].Data[k])
			dual[i].Data[k] = DualInterval{d: spec.MakeDual(xi, di), tr: tr, ex: x.Data[k], exact: true}
			px[i].Data[k] = DualInterval{d: spec.MakeDual(xi, spec.Interval{}), tr: tr, ex: x.Data[k], exact: true}
			pdx[i].Data[k] = DualInterval{d: spec.MakeDual(di, spec.Interval{}), tr: tr, ex: dxs[i].Data[k], exact: true}
		}
	}
	// D: the forward rule over dual intervals.
	yd, err := p.Apply(inst.Attrs, dual)
	if err != nil {
		if inconclusive() || inexact(err) {
			return nil, nil, false, nil
		}
		return nil, nil, false, fmt.Errorf("%s forward over %s: %w", inst.Op, DualInterval{}.Kind(), err)
	}
	// J: the JVP rule over intervals, given the forward value's enclosure.
	y := spec.Tensor[DualInterval]{Shape: yd.Shape.Clone(), Data: make([]DualInterval, len(yd.Data))}
	for k, v := range yd.Data {
		y.Data[k] = DualInterval{d: spec.MakeDual(v.Re(), spec.Interval{}), tr: tr}
	}
	jv, err := p.JVP(inst.Attrs, px, y, pdx)
	if err != nil {
		if inconclusive() || inexact(err) {
			return nil, nil, false, nil
		}
		return nil, nil, false, fmt.Errorf("%s jvp over %s: %w", inst.Op, DualInterval{}.Kind(), err)
	}
	if !jv.Shape.Equal(yd.Shape) || len(jv.Data) != len(yd.Data) {
		return nil, nil, false, fmt.Errorf("%s: jvp has shape %v, expected %v", inst.Op, jv.Shape, yd.Shape)
	}
	if inconclusive() {
		return nil, nil, false, nil
	}
	D, J = make([]spec.Interval, len(yd.Data)), make([]spec.Interval, len(yd.Data))
	for k := range yd.Data {
		D[k], J[k] = yd.Data[k].Du(), jv.Data[k].Re()
	}
	return D, J, true, nil
}

// gapOf is the distance between two disjoint intervals, rounded to
// nearest (for the message only; the verdict is the disjointness).
func gapOf(a, b spec.Interval) float64 {
	if a.Hi < b.Lo {
		return b.Lo - a.Hi
	}
	return a.Lo - b.Hi
}
