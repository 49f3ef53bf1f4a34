package obligations

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// OracleDualRat decides the derivative obligation of a primitive with
// exact rational semantics: forward mode through the forward rule over
// spec.Dual[spec.Rat], compared with the JVP rule over Rat with ==, and
// Clarke-set membership over a DualInterval box (see
// CheckDerivativeExact).
const OracleDualRat Oracle = "dual-rat"

// clarkeRadius is the half-width 2⁻²⁰ of the box around x over which
// CheckDerivativeExact encloses the derivatives near x.
var clarkeRadius = big.NewRat(1, 1<<20)

// CheckDerivativeExact decides the derivative obligation of one instance
// of a primitive with exact rational semantics (OpInfo.Exact). Adjointness,
// linearity and zero preservation relate the JVP rule to the VJP rule, so a
// derivative changed the same way in both (max_pool's first argmax taking
// a whole tie, clamp′ = ½ at a bound, layer_norm without its mean and
// variance terms, neg′ = 0) passes them all; this obligation compares the
// JVP rule with the forward rule itself, in two parts.
//
// Convention (exact). T = the tangent part of the forward rule evaluated
// over spec.Dual[spec.Rat] at x + dx·ε — the chain rule of + − × ÷ and
// spec.Dual's choices: relu′(0) = 0, abs′(0) = 0, clamp′ = 1 only
// strictly inside its bounds, and a maximum attained by t operands at
// once averages their t tangents (spec.MaxOf: 1/t each). J = the JVP rule
// over Rat at (x, dx). The obligation is J = T element by element,
// decided with ==. Away from kinks and ties T = f′(x)·dx by the chain
// rule; at a kink or a tie T is the registry's declared convention (its
// Ties text), which is what the JVP rule must implement. J ≠ T proves the
// JVP rule wrong: "fails".
//
// Clarke set (sound enclosure). At a kink the convention alone cannot
// tell which conventions are admissible; the JVP must also lie in
// {G·dx : G ∈ ∂f(x)}, Clarke's generalised Jacobian. Let B = [x − r,
// x + r] (r = 2⁻²⁰, per element) and let C be the tangent part of the
// forward rule over DualInterval at B + dx·ε, where no primal is exact,
// so every choice whose order is undecided over B is enclosed (Max, Min,
// MaxOf: the hull of the candidates' tangents; Abs, Relu, Sign, Step: the
// hull of the sign or step) or recorded undecided (then this part is not
// decided). Theorem: (G·dx)_k ∈ C_k for every G ∈ ∂f(x) and element k.
// Proof: by the soundness of DualInterval (package doc, "The derivative
// oracle") C_k contains the real tangent of the forward rule at every
// x′ ∈ B. At every x′ ∈ B off the null set Ω where some choice of the
// rule is at a tie or kink between two branches that differ (the rules'
// branches are rational functions of x, so where they differ their tie
// sets are null), the rule follows one smooth branch near x′ and its
// dual tangent is ∇f(x′)·dx. Clarke's theorem gives ∂f(x) = conv{lim
// ∇f(x_i) : x_i → x, x_i ∉ Ω} for any null Ω, and C_k is closed and
// convex, so it contains the k-th component of every such limit and of
// their convex hull. ∎ Hence J_k ∉ C_k proves the JVP outside the Clarke
// set: "fails". (clamp′ = ½ at a bound is inside the Clarke set [0, 1]
// and is caught by the convention part; a JVP that is no derivative at
// all, such as neg′ = 0, is caught by both.)
//
// A domain error over Rat (or over Dual[Rat]) is a failure of an op
// declared total over the rationals (Exact and not Partial); for a Partial
// op the case falls back to the interval derivative oracle
// (CheckDerivative's DualInterval enclosures).
func (r Registries) CheckDerivativeExact(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) (Outcome, error) {
	fail := func(el int, lhs, rhs, detail string) *counterexample.Failure {
		return &counterexample.Failure{Op: inst.Op, Law: string(Derivative), Oracle: string(OracleDualRat), Element: el, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: dxs, LHS: lhs, RHS: rhs, Detail: detail}
	}
	p, err := r.Rat.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	if len(dxs) != len(inst.Xs) {
		return Outcome{}, fmt.Errorf("%s: %d tangents for %d parents", inst.Op, len(dxs), len(inst.Xs))
	}
	// The JVP rule over Rat.
	J, err := func() (spec.Tensor[spec.Rat], error) {
		y, err := p.Apply(inst.Attrs, inst.Xs)
		if err != nil {
			return y, err
		}
		return p.JVP(inst.Attrs, inst.Xs, y, dxs)
	}()
	if err == nil {
		// Forward mode through the forward rule over Dual[Rat].
		dreg := r.DualRat
		if dreg == nil {
			dreg = spec.Default[spec.Dual[spec.Rat]]()
		}
		var pd *spec.Prim[spec.Dual[spec.Rat]]
		if pd, err = dreg.Lookup(inst.Op); err != nil {
			return Outcome{}, err
		}
		xd := make([]spec.Tensor[spec.Dual[spec.Rat]], len(inst.Xs))
		for i, x := range inst.Xs {
			if !dxs[i].Shape.Equal(x.Shape) || len(dxs[i].Data) != len(x.Data) {
				return Outcome{}, fmt.Errorf("%s: tangent %d has shape %v, parent %d has %v", inst.Op, i, dxs[i].Shape, i, x.Shape)
			}
			xd[i] = spec.Tensor[spec.Dual[spec.Rat]]{Shape: x.Shape.Clone(), Data: make([]spec.Dual[spec.Rat], len(x.Data))}
			for k := range x.Data {
				xd[i].Data[k] = spec.MakeDual(x.Data[k], dxs[i].Data[k])
			}
		}
		var yd spec.Tensor[spec.Dual[spec.Rat]]
		if yd, err = pd.Apply(inst.Attrs, xd); err == nil {
			if !yd.Shape.Equal(J.Shape) || len(yd.Data) != len(J.Data) {
				return Outcome{Oracle: OracleDualRat}, fail(-1, "jvp shape "+J.Shape.String(), "forward shape "+yd.Shape.String(), "")
			}
			for k := range J.Data {
				if !J.Data[k].Same(yd.Data[k].Du) {
					return Outcome{Oracle: OracleDualRat}, fail(k, "jvp="+J.Data[k].String(), "f′(x)·dx="+yd.Data[k].Du.String(),
						"the JVP rule differs from forward mode through the forward rule over Dual[Rat] (the registry's kink and tie conventions)")
				}
			}
			if err := r.checkClarke(inst, dxs, J); err != nil {
				return Outcome{Oracle: OracleDualRat}, err
			}
			return Outcome{Oracle: OracleDualRat}, nil
		}
	}
	if !inexact(err) {
		return Outcome{Oracle: OracleDualRat}, fmt.Errorf("%s: %w", inst.Op, err)
	}
	if !p.Partial {
		return Outcome{Oracle: OracleDualRat}, fail(-1, "domain error", "a value", "the op is declared total over the rationals (Exact, not Partial), but its rules fail over Rat: "+err.Error())
	}
	return r.CheckDerivative(inst, dxs)
}

