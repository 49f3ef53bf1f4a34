package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// cnn builds a small CNN on a [1, 3, h, h] input: conv 3→c (3×3, pad 1) →
// relu → max_pool 2×2 → conv c→c (3×3, pad 1) → tanh → avg_pool 2×2 →
// flatten → linear → 10, with random binary32 weights.
func cnn(seed uint64, h, c int) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{1, 3, h, h})
	conv := func(x, in, out, size int) int {
		w := spec.Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Padding: []int{1, 1}, Dilation: []int{1, 1}, Groups: 1, InChannels: in, OutChannels: out}
		id := b.node(irsem.Kind{Op: irsem.OpConv, Window: &w}, spec.Shape{1, out, size, size}, x)
		wt := randTensor(r, spec.Shape{out, in, 3, 3}, 1/math.Sqrt(float64(9*in)))
		bias := randTensor(r, spec.Shape{out}, 0.1)
		b.p.Entries[id] = &irsem.Params{W: &wt, B: &bias}
		return id
	}
	pool := func(op irsem.Op, x, ch, size int) int {
		w := spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}
		return b.node(irsem.Kind{Op: op, Window: &w}, spec.Shape{1, ch, size / 2, size / 2}, x)
	}
	x := conv(0, 3, c, h)
	x = b.node(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{1, c, h, h}, x)
	x = pool(irsem.OpMaxPool, x, c, h)
	x = conv(x, c, c, h/2)
	x = b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{1, c, h / 2, h / 2}, x)
	x = pool(irsem.OpAvgPool, x, c, h/2)
	n := c * (h / 4) * (h / 4)
	x = b.node(irsem.Kind{Op: irsem.OpReshape, InShape: spec.Shape{1, c, h / 4, h / 4}, OutShape: spec.Shape{n}}, spec.Shape{n}, x)
	b.linear(x, randTensor(r, spec.Shape{10, n}, 1/math.Sqrt(float64(n))), randTensor(r, spec.Shape{10}, 0.1))
	return b.g, b.p, randTensor(r, spec.Shape{1, 3, h, h}, 1)
}

// TestConvSoundAndTight: the bound of a conv/pool network holds for every
// evaluator (soundness), and the log reports its tightness.
func TestConvSoundAndTight(t *testing.T) {
	g, p, x := cnn(1, 8, 4)
	if err := g.Check(); err != nil {
		t.Fatal(err)
	}
	finite, worst := checkSound(t, "cnn", g, p, x, Options{})
	if finite != 10 {
		t.Errorf("%d of 10 outputs bounded", finite)
	}
	_, rel := ratios(t, g, p, x)
	t.Logf("CNN 1×3×8×8, conv 3→4, relu, max_pool, conv 4→4, tanh, avg_pool, linear 16→10: worst error/bound %.3g; bound/|value| %s", worst, quantiles(rel))
	// A planted fault: one conv weight off by a relative 1e-3.
	bad := *p.Entries[1].W
	bad.Data = append([]spec.Rat(nil), bad.Data...)
	f := bad.Data[0].Float64() * (1 + 1e-3)
	bad.Data[0], _ = spec.RatFromFloat64(float64(float32(f)))
	pb := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for id, e := range p.Entries {
		pb.Entries[id] = e
	}
	pb.Entries[1] = &irsem.Params{W: &bad, B: p.Entries[1].B}
	r, err := Compare(g, p, x, f32Out(t, g, pb, x), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("conv weight off by 1e-3: %d of 10 fail (max err %v, max bound %.3g)", r.Fails, r.MaxErr, r.MaxBound)
	if r, _ := Compare(g, p, x, f32Out(t, g, p, x), Options{}); r.Holds != 10 {
		t.Errorf("the f32 evaluation itself: %d of 10 hold", r.Holds)
	}
}
