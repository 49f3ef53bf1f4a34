package ranges

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Range rule names, as traces, certificates and errors spell them. Every
// tag with a registry primitive and no hand-written rule has the rule
// RuleRegistryPrefix + tag ("registry:relu", "registry:matmul", …): the
// registry's forward rule evaluated over Interval32 (ruleRegistry).
const (
	RuleRegistryPrefix = "registry:"
	RuleSource         = "source"
	// RuleSelfDifference is a sub node whose two parents are one node.
	RuleSelfDifference = "selfDifference"
	// RuleSquare is a mul_elem node whose two parents are one node.
	RuleSquare        = "square"
	RuleMSELeft       = "mseLeft"
	RuleSoftmaxUnit   = "softmaxUnit"
	RuleLayerNormLeft = "layerNormLeft"
)

// RuleInfo describes how one IR tag is enclosed.
type RuleInfo struct {
	// Tag is the IR tag and Rule the range rule that encloses it.
	Tag  irsem.Op
	Rule string
	// FixedLeft reports that the rule follows a reduction's fixed left
	// fold, so that it is applied only when the node's selected capsule
	// promises reduction policy fixed-left.
	FixedLeft bool
	// Doc is a one-line description of the rule.
	Doc string
}

// ruleFunc computes a node's enclosures from its parents'.
type ruleFunc func(c *nodeCtx) ([]Interval32, error)

type ruleSpec struct {
	RuleInfo
	fn ruleFunc
}

// nodeCtx is what a rule sees: the graph, the node, its payload entry and
// its parents' enclosures (in parent order), and the input box for the
// source rule.
type nodeCtx struct {
	g   *irsem.Graph
	n   *irsem.Node
	e   *irsem.Params
	in  [][]Interval32
	box *Interval32Tensor
	app *irsem.Application // the node's registry steps, with the payload (irsem.Applications)
	// rule is the rule applied, set from the tag's before the call; a
	// rule that refines itself per node (ruleSub, ruleMul) renames it.
	rule string
}

// parentShape is the declared shape of parent i.
func (c *nodeCtx) parentShape(i int) spec.Shape {
	return shapeOrScalar(c.g.Nodes[c.n.Parents[i]].Shape)
}

func shapeOrScalar(s spec.Shape) spec.Shape {
	if s == nil {
		return spec.Shape{}
	}
	return s
}

// handWritten are the tags whose range rule is not (only) the registry's
// forward rule over Interval32, each because it adds knowledge that the
// registry rule evaluated operation by operation cannot have:
//
//   - input, const, rand_uniform are sources: the box, and the payload
//     values and the seed's draws enclosed as exact rationals;
//   - sub and mul_elem with one parent twice: a value minus itself is 0
//     and a value times itself is ≥ 0, in binary32 as over the reals,
//     while an interval operation cannot know its two operands are one
//     value (x − x over [−1, 1] would be [−2, 2], x·x would be [−1, 1]);
//     with two different parents these tags take the registry rule;
//   - mse_loss and layernorm square differences (≥ 0) for the same
//     reason, and layernorm checks σ²+ε ≥ 0 before its square root;
//   - softmax: every output lies in [0, 1], which the registry's
//     max-shifted exp/sum/div over intervals would not find (the lane
//     maximum and the exponent are not independent values).
//
// FixedLeft is stated here for them; for the registry rules it is
// backend.Accumulates of the tag's primitive.
var handWritten = map[irsem.Op]ruleSpec{
	irsem.OpInput:       {RuleInfo{irsem.OpInput, RuleSource, false, "the input box, element by element"}, ruleInput},
	irsem.OpConst:       {RuleInfo{irsem.OpConst, RuleSource, false, "each payload value v as [RD32(v), RU32(v)] (a point when v is a binary32 number)"}, ruleConst},
	irsem.OpRandUniform: {RuleInfo{irsem.OpRandUniform, RuleSource, false, "each draw k/2^32 of the seed's stream as [RD32, RU32]"}, ruleRand},
	irsem.OpSub: {RuleInfo{irsem.OpSub, RuleRegistryPrefix + string(irsem.OpSub), false,
		"the registry's sub over Interval32; a parent minus itself is selfDifference: [0, 0]"}, ruleSub},
	irsem.OpMulElem: {RuleInfo{irsem.OpMulElem, RuleRegistryPrefix + string(irsem.OpMulElem), false,
		"the registry's mul over Interval32; a parent times itself is square: [min|a|², max|a|²] rounded outward, ≥ 0"}, ruleMul},
	irsem.OpSoftmax:   {RuleInfo{irsem.OpSoftmax, RuleSoftmaxUnit, true, "every output in [0, 1]"}, ruleSoftmax},
	irsem.OpLayerNorm: {RuleInfo{irsem.OpLayerNorm, RuleLayerNormLeft, true, "the registry's layer_norm replayed: μ, σ² left folds (squares ≥ 0), 1/sqrt(σ²+ε) with σ²+ε ≥ 0 checked, (x−μ)·inv·γ+β"}, ruleLayerNorm},
	irsem.OpMSELoss:   {RuleInfo{irsem.OpMSELoss, RuleMSELeft, true, "acc=0; acc += (a−b)² (a square, ≥ 0) in order, each step rounded outward; then ÷ [RD32(N), RU32(N)]"}, ruleMSE},
}

