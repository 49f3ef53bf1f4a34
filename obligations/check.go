package obligations

import (
	"errors"
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// Obligation names a local law.
type Obligation string

// The local obligations of a primitive.
const (
	Adjointness      Obligation = "adjointness"       // ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩
	JVPLinearity     Obligation = "jvp-linearity"     // jvp(x, a·u+b·v) = a·jvp(x,u) + b·jvp(x,v)
	VJPLinearity     Obligation = "vjp-linearity"     // vjp(x, a·δ+b·ε) = a·vjp(x,δ) + b·vjp(x,ε)
	ZeroPreservation Obligation = "zero-preservation" // vjp(x, 0) = 0 with the parents' shapes
	Derivative       Obligation = "derivative"        // jvp(x,dx) = f′(x)·dx, the forward rule's derivative (see CheckDerivative, CheckDerivativeExact)
)

// Oracle names how an obligation was decided.
type Oracle string

// Oracles.
const (
	OracleRat          Oracle = "rat"           // exact rational arithmetic, compared with ==
	OracleInterval     Oracle = "interval"      // outward-rounded enclosures must overlap
	OracleDualInterval Oracle = "dual-interval" // derivative enclosures over DualInterval must overlap
	// OracleInconclusive marks a case no oracle could decide soundly (an
	// undecidable branch or an unbounded enclosure): it neither fails nor
	// counts as a decided case.
	OracleInconclusive Oracle = "inconclusive"
)

// attrsOf prints the instance's attributes for its counterexample ("" when
// it has none).
func attrsOf(inst *casegen.Instance) string {
	if inst.Attrs == nil {
		return ""
	}
	return casegen.FormatAttrs(inst.Attrs)
}

// Outcome is the result of checking one instance: which oracle decided,
// and a measure of the case (for Rat, the bit length of the inner
// product; for intervals, the enclosure width; for the derivative oracle,
// the worst proven bound on |jvp − f′(x)·dx| relative to the element's
// magnitude, see CheckDerivative).
type Outcome struct {
	Oracle  Oracle
	Measure float64
	// The two sides of an adjointness claim as decided: exact rationals
	// for the rat oracle, enclosures for the interval oracle.
	RatSides      [2]spec.Rat
	IntervalSides [2]spec.Interval
}

func toInterval(ts []spec.Tensor[spec.Rat]) []spec.Tensor[spec.Interval] {
	out := make([]spec.Tensor[spec.Interval], len(ts))
	for i, t := range ts {
		out[i] = spec.Convert(t, func(r spec.Rat) spec.Interval { return spec.Interval{}.FromRat(r.Big()) })
	}
	return out
}

func inexact(err error) bool {
	var d *spec.DomainError
	return errors.As(err, &d)
}

// rules evaluates forward, JVP and VJP of a primitive over T.
func rules[T spec.Scalar[T]](p *spec.Prim[T], a *spec.Attrs, xs, dxs []spec.Tensor[T], d spec.Tensor[T]) (y, jv spec.Tensor[T], vj []spec.Tensor[T], err error) {
	if y, err = p.Apply(a, xs); err != nil {
		return
	}
	if jv, err = p.JVP(a, xs, y, dxs); err != nil {
		err = fmt.Errorf("jvp: %w", err)
		return
	}
	if vj, err = p.VJP(a, xs, y, d); err != nil {
		err = fmt.Errorf("vjp: %w", err)
		return
	}
	if len(vj) != len(xs) {
		err = fmt.Errorf("vjp returned %d contributions for %d parents", len(vj), len(xs))
		return
	}
	for i := range vj {
		if !vj[i].Shape.Equal(xs[i].Shape) || len(vj[i].Data) != len(xs[i].Data) {
			err = fmt.Errorf("vjp contribution %d has shape %v, expected %v", i, vj[i].Shape, xs[i].Shape)
			return
		}
	}
	if !jv.Shape.Equal(y.Shape) || len(jv.Data) != len(y.Data) {
		err = fmt.Errorf("jvp has shape %v, expected %v", jv.Shape, y.Shape)
	}
	return
}

// Registries are the rule tables a check uses: the reference registries
// by default, or private copies with planted faults.
type Registries struct {
	Rat      *spec.Registry[spec.Rat]
	Interval *spec.Registry[spec.Interval]
	F64      *spec.Registry[spec.F64]
	// F32 holds the float32 rules the fast-path obligation compares with
	// the generic rule (CheckFastPath); nil means spec.Default[spec.F32]().
	F32 *spec.Registry[spec.F32]
	// Dual holds the rules the derivative oracle evaluates (the forward
	// rule for f′(x)·dx, the JVP rule for the value it is compared with);
	// nil means spec.Default[DualInterval]().
	Dual *spec.Registry[DualInterval]
	// DualRat holds the forward rules the exact derivative obligation
	// differentiates in forward mode (CheckDerivativeExact); nil means
	// spec.Default[spec.Dual[spec.Rat]]().
	DualRat *spec.Registry[spec.Dual[spec.Rat]]
}

// DefaultRegistries returns the reference rule tables.
func DefaultRegistries() Registries {
	return Registries{Rat: spec.Default[spec.Rat](), Interval: spec.Default[spec.Interval](), F64: spec.Default[spec.F64](),
		F32: spec.Default[spec.F32](), Dual: spec.Default[DualInterval](), DualRat: spec.Default[spec.Dual[spec.Rat]]()}
}

// CheckAdjointness decides ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩ for one
// instance: exactly over Rat when the primitive has exact semantics at
// these inputs, otherwise by overlap of interval enclosures.
func (r Registries) CheckAdjointness(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], d spec.Tensor[spec.Rat]) (Outcome, error) {
	fail := func(o Oracle, lhs, rhs, detail string) *counterexample.Failure {
		return &counterexample.Failure{Op: inst.Op, Law: string(Adjointness), Oracle: string(o), Element: -1, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: dxs, Delta: d, LHS: lhs, RHS: rhs, Detail: detail}
	}
	p, err := r.Rat.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	if p.Exact {
		_, jv, vj, err := rules(p, inst.Attrs, inst.Xs, dxs, d)
		if err == nil {
			lhs, err1 := spec.Dot(jv, d)
			rhs, err2 := spec.DotList(dxs, vj)
			if err := errors.Join(err1, err2); err != nil {
				return Outcome{}, err
			}
			if !lhs.Same(rhs) {
				return Outcome{Oracle: OracleRat}, fail(OracleRat, "⟨jvp,δ⟩="+lhs.String(), "⟨dx,vjp⟩="+rhs.String(), "")
			}
			return Outcome{Oracle: OracleRat, Measure: float64(lhs.BitLen()), RatSides: [2]spec.Rat{lhs, rhs}}, nil
		}
		if !inexact(err) {
			return Outcome{Oracle: OracleRat}, fmt.Errorf("%s: %w", inst.Op, err)
		}
		if !p.Partial {
			return Outcome{Oracle: OracleRat}, totalDomainError(inst, Adjointness, err)
		}
	}
	pi, err := r.Interval.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	ixs, idxs := toInterval(inst.Xs), toInterval(dxs)
	id := toInterval([]spec.Tensor[spec.Rat]{d})[0]
	_, jv, vj, err := rules(pi, inst.Attrs, ixs, idxs, id)
	if err != nil {
		return Outcome{Oracle: OracleInterval}, fmt.Errorf("%s over interval: %w", inst.Op, err)
	}
	lhs, err1 := spec.Dot(jv, id)
	rhs, err2 := spec.DotList(idxs, vj)
	if err := errors.Join(err1, err2); err != nil {
		return Outcome{}, err
	}
	if lhs.Hi < rhs.Lo || rhs.Hi < lhs.Lo {
		return Outcome{Oracle: OracleInterval}, fail(OracleInterval, "⟨jvp,δ⟩∈"+lhs.String(), "⟨dx,vjp⟩∈"+rhs.String(), "enclosures do not overlap")
	}
	if unbounded(lhs) || unbounded(rhs) {
		// Overlap with an infinite enclosure proves nothing.
		return Outcome{Oracle: OracleInconclusive}, nil
	}
	return Outcome{Oracle: OracleInterval, Measure: math.Max(lhs.Width(), rhs.Width()), IntervalSides: [2]spec.Interval{lhs, rhs}}, nil
}

