package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// declCase is a one-node graph at a seeded input and cotangent, with
// some elements exactly 0 (relu's kink): for a unary tag, input [in] →
// op; for broadcast_to, input from → to; for a binary tag, the input x
// and a const c (a parameter under ConstParams) as its operands, c first
// when swap is set, or x twice when same is set; matmul's operands are
// [2, 3] and [3, 4] (the input the first or, with swap, the second).
//
// grad32's cases set shape (the input's shape) and kind (the node's
// attributes; its Op is op) and out (the output's shape) for a unary tag,
// and for matmul other (the const operand's shape) besides.
type declSpec struct {
	op          irsem.Op
	in, out     int
	from, to    spec.Shape
	swap, same  bool
	shape, oshp spec.Shape
	other       spec.Shape
	kind        irsem.Kind
}

func (d declSpec) String() string {
	if d.shape != nil {
		return fmt.Sprintf("%s(%v → %v, other %v, swap %v, same %v)", d.op, d.shape, d.oshp, d.other, d.swap, d.same)
	}
	return fmt.Sprintf("%s(in %d, out %d, %v→%v, swap %v, same %v)", d.op, d.in, d.out, d.from, d.to, d.swap, d.same)
}

func declCase(d declSpec, seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(seed, 3))
	rat := func() spec.Rat {
		if r.IntN(5) == 0 {
			return spec.Rat{}
		}
		return spec.NewRat(int64(r.IntN(201)-100), int64(1+r.IntN(64)))
	}
	tensor := func(s spec.Shape) irsem.RatTensor {
		t := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
		for i := range t.Data {
			t.Data[i] = rat()
		}
		return t
	}
	in := spec.Shape{d.in}
	switch {
	case d.shape != nil:
		in = d.shape.Clone()
	case d.op == irsem.OpBroadcastTo:
		in = d.from
	case d.op == irsem.OpMatmul && d.swap:
		in = spec.Shape{3, 4}
	case d.op == irsem.OpMatmul:
		in = spec.Shape{2, 3}
	}
	g := &irsem.Graph{Nodes: []irsem.Node{{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: in.Clone()}}}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	shape, parents := in.Clone(), []int{0}
	kind := irsem.Kind{Op: d.op}
	if d.shape != nil {
		kind = d.kind
		kind.Op = d.op
		shape = d.oshp.Clone()
	}
	switch d.op {
	case irsem.OpLayerNorm:
		inner := spec.Shape(in[d.kind.Axis:])
		g, be := tensor(inner), tensor(inner)
		eps := spec.NewRat(1, 64)
		p.Entries[1] = &irsem.Params{Gamma: &g, Beta: &be, Eps: &eps}
		if d.same { // no γ, β, ε: the registry's defaults
			p.Entries[1] = &irsem.Params{}
		}
	case irsem.OpBatchNormEval:
		// σ²_c + ε a square (ε = 1/64, σ²_c = (c + 1)²/16 − ε), so s_c
		// is rational and the check exact over Rat
		c := in[d.kind.ChannelAxis]
		eps := spec.NewRat(1, 64)
		mean, gm, be := tensor(spec.Shape{c}), tensor(spec.Shape{c}), tensor(spec.Shape{c})
		v := irsem.RatTensor{Shape: spec.Shape{c}, Data: make([]spec.Rat, c)}
		for i := range v.Data {
			v.Data[i] = spec.NewRat(int64((i+1)*(i+1)), 16).Sub(eps)
		}
		p.Entries[1] = &irsem.Params{Mean: &mean, Var: &v, Gamma: &gm, Beta: &be, Eps: &eps}
		if d.same { // no γ, β: the registry's defaults 1, 0
			p.Entries[1] = &irsem.Params{Mean: &mean, Var: &v, Eps: &eps}
		}
	case irsem.OpConv:
		w := d.kind.Window
		wt, bt := tensor(append(spec.Shape{w.OutChannels, w.InChannels / max(w.Groups, 1)}, w.Kernel...)), tensor(spec.Shape{w.OutChannels})
		p.Entries[1] = &irsem.Params{W: &wt, B: &bt}
	case irsem.OpLinear:
		shape = spec.Shape{d.out}
		w, b := tensor(spec.Shape{d.out, d.in}), tensor(spec.Shape{d.out})
		p.Entries[1] = &irsem.Params{W: &w, B: &b}
	case irsem.OpSum:
		shape = spec.Shape{}
	case irsem.OpBroadcastTo:
		shape = d.to.Clone()
		kind.FromShape, kind.ToShape = d.from.Clone(), d.to.Clone()
	case irsem.OpAdd, irsem.OpSub, irsem.OpMulElem, irsem.OpMatmul, irsem.OpDiv, irsem.OpConcat:
		if d.same {
			parents = []int{0, 0}
			break
		}
		cs := in.Clone()
		if d.other != nil {
			cs = d.other.Clone()
		} else if d.op == irsem.OpMatmul {
			cs = spec.Shape{3, 4}
			shape = spec.Shape{2, 4}
			if d.swap {
				cs = spec.Shape{2, 3}
			}
		}
		c := tensor(cs)
		if d.op == irsem.OpDiv {
			c = awayFromZero(c)
		}
		g.Nodes = append(g.Nodes, irsem.Node{ID: 1, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpConst, ValueShape: cs.Clone()}, Shape: cs})
		p.Entries[1] = &irsem.Params{Value: &c}
		parents = []int{0, 1}
		if d.swap {
			parents = []int{1, 0}
		}
	}
	id := len(g.Nodes)
	if e, ok := p.Entries[1]; ok && (d.op == irsem.OpLinear || d.op == irsem.OpLayerNorm || d.op == irsem.OpConv || d.op == irsem.OpBatchNormEval) {
		delete(p.Entries, 1)
		p.Entries[id] = e
	}
	g.Nodes = append(g.Nodes, irsem.Node{ID: id, Parents: parents, Kind: kind, Shape: shape})
	g.OutputID = id
	x := tensor(in)
	if d.op == irsem.OpDiv || d.op == irsem.OpSqrt || d.op == irsem.OpInv { // a nonzero denominator, sqrt above 0
		x = awayFromZero(x)
	}
	if d.op == irsem.OpMaxPool || d.op == irsem.OpMaxPoolND { // distinct values: every maximiser decided
		for i, k := range r.Perm(len(x.Data)) {
			x.Data[i] = spec.NewRat(int64(k-len(x.Data)/2), 7)
		}
	}
	return g, p, x, tensor(shape)
}