// buildRules builds the rule table, in §4 tag order: the hand-written rules, and
// the registry rule for every other tag with a registry primitive. Tags
// without either (irsem's own IR-only tags) are unsupported: a trace
// fails at them rather than widen to [−inf, inf].
func buildRules() []ruleSpec {
	var out []ruleSpec
	for _, info := range irsem.Ops() {
		if r, ok := handWritten[info.Op]; ok {
			out = append(out, r)
			continue
		}
		if info.Prim == "" {
			continue
		}
		doc := "the registry's " + info.Prim + " forward rule (irsem's application of the tag) evaluated over Interval32"
		fn := ruleFunc(ruleRegistry)
		if b, ok := knownRange[info.Op]; ok {
			doc += fmt.Sprintf(", cut to %s", b)
			fn = cutTo(b)
		}
		out = append(out, ruleSpec{RuleInfo{info.Op, RuleRegistryPrefix + string(info.Op), backend.Accumulates(info.Prim), doc}, fn})
	}
	return out
}

// knownRange bounds the values of a tag whose registry rule is evaluated
// over Interval32 but whose result interval operations cannot tighten to
// its known range (added knowledge, like handWritten):
//
//   - sigmoid ∈ [0, 1]: the registry computes e^x/(1+e^x) for x < 0 and
//     1/(1+e^−x) otherwise, so the exponent is ≤ 0 and, in binary32 as
//     over the reals, e ∈ [0, 1] (the trusted exp rounded to nearest is
//     monotone and exp(0) = 1), 1 ⊕ e ≥ max(1, e), and both quotients
//     round into [0, 1]; the real sigmoid lies in (0, 1). Interval
//     operations widen e^x near x = 0 past 1 by an ulp and lose this.
var knownRange = map[irsem.Op]Interval32{
	irsem.OpSigmoid: unit32,
}

// cutTo is the registry rule intersected with the known range b.
func cutTo(b Interval32) ruleFunc {
	return func(c *nodeCtx) ([]Interval32, error) {
		v, err := ruleRegistry(c)
		if err != nil {
			return nil, err
		}
		for i := range v {
			if v[i], err = Intersect(v[i], b); err != nil {
				return nil, atElem(i, err)
			}
		}
		return v, nil
	}
}

// ruleTable is the rule table and its index by tag, built for one
// generation of the registry (spec.Generation): a primitive registered
// with spec.RegisterElementwise gets its registry range rule without any
// code here.
type ruleTable struct {
	gen   uint64
	list  []ruleSpec
	index map[irsem.Op]*ruleSpec
}

var ruleCache atomic.Pointer[ruleTable]

// table returns the rule table of the current registry generation.
func table() *ruleTable {
	g := spec.Generation()
	if t := ruleCache.Load(); t != nil && t.gen == g {
		return t
	}
	t := &ruleTable{gen: g, list: buildRules()}
	t.index = make(map[irsem.Op]*ruleSpec, len(t.list))
	for i := range t.list {
		t.index[t.list[i].Tag] = &t.list[i]
	}
	ruleCache.Store(t)
	return t
}

// Rules lists the range rule of every supported tag, in §4 tag order.
func Rules() []RuleInfo {
	rs := table().list
	out := make([]RuleInfo, len(rs))
	for i := range rs {
		out[i] = rs[i].RuleInfo
	}
	return out
}

// RuleFor returns the range rule of tag, and false when the tag is
// unsupported (a trace through it fails).
func RuleFor(tag irsem.Op) (RuleInfo, bool) {
	r, ok := table().index[tag]
	if !ok {
		return RuleInfo{}, false
	}
	return r.RuleInfo, true
}

