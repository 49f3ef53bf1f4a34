package typedgraph

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
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

// kernelCase is one primitive application that has a planned kernel.
type kernelCase struct {
	op    string
	attrs *spec.Attrs
}

// kernelCases lists every primitive of the reference registry over T that
// is planned (every elementwise primitive, by its registry scalar rule,
// plus sum, mse_loss and, except over Interval, linear), with attribute variants where the
// primitive reads attributes. It fails the test when an elementwise
// primitive is not planned: the elementwise kernels are derived from the
// registry, so all of them must exist.
func kernelCases[T spec.Scalar[T]](t *testing.T) []kernelCase {
	t.Helper()
	reg := spec.Default[T]()
	var out []kernelCase
	for _, name := range reg.Names() {
		p, _ := reg.Lookup(name)
		switch {
		case p.Unary != nil || p.Binary != nil:
		case name == "sum" || name == "mse_loss":
		case name == "linear" && spec.KindOf[T]() != "interval":
			// Over Interval linear runs its registry rule (the dense
			// kernels of package enclose), not a planned kernel.
		default:
			continue
		}
		switch name {
		case "scale":
			out = append(out, kernelCase{name, &spec.Attrs{C: big.NewRat(-7, 3)}}, kernelCase{name, nil})
		case "clamp":
			out = append(out, kernelCase{name, &spec.Attrs{Lo: big.NewRat(-1, 1), Hi: big.NewRat(1, 1)}},
				kernelCase{name, &spec.Attrs{Lo: big.NewRat(1, 2), Hi: big.NewRat(1, 2)}})
		case "safe_log":
			out = append(out, kernelCase{name, &spec.Attrs{Eps: big.NewRat(1, 3)}}, kernelCase{name, nil})
		case "trunc_int":
			lo, hi := spec.IntTypeRange(8, true)
			out = append(out, kernelCase{name, &spec.Attrs{Lo: lo, Hi: hi}})
		case "quant_int":
			// UINT8 with ONNX's usual zero point 128, and INT8 with a
			// negative zero point and a scale above 1.
			ulo, uhi := spec.IntTypeRange(8, false)
			lo, hi := spec.IntTypeRange(8, true)
			out = append(out, kernelCase{name, &spec.Attrs{C: big.NewRat(1, 4), Bias: big.NewRat(128, 1), Lo: ulo, Hi: uhi}},
				kernelCase{name, &spec.Attrs{C: big.NewRat(3, 2), Bias: big.NewRat(-3, 1), Lo: lo, Hi: hi}})
		default:
			out = append(out, kernelCase{name, nil})
		}
	}
	if len(out) < 25 {
		t.Fatalf("only %d planned primitives over %s", len(out), spec.KindOf[T]())
	}
	return out
}

// kernelNode appends op over fresh context inputs of the given shapes and
// returns the node and its planned kernel (failing when it has none).
func kernelNode[T spec.Scalar[T]](t *testing.T, c kernelCase, shapes []spec.Shape) (*Node[T], *kernel[T]) {
	t.Helper()
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
		t.Fatalf("%s%v: %v", c.op, shapes, err)
	}
	n, _ := g.Node(id)
	kn := kernelFor(n)
	if kn == nil {
		t.Fatalf("%s over %s: no planned kernel", c.op, spec.KindOf[T]())
	}
	return n, kn
}

// errText is an error's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// checkKernel runs node n's registry rule (Forward, then VJP at the
// rule's own output) and the planned kernel kn on the same arguments and
// cotangent, and reports the first difference under same: a value, a
// contribution (stale buffer contents must be overwritten), or whether
// and how either failed (the kernel must fail exactly where the rule
// does, with the rule's message).
func checkKernel[T spec.Scalar[T]](n *Node[T], kn *kernel[T], xs []spec.Tensor[T], dy spec.Tensor[T], same func(a, b []T) bool, stale T) error {
	want, werr := n.prim.Forward(n.attrs, xs)
	got := make([]T, n.shape.Size())
	gerr := kn.fwd(got, xs)
	if errText(werr) != errText(gerr) {
		return fmt.Errorf("%s forward: kernel error %q, rule error %q (inputs %v)", n.op, errText(gerr), errText(werr), xs)
	}
	if werr != nil {
		return nil
	}
	if !same(want.Data, got) {
		return fmt.Errorf("%s forward: kernel %v, rule %v (inputs %v)", n.op, got, want.Data, xs)
	}
	gw, werr := n.prim.VJP(n.attrs, xs, want, dy)
	gs := make([][]T, len(xs))
	for j := range xs {
		gs[j] = make([]T, xs[j].Len())
		for i := range gs[j] {
			gs[j][i] = stale
		}
	}
	gerr = kn.vjp(gs, xs, got, dy.Data)
	if errText(werr) != errText(gerr) {
		return fmt.Errorf("%s vjp: kernel error %q, rule error %q (inputs %v, δ %v)", n.op, errText(gerr), errText(werr), xs, dy.Data)
	}
	if werr != nil {
		return nil
	}
	for j := range gs {
		if !gw[j].Shape.Equal(xs[j].Shape) || !same(gw[j].Data, gs[j]) {
			return fmt.Errorf("%s vjp %d: kernel %v, rule %v (inputs %v, δ %v)", n.op, j, gs[j], gw[j].Data, xs, dy.Data)
		}
	}
	return nil
}