// awayFromZero is |v| + 1/8 at every element of t (nonzero, positive).
func awayFromZero(t irsem.RatTensor) irsem.RatTensor {
	out := irsem.RatTensor{Shape: t.Shape.Clone(), Data: make([]spec.Rat, len(t.Data))}
	for i, v := range t.Data {
		if v.Big().Sign() < 0 {
			v = v.Neg()
		}
		out.Data[i] = v.Add(spec.NewRat(1, 8))
	}
	return out
}

// declSpecs are the cases TestDeclVJPMatchesRegistry checks: every tag
// of declVJPs, each binary one with the input as either operand and
// (elementwise) as both, broadcast_to over leading, inner and all axes.
var declSpecs = []declSpec{
	{op: irsem.OpLinear, in: 6, out: 4}, {op: irsem.OpTanh, in: 6}, {op: irsem.OpRelu, in: 6}, {op: irsem.OpSum, in: 6},
	{op: irsem.OpAdd, in: 5}, {op: irsem.OpAdd, in: 5, swap: true}, {op: irsem.OpAdd, in: 5, same: true},
	{op: irsem.OpSub, in: 5}, {op: irsem.OpSub, in: 5, swap: true}, {op: irsem.OpSub, in: 5, same: true},
	{op: irsem.OpMulElem, in: 5}, {op: irsem.OpMulElem, in: 5, swap: true}, {op: irsem.OpMulElem, in: 5, same: true},
	{op: irsem.OpMatmul}, {op: irsem.OpMatmul, swap: true},
	{op: irsem.OpBroadcastTo, from: spec.Shape{3}, to: spec.Shape{4, 3}},
	{op: irsem.OpBroadcastTo, from: spec.Shape{4, 1}, to: spec.Shape{4, 3}},
	{op: irsem.OpBroadcastTo, from: spec.Shape{1, 3}, to: spec.Shape{2, 4, 3}},
	{op: irsem.OpBroadcastTo, from: spec.Shape{}, to: spec.Shape{2, 3}},
	{op: irsem.OpBroadcastTo, from: spec.Shape{3}, to: spec.Shape{1, 3}},
	// grad32: the GPT-2 block's index maps and attention
	{op: irsem.OpReshape, shape: spec.Shape{4, 6}, oshp: spec.Shape{4, 2, 3}, kind: irsem.Kind{InShape: spec.Shape{4, 6}, OutShape: spec.Shape{4, 2, 3}}},
	{op: irsem.OpPermute, shape: spec.Shape{4, 2, 3}, oshp: spec.Shape{2, 3, 4}, kind: irsem.Kind{Perm: []int{1, 2, 0}}},
	{op: irsem.OpPermute, shape: spec.Shape{4, 2, 3}, oshp: spec.Shape{2, 4, 3}, kind: irsem.Kind{Perm: []int{1, 0, 2}}},
	{op: irsem.OpScale, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}, kind: irsem.Kind{C: spec.NewRat(-3, 8)}},
	{op: irsem.OpMatmul, shape: spec.Shape{2, 3, 4}, other: spec.Shape{2, 4, 3}, oshp: spec.Shape{2, 3, 3}},
	{op: irsem.OpMatmul, shape: spec.Shape{2, 3, 4}, other: spec.Shape{2, 3, 3}, oshp: spec.Shape{2, 3, 4}, swap: true},
	{op: irsem.OpMatmul, shape: spec.Shape{2, 3, 3}, oshp: spec.Shape{2, 3, 3}, same: true},
	{op: irsem.OpMatmul, shape: spec.Shape{2, 3, 4}, other: spec.Shape{4, 5}, oshp: spec.Shape{2, 3, 5}}, // vjp36: x·W
	{op: irsem.OpSoftmax, shape: spec.Shape{2, 3, 4}, oshp: spec.Shape{2, 3, 4}, kind: irsem.Kind{Axis: 2}},
	{op: irsem.OpSoftmax, shape: spec.Shape{3, 4}, oshp: spec.Shape{3, 4}, kind: irsem.Kind{Axis: 0}},
	{op: irsem.OpHardMaskedSoftmax, shape: spec.Shape{2, 3, 3}, oshp: spec.Shape{2, 3, 3}, kind: irsem.Kind{Mask: &irsem.HardMask{Shape: spec.Shape{2, 3, 3}, Allowed: []bool{true, false, false, true, true, false, true, true, true, false, false, false, true, true, false, true, false, true}}}},
	{op: irsem.OpGelu, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpLayerNorm, shape: spec.Shape{3, 4}, oshp: spec.Shape{3, 4}, kind: irsem.Kind{Axis: 1}},
	{op: irsem.OpLayerNorm, shape: spec.Shape{2, 2, 3}, oshp: spec.Shape{2, 2, 3}, kind: irsem.Kind{Axis: 1}, same: true},
	// vjp34: conv (3×3 same padding as fpbound/nets' conv stacks; strided,
	// dilated and 1-D with two leading axes; grouped)
	{op: irsem.OpConv, shape: spec.Shape{1, 2, 4, 4}, oshp: spec.Shape{1, 3, 4, 4}, kind: irsem.Kind{Window: convWin([]int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, 1, 2, 3)}},
	{op: irsem.OpConv, shape: spec.Shape{2, 2, 6, 5}, oshp: spec.Shape{2, 2, 3, 2}, kind: irsem.Kind{Window: convWin([]int{3, 2}, []int{2, 2}, []int{1, 0}, []int{1, 1}, 1, 2, 2)}},
	{op: irsem.OpConv, shape: spec.Shape{2, 1, 2, 7}, oshp: spec.Shape{2, 1, 3, 4}, kind: irsem.Kind{Window: convWin([]int{2}, []int{2}, []int{1}, []int{2}, 1, 2, 3)}},
	{op: irsem.OpConv, shape: spec.Shape{1, 4, 3, 3}, oshp: spec.Shape{1, 2, 3, 3}, kind: irsem.Kind{Window: convWin([]int{3, 3}, []int{1, 1}, []int{1, 1}, []int{1, 1}, 2, 4, 2)}},
	// vjp34: the importers' index maps and arithmetic
	{op: irsem.OpTranspose, shape: spec.Shape{2, 3, 4}, oshp: spec.Shape{4, 3, 2}, kind: irsem.Kind{Axis1: 0, Axis2: 2}},
	{op: irsem.OpSlice, shape: spec.Shape{3, 5}, oshp: spec.Shape{3, 2}, kind: irsem.Kind{Axis: 1, Start: 1, End: 3}},
	{op: irsem.OpConcat, shape: spec.Shape{2, 3}, other: spec.Shape{2, 2}, oshp: spec.Shape{2, 5}, kind: irsem.Kind{Axis: 1}},
	{op: irsem.OpConcat, shape: spec.Shape{2, 3}, other: spec.Shape{1, 3}, oshp: spec.Shape{3, 3}, kind: irsem.Kind{Axis: 0}, swap: true},
	{op: irsem.OpConcat, shape: spec.Shape{2, 3}, oshp: spec.Shape{4, 3}, kind: irsem.Kind{Axis: 0}, same: true},
	{op: irsem.OpNeg, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpDiv, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpDiv, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}, swap: true},
	{op: irsem.OpDiv, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}, same: true},
	{op: irsem.OpSqrt, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpReduceSum, shape: spec.Shape{2, 3, 4}, oshp: spec.Shape{2, 4}, kind: irsem.Kind{Axis: 1}},
	{op: irsem.OpReduceMean, shape: spec.Shape{2, 3, 4}, oshp: spec.Shape{2, 3}, kind: irsem.Kind{Axis: 2}},
	{op: irsem.OpReduceMean, shape: spec.Shape{3, 4}, oshp: spec.Shape{4}, kind: irsem.Kind{Axis: 0}},
	{op: irsem.OpInv, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpExp, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	{op: irsem.OpSquare, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	// grad35: erf
	{op: opErf, shape: spec.Shape{2, 3}, oshp: spec.Shape{2, 3}},
	// vjp36: pad (fill 0 and 1/2), batch_norm_eval (with and without γ, β),
	// max_pool (ResNet's 3×3 stride 2 padding 1; 2×2 stride 2 on two
	// leading axes), max_pool_nd (dilated, asymmetric pads), gather
	// (repeated indices; 2-D indices on an inner axis)
	{op: irsem.OpPad, shape: spec.Shape{2, 3}, oshp: spec.Shape{3, 6}, kind: irsem.Kind{Widths: []int{1, 2, 0, 1}, Mode: spec.PadConstant}},
	{op: irsem.OpPad, shape: spec.Shape{2, 1, 3}, oshp: spec.Shape{2, 3, 3}, kind: irsem.Kind{Widths: []int{0, 1, 0, 0, 1, 0}, Mode: spec.PadConstant, Value: spec.NewRat(1, 2)}},
	{op: irsem.OpBatchNormEval, shape: spec.Shape{2, 3, 2, 2}, oshp: spec.Shape{2, 3, 2, 2}, kind: irsem.Kind{ChannelAxis: 1, Channels: 3}},
	{op: irsem.OpBatchNormEval, shape: spec.Shape{3, 4}, oshp: spec.Shape{3, 4}, kind: irsem.Kind{ChannelAxis: 1, Channels: 4}, same: true},
	{op: irsem.OpMaxPool, shape: spec.Shape{1, 2, 5, 5}, oshp: spec.Shape{1, 2, 3, 3}, kind: irsem.Kind{Window: &spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Padding: []int{1, 1}}}},
	{op: irsem.OpMaxPool, shape: spec.Shape{2, 1, 4, 4}, oshp: spec.Shape{2, 1, 2, 2}, kind: irsem.Kind{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}}},
	{op: irsem.OpMaxPoolND, shape: spec.Shape{1, 1, 6, 5}, oshp: spec.Shape{1, 1, 5, 3}, kind: irsem.Kind{Window: &spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 2}, Pads: []int{0, 1, 1, 0}, Dilation: []int{2, 1}}}},
	{op: irsem.OpGather, shape: spec.Shape{4, 3}, oshp: spec.Shape{5, 3}, kind: irsem.Kind{Axis: 0, Indices: []int{2, 0, 2, 3, 2}, IndicesShape: spec.Shape{5}}},
	{op: irsem.OpGather, shape: spec.Shape{2, 4}, oshp: spec.Shape{2, 2, 2}, kind: irsem.Kind{Axis: 1, Indices: []int{1, 1, 3, 0}, IndicesShape: spec.Shape{2, 2}}},
}