// ---- sources ----

func ruleInput(c *nodeCtx) ([]Interval32, error) {
	b := c.box
	want := shapeOrScalar(c.n.Shape)
	if b == nil {
		return nil, fmt.Errorf("no input box")
	}
	if !shapeOrScalar(b.Shape).Equal(want) || len(b.Data) != want.Size() {
		return nil, fmt.Errorf("input box has shape %v with %d elements, expected %v", b.Shape, len(b.Data), want)
	}
	out := make([]Interval32, len(b.Data))
	for i, x := range b.Data {
		if err := x.Valid(); err != nil {
			return nil, atElem(i, fmt.Errorf("input box: %w", err))
		}
		out[i] = x.canon()
	}
	return out, nil
}

func ruleConst(c *nodeCtx) ([]Interval32, error) {
	if c.e == nil || c.e.Value == nil {
		return nil, fmt.Errorf("missing const payload")
	}
	vs := c.e.Value.Data
	if len(vs) != shapeOrScalar(c.n.Shape).Size() {
		return nil, fmt.Errorf("const payload has %d values for shape %v", len(vs), c.n.Shape)
	}
	out := make([]Interval32, len(vs))
	for i, v := range vs {
		x, err := EncloseRat(v.Big())
		if err != nil {
			return nil, atElem(i, err)
		}
		out[i] = x
	}
	return out, nil
}

func ruleRand(c *nodeCtx) ([]Interval32, error) {
	n := shapeOrScalar(c.n.Shape).Size()
	out := make([]Interval32, n)
	for i := range out {
		x, err := EncloseRat(spec.UniformRat(c.n.Kind.Seed, i))
		if err != nil {
			return nil, atElem(i, err)
		}
		out[i] = x
	}
	return out, nil
}

// ---- the registry rule ----

// ruleRegistry runs the node's registry application (irsem.Applications:
// the tag's primitive, or its short sequence of primitives, with the
// payload's parameters) step by step over Interval32 as spec.Scalar
// (scalar32), reading parameters and constants with FromRat (EncloseRat).
// The binary32 execution the checker replays (irsem.DenoteAll over
// spec.Binary32) performs the same registry rules' scalar operations on
// binary32 values, so by induction over those operations every binary32
// value, and every exact real value, lies in the enclosure of its
// operation (see scalar32 and enclosePaths for comparisons).
//
// An elementwise step (its primitive has a spec.Prim.Unary or Binary
// rule) is evaluated element by element, so that branch outcomes
// multiply only within one element; a unary one whose comparisons were
// undecided over the whole operand is evaluated again on the binary32
// points below 0, at 0 and above 0 separately, and joined, which is how
// the sign-split sigmoid and softplus keep each branch on its own side
// (every binary32 point of the operand lies in one of the three parts).
// Any other step runs the primitive's Forward on the whole tensors.
func ruleRegistry(c *nodeCtx) ([]Interval32, error) {
	a := c.app
	if a == nil || a.Source || a.IROnly || len(a.Steps) == 0 {
		return nil, fmt.Errorf("internal error: %s has no registry application", c.n.Kind.Op)
	}
	parents := make([]spec.Tensor[scalar32], len(c.in))
	for p := range c.in {
		s := c.parentShape(p)
		if len(c.in[p]) != s.Size() {
			return nil, fmt.Errorf("parent %d has %d enclosures for shape %v", p, len(c.in[p]), s)
		}
		parents[p] = spec.Tensor[scalar32]{Shape: s.Clone(), Data: lift(c.in[p], nil)}
	}
	reg := spec.Default[scalar32]()
	steps := make([]spec.Tensor[scalar32], 0, len(a.Steps))
	for k := range a.Steps {
		st := &a.Steps[k]
		xs := make([]spec.Tensor[scalar32], len(st.Args))
		for j, arg := range st.Args {
			v, err := irsem.ArgValue(a, k, arg, parents, steps)
			if err != nil {
				return nil, err
			}
			xs[j] = v
		}
		y, err := registryStep(reg, st, xs)
		if err == nil && (!y.Shape.Equal(st.Shape) || len(y.Data) != st.Shape.Size()) {
			err = fmt.Errorf("produced shape %v with %d values, expected %v", y.Shape, len(y.Data), st.Shape)
		}
		if err != nil {
			if len(a.Steps) > 1 {
				var ee *elemError
				if errors.As(err, &ee) {
					return nil, atElem(ee.elem, fmt.Errorf("step %d (%s): %w", k, st.Prim, ee.err))
				}
				return nil, fmt.Errorf("step %d (%s): %w", k, st.Prim, err)
			}
			return nil, err
		}
		steps = append(steps, y)
	}
	last := steps[len(steps)-1].Data
	out := make([]Interval32, len(last))
	for i, v := range last {
		out[i] = v.iv
	}
	return out, nil
}

