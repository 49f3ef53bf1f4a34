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
