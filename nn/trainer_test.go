package nn

import (
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func TestTypedGraphRecordsOnce(t *testing.T) {
	tr, err := NewTrainer(Config[spec.F32]{Model: MLP(2, 8, 1), InDim: 2, Seed: 3, Execution: TypedGraph})
	if err != nil {
		t.Fatal(err)
	}
	data := SquareGrid[spec.F32]()
	for s := 0; s < 50; s++ {
		if _, err := tr.Step(data[s%25].X, data[s%25].Y); err != nil {
			t.Fatal(err)
		}
	}
	if tr.Recordings != 1 {
		t.Fatalf("typed-graph trainer recorded %d times for one shape and mode, want 1", tr.Recordings)
	}
	if _, err := tr.Predict(data[0].X); err != nil {
		t.Fatal(err)
	}
	if tr.Recordings != 2 {
		t.Fatalf("eval graph should be recorded once more, got %d", tr.Recordings)
	}
}

// TestEagerAndGraphGradientsAgreeRat: the same model text gives identical
// gradients over exact rationals through both interpreters.
func TestEagerAndGraphGradientsAgreeRat(t *testing.T) {
	model := MLP(3, 4, 2)
	x := spec.Vector(spec.NewRat(1, 2), spec.NewRat(-3, 4), spec.NewRat(2, 1))
	y := spec.Vector(spec.NewRat(1, 3), spec.NewRat(-1, 1))
	var grads [2][]spec.Tensor[spec.Rat]
	var losses [2]spec.Rat
	for i, exec := range []Execution{Eager, TypedGraph} {
		tr, err := NewTrainer(Config[spec.Rat]{Model: model, InDim: 3, Seed: 9, Execution: exec, Optimizer: &SGD[spec.Rat]{}})
		if err != nil {
			t.Fatal(err)
		}
		l, g, err := tr.Gradients(x, y)
		if err != nil {
			t.Fatal(err)
		}
		losses[i], grads[i] = l, g
	}
	if !losses[0].Same(losses[1]) {
		t.Fatalf("losses differ: %s vs %s", losses[0], losses[1])
	}
	for k := range grads[0] {
		if !spec.SameTensor(grads[0][k], grads[1][k]) {
			t.Fatalf("gradient %d differs: %v vs %v", k, grads[0][k], grads[1][k])
		}
	}
}

// TestDropoutMaskReplayed: in train mode, the reverse pass uses the mask
// the forward drew (dropped units get zero weight gradient rows), each
// forward draws a new mask, and eval mode is the identity.
func TestDropoutMaskReplayed(t *testing.T) {
	model := &Sequential{Layers: []Layer{Linear{In: 2, Out: 16}, Dropout{P: big.NewRat(1, 2)}, Linear{In: 16, Out: 1}}}
	x := spec.Vector(spec.NewRat(1, 1), spec.NewRat(2, 1))
	y := spec.Vector(spec.NewRat(5, 1))
	for _, exec := range []Execution{Eager, TypedGraph} {
		tr, err := NewTrainer(Config[spec.Rat]{Model: model, InDim: 2, Seed: 4, Execution: exec, Optimizer: &SGD[spec.Rat]{}})
		if err != nil {
			t.Fatal(err)
		}
		tr.SetMode(Train)
		var patterns []string
		for rep := 0; rep < 3; rep++ {
			_, g, err := tr.Gradients(x, y)
			if err != nil {
				t.Fatal(err)
			}
			w2 := g[2] // [1,16]: zero exactly where the unit was dropped
			var b strings.Builder
			dropped := 0
			for j := 0; j < 16; j++ {
				if w2.Data[j].IsZero() {
					b.WriteByte('0')
					dropped++
					// the first layer's row j must get no gradient either
					if !g[0].Data[2*j].IsZero() || !g[1].Data[j].IsZero() {
						t.Fatalf("%s: unit %d dropped in forward but gets a gradient", exec, j)
					}
				} else {
					b.WriteByte('1')
				}
			}
			if dropped == 0 || dropped == 16 {
				t.Fatalf("%s: mask dropped %d of 16", exec, dropped)
			}
			patterns = append(patterns, b.String())
		}
		if patterns[0] == patterns[1] && patterns[1] == patterns[2] {
			t.Fatalf("%s: the same mask was drawn for every forward: %v", exec, patterns)
		}
		// Eval mode: no dropout, deterministic.
		p1, _ := tr.Predict(x)
		p2, _ := tr.Predict(x)
		if !spec.SameTensor(p1, p2) {
			t.Fatalf("%s: eval mode is not deterministic", exec)
		}
	}
}

// TestBatchNormModes: train mode normalises with batch statistics and
// updates the running statistics; eval mode uses the running ones.
func TestBatchNormModes(t *testing.T) {
	model := &Sequential{Layers: []Layer{Linear{In: 2, Out: 2}, BatchNorm{C: 2, Eps: big.NewRat(0, 1), Momentum: big.NewRat(1, 2)}}}
	x, _ := spec.NewTensor(spec.Shape{2, 2}, []spec.F64{1, 2, 3, 5})
	y, _ := spec.NewTensor(spec.Shape{2, 2}, []spec.F64{0, 0, 0, 0})
	for _, exec := range []Execution{Eager, TypedGraph} {
		tr, err := NewTrainer(Config[spec.F64]{Model: model, InDim: 2, Seed: 5, Execution: exec, Optimizer: &SGD[spec.F64]{}})
		if err != nil {
			t.Fatal(err)
		}
		before := tr.Buffers()[0].Clone()
		if _, err := tr.Step(x, y); err != nil {
			t.Fatal(err)
		}
		after := tr.Buffers()[0]
		if spec.SameTensor(before, after) {
			t.Fatalf("%s: running mean not updated in train mode", exec)
		}
		// In train mode each output column has batch mean 0.
		tr.SetMode(Train)
		_, _, err = tr.Gradients(x, y)
		if err != nil {
			t.Fatal(err)
		}
		// Eval mode: running stats used, buffers unchanged.
		snap := tr.Buffers()[0].Clone()
		p, err := tr.Predict(x)
		if err != nil {
			t.Fatal(err)
		}
		if !spec.SameTensor(snap, tr.Buffers()[0]) {
			t.Fatalf("%s: eval mode changed the running statistics", exec)
		}
		if p.Shape.String() != "[2,2]" {
			t.Fatalf("%s: prediction shape %v", exec, p.Shape)
		}
	}
}

func TestTrainerBadInput(t *testing.T) {
	cases := []struct {
		cfg  Config[spec.F32]
		want string
	}{
		{Config[spec.F32]{Model: MLP(2, 3), InDim: 4, Execution: Eager}, "expects 2 inputs, previous layer gives 4"},
		{Config[spec.F32]{Model: MLP(2, 3), InDim: 2, Execution: "jit"}, `unknown execution "jit"`},
		{Config[spec.F32]{InDim: 2, Execution: Eager}, "no model"},
	}
	for _, c := range cases {
		_, err := NewTrainer(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
	tr, _ := NewTrainer(Config[spec.F32]{Model: MLP(2, 3), InDim: 2, Execution: Eager})
	if _, err := tr.Predict(spec.Vector[spec.F32](1, 2, 3)); err == nil || !strings.Contains(err.Error(), "expected last axis 2") {
		t.Errorf("wrong input shape: %v", err)
	}
}

// TestXavierMatchesSpec checks the first weights against an independent
// evaluation of the §6 formula.
func TestXavierMatchesSpec(t *testing.T) {
	ps, err := InitParams[spec.F32](MLP(2, 8, 1).Params(), 2026)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 || !ps[1].Shape.Equal(spec.Shape{8}) || !spec.IsZeroTensor(ps[1]) {
		t.Fatalf("state order W1[8,2], b1[8], W2[1,8], b2[1]: got %v", ps)
	}
	for _, w := range []spec.Tensor[spec.F32]{ps[0], ps[2]} {
		for _, v := range w.Data {
			if v == 0 || v > 1 || v < -1 {
				t.Fatalf("xavier value %v out of range", v)
			}
		}
	}
}