// convWin is an IR conv window (symmetric padding).
func convWin(k, s, p, dl []int, groups, cin, cout int) *spec.Window {
	return &spec.Window{Kernel: k, Stride: s, Padding: p, Dilation: dl, Groups: groups, InChannels: cin, OutChannels: cout}
}

// declInexact: the tags whose registry value is not rational (checked
// over spec.Interval by checkDeclVJP).
var declInexact = map[irsem.Op]bool{irsem.OpExp: true, irsem.OpSqrt: true, irsem.OpTanh: true, irsem.OpSoftmax: true, irsem.OpHardMaskedSoftmax: true, irsem.OpGelu: true, irsem.OpLayerNorm: true, opErf: true}

// checkDeclVJP checks the declarative VJP of the case's tag (declVJPs)
// against the registry's Go VJP (irgrad's tape over spec.Default, the
// const operand a parameter under ConstParams) on a one-node graph: the
// cotangent of the input and of the const, over spec.Rat element for
// element equal, where the tag is exact over Rat (all but tanh); over
// spec.Interval, overlapping enclosures of width below 10⁻¹² (tanh,
// whose value is not rational). The relu mask's box is the interval
// evaluation of the forward node.
func checkDeclVJP(d declSpec, seed uint64) error {
	g, p, x, dy := declCase(d, seed)
	fwd, err := irsem.DenoteAll[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		return err
	}
	boxes := make([]fwdBox, len(g.Nodes))
	for j, v := range fwd {
		boxes[j] = fwdBox{box: v.Data, x: v.Data}
	}
	b, cot, reason := reverseNodes(g, p, dy, boxes)
	if reason != "" {
		return fmt.Errorf("%v: no combined graph: %s", d, reason)
	}
	targets := []int{0} // the input, then the const operand
	if len(g.Nodes) == 3 {
		targets = append(targets, 1)
	}
	for ti, node := range targets {
		b.c.OutputID = cot[node]
		if err := b.c.Check(); err != nil {
			return fmt.Errorf("%v: the combined graph: %v", d, err)
		}
		if !declInexact[d.op] {
			want, _, err := irgrad.GradWith[spec.Rat](g, p, irsem.ConvertTensor[spec.Rat](x), &dy, irgrad.PathTape, irgrad.LowerOptions{ConstParams: true})
			if err != nil {
				return err
			}
			w := want.Input
			if ti > 0 {
				w = want.Params[0]
			}
			got, err := irsem.Denote[spec.Rat](b.c, b.cp, irsem.ConvertTensor[spec.Rat](x))
			if err != nil {
				return err
			}
			if !got.Shape.Equal(w.Shape) {
				return fmt.Errorf("%v: node %d's cotangent has shape %v, the registry's %v", d, node, got.Shape, w.Shape)
			}
			for k := range w.Data {
				if got.Data[k].Big().Cmp(w.Data[k].Big()) != 0 {
					return fmt.Errorf("%v seed %d: node %d's cotangent element %d: declarative %v, registry %v", d, seed, node, k, got.Data[k], w.Data[k])
				}
			}
			continue
		}
		dyI := irsem.ConvertTensor[spec.Interval](dy)
		want, _, err := irgrad.GradWith[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x), &dyI, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return err
		}
		got, err := irsem.Denote[spec.Interval](b.c, b.cp, irsem.ConvertTensor[spec.Interval](x))
		if err != nil {
			return err
		}
		for k, w := range want.Input.Data {
			h := got.Data[k]
			if w.Hi-w.Lo > 1e-12 || h.Hi-h.Lo > 1e-12 || h.Hi < w.Lo || w.Hi < h.Lo {
				return fmt.Errorf("%v seed %d: input-gradient element %d: declarative %v, registry %v (disjoint or too wide to tell)", d, seed, k, h, w)
			}
		}
	}
	return nil
}

