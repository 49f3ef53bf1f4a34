package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// gnet builds a small irsem graph by hand for the combined-bound tests
// (nets.MLP has no residual, gating, bias-broadcast or matmul blocks).
type gnet struct {
	g *irsem.Graph
	p *irsem.Payload
}

func newGnet(in spec.Shape) *gnet {
	return &gnet{g: &irsem.Graph{Nodes: []irsem.Node{{ID: 0, Parents: []int{}, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: in.Clone()}}}, p: &irsem.Payload{Entries: map[int]*irsem.Params{}}}
}

func (n *gnet) add(k irsem.Kind, shape spec.Shape, parents ...int) int {
	id := len(n.g.Nodes)
	n.g.Nodes = append(n.g.Nodes, irsem.Node{ID: id, Parents: parents, Kind: k, Shape: shape.Clone()})
	n.g.OutputID = id
	return id
}

func (n *gnet) linear(x int, w, b []float32, out int) int {
	xs := n.g.Nodes[x].Shape.Clone()
	in := xs[len(xs)-1]
	xs[len(xs)-1] = out
	id := n.add(irsem.Kind{Op: irsem.OpLinear}, xs, x)
	wt, bt := ratT(spec.Shape{out, in}, w), ratT(spec.Shape{out}, b)
	n.p.Entries[id] = &irsem.Params{W: &wt, B: &bt}
	return id
}

func (n *gnet) constant(s spec.Shape, v []spec.Rat) int {
	id := n.add(irsem.Kind{Op: irsem.OpConst, ValueShape: s.Clone()}, s)
	t := irsem.RatTensor{Shape: s.Clone(), Data: v}
	n.p.Entries[id] = &irsem.Params{Value: &t}
	return id
}

func ratOf(f float32) spec.Rat { return spec.RatFromBig(new(big.Rat).SetFloat64(float64(f))) }

func ratT(s spec.Shape, v []float32) irsem.RatTensor {
	t := irsem.RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, len(v))}
	for i, f := range v {
		t.Data[i] = ratOf(f)
	}
	return t
}

func normF32s(r *rand.Rand, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64() * scale)
	}
	return v
}

// combinedOf runs GradErrSharp and returns the combined enclosures of
// the input gradient and GradEnclosure's least of the three, per input
// element.
func combinedOf(t *testing.T, n *gnet, x, seed irsem.RatTensor) ([]Enclosure, []Sharp, string) {
	t.Helper()
	if err := n.g.Check(); err != nil {
		t.Fatal(err)
	}
	gb, err := GradErrSharp(n.g, n.p, x, seed, Options{}, false)
	if err != nil {
		t.Fatal(err)
	}
	sh := make([]Sharp, len(gb.Classic.Input.Data))
	for i := range sh {
		sh[i] = inputEnclosure(gb, i, true)
	}
	return gb.Combined, sh, gb.CombinedReason
}

// smallestCaught is the smallest planted relative error 10^e (e from −7
// to 3) in v that fails against en, "none" when none does.
func smallestCaught(v float32, en Enclosure) string {
	for e := -7; e <= 3; e++ {
		if Judge(float32(float64(v)*(1+math.Pow(10, float64(e)))), en).Verdict == Fails {
			return fmt.Sprintf("1e%d", e)
		}
	}
	return "none"
}

// judgeCombined checks, for every input-gradient element with a finite
// combined bound, that each float32 gradient in gots holds against the
// combined enclosure and against the least of the three, and that the
// float32 values just outside each fail; it returns the number of
// elements with a finite combined bound.
// inputEnclosure is GradEnclosure of input-gradient element i of gb: the
// least of its classic, boxed and (when combined is set and gb has it)
// combined bounds.
func inputEnclosure(gb *GradBounds, i int, combined bool) Sharp {
	var bx Err
	if gb.Boxed != nil {
		bx = gb.Boxed.Input.Data[i]
	}
	var comb *Enclosure
	if combined && gb.Combined != nil {
		comb = &gb.Combined[i]
	}
	return GradEnclosure(gb.Classic.Input.Data[i], gb.ClassicUndecided, bx, gb.BoxedUndecided, gb.Boxed != nil, gb.Reason, comb).Sharp
}

