// Package nets builds the benchmark networks of the first-order bound
// (docs/bounds.md) as canonical IR graphs with seeded binary32 weights:
// multilayer perceptrons (ReLU or tanh, PyTorch's default or Kaiming
// initialisation) and 3×3 convolution stacks. Every weight, bias and input
// is a binary32 value (an exact dyadic rational), drawn from a PCG stream
// keyed by the seed, so the same seed gives the same graph on every
// machine.
package nets

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Init names a weight initialisation.
type Init int

const (
	// Default is PyTorch's nn.Linear / nn.Conv2d default: weights and
	// biases uniform on [−1/√fan_in, 1/√fan_in].
	Default Init = iota
	// Kaiming is He's normal initialisation for ReLU, N(0, 2/fan_in),
	// with zero biases.
	Kaiming
)

// String names the initialisation.
func (i Init) String() string {
	if i == Kaiming {
		return "kaiming"
	}
	return "default"
}

// Mask names how GPT2's attention masks the future positions.
type Mask int

const (
	// HardMask is hard_masked_softmax: the masked entries take no part.
	HardMask Mask = iota
	// FinfoMin is the additive mask Hugging Face models build: a const
	// tensor of 0 (allowed) and torch.finfo(float32).min = −(2 − 2⁻²³)·2¹²⁷
	// (masked) added to the scores before a plain softmax.
	FinfoMin
)

// String names the mask.
func (m Mask) String() string {
	if m == FinfoMin {
		return "finfo.min mask"
	}
	return "hard mask"
}

// Net is one generated network: the graph, its payload and one input.
type Net struct {
	Name    string
	Graph   *irsem.Graph
	Payload *irsem.Payload
	Input   irsem.RatTensor
}

type builder struct {
	g *irsem.Graph
	p *irsem.Payload
	r *rand.Rand
}

func newBuilder(seed uint64, in spec.Shape) *builder {
	return &builder{
		g: &irsem.Graph{Nodes: []irsem.Node{{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: in}}},
		p: &irsem.Payload{Entries: map[int]*irsem.Params{}},
		r: rand.New(rand.NewPCG(seed, 0x6e657473)),
	}
}

func (b *builder) node(k irsem.Kind, shape spec.Shape, parents ...int) int {
	id := len(b.g.Nodes)
	b.g.Nodes = append(b.g.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: shape})
	b.g.OutputID = id
	return id
}

// binary32 rounds v to binary32 and returns it as an exact rational.
func binary32(v float64) spec.Rat {
	r, err := spec.RatFromFloat64(float64(float32(v)))
	if err != nil {
		panic(err) // unreachable: a finite float32 is a rational
	}
	return r
}

func (b *builder) tensor(shape spec.Shape, draw func() float64) irsem.RatTensor {
	t := irsem.RatTensor{Shape: shape, Data: make([]spec.Rat, shape.Size())}
	for i := range t.Data {
		t.Data[i] = binary32(draw())
	}
	return t
}

func (b *builder) weights(init Init, shape spec.Shape, fan int) (w, bias irsem.RatTensor) {
	out := shape[0]
	switch init {
	case Kaiming:
		s := math.Sqrt(2 / float64(fan))
		w = b.tensor(shape, func() float64 { return b.r.NormFloat64() * s })
		bias = b.tensor(spec.Shape{out}, func() float64 { return 0 })
	default:
		a := 1 / math.Sqrt(float64(fan))
		u := func() float64 { return (2*b.r.Float64() - 1) * a }
		w = b.tensor(shape, u)
		bias = b.tensor(spec.Shape{out}, u)
	}
	return w, bias
}

