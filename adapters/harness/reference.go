package harness

import (
	"fmt"
	"math"
	"math/big"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// Bound is one element's reference: the exact value's enclosure with
// two a-priori bounds on any modelled evaluation of the registry's
// formula (package doc, "The bound"): Tight for binary64 (fpbound.Err64)
// and Loose for binary32 (fpbound.Err), which also bounds binary64.
type Bound struct {
	Tight, Loose fpbound.Enclosure
	// TightBy and LooseBy name the bound that decided Tight and Loose
	// (DecidedClassic or DecidedFirstOrder; "" for the bounds no
	// first-order bound is computed for: gradients, tangents).
	TightBy, LooseBy string
	// f32 marks the bound of a float32 machine (Reference.Binary32):
	// Tight is then the binary32 bound and Loose F32Slack times it.
	f32 bool
}

// F32Slack is the factor between the two bounds a float32 machine is
// judged against (package doc, "Float32 machines"): within the binary32
// bound E32 of the registry's formula a value holds, and it fails only
// farther than F32Slack·E32 from the exact value.
const F32Slack = 1 << 10

// Reference is what tlcheck's rules say of one case: per output element
// and per gradient element a Bound, and the adjoint pair's exact side
// ⟨cot, J·v⟩ for the case's tangents.
type Reference struct {
	Y     []Bound
	Grads [][]Bound
	// JV encloses ⟨cot, J·v⟩ (the registry's JVP, forward mode) for the
	// case's tangents; its bounds are unused.
	JV Bound
	// JVs is J·v itself, per output element, with its bounds (nil
	// without tangents): what an engine's own JVP (JVPEngine) is judged
	// against.
	JVs []Bound
	// Sharp says why Y keeps the classic bounds (package doc, "The sharp
	// bound"); "" when fpbound's first-order bound was computed for it.
	Sharp string
}

// Binary32 returns the reference as a float32 machine is judged against
// it: the same exact enclosures, Tight the binary32 bound (fpbound.Err,
// a theorem for binary32 evaluations of the registry's formula) and Loose
// F32Slack times it.
func (r *Reference) Binary32() *Reference {
	if r == nil {
		return nil
	}
	conv := func(b Bound) Bound {
		l := b.Loose
		l.Bound *= F32Slack
		return Bound{Tight: b.Loose, Loose: l, f32: true, TightBy: b.LooseBy, LooseBy: b.LooseBy}
	}
	convAll := func(bs []Bound) []Bound {
		if bs == nil {
			return nil
		}
		out := make([]Bound, len(bs))
		for i, b := range bs {
			out[i] = conv(b)
		}
		return out
	}
	out := &Reference{Y: convAll(r.Y), JV: conv(r.JV), JVs: convAll(r.JVs), Sharp: r.Sharp}
	for _, g := range r.Grads {
		out.Grads = append(out.Grads, convAll(g))
	}
	return out
}

func toB[B spec.Scalar[B]](t spec.Tensor[spec.Rat]) spec.Tensor[B] {
	return spec.Convert(t, func(r spec.Rat) B { var z B; return z.FromRat(r.Big()) })
}

// evaluated is one format's evaluation of a case.
type evaluated struct {
	y, jv fpbound.Enclosure
	ys    []fpbound.Enclosure
	grads [][]fpbound.Enclosure
	jvs   []fpbound.Enclosure
}

func evaluate[B spec.Scalar[B]](g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat], enc func(B, int64) fpbound.Enclosure) (*evaluated, error) {
	var y spec.Tensor[B]
	var grads []spec.Tensor[B]
	var jv B
	var jvs spec.Tensor[B]
	und, err := fpbound.Evaluate(fpbound.Options{ULPs: ULPs}, func() error {
		var err error
		if y, grads, err = reverse[B](g, xs, cot); err != nil {
			return err
		}
		if tangents != nil {
			jv, jvs, err = forward[B](g, xs, cot, tangents)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	ev := &evaluated{jv: enc(jv, 0)}
	for _, v := range jvs.Data {
		ev.jvs = append(ev.jvs, enc(v, und))
	}
	for _, v := range y.Data {
		ev.ys = append(ev.ys, enc(v, und))
	}
	for _, gr := range grads {
		var es []fpbound.Enclosure
		for _, v := range gr.Data {
			es = append(es, enc(v, und))
		}
		ev.grads = append(ev.grads, es)
	}
	return ev, nil
}

// NewReference computes the reference of graph g at the case's inputs,
// cotangent and tangents, over fpbound.Err64 and fpbound.Err: the
// registry's forward and VJP rules on a tape (reverse mode, the loss
// sum(mul(y, cot))), and its forward and JVP rules node by node (forward
// mode).
//
// The forward bounds (Y) are the sharp ones: per element the least of the
// classic bound and fpbound's first-order bound (package doc, "The sharp
// bound"); the others are classic.
func NewReference(g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat]) (*Reference, error) {
	ref, err := classicReference(g, xs, cot, tangents)
	if err != nil {
		return nil, err
	}
	ref.sharpen(g, xs)
	return ref, nil
}

// classicReference is NewReference with the classic bounds alone.
func classicReference(g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat]) (*Reference, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if len(xs) != g.Inputs {
		return nil, fmt.Errorf("%d inputs for a graph of %d", len(xs), g.Inputs)
	}
	tight, err := evaluate(g, xs, cot, tangents, func(v fpbound.Err64, u int64) fpbound.Enclosure { return fpbound.EncloseErr(v, u) })
	if err != nil {
		return nil, err
	}
	loose, err := evaluate(g, xs, cot, tangents, func(v fpbound.Err, u int64) fpbound.Enclosure { return fpbound.EncloseErr(v, u) })
	if err != nil {
		return nil, err
	}
	ref := &Reference{JV: Bound{Tight: tight.jv, Loose: loose.jv}}
	for i := range tight.ys {
		ref.Y = append(ref.Y, Bound{Tight: tight.ys[i], Loose: loose.ys[i]})
	}
	for i := range tight.jvs {
		ref.JVs = append(ref.JVs, Bound{Tight: tight.jvs[i], Loose: loose.jvs[i]})
	}
	for i := range tight.grads {
		var bs []Bound
		for k := range tight.grads[i] {
			bs = append(bs, Bound{Tight: tight.grads[i][k], Loose: loose.grads[i][k]})
		}
		ref.Grads = append(ref.Grads, bs)
	}
	return ref, nil
}

func reverse[B spec.Scalar[B]](g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat]) (spec.Tensor[B], []spec.Tensor[B], error) {
	bs := make([]spec.Tensor[B], len(xs))
	for i, x := range xs {
		bs[i] = toB[B](x)
	}
	return tapeVJP(spec.Default[B](), g, bs, toB[B](cot))
}

