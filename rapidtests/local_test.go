package rapidtests

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// localProperty checks, for one primitive, the obligation ob on a drawn
// instance with the given registries.
func localProperty(reg obligations.Registries, op string, ob obligations.Obligation) func(*rapid.T) {
	return func(t *rapid.T) {
		src := source{t}
		inst, err := obligations.Generate(src, op)
		if err != nil {
			t.Fatal(err)
		}
		shape, err := obligations.OutShape(inst)
		if err != nil {
			t.Fatalf("generator produced an ill-shaped %s: %v", op, err)
		}
		dxs, d := obligations.Tangents(src, inst, shape)
		var o obligations.Outcome
		switch ob {
		case obligations.Adjointness:
			o, err = reg.CheckAdjointness(inst, dxs, d)
		case obligations.JVPLinearity, obligations.VJPLinearity:
			v, dv := obligations.Tangents(src, inst, shape)
			a, b := obligations.GenRat(src, obligations.Any, "a"), obligations.GenRat(src, obligations.Any, "b")
			_, _, err = reg.CheckLinearity(inst, a, b, dxs, v, d, dv)
		case obligations.ZeroPreservation:
			o, err = reg.CheckZeroPreservation(inst)
		case obligations.FiniteDifference:
			o, err = reg.CheckFiniteDifference(inst, dxs)
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
// and, for primitives without exact semantics, agreement of the JVP with a
// central finite difference within a derived bound.
func TestLocalAdjointness(t *testing.T) {
	reg := obligations.DefaultRegistries()
	for _, info := range spec.Infos() {
		t.Run(info.Name, rapid.MakeCheck(localProperty(reg, info.Name, obligations.Adjointness)))
		if !info.Exact && !info.NoGrad {
			t.Run(info.Name+"/fd", rapid.MakeCheck(localProperty(reg, info.Name, obligations.FiniteDifference)))
		}
	}
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
	reg := obligations.DefaultRegistries()
	reg.Rat = flipVJP[spec.Rat]("mul")
	failed, out := expectFailure("PlantedSignFlipMul", localProperty(reg, "mul", obligations.Adjointness))
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
