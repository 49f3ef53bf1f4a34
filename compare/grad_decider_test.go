package compare

import (
	"encoding/json"
	"fmt"
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
)

// TestGradsJSONDecider: on tanh MLPs, where the first-order bounds are
// below the classic one on some elements and not on others, the
// tlcheck.compare-grad.v3 entry names per element the bound that decided
// it, re-derived here from a second run with the classic bound alone and
// from fpbound.GradErrSharpParams' boxed and combined bounds read
// directly: an element is a first-order bound's exactly when its bound is
// strictly below the classic-only run's bound for it, the combined
// bound's when that is strictly below the boxed one, and its bound is the
// least of the three. The per-gradient counts sum the
// elements' names. The recorded values are the float32 nearest the
// midpoint of the exact enclosure (they hold; the decider does not depend
// on the verdict).
func TestGradsJSONDecider(t *testing.T) {
	cases := []struct {
		seed         uint64
		width, depth int
	}{
		{3, 4, 4},
		{5, 6, 8},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("tanh_w%d_d%d", tc.width, tc.depth), func(t *testing.T) {
			n, err := nets.MLP(tc.seed, tc.width, tc.depth, irsem.OpTanh, nets.Default)
			if err != nil {
				t.Fatal(err)
			}
			m, err := GradModelIR(&model.Model{Graph: n.Graph, Payload: n.Payload, Input: n.Input})
			if err != nil {
				t.Fatal(err)
			}
			zero := &Dump{Format: "tlcheck.grads.v1", Grads: map[string]DumpTensor{}}
			for _, tg := range m.Targets {
				vals := make([]json.RawMessage, tg.Shape.Size())
				for k := range vals {
					vals[k] = json.RawMessage("0")
				}
				zero.Grads[tg.Name] = DumpTensor{Shape: tg.Shape.Clone(), Values: vals}
			}
			first, err := GradsWith(m, zero, fpbound.Options{}, true)
			if err != nil {
				t.Fatal(err)
			}
			mid := &Dump{Format: "tlcheck.grads.v1", Grads: map[string]DumpTensor{}}
			for _, g := range first {
				vals := make([]json.RawMessage, len(g.Elements))
				for k, el := range g.Elements {
					vals[k] = json.RawMessage(fmt.Sprint(float32((el.Exact.Lo + el.Exact.Hi) / 2)))
				}
				mid.Grads[g.Name] = DumpTensor{Shape: g.Shape.Clone(), Values: vals}
			}
			classic, err := GradsWith(m, mid, fpbound.Options{}, true)
			if err != nil {
				t.Fatal(err)
			}
			sharp, err := GradsWith(m, mid, fpbound.Options{}, false)
			if err != nil {
				t.Fatal(err)
			}
			seed, err := m.Seed(mid)
			if err != nil {
				t.Fatal(err)
			}
			gb, err := fpbound.GradErrSharpParams(n.Graph, n.Payload, n.Input, seed, fpbound.Options{})
			if err != nil || gb.Boxed == nil {
				t.Fatalf("%v (boxed: %s)", err, gb.Reason)
			}
			// first-order bounds of target gi's element k (the targets are
			// the input, then the parameters in order: GradModelIR)
			firstOrder := func(gi, k int) (boxed, comb float64) {
				comb = math.Inf(1)
				if gi == 0 {
					if gb.Combined != nil {
						comb = gb.Combined[k].Bound
					}
					return fpbound.EncloseErr(gb.Boxed.Input.Data[k], gb.BoxedUndecided).Bound, comb
				}
				if c := gb.CombinedParams[gi-1]; c != nil {
					comb = c[k].Bound
				}
				return fpbound.EncloseErr(gb.Boxed.Params[gi-1].Data[k], gb.BoxedUndecided).Bound, comb
			}
			total := map[string]int{}
			for gi, g := range sharp {
				j, jc := g.JSON(true), classic[gi].JSON(true)
				count := map[string]int{}
				for k, el := range j.Elements {
					cb := classic[gi].Elements[k].Bound
					bb, comb := firstOrder(gi, k)
					if b := g.Elements[k].Bound; b != math.Min(cb, math.Min(bb, comb)) {
						t.Errorf("%s[%d]: bound %g, classic %g, boxed %g, combined %g", g.Name, k, b, cb, bb, comb)
					}
					want := "classic"
					switch {
					case math.IsInf(g.Elements[k].Bound, 1):
						want = "none"
					case g.Elements[k].Bound < cb && comb < bb:
						want = "combined"
					case g.Elements[k].Bound < cb:
						want = "boxed"
					}
					if el.DecidedBy != want {
						t.Errorf("%s[%d]: decided_by %s, want %s (bound %g, classic alone %g)", g.Name, k, el.DecidedBy, want, g.Elements[k].Bound, cb)
					}
					if c := jc.Elements[k].DecidedBy; c != "classic" && !math.IsInf(cb, 1) {
						t.Errorf("%s[%d], classic alone: decided_by %s", g.Name, k, c)
					}
					count[el.DecidedBy]++
				}
				if j.ByBoxed != count["boxed"] || j.ByClassic != count["classic"] || j.ByCombined != count["combined"] {
					t.Errorf("%s: by_boxed %d, by_classic %d, by_combined %d; elements say %v", g.Name, j.ByBoxed, j.ByClassic, j.ByCombined, count)
				}
				if j.Fails != 0 {
					t.Errorf("%s: %d fails for the rounded exact gradient", g.Name, j.Fails)
				}
				for k, v := range count {
					total[k] += v
				}
			}
			if total["combined"] == 0 || total["classic"] == 0 {
				t.Errorf("deciders %v: the case should have combined and classic (else it tests one branch)", total)
			}
			t.Logf("deciders %v", total)
		})
	}
}