// TestDeclVJPMatchesRegistry: every declarative VJP of the table agrees
// with the registry's VJP (checkDeclVJP) on seeded points, every tag of
// the table is among the cases, and a wrong rule — linear reading W for
// Wᵀ, tanh's 1 + y·y, relu's mask negated, add's second contribution
// negated, mul_elem's operands swapped, sub's second contribution not
// negated, sum's broadcast replaced by a zero, broadcast_to's row sum
// replaced by the row's first element, matmul's dB replaced by B⊙B; and
// (grad32) reshape reading dy with two axes swapped, permute reading dy
// without moving it back, scale by 1/c, batched matmul's dB replaced by
// B⊙B, softmax's y⊙(dy + Σ), hard_masked_softmax's y⊙dy, gelu′ read at
// −x and layernorm ignoring γ — is caught by the same check.
//
// grad35: erf's rule (the registry's erf_deriv step) by interval overlap;
// caught: erf′'s constant 2/π for 2/√π, e^(−x²) without 2/√π, and erf′
// off by a relative 10⁻⁹.
func TestDeclVJPMatchesRegistry(t *testing.T) {
	seen := map[irsem.Op]bool{}
	for _, d := range declSpecs {
		seen[d.op] = true
		for seed := uint64(1); seed <= 3; seed++ {
			if err := checkDeclVJP(d, seed); err != nil {
				t.Error(err)
			}
		}
	}
	for op := range declVJPs {
		if !seen[op] {
			t.Errorf("%s: no case checks its declarative VJP", op)
		}
	}
	one := func(dx int) []int { return []int{dx} }
	wrong := []struct {
		d    declSpec
		rule declRule
	}{
		{declSpec{op: irsem.OpLinear, in: 6, out: 4}, func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			zero := filledRat(spec.Shape{e.W.Shape[1]}, spec.Rat{})
			w := *e.W
			w.Shape = spec.Shape{e.W.Shape[1], e.W.Shape[0]} // the bytes of W read as Wᵀ
			dx := b.node(irsem.Kind{Op: irsem.OpLinear}, zero.Shape, dy)
			b.cp.Entries[dx] = &irsem.Params{W: &w, B: &zero}
			return one(dx), ""
		}},
		{declSpec{op: irsem.OpTanh, in: 6}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			sq := b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.ID, nd.ID)
			d := b.node(irsem.Kind{Op: irsem.OpAdd}, nd.Shape, b.constant(filledRat(nd.Shape, spec.NewRat(1, 1))), sq)
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, d)), ""
		}},
		{declSpec{op: irsem.OpRelu, in: 6}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) ([]int, string) {
			m := filledRat(nd.Shape, spec.Rat{})
			for k, iv := range box.box {
				if iv.Hi <= 0 {
					m.Data[k] = spec.NewRat(1, 1)
				}
			}
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, b.constant(m))), ""
		}},
		{declSpec{op: irsem.OpAdd, in: 5}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			return []int{dy, b.node(irsem.Kind{Op: irsem.OpNeg}, nd.Shape, dy)}, ""
		}},
		{declSpec{op: irsem.OpSub, in: 5, swap: true}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			return []int{dy, dy}, ""
		}},
		{declSpec{op: irsem.OpMulElem, in: 5}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			pa, pb := nd.Parents[0], nd.Parents[1]
			return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, pa), b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, pb)}, ""
		}},
		{declSpec{op: irsem.OpSum, in: 6}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			return one(b.constant(filledRat(b.c.Nodes[nd.Parents[0]].Shape, spec.Rat{}))), ""
		}},
		{declSpec{op: irsem.OpBroadcastTo, from: spec.Shape{4, 1}, to: spec.Shape{4, 3}}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// dy's column 0 instead of the sum over the row
			sl := b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: 1}, spec.Shape{4}, b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{4, 3}, dy, b.constant(irsem.RatTensor{Shape: spec.Shape{4, 3}, Data: []spec.Rat{spec.NewRat(1, 1), {}, {}, spec.NewRat(1, 1), {}, {}, spec.NewRat(1, 1), {}, {}, spec.NewRat(1, 1), {}, {}}})))
			return one(b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{4}, OutShape: spec.Shape{4, 1}}, spec.Shape{4, 1}, sl)), ""
		}},
		{declSpec{op: irsem.OpMatmul, swap: true}, func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) ([]int, string) {
			dxs, reason := matmulDeclVJP(b, nd, nil, dy, box)
			if reason != "" {
				return nil, reason
			}
			// dB = Aᵀ·dy replaced by a wrong formula of the right shape, B⊙B
			pb := nd.Parents[1]
			bs := b.c.Nodes[pb].Shape
			dxs[1] = b.node(irsem.Kind{Op: irsem.OpMulElem}, bs, pb, pb)
			return dxs, ""
		}},
	}
	// grad32's tags
	softmaxWrong := func(minus bool) declRule {
		return func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			s := nd.Shape
			ax := len(s) - 1
			red, keep := s[:ax:ax].Clone(), s.Clone()
			keep[ax] = 1
			p := b.node(irsem.Kind{Op: irsem.OpMulElem}, s, dy, nd.ID)
			sum := b.node(irsem.Kind{Op: irsem.OpReduceSum, Axis: ax}, red, p)
			sum = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: red.Clone(), OutShape: keep.Clone()}, keep, sum)
			sum = b.node(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: keep.Clone(), ToShape: s.Clone()}, s, sum)
			op := irsem.OpAdd // y⊙(dy + s): the sign of Σ flipped
			if minus {
				return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, s, nd.ID, dy)), "" // y⊙dy: Σ dropped
			}
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, s, nd.ID, b.node(irsem.Kind{Op: op}, s, dy, sum))), ""
		}
	}
	find := func(op irsem.Op, nth int) declSpec { // grad32's nth case of op
		for _, d := range declSpecs {
			if d.op == op && d.shape != nil {
				if nth == 0 {
					return d
				}
				nth--
			}
		}
		t.Fatalf("no case %s", op)
		return declSpec{}
	}
	wrong = append(wrong, []struct {
		d    declSpec
		rule declRule
	}{
		{find(irsem.OpReshape, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// reshape: dy's last two axes swapped before it is read back
			t := b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{0, 2, 1}}, spec.Shape{4, 3, 2}, dy)
			return one(b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{4, 3, 2}, OutShape: spec.Shape{4, 6}}, spec.Shape{4, 6}, t)), ""
		}},
		{find(irsem.OpPermute, 1), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// permute [1, 0, 2] (its own inverse) read back as [0, 1, 2] of the wrong extents: dy reshaped
			return one(b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: spec.Shape{4, 2, 3}}, spec.Shape{4, 2, 3}, dy)), ""
		}},
		{find(irsem.OpScale, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			return one(b.node(irsem.Kind{Op: irsem.OpScale, C: spec.NewRat(-8, 3)}, nd.Shape, dy)), "" // 1/c for c
		}},
		{find(irsem.OpMatmul, 1), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, box fwdBox) ([]int, string) {
			dxs, reason := matmulDeclVJP(b, nd, nil, dy, box)
			if reason != "" {
				return nil, reason
			}
			// batched: dB = Aᵀ·dy replaced by a wrong formula of the right shape, B⊙B
			pb := nd.Parents[1]
			dxs[1] = b.node(irsem.Kind{Op: irsem.OpMulElem}, b.c.Nodes[pb].Shape, pb, pb)
			return dxs, ""
		}},
		{find(irsem.OpSoftmax, 0), softmaxWrong(false)},
		{find(irsem.OpHardMaskedSoftmax, 0), softmaxWrong(true)},
		{find(irsem.OpGelu, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			// gelu′ at −x (an odd-looking slip: the derivative read at the negated input)
			saved := b.c.Nodes[nd.ID].Parents[0]
			neg := b.node(irsem.Kind{Op: irsem.OpNeg}, nd.Shape, saved)
			fake := *nd
			fake.Parents = []int{neg}
			return geluDeclVJP(b, &fake, e, dy, box)
		}},
		{find(irsem.OpLayerNorm, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			// layer norm without γ: the payload's γ ignored
			return layerNormDeclVJP(b, nd, &irsem.Params{Eps: e.Eps}, dy, box)
		}},
		// vjp34
		{find(irsem.OpConv, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			// conv_transpose by W with its kernel flipped (the adjoint's flip done twice)
			w := *e.W
			w.Data = append([]spec.Rat{}, e.W.Data...)
			k := spec.Shape(nd.Kind.Window.Kernel).Size()
			for m := 0; m < len(w.Data); m += k {
				for a, z := m, m+k-1; a < z; a, z = a+1, z-1 {
					w.Data[a], w.Data[z] = w.Data[z], w.Data[a]
				}
			}
			return convDeclVJP(b, nd, &irsem.Params{W: &w}, dy, box)
		}},
		{find(irsem.OpTranspose, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// dy read back without moving its elements
			xs := b.c.Nodes[nd.Parents[0]].Shape
			return one(b.node(irsem.Kind{Op: irsem.OpReshape, InShape: nd.Shape.Clone(), OutShape: xs.Clone()}, xs, dy)), ""
		}},
		{find(irsem.OpSlice, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// the zeros put on the wrong side: pad widths swapped
			xs := b.c.Nodes[nd.Parents[0]].Shape
			w := make([]int, 2*len(xs))
			w[1], w[3] = xs[1]-nd.Kind.End, nd.Kind.Start
			return one(b.node(irsem.Kind{Op: irsem.OpPad, Widths: w, Mode: spec.PadConstant}, xs, dy)), ""
		}},
		{find(irsem.OpConcat, 1), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// every parent given the first rows of dy
			out := make([]int, len(nd.Parents))
			for t, q := range nd.Parents {
				qs := b.c.Nodes[q].Shape
				out[t] = b.node(irsem.Kind{Op: irsem.OpSlice, Axis: 0, Start: 0, End: qs[0]}, qs, dy)
			}
			return out, ""
		}},
		{find(irsem.OpNeg, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			return one(dy), "" // the sign dropped
		}},
		{find(irsem.OpDiv, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			dxs, reason := divDeclVJP(b, nd, e, dy, box)
			if reason != "" {
				return nil, reason
			}
			dxs[1] = b.c.Nodes[dxs[1]].Parents[0] // −(dy·a)/(b·b) without its sign
			return dxs, ""
		}},
		{find(irsem.OpSqrt, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// 1/y for 1/(2y)
			d := b.node(irsem.Kind{Op: irsem.OpDiv}, nd.Shape, b.full(nd.Shape, spec.NewRat(1, 1)), nd.ID)
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, d, dy)), ""
		}},
		{find(irsem.OpReduceSum, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			fake := *nd // reduce_sum's VJP read as reduce_mean's (dy/n)
			fake.Kind.Op = irsem.OpReduceMean
			return reduceDeclVJP(b, &fake, e, dy, box)
		}},
		{find(irsem.OpInv, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// the derivative's sign dropped: 1/(x·x)
			x := nd.Parents[0]
			q := b.node(irsem.Kind{Op: irsem.OpDiv}, nd.Shape, b.full(nd.Shape, spec.NewRat(1, 1)), b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, x, x))
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, q, dy)), ""
		}},
		{find(irsem.OpExp, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// the derivative read at the input: x·dy for e^x·dy
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.Parents[0], dy)), ""
		}},
		{find(irsem.OpSquare, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// x·dy for 2x·dy
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, nd.Parents[0], dy)), ""
		}},
		{find(irsem.OpReduceMean, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			fake := *nd // reduce_mean's VJP without the 1/n
			fake.Kind.Op = irsem.OpReduceSum
			return reduceDeclVJP(b, &fake, e, dy, box)
		}},
		// grad35: erf′'s constant 2/π for 2/√π (erf′·(5642/10⁴), 5642/10⁴ ≈ 1/√π)
		{find(opErf, 0), erfScaled(spec.NewRat(5642, 10000))},
		// e^(−x²) without the constant 2/√π
		{find(opErf, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			s := nd.Shape
			e := b.node(irsem.Kind{Op: irsem.OpExp}, s, b.node(irsem.Kind{Op: irsem.OpNeg}, s, b.node(irsem.Kind{Op: irsem.OpSquare}, s, nd.Parents[0])))
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, s, e, dy)), ""
		}},
		// the sensitivity of the interval check: erf′ off by a relative 10⁻⁹
		{find(opErf, 0), erfScaled(spec.NewRat(1000000001, 1000000000))},
		// vjp36
		{find(irsem.OpPad, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// the slice taken from the end widths (begin and end swapped)
			fake := *nd
			r := len(nd.Shape)
			fake.Kind.Widths = append(append([]int{}, nd.Kind.Widths[r:]...), nd.Kind.Widths[:r]...)
			return padDeclVJP(b, &fake, nil, dy, fwdBox{})
		}},
		{find(irsem.OpBatchNormEval, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// dy·γ·s for dy·γ/s
			s, ax, gamma, reason := bnNodes(b, nd, e)
			if reason != "" {
				return nil, reason
			}
			v := b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, dy, b.perChannel(*gamma, nd.Shape, ax))
			return one(b.node(irsem.Kind{Op: irsem.OpMulElem}, nd.Shape, v, s)), ""
		}},
		{find(irsem.OpBatchNormEval, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			// γ ignored: dy/s
			e2 := *e
			e2.Gamma = nil
			return batchNormDeclVJP(b, nd, &e2, dy, box)
		}},
		{find(irsem.OpMaxPool, 0), maxPoolAtMin},
		{find(irsem.OpMaxPool, 1), maxPoolAtMin},
		{find(irsem.OpMaxPoolND, 0), func(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
			// the dilation ignored
			fake := *nd
			w := *nd.Kind.Window
			w.Dilation = nil
			fake.Kind.Window = &w
			return maxPoolDeclVJP(b, &fake, e, dy, box)
		}},
		{find(irsem.OpGather, 0), func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
			// a repeated index keeps only its last occurrence's row (no sum)
			xs := b.c.Nodes[nd.Parents[0]].Shape
			k := len(nd.Kind.Indices)
			sel := make([]int, xs[0])
			for i := range sel {
				sel[i] = k
			}
			for j, i := range nd.Kind.Indices {
				sel[i] = j
			}
			cat := b.node(irsem.Kind{Op: irsem.OpConcat, Axis: 0}, spec.Shape{k + 1, xs[1]}, dy, b.full(spec.Shape{1, xs[1]}, spec.Rat{}))
			return one(b.node(irsem.Kind{Op: irsem.OpGather, Axis: 0, Indices: sel, IndicesShape: spec.Shape{xs[0]}}, xs, cat)), ""
		}},
	}...)
	for _, w := range wrong {
		saved := declVJPs[w.d.op]
		declVJPs[w.d.op] = w.rule
		err := checkDeclVJP(w.d, 1)
		t.Logf("%v, wrong rule: %v", w.d, err)
		if err == nil {
			t.Errorf("%v: a wrong declarative VJP passed the check", w.d)
		}
		declVJPs[w.d.op] = saved
	}
}

