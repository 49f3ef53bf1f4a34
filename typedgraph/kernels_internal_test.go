package typedgraph

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// specials are the values where a reordered or fused float kernel would
// show: signed zeros, infinities, NaN, huge and tiny magnitudes.
var specials = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1.0 / 3, math.Inf(1), math.Inf(-1), math.NaN(), 3e38, -3e38, 1e-45, 1.5e-39, 65504, 1 << 24, 1e308}

func drawFloat(r *rand.Rand) float64 {
	if r.IntN(3) == 0 {
		return specials[r.IntN(len(specials))]
	}
	return r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
}

func drawTensor[T spec.Scalar[T]](r *rand.Rand, s spec.Shape, from func(float64) T) spec.Tensor[T] {
	t := spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
	for i := range t.Data {
		t.Data[i] = from(drawFloat(r))
	}
	return t
}

// sameUpToNaN is bit equality, except that any NaN equals any NaN: Go
// does not specify which operand's NaN a float operation propagates (the
// compiler may swap the operands of a commutative instruction), so NaN
// payloads and signs are not reproducible between two compilations of the
// same expression — the registry rule's own included.
func sameUpToNaN[T spec.Scalar[T]](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Same(b[i]) {
			continue
		}
		if fa, fb := a[i].Float64(), b[i].Float64(); fa != fa && fb != fb {
			continue
		}
		return false
	}
	return true
}

// Every planned kernel computes its registry rule's value and
// contributions bit for bit, on special values too.
func testKernels[T spec.Scalar[T]](t *testing.T, from func(float64) T) {
	r := rand.New(rand.NewPCG(77, 1))
	cases := []struct {
		op    string
		attrs *spec.Attrs
		in    func() []spec.Shape
	}{
		{"add", nil, nil}, {"sub", nil, nil}, {"mul", nil, nil},
		{"neg", nil, nil}, {"square", nil, nil}, {"relu", nil, nil}, {"sum", nil, nil},
		{"scale", &spec.Attrs{C: big.NewRat(-7, 3)}, nil}, {"scale", nil, nil},
		{"mse_loss", nil, nil}, {"linear", nil, nil},
	}
	for _, c := range cases {
		for rep := 0; rep < 200; rep++ {
			var shapes []spec.Shape
			s := spec.Shape{r.IntN(4), 1 + r.IntN(3)}
			switch c.op {
			case "add", "sub", "mul", "mse_loss":
				shapes = []spec.Shape{s, s}
			case "linear":
				out, in := r.IntN(4), r.IntN(4)
				x := spec.Shape{r.IntN(3), in}
				if r.IntN(2) == 0 {
					x = spec.Shape{in}
				}
				shapes = []spec.Shape{x, {out, in}, {out}}
			default:
				shapes = []spec.Shape{s}
			}
			g, err := New[T](nil, shapes...)
			if err != nil {
				t.Fatal(err)
			}
			ins := make([]int, len(shapes))
			for i := range ins {
				ins[i] = i
			}
			id, err := g.AppendInferred(c.op, c.attrs, ins)
			if err != nil {
				t.Fatal(err)
			}
			n, _ := g.Node(id)
			kn := kernelFor(n)
			if kn == nil {
				t.Fatalf("%s: no kernel", c.op)
			}
			xs := make([]spec.Tensor[T], len(shapes))
			for i, sh := range shapes {
				xs[i] = drawTensor(r, sh, from)
			}
			want, err := n.prim.Forward(n.attrs, xs)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]T, n.shape.Size())
			if err := kn.fwd(got, xs); err != nil {
				t.Fatal(err)
			}
			if !sameUpToNaN(want.Data, got) {
				t.Fatalf("%s%v forward: kernel %v, rule %v (inputs %v)", c.op, shapes, got, want, xs)
			}
			dy := drawTensor(r, n.shape, from)
			gw, err := n.prim.VJP(n.attrs, xs, want, dy)
			if err != nil {
				t.Fatal(err)
			}
			gs := make([][]T, len(shapes))
			for j, sh := range shapes {
				gs[j] = make([]T, sh.Size())
				for i := range gs[j] {
					gs[j][i] = from(42) // stale contents must be overwritten
				}
			}
			kn.vjp(gs, xs, got, dy.Data)
			for j := range gs {
				if !gw[j].Shape.Equal(shapes[j]) || !sameUpToNaN(gw[j].Data, gs[j]) {
					t.Fatalf("%s%v vjp %d: kernel %v, rule %v", c.op, shapes, j, gs[j], gw[j])
				}
			}
		}
	}
}