// plantAtLargest plants a relative error of 10⁻³ in got's element of
// largest exact magnitude and reports an error unless it FAILS against
// the least enclosure sh; it returns that element's index.
func plantAtLargest(t *testing.T, name string, comb []Enclosure, sh []Sharp, got []float32) int {
	t.Helper()
	k := 0
	for i := range comb {
		if mag(comb[i].Exact) > mag(comb[k].Exact) {
			k = i
		}
	}
	if el := Judge(float32(float64(got[k])*(1+1e-3)), sh[k].Enclosure); el.Verdict != Fails {
		t.Errorf("%s: a planted 10⁻³ in element %d is %v (bound %g)", name, k, el.Verdict, sh[k].Bound)
	}
	return k
}

func judgeCombined(t *testing.T, name string, comb []Enclosure, sh []Sharp, gots map[string][]float32) int {
	t.Helper()
	finite := 0
	for i, en := range comb {
		if math.IsInf(en.Bound, 1) {
			continue
		}
		finite++
		for _, e := range []Enclosure{en, sh[i].Enclosure} {
			for oname, got := range gots {
				if el := Judge(got[i], e); el.Verdict != Holds {
					t.Errorf("%s %s: input-gradient element %d = %g is %v against %v ± %g", name, oname, i, got[i], el.Verdict, e.Exact, e.Bound)
				}
			}
			for _, v := range justOutside(e) {
				if el := Judge(v, e); el.Verdict != Fails {
					t.Errorf("%s: element %d: %g just outside %v ± %g is %v", name, i, v, e.Exact, e.Bound, el.Verdict)
				}
			}
		}
	}
	return finite
}

// straddleNet is x [n] → q = x⊙x → d = q − c → r = relu(d) → y =
// linear(r; W, b) [m]. Element 0 has x₀ = 1 + 2⁻²⁰ and c₀ = 1 + 2⁻¹⁹:
// the exact d₀ is 2⁻⁴⁰ > 0, the binary32 one 0 (x₀² rounds to c₀), so
// relu's box holds the kink at element 0 only (every other |x_k² − c_k|
// is at least 1/4).
func straddleNet(seed uint64, n, m int) (*gnet, []float32, []float32, []float32, []float32, []float32) {
	r := rand.New(rand.NewPCG(seed, 17))
	x, c := make([]float32, n), make([]float32, n)
	x[0], c[0] = 1+0x1p-20, 1+0x1p-19
	for k := 1; k < n; k++ {
		x[k] = float32(0.5 + r.Float64())
		c[k] = x[k]*x[k] + float32(0.25+r.Float64())
		if k%2 == 0 {
			c[k] = x[k]*x[k] - float32(0.25+r.Float64()*0.2)
		}
	}
	w, b, s := normF32s(r, m*n, 0.5), normF32s(r, m, 0.5), normF32s(r, m, 1)
	net := newGnet(spec.Shape{n})
	q := net.add(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, 0)
	cr := make([]spec.Rat, n)
	for k, v := range c {
		cr[k] = ratOf(v)
	}
	d := net.add(irsem.Kind{Op: irsem.OpSub}, spec.Shape{n}, q, net.constant(spec.Shape{n}, cr))
	rl := net.add(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{n}, d)
	net.linear(rl, w, b, m)
	return net, x, c, w, b, s
}