// checkClarke decides the Clarke-set part of CheckDerivativeExact: the
// exact JVP J must lie, element by element, in the tangent enclosure of
// the forward rule over the box x ± clarkeRadius. An evaluation that met
// an undecided choice, a domain error or an unbounded enclosure decides
// nothing (nil).
func (r Registries) checkClarke(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat], J spec.Tensor[spec.Rat]) error {
	reg := r.Dual
	if reg == nil {
		reg = spec.Default[DualInterval]()
	}
	p, err := reg.Lookup(inst.Op)
	if err != nil {
		return err
	}
	tr := &diTrace{}
	rad := spec.RatFromBig(clarkeRadius)
	box := make([]spec.Tensor[DualInterval], len(inst.Xs))
	for i, x := range inst.Xs {
		box[i] = spec.Tensor[DualInterval]{Shape: x.Shape.Clone(), Data: make([]DualInterval, len(x.Data))}
		for k, v := range x.Data {
			lo := spec.Interval{}.FromRat(v.Sub(rad).Big())
			hi := spec.Interval{}.FromRat(v.Add(rad).Big())
			re := spec.Hull(lo, hi)
			box[i].Data[k] = DualInterval{d: spec.MakeDual(re, spec.Interval{}.FromRat(dxs[i].Data[k].Big())), tr: tr}
		}
	}
	y, err := p.Apply(inst.Attrs, box)
	if err != nil || tr.undecided > 0 || len(y.Data) != len(J.Data) {
		return nil
	}
	for k, v := range y.Data {
		c := v.Du()
		if w := c.Width(); math.IsInf(w, 0) || math.IsNaN(w) {
			continue
		}
		if !c.Contains(J.Data[k].Big()) {
			return &counterexample.Failure{Op: inst.Op, Law: string(Derivative), Oracle: string(OracleDualRat), Element: k, Inputs: inst.Xs, Attrs: attrsOf(inst), Dx: dxs,
				LHS: "jvp=" + J.Data[k].String(), RHS: "∂f(x)·dx⊆" + c.String(),
				Detail: "the JVP lies outside the Clarke generalised derivative (enclosed over x ± 2⁻²⁰)"}
		}
	}
	return nil
}

// DerivativeFor decides the derivative obligation of one instance with the
// oracle its primitive owes: CheckDerivativeExact for a primitive with
// exact rational semantics in the Rat registry, CheckDerivative (the
// interval derivative oracle) otherwise.
func (r Registries) DerivativeFor(inst *casegen.Instance, dxs []spec.Tensor[spec.Rat]) (Outcome, error) {
	p, err := r.Rat.Lookup(inst.Op)
	if err != nil {
		return Outcome{}, err
	}
	if p.Exact {
		return r.CheckDerivativeExact(inst, dxs)
	}
	return r.CheckDerivative(inst, dxs)
}
