// Package gorgonia checks the reverse mode of gorgonia.org/gorgonia
// v0.9.18 against tlcheck's exact rules: for each case it builds the
// one-op (or small DAG) graph in float64, runs the engine's backward pass
// on both of its machines (the tape machine and the lisp machine) with a
// non-trivial cotangent c — the loss is Σ(y ⊙ c) — and compares every
// input gradient with tlcheck's exact VJP over spec.Rat.
//
// # The bound is 0, and why
//
// Every input and cotangent element is a multiple of 1/4 with magnitude
// at most 3 (numerator at most 12, 4 bits, over 2^2). Every op checked
// here computes its forward value and its gradient with +, −, ×,
// comparisons, sign and |·| only, and multiplies at most three such
// values per term (matmul's backward: c·w; the DAG x⊙x⊙w); sums have at
// most 64 terms. So every intermediate real value is k/2^6 with |k| ≤
// 64·12^3 < 2^17: a dyadic rational with at most 17 significant bits,
// exactly representable in binary64 (53 bits), whatever the order of the
// sums. Every binary64 operation on such values is therefore exact, and
// the engine's gradient must equal the exact VJP bit for bit: the
// computed rounding bound is 0, and any difference is a finding.
//
// # Ties
//
// tlcheck's conventions are relu′(0) = 0, abs′(0) = 0 and sign′ = 0.
// gorgonia documents none; where it differs at a kink the case reports the
// engine's value. A value that is no valid subgradient (outside [0, 1]
// for relu at 0, outside [−1, 1] for abs at 0) is a finding, not a
// convention.
package gorgonia

import (
	"fmt"
	"math/big"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// Case is one engine case: a tlcheck expression and the same graph in
// gorgonia, on exact inputs and an exact cotangent.
type Case struct {
	Name string
	// Exact records the same expression on tlcheck's exact tape (registry
	// rules over spec.Rat).
	Exact func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error)
	// Build is the same expression in gorgonia.
	Build func(xs []*G.Node) (*G.Node, error)
	// EngineExact, when set, is the expression under the engine's
	// declared tie convention (Convention), recorded with tlcheck's
	// primitives: the engine is held to it exactly, and its differences
	// from Exact are reported as convention notes, not findings.
	EngineExact func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error)
	Convention  string
	Xs          []spec.Tensor[spec.Rat]
	Cot         spec.Tensor[spec.Rat]
}

// Machine names a gorgonia VM.
type Machine string

// The machines.
const (
	Tape Machine = "tape"
	Lisp Machine = "lisp"
)

// Gradients runs the case on machine m and returns the gradient of
// Σ(y ⊙ c) with respect to each input, in float64, row-major.
func Gradients(c Case, m Machine) (grads [][]float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gorgonia panicked: %v", r)
		}
	}()
	g := G.NewGraph()
	nodes := make([]*G.Node, len(c.Xs))
	for i, x := range c.Xs {
		nodes[i] = G.NewTensor(g, tensor.Float64, len(x.Shape), G.WithName(fmt.Sprintf("x%d", i)),
			G.WithValue(tensor.New(tensor.WithShape(x.Shape...), tensor.WithBacking(floats(x)))))
	}
	y, err := c.Build(nodes)
	if err != nil {
		return nil, err
	}
	cot := G.NewTensor(g, tensor.Float64, len(c.Cot.Shape), G.WithName("cot"),
		G.WithValue(tensor.New(tensor.WithShape(c.Cot.Shape...), tensor.WithBacking(floats(c.Cot)))))
	prod, err := G.HadamardProd(y, cot)
	if err != nil {
		return nil, err
	}
	loss, err := G.Sum(prod)
	if err != nil {
		return nil, err
	}
	var vm G.VM
	switch m {
	case Tape:
		if _, err := G.Grad(loss, nodes...); err != nil {
			return nil, err
		}
		vm = G.NewTapeMachine(g)
	case Lisp:
		vm = G.NewLispMachine(g)
	default:
		return nil, fmt.Errorf("unknown machine %q", m)
	}
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return nil, err
	}
	for i, n := range nodes {
		gv, err := n.Grad()
		if err != nil {
			return nil, fmt.Errorf("input %d: %w", i, err)
		}
		t, ok := gv.(tensor.Tensor)
		if !ok {
			return nil, fmt.Errorf("input %d: gradient is %T, not a tensor", i, gv)
		}
		d, ok := t.Data().([]float64)
		if !ok {
			if f, ok1 := t.Data().(float64); ok1 {
				d = []float64{f}
			} else {
				return nil, fmt.Errorf("input %d: gradient data is %T", i, t.Data())
			}
		}
		grads = append(grads, append([]float64(nil), d...))
	}
	return grads, nil
}

