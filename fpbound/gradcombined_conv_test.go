package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// convLayer is one 3×3 conv (stride 1, padding 1) of nets.ConvStack as
// float32s: W [c, c, 3, 3] row-major, b [c].
type convLayer struct{ w, b []float32 }

// convOrder is a float32 summation order of convGrad32: one of the
// fpbound tests' orders (sequential or 8 accumulators, with or without
// FMA) over the terms in their natural order, or with rev over the terms
// from the last (a fold from the other end).
type convOrder struct {
	order
	rev bool
}

func (o convOrder) String() string {
	if o.rev {
		return o.name + " reversed"
	}
	return o.name
}

var convOrders = []convOrder{{orders[0], false}, {orders[0], true}, {orders[1], false}, {orders[2], true}, {orders[3], false}}

// dotOrd is Σ a_k·b_k + bias in binary32 in order o.
func dotOrd(a, b []float32, bias float32, o convOrder) float32 {
	if o.rev {
		a, b = slices.Clone(a), slices.Clone(b)
		slices.Reverse(a)
		slices.Reverse(b)
	}
	return dot32(a, b, bias, o.order)
}

// convGrad32 is the test's own float32 gradient of ⟨c, stack(x)⟩ for a
// conv stack (conv 3×3, stride 1, padding 1, then relu, per layer; ch
// channels, n×n), written from the ops' math, not from the code under
// test: the forward pass keeps every pre-activation z and every layer's
// input h; the reverse pass is relu′ (step(z), 0 at 0) then, per layer,
// dx[ci, y, x] = Σ_{co, ky, kx} g[co, y+1−ky, x+1−kx]·W[co, ci, ky, kx],
// dW[co, ci, ky, kx] = Σ_{oy, ox} g[co, oy, ox]·h[ci, oy+ky−1, ox+kx−1],
// db[co] = Σ g[co, ·] (every sum over the in-range terms only, in order
// o). It returns the input gradient, then per layer dW and db (irgrad's
// context order).
func convGrad32(ls []convLayer, ch, n int, x, c []float32, o convOrder) [][]float32 {
	at := func(v []float32, ci, y, xx int) (float32, bool) {
		if y < 0 || y >= n || xx < 0 || xx >= n {
			return 0, false
		}
		return v[(ci*n+y)*n+xx], true
	}
	hs := make([][]float32, len(ls))
	zs := make([][]float32, len(ls))
	h := x
	for l, ly := range ls {
		hs[l] = h
		z := make([]float32, ch*n*n)
		for co := 0; co < ch; co++ {
			for y := 0; y < n; y++ {
				for xx := 0; xx < n; xx++ {
					var as, ws []float32
					for ci := 0; ci < ch; ci++ {
						for ky := 0; ky < 3; ky++ {
							for kx := 0; kx < 3; kx++ {
								if v, ok := at(h, ci, y+ky-1, xx+kx-1); ok {
									as = append(as, v)
									ws = append(ws, ly.w[((co*ch+ci)*3+ky)*3+kx])
								}
							}
						}
					}
					z[(co*n+y)*n+xx] = dotOrd(as, ws, ly.b[co], o)
				}
			}
		}
		zs[l] = z
		h = make([]float32, len(z))
		for i, v := range z {
			h[i] = max(v, 0)
		}
	}
	g := slices.Clone(c)
	params := make([][]float32, 2*len(ls))
	for l := len(ls) - 1; l >= 0; l-- {
		for i := range g {
			if zs[l][i] <= 0 {
				g[i] = 0
			}
		}
		dw, db := make([]float32, ch*ch*9), make([]float32, ch)
		for co := 0; co < ch; co++ {
			ones := make([]float32, n*n)
			for i := range ones {
				ones[i] = 1
			}
			db[co] = dotOrd(g[co*n*n:(co+1)*n*n], ones, 0, o)
			for ci := 0; ci < ch; ci++ {
				for ky := 0; ky < 3; ky++ {
					for kx := 0; kx < 3; kx++ {
						var as, bs []float32
						for oy := 0; oy < n; oy++ {
							for ox := 0; ox < n; ox++ {
								if v, ok := at(hs[l], ci, oy+ky-1, ox+kx-1); ok {
									as = append(as, g[(co*n+oy)*n+ox])
									bs = append(bs, v)
								}
							}
						}
						dw[((co*ch+ci)*3+ky)*3+kx] = dotOrd(as, bs, 0, o)
					}
				}
			}
		}
		params[2*l], params[2*l+1] = dw, db
		dx := make([]float32, len(g))
		for ci := 0; ci < ch; ci++ {
			for y := 0; y < n; y++ {
				for xx := 0; xx < n; xx++ {
					var as, ws []float32
					for co := 0; co < ch; co++ {
						for ky := 0; ky < 3; ky++ {
							for kx := 0; kx < 3; kx++ {
								if v, ok := at(g, co, y+1-ky, xx+1-kx); ok {
									as = append(as, v)
									ws = append(ws, ls[l].w[((co*ch+ci)*3+ky)*3+kx])
								}
							}
						}
					}
					dx[(ci*n+y)*n+xx] = dotOrd(as, ws, 0, o)
				}
			}
		}
		g = dx
	}
	return append([][]float32{g}, params...)
}

