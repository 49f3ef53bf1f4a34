package harness

import (
	"github.com/tlcheck/tlcheck/spec"
)

// self is the engine made of tlcheck's own rules over float64 (spec.F64):
// the registry's formulas evaluated in binary64 on a tape, which the
// bound covers by its theorem, so every obligation holds on it: the
// baseline row of the table. Tests perturb it to plant faults.
type self struct {
	reg      *spec.Registry[spec.F64]
	machines []string
	// perturb, when set, edits machine m's gradients before they are
	// returned.
	perturb func(m string, grads []Tensor64)
	// perturbY, when set, edits machine m's output y of graph g before
	// it is returned.
	perturbY func(m string, g Graph, y Tensor64)
	convs    []Convention
}

// Self returns the baseline engine: tlcheck's own registry rules in
// binary64 (spec.F64) on its tape, one machine "tape".
func Self() Engine { return newSelf() }

func newSelf() *self {
	return &self{reg: spec.Default[spec.F64](), machines: []string{"tape"}}
}

func (e *self) Name() string                       { return "tlcheck" }
func (e *self) Module() string                     { return "github.com/tlcheck/tlcheck (float64)" }
func (e *self) Machines() []string                 { return e.machines }
func (e *self) Supports(string, *spec.Attrs) error { return nil }
func (e *self) Conventions() []Convention          { return e.convs }

func f64s(t Tensor64) spec.Tensor[spec.F64] {
	d := make([]spec.F64, len(t.Data))
	for i, v := range t.Data {
		d[i] = spec.F64(v)
	}
	return spec.Tensor[spec.F64]{Shape: append(spec.Shape{}, t.Shape...), Data: d}
}

func back(t spec.Tensor[spec.F64]) Tensor64 {
	out := Tensor64{Shape: append([]int{}, t.Shape...), Data: make([]float64, len(t.Data))}
	for i, v := range t.Data {
		out.Data[i] = float64(v)
	}
	return out
}

func (e *self) Run(m string, g Graph, xs []Tensor64, cot Tensor64) (Tensor64, []Tensor64, error) {
	ins := make([]spec.Tensor[spec.F64], len(xs))
	for i, x := range xs {
		ins[i] = f64s(x)
	}
	y, gs, err := tapeVJP(e.reg, g, ins, f64s(cot))
	if err != nil {
		return Tensor64{}, nil, err
	}
	grads := make([]Tensor64, len(gs))
	for i, gr := range gs {
		grads[i] = back(gr)
	}
	if e.perturb != nil {
		e.perturb(m, grads)
	}
	out := back(y)
	if e.perturbY != nil {
		e.perturbY(m, g, out)
	}
	return out, grads, nil
}
