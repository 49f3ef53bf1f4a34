package casegen

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// ConvertInputs converts exact tensors to T element by element
// (irsem.FromRat: correctly rounded for the IEEE scalars, an enclosure for
// intervals).
func ConvertInputs[T spec.Scalar[T]](xs []spec.Tensor[spec.Rat]) []spec.Tensor[T] {
	out := make([]spec.Tensor[T], len(xs))
	for i, x := range xs {
		out[i] = spec.Convert(x, irsem.FromRat[T])
	}
	return out
}

// BuildTyped builds a recipe as a typedgraph.Graph over T whose rules come
// from reg (nil: the reference registry). Entry i of the recipe is entry i
// of the graph. An IR recipe's linear steps (whose parameters live in the
// IR payload) cannot be built this way: lower the IR graph instead.
func BuildTyped[T spec.Scalar[T]](r *Recipe, reg *spec.Registry[T]) (*typedgraph.Graph[T], error) {
	g, err := typedgraph.New(reg, r.Ctx...)
	if err != nil {
		return nil, err
	}
	for k, st := range r.Steps {
		id := len(r.Ctx) + k
		if st.W != nil {
			return nil, fmt.Errorf("entry %d: a linear step with payload parameters has no typed-graph form", id)
		}
		got, err := g.Append(st.Op, st.Attrs, st.In, r.Shapes[id])
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", id, st.Op, err)
		}
		if got != id {
			return nil, fmt.Errorf("entry %d (%s): appended as entry %d", id, st.Op, got)
		}
	}
	if err := g.SetResult(r.Result); err != nil {
		return nil, err
	}
	return g, nil
}

// RecordTape records a typed recipe eagerly on a fresh tape over T whose
// rules come from reg (nil: the reference registry): one parameter leaf
// per context input (requiresGrad = true) holding inputs[i], then one node
// per step — tape.Detach for detach, tape.Const for const, tape.Apply
// otherwise. Entry i of the recipe is tape node i.
func RecordTape[T spec.Scalar[T]](r *Recipe, reg *spec.Registry[T], inputs []spec.Tensor[T]) (*tape.Tape[T], error) {
	if len(inputs) != len(r.Ctx) {
		return nil, fmt.Errorf("record: %d inputs for a context of %d", len(inputs), len(r.Ctx))
	}
	t := tape.New(reg)
	for i, x := range inputs {
		if !x.Shape.Equal(r.Ctx[i]) {
			return nil, fmt.Errorf("record: input %d has shape %v, expected %v", i, x.Shape, r.Ctx[i])
		}
		if _, err := t.Param(fmt.Sprintf("x%d", i), x); err != nil {
			return nil, err
		}
	}
	for k, st := range r.Steps {
		id := len(r.Ctx) + k
		var got int
		var err error
		switch {
		case st.W != nil:
			return nil, fmt.Errorf("entry %d: a linear step with payload parameters has no tape form here", id)
		case st.Op == "detach" && len(st.In) == 1:
			got, err = t.Detach(st.In[0])
		case st.Op == "const" && st.Attrs != nil:
			var z T
			data := make([]T, len(st.Attrs.Values))
			for i, x := range st.Attrs.Values {
				data[i] = z.FromRat(x)
			}
			var v spec.Tensor[T]
			if v, err = spec.NewTensor(st.Attrs.Shape.Clone(), data); err == nil {
				got, err = t.Const("const", v)
			}
		default:
			got, err = t.Apply(st.Op, st.Attrs.Clone(), st.In...)
		}
		if err != nil {
			return nil, fmt.Errorf("entry %d (%s): %w", id, st.Op, err)
		}
		if got != id {
			return nil, fmt.Errorf("entry %d (%s): recorded as node %d", id, st.Op, got)
		}
	}
	return t, nil
}