// Every planned kernel computes its registry rule's value and
// contributions bit for bit, on random draws mixed with special values.
func testKernels[T spec.Scalar[T]](t *testing.T, from func(float64) T) {
	r := rand.New(rand.NewPCG(77, 1))
	for _, c := range kernelCases[T](t) {
		for rep := 0; rep < 200; rep++ {
			var shapes []spec.Shape
			s := spec.Shape{r.IntN(4), 1 + r.IntN(3)}
			p, _ := spec.Default[T]().Lookup(c.op)
			switch {
			case p.Binary != nil || c.op == "mse_loss":
				shapes = []spec.Shape{s, s}
			case c.op == "linear":
				out, in := r.IntN(4), r.IntN(4)
				x := spec.Shape{r.IntN(3), in}
				if r.IntN(2) == 0 {
					x = spec.Shape{in}
				}
				shapes = []spec.Shape{x, {out, in}, {out}}
			default:
				shapes = []spec.Shape{s}
			}
			n, kn := kernelNode[T](t, c, shapes)
			xs := make([]spec.Tensor[T], len(shapes))
			for i, sh := range shapes {
				xs[i] = drawTensor(r, sh, from)
			}
			dy := drawTensor(r, n.shape, from)
			if err := checkKernel(n, kn, xs, dy, sameUpToNaN[T], from(42)); err != nil {
				t.Fatal(err)
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

// kinkPrimals are the primal values where elementwise rules branch or
// have kinks: 0 and −0 (relu, abs, sqrt, sign, step, the sign-split
// sigmoid and softplus), ±1 and 1/2 (the clamp bounds of kernelCases),
// and values on both sides of them. Binary primitives get every pair, so
// ties (max, min at a = b) are covered.
var kinkPrimals = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 2, -2, 1.0 / 3, -0.25}

// testKernelSpecials compares every planned kernel with its registry rule
// on the special values vals: a unary primitive on all of them at once, a
// binary primitive on every ordered pair, sum, mse_loss and linear on
// tensors cut from them. The cotangent cycles through vals too.
func testKernelSpecials[T spec.Scalar[T]](t *testing.T, vals []T, same func(a, b []T) bool) {
	t.Helper()
	cut := func(s spec.Shape, off int) spec.Tensor[T] {
		x := spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
		for i := range x.Data {
			x.Data[i] = vals[(off+i)%len(vals)]
		}
		return x
	}
	nv := len(vals)
	for _, c := range kernelCases[T](t) {
		p, _ := spec.Default[T]().Lookup(c.op)
		var xs []spec.Tensor[T]
		switch {
		case p.Unary != nil:
			xs = []spec.Tensor[T]{cut(spec.Shape{nv}, 0)}
		case p.Binary != nil:
			a := spec.Tensor[T]{Shape: spec.Shape{nv * nv}, Data: make([]T, nv*nv)}
			b := spec.Tensor[T]{Shape: spec.Shape{nv * nv}, Data: make([]T, nv*nv)}
			for i := range a.Data {
				a.Data[i], b.Data[i] = vals[i/nv], vals[i%nv]
			}
			xs = []spec.Tensor[T]{a, b}
		case c.op == "sum":
			xs = []spec.Tensor[T]{cut(spec.Shape{2, nv}, 0)}
		case c.op == "mse_loss":
			xs = []spec.Tensor[T]{cut(spec.Shape{nv}, 0), cut(spec.Shape{nv}, 3)}
		case c.op == "linear":
			xs = []spec.Tensor[T]{cut(spec.Shape{2, 3}, 0), cut(spec.Shape{4, 3}, 5), cut(spec.Shape{4}, 2)}
		default:
			t.Fatalf("%s: no special-value inputs", c.op)
		}
		shapes := make([]spec.Shape, len(xs))
		for i := range xs {
			shapes[i] = xs[i].Shape
		}
		n, kn := kernelNode[T](t, c, shapes)
		for off := 0; off < 2; off++ {
			if err := checkKernel(n, kn, xs, cut(n.shape, off+1), same, vals[0].FromInt(42)); err != nil {
				t.Fatalf("over %s: %v", spec.KindOf[T](), err)
			}
		}
	}
}

// dualsOf pairs every kink primal with the tangents 1 and −3.
func dualsOf[T spec.Scalar[T]](from func(float64) T) []spec.Dual[T] {
	var out []spec.Dual[T]
	for _, du := range []float64{1, -3} {
		for _, re := range kinkPrimals {
			out = append(out, spec.MakeDual(from(re), from(du)))
		}
	}
	return out
}

func ratOf(f float64) spec.Rat {
	r, err := spec.RatFromFloat64(f)
	if err != nil {
		panic(err) // kinkPrimals are finite
	}
	return r
}

// sameExactly is Same element by element.
func sameExactly[T spec.Scalar[T]](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Same(b[i]) {
			return false
		}
	}
	return true
}

// sameDualUpToNaN is sameUpToNaN on both parts of a Dual.
func sameDualUpToNaN(a, b []spec.Dual[spec.F64]) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameUpToNaN([]spec.F64{a[i].Re, a[i].Du}, []spec.F64{b[i].Re, b[i].Du}) {
			return false
		}
	}
	return true
}

