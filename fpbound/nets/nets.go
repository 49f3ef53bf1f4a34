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
		win := irsem.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 1, InChannels: channels, OutChannels: channels}
		w, bias := b.weights(init, spec.Shape{channels, channels, 3, 3}, 9*channels)
		x = b.node(irsem.Kind{Op: irsem.OpConv, Window: &win}, shape.Clone(), x)
		b.p.Entries[x] = &irsem.Params{W: &w, B: &bias}
		x = b.node(irsem.Kind{Op: irsem.OpRelu}, shape.Clone(), x)
	}
	in := b.tensor(shape.Clone(), b.r.NormFloat64)
	return &Net{Name: fmt.Sprintf("conv stack 3×3 %d ch %d×%d, depth %d (%s init)", channels, size, size, depth, init), Graph: b.g, Payload: b.p, Input: in}, nil
}