// tapeVJP records g on a tape over reg at inputs xs and sweeps the loss
// sum(mul(y, cot)) backwards with reg's VJP rules: y and the gradient
// with respect to every input (exact zeros for an input the output does
// not depend on).
func tapeVJP[B spec.Scalar[B]](reg *spec.Registry[B], g Graph, xs []spec.Tensor[B], cot spec.Tensor[B]) (spec.Tensor[B], []spec.Tensor[B], error) {
	s := tape.NewSession(reg)
	vals := make([]tape.Ref, 0, g.Inputs+len(g.Nodes))
	for i, x := range xs {
		r, err := s.Param(fmt.Sprintf("x%d", i), x)
		if err != nil {
			return spec.Tensor[B]{}, nil, err
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
			return spec.Tensor[B]{}, nil, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		vals = append(vals, r)
	}
	out := vals[len(vals)-1]
	y, err := s.Value(out)
	if err != nil {
		return y, nil, err
	}
	c, err := s.Input("cot", cot)
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
	grads := make([]spec.Tensor[B], g.Inputs)
	for i := range grads {
		var reached bool
		if grads[i], reached, err = s.Grad(gs, vals[i]); err != nil {
			return y, nil, err
		}
		if !reached {
			// An input the output does not depend on: its gradient is
			// exactly zero (not an empty tensor).
			if grads[i], err = spec.Zeros[B](xs[i].Shape); err != nil {
				return y, nil, err
			}
		}
	}
	return y, grads, nil
}

// forward runs the registry's forward and JVP rules node by node and
// returns ⟨cot, J·v⟩ and J·v.
func forward[B spec.Scalar[B]](g Graph, xs []spec.Tensor[spec.Rat], cot spec.Tensor[spec.Rat], tangents []spec.Tensor[spec.Rat]) (B, spec.Tensor[B], error) {
	reg := spec.Default[B]()
	if len(tangents) != g.Inputs {
		return *new(B), spec.Tensor[B]{}, fmt.Errorf("%d tangents for %d inputs", len(tangents), g.Inputs)
	}
	vals := make([]spec.Tensor[B], 0, g.Inputs+len(g.Nodes))
	tans := make([]spec.Tensor[B], 0, g.Inputs+len(g.Nodes))
	for i, x := range xs {
		if !x.Shape.Equal(tangents[i].Shape) {
			return *new(B), spec.Tensor[B]{}, fmt.Errorf("tangent %d has shape %v, input %v", i, tangents[i].Shape, x.Shape)
		}
		vals, tans = append(vals, toB[B](x)), append(tans, toB[B](tangents[i]))
	}
	for j, n := range g.Nodes {
		p, err := reg.Lookup(n.Op)
		if err != nil {
			return *new(B), spec.Tensor[B]{}, err
		}
		a := n.Attrs
		if a == nil {
			a = &spec.Attrs{}
		}
		ins, dins := make([]spec.Tensor[B], len(n.Args)), make([]spec.Tensor[B], len(n.Args))
		for k, arg := range n.Args {
			ins[k], dins[k] = vals[arg], tans[arg]
		}
		y, err := p.Forward(a, ins)
		if err != nil {
			return *new(B), spec.Tensor[B]{}, fmt.Errorf("node %d (%s): %w", j, n.Op, err)
		}
		dy, err := p.JVP(a, ins, y, dins)
		if err != nil {
			return *new(B), spec.Tensor[B]{}, fmt.Errorf("node %d (%s): JVP: %w", j, n.Op, err)
		}
		vals, tans = append(vals, y), append(tans, dy)
	}
	jv := tans[len(tans)-1]
	d, err := spec.Dot(toB[B](cot), jv)
	return d, jv, err
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
	// Suspect: outside the binary64 bound of the registry's formula but
	// not outside the binary32 one: the engine's formula differs from the
	// registry's by more than binary64 rounding of the registry's formula
	// explains, or it has an error below binary32 resolution (a constant
	// rounded to six digits). Not a finding.
	Suspect Verdict = "suspect"
)

// judge decides v against both bounds: Holds within the binary64 bound
// (or the binary32 one), Fails outside the binary32 bound — so outside
// every binary32 and binary64 evaluation of the registry's formula, by
// more than 2²⁹ times its binary64 bound wherever that is finite —,
// Suspect outside the binary64 bound only, Inconclusive otherwise.
func judge(v float64, b Bound) Verdict {
	t := judge1(v, b.Tight)
	if t == Holds {
		return Holds
	}
	switch judge1(v, b.Loose) {
	case Fails:
		return Fails
	case Holds:
		if t == Fails {
			return Suspect
		}
		return Holds
	}
	if t == Fails {
		return Suspect
	}
	return Inconclusive
}

// judge1 decides v against (X, E) exactly: Fails iff v is NaN or ±∞ with a
// finite bound, or min over X of |v − x| > E; Holds iff max over X of
// |v − x| ≤ E; Inconclusive otherwise (E = +∞ included).
func judge1(v float64, en fpbound.Enclosure) Verdict {
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

// worst combines verdicts: Fails over Inconclusive over Suspect over
// ByConvention over Holds.
func worst(a, b Verdict) Verdict {
	rank := map[Verdict]int{Holds: 0, ByConvention: 1, Suspect: 2, Inconclusive: 3, Fails: 4}
	if rank[b] > rank[a] {
		return b
	}
	return a
}
