package irgrad

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func mlpExample(b *testing.B) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	return exampleGraph(b, "mlp.ir.json"), examplePayload(b, "mlp.payload.json"), exampleTensor(b, "mlp.input.json")
}

// BenchmarkLowerMLP measures lowering the example MLP (2→8→1) to a typed
// graph: checking the IR and payload, converting the parameters, building
// the graph.
func BenchmarkLowerMLP(b *testing.B) {
	g, p, _ := mlpExample(b)
	b.Run("f32", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Lower[spec.F32](nil, g, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rat", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Lower[spec.Rat](nil, g, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGradMLP measures one forward and reverse pass of the lowered
// MLP along each path (the lowering is done once, outside the loop).
func BenchmarkGradMLP(b *testing.B) {
	g, p, x := mlpExample(b)
	l, err := Lower[spec.F32](nil, g, p)
	if err != nil {
		b.Fatal(err)
	}
	xf := irsem.ConvertTensor[spec.F32](x)
	for _, path := range Paths() {
		b.Run(string(path)+"/f32", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := l.Grad(path, xf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	lr, err := Lower[spec.Rat](nil, g, p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tape/rat", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := lr.Grad(PathTape, x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLowerAndGradMLP is the whole of `tlcheck grad` on the MLP
// minus the I/O: lower, then one reverse pass.
func BenchmarkLowerAndGradMLP(b *testing.B) {
	g, p, x := mlpExample(b)
	xf := irsem.ConvertTensor[spec.F32](x)
	for _, path := range []Path{PathTape, PathTypedGraph} {
		b.Run(string(path)+"/f32", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				l, err := Lower[spec.F32](nil, g, p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Grad(path, xf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// deepMLP is the 16-layer 64-wide MLP of issue 11's performance targets:
// x[64] → 15 × (linear 64→64, relu) → linear 64→1, every weight, bias and
// input element a float32 value (a dyadic rational, as an ONNX model's
// initializers are), drawn from a fixed stream with the Kaiming-uniform
// bound 1/√64 = 1/8 (inputs in (−1, 1)), so the exact activations stay of
// order 1 while their bit length grows layer by layer.
func deepMLP(t testing.TB, layers, width int) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	t.Helper()
	r := rand.New(rand.NewPCG(11, uint64(layers*1000+width)))
	f32 := func(bound float64) spec.Rat {
		v, err := spec.RatFromFloat64(float64(float32((2*r.Float64() - 1) * bound)))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tensor := func(shape spec.Shape, bound float64) *irsem.RatTensor {
		d := make([]spec.Rat, shape.Size())
		for i := range d {
			d[i] = f32(bound)
		}
		x, err := spec.NewTensor(shape, d)
		if err != nil {
			t.Fatal(err)
		}
		return &x
	}
	b := newBuilder(sh(width))
	prev := 0
	for l := 0; l < layers; l++ {
		out := width
		if l == layers-1 {
			out = 1
		}
		ln := b.add(irsem.OpLinear, []int{prev}, sh(out))
		b.p[ln] = &irsem.Params{W: tensor(sh(out, width), 0.125), B: tensor(sh(out), 0.125)}
		prev = ln
		if l < layers-1 {
			prev = b.add(irsem.OpRelu, []int{ln}, sh(out))
		}
	}
	g, p := b.graph()
	return g, p, *tensor(sh(width), 1)
}

// BenchmarkGradDeepMLP is the exact gradient (input and every parameter,
// tape path, as `tlcheck grad` computes it) of the 16-layer 64-wide MLP
// over Rat against the same gradient over F64, F32 and Interval (the sound
// enclosure `grad --scalar interval` computes, its linear layers on the
// dense midpoint-radius kernels of package enclose); the lowering is done
// once, outside the loop. Run side by side, the ratios rat/f64 and
// interval/f64 are the costs of exactness and of a sound enclosure.
func BenchmarkGradDeepMLP(b *testing.B) {
	g, p, x := deepMLP(b, 16, 64)
	b.Run("f64", func(b *testing.B) { benchGrad[spec.F64](b, g, p, x) })
	b.Run("f32", func(b *testing.B) { benchGrad[spec.F32](b, g, p, x) })
	b.Run("interval", func(b *testing.B) { benchGrad[spec.Interval](b, g, p, x) })
	b.Run("rat", func(b *testing.B) { benchGrad[spec.Rat](b, g, p, x) })
}

func benchGrad[T spec.Scalar[T]](b *testing.B, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) {
	l, err := Lower[T](nil, g, p)
	if err != nil {
		b.Fatal(err)
	}
	xt := irsem.ConvertTensor[T](x)
	b.ReportAllocs()
	b.ResetTimer()
	c0 := processCPU()
	for i := 0; i < b.N; i++ {
		if _, err := l.Grad(PathTape, xt); err != nil {
			b.Fatal(err)
		}
	}
	// CPU time per gradient, garbage collection included: on a shared
	// machine it varies much less than the wall time.
	if c1 := processCPU(); c0 >= 0 && c1 >= 0 {
		b.ReportMetric(float64(c1-c0)/float64(b.N), "cpu-ns/op")
	}
}

// f32Tensor returns a tensor of float32 values (dyadic rationals) drawn
// uniformly from (−bound, bound).
func f32Tensor(t testing.TB, r *rand.Rand, shape spec.Shape, bound float64) *irsem.RatTensor {
	t.Helper()
	d := make([]spec.Rat, shape.Size())
	for i := range d {
		v, err := spec.RatFromFloat64(float64(float32((2*r.Float64() - 1) * bound)))
		if err != nil {
			t.Fatal(err)
		}
		d[i] = v
	}
	x, err := spec.NewTensor(shape, d)
	if err != nil {
		t.Fatal(err)
	}
	return &x
}

// convNode adds a conv node (square kernel k, stride 1, padding p, no
// dilation, one group) with float32 weights of Kaiming-uniform bound
// 1/√(cin·k²).
func (b *builder) convNode(t testing.TB, r *rand.Rand, parent int, in spec.Shape, cout, kh, kw, pad int) (int, spec.Shape) {
	cin := in[1]
	oh, ow := in[2]+2*pad-kh+1, in[3]+2*pad-kw+1
	out := sh(in[0], cout, oh, ow)
	id := b.add(irsem.OpConv, []int{parent}, out, func(k *irsem.Kind) {
		k.Window = &spec.Window{Kernel: []int{kh, kw}, Stride: []int{1, 1}, Padding: []int{pad, pad}, Dilation: []int{1, 1}, Groups: 1, InChannels: cin, OutChannels: cout}
	})
	bound := 1 / math.Sqrt(float64(cin*kh*kw))
	b.p[id] = &irsem.Params{W: f32Tensor(t, r, sh(cout, cin, kh, kw), bound), B: f32Tensor(t, r, sh(cout), bound)}
	return id, out
}

// smallCNN is the CNN of issue 11's performance targets: x[1,3,32,32] →
// conv 3→8 (3×3, padding 1) → relu → conv 8→16 (3×3, padding 1) → relu →
// max_pool 2×2 → reshape [1, 4096] → linear 4096→10 → sum, float32
// weights and input.
func smallCNN(t testing.TB) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(11, 32))
	in := sh(1, 3, 32, 32)
	b := newBuilder(in)
	c1, s1 := b.convNode(t, r, 0, in, 8, 3, 3, 1)
	r1 := b.add(irsem.OpRelu, []int{c1}, s1)
	c2, s2 := b.convNode(t, r, r1, s1, 16, 3, 3, 1)
	r2 := b.add(irsem.OpRelu, []int{c2}, s2)
	ps := sh(1, 16, 16, 16)
	mp := b.add(irsem.OpMaxPool, []int{r2}, ps, func(k *irsem.Kind) {
		k.Window = &spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}
	})
	rs := b.add(irsem.OpReshape, []int{mp}, sh(1, 4096), func(k *irsem.Kind) { k.InShape, k.OutShape = ps, sh(1, 4096) })
	ln := b.add(irsem.OpLinear, []int{rs}, sh(1, 10))
	b.p[ln] = &irsem.Params{W: f32Tensor(t, r, sh(10, 4096), 1/64.0), B: f32Tensor(t, r, sh(10), 1/64.0)}
	b.add(irsem.OpSum, []int{ln}, sh())
	g, p := b.graph()
	return g, p, *f32Tensor(t, r, in, 1)
}

// conv2dGeometry is the geometry of the ONNX backend test
// pytorch-converted/test_Conv2d (nn.Conv2d(3, 4, (3, 2)) on an input of
// 2×3×7×5, output 2×4×5×4, as its model.onnx and test_data_set_0
// declare), followed by sum for a scalar output; weights and input are
// float32 values drawn here (the model's own values need the onnx reader).
func conv2dGeometry(t testing.TB) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := rand.New(rand.NewPCG(11, 2))
	in := sh(2, 3, 7, 5)
	b := newBuilder(in)
	c, _ := b.convNode(t, r, 0, in, 4, 3, 2, 0)
	b.add(irsem.OpSum, []int{c}, sh())
	g, p := b.graph()
	return g, p, *f32Tensor(t, r, in, 1)
}

// BenchmarkGradCNN is the exact gradient (tape path) of smallCNN and of
// the test_Conv2d geometry over Rat, side by side with F64 and F32.
func BenchmarkGradCNN(b *testing.B) {
	for _, m := range []struct {
		name  string
		model func(testing.TB) (*irsem.Graph, *irsem.Payload, irsem.RatTensor)
	}{{"cnn32", smallCNN}, {"test_Conv2d", conv2dGeometry}} {
		g, p, x := m.model(b)
		b.Run(m.name+"/f64", func(b *testing.B) { benchGrad[spec.F64](b, g, p, x) })
		b.Run(m.name+"/f32", func(b *testing.B) { benchGrad[spec.F32](b, g, p, x) })
		b.Run(m.name+"/rat", func(b *testing.B) { benchGrad[spec.Rat](b, g, p, x) })
	}
}