func floats(t spec.Tensor[spec.Rat]) []float64 {
	out := make([]float64, len(t.Data))
	for i, v := range t.Data {
		out[i] = v.Float64() // exact: the values are small dyadics
	}
	return out
}

// ExactGradients is tlcheck's exact gradient of Σ(y ⊙ c): the case's
// expression recorded on an exact tape over spec.Rat, the loss
// sum(mul(y, c)) with c an input (no gradient), swept backwards with the
// registry's VJP rules.
func ExactGradients(c Case) ([]spec.Tensor[spec.Rat], error) { return exactWith(c, c.Exact) }

func exactWith(c Case, expr func(s *tape.Session[spec.Rat], xs []tape.Ref) (tape.Ref, error)) ([]spec.Tensor[spec.Rat], error) {
	s := tape.NewSession(spec.Default[spec.Rat]())
	refs := make([]tape.Ref, len(c.Xs))
	for i, x := range c.Xs {
		r, err := s.Param(fmt.Sprintf("x%d", i), x)
		if err != nil {
			return nil, err
		}
		refs[i] = r
	}
	y, err := expr(s, refs)
	if err != nil {
		return nil, err
	}
	cot, err := s.Input("cot", c.Cot)
	if err != nil {
		return nil, err
	}
	prod, err := s.Apply("mul", nil, y, cot)
	if err != nil {
		return nil, err
	}
	loss, err := s.Apply("sum", nil, prod)
	if err != nil {
		return nil, err
	}
	gs, err := s.Backward(loss)
	if err != nil {
		return nil, err
	}
	out := make([]spec.Tensor[spec.Rat], len(refs))
	for i, r := range refs {
		g, _, err := s.Grad(gs, r)
		if err != nil {
			return nil, err
		}
		out[i] = g
	}
	return out, nil
}

// Finding is one disagreement between the engine and the exact VJP.
type Finding struct {
	Case    string
	Machine Machine
	Input   int
	Element int
	Engine  float64
	Exact   *big.Rat
}

func (f Finding) String() string {
	return fmt.Sprintf("%s (%s machine): ∂/∂x%d[%d] = %v, exact %s", f.Case, f.Machine, f.Input, f.Element, f.Engine, f.Exact.RatString())
}

// Result is what one case found.
type Result struct {
	// Findings are the elements where a machine's gradient differs from
	// the exact gradient under the engine's declared convention (or
	// tlcheck's where the engine declares none): the bound is 0, so each
	// is a bug.
	Findings []Finding
	// Notes are the elements where the engine's declared convention gives
	// another (valid) gradient than tlcheck's conventions.
	Notes []Finding
}

// Check runs the case on both machines against the exact gradient (the
// bound is 0, see the package doc).
func Check(c Case) (*Result, error) {
	ref, err := ExactGradients(c)
	if err != nil {
		return nil, fmt.Errorf("%s: exact: %w", c.Name, err)
	}
	want := ref
	if c.EngineExact != nil {
		if want, err = exactWith(c, c.EngineExact); err != nil {
			return nil, fmt.Errorf("%s: exact under %s: %w", c.Name, c.Convention, err)
		}
	}
	res := &Result{}
	for _, m := range []Machine{Tape, Lisp} {
		got, err := Gradients(c, m)
		if err != nil {
			return nil, fmt.Errorf("%s (%s machine): %w", c.Name, m, err)
		}
		for i := range want {
			if len(got[i]) != len(want[i].Data) {
				return nil, fmt.Errorf("%s (%s machine): input %d: %d gradient values for %d elements", c.Name, m, i, len(got[i]), len(want[i].Data))
			}
			for k, w := range want[i].Data {
				e, err := spec.RatFromFloat64(got[i][k])
				f := Finding{Case: c.Name, Machine: m, Input: i, Element: k, Engine: got[i][k], Exact: w.Big()}
				switch {
				case err != nil || !e.Same(w):
					res.Findings = append(res.Findings, f)
				case !w.Same(ref[i].Data[k]):
					f.Exact = ref[i].Data[k].Big()
					res.Notes = append(res.Notes, f)
				}
			}
		}
	}
	return res, nil
}
