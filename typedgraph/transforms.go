package typedgraph

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// The transforms come in two forms: a program form (Grad, VJP, …) that
// traces a Program into a typed graph over the inputs' shapes and then
// calls the graph form (GradGraph, VJPGraph, …) on it. The graph forms
// take the graph that is actually executed, so a caller can supply one
// built with a private registry (for example, a dual registry with a
// planted fault for HVPGraph).

func shapesOf[T any](xs []spec.Tensor[T]) []spec.Shape {
	s := make([]spec.Shape, len(xs))
	for i, x := range xs {
		s[i] = x.Shape
	}
	return s
}

// ctxOf picks the context entries' tape cotangents out of a dense sweep.
func ctxOf[T any](dense []spec.Tensor[T], ids []int, n int) []spec.Tensor[T] {
	out := make([]spec.Tensor[T], n)
	for i := 0; i < n; i++ {
		out[i] = dense[ids[i]]
	}
	return out
}

func needResult[T spec.Scalar[T]](g *Graph[T], what string) (int, error) {
	if g == nil {
		return -1, fmt.Errorf("%s: nil graph", what)
	}
	r, ok := g.Result()
	if !ok {
		return -1, fmt.Errorf("%s: graph has no result (call SetResult)", what)
	}
	return r, nil
}

// GradGraph is the chapter's grad over a typed graph with a scalar
// (rank-0) result: checked lowering of g at inputs, then the tape's dense
// reverse sweep from the result with seed 1. It returns one gradient per
// context input (zeros for inputs the result does not depend on).
func GradGraph[T spec.Scalar[T]](g *Graph[T], inputs []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	r, err := needResult(g, "grad")
	if err != nil {
		return nil, err
	}
	if s := g.shapes[r]; len(s) != 0 {
		return nil, fmt.Errorf("grad: %w", &ShapeError{ID: r, Op: "scalar result", Expected: spec.Shape{}, Got: s.Clone()})
	}
	t, ids, err := g.Lower(inputs)
	if err != nil {
		return nil, fmt.Errorf("grad: %w", err)
	}
	gr, err := t.BackwardScalar(ids[r])
	if err != nil {
		return nil, fmt.Errorf("grad: %w", err)
	}
	return ctxOf(gr.Dense(), ids, g.CtxLen()), nil
}

// Grad traces the scalar program prog over the inputs' shapes into a typed
// graph and returns GradGraph of it: one gradient per input.
func Grad[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs ...spec.Tensor[T]) ([]spec.Tensor[T], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return nil, fmt.Errorf("grad: %w", err)
	}
	return GradGraph(g, inputs)
}

// VJPGraph lowers g at inputs and runs the dense reverse sweep from the
// result with cotangent seed (of the result's shape). It returns the
// result's value and one cotangent per context input.
func VJPGraph[T spec.Scalar[T]](g *Graph[T], inputs []spec.Tensor[T], seed spec.Tensor[T]) (spec.Tensor[T], []spec.Tensor[T], error) {
	var zero spec.Tensor[T]
	r, err := needResult(g, "vjp")
	if err != nil {
		return zero, nil, err
	}
	if err := checkTensor(seed, g.shapes[r], r, "seed"); err != nil {
		return zero, nil, fmt.Errorf("vjp: %w", err)
	}
	t, ids, err := g.Lower(inputs)
	if err != nil {
		return zero, nil, fmt.Errorf("vjp: %w", err)
	}
	out, err := t.Value(ids[r])
	if err != nil {
		return zero, nil, fmt.Errorf("vjp: %w", err)
	}
	gr, err := t.Backward(ids[r], seed)
	if err != nil {
		return zero, nil, fmt.Errorf("vjp: %w", err)
	}
	return out, ctxOf(gr.Dense(), ids, g.CtxLen()), nil
}

// VJP traces prog and returns VJPGraph of it.
func VJP[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs []spec.Tensor[T], seed spec.Tensor[T]) (spec.Tensor[T], []spec.Tensor[T], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return spec.Tensor[T]{}, nil, fmt.Errorf("vjp: %w", err)
	}
	return VJPGraph(g, inputs, seed)
}

// JVPGraph evaluates g at inputs and pushes one tangent per context input
// forward; it returns the result's value and tangent.
func JVPGraph[T spec.Scalar[T]](g *Graph[T], inputs, tangents []spec.Tensor[T]) (spec.Tensor[T], spec.Tensor[T], error) {
	var zero spec.Tensor[T]
	r, err := needResult(g, "jvp")
	if err != nil {
		return zero, zero, err
	}
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return zero, zero, fmt.Errorf("jvp: %w", err)
	}
	tans, err := e.JVP(tangents)
	if err != nil {
		return zero, zero, fmt.Errorf("jvp: %w", err)
	}
	return e.vals[r], tans[r], nil
}