// registryStep evaluates one registry step over scalar32 (see
// ruleRegistry); the values it returns carry no brancher or failure.
func registryStep(reg *spec.Registry[scalar32], st *irsem.Step, xs []spec.Tensor[scalar32]) (spec.Tensor[scalar32], error) {
	prim, err := reg.Lookup(st.Prim)
	if err != nil {
		return spec.Tensor[scalar32]{}, err
	}
	attrs := st.Attrs
	if attrs == nil {
		attrs = &spec.Attrs{}
	}
	in := make([]spec.Shape, len(xs))
	for i, x := range xs {
		if len(x.Data) != x.Shape.Size() {
			return spec.Tensor[scalar32]{}, fmt.Errorf("argument %d has %d values for shape %v", i, len(x.Data), x.Shape)
		}
		in[i] = x.Shape
	}
	shape, err := prim.InferShape(attrs, in)
	if err != nil {
		return spec.Tensor[scalar32]{}, err
	}
	out := spec.Tensor[scalar32]{Shape: shape}
	switch {
	case prim.Unary != nil:
		out.Data = make([]scalar32, len(xs[0].Data))
		for i, x := range xs[0].Data {
			v, err := encloseUnary(prim.Unary, attrs, x.iv)
			if err != nil {
				return spec.Tensor[scalar32]{}, atElem(i, err)
			}
			out.Data[i] = scalar32{iv: v}
		}
	case prim.Binary != nil:
		out.Data = make([]scalar32, len(xs[0].Data))
		for i := range xs[0].Data {
			a, b := xs[0].Data[i].iv, xs[1].Data[i].iv
			v, _, err := enclosePaths(func(br *brancher) ([]scalar32, error) {
				y, err := prim.Binary.F(scalar32{iv: a, br: br}, scalar32{iv: b, br: br})
				return []scalar32{y}, err
			})
			if err != nil {
				return spec.Tensor[scalar32]{}, atElem(i, plain(err))
			}
			out.Data[i] = scalar32{iv: v[0]}
		}
	default:
		vs, _, err := enclosePaths(func(br *brancher) ([]scalar32, error) {
			args := make([]spec.Tensor[scalar32], len(xs))
			for j, x := range xs {
				args[j] = spec.Tensor[scalar32]{Shape: x.Shape, Data: make([]scalar32, len(x.Data))}
				for i, v := range x.Data {
					args[j].Data[i] = scalar32{iv: v.iv, br: br}
				}
			}
			y, err := prim.Forward(attrs, args)
			return y.Data, err
		})
		if err != nil {
			return spec.Tensor[scalar32]{}, err
		}
		out.Data = lift(vs, nil)
	}
	return out, nil
}

// encloseUnary encloses a unary elementwise registry rule r at x: over
// the whole of x when no comparison was undecided, else joined over the
// binary32 points of x below 0, at 0 and above 0 (see ruleRegistry).
func encloseUnary(r *spec.UnaryRule[scalar32], a *spec.Attrs, x Interval32) (Interval32, error) {
	run := func(p Interval32) ([]Interval32, bool, error) {
		return enclosePaths(func(br *brancher) ([]scalar32, error) {
			v, err := r.F(a, scalar32{iv: p, br: br})
			return []scalar32{v}, err
		})
	}
	v, branched, err := run(x)
	pieces := signPieces(x)
	if !branched || len(pieces) == 1 {
		if err != nil {
			return Interval32{}, plain(err)
		}
		return v[0], nil
	}
	var h Interval32
	for k, p := range pieces {
		v, _, err := run(p)
		if err != nil {
			return Interval32{}, fmt.Errorf("on %s: %w", p, plain(err))
		}
		if k == 0 {
			h = v[0]
		} else if h, err = Hull(h, v[0]); err != nil {
			return Interval32{}, err
		}
	}
	return h, nil
}