// TestGradCombinedSound: on ReLU and tanh MLPs (width 8, depths 1 to 16,
// seeds 1–3) the combined bound exists for every input-gradient element,
// every float32 gradient of the test's own evaluator (four orders, with
// and without FMA) holds against the combined enclosure alone and against
// GradEnclosure's least of the three, the float32 values just outside
// each of them fail; a planted relative error of 10⁻³ in the largest
// element fails.
func TestGradCombinedSound(t *testing.T) {
	depths := []int{1, 4, 8, 16}
	if testing.Short() {
		depths = []int{1, 16}
	}
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range depths {
			for seed := uint64(1); seed <= 3; seed++ {
				gc := newGradCase(t, act, 8, depth, seed, false)
				if gc.comb == nil {
					t.Fatalf("%s depth %d seed %d: no combined bound: %s", act, depth, seed, gc.combReason)
				}
				for _, o := range orders {
					got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, o))
					for i, en := range gc.comb {
						for _, e := range []Enclosure{en, gc.sharp[i].Enclosure} {
							if el := Judge(got[i], e); el.Verdict != Holds {
								t.Errorf("%s depth %d seed %d %s: input-gradient element %d = %g is %v against %v ± %g", act, depth, seed, o.name, i, got[i], el.Verdict, e.Exact, e.Bound)
							}
						}
					}
				}
				for i, en := range gc.comb {
					if math.IsInf(en.Bound, 1) {
						t.Errorf("%s depth %d seed %d: element %d: combined bound +∞: %s", act, depth, seed, i, en.Reason)
						continue
					}
					for _, e := range []Enclosure{en, gc.sharp[i].Enclosure} {
						for _, v := range justOutside(e) {
							if el := Judge(v, e); el.Verdict != Fails {
								t.Errorf("%s depth %d seed %d: element %d: %g just outside %v ± %g is %v", act, depth, seed, i, v, e.Exact, e.Bound, el.Verdict)
							}
						}
					}
				}
				got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, orders[0]))
				k := largestInput(gc, len(gc.x))
				if el := Judge(float32(float64(got[k])*(1+1e-3)), gc.sharp[k].Enclosure); el.Verdict != Fails {
					t.Errorf("%s depth %d seed %d: a planted 10⁻³ in element %d is %v (bound %g, exact %v)", act, depth, seed, k, el.Verdict, gc.sharp[k].Bound, gc.sharp[k].Exact)
				}
			}
		}
	}
}