// JVP traces prog and returns JVPGraph of it.
func JVP[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs, tangents []spec.Tensor[T]) (spec.Tensor[T], spec.Tensor[T], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return spec.Tensor[T]{}, spec.Tensor[T]{}, fmt.Errorf("jvp: %w", err)
	}
	return JVPGraph(g, inputs, tangents)
}

// jacShape is out ++ in, checked against the shape limits.
func jacShape(out, in spec.Shape, what string, i int) (spec.Shape, error) {
	s := append(out.Clone(), in...)
	if _, err := s.Check(0); err != nil {
		return nil, fmt.Errorf("%s: Jacobian block for input %d (%v ++ %v): %w", what, i, out, in, err)
	}
	return s, nil
}

// JacRevGraph is the reverse-mode Jacobian: g is lowered once at inputs,
// and one VJP per output coordinate, seeded with that coordinate's one-hot
// cotangent, runs on that one tape. It returns one block per context input
// i, of shape out ++ Γ[i]: block[o…, a…] = ∂out[o…]/∂input_i[a…].
func JacRevGraph[T spec.Scalar[T]](g *Graph[T], inputs []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	r, err := needResult(g, "jacrev")
	if err != nil {
		return nil, err
	}
	out := g.shapes[r]
	jac := make([]spec.Tensor[T], g.CtxLen())
	for i := range jac {
		s, err := jacShape(out, g.shapes[i], "jacrev", i)
		if err != nil {
			return nil, err
		}
		jac[i] = spec.Tensor[T]{Shape: s, Data: make([]T, s.Size())}
	}
	t, ids, err := g.Lower(inputs)
	if err != nil {
		return nil, fmt.Errorf("jacrev: %w", err)
	}
	m := out.Size()
	seed := spec.Tensor[T]{Shape: out.Clone(), Data: make([]T, m)}
	one, zero := spec.One[T](), spec.Zero[T]()
	for o := 0; o < m; o++ {
		seed.Data[o] = one
		gr, err := t.Backward(ids[r], seed)
		seed.Data[o] = zero
		if err != nil {
			return nil, fmt.Errorf("jacrev: output coordinate %d: %w", o, err)
		}
		dense := gr.Dense()
		for i := range jac {
			n := g.shapes[i].Size()
			copy(jac[i].Data[o*n:(o+1)*n], dense[ids[i]].Data)
		}
	}
	return jac, nil
}

// JacRev traces prog and returns JacRevGraph of it.
func JacRev[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs ...spec.Tensor[T]) ([]spec.Tensor[T], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return nil, fmt.Errorf("jacrev: %w", err)
	}
	return JacRevGraph(g, inputs)
}

// JacFwdGraph is the forward-mode Jacobian: g is evaluated once at inputs,
// and one JVP per input basis vector runs on that evaluation. The layout is
// JacRevGraph's: one block per context input, of shape out ++ Γ[i].
func JacFwdGraph[T spec.Scalar[T]](g *Graph[T], inputs []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	r, err := needResult(g, "jacfwd")
	if err != nil {
		return nil, err
	}
	out := g.shapes[r]
	m := out.Size()
	jac := make([]spec.Tensor[T], g.CtxLen())
	for i := range jac {
		s, err := jacShape(out, g.shapes[i], "jacfwd", i)
		if err != nil {
			return nil, err
		}
		jac[i] = spec.Tensor[T]{Shape: s, Data: make([]T, s.Size())}
	}
	e := g.newExec()
	if err := e.forward(inputs); err != nil {
		return nil, fmt.Errorf("jacfwd: %w", err)
	}
	tangents := make([]spec.Tensor[T], g.CtxLen())
	for i := range tangents {
		tangents[i] = spec.Tensor[T]{Shape: g.shapes[i].Clone(), Data: make([]T, g.shapes[i].Size())}
	}
	one, zero := spec.One[T](), spec.Zero[T]()
	for i := range tangents {
		n := g.shapes[i].Size()
		for b := 0; b < n; b++ {
			tangents[i].Data[b] = one
			tans, err := e.JVP(tangents)
			tangents[i].Data[b] = zero
			if err != nil {
				return nil, fmt.Errorf("jacfwd: input %d basis vector %d: %w", i, b, err)
			}
			col := tans[r]
			for o := 0; o < m; o++ {
				jac[i].Data[o*n+b] = col.Data[o]
			}
		}
	}
	return jac, nil
}

// JacFwd traces prog and returns JacFwdGraph of it.
func JacFwd[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs ...spec.Tensor[T]) ([]spec.Tensor[T], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return nil, fmt.Errorf("jacfwd: %w", err)
	}
	return JacFwdGraph(g, inputs)
}