// MLP returns a width-wide perceptron with depth hidden layers: input
// [width] → (linear width×width → act) × depth → linear width×width. Depth 0
// is one linear layer. act is irsem.OpRelu or irsem.OpTanh; the input is
// N(0, 1).
func MLP(seed uint64, width, depth int, act irsem.Op, init Init) (*Net, error) {
	if width < 1 || depth < 0 || (act != irsem.OpRelu && act != irsem.OpTanh) {
		return nil, fmt.Errorf("nets: MLP width %d, depth %d, activation %s: want width ≥ 1, depth ≥ 0, relu or tanh", width, depth, act)
	}
	b := newBuilder(seed, spec.Shape{width})
	x := 0
	for l := 0; l <= depth; l++ {
		w, bias := b.weights(init, spec.Shape{width, width}, width)
		x = b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{width}, x)
		b.p.Entries[x] = &irsem.Params{W: &w, B: &bias}
		if l < depth {
			x = b.node(irsem.Kind{Op: act}, spec.Shape{width}, x)
		}
	}
	in := b.tensor(spec.Shape{width}, b.r.NormFloat64)
	return &Net{Name: fmt.Sprintf("%s MLP %d×%d (%s init)", act, width, depth, init), Graph: b.g, Payload: b.p, Input: in}, nil
}

// ConvStack returns depth 3×3 convolutions (stride 1, padding 1, channels
// → channels) each followed by ReLU, on a [1, channels, size, size]
// N(0, 1) input.
func ConvStack(seed uint64, channels, size, depth int, init Init) (*Net, error) {
	if channels < 1 || size < 1 || depth < 1 {
		return nil, fmt.Errorf("nets: conv stack channels %d, size %d, depth %d: want all ≥ 1", channels, size, depth)
	}
	shape := spec.Shape{1, channels, size, size}
	b := newBuilder(seed, shape)
	x := 0
	for l := 0; l < depth; l++ {
		win := spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 1, InChannels: channels, OutChannels: channels}
		w, bias := b.weights(init, spec.Shape{channels, channels, 3, 3}, 9*channels)
		x = b.node(irsem.Kind{Op: irsem.OpConv, Window: &win}, shape.Clone(), x)
		b.p.Entries[x] = &irsem.Params{W: &w, B: &bias}
		x = b.node(irsem.Kind{Op: irsem.OpRelu}, shape.Clone(), x)
	}
	in := b.tensor(shape.Clone(), b.r.NormFloat64)
	return &Net{Name: fmt.Sprintf("conv stack 3×3 %d ch %d×%d, depth %d (%s init)", channels, size, size, depth, init), Graph: b.g, Payload: b.p, Input: in}, nil
}

