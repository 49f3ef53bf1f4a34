package irgrad

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/typedgraph"
)

func lower[T spec.Scalar[T]](t *testing.T, c zooCase) *Lowered[T] {
	t.Helper()
	l, err := Lower[T](nil, c.g, c.p)
	if err != nil {
		t.Fatalf("%s over %s: %v", c.name, spec.KindOf[T](), err)
	}
	return l
}

// TestChapterGradients reproduces the chapter's gradients exactly over Rat
// through every path: (12, −6) for x⊙x + x⊙x and (6, −3) with the second
// product detached, with ℓ = 45/2.
func TestChapterGradients(t *testing.T) {
	x := exampleTensor(t, "quad.input.json")
	for _, c := range []struct {
		file string
		want []string
	}{{"quad.ir.json", []string{"12", "-6"}}, {"quad-detach.ir.json", []string{"6", "-3"}}} {
		g := exampleGraph(t, c.file)
		for _, path := range Paths() {
			gr, params, err := Grad(g, nil, x, path)
			if err != nil {
				t.Fatalf("%s/%s: %v", c.file, path, err)
			}
			if len(params) != 0 || len(gr.Params) != 0 {
				t.Errorf("%s/%s: %d params", c.file, path, len(params))
			}
			if want := rt(t, sh(), "45/2"); !spec.SameTensor(gr.Output, want) {
				t.Errorf("%s/%s: loss %v, want 45/2", c.file, path, gr.Output)
			}
			if want := rt(t, sh(2), c.want...); !spec.SameTensor(gr.Input, want) {
				t.Errorf("%s/%s: grad %v, want %v", c.file, path, gr.Input, want)
			}
		}
	}
}

