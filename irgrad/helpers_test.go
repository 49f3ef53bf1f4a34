package irgrad

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func sh(d ...int) spec.Shape { return spec.Shape(d) }

// builder assembles an IR graph node by node; node 0 is the input and the
// last node added is the output.
type builder struct {
	nodes []irsem.Node
	p     map[int]*irsem.Params
}

func newBuilder(in spec.Shape) *builder {
	b := &builder{p: map[int]*irsem.Params{}}
	b.add(irsem.OpInput, nil, in)
	return b
}

func (b *builder) add(op irsem.Op, parents []int, shape spec.Shape, opts ...func(*irsem.Kind)) int {
	if parents == nil {
		parents = []int{}
	}
	n := irsem.Node{ID: len(b.nodes), Parents: parents, Kind: irsem.Kind{Op: op}, Shape: shape}
	for _, o := range opts {
		o(&n.Kind)
	}
	b.nodes = append(b.nodes, n)
	return n.ID
}

func (b *builder) konst(t testing.TB, shape spec.Shape, vs ...string) int {
	id := b.add(irsem.OpConst, nil, shape, func(k *irsem.Kind) { k.ValueShape = shape })
	b.p[id] = &irsem.Params{Value: rtp(t, shape, vs...)}
	return id
}

func (b *builder) graph() (*irsem.Graph, *irsem.Payload) {
	return &irsem.Graph{InputID: 0, OutputID: len(b.nodes) - 1, Nodes: b.nodes}, &irsem.Payload{Entries: b.p}
}

func axis(a int) func(*irsem.Kind) { return func(k *irsem.Kind) { k.Axis = a } }

func rat(t testing.TB, s string) spec.Rat {
	t.Helper()
	r, err := irsem.ParseRational(s)
	if err != nil {
		t.Fatalf("rat(%q): %v", s, err)
	}
	return r
}