func TestKernelsMatchRulesF32(t *testing.T) {
	testKernels(t, func(f float64) spec.F32 { return spec.F32(float32(f)) })
}

func TestKernelsMatchRulesF64(t *testing.T) {
	testKernels(t, func(f float64) spec.F64 { return spec.F64(f) })
}

func TestKernelsMatchRulesRat(t *testing.T) {
	testKernels(t, func(f float64) spec.Rat {
		r, err := spec.RatFromFloat64(f)
		if err != nil {
			return spec.NewRat(int64(len(specials)), 7) // non-finite: some rational
		}
		return r
	})
}

// A private registry (for example with a planted fault) is never
// bypassed by a kernel.
func TestNoKernelForPrivateRegistry(t *testing.T) {
	g, _ := New(spec.New[spec.F32](), spec.Shape{2})
	id, _ := g.AppendInferred("neg", nil, []int{0})
	n, _ := g.Node(id)
	if kernelFor(n) != nil {
		t.Fatal("kernel planned for a private registry's node")
	}
}

// TestMatmulKernelMatchesRule: the fastcpu-backed F32 matmul kernel gives
// the registry rule's bits (forward and both VJP contributions) on 2-D
// operands of many sizes, including ones that cross fastcpu's blocking
// and special values, and falls back to the rule for 1-D and batched
// operands.
func TestMatmulKernelMatchesRule(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	from := func(f float64) spec.F32 { return spec.F32(float32(f)) }
	dims := []int{0, 1, 2, 3, 7, 8, 9, 17, 33, 65}
	cases := [][2]spec.Shape{{{3}, {3, 4}}, {{2, 3}, {3}}, {{2, 2, 3}, {3, 4}}}
	for i := 0; i < 60; i++ {
		m, k, n := dims[r.IntN(len(dims))], dims[r.IntN(len(dims))], dims[r.IntN(len(dims))]
		cases = append(cases, [2]spec.Shape{{m, k}, {k, n}})
	}
	for _, sh := range cases {
		g, err := New[spec.F32](nil, sh[0], sh[1])
		if err != nil {
			t.Fatal(err)
		}
		id, err := g.AppendInferred("matmul", nil, []int{0, 1})
		if err != nil {
			t.Fatal(err)
		}
		nd, _ := g.Node(id)
		kn := kernelFor(nd)
		if kn == nil {
			t.Fatal("no matmul kernel over F32")
		}
		xs := []spec.Tensor[spec.F32]{drawTensor(r, sh[0], from), drawTensor(r, sh[1], from)}
		want, err := nd.prim.Apply(nil, xs)
		if err != nil {
			t.Fatal(err)
		}
		got := make([]spec.F32, want.Len())
		if err := kn.fwd(got, xs); err != nil {
			t.Fatal(err)
		}
		if !sameUpToNaN(want.Data, got) {
			t.Fatalf("%v·%v forward differs from the rule", sh[0], sh[1])
		}
		dy := drawTensor(r, want.Shape, from)
		gw, _ := nd.prim.VJP(nil, xs, want, dy)
		gs := [][]spec.F32{make([]spec.F32, xs[0].Len()), make([]spec.F32, xs[1].Len())}
		for _, gsj := range gs {
			for i := range gsj {
				gsj[i] = 42
			}
		}
		kn.vjp(gs, xs, got, dy.Data)
		for j := range gs {
			if !sameUpToNaN(gw[j].Data, gs[j]) {
				t.Fatalf("%v·%v vjp %d differs from the rule", sh[0], sh[1], j)
			}
		}
	}
	if kernelFor(mustMatmulNode[spec.F64](t)) != nil {
		t.Fatal("the fastcpu kernel is float32-only")
	}
}

func mustMatmulNode[T spec.Scalar[T]](t *testing.T) *Node[T] {
	g, _ := New[T](nil, spec.Shape{2, 2}, spec.Shape{2, 2})
	id, err := g.AppendInferred("matmul", nil, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	n, _ := g.Node(id)
	return n
}