// TestMLPGradientHandDerived checks the gradient of the example MLP's
// output y = W2·relu(W1·x + b1) + b2 with respect to x, W1, b1, W2, b2
// against the closed form, computed here with big.Rat independently of
// the registry: dh = W2ᵀ ⊙ [h > 0], db1 = dh, dW1 = dh ⊗ x, dx = W1ᵀ·dh,
// dW2 = relu(h), db2 = 1.
func TestMLPGradientHandDerived(t *testing.T) {
	g, p := exampleGraph(t, "mlp.ir.json"), examplePayload(t, "mlp.payload.json")
	x := exampleTensor(t, "mlp.input.json")
	W1, b1 := p.Entry(1).W.Data, p.Entry(1).B.Data
	W2, b2 := p.Entry(3).W.Data, p.Entry(3).B.Data
	r := func(v spec.Rat) *big.Rat { return v.Big() }
	const hid, in = 8, 2
	h := make([]*big.Rat, hid)
	a := make([]*big.Rat, hid)
	dh := make([]*big.Rat, hid)
	y := r(b2[0])
	for j := 0; j < hid; j++ {
		h[j] = r(b1[j])
		for k := 0; k < in; k++ {
			h[j].Add(h[j], new(big.Rat).Mul(r(W1[j*in+k]), r(x.Data[k])))
		}
		a[j] = new(big.Rat)
		dh[j] = new(big.Rat)
		if h[j].Sign() > 0 {
			a[j].Set(h[j])
			dh[j].Set(r(W2[j]))
		}
		y.Add(y, new(big.Rat).Mul(r(W2[j]), a[j]))
	}
	dx := make([]*big.Rat, in)
	for k := 0; k < in; k++ {
		dx[k] = new(big.Rat)
		for j := 0; j < hid; j++ {
			dx[k].Add(dx[k], new(big.Rat).Mul(r(W1[j*in+k]), dh[j]))
		}
	}
	dW1 := make([]*big.Rat, hid*in)
	for j := 0; j < hid; j++ {
		for k := 0; k < in; k++ {
			dW1[j*in+k] = new(big.Rat).Mul(dh[j], r(x.Data[k]))
		}
	}
	ten := func(s spec.Shape, vs []*big.Rat) spec.Tensor[spec.Rat] {
		d := make([]spec.Rat, len(vs))
		for i, v := range vs {
			d[i] = spec.RatFromBig(v)
		}
		return spec.Tensor[spec.Rat]{Shape: s, Data: d}
	}
	wantNames := []string{"node1.W", "node1.b", "node3.W", "node3.b"}
	want := []spec.Tensor[spec.Rat]{ten(sh(8, 2), dW1), ten(sh(8), dh), ten(sh(1, 8), a), ten(sh(1), []*big.Rat{big.NewRat(1, 1)})}
	l := lower[spec.Rat](t, zooCase{name: "mlp", g: g, p: p})
	for i, prm := range l.Params {
		if prm.Name != wantNames[i] {
			t.Fatalf("param %d is %q, want %q", i, prm.Name, wantNames[i])
		}
	}
	for _, path := range Paths() {
		gr, err := l.Grad(path, x)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := gr.Output.Data[0].Big(); got.Cmp(y) != 0 {
			t.Errorf("%s: y = %v, want %v", path, got, y)
		}
		if !spec.SameTensor(gr.Input, ten(sh(2), dx)) {
			t.Errorf("%s: dx = %v, want %v", path, gr.Input, dx)
		}
		for i := range want {
			if !spec.SameTensor(gr.Params[i], want[i]) {
				t.Errorf("%s: d%s = %v, want %v", path, wantNames[i], gr.Params[i], want[i])
			}
		}
	}
	// JacRev over the lowered typed graph agrees (one VJP per output
	// coordinate; the output has one).
	ctx, err := l.Context(x)
	if err != nil {
		t.Fatal(err)
	}
	jac, err := typedgraph.JacRevGraph(l.Graph, ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.SameTensor(jac[1], spec.Tensor[spec.Rat]{Shape: sh(1, 8, 2), Data: want[0].Data}) {
		t.Errorf("JacRev dW1 = %v", jac[1])
	}
}

// checkValues compares the typed graph's and the tape's value tables with
// DenoteAll's, node by node.
func checkValues[T spec.Scalar[T]](t *testing.T, c zooCase) {
	t.Helper()
	x := irsem.ConvertTensor[T](c.x)
	want, err := irsem.DenoteAll(c.g, c.p, x)
	if err != nil {
		t.Fatalf("%s: DenoteAll over %s: %v", c.name, spec.KindOf[T](), err)
	}
	l := lower[T](t, c)
	for _, tc := range []struct {
		name string
		f    func(spec.Tensor[T]) ([]spec.Tensor[T], error)
	}{{"typed-graph", l.Values}, {"tape", l.TapeValues}} {
		got, err := tc.f(x)
		if err != nil {
			t.Fatalf("%s %s over %s: %v", c.name, tc.name, spec.KindOf[T](), err)
		}
		for i := range want {
			if !spec.SameTensor(got[i], want[i]) {
				t.Errorf("%s %s over %s: node %d (%s): %v, DenoteAll %v", c.name, tc.name, spec.KindOf[T](), i, c.g.Nodes[i].Kind.Op, got[i], want[i])
			}
		}
	}
}

// TestForwardMatchesDenote: the lowered typed graph and the directly
// recorded tape compute DenoteAll's value at every node — exactly over
// Rat, bit for bit over F32, F64 and Binary32, endpoint for endpoint over
// Interval.
func TestForwardMatchesDenote(t *testing.T) {
	for _, c := range zoo(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.exact {
				checkValues[spec.Rat](t, c)
			}
			checkValues[spec.F32](t, c)
			checkValues[spec.F64](t, c)
			checkValues[spec.Binary32](t, c)
			checkValues[spec.Interval](t, c)
		})
	}
}

