package harness

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// bnd is the scalar the references and bounds are computed over (see the
// package doc, "The bound").
type bnd = fpbound.Err

// Reference is what tlcheck's rules say of one case: per output element
// and per gradient element an enclosure of the exact value with the
// a-priori bound on any modelled float evaluation, and the adjoint pair's
// exact side ⟨cot, J·v⟩ for the case's tangent.
type Reference struct {
	Y     []fpbound.Enclosure
	Grads [][]fpbound.Enclosure
	// JV encloses ⟨cot, J·v⟩ (the registry's JVP, forward mode) for the
	// case's tangents; its Bound is unused.
	JV fpbound.Enclosure
}

func toBnd(t spec.Tensor[spec.Rat]) spec.Tensor[bnd] {
	return spec.Convert(t, func(r spec.Rat) bnd { return bnd{}.FromRat(r.Big()) })
}

// NewReference computes the reference of graph g at the case's inputs,
// cotangent and tangents, over fpbound.Err: the registry's forward and VJP
// rules on a tape (reverse mode, the loss sum(mul(y, cot))), and its
// forward and JVP rules node by node (forward mode).
func NewReference(g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat]) (*Reference, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if len(xs) != g.Inputs {
		return nil, fmt.Errorf("%d inputs for a graph of %d", len(xs), g.Inputs)
	}
	var y spec.Tensor[bnd]
	var grads []spec.Tensor[bnd]
	var jv bnd
	und, err := fpbound.Evaluate(fpbound.Options{ULPs: ULPs}, func() error {
		var err error
		if y, grads, err = reverse(g, xs, cot); err != nil {
			return err
		}
		if tangents != nil {
			jv, err = forward(g, xs, cot, tangents)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	ref := &Reference{JV: fpbound.EncloseErr(jv, 0)}
	for _, v := range y.Data {
		ref.Y = append(ref.Y, fpbound.EncloseErr(v, und))
	}
	for _, gr := range grads {
		var es []fpbound.Enclosure
		for _, v := range gr.Data {
			es = append(es, fpbound.EncloseErr(v, und))
		}
		ref.Grads = append(ref.Grads, es)
	}
	return ref, nil
}

func reverse(g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat]) (spec.Tensor[bnd], []spec.Tensor[bnd], error) {
	s := tape.NewSession(spec.Default[bnd]())
	vals := make([]tape.Ref, 0, g.Inputs+len(g.Nodes))
	for i, x := range xs {
		r, err := s.Param(fmt.Sprintf("x%d", i), toBnd(x))
		if err != nil {
			return spec.Tensor[bnd]{}, nil, err
		}
		vals = append(vals, r)
	}
	for j, n := range g.Nodes {
		args := make([]tape.Ref, len(n.Args))
		for k, a := range n.Args {
			args[k] = vals[a]
		}
		r, err := s.Apply(n.Op, n.Attrs, args...)
		if err != nil {
			return spec.Tensor[bnd]{}, nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		vals = append(vals, r)
	}
	out := vals[len(vals)-1]
	y, err := s.Value(out)
	if err != nil {
		return y, nil, err
	}
	c, err := s.Input("cot", toBnd(cot))
	if err != nil {
		return y, nil, err
	}
	prod, err := s.Apply("mul", nil, out, c)
	if err != nil {
		return y, nil, fmt.Errorf("cotangent: %w", err)
	}
	loss, err := s.Apply("sum", nil, prod)
	if err != nil {
		return y, nil, err
	}
	gs, err := s.Backward(loss)
	if err != nil {
		return y, nil, err
	}
	grads := make([]spec.Tensor[bnd], g.Inputs)
	for i := range grads {
		var reached bool
		if grads[i], reached, err = s.Grad(gs, vals[i]); err != nil {
			return y, nil, err
		}
		if !reached {
			// An input the output does not depend on: its gradient is
			// exactly zero (not an empty tensor).
			grads[i] = toBnd(zerosLike(xs[i]))
		}
	}
	return y, grads, nil
}

// forward runs the registry's forward and JVP rules node by node and
// returns ⟨cot, J·v⟩.
func forward(g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat]) (bnd, error) {
	reg := spec.Default[bnd]()
	if len(tangents) != g.Inputs {
		return bnd{}, fmt.Errorf("%d tangents for %d inputs", len(tangents), g.Inputs)
	}
	vals := make([]spec.Tensor[bnd], 0, g.Inputs+len(g.Nodes))
	tans := make([]spec.Tensor[bnd], 0, g.Inputs+len(g.Nodes))
	for i, x := range xs {
		if !x.Shape.Equal(tangents[i].Shape) {
			return bnd{}, fmt.Errorf("tangent %d has shape %v, input %v", i, tangents[i].Shape, x.Shape)
		}
		vals, tans = append(vals, toBnd(x)), append(tans, toBnd(tangents[i]))
	}
	for j, n := range g.Nodes {
		p, err := reg.Lookup(n.Op)
		if err != nil {
			return bnd{}, err
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		ins, dins := make([]spec.Tensor[bnd], len(n.Args)), make([]spec.Tensor[bnd], len(n.Args))
		for k, arg := range n.Args {
			ins[k], dins[k] = vals[arg], tans[arg]
		}
		y, err := p.Forward(a, ins)
		if err != nil {
			return bnd{}, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		dy, err := p.JVP(a, ins, y, dins)
		if err != nil {
			return bnd{}, fmt.Errorf("node %d (%s): JVP: %w", j, n.Op, err)
		}
		vals, tans = append(vals, y), append(tans, dy)
	}
	return spec.Dot(toBnd(cot), tans[len(tans)-1])
}

// Verdict is the judgement of one obligation.
type Verdict string

// The verdicts. Only Fails is a finding.
const (
	// Holds: every value is within the bound of the exact one.
	Holds Verdict = "holds"
	// ByConvention: every value is within the bound of the exact value under
	// the engine's declared convention, and some differ from tlcheck's.
	ByConvention Verdict = "convention"
	// Fails: some value is farther than the bound from every point of the
	// exact enclosure: no modelled evaluation gives it (a finding).
	Fails Verdict = "fails"
	// Inconclusive: no finite bound, or an enclosure too wide to decide.
	Inconclusive Verdict = "inconclusive"
)

// judge decides v against (X, E) exactly: Fails iff v is NaN or ±∞ with a
// finite bound, or min over X of |v − x| > E; Holds iff max over X of
// |v − x| ≤ E; Inconclusive otherwise (E = +∞ included).
func judge(v float64, en fpbound.Enclosure) Verdict {
	if math.IsInf(en.Bound, 1) || math.IsNaN(en.Bound) {
		return Inconclusive
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Fails
	}
	r := new(big.Rat).SetFloat64(v)
	e := new(big.Rat).SetFloat64(en.Bound)
	if math.IsInf(en.Exact.Lo, 0) || math.IsInf(en.Exact.Hi, 0) {
		return Inconclusive
	}
	lo := new(big.Rat).SetFloat64(en.Exact.Lo)
	hi := new(big.Rat).SetFloat64(en.Exact.Hi)
	if new(big.Rat).Sub(lo, r).Cmp(e) > 0 || new(big.Rat).Sub(r, hi).Cmp(e) > 0 {
		return Fails
	}
	if new(big.Rat).Sub(r, lo).Cmp(e) <= 0 && new(big.Rat).Sub(hi, r).Cmp(e) <= 0 {
		return Holds
	}
	return Inconclusive
}

// worst combines verdicts: Fails over Inconclusive over Holds.
func worst(a, b Verdict) Verdict {
	rank := map[Verdict]int{Holds: 0, ByConvention: 1, Inconclusive: 2, Fails: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
