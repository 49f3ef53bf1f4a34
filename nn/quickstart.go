package nn

import (
	"fmt"
	"io"
	"strconv"

	"github.com/tlcheck/tlcheck/spec"
)

// QuickstartOptions configures the quickstart MLP run.
type QuickstartOptions struct {
	Steps     int
	Seed      uint64
	Execution Execution
	// Arithmetic and Scalar are the labels printed on the summary line
	// ("native"/"Float32" for F32, "ieee"/"Binary32" for the bit-level
	// soft-float).
	Arithmetic, Scalar string
	// NewSelector is the per-eager-session capsule selection hook (see
	// Config.NewSelector).
	NewSelector func() (func(op string) error, error)
}

// f6 prints like C's %f.
func f6(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func vec6[T spec.Scalar[T]](t spec.Tensor[T]) string {
	return spec.Format(t, func(x T) string { return f6(x.Float64()) })
}

// Quickstart trains the quickstart MLP (linear 2→8, relu, linear 8→1,
// Adam lr 0.03, one sample per step from the 5×5 grid) and writes the
// TorchLean transcript to w. Over F32 and Binary32 it reproduces
// TorchLean's numbers digit for digit.
func Quickstart[T spec.Scalar[T]](w io.Writer, o QuickstartOptions) error {
	if o.Steps < 0 {
		return fmt.Errorf("steps must be ≥ 0, got %d", o.Steps)
	}
	tr, err := NewTrainer(Config[T]{Model: MLP(2, 8, 1), InDim: 2, Seed: o.Seed, Execution: o.Execution, NewSelector: o.NewSelector})
	if err != nil {
		return err
	}
	data := SquareGrid[T]()
	held := HeldOut[T]()
	meanLoss := func() (float64, error) {
		if err := tr.BeginSession(); err != nil {
			return 0, err
		}
		s := 0.0
		for _, d := range data {
			l, err := tr.Loss(d.X, d.Y)
			if err != nil {
				return 0, err
			}
			s += l.Float64()
		}
		return s / float64(len(data)), nil
	}
	predict := func() (spec.Tensor[T], error) {
		if err := tr.BeginSession(); err != nil {
			return spec.Tensor[T]{}, err
		}
		return tr.Predict(held.X)
	}
	fmt.Fprintf(w, "== Quickstart: simple MLP training (seed=%d, steps=%d) ==\n", o.Seed, o.Steps)
	fmt.Fprintf(w, "target(heldout)    = %s\n", vec6(held.Y))
	u, err := predict()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "untrained(heldout) = %s\n", vec6(u))
	fmt.Fprintf(w, "dataset size = %d\n", len(data))
	before, err := meanLoss()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "mean_loss(before training) = %s\n", f6(before))
	if err := tr.BeginSession(); err != nil {
		return err
	}
	for s := 0; s < o.Steps; s++ {
		d := data[s%len(data)]
		l, err := tr.Step(d.X, d.Y)
		if err != nil {
			return fmt.Errorf("step %d: %w", s, err)
		}
		if s%25 == 0 {
			fmt.Fprintf(w, "step %d: loss=%s\n", s, f6(l.Float64()))
		}
	}
	after, err := meanLoss()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "mean_loss(after training) = %s\n", f6(after))
	fmt.Fprintf(w, "steps=%d arithmetic=%s scalar=%s loss=%s -> %s\n", o.Steps, o.Arithmetic, o.Scalar, f6(before), f6(after))
	p, err := predict()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "trained(heldout) = %s\n", vec6(p))
	return nil
}