// seedFor returns a fixed non-trivial cotangent of shape s.
func seedFor[T spec.Scalar[T]](s spec.Shape) spec.Tensor[T] {
	v := spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
	for i := range v.Data {
		v.Data[i] = spec.ConstRat[T](int64(i%5)-2, int64(1+i%3))
	}
	if len(v.Data) == 1 {
		v.Data[0] = spec.One[T]()
	}
	return v
}

func sameGrads[T spec.Scalar[T]](a, b *Gradients[T]) error {
	if !spec.SameTensor(a.Output, b.Output) {
		return fmt.Errorf("output %v vs %v", a.Output, b.Output)
	}
	if !spec.SameTensor(a.Input, b.Input) {
		return fmt.Errorf("input cotangent %v vs %v", a.Input, b.Input)
	}
	for i := range a.Params {
		if !spec.SameTensor(a.Params[i], b.Params[i]) {
			return fmt.Errorf("param %d cotangent %v vs %v", i, a.Params[i], b.Params[i])
		}
	}
	return nil
}

// TestPathsAgree: every path gives the same output and cotangents —
// exactly over Rat, and bit for bit over F64 and F32 for the tape, the
// typed graph and the lowered tape (these graphs have no singular point;
// see TestSingularPointBehindDetach).
func TestPathsAgree(t *testing.T) {
	for _, c := range zoo(t) {
		t.Run(c.name, func(t *testing.T) {
			if c.exact {
				agree[spec.Rat](t, c, Paths())
			}
			dense := []Path{PathTape, PathTypedGraph, PathLoweredTape}
			agree[spec.F64](t, c, dense)
			agree[spec.F32](t, c, dense)
		})
	}
}

func agree[T spec.Scalar[T]](t *testing.T, c zooCase, paths []Path) {
	t.Helper()
	l := lower[T](t, c)
	x := irsem.ConvertTensor[T](c.x)
	seed := seedFor[T](l.OutputShape())
	var first *Gradients[T]
	for _, path := range paths {
		gr, err := l.VJP(path, x, seed)
		if err != nil {
			t.Fatalf("%s over %s: %v", path, spec.KindOf[T](), err)
		}
		if len(gr.Params) != len(l.Params) {
			t.Fatalf("%s: %d param cotangents for %d params", path, len(gr.Params), len(l.Params))
		}
		for i, prm := range l.Params {
			if !gr.Params[i].Shape.Equal(prm.Shape) {
				t.Errorf("%s: %s cotangent shape %v, want %v", path, prm.Name, gr.Params[i].Shape, prm.Shape)
			}
		}
		if first == nil {
			first = gr
			continue
		}
		if err := sameGrads(first, gr); err != nil {
			t.Errorf("%s vs %s over %s: %v", first.Path, path, spec.KindOf[T](), err)
		}
	}
}

// TestGraphTheorem checks the composed adjointness law over Rat on the
// lowered graphs: dot(JVP(x; dx), δ) = Σ dot(dx_i, VJP(x; δ)_i), for a
// fixed rational direction over the whole context.
func TestGraphTheorem(t *testing.T) {
	for _, c := range zoo(t) {
		if !c.exact {
			continue
		}
		l := lower[spec.Rat](t, c)
		x := c.x
		ctx, err := l.Context(x)
		if err != nil {
			t.Fatal(err)
		}
		dx := make([]spec.Tensor[spec.Rat], len(ctx))
		for i, v := range ctx {
			dx[i] = seedFor[spec.Rat](v.Shape)
			for j := range dx[i].Data {
				dx[i].Data[j] = dx[i].Data[j].Add(spec.NewRat(int64(i+j%4), 7))
			}
		}
		tan, err := l.Graph.JVPCtx(ctx, dx)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		r, _ := l.Graph.Result()
		seed := seedFor[spec.Rat](l.OutputShape())
		lhs, err := spec.Dot(tan[r], seed)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := l.VJP(PathTape, x, seed)
		if err != nil {
			t.Fatal(err)
		}
		rhs, err := spec.DotList(dx, append([]spec.Tensor[spec.Rat]{gr.Input}, gr.Params...))
		if err != nil {
			t.Fatal(err)
		}
		if !lhs.Same(rhs) {
			t.Errorf("%s: ⟨J·dx, δ⟩ = %v but ⟨dx, Jᵀ·δ⟩ = %v", c.name, lhs, rhs)
		}
	}
}