// TestCombinedGraphNilPayload: a graph read without a payload (relu
// alone, compare-grad --graph without --payload) builds its combined
// graph instead of failing on the missing entries.
func TestCombinedGraphNilPayload(t *testing.T) {
	g, _, x, dy := declCase(declSpec{op: irsem.OpRelu, in: 3}, 1)
	fwd, err := irsem.DenoteAll[spec.Interval](g, nil, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		t.Fatal(err)
	}
	boxes := []fwdBox{{box: fwd[0].Data}, {box: fwd[1].Data}}
	if c, _, reason := combinedGraph(g, nil, dy, boxes); c == nil {
		t.Fatalf("no combined graph: %s", reason)
	}
}

// TestParamTargetMatchesRegistry: the combined graph's parameter
// gradients (paramTarget) equal, element by element over spec.Rat, the
// registry's (irgrad's tape) for a linear on one row ([6] → [4]: W by one
// product per element) and on three ([3, 6] → [3, 4]: W by one matmul
// sum, b by one reduce_sum), b included; with the cotangent of another
// seed the same check fails (it is not vacuous).
func TestParamTargetMatchesRegistry(t *testing.T) {
	for _, rows := range []int{0, 3} {
		for seed := uint64(1); seed <= 3; seed++ {
			g, p, x, dy := declCase(declSpec{op: irsem.OpLinear, in: 6, out: 4}, seed)
			if rows > 0 { // the same W, b on a [rows, 6] input
				g.Nodes[0].Shape = spec.Shape{rows, 6}
				g.Nodes[1].Shape = spec.Shape{rows, 4}
				_, _, x2, _ := declCase(declSpec{op: irsem.OpLinear, in: rows * 6, out: 4}, seed+10)
				_, _, _, d2 := declCase(declSpec{op: irsem.OpLinear, in: 6, out: rows * 4}, seed+20)
				x, dy = irsem.RatTensor{Shape: spec.Shape{rows, 6}, Data: x2.Data}, irsem.RatTensor{Shape: spec.Shape{rows, 4}, Data: d2.Data}
			}
			want, params, err := irgrad.GradWith[spec.Rat](g, p, irsem.ConvertTensor[spec.Rat](x), &dy, irgrad.PathTape, irgrad.LowerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			check := func(seedT irsem.RatTensor) error {
				b, cot, reason := reverseNodes(g, p, seedT, make([]fwdBox, len(g.Nodes)))
				if reason != "" {
					return fmt.Errorf("no combined graph: %s", reason)
				}
				for i, prm := range params {
					tg, reason := paramTarget(b, g, cot, prm)
					if reason != "" {
						return fmt.Errorf("%s: %s", prm.Name, reason)
					}
					b.c.OutputID = tg
					if err := b.c.Check(); err != nil {
						return fmt.Errorf("%s: %v", prm.Name, err)
					}
					got, err := irsem.Denote[spec.Rat](b.c, b.cp, irsem.ConvertTensor[spec.Rat](x))
					if err != nil {
						return err
					}
					w := want.Params[i]
					if !got.Shape.Equal(w.Shape) {
						return fmt.Errorf("%s: shape %v, registry %v", prm.Name, got.Shape, w.Shape)
					}
					for k := range w.Data {
						if got.Data[k].Big().Cmp(w.Data[k].Big()) != 0 {
							return fmt.Errorf("rows %d seed %d: %s element %d: combined %v, registry %v", rows, seed, prm.Name, k, got.Data[k], w.Data[k])
						}
					}
				}
				return nil
			}
			if err := check(dy); err != nil {
				t.Error(err)
			}
			other := irsem.RatTensor{Shape: dy.Shape, Data: append([]spec.Rat{}, dy.Data...)}
			other.Data[0] = other.Data[0].Add(spec.NewRat(1, 1))
			if err := check(other); err == nil {
				t.Errorf("rows %d seed %d: another cotangent's parameter gradients passed the check", rows, seed)
			}
		}
	}
}

// TestParamTargetConvLayerNorm (vjp34): the combined graph's parameter
// gradients of conv (W and b; paramTarget's pads, slices and matmuls),
// layernorm (γ and β) and (vjp36) batch_norm_eval (γ and β, exactly: the
// case's σ² + ε are squares; μ and σ² have no target) agree with the registry's (irgrad's tape) on
// the one-node cases of declSpecs (conv: every case of one group; the
// strided, dilated and 1-D ones among them): over spec.Rat element for
// element equal (conv), over spec.Interval by overlapping enclosures
// narrower than 10⁻¹² (layernorm); with the cotangent of another seed
// the same check fails (not vacuous); a grouped conv has no target (a
// reason, not a wrong graph).
func TestParamTargetConvLayerNorm(t *testing.T) {
	check := func(d declSpec, seed uint64, bump bool) error {
		g, p, x, dy := declCase(d, seed)
		dyC := irsem.RatTensor{Shape: dy.Shape, Data: append([]spec.Rat{}, dy.Data...)} // the combined graph's seed
		if bump {
			dyC.Data[0] = dyC.Data[0].Add(spec.NewRat(1, 1))
		}
		exact := d.op != irsem.OpLayerNorm
		var wantR []irsem.RatTensor
		var wantI []spec.Tensor[spec.Interval]
		var params []irgrad.Param
		if exact {
			w, ps, err := irgrad.GradWith[spec.Rat](g, p, irsem.ConvertTensor[spec.Rat](x), &dy, irgrad.PathTape, irgrad.LowerOptions{})
			if err != nil {
				return err
			}
			params = ps
			for _, t := range w.Params {
				wantR = append(wantR, irsem.RatTensor{Shape: t.Shape, Data: t.Data})
			}
		} else {
			dyI := irsem.ConvertTensor[spec.Interval](dy)
			w, ps, err := irgrad.GradWith[spec.Interval](g, p, irsem.ConvertTensor[spec.Interval](x), &dyI, irgrad.PathTape, irgrad.LowerOptions{})
			if err != nil {
				return err
			}
			params, wantI = ps, w.Params
		}
		if len(params) == 0 {
			return fmt.Errorf("%v: no parameters", d)
		}
		b, cot, reason := reverseNodes(g, p, dyC, make([]fwdBox, len(g.Nodes)))
		if reason != "" {
			return fmt.Errorf("%v: no combined graph: %s", d, reason)
		}
		for i, prm := range params {
			tg, reason := paramTarget(b, g, cot, prm)
			if d.op == irsem.OpBatchNormEval && (prm.Field == irsem.ParamMean || prm.Field == irsem.ParamVar) {
				if reason == "" { // running statistics: buffers, no target
					return fmt.Errorf("%v: %s has a target", d, prm.Name)
				}
				continue
			}
			if reason != "" {
				return fmt.Errorf("%v: %s: %s", d, prm.Name, reason)
			}
			b.c.OutputID = tg
			if err := b.c.Check(); err != nil {
				return fmt.Errorf("%v: %s: %v", d, prm.Name, err)
			}
			if exact {
				got, err := irsem.Denote[spec.Rat](b.c, b.cp, irsem.ConvertTensor[spec.Rat](x))
				if err != nil {
					return err
				}
				w := wantR[i]
				if !got.Shape.Equal(w.Shape) {
					return fmt.Errorf("%v: %s: shape %v, registry %v", d, prm.Name, got.Shape, w.Shape)
				}
				for k := range w.Data {
					if got.Data[k].Big().Cmp(w.Data[k].Big()) != 0 {
						return fmt.Errorf("%v seed %d: %s element %d: combined %v, registry %v", d, seed, prm.Name, k, got.Data[k], w.Data[k])
					}
				}
				continue
			}
			got, err := irsem.Denote[spec.Interval](b.c, b.cp, irsem.ConvertTensor[spec.Interval](x))
			if err != nil {
				return err
			}
			for k, w := range wantI[i].Data {
				h := got.Data[k]
				if w.Hi-w.Lo > 1e-12 || h.Hi-h.Lo > 1e-12 || h.Hi < w.Lo || w.Hi < h.Lo {
					return fmt.Errorf("%v seed %d: %s element %d: combined %v, registry %v (disjoint or too wide to tell)", d, seed, prm.Name, k, h, w)
				}
			}
		}
		return nil
	}
	n := 0
	for _, d := range declSpecs {
		grouped := d.op == irsem.OpConv && d.kind.Window.Groups > 1
		if (d.op != irsem.OpConv && d.op != irsem.OpLayerNorm && d.op != irsem.OpBatchNormEval) || ((d.op == irsem.OpLayerNorm || d.op == irsem.OpBatchNormEval) && d.same) {
			continue
		}
		if grouped {
			if err := check(d, 1, false); err == nil || !strings.Contains(err.Error(), "groups") {
				t.Errorf("%v: a grouped conv's W: %v, want no target", d, err)
			}
			continue
		}
		n++
		for seed := uint64(1); seed <= 2; seed++ {
			if err := check(d, seed, false); err != nil {
				t.Error(err)
			}
			if err := check(d, seed, true); err == nil {
				t.Errorf("%v seed %d: another cotangent's parameter gradients passed the check", d, seed)
			}
		}
	}
	if n < 4 {
		t.Errorf("%d cases checked", n)
	}
}

// maxPoolAtMin is a wrong max-pool rule for TestDeclVJPMatchesRegistry:
// the cotangent routed to each window's minimum (the parent's box
// negated while the rule reads it).
func maxPoolAtMin(b *cbuild, nd *irsem.Node, e *irsem.Params, dy int, box fwdBox) ([]int, string) {
	x := nd.Parents[0]
	saved := b.boxes[x]
	neg := make([]spec.Interval, len(saved.box))
	for i, iv := range saved.box {
		neg[i] = spec.Interval{Lo: -iv.Hi, Hi: -iv.Lo}
	}
	b.boxes[x] = fwdBox{box: neg}
	defer func() { b.boxes[x] = saved }()
	return maxPoolDeclVJP(b, nd, e, dy, box)
}

// erfScaled is a wrong erf rule for TestDeclVJPMatchesRegistry:
// scale(erf_deriv(x); c)·dy, c ≠ 1 rational.
func erfScaled(c spec.Rat) declRule {
	return func(b *cbuild, nd *irsem.Node, _ *irsem.Params, dy int, _ fwdBox) ([]int, string) {
		s := nd.Shape
		d := b.node(irsem.Kind{Op: irsem.OpScale, C: c}, s, b.node(irsem.Kind{Op: opErfDeriv}, s, nd.Parents[0]))
		return []int{b.node(irsem.Kind{Op: irsem.OpMulElem}, s, d, dy)}, ""
	}
}