// convGradCase is a nets.ConvStack with a seeded cotangent, its bounds
// (GradErrSharpParams) and the float32 gradients of convGrad32 in every
// order, input first, then every parameter (irgrad's order), flattened.
type convGradCase struct {
	name          string
	gb            *GradBounds
	sharp, noComb []Sharp
	comb          []Enclosure // nil entries: no combined bound
	nIn           int
	gots          map[string][]float32
}

func newConvGradCase(t *testing.T, seed uint64, ch, n, depth int, params bool) convGradCase {
	t.Helper()
	net, err := nets.ConvStack(seed, ch, n, depth, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	var ls []convLayer
	for _, nd := range net.Graph.Nodes {
		if nd.Kind.Op == irsem.OpConv {
			e := net.Payload.Entries[nd.ID]
			ls = append(ls, convLayer{w: f32s(t, e.W.Data), b: f32s(t, e.B.Data)})
		}
	}
	r := rand.New(rand.NewPCG(seed, 41))
	size := ch * n * n
	c := make([]float32, size)
	cr := make([]spec.Rat, size)
	for i := range c {
		c[i] = float32(r.NormFloat64())
		cr[i] = spec.RatFromBig(new(big.Rat).SetFloat64(float64(c[i])))
	}
	seedT := irsem.RatTensor{Shape: spec.Shape{1, ch, n, n}, Data: cr}
	var gb *GradBounds
	if params {
		gb, err = GradErrSharpParams(net.Graph, net.Payload, net.Input, seedT, Options{})
	} else {
		gb, err = GradErrSharp(net.Graph, net.Payload, net.Input, seedT, Options{}, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	cc := convGradCase{name: fmt.Sprintf("conv stack %d ch %d×%d depth %d seed %d", ch, n, n, depth, seed), gb: gb, nIn: size, gots: map[string][]float32{}}
	add := func(cl, bx Err, comb *Enclosure) {
		cc.sharp = append(cc.sharp, GradEnclosure(cl, gb.ClassicUndecided, bx, gb.BoxedUndecided, gb.Boxed != nil, gb.Reason, comb).Sharp)
		cc.noComb = append(cc.noComb, GradEnclosure(cl, gb.ClassicUndecided, bx, gb.BoxedUndecided, gb.Boxed != nil, gb.Reason, nil).Sharp)
		if comb != nil {
			cc.comb = append(cc.comb, *comb)
		} else {
			cc.comb = append(cc.comb, Enclosure{Bound: inf})
		}
	}
	boxed := func(gs *irgrad.Gradients[Err], p, i int) Err {
		if gs == nil {
			return Err{}
		}
		if p < 0 {
			return gs.Input.Data[i]
		}
		return gs.Params[p].Data[i]
	}
	for i := range gb.Classic.Input.Data {
		var comb *Enclosure
		if gb.Combined != nil {
			comb = &gb.Combined[i]
		}
		add(gb.Classic.Input.Data[i], boxed(gb.Boxed, -1, i), comb)
	}
	if params {
		if len(gb.Params) != 2*depth {
			t.Fatalf("%s: %d parameters, want %d", cc.name, len(gb.Params), 2*depth)
		}
		for p := range gb.Params {
			want := []string{irsem.ParamW, irsem.ParamB}[p%2]
			if gb.Params[p].Field != want || gb.Params[p].Node != 2*(p/2)+1 {
				t.Fatalf("%s: parameter %d is %s, want node %d's %s", cc.name, p, gb.Params[p].Name, 2*(p/2)+1, want)
			}
			for i := range gb.Classic.Params[p].Data {
				var comb *Enclosure
				if gb.CombinedParams != nil && gb.CombinedParams[p] != nil {
					comb = &gb.CombinedParams[p][i]
				}
				add(gb.Classic.Params[p].Data[i], boxed(gb.Boxed, p, i), comb)
			}
		}
	}
	x := f32s(t, net.Input.Data)
	for _, o := range convOrders {
		gs := convGrad32(ls, ch, n, x, c, o)
		if !params {
			gs = gs[:1]
		}
		cc.gots[o.String()] = flat32s(gs)
	}
	return cc
}

// check: every element (input, and parameters when bounded) has a finite
// combined bound; every order's float32 gradient holds against the
// combined enclosure and the least of the three; the float32 values just
// outside each fail. It returns the number of elements checked.
func (cc convGradCase) check(t *testing.T) {
	t.Helper()
	if cc.gb.Combined == nil {
		t.Fatalf("%s: no combined bound: %s", cc.name, cc.gb.CombinedReason)
	}
	for i, en := range cc.comb {
		if math.IsInf(en.Bound, 1) {
			t.Errorf("%s: element %d: combined bound +∞: %s", cc.name, i, en.Reason)
			continue
		}
		for o, got := range cc.gots {
			for _, e := range []Enclosure{en, cc.sharp[i].Enclosure} {
				if el := Judge(got[i], e); el.Verdict != Holds {
					t.Errorf("%s %s: gradient element %d = %g is %v against %v ± %g", cc.name, o, i, got[i], el.Verdict, e.Exact, e.Bound)
				}
			}
		}
		for _, e := range []Enclosure{en, cc.sharp[i].Enclosure} {
			for _, v := range justOutside(e) {
				if el := Judge(v, e); el.Verdict != Fails {
					t.Errorf("%s: element %d: %g just outside %v ± %g is %v", cc.name, i, v, e.Exact, e.Bound, el.Verdict)
				}
			}
		}
	}
}

// largest is the index of the element of [lo, hi) of largest exact
// magnitude.
func (cc convGradCase) largest(lo, hi int) int {
	k, best := lo, -1.0
	for i := lo; i < hi; i++ {
		if m := mag(cc.sharp[i].Exact); m > best {
			k, best = i, m
		}
	}
	return k
}

// caught is the smallest planted relative error 10ᵉ (e = −7 … 3) that
// FAILS in element k (the sequential order's value) against sh[k], or
// "none" (smallestCaught).
func (cc convGradCase) caught(sh []Sharp, k int) string {
	got := cc.gots[convOrders[0].String()][k]
	return smallestCaught(got, sh[k].Enclosure)
}

// TestGradCombinedConv: conv stacks (nets.ConvStack, 3×3 conv + relu; 2
// channels 4×4 seed 1 and 3 channels seed 3, depth 2; TLCHECK_EXHAUSTIVE=1 adds 4 channels
// 5×5 at depths 4 and 8) get a finite combined bound on every
// input-gradient element and, through GradErrSharpParams, on every dW
// and db element; the test's own float32 gradients (convGrad32, five
// orders: left fold, reverse fold, FMA, 8 accumulators) hold against the
// combined enclosure and the least of the three; the float32 just
// outside each fails; a planted relative error of 10⁻³ in the largest
// input-gradient element and in the first layer's largest dW element
// fails against the least of the three.
func TestGradCombinedConv(t *testing.T) {
	type c struct {
		seed         uint64
		ch, n, depth int
	}
	cases := []c{{1, 2, 4, 2}, {3, 3, 4, 2}}
	if os.Getenv("TLCHECK_EXHAUSTIVE") == "1" {
		cases = append(cases, c{1, 4, 5, 4}, c{1, 4, 5, 8})
	}
	for _, cs := range cases {
		cc := newConvGradCase(t, cs.seed, cs.ch, cs.n, cs.depth, true)
		cc.check(t)
		k := cc.largest(0, cc.nIn)
		kw := cc.largest(cc.nIn, cc.nIn+cs.ch*cs.ch*9)
		for _, k := range []int{k, kw} {
			if mag(cc.sharp[k].Exact) == 0 {
				t.Errorf("%s: element %d: every element of its gradient is exactly 0 (a dead net: no test)", cc.name, k)
			}
			if got := cc.caught(cc.sharp, k); got == "none" || got == "1e-1" || got == "1e-2" {
				t.Errorf("%s: element %d: the planted 10⁻³ is not caught (smallest caught %s)", cc.name, k, got)
			}
		}
	}
}

// TestGradCombinedConvFigures (GRADFIG=1): conv stacks 4 channels 6×6,
// depths 2, 4, 8 (seed 1): the soundness checks of TestGradCombinedConv
// on the input gradient and the first layer's dW, and the median
// bound/actual and the smallest planted relative error caught in the
// largest element, classic/boxed → least of the three.
func TestGradCombinedConvFigures(t *testing.T) {
	if os.Getenv("GRADFIG") == "" {
		t.Skip("GRADFIG=1 runs the conv-stack gradient figures")
	}
	for _, depth := range []int{2, 4, 8} {
		t0 := time.Now()
		cc := newConvGradCase(t, 1, 4, 6, depth, true)
		el := time.Since(t0)
		cc.check(t)
		ratio := func(sh []Sharp, lo, hi int) float64 {
			var rs []float64
			got := cc.gots[convOrders[0].String()]
			for i := lo; i < hi; i++ {
				s := sh[i]
				if a := math.Abs(float64(got[i]) - (s.Exact.Lo+s.Exact.Hi)/2); a > 0 {
					rs = append(rs, s.Bound/a)
				}
			}
			return med(rs)
		}
		k, kw := cc.largest(0, cc.nIn), cc.largest(cc.nIn, cc.nIn+16*9)
		t.Logf("%s (%.1f s): input gradient: median bound/actual classic/boxed %.2g → least %.2g, planted caught %s → %s; first dW: %.2g → %.2g, %s → %s",
			cc.name, el.Seconds(), ratio(cc.noComb, 0, cc.nIn), ratio(cc.sharp, 0, cc.nIn), cc.caught(cc.noComb, k), cc.caught(cc.sharp, k),
			ratio(cc.noComb, cc.nIn, cc.nIn+16*9), ratio(cc.sharp, cc.nIn, cc.nIn+16*9), cc.caught(cc.noComb, kw), cc.caught(cc.sharp, kw))
	}
}
