package fpbound

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
)

// TestRatBudgetFallback: a graph exact over spec.Rat whose rational
// evaluation runs past an exact-arithmetic budget (rat-work, rat-bits,
// rat-bits-total) is not refused: SharpBounds encloses the exact values
// with the ball centre, or the float64 centre (or, that off, the interval
// one) where the ball's work cap is passed too, and says so (Sharp.Centre, Sharp.CentreFallback naming
// the limit). The enclosure must contain the exact output (computed over
// spec.Rat without the budget, independently of fpbound), every binary32
// evaluation the tests have must hold (decided, not inconclusive), and a
// planted error must fail: the smallest float32 above Exact.Hi + Bound of
// the fallback (the most sensitive plant a sound checker can catch with
// that enclosure) fails, and the plant the exact centre needs is reported
// beside it (sensitivity: how much larger the fallback's smallest caught
// error is).
func TestRatBudgetFallback(t *testing.T) {
	mlp, err := nets.MLP(7, 6, 2, irsem.OpRelu, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	conv, err := nets.ConvStack(7, 2, 5, 2, nets.Kaiming)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		net      *nets.Net
		lim      limits.Limits
		limit    string // the limit CentreFallback names
		noBall   bool   // ballWork lowered to 1: the interval centre
		wantKind string
	}{
		{mlp, limits.Limits{RatWork: 1}, "rat-work", false, CentreBall},
		{mlp, limits.Limits{RatBits: 8}, "rat-bits", false, CentreBall},
		{mlp, limits.Limits{RatBitsTotal: 64}, "rat-bits-total", false, CentreBall},
		{mlp, limits.Limits{RatWork: 1}, "rat-work", true, CentreFloat64},
		{conv, limits.Limits{RatWork: 1}, "rat-work", false, CentreBall},
		{conv, limits.Limits{RatBits: 8}, "rat-bits", true, CentreFloat64},
		// The float64 centre off (centre64On): the interval one.
		{mlp, limits.Limits{RatWork: 1}, "rat-work", true, CentreInterval},
		{conv, limits.Limits{RatBits: 8}, "rat-bits", true, CentreInterval},
	}
	cap0 := ballWork
	t.Cleanup(func() { ballWork = cap0 })
	for _, c := range cases {
		n := c.net
		exact, err := irsem.Denote(n.Graph, n.Payload, n.Input)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if ref[0].Centre != CentreExact || ref[0].CentreFallback != "" {
			t.Fatalf("%s: default limits: centre %q (%q), want exact", n.Name, ref[0].Centre, ref[0].CentreFallback)
		}
		restore := limits.Set(c.lim)
		if c.noBall {
			ballWork = 1
		}
		centre64On = c.wantKind != CentreInterval
		sh, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		restore()
		ballWork, centre64On = cap0, true
		if err != nil {
			t.Fatalf("%s, %s: refused: %v", n.Name, c.limit, err)
		}
		evs := evaluations(t, n.Graph, n.Payload, n.Input)
		worst := 0.0
		for i, s := range sh {
			if s.Centre != c.wantKind || !strings.Contains(s.CentreFallback, "over the "+c.limit+" limit") {
				t.Fatalf("%s, %s: element %d: centre %q, fallback %q; want %q naming %s", n.Name, c.limit, i, s.Centre, s.CentreFallback, c.wantKind, c.limit)
			}
			x := exact.Data[i].Big()
			lo, hi := new(big.Rat).SetFloat64(s.Exact.Lo), new(big.Rat).SetFloat64(s.Exact.Hi)
			if lo.Cmp(x) > 0 || hi.Cmp(x) < 0 {
				t.Fatalf("%s, %s: element %d: exact %s outside the enclosure %v", n.Name, c.limit, i, x.FloatString(20), s.Exact)
			}
			if math.IsInf(s.Bound, 1) {
				t.Fatalf("%s, %s: element %d: no finite bound", n.Name, c.limit, i)
			}
			for _, ev := range evs {
				if v := Judge(ev.out[i], s.Enclosure).Verdict; v != Holds {
					t.Fatalf("%s, %s: element %d: %s evaluation %g is %v, want holds", n.Name, c.limit, i, ev.name, ev.out[i], v)
				}
			}
			// The smallest planted value provably outside: the float32
			// above Exact.Hi + Bound.
			plant := func(en Enclosure) float32 {
				v := float32(en.Exact.Hi + en.Bound)
				for float64(v) <= en.Exact.Hi+en.Bound {
					v = math.Nextafter32(v, float32(math.Inf(1)))
				}
				return math.Nextafter32(v, float32(math.Inf(1)))
			}
			p := plant(s.Enclosure)
			if v := Judge(p, s.Enclosure).Verdict; v != Fails {
				t.Fatalf("%s, %s: element %d: planted %g (f32 %g, bound %g) is %v, want fails", n.Name, c.limit, i, p, evs[0].out[i], s.Bound, v)
			}
			d := float64(p) - float64(evs[0].out[i])
			dRef := float64(plant(ref[i].Enclosure)) - float64(evs[0].out[i])
			if dRef > 0 {
				worst = max(worst, d/dRef)
			}
		}
		t.Logf("%s, %s: centre %s; smallest caught plant ≤ %.4g × the exact centre's", n.Name, c.limit, c.wantKind, worst)
	}
}