// signPieces splits x into the enclosures of its binary32 points below 0,
// at 0 and above 0 (the ones that are not empty). Every binary32 number
// below 0 is at most −2^−149 and every one above 0 at least 2^−149.
func signPieces(x Interval32) []Interval32 {
	const tiny = math.SmallestNonzeroFloat32
	var out []Interval32
	if x.Lo < 0 {
		out = append(out, Interval32{Lo: x.Lo, Hi: min(x.Hi, -tiny)})
	}
	if x.Lo <= 0 && 0 <= x.Hi {
		out = append(out, Interval32{})
	}
	if x.Hi > 0 {
		out = append(out, Interval32{Lo: max(x.Lo, tiny), Hi: x.Hi})
	}
	return out
}

// plain drops the element index enclosePaths puts on a one-element
// evaluation's failure.
func plain(err error) error {
	var ee *elemError
	if errors.As(err, &ee) && ee.elem == 0 {
		return ee.err
	}
	return err
}

// ---- hand-written refinements ----

// ruleMul is the registry's mul, except that when both parents are the
// same node each product is one binary32 value times itself, enclosed by
// Square (≥ 0).
func ruleMul(c *nodeCtx) ([]Interval32, error) {
	if c.n.Parents[0] != c.n.Parents[1] {
		return ruleRegistry(c)
	}
	c.rule = RuleSquare
	a := c.in[0]
	out := make([]Interval32, len(a))
	for i := range a {
		r, err := a[i].Square()
		if err != nil {
			return nil, atElem(i, err)
		}
		out[i] = r
	}
	return out, nil
}

// ruleSub is the registry's sub, except that when both parents are the
// same node each difference is one finite binary32 value minus itself,
// which is exactly +0 in binary32 and 0 over the reals.
func ruleSub(c *nodeCtx) ([]Interval32, error) {
	if c.n.Parents[0] != c.n.Parents[1] {
		return ruleRegistry(c)
	}
	c.rule = RuleSelfDifference
	out := make([]Interval32, len(c.in[0]))
	for i, x := range c.in[0] {
		if err := x.Valid(); err != nil {
			return nil, atElem(i, err)
		}
	}
	return out, nil
}

var (
	one32  = Interval32{Lo: 1, Hi: 1}
	unit32 = Interval32{Lo: 0, Hi: 1}
)

// ---- hand-written reductions (fixed left folds) ----

// foldAdd is acc + v, the step of a left fold.
func foldAdd(acc, v Interval32) (Interval32, error) { return acc.Add(v) }

func ruleMSE(c *nodeCtx) ([]Interval32, error) {
	a, b := c.in[0], c.in[1]
	if len(a) != len(b) {
		return nil, fmt.Errorf("parents have %d and %d elements", len(a), len(b))
	}
	var acc Interval32
	for i := range a {
		d, err := a[i].Sub(b[i])
		if err == nil {
			d, err = d.Square()
		}
		if err == nil {
			acc, err = foldAdd(acc, d)
		}
		if err != nil {
			return nil, fmt.Errorf("squared difference through element %d: %w", i, err)
		}
	}
	n := max(len(a), 1)
	nv, err := EncloseInt(int64(n))
	if err != nil {
		return nil, err
	}
	q, err := acc.Div(nv)
	if err != nil {
		return nil, err
	}
	return []Interval32{q}, nil
}

func encloseAll(vs []spec.Rat) ([]Interval32, error) {
	out := make([]Interval32, len(vs))
	for i, v := range vs {
		x, err := EncloseRat(v.Big())
		if err != nil {
			return nil, fmt.Errorf("value %d (%s): %w", i, v, err)
		}
		out[i] = x
	}
	return out, nil
}

// ruleSoftmax bounds every output by [0, 1]. The registry's softmax
// computes e_j = exp(x_j − m) with m the lane maximum (so x_j − m ≤ 0 and
// e_j ∈ [0, 1], with e = 1 at the maximum), s = Σ e_j as a left fold of
// non-negative terms (so s ≥ e_j and s ≥ 1) and y_j = e_j / s: every
// binary32 result rounds into [0, 1], and so does every real softmax.
func ruleSoftmax(c *nodeCtx) ([]Interval32, error) {
	s := c.parentShape(0)
	if _, err := spec.NormAxis(c.n.Kind.Axis, len(s)); err != nil {
		return nil, err
	}
	out := make([]Interval32, len(c.in[0]))
	for i, x := range c.in[0] {
		if err := x.Valid(); err != nil {
			return nil, atElem(i, err)
		}
		out[i] = unit32
	}
	return out, nil
}

