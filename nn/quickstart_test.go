package nn

import (
	"bytes"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

const transcript2026 = `== Quickstart: simple MLP training (seed=2026, steps=2) ==
target(heldout)    = [0.200000]
untrained(heldout) = [-0.088261]
dataset size = 25
mean_loss(before training) = 0.495227
step 0: loss=0.250488
mean_loss(after training) = 0.392821
steps=2 arithmetic=native scalar=Float32 loss=0.495227 -> 0.392821
trained(heldout) = [0.019031]
`

func quick[T spec.Scalar[T]](t *testing.T, exec Execution, steps int, seed uint64, arith, scalar string) string {
	t.Helper()
	var b bytes.Buffer
	if err := Quickstart[T](&b, QuickstartOptions{Steps: steps, Seed: seed, Execution: exec, Arithmetic: arith, Scalar: scalar}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestQuickstartTranscript reproduces §6 digit for digit under both
// executions and both arithmetics.
func TestQuickstartTranscript(t *testing.T) {
	for _, exec := range []Execution{Eager, TypedGraph} {
		if got := quick[spec.F32](t, exec, 2, 2026, "native", "Float32"); got != transcript2026 {
			t.Errorf("%s/F32:\n%s\nwant\n%s", exec, got, transcript2026)
		}
		got := quick[spec.Binary32](t, exec, 2, 2026, "native", "Float32")
		if got != transcript2026 {
			t.Errorf("%s/Binary32:\n%s\nwant\n%s", exec, got, transcript2026)
		}
	}
}

// TestQuickstartPathsAgree: 200 steps at seed 0 print the same lines under
// every execution and arithmetic.
func TestQuickstartPathsAgree(t *testing.T) {
	ref := quick[spec.F32](t, Eager, 200, 0, "a", "s")
	for _, got := range []string{
		quick[spec.F32](t, TypedGraph, 200, 0, "a", "s"),
		quick[spec.Binary32](t, Eager, 200, 0, "a", "s"),
		quick[spec.Binary32](t, TypedGraph, 200, 0, "a", "s"),
	} {
		if got != ref {
			t.Fatalf("paths disagree:\n%s\nvs\n%s", got, ref)
		}
	}
}
