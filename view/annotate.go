package view

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Annotate computes, over T, the values of every node of m (AddValues)
// and, withGrads, the reverse pass (AddGrads), and returns the step that
// draws the parameters with their values and, withGrads in the grads
// view, their gradients (AddParams with o), to run after Fold. A value
// that cannot be computed is a note on the tape view (which draws the
// graph whatever its values) and an error on the others.
func Annotate[T spec.Scalar[T]](m *Model, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T], withGrads bool, o ParamOptions) (func() error, error) {
	if withGrads {
		if err := AddGrads(m, g, p, x); err != nil {
			return nil, err
		}
	}
	if err := AddValues(m, g, p, x); err != nil {
		if withGrads {
			return nil, err
		}
		m.Notes = append(m.Notes, fmt.Sprintf("values not shown: %v", err))
	}
	o.Grads = withGrads && m.What == Grads
	return func() error { return AddParams(m, g, p, x, o) }, nil
}

// AddParamValues draws the parameters of a model viewed without an
// input: their values only (o.Grads is ignored), exact (over spec.Rat)
// where the model lowers over the rationals, as enclosures otherwise.
func AddParamValues(m *Model, g *irsem.Graph, p *irsem.Payload, o ParamOptions) error {
	o.Grads = false
	var none spec.Tensor[spec.Rat]
	if err := AddParams(m, g, p, none, o); err == nil {
		return nil
	}
	return AddParams(m, g, p, spec.Tensor[spec.Interval]{}, o)
}
