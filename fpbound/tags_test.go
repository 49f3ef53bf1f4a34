package fpbound

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestSoundPerTag runs the soundness check on one-node graphs of the tags
// the random generator does not reach (normalisations, softmax, windows)
// and on the elementary functions over random binary32 data, several
// draws each; every output element must get a finite bound.
func TestSoundPerTag(t *testing.T) {
	type tc struct {
		name  string
		build func(r randSrc) (*builder, irsem.RatTensor)
	}
	unary := func(op irsem.Op, shift float64, positive bool) func(r randSrc) (*builder, irsem.RatTensor) {
		return func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{12})
			b.node(irsem.Kind{Op: op}, spec.Shape{12}, 0)
			x := randTensor(r, spec.Shape{12}, 2)
			if positive {
				for i, v := range x.Data {
					x.Data[i] = v.Abs().Add(spec.NewRat(int64(shift*4), 4))
				}
			}
			return b, x
		}
	}
	cases := []tc{
		{"exp", unary(irsem.OpExp, 0, false)},
		{"tanh", unary(irsem.OpTanh, 0, false)},
		{"sigmoid", unary(irsem.OpSigmoid, 0, false)},
		{"softplus", unary(irsem.OpSoftplus, 0, false)},
		{"sin", unary(irsem.OpSin, 0, false)},
		{"cos", unary(irsem.OpCos, 0, false)},
		{"log", unary(irsem.OpLog, 0.25, true)},
		{"sqrt", unary(irsem.OpSqrt, 0.25, true)},
		{"inv", unary(irsem.OpInv, 0.5, true)},
		{"abs", unary(irsem.OpAbs, 0, false)},
		{"softmax", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{3, 7})
			b.node(irsem.Kind{Op: irsem.OpSoftmax, Axis: 1}, spec.Shape{3, 7}, 0)
			return b, randTensor(r, spec.Shape{3, 7}, 3)
		}},
		{"layernorm", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{3, 8})
			id := b.node(irsem.Kind{Op: irsem.OpLayerNorm, Axis: 1}, spec.Shape{3, 8}, 0)
			g, be := randTensor(r, spec.Shape{8}, 1), randTensor(r, spec.Shape{8}, 1)
			b.p.Entries[id] = &irsem.Params{Gamma: &g, Beta: &be}
			return b, randTensor(r, spec.Shape{3, 8}, 1)
		}},
		{"batch_norm_eval", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{2, 3, 4})
			id := b.node(irsem.Kind{Op: irsem.OpBatchNormEval, ChannelAxis: 1, Channels: 3}, spec.Shape{2, 3, 4}, 0)
			m, g, be := randTensor(r, spec.Shape{3}, 1), randTensor(r, spec.Shape{3}, 1), randTensor(r, spec.Shape{3}, 1)
			v := randTensor(r, spec.Shape{3}, 1)
			for i, x := range v.Data {
				v.Data[i] = x.Mul(x).Add(spec.NewRat(1, 8))
			}
			eps := spec.NewRat(1, 100000)
			b.p.Entries[id] = &irsem.Params{Mean: &m, Var: &v, Gamma: &g, Beta: &be, Eps: &eps}
			return b, randTensor(r, spec.Shape{2, 3, 4}, 1)
		}},
		{"matmul", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{3, 5})
			w := b.konst(randTensor(r, spec.Shape{5, 4}, 1))
			b.node(irsem.Kind{Op: irsem.OpMatmul}, spec.Shape{3, 4}, 0, w)
			return b, randTensor(r, spec.Shape{3, 5}, 1)
		}},
		{"reduce_mean", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{3, 5})
			b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 1}, spec.Shape{3}, 0)
			return b, randTensor(r, spec.Shape{3, 5}, 1)
		}},
		{"max_pool avg_pool", func(r randSrc) (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{1, 2, 6, 6})
			w := spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}
			m := b.node(irsem.Kind{Op: irsem.OpMaxPool, Window: &w}, spec.Shape{1, 2, 3, 3}, 0)
			w2 := spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}}
			b.node(irsem.Kind{Op: irsem.OpAvgPool, Window: &w2}, spec.Shape{1, 2, 3, 3}, m)
			return b, randTensor(r, spec.Shape{1, 2, 6, 6}, 1)
		}},
	}
	for _, c := range cases {
		for seed := range 5 {
			b, x := c.build(newRand(uint64(seed)))
			if err := b.g.Check(); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			n := b.g.Nodes[b.g.OutputID].Shape.Size()
			if finite, _ := checkSound(t, c.name, b.g, b.p, x, Options{}); finite != n {
				t.Errorf("%s seed %d: %d of %d elements bounded", c.name, seed, finite, n)
			}
		}
	}
}
