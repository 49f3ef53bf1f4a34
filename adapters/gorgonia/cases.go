package gorgonia

import (
	"fmt"

	G "gorgonia.org/gorgonia"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// q4 is the exact tensor of shape s with values k/4.
func q4(s spec.Shape, ks ...int64) spec.Tensor[spec.Rat] {
	t, _ := spec.Zeros[spec.Rat](s)
	for i := range t.Data {
		t.Data[i] = spec.NewRat(ks[i%len(ks)], 4)
	}
	return t
}

// Inputs with zeros (kinks of relu, abs, sign) and ties on purpose.
var (
	vecA = q4(spec.Shape{6}, 4, -2, 0, 12, -12, 1)
	vecB = q4(spec.Shape{6}, -3, -2, 5, 0, 7, 1)
	vecC = q4(spec.Shape{6}, 3, -5, 2, 8, 1, -4)
	matA = q4(spec.Shape{2, 3}, 1, -2, 0, 4, 3, -1)
	matB = q4(spec.Shape{3, 2}, 2, 0, -3, 1, 5, -4)
	cot2 = q4(spec.Shape{2, 2}, 3, -1, 2, 5)
)

// reluGE is relu under gorgonia's documented convention ("Rectify …
// uses ⩾", so relu′(0) = 1), written with tlcheck's primitives:
// x + relu(−x) equals relu(x) everywhere, and with tlcheck's relu′(0) = 0
// its derivative at 0 is 1 − 0 = 1.
func reluGE(s *tape.Session[spec.Rat], x tape.Ref) (tape.Ref, error) {
	n, err := s.Apply("neg", nil, x)
	if err != nil {
		return n, err
	}
	r, err := s.Apply("relu", nil, n)
	if err != nil {
		return r, err
	}
	return s.Apply("add", nil, x, r)
}

const reluConvention = "gorgonia Rectify uses ⩾: relu′(0) = 1"

func unaryCase(name, op string, build func(*G.Node) (*G.Node, error)) Case {
	return Case{Name: name,
		Exact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) { return s.Apply(op, nil, xs[0]) },
		Build: func(xs []*G.Node) (*G.Node, error) { return build(xs[0]) },
		Xs:    []spec.Tensor[spec.Rat]{vecA}, Cot: vecC}
}

func binaryCase(name, op string, build func(a, b *G.Node) (*G.Node, error)) Case {
	return Case{Name: name,
		Exact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
			return s.Apply(op, nil, xs[0], xs[1])
		},
		Build: func(xs []*G.Node) (*G.Node, error) { return build(xs[0], xs[1]) },
		Xs:    []spec.Tensor[spec.Rat]{vecA, vecB}, Cot: vecC}
}

func withConvention(c Case, e func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error)) Case {
	c.EngineExact, c.Convention = e, reluConvention
	return c
}

// Cases are the engine cases: tlcheck primitives mapped to gorgonia ops,
// and small DAGs with fan-out and shared leaves.
func Cases() []Case {
	cs := []Case{
		unaryCase("neg", "neg", G.Neg),
		unaryCase("square", "square", G.Square),
		unaryCase("abs", "abs", G.Abs),
		withConvention(unaryCase("relu", "relu", G.Rectify), func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
			return reluGE(s, xs[0])
		}),
		binaryCase("add", "add", G.Add),
		binaryCase("sub", "sub", G.Sub),
		binaryCase("mul", "mul", G.HadamardProd),
		{Name: "matmul",
			Exact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
				return s.Apply("matmul", nil, xs[0], xs[1])
			},
			Build: func(xs []*G.Node) (*G.Node, error) { return G.Mul(xs[0], xs[1]) },
			Xs:    []spec.Tensor[spec.Rat]{matA, matB}, Cot: cot2},
		// Fan-out: y = x⊙x + x⊙x (x read four times).
		{Name: "dag_fanout",
			Exact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
				a, err := s.Apply("mul", nil, xs[0], xs[0])
				if err != nil {
					return a, err
				}
				return s.Apply("add", nil, a, a)
			},
			Build: func(xs []*G.Node) (*G.Node, error) {
				a, err := G.HadamardProd(xs[0], xs[0])
				if err != nil {
					return nil, err
				}
				return G.Add(a, a)
			},
			Xs: []spec.Tensor[spec.Rat]{vecA}, Cot: vecC},
		// Shared leaf: y = relu(x⊙w) − w, with w read twice and a relu
		// kink where x⊙w = 0.
		{Name: "dag_shared_leaf", Convention: reluConvention,
			EngineExact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
				a, err := s.Apply("mul", nil, xs[0], xs[1])
				if err != nil {
					return a, err
				}
				r, err := reluGE(s, a)
				if err != nil {
					return r, err
				}
				return s.Apply("sub", nil, r, xs[1])
			},
			Exact: func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error) {
				a, err := s.Apply("mul", nil, xs[0], xs[1])
				if err != nil {
					return a, err
				}
				r, err := s.Apply("relu", nil, a)
				if err != nil {
					return r, err
				}
				return s.Apply("sub", nil, r, xs[1])
			},
			Build: func(xs []*G.Node) (*G.Node, error) {
				a, err := G.HadamardProd(xs[0], xs[1])
				if err != nil {
					return nil, err
				}
				r, err := G.Rectify(a)
				if err != nil {
					return nil, err
				}
				return G.Sub(r, xs[1])
			},
			Xs: []spec.Tensor[spec.Rat]{vecA, vecB}, Cot: vecC},
	}
	for i := range cs {
		if cs[i].Name == "" {
			panic(fmt.Sprint("unnamed case ", i))
		}
	}
	return cs
}
