package obligations

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

func TestGeneratorsCoverRegistry(t *testing.T) {
	for _, info := range spec.Infos() {
		if !casegen.HasGenerator(info.Name) {
			t.Errorf("primitive %s has no generator", info.Name)
		}
	}
}

func TestGeneratedInstancesAreWellShaped(t *testing.T) {
	for _, info := range spec.Infos() {
		for i := 0; i < 50; i++ {
			inst, err := casegen.Generate(casegen.NewRandSource(uint64(i)), info.Name)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := casegen.OutShape(inst); err != nil {
				t.Fatalf("%s case %d: %v", info.Name, i, err)
			}
		}
	}
}

// TestReferenceRegistryHolds runs every obligation on the reference rules.
func TestReferenceRegistryHolds(t *testing.T) {
	r := DefaultRegistries()
	for _, info := range spec.Infos() {
		res, err := r.CheckOp(info.Name, 30, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, rr := range res {
			if !rr.Holds() {
				t.Errorf("%s %s: cases=%d failure=%v", rr.Op, rr.Obligation, rr.Cases, rr.Failure)
			}
		}
	}
}

// TestPlantedSignFlipCaught plants a VJP with a flipped sign and checks
// that adjointness fails with a counterexample naming the op.
func TestPlantedSignFlipCaught(t *testing.T) {
	for _, op := range []string{"mul", "tanh", "matmul"} {
		r := DefaultRegistries()
		r.Rat, r.Interval = spec.New[spec.Rat](), spec.New[spec.Interval]()
		plantFlip(r.Rat, op)
		plantFlip(r.Interval, op)
		res, err := r.CheckOp(op, 30, 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		var f *counterexample.Failure
		if res[0].Obligation != Adjointness || !errors.As(res[0].Failure, &f) || f.Op != op {
			t.Fatalf("%s: planted sign flip not caught: %+v", op, res[0])
		}
		if !strings.Contains(f.Error(), "adjointness fails for "+op) {
			t.Fatalf("message %q", f.Error())
		}
	}
}

func plantFlip[T spec.Scalar[T]](reg *spec.Registry[T], op string) {
	p, _ := reg.Lookup(op)
	bad := *p
	orig := p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[T], y, dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
}

// TestPlantedNonlinearVJPCaught plants a VJP that is not linear in δ.
func TestPlantedNonlinearVJPCaught(t *testing.T) {
	r := DefaultRegistries()
	r.Rat = spec.New[spec.Rat]()
	p, _ := r.Rat.Lookup("add")
	bad := *p
	bad.VJP = func(_ *spec.Attrs, xs []spec.Tensor[spec.Rat], _, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		sq, _ := spec.MulT(dy, dy)
		return []spec.Tensor[spec.Rat]{sq, dy}, nil
	}
	r.Rat.Override(&bad)
	res, _ := r.CheckOp("add", 30, 1, nil)
	for _, rr := range res {
		if rr.Obligation == VJPLinearity && rr.Failure == nil {
			t.Fatal("non-linear VJP not caught")
		}
	}
}

// TestPlantedZeroBreakCaught plants a VJP that emits a constant.
func TestPlantedZeroBreakCaught(t *testing.T) {
	r := DefaultRegistries()
	r.Rat = spec.New[spec.Rat]()
	p, _ := r.Rat.Lookup("relu")
	bad := *p
	bad.VJP = func(_ *spec.Attrs, xs []spec.Tensor[spec.Rat], _, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		return []spec.Tensor[spec.Rat]{spec.MapPure(dy, func(v spec.Rat) spec.Rat { return v.Add(spec.NewRat(1, 1000)) })}, nil
	}
	r.Rat.Override(&bad)
	res, _ := r.CheckOp("relu", 20, 1, nil)
	for _, rr := range res {
		if rr.Obligation == ZeroPreservation && rr.Failure == nil {
			t.Fatal("zero-breaking VJP not caught")
		}
	}
}