// unbounded reports an enclosure of infinite (or undefined) width, whose
// overlap with anything proves nothing: a case it would decide is
// inconclusive instead.
func unbounded(x spec.Interval) bool {
	w := x.Width()
	return math.IsInf(w, 0) || math.IsNaN(w)
}

// totalDomainError is the failure of an op declared total over the
// rationals (Exact, not Partial) whose rules raised a domain error over
// Rat: the declaration or the rule is wrong, and no interval fallback may
// hide it.
func totalDomainError(inst *casegen.Instance, ob Obligation, err error) *counterexample.Failure {
	return &counterexample.Failure{Op: inst.Op, Law: string(ob), Oracle: string(OracleRat), Element: -1, Inputs: inst.Xs, Attrs: attrsOf(inst), LHS: "domain error", RHS: "a value",
		Detail: "the op is declared total over the rationals (Exact, not Partial), but its rules fail over Rat: " + err.Error()}
}

// combine returns a·u + b·v elementwise.
func combine(a spec.Rat, u spec.Tensor[spec.Rat], b spec.Rat, v spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
	out := u.Clone()
	for i := range out.Data {
		out.Data[i] = a.Mul(u.Data[i]).Add(b.Mul(v.Data[i]))
	}
	return out
}

// exactPrim returns the Rat rule of an exact primitive, or nil when the
// linearity and zero laws must be checked over intervals instead.
func (r Registries) exactPrim(op string) (*spec.Prim[spec.Rat], error) {
	p, err := r.Rat.Lookup(op)
	if err != nil {
		return nil, err
	}
	if !p.Exact {
		return nil, nil
	}
	return p, nil
}

