package obligations

import (
	"fmt"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// IntervalEnclosure: for every point p of an input box B, the exact
// forward value f(p) lies in the primitive's enclosure F(B) over
// spec.Interval, element by element (see CheckEnclosure).
const IntervalEnclosure Obligation = "interval-enclosure"

// IntervalAlgebra is the interval scalar an enclosure check runs over:
// spec.Interval itself (DefaultIntervalAlgebra), or a test's wrapper of it
// with a planted fault, so that a fault in the scalar is caught by the
// same checkers that judge the real one. Lift turns an interval into the
// scalar, Lower reads the interval a value of the scalar denotes; Reg, when
// not nil, holds the rules (nil means spec.Default[I]()).
type IntervalAlgebra[I spec.Scalar[I]] struct {
	Reg   *spec.Registry[I]
	Lift  func(spec.Interval) I
	Lower func(I) spec.Interval
}

// DefaultIntervalAlgebra is spec.Interval with reg's rules (nil: the
// reference rules).
func DefaultIntervalAlgebra(reg *spec.Registry[spec.Interval]) IntervalAlgebra[spec.Interval] {
	id := func(x spec.Interval) spec.Interval { return x }
	return IntervalAlgebra[spec.Interval]{Reg: reg, Lift: id, Lower: id}
}

func (a IntervalAlgebra[I]) registry() *spec.Registry[I] {
	if a.Reg != nil {
		return a.Reg
	}
	return spec.Default[I]()
}

// boxTensor encloses [lo, hi] elementwise: the outward float64 enclosure
// of each endpoint, joined.
func boxTensor[I spec.Scalar[I]](alg IntervalAlgebra[I], lo, hi spec.Tensor[spec.Rat]) spec.Tensor[I] {
	out := spec.Tensor[I]{Shape: lo.Shape.Clone(), Data: make([]I, len(lo.Data))}
	for k := range lo.Data {
		l, h := spec.Interval{}.FromRat(lo.Data[k].Big()), spec.Interval{}.FromRat(hi.Data[k].Big())
		out.Data[k] = alg.Lift(spec.Hull(l, h))
	}
	return out
}

// CheckEnclosure decides the interval-enclosure obligation of one
// instance with the reference rules: see CheckEnclosureOver.
func (r Registries) CheckEnclosure(inst *casegen.Instance, bx *casegen.Box) (Outcome, error) {
	return CheckEnclosureOver(DefaultIntervalAlgebra(r.Interval), r.Rat, inst, bx)
}

// CheckEnclosureOver decides, for one instance and a box B around it with
// a point P ∈ B, that the value of the primitive at P lies in its
// enclosure F(B) over the interval scalar alg, element by element:
//
//   - where the primitive has exact rational semantics at P (rat's
//     forward rule succeeds), exactly: f(P) ∈ F(B) with big.Rat
//     comparisons (oracle rat). f(P) ∉ F(B) proves F unsound, since P ∈ B;
//   - otherwise (exp, tanh, …, or a partial rule at P) by the enclosure
//     F([P]) of the point, P's tightest float64 enclosure (oracle
//     interval): both F([P]) and F(B) claim to contain f(P), so disjoint
//     enclosures prove that one of them is unsound — a failure of the
//     interval scalar either way — and overlapping ones decide nothing
//     more than that the check found no contradiction.
//
// A box on which the interval rule reports a DomainError (it declines to
// enclose, e.g. sqrt of a wholly negative box), or a point where neither
// oracle is defined, is inconclusive. Passing, like every sampled
// property, means no counterexample at this point: the law quantifies
// over every P ∈ B, and the generators aim the points at the corners.
// rat nil means spec.Default[spec.Rat]().
func CheckEnclosureOver[I spec.Scalar[I]](alg IntervalAlgebra[I], rat *spec.Registry[spec.Rat], inst *casegen.Instance, bx *casegen.Box) (Outcome, error) {
	if rat == nil {
		rat = spec.Default[spec.Rat]()
	}
	pi, err := alg.registry().Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	ib := make([]spec.Tensor[I], len(bx.Lo))
	for i := range bx.Lo {
		ib[i] = boxTensor(alg, bx.Lo[i], bx.Hi[i])
	}
	yb, err := pi.Apply(inst.Attrs, ib)
	if err != nil {
		if inexact(err) {
			return Outcome{Oracle: OracleInconclusive}, nil
		}
		return Outcome{}, fmt.Errorf("%s over %s on box %s: %w", inst.Op, spec.KindOf[I](), bx, err)
	}
	at := &casegen.Instance{Op: inst.Op, Attrs: inst.Attrs, Xs: bx.P, Domains: inst.Domains}
	fail := func(o Oracle, k int, lhs, rhs, detail string) *counterexample.Failure {
		return &counterexample.Failure{Op: inst.Op, Law: string(IntervalEnclosure), Oracle: string(o), Element: k, Inputs: at.Xs, Attrs: attrsOf(at),
			LHS: lhs, RHS: rhs, Detail: detail + " on box " + bx.String()}
	}
	pr, err := rat.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	if y, err := pr.Apply(inst.Attrs, bx.P); err == nil {
		if len(y.Data) != len(yb.Data) {
			return Outcome{}, fmt.Errorf("%s: %d elements over rat, %d over %s", inst.Op, len(y.Data), len(yb.Data), spec.KindOf[I]())
		}
		for k, v := range y.Data {
			if e := alg.Lower(yb.Data[k]); !e.Contains(v.Big()) {
				return Outcome{Oracle: OracleRat}, fail(OracleRat, k, "f(p)="+v.String(), "F(box)∋"+e.String(),
					"the exact value at a point of the box lies outside the box's enclosure")
			}
		}
		return Outcome{Oracle: OracleRat}, nil
	} else if !inexact(err) {
		return Outcome{}, fmt.Errorf("%s at %s: %w", inst.Op, counterexample.FormatTensors(bx.P), err)
	}
	ip := make([]spec.Tensor[I], len(bx.P))
	for i := range bx.P {
		ip[i] = boxTensor(alg, bx.P[i], bx.P[i])
	}
	yp, err := pi.Apply(inst.Attrs, ip)
	if err != nil {
		if inexact(err) {
			return Outcome{Oracle: OracleInconclusive}, nil
		}
		return Outcome{}, fmt.Errorf("%s over %s at %s: %w", inst.Op, spec.KindOf[I](), counterexample.FormatTensors(bx.P), err)
	}
	if len(yp.Data) != len(yb.Data) {
		return Outcome{}, fmt.Errorf("%s: %d elements at the point, %d on the box", inst.Op, len(yp.Data), len(yb.Data))
	}
	for k := range yp.Data {
		e, q := alg.Lower(yb.Data[k]), alg.Lower(yp.Data[k])
		if e.Hi < q.Lo || q.Hi < e.Lo {
			return Outcome{Oracle: OracleInterval}, fail(OracleInterval, k, "F([p])∋"+q.String(), "F(box)∋"+e.String(),
				"two enclosures of f(p) are disjoint")
		}
	}
	return Outcome{Oracle: OracleInterval}, nil
}

// CheckIntervalBoxOver decides interval soundness per node on a box: for
// the box B around the graph's input and its point P, the exact value of
// every node at P (irsem.DenoteAll over Rat) lies in that node's
// enclosure over the box (irsem.DenoteAll over alg), element by element.
// Since P ∈ B, a value outside is a proof that the interval evaluation is
// unsound at that node — the first such node is reported, which localises
// the fault to that node's rule applied to sound enclosures of its
// parents. Where the graph has no exact value at P (rat evaluation fails:
// exp, tanh, … or a division by zero the box's own point did not have), every node's
// enclosure at the point [P] and over the box both claim its real value
// at P, so disjoint enclosures prove a fault (as in CheckEnclosureOver);
// a domain error of the interval evaluation is vacuous: nil.
func CheckIntervalBoxOver[I spec.Scalar[I]](alg IntervalAlgebra[I], gc *casegen.GraphCase, bx *casegen.Box) error {
	iv, err := irsem.DenoteAll(gc.Graph, gc.Payload, boxTensor(alg, bx.Lo[0], bx.Hi[0]))
	if err != nil {
		if inexact(err) {
			return nil
		}
		return fmt.Errorf("denote over %s: %w", spec.KindOf[I](), err)
	}
	exact, err := irsem.DenoteAll(gc.Graph, gc.Payload, bx.P[0])
	if err != nil {
		// No exact value at P: a tag without rational semantics, or a
		// partial rule undefined at P. (Whether rat evaluation fails where
		// it should is the cross-path obligation's concern.)
		return pointVsBox(alg, gc, bx, iv)
	}
	for id := range exact {
		if !exact[id].Shape.Equal(iv[id].Shape) {
			return &counterexample.Failure{Law: string(IntervalSoundness), Sides: "rat vs interval", Node: id, Op: string(gc.Graph.Nodes[id].Kind.Op), Element: -1,
				LHS: exact[id].Shape.String(), RHS: iv[id].Shape.String(), Graph: recipeText(gc.Recipe), Inputs: []spec.Tensor[spec.Rat]{bx.P[0]}}
		}
		for i, r := range exact[id].Data {
			if e := alg.Lower(iv[id].Data[i]); !e.Contains(r.Big()) {
				return &counterexample.Failure{Law: string(IntervalSoundness), Sides: "exact value at p ∈ enclosure over the box", Scalar: spec.KindOf[I](), Node: id,
					Op: string(gc.Graph.Nodes[id].Kind.Op), Element: i, LHS: r.String(), RHS: e.String(),
					Detail: "the exact value lies outside its enclosure", Graph: recipeText(gc.Recipe), Inputs: []spec.Tensor[spec.Rat]{bx.P[0]},
					Extra: "input box " + bx.String()}
			}
		}
	}
	return nil
}

// pointVsBox compares, node by node, the enclosure of the graph at the
// point [P] with the enclosure over the box iv: both contain the node's
// real value at P, so disjoint ones prove a fault.
func pointVsBox[I spec.Scalar[I]](alg IntervalAlgebra[I], gc *casegen.GraphCase, bx *casegen.Box, iv []spec.Tensor[I]) error {
	ip, err := irsem.DenoteAll(gc.Graph, gc.Payload, boxTensor(alg, bx.P[0], bx.P[0]))
	if err != nil {
		if inexact(err) {
			return nil
		}
		return fmt.Errorf("denote over %s at the point: %w", spec.KindOf[I](), err)
	}
	for id := range ip {
		if len(ip[id].Data) != len(iv[id].Data) {
			return spec.NewNodeError(id, "", fmt.Sprintf("%d elements at the point, %d over the box", len(ip[id].Data), len(iv[id].Data)), nil)
		}
		for i := range ip[id].Data {
			q, e := alg.Lower(ip[id].Data[i]), alg.Lower(iv[id].Data[i])
			if e.Hi < q.Lo || q.Hi < e.Lo {
				return &counterexample.Failure{Law: string(IntervalSoundness), Sides: "enclosure at p vs enclosure over the box", Scalar: spec.KindOf[I](), Node: id,
					Op: string(gc.Graph.Nodes[id].Kind.Op), Element: i, LHS: q.String(), RHS: e.String(),
					Detail: "two enclosures of the node's value at p are disjoint", Graph: recipeText(gc.Recipe), Inputs: []spec.Tensor[spec.Rat]{bx.P[0]},
					Extra: "input box " + bx.String()}
			}
		}
	}
	return nil
}
