package typedgraph_test

import (
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

// The quickstart-sized MLP: x[25,2] → linear(8) → relu → linear(1) → mse
// against y[25,1]. The context is (W1, b1, W2, b2, x, y).
var mlpShapes = []spec.Shape{{8, 2}, {8}, {1, 8}, {1}, {25, 2}, {25, 1}}

func mlp[T spec.Scalar[T], R any](o tg.Ops[T, R], in []R) (R, error) {
	h, err := tg.Linear(o, in[4], in[0], in[1])
	if err != nil {
		return h, err
	}
	a, err := tg.Relu(o, h)
	if err != nil {
		return a, err
	}
	p, err := tg.Linear(o, a, in[2], in[3])
	if err != nil {
		return p, err
	}
	return tg.MSE(o, p, in[5])
}

func mlpInputs[T spec.Scalar[T]]() []spec.Tensor[T] {
	r := rand.New(rand.NewPCG(2026, 1))
	return randTensors[T](r, mlpShapes)
}

var paramMask = []bool{true, true, true, true, false, false}

// benchExec: the graph is recorded and compiled once; each step is one
// Forward and one Backward on the plan's buffers.
func benchExec[T spec.Scalar[T]](b *testing.B) {
	g, err := tg.Trace(nil, mlp[T, tg.Var], mlpShapes...)
	if err != nil {
		b.Fatal(err)
	}
	e, err := g.Compile()
	if err != nil {
		b.Fatal(err)
	}
	if err := e.SetRequiresGrad(paramMask); err != nil {
		b.Fatal(err)
	}
	in := mlpInputs[T]()
	seed := spec.Scalar0(spec.One[T]())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.Forward(in); err != nil {
			b.Fatal(err)
		}
		if _, err := e.Backward(seed); err != nil {
			b.Fatal(err)
		}
	}
}

// benchEager: each step rebuilds the tape through the eager interpreter
// (parameters and data as leaves) and runs the dense-all sweep.
func benchEager[T spec.Scalar[T]](b *testing.B) {
	in := mlpInputs[T]()
	e := tg.NewEager[T](nil)
	seed := spec.Scalar0(spec.One[T]())
	b.ReportAllocs()
	for b.Loop() {
		e.Session.Reset()
		refs := make([]tape.Ref, len(in))
		for i, v := range in {
			var err error
			if paramMask[i] {
				refs[i], err = e.Session.Param("p", v)
			} else {
				refs[i], err = e.Session.Input("x", v)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		out, err := mlp[T, tape.Ref](e, refs)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Session.Tape().BackwardAll(out.ID(), seed); err != nil {
			b.Fatal(err)
		}
	}
}

// benchLowered: TorchLean's typed-graph trainer, which lowers the stored
// graph to a fresh tape every step.
func benchLowered[T spec.Scalar[T]](b *testing.B) {
	g, err := tg.Trace(nil, mlp[T, tg.Var], mlpShapes...)
	if err != nil {
		b.Fatal(err)
	}
	in := mlpInputs[T]()
	seed := spec.Scalar0(spec.One[T]())
	r, _ := g.Result()
	b.ReportAllocs()
	for b.Loop() {
		t, ids, err := g.Lower(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := t.BackwardAll(ids[r], seed); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMLPExecF32(b *testing.B)    { benchExec[spec.F32](b) }
func BenchmarkMLPEagerF32(b *testing.B)   { benchEager[spec.F32](b) }
func BenchmarkMLPLoweredF32(b *testing.B) { benchLowered[spec.F32](b) }
func BenchmarkMLPExecF64(b *testing.B)    { benchExec[spec.F64](b) }
func BenchmarkMLPEagerF64(b *testing.B)   { benchEager[spec.F64](b) }
func BenchmarkMLPExecRat(b *testing.B)    { benchExec[spec.Rat](b) }
func BenchmarkMLPEagerRat(b *testing.B)   { benchEager[spec.Rat](b) }

// The compiled plan and the eager tape compute the same loss gradient,
// bit for bit, over F32.
func TestMLPExecMatchesEager(t *testing.T) {
	in := mlpInputs[spec.F32]()
	g, err := tg.Trace(nil, mlp[spec.F32, tg.Var], mlpShapes...)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := g.Compile()
	_ = e.SetRequiresGrad(paramMask)
	if _, err := e.Forward(in); err != nil {
		t.Fatal(err)
	}
	got, err := e.Backward(spec.Scalar0[spec.F32](1))
	if err != nil {
		t.Fatal(err)
	}
	ee := tg.NewEager[spec.F32](nil)
	refs := make([]tape.Ref, len(in))
	for i, v := range in {
		if paramMask[i] {
			refs[i], _ = ee.Session.Param("p", v)
		} else {
			refs[i], _ = ee.Session.Input("x", v)
		}
	}
	out, err := mlp[spec.F32, tape.Ref](ee, refs)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ee.Session.Tape().BackwardAll(out.ID(), spec.Scalar0[spec.F32](1))
	if err != nil {
		t.Fatal(err)
	}
	if i, ok := sameList(got, want); !ok {
		t.Fatalf("entry %d: plan %v, eager %v", i, got[i], want[i])
	}
}