func rt(t testing.TB, shape spec.Shape, vs ...string) irsem.RatTensor {
	t.Helper()
	data := make([]spec.Rat, len(vs))
	for i, v := range vs {
		data[i] = rat(t, v)
	}
	x, err := spec.NewTensor(shape, data)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func rtp(t testing.TB, shape spec.Shape, vs ...string) *irsem.RatTensor {
	x := rt(t, shape, vs...)
	return &x
}

func readExample(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func exampleGraph(t testing.TB, name string) *irsem.Graph {
	t.Helper()
	g, err := irsem.DecodeGraph(readExample(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func examplePayload(t testing.TB, name string) *irsem.Payload {
	t.Helper()
	p, err := irsem.DecodePayload(readExample(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func exampleTensor(t testing.TB, name string) irsem.RatTensor {
	t.Helper()
	x, err := irsem.DecodeTensor(readExample(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// zooCase is one graph of the test corpus.
type zooCase struct {
	name  string
	g     *irsem.Graph
	p     *irsem.Payload
	x     irsem.RatTensor
	exact bool // every tag has exact rational semantics (and the data keeps them exact)
}

// zoo returns the examples and graphs that together use every tag with
// derivative rules.
func zoo(t testing.TB) []zooCase {
	cs := []zooCase{
		{name: "quad", g: exampleGraph(t, "quad.ir.json"), x: exampleTensor(t, "quad.input.json"), exact: true},
		{name: "quad-detach", g: exampleGraph(t, "quad-detach.ir.json"), x: exampleTensor(t, "quad.input.json"), exact: true},
		{name: "mlp", g: exampleGraph(t, "mlp.ir.json"), p: examplePayload(t, "mlp.payload.json"), x: exampleTensor(t, "mlp.input.json"), exact: true},
	}

	// Shape and linear-algebra tags, exact.
	{
		b := newBuilder(sh(2, 3))
		w := b.konst(t, sh(3, 2), "1", "-2", "1/2", "3", "-1", "2/3")
		mm := b.add(irsem.OpMatmul, []int{0, w}, sh(2, 2))
		r := b.add(irsem.OpRelu, []int{mm}, sh(2, 2))
		tr := b.add(irsem.OpTranspose, []int{r}, sh(2, 2), func(k *irsem.Kind) { k.Axis1, k.Axis2 = 0, 1 })
		rs := b.add(irsem.OpReduceSum, []int{tr}, sh(2), axis(0))
		bc := b.add(irsem.OpBroadcastTo, []int{rs}, sh(3, 2), func(k *irsem.Kind) { k.FromShape, k.ToShape = sh(2), sh(3, 2) })
		re := b.add(irsem.OpReshape, []int{bc}, sh(6), func(k *irsem.Kind) { k.InShape, k.OutShape = sh(3, 2), sh(6) })
		fl := b.add(irsem.OpFlatten, []int{0}, sh(6), func(k *irsem.Kind) { k.InShape = sh(2, 3) })
		mx := b.add(irsem.OpMaxElem, []int{re, fl}, sh(6))
		mn := b.add(irsem.OpMinElem, []int{fl, re}, sh(6))
		ab := b.add(irsem.OpAbs, []int{mn}, sh(6))
		sb := b.add(irsem.OpSub, []int{mx, ab}, sh(6))
		cc := b.add(irsem.OpConcat, []int{sb, fl, sb}, sh(18), axis(0))
		r2 := b.add(irsem.OpReshape, []int{cc}, sh(3, 6), func(k *irsem.Kind) { k.InShape, k.OutShape = sh(18), sh(3, 6) })
		pm := b.add(irsem.OpPermute, []int{r2}, sh(6, 3), func(k *irsem.Kind) { k.Perm = []int{1, 0} })
		ln := b.add(irsem.OpLinear, []int{pm}, sh(6, 2))
		b.p[ln] = &irsem.Params{W: rtp(t, sh(2, 3), "1/2", "-1", "2", "0", "1/3", "-3/4"), B: rtp(t, sh(2), "1", "-1/5")}
		rm := b.add(irsem.OpReduceMean, []int{ln}, sh(6), axis(1))
		one := b.konst(t, sh(6), "1", "2", "-1", "1/2", "3", "-2")
		ad := b.add(irsem.OpAdd, []int{rm, one}, sh(6))
		iv := b.add(irsem.OpInv, []int{ad}, sh(6))
		dt := b.add(irsem.OpDetach, []int{iv}, sh(6))
		ml := b.add(irsem.OpMulElem, []int{ad, dt}, sh(6))
		m2 := b.add(irsem.OpMulElem, []int{ml, ad}, sh(6))
		tgt := b.konst(t, sh(6), "0", "1", "0", "-1", "2", "1/2")
		b.add(irsem.OpMSELoss, []int{m2, tgt}, sh())
		g, p := b.graph()
		cs = append(cs, zooCase{name: "shapes", g: g, p: p, x: rt(t, sh(2, 3), "1", "-2", "3/2", "2", "1/2", "-1"), exact: true})
	}

	// Every window tag, exact: conv (W, b) with groups, conv_transpose
	// (W only), the TorchLean pools and the superset ones with pads, ceil
	// mode and dilation.
	{
		b := newBuilder(sh(1, 2, 5))
		win := func(w spec.Window) func(*irsem.Kind) { return func(k *irsem.Kind) { k.Window = &w } }
		cv := b.add(irsem.OpConv, []int{0}, sh(1, 4, 4), win(spec.Window{Kernel: []int{2}, Stride: []int{1}, Padding: []int{0}, Dilation: []int{1}, Groups: 2, InChannels: 2, OutChannels: 4}))
		b.p[cv] = &irsem.Params{W: rtp(t, sh(4, 1, 2), "1", "-1/2", "2", "1/3", "-1", "3/2", "1/4", "1"), B: rtp(t, sh(4), "0", "1", "-1/2", "2")}
		mp := b.add(irsem.OpMaxPool, []int{cv}, sh(1, 4, 3), win(spec.Window{Kernel: []int{2}, Stride: []int{1}, Padding: []int{0}}))
		ap := b.add(irsem.OpAvgPool, []int{cv}, sh(1, 4, 3), win(spec.Window{Kernel: []int{3}, Stride: []int{2}, Padding: []int{2}}))
		ad := b.add(irsem.OpAdd, []int{mp, ap}, sh(1, 4, 3))
		ct := b.add(irsem.OpConvTranspose, []int{ad}, sh(1, 2, 7), win(spec.Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 0}, Dilation: []int{1}, OutputPadding: []int{1}, Groups: 1, InChannels: 4, OutChannels: 2}))
		b.p[ct] = &irsem.Params{W: rtp(t, sh(4, 2, 3), "1", "0", "-1", "1/2", "2", "1", "-1/3", "1", "0", "2", "-1", "1/4", "1", "1", "1", "-2", "1/2", "3", "0", "1", "-1", "1/3", "2", "-1/2")}
		mn := b.add(irsem.OpMaxPoolND, []int{ct}, sh(1, 2, 4), win(spec.Window{Kernel: []int{2}, Stride: []int{2}, Pads: []int{1, 0}, Dilation: []int{2}, CeilMode: true}))
		an := b.add(irsem.OpAvgPoolND, []int{ct}, sh(1, 2, 4), win(spec.Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 1}, Dilation: []int{1}, CeilMode: true}))
		ml := b.add(irsem.OpMulElem, []int{mn, an}, sh(1, 2, 4))
		b.add(irsem.OpSum, []int{ml}, sh())
		g, p := b.graph()
		cs = append(cs, zooCase{name: "window", g: g, p: p, x: rt(t, sh(1, 2, 5), "1", "-2", "1", "1/2", "3", "0", "2", "2", "-1", "1/4"), exact: true})
	}

	// layernorm over a 2-axis suffix with γ, β and ε = 9/16, exact: each
	// lane is m + c·(1,−1,…) with c² + 9/16 a square.
	{
		b := newBuilder(sh(2, 3, 2))
		ln := b.add(irsem.OpLayerNorm, []int{0}, sh(2, 3, 2), axis(1))
		eps := rat(t, "9/16")
		b.p[ln] = &irsem.Params{Gamma: rtp(t, sh(3, 2), "1", "2", "-1", "1/2", "3", "1/3"), Beta: rtp(t, sh(3, 2), "0", "1", "-1", "1/4", "2", "0"), Eps: &eps}
		sq := b.add(irsem.OpSqrt, []int{b.konst(t, sh(3, 2), "4", "9/4", "1", "0", "16", "1/9")}, sh(3, 2))
		sc := b.add(irsem.OpReshape, []int{sq}, sh(1, 3, 2), func(k *irsem.Kind) { k.InShape, k.OutShape = sh(3, 2), sh(1, 3, 2) })
		bc := b.add(irsem.OpBroadcastTo, []int{sc}, sh(2, 3, 2), func(k *irsem.Kind) { k.FromShape, k.ToShape = sh(1, 3, 2), sh(2, 3, 2) })
		ml := b.add(irsem.OpMulElem, []int{ln, bc}, sh(2, 3, 2))
		sm := b.add(irsem.OpSum, []int{ml}, sh())
		b.add(irsem.OpMulElem, []int{sm, sm}, sh())
		g, p := b.graph()
		x := rt(t, sh(2, 3, 2), "3/2", "-1/2", "3/2", "-1/2", "3/2", "-1/2", "-1/5", "-19/5", "-1/5", "-19/5", "-1/5", "-19/5")
		cs = append(cs, zooCase{name: "layernorm-exact", g: g, p: p, x: x, exact: true})
	}

	// Smooth tags, inexact: softmax, safe_log with a const and a computed
	// ε, tanh, sigmoid, exp, raw log, sin, cos, softplus, layernorm with
	// defaults and with β only, rand_uniform.
	{
		b := newBuilder(sh(2, 3))
		ru := b.add(irsem.OpRandUniform, nil, sh(2, 3), func(k *irsem.Kind) { k.Seed = 7 })
		x := b.add(irsem.OpAdd, []int{0, ru}, sh(2, 3))
		sm := b.add(irsem.OpSoftmax, []int{x}, sh(2, 3), axis(1))
		e1 := b.konst(t, sh(), "1/1000")
		sl := b.add(irsem.OpSafeLog, []int{sm, e1}, sh(2, 3))
		th := b.add(irsem.OpTanh, []int{sl}, sh(2, 3))
		sg := b.add(irsem.OpSigmoid, []int{th}, sh(2, 3))
		ex := b.add(irsem.OpExp, []int{sg}, sh(2, 3))
		lg := b.add(irsem.OpLog, []int{ex}, sh(2, 3))
		s0 := b.add(irsem.OpSum, []int{0}, sh())
		a0 := b.add(irsem.OpAbs, []int{s0}, sh())
		sl2 := b.add(irsem.OpSafeLog, []int{lg, a0}, sh(2, 3))
		sn := b.add(irsem.OpSin, []int{sl2}, sh(2, 3))
		cn := b.add(irsem.OpCos, []int{x}, sh(2, 3))
		sp := b.add(irsem.OpSoftplus, []int{cn}, sh(2, 3))
		ad := b.add(irsem.OpAdd, []int{sn, sp}, sh(2, 3))
		l1 := b.add(irsem.OpLayerNorm, []int{ad}, sh(2, 3), axis(1))
		l2 := b.add(irsem.OpLayerNorm, []int{l1}, sh(2, 3), axis(0))
		b.p[l2] = &irsem.Params{Beta: rtp(t, sh(2, 3), "1", "0", "-1", "1/2", "2", "-1/3")}
		tgt := b.konst(t, sh(2, 3), "0", "1", "0", "-1", "2", "1/2")
		b.add(irsem.OpMSELoss, []int{l2, tgt}, sh())
		g, p := b.graph()
		cs = append(cs, zooCase{name: "smooth", g: g, p: p, x: rt(t, sh(2, 3), "1", "-2", "1/2", "2", "0", "-1")})
	}

	// A scalar ε that is the input itself, with the output at the
	// input's first consumer; and an output that is the input.
	{
		b := newBuilder(sh())
		b.add(irsem.OpSafeLog, []int{0, 0}, sh())
		g, p := b.graph()
		cs = append(cs, zooCase{name: "safe_log-self", g: g, p: p, x: rt(t, sh(), "1/2")})
		b2 := newBuilder(sh(2))
		b2.add(irsem.OpRelu, []int{0}, sh(2))
		g2, p2 := b2.graph()
		g2.OutputID = 0
		cs = append(cs, zooCase{name: "output-is-input", g: g2, p: p2, x: rt(t, sh(2), "3", "-1"), exact: true})
	}
	return append(cs, inputNotFirst(t))
}

// inputNotFirst is a graph whose input is not node 0.
func inputNotFirst(t testing.TB) zooCase {
	g := &irsem.Graph{InputID: 1, OutputID: 3, Nodes: []irsem.Node{
		{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpConst, ValueShape: sh(2)}, Shape: sh(2)},
		{ID: 1, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: sh(2)},
		{ID: 2, Parents: []int{0, 1}, Kind: irsem.Kind{Op: irsem.OpMulElem}, Shape: sh(2)},
		{ID: 3, Parents: []int{2}, Kind: irsem.Kind{Op: irsem.OpSum}, Shape: sh()},
	}}
	p := &irsem.Payload{Entries: map[int]*irsem.Params{0: {Value: rtp(t, sh(2), "2", "-1/3")}}}
	return zooCase{name: "input-not-first", g: g, p: p, x: rt(t, sh(2), "5", "7"), exact: true}
}