// CheckLinearity decides JVP linearity in dx and VJP linearity in δ with
// coefficients a, b, exactly over Rat (falling back to interval overlap
// per element when the primitive is not exact at these inputs).
func (r Registries) CheckLinearity(inst *casegen.Instance, a, b spec.Rat, u, v []spec.Tensor[spec.Rat], du, dv spec.Tensor[spec.Rat]) (Outcome, Outcome, error) {
	p, err := r.exactPrim(inst.Op)
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	if p != nil {
		o1, o2, err := linearityOver(p, inst, a, b, u, v, du, dv, OracleRat,
			func(x spec.Rat) spec.Rat { return x }, func(x, y spec.Rat) bool { return x.Same(y) })
		if err == nil || !inexact(err) {
			return o1, o2, err
		}
		if !p.Partial {
			f := totalDomainError(inst, JVPLinearity, err)
			return Outcome{Oracle: OracleRat}, Outcome{Oracle: OracleRat}, f
		}
	}
	pi, err := r.Interval.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	wide := false
	o1, o2, err := linearityOver(pi, inst, a, b, u, v, du, dv, OracleInterval,
		func(x spec.Rat) spec.Interval { return spec.Interval{}.FromRat(x.Big()) },
		func(x, y spec.Interval) bool {
			wide = wide || unbounded(x) || unbounded(y)
			return !(x.Hi < y.Lo || y.Hi < x.Lo)
		})
	if err == nil && wide {
		// Some element was compared through an infinite enclosure: the
		// overlap proves nothing there.
		return Outcome{Oracle: OracleInconclusive}, Outcome{Oracle: OracleInconclusive}, nil
	}
	return o1, o2, err
}

func linearityOver[T spec.Scalar[T]](p *spec.Prim[T], inst *casegen.Instance, a, b spec.Rat, u, v []spec.Tensor[spec.Rat], du, dv spec.Tensor[spec.Rat],
	oracle Oracle, conv func(spec.Rat) T, agree func(x, y T) bool) (Outcome, Outcome, error) {
	cv := func(t spec.Tensor[spec.Rat]) spec.Tensor[T] { return spec.Convert(t, conv) }
	cvs := func(ts []spec.Tensor[spec.Rat]) []spec.Tensor[T] {
		out := make([]spec.Tensor[T], len(ts))
		for i, t := range ts {
			out[i] = cv(t)
		}
		return out
	}
	xs := cvs(inst.Xs)
	y, err := p.Apply(inst.Attrs, xs)
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	ta, tb := conv(a), conv(b)
	lin := func(x, z spec.Tensor[T]) spec.Tensor[T] {
		out := x.Clone()
		for i := range out.Data {
			out.Data[i] = ta.Mul(x.Data[i]).Add(tb.Mul(z.Data[i]))
		}
		return out
	}
	fail := func(ob Obligation, el int, lhs, rhs T) error {
		return &counterexample.Failure{Op: inst.Op, Law: string(ob), Oracle: string(oracle), Element: el, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: u, Delta: du,
			LHS: lhs.String(), RHS: rhs.String(), Detail: fmt.Sprintf("a=%s b=%s", a, b)}
	}
	// JVP linearity.
	w := make([]spec.Tensor[spec.Rat], len(u))
	for i := range u {
		w[i] = combine(a, u[i], b, v[i])
	}
	ju, err := p.JVP(inst.Attrs, xs, y, cvs(u))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	jv, err := p.JVP(inst.Attrs, xs, y, cvs(v))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	jw, err := p.JVP(inst.Attrs, xs, y, cvs(w))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	want := lin(ju, jv)
	for i := range jw.Data {
		if !agree(jw.Data[i], want.Data[i]) {
			return Outcome{Oracle: oracle}, Outcome{}, fail(JVPLinearity, i, jw.Data[i], want.Data[i])
		}
	}
	// VJP linearity.
	gu, err := p.VJP(inst.Attrs, xs, y, cv(du))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	gv, err := p.VJP(inst.Attrs, xs, y, cv(dv))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	gw, err := p.VJP(inst.Attrs, xs, y, cv(combine(a, du, b, dv)))
	if err != nil {
		return Outcome{}, Outcome{}, err
	}
	flat := 0
	for k := range gw {
		wk := lin(gu[k], gv[k])
		for i := range gw[k].Data {
			if !agree(gw[k].Data[i], wk.Data[i]) {
				return Outcome{Oracle: oracle}, Outcome{Oracle: oracle}, fail(VJPLinearity, flat+i, gw[k].Data[i], wk.Data[i])
			}
		}
		flat += len(gw[k].Data)
	}
	return Outcome{Oracle: oracle}, Outcome{Oracle: oracle}, nil
}

