package rapidtests

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// localProperty checks, for one primitive, the obligation ob on a drawn
// instance with the given registries.
func localProperty(reg obligations.Registries, op string, ob obligations.Obligation) func(*rapid.T) {
	return func(t *rapid.T) {
		src := source{t}
		inst, err := casegen.Generate(src, op)
		if err != nil {
			t.Fatal(err)
		}
		shape, err := casegen.OutShape(inst)
		if err != nil {
			t.Fatalf("generator produced an ill-shaped %s: %v", op, err)
		}
		dxs, d := casegen.Tangents(src, inst, shape)
		var o obligations.Outcome
		switch ob {
		case obligations.Adjointness:
			o, err = reg.CheckAdjointness(inst, dxs, d)
		case obligations.JVPLinearity, obligations.VJPLinearity:
			v, dv := casegen.Tangents(src, inst, shape)
			a, b := casegen.GenRat(src, casegen.Any, "a"), casegen.GenRat(src, casegen.Any, "b")
			_, _, err = reg.CheckLinearity(inst, a, b, dxs, v, d, dv)
		case obligations.ZeroPreservation:
			o, err = reg.CheckZeroPreservation(inst)
		case obligations.Derivative:
			o, err = reg.DerivativeFor(inst, dxs)
		}
		if err != nil {
			t.Fatalf("obligation %s, op %s: %v", ob, op, err)
		}
		t.Logf("oracle=%s", o.Oracle)
	}
}

// TestLocalAdjointness discharges property 1: ⟨jvp(x,dx), δ⟩ = ⟨dx,
// vjp(x,δ)⟩ for every primitive — with == over Rat where the primitive has
// exact rational semantics, by overlap of interval enclosures otherwise —
// and, for primitives without exact semantics, the derivative obligation:
// the JVP rule's enclosure meets the enclosure of the forward rule's
// derivative over dual intervals (obligations.CheckDerivative). An
// inconclusive derivative case passes the property (it proves nothing
// either way); obligations.TestDerivativeDecides bounds how often that
// happens.
func TestLocalAdjointness(t *testing.T) {
	reg := obligations.DefaultRegistries()
	for _, info := range spec.Infos() {
		t.Run(info.Name, rapid.MakeCheck(localProperty(reg, info.Name, obligations.Adjointness)))
		if hasDerivative(info) {
			t.Run(info.Name+"/derivative", rapid.MakeCheck(localProperty(reg, info.Name, obligations.Derivative)))
		}
	}
}

// hasDerivative reports whether the primitive owes the derivative
// obligation (the list is obligations.ObligationsFor's).
func hasDerivative(info *spec.OpInfo) bool {
	for _, ob := range obligations.ObligationsFor(info) {
		if ob == obligations.Derivative {
			return true
		}
	}
	return false
}

// TestLocalLinearity discharges property 2a: the JVP is linear in dx and
// the VJP is linear in δ, exactly over Rat.
func TestLocalLinearity(t *testing.T) {
	reg := obligations.DefaultRegistries()
	for _, info := range spec.Infos() {
		t.Run(info.Name, rapid.MakeCheck(localProperty(reg, info.Name, obligations.JVPLinearity)))
	}
}

// TestZeroPreservation discharges property 2b: vjp(x, 0) succeeds and
// returns exact zeros with the parents' shapes.
func TestZeroPreservation(t *testing.T) {
	reg := obligations.DefaultRegistries()
	for _, info := range spec.Infos() {
		t.Run(info.Name, rapid.MakeCheck(localProperty(reg, info.Name, obligations.ZeroPreservation)))
	}
}

// flipVJP returns a private registry whose op VJP negates its first
// contribution.
func flipVJP[T spec.Scalar[T]](op string) *spec.Registry[T] {
	reg := spec.New[T]()
	p, _ := reg.Lookup(op)
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[T], y, dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil && len(gs) > 0 {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
	return reg
}

// TestPlantedSignFlip is property 10 for local adjointness: with the sign
// of mul's VJP flipped, the property fails, and rapid shrinks the
// counterexample to a small one (a single element).
func TestPlantedSignFlip(t *testing.T) {
	failed, out := expectPlanted("PlantedSignFlipMul", nil)
	if !failed {
		t.Fatal("a sign flip in mul's VJP went undetected")
	}
	if !strings.Contains(out, "adjointness fails for mul") {
		t.Fatalf("counterexample does not name the obligation and op:\n%s", out)
	}
	// Shrinking reaches a scalar (rank 0) instance: the shape draw is 0.
	if !strings.Contains(out, "draw shape.rank: 0") {
		t.Fatalf("counterexample was not shrunk to a scalar:\n%s", out)
	}
}

// flipJVP returns registries whose DualInterval JVP rule of op (the rule
// the derivative oracle compares) is negated.
func flipJVP(op string) obligations.Registries {
	reg := obligations.DefaultRegistries()
	reg.Dual = spec.New[obligations.DualInterval]()
	p, _ := reg.Dual.Lookup(op)
	bad, orig := *p, p.JVP
	bad.JVP = func(a *spec.Attrs, xs []spec.Tensor[obligations.DualInterval], y spec.Tensor[obligations.DualInterval], dxs []spec.Tensor[obligations.DualInterval]) (spec.Tensor[obligations.DualInterval], error) {
		j, err := orig(a, xs, y, dxs)
		return spec.NegT(j), err
	}
	reg.Dual.Override(&bad)
	return reg
}

// TestPlantedTanhJVPSign: with the sign of tanh's JVP flipped, the
// derivative property fails (the forward rule's derivative over dual
// intervals is the independent reference) and rapid shrinks the
// counterexample to a scalar with a non-zero tangent.
func TestPlantedTanhJVPSign(t *testing.T) {
	failed, out := expectPlanted("PlantedTanhJVPSign", nil)
	if !failed {
		t.Fatal("a sign flip in tanh's JVP went undetected")
	}
	if !strings.Contains(out, "derivative fails for tanh (oracle dual-interval) at element 0") {
		t.Fatalf("counterexample does not name the obligation, op and element:\n%s", out)
	}
	if !strings.Contains(out, "draw shape.rank: 0") {
		t.Fatalf("counterexample was not shrunk to a scalar:\n%s", out)
	}
}
