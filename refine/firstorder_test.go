package refine_test

import (
	"fmt"
	"math"
	"math/big"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// binary32Inputs rounds an instance's exact inputs to binary32 values
// (refine's inputs are binary32 data: M1 holds them exactly); false when
// one is not finite in binary32.
func binary32Inputs(xs []spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], bool) {
	out := make([]spec.Tensor[spec.Rat], len(xs))
	for i, x := range xs {
		out[i] = spec.Tensor[spec.Rat]{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
		for k, v := range x.Data {
			f := float32(v.Float64())
			if math.IsInf(float64(f), 0) || math.IsNaN(float64(f)) {
				return nil, false
			}
			out[i].Data[k] = spec.RatFromBig(new(big.Rat).SetFloat64(float64(f)))
		}
	}
	return out, true
}

// oneOpGraph is the IR graph of one application of op to xs: parent 0
// is the graph's input, every other parent a const node holding it
// (linear's W and b its payload), as casegen's IR recipes emit them.
func oneOpGraph(op string, a *spec.Attrs, xs []spec.Tensor[spec.Rat], out spec.Shape) (*irsem.Graph, *irsem.Payload, error) {
	rc := &casegen.Recipe{IR: true, Ctx: []spec.Shape{xs[0].Shape.Clone()}, Shapes: []spec.Shape{xs[0].Shape.Clone()}}
	if a == nil {
		a = &spec.Attrs{}
	}
	if a.Axis < 0 { // the IR spells an axis as a natural
		a = a.Clone()
		a.Axis += xs[0].Shape.Rank()
	}
	st := casegen.Step{Op: op, Attrs: a, In: []int{0}}
	if op == "linear" {
		if len(xs) != 3 {
			return nil, nil, fmt.Errorf("linear with %d parents", len(xs))
		}
		st.W, st.B = &xs[1], &xs[2]
	} else {
		for _, x := range xs[1:] {
			vals := make([]*big.Rat, len(x.Data))
			for k, v := range x.Data {
				vals[k] = v.Big()
			}
			rc.Steps = append(rc.Steps, casegen.Step{Op: "const", Attrs: &spec.Attrs{Shape: x.Shape.Clone(), Values: vals}})
			rc.Shapes = append(rc.Shapes, x.Shape.Clone())
			st.In = append(st.In, len(rc.Shapes)-1)
		}
	}
	rc.Steps = append(rc.Steps, st)
	rc.Shapes = append(rc.Shapes, out.Clone())
	rc.Result = len(rc.Shapes) - 1
	g, p, err := rc.IRGraph()
	if err != nil {
		return nil, nil, err
	}
	if err := g.Check(); err != nil {
		return nil, nil, err
	}
	return g, p, irsem.CheckPayload(g, p)
}

// TestFirstOrderIsClassicOnOnePrimitive: on one primitive applied to
// binary32 data, fpbound's first-order bound is the classic bound (or
// +∞, when the primitive's derivative is not enclosed: then the classic
// one decides alone), in binary32 and in binary64 — the package doc's
// "The first-order bound" on every registry primitive whose IR form is
// one application of it, on seeded random instances (casegen.Generate),
// refine's own ops among them.
func TestFirstOrderIsClassicOnOnePrimitive(t *testing.T) {
	const perOp = 6
	var covered, skipped []string
	for _, info := range spec.Infos() {
		op := info.Name
		if info.IR == nil || !casegen.HasGenerator(op) {
			skipped = append(skipped, op)
			continue
		}
		decided, tried := 0, 0
		for i := 0; i < perOp; i++ {
			inst, err := casegen.Generate(casegen.NewRandSource(spec.CaseSeed(1, "firstorder/"+op, i)), op)
			if err != nil {
				t.Fatalf("%s: %v", op, err)
			}
			xs, ok := binary32Inputs(inst.Xs)
			if !ok || len(xs) == 0 {
				continue
			}
			inst.Xs = xs
			out, err := casegen.OutShape(inst)
			if err != nil {
				continue
			}
			g, p, err := oneOpGraph(op, inst.Attrs, xs, out)
			if err != nil {
				continue // the op's IR form is not one application on these parents
			}
			tried++
			for _, f := range []struct {
				name  string
				bound func(*irsem.Graph, *irsem.Payload, irsem.RatTensor, fpbound.Options) ([]fpbound.Sharp, error)
			}{{"binary32", fpbound.SharpBounds}, {"binary64", fpbound.SharpBounds64}} {
				ss, err := f.bound(g, p, xs[0], fpbound.Options{})
				if err != nil {
					continue // outside the op's domain once rounded: nothing to compare
				}
				for k, s := range ss {
					switch {
					case math.IsInf(s.FirstOrder, 1):
					case s.FirstOrder == s.Classic:
						decided++
					default:
						t.Errorf("%s case %d %s y[%d]: first-order %g, classic %g", op, i, f.name, k, s.FirstOrder, s.Classic)
					}
				}
			}
		}
		if tried == 0 {
			skipped = append(skipped, op)
			continue
		}
		covered = append(covered, op)
		t.Logf("%s: %d elements with a finite first-order bound, equal to the classic one", op, decided)
	}
	for _, op := range refine.Ops() {
		if !slices.Contains(covered, op) {
			t.Errorf("refine's op %s is not covered", op)
		}
	}
	if len(covered) < len(spec.Infos())/2 {
		t.Errorf("only %d of %d primitives covered (skipped: %v)", len(covered), len(spec.Infos()), skipped)
	}
	t.Logf("covered %d primitives; skipped (no IR form of one application, or no generator): %v", len(covered), skipped)
}