// straddleGrad32 is the float32 input gradient of ⟨s, straddleNet(x)⟩
// in order o, relu's step at element 0 forced to mask0 (the runtime may
// take either: its box holds the kink) and decided by the float32 value
// elsewhere: dr = Wᵀs, g = dr·step(d), dq = g, dx = g·x + g·x (mul_elem's
// two contributions, the first fused into the sum under FMA).
func straddleGrad32(x, c, w, s []float32, o order, mask0 float32) []float32 {
	n, m := len(x), len(s)
	dx := make([]float32, n)
	col := make([]float32, m)
	for k := 0; k < n; k++ {
		for j := 0; j < m; j++ {
			col[j] = w[j*n+k]
		}
		g := dot32(col, s, 0, o)
		mask := float32(0)
		if d := x[k]*x[k] - c[k]; d > 0 {
			mask = 1
		}
		if k == 0 {
			mask = mask0
		}
		g *= mask
		if o.fma {
			dx[k] = gfma32(g, x[k], g*x[k])
		} else {
			dx[k] = g*x[k] + g*x[k]
		}
	}
	return dx
}

// TestGradCombinedStraddle: one relu element whose box holds the kink
// drops only the input-gradient elements that read its mask (element 0:
// the net is elementwise up to the relu) from the combined bound; every
// other element keeps a finite combined bound, against which the
// float32 gradients of four orders hold with either mask at element 0,
// the float32 just outside fails, and a planted relative error of 10⁻³
// in the largest of them fails.
func TestGradCombinedStraddle(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		net, x, c, w, _, s := straddleNet(seed, 6, 5)
		xr, sr := ratT(spec.Shape{6}, x), ratT(spec.Shape{5}, s)
		comb, sh, reason := combinedOf(t, net, xr, sr)
		if comb == nil {
			t.Fatalf("seed %d: no combined bound: %s", seed, reason)
		}
		if !math.IsInf(comb[0].Bound, 1) || comb[0].Reason == "" {
			t.Errorf("seed %d: element 0 reads the undecided mask but has the combined bound %g", seed, comb[0].Bound)
		}
		gots := map[string][]float32{}
		for _, o := range orders {
			for _, m0 := range []float32{0, 1} {
				gots[fmt.Sprintf("%s mask0=%g", o.name, m0)] = straddleGrad32(x, c, w, s, o, m0)
			}
		}
		if f := judgeCombined(t, fmt.Sprintf("seed %d", seed), comb, sh, gots); f != len(comb)-1 {
			t.Errorf("seed %d: %d elements with a finite combined bound, want %d", seed, f, len(comb)-1)
		}
		got := gots["sequential mask0=0"]
		k := 1
		for i := 2; i < len(comb); i++ {
			if mag(comb[i].Exact) > mag(comb[k].Exact) {
				k = i
			}
		}
		if el := Judge(float32(float64(got[k])*(1+1e-3)), sh[k].Enclosure); el.Verdict != Fails {
			t.Errorf("seed %d: a planted 10⁻³ in element %d is %v (bound %g)", seed, k, el.Verdict, sh[k].Bound)
		}
		t.Logf("seed %d: element %d: smallest planted caught %s (combined bound %g, |exact| %g)", seed, k, smallestCaught(got[k], sh[k].Enclosure), comb[k].Bound, mag(comb[k].Exact))
	}
}

// blockNet is an attention-free block on X [t, t] (t×t so that a matmul
// of two variables fits): H = linear(X; W1, b1), A = tanh(H),
// G = A⊙X (a gate), S = G + X (a residual: X has three consumers),
// T = S + broadcast_to(β, [t, t]) (a bias over the rows), P =
// linear(T; W2, b2), Q = tanh(P), and the output M = T·Q (matmul, both
// operands variable; T has two consumers).
type blockNet struct {
	t                    int
	x, w1, b1, w2, b2, β []float32
}

func newBlockNet(seed uint64, t int) blockNet {
	r := rand.New(rand.NewPCG(seed, 23))
	return blockNet{t: t, x: normF32s(r, t*t, 1), w1: normF32s(r, t*t, 0.5), b1: normF32s(r, t, 0.3), w2: normF32s(r, t*t, 0.5), b2: normF32s(r, t, 0.3), β: normF32s(r, t, 0.5)}
}