// HVPGraph is the Hessian-vector product, forward over reverse: gd is a
// scalar-result graph over spec.Dual[T] (see ToDual and ToDualWith); its
// context is set to inputs + ε·v (one direction per input, of its shape),
// GradGraph runs checked lowering and the reverse pass over duals, and the
// tangent parts of the gradient are returned: one block of H·v per input.
func HVPGraph[T spec.Scalar[T]](gd *Graph[spec.Dual[T]], inputs, v []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	if gd == nil {
		return nil, fmt.Errorf("hvp: nil graph")
	}
	if len(inputs) != gd.CtxLen() || len(v) != gd.CtxLen() {
		return nil, fmt.Errorf("hvp: graph context has %d inputs, got %d values and %d directions", gd.CtxLen(), len(inputs), len(v))
	}
	dual := make([]spec.Tensor[spec.Dual[T]], len(inputs))
	for i := range inputs {
		if err := checkTensor(inputs[i], gd.shapes[i], i, "input"); err != nil {
			return nil, fmt.Errorf("hvp: %w", err)
		}
		if err := checkTensor(v[i], gd.shapes[i], i, "direction"); err != nil {
			return nil, fmt.Errorf("hvp: %w", err)
		}
		d := spec.Tensor[spec.Dual[T]]{Shape: inputs[i].Shape.Clone(), Data: make([]spec.Dual[T], len(inputs[i].Data))}
		for k := range d.Data {
			d.Data[k] = spec.MakeDual(inputs[i].Data[k], v[i].Data[k])
		}
		dual[i] = d
	}
	gs, err := GradGraph(gd, dual)
	if err != nil {
		return nil, fmt.Errorf("hvp: %w", err)
	}
	out := make([]spec.Tensor[T], len(gs))
	for i, g := range gs {
		out[i] = spec.Convert(g, func(x spec.Dual[T]) T { return x.Du })
	}
	return out, nil
}

// HVP traces the scalar program prog over T, rebuilds the graph over
// spec.Dual[T] with the reference dual registry, and returns HVPGraph of
// it: H·v, one block per input.
func HVP[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs, v []spec.Tensor[T]) ([]spec.Tensor[T], error) {
	gd, err := traceDual(reg, prog, inputs, "hvp")
	if err != nil {
		return nil, err
	}
	return HVPGraph(gd, inputs, v)
}

func traceDual[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs []spec.Tensor[T], what string) (*Graph[spec.Dual[T]], error) {
	g, err := Trace(reg, prog, shapesOf(inputs)...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	gd, err := ToDual(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return gd, nil
}

// HessianGraph assembles the Hessian of a scalar-result dual graph from one
// HVPGraph per input basis vector. Block [i][j] has shape Γ[i] ++ Γ[j]:
// block[i][j][a…, b…] = ∂²f/∂input_i[a…]∂input_j[b…].
func HessianGraph[T spec.Scalar[T]](gd *Graph[spec.Dual[T]], inputs []spec.Tensor[T]) ([][]spec.Tensor[T], error) {
	if gd == nil {
		return nil, fmt.Errorf("hessian: nil graph")
	}
	n := gd.CtxLen()
	if len(inputs) != n {
		return nil, fmt.Errorf("hessian: graph context has %d inputs, got %d values", n, len(inputs))
	}
	h := make([][]spec.Tensor[T], n)
	for i := range h {
		h[i] = make([]spec.Tensor[T], n)
		for j := range h[i] {
			s, err := jacShape(gd.shapes[i], gd.shapes[j], "hessian", i)
			if err != nil {
				return nil, err
			}
			h[i][j] = spec.Tensor[T]{Shape: s, Data: make([]T, s.Size())}
		}
	}
	v := make([]spec.Tensor[T], n)
	for i := range v {
		v[i] = spec.Tensor[T]{Shape: gd.shapes[i].Clone(), Data: make([]T, gd.shapes[i].Size())}
	}
	one, zero := spec.One[T](), spec.Zero[T]()
	for j := 0; j < n; j++ {
		nj := gd.shapes[j].Size()
		for b := 0; b < nj; b++ {
			v[j].Data[b] = one
			hv, err := HVPGraph(gd, inputs, v)
			v[j].Data[b] = zero
			if err != nil {
				return nil, fmt.Errorf("hessian: input %d basis vector %d: %w", j, b, err)
			}
			for i := 0; i < n; i++ {
				for a, x := range hv[i].Data {
					h[i][j].Data[a*nj+b] = x
				}
			}
		}
	}
	return h, nil
}

// Hessian traces the scalar program prog, rebuilds it over spec.Dual[T]
// and returns HessianGraph of it.
func Hessian[T spec.Scalar[T]](reg *spec.Registry[T], prog Program[T, Var], inputs ...spec.Tensor[T]) ([][]spec.Tensor[T], error) {
	gd, err := traceDual(reg, prog, inputs, "hessian")
	if err != nil {
		return nil, err
	}
	return HessianGraph(gd, inputs)
}
