package fpbound

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// erfMLPGrad32 is the test's own float32 input gradient of an mlp(…,
// opErf) graph (linear layers with erf between them), written from the
// math, not from the registry: forward sums and the reverse Wᵀ products
// as a left fold (rev false) or a fold from the last term (rev true),
// erf as math.Erf rounded to float32, erf′(h) as fl(fl(2/√π)·fl(exp(
// fl(−h·h)))) — the runtime's recipe the model M1 assumes.
func erfMLPGrad32(g *irsem.Graph, p *irsem.Payload, x, dy irsem.RatTensor, rev bool) []float32 {
	f32 := func(t irsem.RatTensor) []float32 {
		o := make([]float32, len(t.Data))
		for i, v := range t.Data {
			o[i] = float32(v.Float64())
		}
		return o
	}
	type layer struct {
		w, b    []float32
		out, in int
	}
	var ls []layer
	for id := range g.Nodes {
		if g.Nodes[id].Kind.Op == irsem.OpLinear {
			e := p.Entries[id]
			ls = append(ls, layer{f32(*e.W), f32(*e.B), e.W.Shape[0], e.W.Shape[1]})
		}
	}
	dot := func(n int, term func(k int) float32, init float32) float32 {
		s := init
		for i := 0; i < n; i++ {
			k := i
			if rev {
				k = n - 1 - i
			}
			s += term(k)
		}
		return s
	}
	c := float32(2 / math.Sqrt(math.Pi))
	deriv := func(h float32) float32 { return c * float32(math.Exp(float64(-(h * h)))) }
	v := f32(x)
	var pre [][]float32
	for li, l := range ls {
		h := make([]float32, l.out)
		for r := range h {
			h[r] = dot(l.in, func(k int) float32 { return l.w[r*l.in+k] * v[k] }, 0) + l.b[r]
		}
		if li == len(ls)-1 {
			break
		}
		pre = append(pre, h)
		v = make([]float32, len(h))
		for i, hv := range h {
			v[i] = float32(math.Erf(float64(hv)))
		}
	}
	gr := f32(dy)
	for li := len(ls) - 1; li >= 0; li-- {
		l := ls[li]
		nx := make([]float32, l.in)
		for k := range nx {
			nx[k] = dot(l.out, func(r int) float32 { return l.w[r*l.in+k] * gr[r] }, 0)
		}
		if li > 0 {
			for k := range nx {
				nx[k] = deriv(pre[li-1][k]) * nx[k]
			}
		}
		gr = nx
	}
	return gr
}

// TestGradCombinedErf: on erf MLPs (widths 6, depths 1–3, seeds 1–3)
// the combined bound, through erf's declarative VJP (the registry's
// erf_deriv step), exists for every input-gradient element; the test's
// own float32 gradient (two fold orders) holds against it; the float32 just past exact.Hi +
// bound fails; and a planted relative error of 10⁻⁴ in the largest
// element fails. Reports the smallest planted relative error caught.
func TestGradCombinedErf(t *testing.T) {
	for depth := 1; depth <= 3; depth++ {
		for seed := uint64(1); seed <= 3; seed++ {
			g, p, x := mlp(seed, 5, 6, depth, 3, opErf)
			dy := randTensor(rand.New(rand.NewPCG(seed, 7)), spec.Shape{3}, 1)
			gb, err := GradErrSharp(g, p, x, dy, Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			if gb.Combined == nil {
				t.Fatalf("depth %d seed %d: no combined bound: %s", depth, seed, gb.CombinedReason)
			}
			big, top := 0, 0.0
			for _, rev := range []bool{false, true} {
				got := erfMLPGrad32(g, p, x, dy, rev)
				for k, v := range got {
					e := gb.Combined[k]
					if math.IsInf(e.Bound, 0) {
						t.Fatalf("depth %d seed %d element %d: unbounded: %s", depth, seed, k, e.Reason)
					}
					f := float64(v)
					if f < e.Exact.Lo-e.Bound || f > e.Exact.Hi+e.Bound {
						t.Errorf("depth %d seed %d rev %v element %d: %g outside %v ± %g", depth, seed, rev, k, f, e.Exact, e.Bound)
					}
					if m := math.Abs(e.Exact.Hi); m > top {
						big, top = k, m
					}
				}
			}
			e := gb.Combined[big]
			out := float32(e.Exact.Hi + e.Bound)
			if float64(out) <= e.Exact.Hi+e.Bound {
				out = math.Nextafter32(out, float32(math.Inf(1)))
			}
			if float64(out) <= e.Exact.Hi+e.Bound {
				t.Errorf("depth %d seed %d: the float32 past the bound holds", depth, seed)
			}
			caught := 0.0
			for _, rel := range []float64{1e-2, 1e-3, 1e-4, 1e-5, 1e-6} {
				v := float64(float32((e.Exact.Lo + e.Exact.Hi) / 2 * (1 + rel)))
				d := math.Max(v-e.Exact.Hi, e.Exact.Lo-v)
				if d > e.Bound {
					caught = rel
				}
			}
			if caught == 0 || caught > 1e-4 {
				t.Errorf("depth %d seed %d: planted 10⁻⁴ not caught (smallest caught %g, bound %g of %g)", depth, seed, caught, e.Bound, top)
			}
			t.Logf("depth %d seed %d: largest element %.4g, combined bound %.3g, smallest planted relative error caught %g", depth, seed, top, e.Bound, caught)
		}
	}
}