// intervalSpecials are points at the kinks and intervals that straddle
// them, touch them or tie with each other.
func intervalSpecials() []spec.Interval {
	out := []spec.Interval{{Lo: -1, Hi: 1}, {Lo: 0, Hi: 2}, {Lo: -2, Hi: 0}, {Lo: 0.5, Hi: 3}, {Lo: -3, Hi: -0.5}, {Lo: 1.0 / 3, Hi: 1.0 / 3}}
	for _, f := range kinkPrimals {
		out = append(out, spec.Point(f))
	}
	return out
}

func TestKernelsMatchRulesOnSpecials(t *testing.T) {
	f64 := func(f float64) spec.F64 { return spec.F64(f) }
	t.Run("dual-f64", func(t *testing.T) { testKernelSpecials(t, dualsOf(f64), sameDualUpToNaN) })
	t.Run("dual-rat", func(t *testing.T) { testKernelSpecials(t, dualsOf(ratOf), sameExactly[spec.Dual[spec.Rat]]) })
	t.Run("interval", func(t *testing.T) { testKernelSpecials(t, intervalSpecials(), sameExactly[spec.Interval]) })
	t.Run("f32", func(t *testing.T) {
		var vs []spec.F32
		for _, f := range append(kinkPrimals, specials...) {
			vs = append(vs, spec.F32(float32(f)))
		}
		testKernelSpecials(t, vs, sameUpToNaN[spec.F32])
	})
	t.Run("rat", func(t *testing.T) {
		var vs []spec.Rat
		for _, f := range kinkPrimals {
			vs = append(vs, ratOf(f))
		}
		testKernelSpecials(t, vs, sameExactly[spec.Rat])
	})
}

// The special-value comparison catches the divergence this package once
// had: relu planned as x.Max(0), whose Dual tangent at x = 0 is the tie
// average 0.5·dx, where the registry's relu (relu'(0) = 0) gives 0; over
// Interval the same plant is caught nowhere (Max and Relu agree there),
// which is why the comparison runs over Dual.
func TestKernelCheckCatchesReluAsMax(t *testing.T) {
	planted := func() *kernel[spec.Dual[spec.F64]] {
		var z spec.Dual[spec.F64]
		zero := z.FromInt(0)
		return &kernel[spec.Dual[spec.F64]]{
			fwd: func(dst []spec.Dual[spec.F64], xs []spec.Tensor[spec.Dual[spec.F64]]) error {
				for i, x := range xs[0].Data {
					dst[i] = x.Max(zero)
				}
				return nil
			},
			vjp: func(gs [][]spec.Dual[spec.F64], xs []spec.Tensor[spec.Dual[spec.F64]], _, dy []spec.Dual[spec.F64]) error {
				for i, x := range xs[0].Data {
					gs[0][i] = x.Step().Mul(dy[i])
				}
				return nil
			},
		}
	}
	vals := dualsOf(func(f float64) spec.F64 { return spec.F64(f) })
	x := spec.Tensor[spec.Dual[spec.F64]]{Shape: spec.Shape{len(vals)}, Data: vals}
	n, _ := kernelNode[spec.Dual[spec.F64]](t, kernelCase{"relu", nil}, []spec.Shape{x.Shape})
	err := checkKernel(n, planted(), []spec.Tensor[spec.Dual[spec.F64]]{x}, x, sameDualUpToNaN, vals[0])
	if err == nil || !strings.Contains(err.Error(), "relu forward") {
		t.Fatalf("relu planned as max(x, 0) not caught over Dual: %v", err)
	}
	// And the tangent at 0 is indeed the tie average under the plant.
	var z spec.Dual[spec.F64]
	if got := spec.MakeDual[spec.F64](0, 1).Max(z.FromInt(0)); got.Du != 0.5 {
		t.Fatalf("Max tie tangent %v, expected 0.5", got.Du)
	}
	if got := spec.MakeDual[spec.F64](0, 1).Relu(); got.Du != 0 {
		t.Fatalf("Relu tangent at 0 %v, expected 0", got.Du)
	}
}