// ruleLayerNorm replays the registry's layer_norm on irsem's [outer, inner]
// view (inner = the size of the axes from Axis on), step by step:
// n = FromInt(inner); μ = (Σ x)/n; σ² = (Σ (x−μ)²)/n; inv = 1/sqrt(σ²+ε);
// y = (x−μ)·inv·γ + β with γ = 1 and β = +0 when the payload has none.
func ruleLayerNorm(c *nodeCtx) ([]Interval32, error) {
	s := c.parentShape(0)
	ax := c.n.Kind.Axis
	if ax < 0 || ax > len(s) {
		return nil, fmt.Errorf("axis %d out of range for rank %d", ax, len(s))
	}
	outer, inner := s[:ax].Size(), s[ax:].Size()
	e := c.e
	if e == nil {
		e = &irsem.Params{}
	}
	epsRat := irsem.DefaultEps()
	if e.Eps != nil {
		epsRat = *e.Eps
	}
	eps, err := EncloseRat(epsRat.Big())
	if err != nil {
		return nil, fmt.Errorf("eps: %w", err)
	}
	gamma, beta := make([]Interval32, inner), make([]Interval32, inner)
	for j := range gamma {
		gamma[j] = one32
	}
	if e.Gamma != nil {
		if gamma, err = encloseAll(e.Gamma.Data); err != nil {
			return nil, fmt.Errorf("payload gamma: %w", err)
		}
	}
	if e.Beta != nil {
		if beta, err = encloseAll(e.Beta.Data); err != nil {
			return nil, fmt.Errorf("payload beta: %w", err)
		}
	}
	if len(gamma) != inner || len(beta) != inner {
		return nil, fmt.Errorf("gamma/beta have %d/%d values, expected %d", len(gamma), len(beta), inner)
	}
	x := c.in[0]
	if len(x) != outer*inner {
		return nil, fmt.Errorf("input has %d elements, expected %d", len(x), outer*inner)
	}
	y := make([]Interval32, len(x))
	if inner == 0 {
		return y, nil
	}
	nv, err := EncloseInt(int64(inner))
	if err != nil {
		return nil, err
	}
	for r := 0; r < outer; r++ {
		row := x[r*inner : (r+1)*inner]
		if err := layerNormRow(row, nv, eps, gamma, beta, y[r*inner:(r+1)*inner]); err != nil {
			return nil, fmt.Errorf("row %d: %w", r, err)
		}
	}
	return y, nil
}

func layerNormRow(x []Interval32, n, eps Interval32, gamma, beta, y []Interval32) error {
	var s Interval32
	var err error
	for _, v := range x {
		if s, err = foldAdd(s, v); err != nil {
			return fmt.Errorf("sum: %w", err)
		}
	}
	mu, err := s.Div(n)
	if err != nil {
		return fmt.Errorf("mean: %w", err)
	}
	var v Interval32
	d := make([]Interval32, len(x))
	for j := range x {
		if d[j], err = x[j].Sub(mu); err != nil {
			return fmt.Errorf("x−μ: %w", err)
		}
		sq, err := d[j].Square()
		if err == nil {
			v, err = foldAdd(v, sq)
		}
		if err != nil {
			return fmt.Errorf("variance sum: %w", err)
		}
	}
	if v, err = v.Div(n); err != nil {
		return fmt.Errorf("variance: %w", err)
	}
	ve, err := v.Add(eps)
	if err != nil {
		return fmt.Errorf("σ²+ε: %w", err)
	}
	// The registry takes the square root of σ²+ε without clipping: a
	// possibly negative operand (a negative ε) would be NaN in binary32.
	if ve.Lo < 0 {
		return fmt.Errorf("σ²+ε enclosure %s reaches below 0", ve)
	}
	sd, err := ve.Sqrt()
	if err != nil {
		return fmt.Errorf("sqrt(σ²+ε): %w", err)
	}
	inv, err := one32.Div(sd)
	if err != nil {
		return fmt.Errorf("1/sqrt(σ²+ε): %w", err)
	}
	for j := range x {
		xh, err := d[j].Mul(inv)
		if err == nil {
			xh, err = xh.Mul(gamma[j])
		}
		if err == nil {
			xh, err = xh.Add(beta[j])
		}
		if err != nil {
			return fmt.Errorf("output %d: %w", j, err)
		}
		y[j] = xh
	}
	return nil
}