func (bn blockNet) graph() *gnet {
	t := bn.t
	sq := spec.Shape{t, t}
	n := newGnet(sq)
	h := n.linear(0, bn.w1, bn.b1, t)
	a := n.add(irsem.Kind{Op: irsem.OpTanh}, sq, h)
	g := n.add(irsem.Kind{Op: irsem.OpMulElem}, sq, a, 0)
	s := n.add(irsem.Kind{Op: irsem.OpAdd}, sq, g, 0)
	β := n.constant(spec.Shape{t}, ratT(spec.Shape{t}, bn.β).Data)
	bb := n.add(irsem.Kind{Op: irsem.OpBroadcastTo, FromShape: spec.Shape{t}, ToShape: sq.Clone()}, sq, β)
	tt := n.add(irsem.Kind{Op: irsem.OpAdd}, sq, s, bb)
	p := n.linear(tt, bn.w2, bn.b2, t)
	q := n.add(irsem.Kind{Op: irsem.OpTanh}, sq, p)
	n.add(irsem.Kind{Op: irsem.OpMatmul}, sq, tt, q)
	return n
}

// tanhBack32 is the registry's tanh VJP (1 − y·y)·g in binary32, the
// 1 − y·y fused under FMA.
func tanhBack32(y, g float32, o order) float32 {
	if o.fma {
		return gfma32(-y, y, 1) * g
	}
	return (1 - y*y) * g
}

// grad32 is the float32 input gradient of ⟨C, M⟩ in order o, by hand
// from the registry's VJP formulas: dT = C·Qᵀ + Wᵀ-pass of dP, dQ =
// Tᵀ·C, dP = (1 − Q⊙Q)⊙dQ, dS = dT, dG = dS, dA = dG⊙X, dH = (1 −
// A⊙A)⊙dA, dX = dS + dG⊙A + W1ᵀ-pass of dH (the three summed in an order
// depending on o, the product fused under FMA).
func (bn blockNet) grad32(cs []float32, o order) []float32 {
	t := bn.t
	row := func(v []float32, i int) []float32 { return v[i*t : (i+1)*t] }
	colOf := func(v []float32, j int) []float32 {
		c := make([]float32, t)
		for i := range c {
			c[i] = v[i*t+j]
		}
		return c
	}
	lin := func(in, w, b []float32) []float32 { // y[i][o] = Σ_k w[o][k]·in[i][k] + b[o]
		y := make([]float32, t*t)
		for i := 0; i < t; i++ {
			for oo := 0; oo < t; oo++ {
				y[i*t+oo] = dot32(row(w, oo), row(in, i), b[oo], o)
			}
		}
		return y
	}
	linBack := func(dy, w []float32) []float32 { // dx[i][k] = Σ_o w[o][k]·dy[i][o]
		dx := make([]float32, t*t)
		for i := 0; i < t; i++ {
			for k := 0; k < t; k++ {
				dx[i*t+k] = dot32(colOf(w, k), row(dy, i), 0, o)
			}
		}
		return dx
	}
	tanh := func(v []float32) []float32 {
		y := make([]float32, len(v))
		for i, e := range v {
			y[i] = float32(math.Tanh(float64(e)))
		}
		return y
	}
	x := bn.x
	a := tanh(lin(x, bn.w1, bn.b1))
	tt := make([]float32, t*t)
	for i := range tt {
		tt[i] = (a[i]*x[i] + x[i]) + bn.β[i%t]
		if o.fma {
			tt[i] = gfma32(a[i], x[i], x[i]) + bn.β[i%t]
		}
	}
	q := tanh(lin(tt, bn.w2, bn.b2))
	dtM := make([]float32, t*t) // C·Qᵀ
	dq := make([]float32, t*t)  // Tᵀ·C
	for i := 0; i < t; i++ {
		for k := 0; k < t; k++ {
			dtM[i*t+k] = dot32(row(cs, i), row(q, k), 0, o)
			dq[i*t+k] = dot32(colOf(tt, i), colOf(cs, k), 0, o)
		}
	}
	dp := make([]float32, t*t)
	for i := range dp {
		dp[i] = tanhBack32(q[i], dq[i], o)
	}
	dtP := linBack(dp, bn.w2)
	ds := make([]float32, t*t)
	dh := make([]float32, t*t)
	for i := range ds {
		ds[i] = dtM[i] + dtP[i]
		dh[i] = tanhBack32(a[i], ds[i]*x[i], o)
	}
	dxl := linBack(dh, bn.w1)
	dx := make([]float32, t*t)
	for i := range dx {
		switch {
		case o.fma:
			dx[i] = gfma32(ds[i], a[i], ds[i]) + dxl[i]
		case o.pairwise:
			dx[i] = dxl[i] + (ds[i]*a[i] + ds[i])
		default:
			dx[i] = (ds[i] + ds[i]*a[i]) + dxl[i]
		}
	}
	return dx
}