// CheckZeroPreservation decides that vjp(x, 0) succeeds and emits exact
// zeros of the parents' shapes.
func (r Registries) CheckZeroPreservation(inst *casegen.Instance) (Outcome, error) {
	p, err := r.exactPrim(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	if p != nil {
		o, err := zeroOver(p, inst, OracleRat, func(x spec.Rat) spec.Rat { return x })
		if err == nil || !inexact(err) {
			return o, err
		}
		if !p.Partial {
			return Outcome{Oracle: OracleRat}, totalDomainError(inst, ZeroPreservation, err)
		}
	}
	pi, err := r.Interval.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	return zeroOver(pi, inst, OracleInterval, func(x spec.Rat) spec.Interval { return spec.Interval{}.FromRat(x.Big()) })
}

func zeroOver[T spec.Scalar[T]](p *spec.Prim[T], inst *casegen.Instance, oracle Oracle, conv func(spec.Rat) T) (Outcome, error) {
	xs := make([]spec.Tensor[T], len(inst.Xs))
	for i, x := range inst.Xs {
		xs[i] = spec.Convert(x, conv)
	}
	y, err := p.Apply(inst.Attrs, xs)
	if err != nil {
		return Outcome{}, err
	}
	gs, err := p.VJP(inst.Attrs, xs, y, spec.ZerosLike(y))
	if err != nil {
		return Outcome{Oracle: oracle}, &counterexample.Failure{Op: inst.Op, Law: string(ZeroPreservation), Oracle: string(oracle), Element: -1, Inputs: inst.Xs, Attrs: attrsOf(inst),
			LHS: "vjp(x,0) fails", RHS: "zeros", Detail: err.Error()}
	}
	if len(gs) != len(xs) {
		return Outcome{Oracle: oracle}, &counterexample.Failure{Op: inst.Op, Law: string(ZeroPreservation), Oracle: string(oracle), Element: -1, Inputs: inst.Xs, Attrs: attrsOf(inst),
			LHS: fmt.Sprintf("%d contributions", len(gs)), RHS: fmt.Sprintf("%d parents", len(xs))}
	}
	flat := 0
	for k, g := range gs {
		if !g.Shape.Equal(xs[k].Shape) {
			return Outcome{Oracle: oracle}, &counterexample.Failure{Op: inst.Op, Law: string(ZeroPreservation), Oracle: string(oracle), Element: -1, Inputs: inst.Xs, Attrs: attrsOf(inst),
				LHS: "contribution shape " + g.Shape.String(), RHS: "parent shape " + xs[k].Shape.String()}
		}
		for i, v := range g.Data {
			if !v.IsZero() {
				return Outcome{Oracle: oracle}, &counterexample.Failure{Op: inst.Op, Law: string(ZeroPreservation), Oracle: string(oracle), Element: flat + i, Inputs: inst.Xs, Attrs: attrsOf(inst),
					LHS: v.String(), RHS: "0"}
			}
		}
		flat += len(g.Data)
	}
	return Outcome{Oracle: oracle}, nil
}
