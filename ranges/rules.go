package ranges

import (
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Range rule names, as traces, certificates and errors spell them.
const (
	RuleSource          = "source"
	RuleAdd             = "add"
	RuleSub             = "sub"
	RuleMul             = "mul"
	RuleHull            = "hull"
	RuleAbs             = "abs"
	RuleRelu            = "relu"
	RuleSqrtNonnegative = "sqrtNonnegative"
	RuleInv             = "inv"
	RuleExp             = "expMonotone"
	RuleLog             = "logPositive"
	RuleTanh            = "signedUnitBound"
	RuleSigmoid         = "unitBound"
	RuleTrig            = "trig"
	RuleSumLeft         = "sumLeft"
	RuleMeanLeft        = "meanLeft"
	RuleMatmulLeft      = "matmulLeft"
	RuleLinearLeft      = "linearLeft"
	RuleMSELeft         = "mseLeft"
	RuleSoftmaxUnit     = "softmaxUnit"
	RuleLayerNormLeft   = "layerNormLeft"
	RuleRearrange       = "rearrange"
	RuleIdentity        = "identity"
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
	app *irsem.Application // the node's registry steps (irsem.PlanApplications)
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

// rules is the rule table, in §4 tag order. Tags not listed are
// unsupported: a trace fails at them rather than widen to [−inf, inf].
var rules = []ruleSpec{
	{RuleInfo{irsem.OpInput, RuleSource, false, "the input box, element by element"}, ruleInput},
	{RuleInfo{irsem.OpConst, RuleSource, false, "each payload value v as [RD32(v), RU32(v)] (a point when v is a binary32 number)"}, ruleConst},
	{RuleInfo{irsem.OpRandUniform, RuleSource, false, "each draw k/2^32 of the seed's stream as [RD32, RU32]"}, ruleRand},
	{RuleInfo{irsem.OpAdd, RuleAdd, false, "[a.lo+b.lo rounded down, a.hi+b.hi rounded up]"}, binary((Interval32).Add)},
	{RuleInfo{irsem.OpSub, RuleSub, false, "[a.lo−b.hi rounded down, a.hi−b.lo rounded up]; a parent minus itself is [0, 0]"}, ruleSub},
	{RuleInfo{irsem.OpMulElem, RuleMul, false, "four corner products rounded outward; a square (same parent twice) is ≥ 0"}, ruleMul},
	{RuleInfo{irsem.OpMaxElem, RuleHull, false, "[max(a.lo,b.lo), max(a.hi,b.hi)] (exact)"}, binary((Interval32).Max)},
	{RuleInfo{irsem.OpMinElem, RuleHull, false, "[min(a.lo,b.lo), min(a.hi,b.hi)] (exact)"}, binary((Interval32).Min)},
	{RuleInfo{irsem.OpAbs, RuleAbs, false, "split on sign (exact)"}, unary((Interval32).Abs)},
	{RuleInfo{irsem.OpSqrt, RuleSqrtNonnegative, false, "sqrt(max(x,0)) as the registry: [sqrtDown(max(lo,0)), sqrtUp(max(hi,0))]"}, unary((Interval32).Sqrt)},
	{RuleInfo{irsem.OpInv, RuleInv, false, "1/x by corners; fails when 0 is in the operand"}, unary((Interval32).Inv)},
	{RuleInfo{irsem.OpRelu, RuleRelu, false, "[max(lo,0), max(hi,0)] (exact)"}, unary((Interval32).Relu)},
	{RuleInfo{irsem.OpTanh, RuleTanh, false, "monotone tanh (trusted math library, widened) within [−1, 1]"}, unary((Interval32).Tanh)},
	{RuleInfo{irsem.OpSigmoid, RuleSigmoid, false, "the registry's sign-split forward replayed on each side of 0, within [0, 1]"}, unary(sigmoid32)},
	{RuleInfo{irsem.OpExp, RuleExp, false, "monotone exp (trusted math library, widened); fails beyond the binary32 range"}, unary((Interval32).Exp)},
	{RuleInfo{irsem.OpLog, RuleLog, false, "monotone log (trusted math library, widened); fails unless lo > 0"}, unary((Interval32).Log)},
	{RuleInfo{irsem.OpSin, RuleTrig, false, "sin by monotone pieces and extrema (trusted math library, widened) within [−1, 1]"}, unary((Interval32).Sin)},
	{RuleInfo{irsem.OpCos, RuleTrig, false, "cos by monotone pieces and extrema (trusted math library, widened) within [−1, 1]"}, unary((Interval32).Cos)},
	{RuleInfo{irsem.OpMatmul, RuleMatmulLeft, true, "per output: acc=0; acc += a[i,k]·b[k,j] for k in order, each step rounded outward"}, ruleMatmul},
	{RuleInfo{irsem.OpLinear, RuleLinearLeft, true, "per output: acc=0; acc += x[k]·W[j,k] for k in order; then acc + b[j], each step rounded outward"}, ruleLinear},
	{RuleInfo{irsem.OpReduceSum, RuleSumLeft, true, "per lane: left fold from 0 in index order, each step rounded outward"}, ruleReduce(false)},
	{RuleInfo{irsem.OpReduceMean, RuleMeanLeft, true, "per lane: left fold from 0, then × [RD32(1/n), RU32(1/n)]"}, ruleReduce(true)},
	{RuleInfo{irsem.OpSum, RuleSumLeft, true, "left fold from 0 over every element, each step rounded outward"}, ruleSum},
	{RuleInfo{irsem.OpSoftmax, RuleSoftmaxUnit, true, "every output in [0, 1]"}, ruleSoftmax},
	{RuleInfo{irsem.OpLayerNorm, RuleLayerNormLeft, true, "the registry's layer_norm replayed: μ, σ² left folds, 1/sqrt(σ²+ε), (x−μ)·inv·γ+β"}, ruleLayerNorm},
	{RuleInfo{irsem.OpPermute, RuleRearrange, false, "elements moved as the registry's permute moves them"}, ruleRearrange},
	{RuleInfo{irsem.OpTranspose, RuleRearrange, false, "elements moved as the registry's transpose moves them"}, ruleRearrange},
	{RuleInfo{irsem.OpBroadcastTo, RuleRearrange, false, "elements copied as the registry's broadcast_to copies them"}, ruleRearrange},
	{RuleInfo{irsem.OpReshape, RuleRearrange, false, "row-major elements unchanged"}, ruleIdentity},
	{RuleInfo{irsem.OpFlatten, RuleRearrange, false, "row-major elements unchanged"}, ruleIdentity},
	{RuleInfo{irsem.OpConcat, RuleRearrange, false, "elements joined as the registry's concat joins them"}, ruleRearrange},
	{RuleInfo{irsem.OpDetach, RuleIdentity, false, "the parent's enclosures"}, ruleIdentity},
	{RuleInfo{irsem.OpMSELoss, RuleMSELeft, true, "acc=0; acc += (a−b)² in order, each step rounded outward; then ÷ [RD32(N), RU32(N)]"}, ruleMSE},
}

var ruleIndex = func() map[irsem.Op]*ruleSpec {
	m := make(map[irsem.Op]*ruleSpec, len(rules))
	for i := range rules {
		m[rules[i].Tag] = &rules[i]
	}
	return m
}()

// Rules lists the range rule of every supported tag, in §4 tag order.
func Rules() []RuleInfo {
	out := make([]RuleInfo, len(rules))
	for i := range rules {
		out[i] = rules[i].RuleInfo
	}
	return out
}

// RuleFor returns the range rule of tag, and false when the tag is
// unsupported (a trace through it fails).
func RuleFor(tag irsem.Op) (RuleInfo, bool) {
	r, ok := ruleIndex[tag]
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

// ---- elementwise ----

func unary(f func(Interval32) (Interval32, error)) ruleFunc {
	return func(c *nodeCtx) ([]Interval32, error) {
		a := c.in[0]
		out := make([]Interval32, len(a))
		for i := range a {
			r, err := f(a[i])
			if err != nil {
				return nil, atElem(i, err)
			}
			out[i] = r
		}
		return out, nil
	}
}

func binary(f func(Interval32, Interval32) (Interval32, error)) ruleFunc {
	return func(c *nodeCtx) ([]Interval32, error) {
		a, b := c.in[0], c.in[1]
		if len(a) != len(b) {
			return nil, fmt.Errorf("parents have %d and %d elements", len(a), len(b))
		}
		out := make([]Interval32, len(a))
		for i := range a {
			r, err := f(a[i], b[i])
			if err != nil {
				return nil, atElem(i, err)
			}
			out[i] = r
		}
		return out, nil
	}
}

// ruleMul multiplies elementwise; when both parents are the same node,
// each product is one binary32 value times itself, enclosed by Square.
func ruleMul(c *nodeCtx) ([]Interval32, error) {
	if c.n.Parents[0] == c.n.Parents[1] {
		return unary((Interval32).Square)(c)
	}
	return binary((Interval32).Mul)(c)
}

// ruleSub subtracts elementwise; when both parents are the same node, each
// difference is one finite binary32 value minus itself, which is exactly
// +0 in binary32 and 0 over the reals.
func ruleSub(c *nodeCtx) ([]Interval32, error) {
	if c.n.Parents[0] == c.n.Parents[1] {
		return unary(func(x Interval32) (Interval32, error) {
			if err := x.Valid(); err != nil {
				return Interval32{}, err
			}
			return Interval32{}, nil
		})(c)
	}
	return binary((Interval32).Sub)(c)
}

var (
	one32  = Interval32{Lo: 1, Hi: 1}
	unit32 = Interval32{Lo: 0, Hi: 1}
)

// sigmoid32 replays the registry's sigmoid, which branches on the sign of
// x: e^x/(1+e^x) for x < 0 and 1/(1+e^−x) otherwise (−0 takes the second
// branch). Each branch is enclosed on its part of x, the results are
// joined, and the hull is cut to [0, 1], where both the real sigmoid and
// every binary32 result lie (for finite x, e ∈ [0, 1] in both branches,
// so 1 ⊕ e ≥ e and the quotients round into [0, 1]).
func sigmoid32(x Interval32) (Interval32, error) {
	if err := x.Valid(); err != nil {
		return Interval32{}, err
	}
	var parts []Interval32
	if x.Lo < 0 {
		neg := Interval32{Lo: x.Lo, Hi: min(x.Hi, 0)}.canon()
		e, err := neg.Exp()
		if err != nil {
			return Interval32{}, err
		}
		d, err := one32.Add(e)
		if err != nil {
			return Interval32{}, err
		}
		q, err := e.Div(d)
		if err != nil {
			return Interval32{}, err
		}
		parts = append(parts, q)
	}
	if x.Hi >= 0 {
		pos := Interval32{Lo: max(x.Lo, 0), Hi: x.Hi}.canon()
		m, err := pos.Neg()
		if err != nil {
			return Interval32{}, err
		}
		e, err := m.Exp()
		if err != nil {
			return Interval32{}, err
		}
		d, err := one32.Add(e)
		if err != nil {
			return Interval32{}, err
		}
		q, err := one32.Div(d)
		if err != nil {
			return Interval32{}, err
		}
		parts = append(parts, q)
	}
	h := parts[0]
	if len(parts) == 2 {
		var err error
		if h, err = Hull(h, parts[1]); err != nil {
			return Interval32{}, err
		}
	}
	return Intersect(h, unit32)
}

// ---- reductions (fixed left folds) ----

// foldAdd is acc + v, the step of a left fold.
func foldAdd(acc, v Interval32) (Interval32, error) { return acc.Add(v) }

func ruleSum(c *nodeCtx) ([]Interval32, error) {
	var acc Interval32
	for i, v := range c.in[0] {
		var err error
		if acc, err = foldAdd(acc, v); err != nil {
			return nil, fmt.Errorf("partial sum through element %d of the parent: %w", i, err)
		}
	}
	return []Interval32{acc}, nil
}

func ruleReduce(mean bool) ruleFunc {
	return func(c *nodeCtx) ([]Interval32, error) {
		s := c.parentShape(0)
		ax, err := spec.NormAxis(c.n.Kind.Axis, len(s))
		if err != nil {
			return nil, err
		}
		l := spec.LanesOf(s, ax)
		var scale Interval32
		if mean && l.N > 0 {
			if scale, err = EncloseRat(big.NewRat(1, int64(l.N))); err != nil {
				return nil, err
			}
		}
		x := c.in[0]
		out := make([]Interval32, l.Outer*l.Inner)
		for m := range out {
			b := l.Base(m)
			var acc Interval32
			for j := 0; j < l.N; j++ {
				if acc, err = foldAdd(acc, x[b+j*l.Inner]); err != nil {
					return nil, atElem(m, fmt.Errorf("partial sum through lane element %d: %w", j, err))
				}
			}
			if mean && l.N > 0 {
				if acc, err = acc.Mul(scale); err != nil {
					return nil, atElem(m, fmt.Errorf("mean scale: %w", err))
				}
			}
			out[m] = acc
		}
		return out, nil
	}
}

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

// ruleMatmul follows torch.matmul's promotion and batch broadcasting as the
// registry resolves them, with one left fold from 0 per output element.
func ruleMatmul(c *nodeCtx) ([]Interval32, error) {
	mp, err := spec.PlanMatmul(c.parentShape(0), c.parentShape(1))
	if err != nil {
		return nil, err
	}
	a, b := c.in[0], c.in[1]
	m, k, n := mp.M, mp.K, mp.N
	out := make([]Interval32, len(mp.AIndex)*m*n)
	for bt := range mp.AIndex {
		ao, bo, co := mp.AIndex[bt]*m*k, mp.BIndex[bt]*k*n, bt*m*n
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				var acc Interval32
				for kk := 0; kk < k; kk++ {
					p, err := a[ao+i*k+kk].Mul(b[bo+kk*n+j])
					if err == nil {
						acc, err = foldAdd(acc, p)
					}
					if err != nil {
						return nil, atElem(co+i*n+j, fmt.Errorf("partial sum through k=%d: %w", kk, err))
					}
				}
				out[co+i*n+j] = acc
			}
		}
	}
	return out, nil
}

// ruleLinear follows the registry's linear forward exactly: for every row r
// and output j, acc = +0; acc = acc + x[r,k]·W[j,k] for k = 0, 1, …; then
// acc + b[j] — each step rounded outward, as each binary32 step rounds.
func ruleLinear(c *nodeCtx) ([]Interval32, error) {
	if c.e == nil || c.e.W == nil || c.e.B == nil {
		return nil, fmt.Errorf("missing linear payload for node %d", c.n.ID)
	}
	ws, bs := c.e.W.Shape, c.e.B.Shape
	if len(ws) != 2 || len(bs) != 1 || bs[0] != ws[0] {
		return nil, fmt.Errorf("linear payload has W %v and b %v", ws, bs)
	}
	out, in := ws[0], ws[1]
	w, err := encloseAll(c.e.W.Data)
	if err != nil {
		return nil, fmt.Errorf("payload W: %w", err)
	}
	b, err := encloseAll(c.e.B.Data)
	if err != nil {
		return nil, fmt.Errorf("payload b: %w", err)
	}
	x := c.in[0]
	total := shapeOrScalar(c.n.Shape).Size()
	rows := 0
	switch {
	case in > 0:
		rows = len(x) / in
	case out > 0:
		rows = total / out
	}
	if rows*in != len(x) || rows*out != total {
		return nil, fmt.Errorf("input has %d elements, expected %d rows of %d", len(x), rows, in)
	}
	y := make([]Interval32, total)
	for r := 0; r < rows; r++ {
		for j := 0; j < out; j++ {
			var acc Interval32
			for k := 0; k < in; k++ {
				p, err := x[r*in+k].Mul(w[j*in+k])
				if err == nil {
					acc, err = foldAdd(acc, p)
				}
				if err != nil {
					return nil, atElem(r*out+j, fmt.Errorf("partial sum through k=%d: %w", k, err))
				}
			}
			if acc, err = acc.Add(b[j]); err != nil {
				return nil, atElem(r*out+j, fmt.Errorf("bias: %w", err))
			}
			y[r*out+j] = acc
		}
	}
	return y, nil
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

// ---- rearrangements ----

func ruleIdentity(c *nodeCtx) ([]Interval32, error) {
	a := c.in[0]
	if len(a) != shapeOrScalar(c.n.Shape).Size() {
		return nil, fmt.Errorf("parent has %d elements for shape %v", len(a), c.n.Shape)
	}
	return append([]Interval32(nil), a...), nil
}

// ruleRearrange moves enclosures exactly as the registry's primitive moves
// values: it runs the primitive, with the attributes irsem gives it
// (irsem.PlanApplications), over spec.F64 on index tensors (parent p's
// element i holds base_p + i, exactly representable) and reads back, for
// every output element, the parent element it came from. A rearrangement
// does no arithmetic, so each output value is one of the parent values and
// its enclosure is that value's enclosure.
func ruleRearrange(c *nodeCtx) ([]Interval32, error) {
	if c.app == nil || len(c.app.Steps) != 1 {
		return nil, fmt.Errorf("internal error: %s is not one registry step", c.n.Kind.Op)
	}
	st := &c.app.Steps[0]
	prim, err := spec.Default[spec.F64]().Lookup(st.Prim)
	if err != nil {
		return nil, err
	}
	a := st.Attrs.Clone()
	var flat []Interval32
	xs := make([]spec.Tensor[spec.F64], len(c.in))
	for p := range c.in {
		s := c.parentShape(p)
		if len(c.in[p]) != s.Size() {
			return nil, fmt.Errorf("parent %d has %d elements for shape %v", p, len(c.in[p]), s)
		}
		t := spec.Tensor[spec.F64]{Shape: s.Clone(), Data: make([]spec.F64, s.Size())}
		for i := range t.Data {
			t.Data[i] = spec.F64(len(flat) + i)
		}
		flat = append(flat, c.in[p]...)
		xs[p] = t
	}
	y, err := prim.Apply(a, xs)
	if err != nil {
		return nil, err
	}
	out := make([]Interval32, len(y.Data))
	for i, v := range y.Data {
		j := int(v)
		if spec.F64(j) != v || j < 0 || j >= len(flat) {
			return nil, atElem(i, fmt.Errorf("internal error: rearrangement index %v", v))
		}
		out[i] = flat[j]
	}
	return out, nil
}