// TestGradCombinedBlock: the attention-free block (blockNet: a gate, a
// residual with three consumers, a broadcast bias, a matmul of two
// variables) has a finite combined bound on every input-gradient
// element; the float32 gradients of the test's evaluator in four orders
// hold against it and against the least of the three, the float32 just
// outside fails, and a planted relative error of 10⁻³ in the largest
// element fails.
func TestGradCombinedBlock(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		bn := newBlockNet(seed, 4)
		net := bn.graph()
		r := rand.New(rand.NewPCG(seed, 29))
		cs := normF32s(r, 16, 1)
		sq := spec.Shape{4, 4}
		comb, sh, reason := combinedOf(t, net, ratT(sq, bn.x), ratT(sq, cs))
		if comb == nil {
			t.Fatalf("seed %d: no combined bound: %s", seed, reason)
		}
		gots := map[string][]float32{}
		for _, o := range orders {
			gots[o.name] = bn.grad32(cs, o)
		}
		if f := judgeCombined(t, fmt.Sprintf("block seed %d", seed), comb, sh, gots); f != len(comb) {
			t.Errorf("seed %d: %d of %d elements with a finite combined bound", seed, f, len(comb))
		}
		got := gots["sequential"]
		k := plantAtLargest(t, fmt.Sprintf("seed %d", seed), comb, sh, got)
		t.Logf("seed %d: element %d: smallest planted caught %s (least bound %g: classic %g, first-order %g; |exact| %g)", seed, k, smallestCaught(got[k], sh[k].Enclosure), sh[k].Bound, sh[k].Classic, sh[k].FirstOrder, mag(comb[k].Exact))
	}
}

// resMLP is a residual MLP on x [w]: depth blocks h ← h + act(linear(h;
// W_l, b_l)), then linear(h; W_out, b_out) [w]; weights of standard
// deviation 0.5/√w (the residual stream stays of order 1), binary32.
type resMLP struct {
	w, depth int
	act      irsem.Op
	x        []float32
	ws, bs   [][]float32 // depth blocks, then the output layer
}

func newResMLP(seed uint64, w, depth int, act irsem.Op) resMLP {
	r := rand.New(rand.NewPCG(seed, 31))
	m := resMLP{w: w, depth: depth, act: act, x: normF32s(r, w, 1)}
	for l := 0; l <= depth; l++ {
		m.ws = append(m.ws, normF32s(r, w*w, 0.5/math.Sqrt(float64(w))))
		m.bs = append(m.bs, normF32s(r, w, 0.1))
	}
	return m
}

