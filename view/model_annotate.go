package view

import (
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// AnnotateModel computes the loaded model m's values on the tape, grads or
// trace view vm over scalar sc (interval, f32, f64, else rat within
// model.RatBudget), with the reverse pass and its note unless vm is the
// tape view (Annotate); with input false (m read without one) it draws
// the parameters' values only (AddParamValues). It returns the step that
// draws the parameters, to run after vm.Fold.
func AnnotateModel(vm *Model, m *model.Model, sc string, input bool) (func() error, error) {
	g, p, x := m.Graph, m.Payload, m.Input
	po := ModelParamOptions(m)
	if !input {
		return func() error { return AddParamValues(vm, g, p, po) }, nil
	}
	withGrads := vm.What != Tape
	var addParams func() error
	var err error
	switch sc {
	case "interval":
		addParams, err = Annotate(vm, g, p, irsem.ConvertTensor[spec.Interval](x), withGrads, po)
	case "f32":
		addParams, err = Annotate(vm, g, p, irsem.ConvertTensor[spec.F32](x), withGrads, po)
	case "f64":
		addParams, err = Annotate(vm, g, p, irsem.ConvertTensor[spec.F64](x), withGrads, po)
	default:
		if err = model.RatBudget(g, p, irsem.ConvertTensor[spec.Rat](x)); err == nil {
			addParams, err = Annotate(vm, g, p, irsem.ConvertTensor[spec.Rat](x), withGrads, po)
		}
	}
	if err == nil && withGrads {
		vm.Notes = append(vm.Notes, "reverse pass of the eager tape from the output, seeded with ones of its shape")
	}
	return addParams, err
}

// ModelParamOptions names an ONNX model's parameters by their
// initializers and differentiates its const nodes (initializers) as
// tlcheck grad does; an IR graph's parameters keep their own names.
func ModelParamOptions(m *model.Model) ParamOptions {
	o := ParamOptions{ConstParams: m.ONNX != nil}
	if m.ONNX != nil {
		type key struct {
			node  int
			field string
		}
		names := map[key]string{}
		for _, init := range m.ONNX.Imported.Initializers {
			for _, u := range init.Uses {
				names[key{u.Node, u.Field}] = init.Name
			}
		}
		o.Name = func(node int, field string) string { return names[key{node, field}] }
	}
	return o
}