// TestFiniteDifferences checks the smooth graph's gradient over F64
// against central differences of DenoteAll (a reference independent of
// every VJP rule).
func TestFiniteDifferences(t *testing.T) {
	for _, c := range zoo(t) {
		if c.name != "smooth" && c.name != "layernorm-exact" && c.name != "mlp" {
			continue
		}
		l := lower[spec.F64](t, c)
		x := irsem.ConvertTensor[spec.F64](c.x)
		gr, err := l.Grad(PathTape, x)
		if err != nil {
			t.Fatal(err)
		}
		f := func(v spec.Tensor[spec.F64]) float64 {
			y, err := irsem.Denote(c.g, c.p, v)
			if err != nil {
				t.Fatal(err)
			}
			return float64(y.Data[0])
		}
		const h = 1e-6
		for i := range x.Data {
			xp, xm := x.Clone(), x.Clone()
			xp.Data[i] += h
			xm.Data[i] -= h
			fd := (f(xp) - f(xm)) / (2 * h)
			got := float64(gr.Input.Data[i])
			if math.Abs(fd-got) > 1e-5*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s: d/dx[%d]: finite difference %g, gradient %g", c.name, i, fd, got)
			}
		}
	}
}

// TestErrors: tags without derivative rules, inexact tags over Rat,
// non-scalar outputs, bad inputs, seeds and paths are errors naming the
// node.
func TestErrors(t *testing.T) {
	// hard_masked_softmax is a registry primitive now: it lowers.
	hms := func() *irsem.Graph {
		b := newBuilder(sh(1, 4))
		b.add(irsem.OpHardMaskedSoftmax, []int{0}, sh(1, 4), func(k *irsem.Kind) {
			k.Mask = &irsem.HardMask{Shape: sh(1, 4), Allowed: []bool{true, false, true, true}}
		})
		g, _ := b.graph()
		return g
	}
	b := newBuilder(sh(2))
	b.add(irsem.OpExp, []int{0}, sh(2))
	b.add(irsem.OpSum, []int{1}, sh())
	expG, _ := b.graph()
	b = newBuilder(sh(2))
	q := b.konst(t, sh(), "1/2")
	b.add(irsem.OpBernoulliMask, []int{q}, sh(2), func(k *irsem.Kind) { k.Seed = 3 })
	bmG, bmP := b.graph()

	if err := lowerErr[spec.F64](hms(), nil); err != nil {
		t.Errorf("hard_masked_softmax: %v, want it lowered to the registry's primitive", err)
	}
	// bernoulli_mask is the registry's keep_mask now: it lowers (its
	// gradient is zero by definition).
	if err := lowerErr[spec.F64](bmG, bmP); err != nil {
		t.Errorf("bernoulli_mask: %v, want it lowered to the registry's keep_mask", err)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		// Lower serves forward evaluation too: its error says what is
		// missing (a registry primitive), not that a gradient failed.
		{"exp over rat", lowerErr[spec.Rat](expG, nil), "node 1 (exp): exp has no exact rational semantics"},
		{"missing payload", lowerErr[spec.Rat](exampleGraph(t, "mlp.ir.json"), nil), "node 1 (linear): missing linear payload"},
	} {
		if c.err == nil || c.err.Error() != c.want && !strings.HasPrefix(c.err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, c.err, c.want)
		}
		var e *irsem.Error
		if c.err != nil && !errors.As(c.err, &e) {
			t.Errorf("%s: %T is not an *irsem.Error", c.name, c.err)
		}
	}

	l, err := Lower[spec.Rat](nil, exampleGraph(t, "quad.ir.json"), nil)
	if err != nil {
		t.Fatal(err)
	}
	x := exampleTensor(t, "quad.input.json")
	if _, err := l.Grad(PathTape, rt(t, sh(3), "1", "2", "3")); err == nil || !strings.Contains(err.Error(), "node 0 (input): shape mismatch: expected [2], got [3]") {
		t.Errorf("wrong input: %v", err)
	}
	if _, err := l.VJP(PathTape, x, rt(t, sh(2), "1", "1")); err == nil || !strings.Contains(err.Error(), "node 4 (sum): seed shape mismatch") {
		t.Errorf("wrong seed: %v", err)
	}
	if _, err := l.Grad("jit", x); err == nil || !strings.Contains(err.Error(), `unknown differentiation path "jit"`) {
		t.Errorf("unknown path: %v", err)
	}
	mid := exampleGraph(t, "quad.ir.json")
	mid.OutputID = 3
	lm, err := Lower[spec.Rat](nil, mid, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lm.Grad(PathTape, x); err == nil || !strings.Contains(err.Error(), "node 3 (add): grad needs a single-element (scalar) output") {
		t.Errorf("non-scalar output: %v", err)
	}
	// A data-dependent failure is attributed to its node on every path.
	b = newBuilder(sh(2))
	b.add(irsem.OpInv, []int{0}, sh(2))
	b.add(irsem.OpSum, []int{1}, sh())
	invG, _ := b.graph()
	li, err := Lower[spec.Rat](nil, invG, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range Paths() {
		if _, err := li.Grad(path, rt(t, sh(2), "1", "0")); err == nil || !strings.Contains(err.Error(), "node 1 (inv)") {
			t.Errorf("%s: division by zero: %v", path, err)
		}
	}
	if _, err := li.Values(rt(t, sh(2), "1", "0")); err == nil || !strings.Contains(err.Error(), "node 1 (inv)") {
		t.Errorf("values: division by zero: %v", err)
	}
}

func lowerErr[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload) error {
	_, err := Lower[T](nil, g, p)
	return err
}

// TestSingularPointBehindDetach documents where the paths part over
// floats: inv(x) at x = 0 feeds a detach. The eager tape and the typed
// graph's compiled sweep never reach the inv node; the lowered tape and the
// every-node sweep run its VJP on a synthetic zero cotangent, −0/0² = NaN.
func TestSingularPointBehindDetach(t *testing.T) {
	b := newBuilder(sh(2))
	iv := b.add(irsem.OpInv, []int{0}, sh(2))
	dt := b.add(irsem.OpDetach, []int{iv}, sh(2))
	c := b.konst(t, sh(2), "5", "5")
	mn := b.add(irsem.OpMinElem, []int{dt, c}, sh(2))
	ad := b.add(irsem.OpAdd, []int{mn, 0}, sh(2))
	b.add(irsem.OpSum, []int{ad}, sh())
	g, p := b.graph()
	l, err := Lower[spec.F64](nil, g, p)
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Vector[spec.F64](1, 0)
	for _, path := range Paths() {
		gr, err := l.Grad(path, x)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		nan := math.IsNaN(float64(gr.Input.Data[1]))
		switch path {
		case PathTape, PathTypedGraph:
			if nan || gr.Input.Data[0] != 1 || gr.Input.Data[1] != 1 {
				t.Errorf("%s: %v, want [1, 1]", path, gr.Input)
			}
		default:
			if !nan {
				t.Errorf("%s: %v, want NaN in element 1 (zero preservation fails at x = 0)", path, gr.Input)
			}
		}
	}
}

// gradErr returns Grad's error on g and p (the input is never reached:
// every case fails while lowering).
func gradErr[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload) error {
	_, _, err := Grad[T](g, p, spec.Tensor[T]{}, PathTape)
	return err
}

// userIDGraph is a 4-node IR graph x → linear(W=[[2]], b=[1]) → relu → inv
// whose lowered forms number their nodes differently: the typed graph and
// the tape put W and b in front (context entries 1 and 2) and linear
// decomposes, so IR node 3 is not entry 3 there.
func userIDGraph(t *testing.T) (*irsem.Graph, *irsem.Payload) {
	b := newBuilder(sh(1))
	l := b.add(irsem.OpLinear, []int{0}, sh(1))
	b.p[l] = &irsem.Params{W: rtp(t, sh(1, 1), "2"), B: rtp(t, sh(1), "1")}
	r := b.add(irsem.OpRelu, []int{l}, sh(1))
	b.add(irsem.OpInv, []int{r}, sh(1))
	return b.graph()
}

// TestErrorsNameUserNodes: a failure at IR node 3 is reported as node 3
// (inv) on every path, forward and reverse, never under the internal id
// of the typed graph or tape node that failed. At x = −1/2 the linear
// node is 2·(−1/2) + 1 = 0 (by hand), relu keeps 0 and inv divides by
// zero at element 0; at x = 3 the forward succeeds (1/7) and a planted
// failing inv VJP fails the reverse pass.
func TestErrorsNameUserNodes(t *testing.T) {
	g, p := userIDGraph(t)
	l, err := Lower[spec.Rat](nil, g, p)
	if err != nil {
		t.Fatal(err)
	}
	run, err := l.Record(rt(t, sh(1), "3"))
	if err != nil {
		t.Fatal(err)
	}
	if l.Entry[3] == 3 || run.Nodes[3] == 3 {
		t.Fatalf("the test needs internal ids that differ from the IR's: typed entry %d, tape node %d", l.Entry[3], run.Nodes[3])
	}
	const fwd = "node 3 (inv): element 0: div over rat: division by zero"
	bad := rt(t, sh(1), "-1/2")
	values := func() error { _, err := l.Values(bad); return err }
	tapeValues := func() error { _, err := l.TapeValues(bad); return err }
	grad := func(path Path) func() error {
		return func() error { _, err := l.Grad(path, bad); return err }
	}

	reg := spec.New[spec.Rat]()
	inv, err := reg.Lookup("inv")
	if err != nil {
		t.Fatal(err)
	}
	planted := *inv
	planted.VJP = func(*spec.Attrs, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		return nil, errors.New("planted failure")
	}
	reg.Override(&planted)
	lp, err := Lower[spec.Rat](reg, g, p)
	if err != nil {
		t.Fatal(err)
	}
	const rev = "node 3 (inv): vjp: planted failure"
	good := rt(t, sh(1), "3")
	plantedGrad := func(path Path) func() error {
		return func() error { _, err := lp.Grad(path, good); return err }
	}

	cases := []struct {
		name string
		run  func() error
		want string
		elem int
	}{
		{"typed-graph values", values, fwd, 0},
		{"tape values", tapeValues, fwd, 0},
		{"grad tape", grad(PathTape), fwd, 0},
		{"grad typed-graph", grad(PathTypedGraph), fwd, 0},
		{"grad lowered-tape", grad(PathLoweredTape), fwd, 0},
		{"grad backprop-ctx", grad(PathBackpropCtx), fwd, 0},
		{"planted vjp tape", plantedGrad(PathTape), rev, -1},
		{"planted vjp typed-graph", plantedGrad(PathTypedGraph), rev, -1},
		{"planted vjp lowered-tape", plantedGrad(PathLoweredTape), rev, -1},
		{"planted vjp backprop-ctx", plantedGrad(PathBackpropCtx), rev, -1},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
			continue
		}
		var ne *spec.NodeError
		if !errors.As(err, &ne) || ne.Node != 3 || ne.Op != "inv" || ne.Elem != c.elem {
			t.Errorf("%s: %#v is not a NodeError at node 3 (inv), element %d", c.name, err, c.elem)
		}
	}
}
