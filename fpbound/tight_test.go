package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"os"
	"sort"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// ratios returns, over every output element and every evaluator, the
// ratio |evaluation − exact| / Bound (exact over Rat when the graph is
// exact, else the interval midpoint), and the relative bound
// Bound/|exact| of each element.
func ratios(t testing.TB, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) (rs, rel []float64) {
	t.Helper()
	encl, err := Bounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	rats, ivs := exactOf(g, p, x)
	for _, ev := range evaluations(t, g, p, x) {
		for i, en := range encl {
			var d float64
			if rats != nil {
				fv := new(big.Rat).SetFloat64(float64(ev.out[i]))
				d, _ = new(big.Rat).Abs(fv.Sub(fv, rats[i])).Float64()
			} else {
				d = math.Abs(float64(ev.out[i]) - ivs[i].Float64())
			}
			rs = append(rs, d/en.Bound)
		}
	}
	for _, en := range encl {
		rel = append(rel, en.Bound/math.Abs(en.Exact.Float64()))
	}
	return rs, rel
}

func quantiles(v []float64) string {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	q := func(f float64) float64 { return s[int(f*float64(len(s)-1))] }
	return fmt.Sprintf("median %.3g, p90 %.3g, max %.3g", q(0.5), q(0.9), s[len(s)-1])
}

// TestTightness reports, for MLPs of growing depth (16 → 64 … → 10), the
// ratio actual error / bound over ten evaluators and the bound relative to
// the value. It asserts only soundness (ratio ≤ 1); the figures are in the
// log (go test -run Tightness -v; FPBOUND_TIGHTNESS=1 adds depths 8 and
// 16, which take seconds).
func TestTightness(t *testing.T) {
	depths := []int{1, 2, 4}
	if os.Getenv("FPBOUND_TIGHTNESS") != "" {
		depths = append(depths, 8, 16)
	}
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, l := range depths {
			g, p, x := mlp(uint64(l), 16, 64, l, 10, act)
			rs, rel := ratios(t, g, p, x)
			for _, r := range rs {
				if r > 1 {
					t.Fatalf("%s depth %d: ratio %g > 1", act, l, r)
				}
			}
			t.Logf("MLP 16-64×%d-10 (%s): error/bound %s; bound/|value| %s", l, act, quantiles(rs), quantiles(rel))
		}
	}
	// A single dot product of 64 terms: the bound is γ-tight up to the
	// orders the evaluators try.
	b := newBuilder(spec.Shape{64})
	r := newRand(5)
	w := b.konst(randTensor(r, spec.Shape{64}, 1))
	m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{64}, 0, w)
	b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
	rs, rel := ratios(t, b.g, b.p, randTensor(r, spec.Shape{64}, 1))
	t.Logf("dot product of 64: error/bound %s; bound/|value| %s", quantiles(rs), quantiles(rel))
}

// BenchmarkBoundsMLP times Bounds on a 16-64×4-10 tanh MLP (4 hidden
// layers of 64).
func BenchmarkBoundsMLP(b *testing.B) {
	g, p, x := mlp(1, 16, 64, 4, 10, irsem.OpTanh)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Bounds(g, p, x, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDenoteF32MLP is the same MLP's plain f32 evaluation, for the
// ratio.
func BenchmarkDenoteF32MLP(b *testing.B) {
	g, p, x := mlp(1, 16, 64, 4, 10, irsem.OpTanh)
	in := irsem.ConvertTensor[spec.F32](x)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := irsem.Denote(g, p, in); err != nil {
			b.Fatal(err)
		}
	}
}
