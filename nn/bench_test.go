package nn

import (
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func benchSteps(b *testing.B, exec Execution, model *Sequential, in int, x, y spec.Tensor[spec.F32]) {
	tr, err := NewTrainer(Config[spec.F32]{Model: model, InDim: in, Seed: 1, Execution: exec, Optimizer: &SGD[spec.F32]{LR: 0}})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := tr.Step(x, y); err != nil { // record once outside the timing
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := tr.Step(x, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkQuickstartStep: one training step (forward, MSE, reverse,
// Adam-free update) of the quickstart MLP, eager vs typed graph.
func BenchmarkQuickstartStep(b *testing.B) {
	d := SquareGrid[spec.F32]()[7]
	for _, exec := range []Execution{Eager, TypedGraph} {
		b.Run(string(exec), func(b *testing.B) { benchSteps(b, exec, MLP(2, 8, 1), 2, d.X, d.Y) })
	}
}

// BenchmarkMLP784Step: a 784→128→10 MLP on a batch of 64.
func BenchmarkMLP784Step(b *testing.B) {
	x, _ := spec.Full(spec.Shape{64, 784}, spec.F32(0.01))
	y, _ := spec.Full(spec.Shape{64, 10}, spec.F32(0.1))
	for _, exec := range []Execution{Eager, TypedGraph} {
		b.Run(string(exec), func(b *testing.B) { benchSteps(b, exec, MLP(784, 128, 10), 784, x, y) })
	}
}

// BenchmarkMLP784Forward: the hand-written nn forward path (eval-mode
// prediction on the recorded typed graph) of a 784→128→10 MLP on a batch of
// 64 — the yardstick of irsem's DenoteAll benchmark.
func BenchmarkMLP784Forward(b *testing.B) {
	x, _ := spec.Full(spec.Shape{64, 784}, spec.F32(0.01))
	for _, exec := range []Execution{Eager, TypedGraph} {
		b.Run(string(exec), func(b *testing.B) {
			tr, err := NewTrainer(Config[spec.F32]{Model: MLP(784, 128, 10), InDim: 784, Seed: 1, Execution: exec})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tr.Predict(x); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := tr.Predict(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