func (m resMLP) graph() *gnet {
	n := newGnet(spec.Shape{m.w})
	h := 0
	for l := 0; l < m.depth; l++ {
		a := n.add(irsem.Kind{Op: m.act}, spec.Shape{m.w}, n.linear(h, m.ws[l], m.bs[l], m.w))
		h = n.add(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{m.w}, a, h)
	}
	n.linear(h, m.ws[m.depth], m.bs[m.depth], m.w)
	return n
}

// grad32 is the float32 input gradient of ⟨c, resMLP(x)⟩ in order o, by
// hand from the registry's formulas: g = W_outᵀc, then per block from the
// last: d = act′·g (relu's step of its float32 output, tanh's (1 − y·y)·g),
// g = g + W_lᵀd.
func (m resMLP) grad32(c []float32, o order) []float32 {
	w := m.w
	lin := func(W, b, h []float32) []float32 {
		y := make([]float32, w)
		for j := range y {
			y[j] = dot32(W[j*w:(j+1)*w], h, b[j], o)
		}
		return y
	}
	back := func(W, g []float32) []float32 {
		dx := make([]float32, w)
		col := make([]float32, w)
		for k := range dx {
			for j := range col {
				col[j] = W[j*w+k]
			}
			dx[k] = dot32(col, g, 0, o)
		}
		return dx
	}
	acts := make([][]float32, m.depth)
	h := m.x
	for l := 0; l < m.depth; l++ {
		a := lin(m.ws[l], m.bs[l], h)
		for j := range a {
			if m.act == irsem.OpRelu {
				a[j] = max(a[j], 0)
			} else {
				a[j] = float32(math.Tanh(float64(a[j])))
			}
		}
		acts[l] = a
		nh := make([]float32, w)
		for j := range nh {
			nh[j] = a[j] + h[j]
		}
		h = nh
	}
	g := back(m.ws[m.depth], c)
	for l := m.depth - 1; l >= 0; l-- {
		d := make([]float32, w)
		for j := range d {
			if m.act == irsem.OpRelu {
				if acts[l][j] > 0 {
					d[j] = g[j]
				}
			} else {
				d[j] = tanhBack32(acts[l][j], g[j], o)
			}
		}
		dx := back(m.ws[l], d)
		for j := range g {
			g[j] += dx[j]
		}
	}
	return g
}

// TestGradCombinedResidual: on residual ReLU and tanh MLPs (width 8,
// depths 1, 4, 8, seeds 1–2) every input-gradient element has a finite
// combined bound (the relu boxes decide every mask here), the float32
// gradients of four orders hold against it and against the least of the
// three, the float32 just outside fails, and a planted relative error of
// 10⁻³ in the largest element fails.
func TestGradCombinedResidual(t *testing.T) {
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range []int{1, 4, 8} {
			for seed := uint64(1); seed <= 2; seed++ {
				m := newResMLP(seed, 8, depth, act)
				r := rand.New(rand.NewPCG(seed, 37))
				c := normF32s(r, 8, 1)
				comb, sh, reason := combinedOf(t, m.graph(), ratT(spec.Shape{8}, m.x), ratT(spec.Shape{8}, c))
				name := fmt.Sprintf("%s depth %d seed %d", act, depth, seed)
				if comb == nil {
					t.Fatalf("%s: no combined bound: %s", name, reason)
				}
				gots := map[string][]float32{}
				for _, o := range orders {
					gots[o.name] = m.grad32(c, o)
				}
				if f := judgeCombined(t, name, comb, sh, gots); f != len(comb) {
					t.Errorf("%s: %d of %d elements with a finite combined bound", name, f, len(comb))
				}
				plantAtLargest(t, name, comb, sh, gots["sequential"])
			}
		}
	}
}