// GPT2 returns a GPT-2-style pre-LN decoder stack of blocks blocks on a
// [t, d] N(0, 1) input with heads heads (d a multiple of heads, the head
// width a power of 4 so that the 1/√(head width) scale is exact):
//
//	x ← x + Wo·attn(LN₁(x)),  attn = causal softmax(q·kᵀ/√dₕ)·v per head
//	x ← x + W₂·gelu(W₁·LN₂(x))          (W₁: d → 4d, tanh-approximate gelu)
//
// The causal mask is mask (HardMask or FinfoMin), LayerNorm's γ and β are 1 + N(0, 0.1²) and N(0, 0.1²), ε = 10⁻⁵,
// and the linear layers use init.
func GPT2(seed uint64, t, d, heads, blocks int, init Init, mask Mask) (*Net, error) {
	if t < 1 || heads < 1 || d%heads != 0 || blocks < 1 || (mask != HardMask && mask != FinfoMin) {
		return nil, fmt.Errorf("nets: GPT-2 stack t %d, d %d, heads %d, blocks %d, mask %d: want t, heads, blocks ≥ 1, heads dividing d and a known mask", t, d, heads, blocks, mask)
	}
	dh := d / heads
	scale := 0
	for s := 1; s*s <= dh; s *= 2 {
		if s*s == dh {
			scale = s
		}
	}
	if scale == 0 {
		return nil, fmt.Errorf("nets: GPT-2 head width %d is not a power of 4", dh)
	}
	b := newBuilder(seed, spec.Shape{t, d})
	td := spec.Shape{t, d}
	ln := func(x int) int {
		id := b.node(irsem.Kind{Op: irsem.OpLayerNorm, Axis: 1}, td.Clone(), x)
		g := b.tensor(spec.Shape{d}, func() float64 { return 1 + 0.1*b.r.NormFloat64() })
		be := b.tensor(spec.Shape{d}, func() float64 { return 0.1 * b.r.NormFloat64() })
		eps := spec.NewRat(1, 100000)
		b.p.Entries[id] = &irsem.Params{Gamma: &g, Beta: &be, Eps: &eps}
		return id
	}
	lin := func(x, in, out int) int {
		w, bias := b.weights(init, spec.Shape{out, in}, in)
		id := b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{t, out}, x)
		b.p.Entries[id] = &irsem.Params{W: &w, B: &bias}
		return id
	}
	heads3 := spec.Shape{t, heads, dh}
	split := func(x int, perm []int, out spec.Shape) int {
		r := b.node(irsem.Kind{Op: irsem.OpReshape, InShape: td.Clone(), OutShape: heads3.Clone()}, heads3.Clone(), x)
		return b.node(irsem.Kind{Op: irsem.OpPermute, Perm: perm}, out, r)
	}
	allowed := make([]bool, heads*t*t)
	for h := 0; h < heads; h++ {
		for i := 0; i < t; i++ {
			for j := 0; j <= i; j++ {
				allowed[(h*t+i)*t+j] = true
			}
		}
	}
	htt := spec.Shape{heads, t, t}
	var additive irsem.RatTensor // FinfoMin: 0 where allowed, finfo.min elsewhere
	if mask == FinfoMin {
		additive = irsem.RatTensor{Shape: htt.Clone(), Data: make([]spec.Rat, len(allowed))}
		for i, ok := range allowed {
			if !ok {
				additive.Data[i] = binary32(-math.MaxFloat32)
			}
		}
	}
	softmax := func(s int) int {
		if mask == HardMask {
			return b.node(irsem.Kind{Op: irsem.OpHardMaskedSoftmax, Mask: &irsem.HardMask{Shape: htt.Clone(), Allowed: allowed}}, htt.Clone(), s)
		}
		m := b.node(irsem.Kind{Op: irsem.OpConst, ValueShape: htt.Clone()}, htt.Clone())
		v := additive
		v.Data = append([]spec.Rat(nil), additive.Data...)
		b.p.Entries[m] = &irsem.Params{Value: &v}
		s = b.node(irsem.Kind{Op: irsem.OpAdd}, htt.Clone(), s, m)
		return b.node(irsem.Kind{Op: irsem.OpSoftmax, Axis: 2}, htt.Clone(), s)
	}
	x := 0
	for l := 0; l < blocks; l++ {
		h := ln(x)
		q := split(lin(h, d, d), []int{1, 0, 2}, spec.Shape{heads, t, dh})
		k := split(lin(h, d, d), []int{1, 2, 0}, spec.Shape{heads, dh, t})
		v := split(lin(h, d, d), []int{1, 0, 2}, spec.Shape{heads, t, dh})
		s := b.node(irsem.Kind{Op: irsem.OpMatmul}, htt.Clone(), q, k)
		s = b.node(irsem.Kind{Op: irsem.OpScale, C: spec.NewRat(1, int64(scale))}, htt.Clone(), s)
		pr := softmax(s)
		a := b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{heads, t, dh}, pr, v)
		a = b.node(irsem.Kind{Op: irsem.OpPermute, Perm: []int{1, 0, 2}}, heads3.Clone(), a)
		a = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: heads3.Clone(), OutShape: td.Clone()}, td.Clone(), a)
		x = b.node(irsem.Kind{Op: irsem.OpAdd}, td.Clone(), x, lin(a, d, d))
		h = ln(x)
		m := lin(h, d, 4*d)
		m = b.node(irsem.Kind{Op: irsem.OpGelu}, spec.Shape{t, 4 * d}, m)
		x = b.node(irsem.Kind{Op: irsem.OpAdd}, td.Clone(), x, lin(m, 4*d, d))
	}
	in := b.tensor(td.Clone(), b.r.NormFloat64)
	return &Net{Name: fmt.Sprintf("GPT-2 pre-LN stack T=%d d=%d %d heads, %d blocks (%s init, %s)", t, d, heads, blocks, init, mask), Graph: b.g, Payload: b.p, Input: in}, nil
}