// TestGradCombinedFigures reports, for residual ReLU and tanh MLPs
// (resMLP, width 16, seed 11) at depths 0 to 16 (32 with GRADFIG_DEEP=1)
// and for the attention-free block, the median bound/actual of the
// input gradient, for MLPs (nets.MLP, width 16, seed 11, depths 1 to 16)
// the same of the first layer's dW (GradErrSharpParams), and the smallest planted relative error (a power of
// 10) caught in its largest element, for the classic, the boxed and the
// least of the three bounds (docs/bounds.md, "grad31"). Run with
// GRADFIG=1 -v: figures, not a gate.
func TestGradCombinedFigures(t *testing.T) {
	if os.Getenv("GRADFIG") != "1" {
		t.Skip("figures: GRADFIG=1")
	}
	depths := []int{0, 1, 2, 4, 8, 16}
	if os.Getenv("GRADFIG_DEEP") == "1" {
		depths = append(depths, 32)
	}
	const w = 16
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range depths {
			m := newResMLP(11, w, depth, act)
			r := rand.New(rand.NewPCG(11, 37))
			c := normF32s(r, w, 1)
			x, s := ratT(spec.Shape{w}, m.x), ratT(spec.Shape{w}, c)
			gb, err := GradErrSharp(m.graph().g, m.graph().p, x, s, Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			figureLine(t, fmt.Sprintf("residual %s width %d depth %2d", act, w, depth), gb, m.grad32(c, orders[0]))
		}
	}
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range []int{1, 2, 4, 8, 16} {
			gc := newGradCaseWith(t, act, w, depth, 11, false, true)
			got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, orders[0]))
			n0 := gc.gb.Params[0].Shape.Size()
			k := len(gc.x) // the largest element of the first layer's dW
			var ratio [3][]float64
			for i := len(gc.x); i < len(gc.x)+n0; i++ {
				s := gc.sharp[i]
				if mag(s.Exact) > mag(gc.sharp[k].Exact) {
					k = i
				}
				if act := math.Abs(float64(got[i]) - (s.Exact.Lo+s.Exact.Hi)/2); act > 0 {
					for b, v := range []float64{s.Classic, gc.boxed[i], s.Bound} {
						ratio[b] = append(ratio[b], v/act)
					}
				}
			}
			s := gc.sharp[k]
			t.Logf("MLP %s width %d depth %2d, first layer's dW: bound/actual classic %.2g boxed %.2g least %.2g; planted caught classic %s boxed %s least %s (%s)", act, w, depth, med(ratio[0]), med(ratio[1]), med(ratio[2]),
				smallestCaught(got[k], Enclosure{Exact: s.Exact, Bound: s.Classic}), smallestCaught(got[k], Enclosure{Exact: s.Exact, Bound: gc.boxed[k]}), smallestCaught(got[k], s.Enclosure), gc.gb.CombinedParamReasons[0])
		}
	}
	for seed := uint64(1); seed <= 3; seed++ {
		bn := newBlockNet(seed, 4)
		r := rand.New(rand.NewPCG(seed, 29))
		cs := normF32s(r, 16, 1)
		sq := spec.Shape{4, 4}
		gb, err := GradErrSharp(bn.graph().g, bn.graph().p, ratT(sq, bn.x), ratT(sq, cs), Options{}, false)
		if err != nil {
			t.Fatal(err)
		}
		figureLine(t, fmt.Sprintf("block 4×4 seed %d", seed), gb, bn.grad32(cs, orders[0]))
	}
}

// figureLine logs one line of TestGradCombinedFigures: per bound
// (classic, boxed, least of the three) the median bound/actual over the
// input gradient and the smallest planted error caught in its largest
// element.
func figureLine(t *testing.T, name string, gb *GradBounds, got []float32) {
	var ratio [3][]float64
	var sh []Sharp
	for i := range gb.Classic.Input.Data {
		s := inputEnclosure(gb, i, true)
		sh = append(sh, s)
		boxed := inputEnclosure(gb, i, false).FirstOrder
		act := math.Abs(float64(got[i]) - (s.Exact.Lo+s.Exact.Hi)/2)
		if act > 0 {
			for b, v := range []float64{s.Classic, boxed, s.Bound} {
				ratio[b] = append(ratio[b], v/act)
			}
		}
	}
	k := 0
	for i := range sh {
		if mag(sh[i].Exact) > mag(sh[k].Exact) {
			k = i
		}
	}
	boxedK := GradEnclosure(gb.Classic.Input.Data[k], gb.ClassicUndecided, Err{}, 0, false, "", nil)
	if gb.Boxed != nil {
		boxedK = GradEnclosure(gb.Classic.Input.Data[k], gb.ClassicUndecided, gb.Boxed.Input.Data[k], gb.BoxedUndecided, true, gb.Reason, nil)
	}
	t.Logf("%s: bound/actual classic %.2g boxed %.2g least %.2g; planted caught classic %s boxed %s least %s (%s)", name, med(ratio[0]), med(ratio[1]), med(ratio[2]),
		smallestCaught(got[k], Enclosure{Exact: sh[k].Exact, Bound: sh[k].Classic}), smallestCaught(got[k], Enclosure{Exact: boxedK.Exact, Bound: boxedK.FirstOrder}), smallestCaught(got[k], sh[k].Enclosure), gb.CombinedReason)
}

// TestGradCombinedParams: on ReLU and tanh MLPs (width 8, depths 1 and
// 4, seeds 1–2) GradErrSharpParams gives every parameter gradient
// element (dW, db of every layer) a finite combined bound; the float32
// gradients of the test's own evaluator (mlpGrad32, four orders) hold on
// every element, input and parameters, against the combined enclosure
// alone and against the least of the three; the float32 just outside
// each fails; a planted relative error of 10⁻³ in the largest element of
// the first layer's dW (the end of the reverse pass) fails.
func TestGradCombinedParams(t *testing.T) {
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range []int{1, 4} {
			for seed := uint64(1); seed <= 2; seed++ {
				gc := newGradCaseWith(t, act, 8, depth, seed, false, true)
				name := fmt.Sprintf("%s depth %d seed %d", act, depth, seed)
				var comb []Enclosure
				comb = append(comb, gc.comb...)
				for p, es := range gc.gb.CombinedParams {
					if es == nil {
						t.Fatalf("%s: parameter %s: no combined bound: %s", name, gc.gb.Params[p].Name, gc.gb.CombinedParamReasons[p])
					}
					comb = append(comb, es...)
				}
				if len(comb) != len(gc.sharp) {
					t.Fatalf("%s: %d combined enclosures, %d elements", name, len(comb), len(gc.sharp))
				}
				gots := map[string][]float32{}
				for _, o := range orders {
					gots[o.name] = flat32s(mlpGrad32(gc.ls, gc.x, gc.c, o))
				}
				if f := judgeCombined(t, name, comb, gc.sharp, gots); f != len(comb) {
					t.Errorf("%s: %d of %d elements with a finite combined bound", name, f, len(comb))
				}
				k := len(gc.x) // the largest element of the first layer's dW
				for i := len(gc.x); i < len(gc.x)+gc.gb.Params[0].Shape.Size(); i++ {
					if mag(comb[i].Exact) > mag(comb[k].Exact) {
						k = i
					}
				}
				got := gots["sequential"]
				if el := Judge(float32(float64(got[k])*(1+1e-3)), gc.sharp[k].Enclosure); el.Verdict != Fails {
					t.Errorf("%s: a planted 10⁻³ in element %d is %v (bound %g)", name, k, el.Verdict, gc.sharp[k].Bound)
				}
				t.Logf("%s: parameter element %d: smallest planted caught %s (least bound %g, classic %g; |exact| %g)", name, k, smallestCaught(got[k], gc.sharp[k].Enclosure), gc.sharp[k].Bound, gc.sharp[k].Classic, mag(comb[k].Exact))
			}
		}
	}
}
