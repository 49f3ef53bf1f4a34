package casegen

import (
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestWideReachesEveryPrimitive: over a few hundred seeds, every registry
// primitive appears in some wide typed graph, and every one with a usable
// IR form in some wide IR graph. The list is the registry's, so a
// primitive added without a generator fails here.
func TestWideReachesEveryPrimitive(t *testing.T) {
	const seeds = 300
	seen, seenIR := map[string]bool{}, map[string]bool{}
	for s := uint64(0); s < seeds; s++ {
		tc, err := GenWideTyped(NewRandSource(s), GraphOptions{})
		if err != nil {
			t.Fatalf("seed %d: %v", s, err)
		}
		for _, st := range tc.Recipe.Steps {
			seen[st.Op] = true
		}
		gc, err := GenWideGraph(NewRandSource(s), GraphOptions{})
		if err != nil {
			t.Fatalf("seed %d (IR): %v", s, err)
		}
		for _, st := range gc.Recipe.Steps {
			seenIR[st.Op] = true
		}
	}
	for _, info := range spec.Infos() {
		if !seen[info.Name] {
			t.Errorf("primitive %s appears in no wide typed graph over %d seeds", info.Name, seeds)
		}
		if wideIR(info) && !seenIR[info.Name] {
			t.Errorf("primitive %s appears in no wide IR graph over %d seeds", info.Name, seeds)
		}
	}
}

// TestWideGraphsWellFormed: wide typed graphs build and, where exact,
// evaluate over Rat at their inputs to the values the generator tracked;
// wide IR graphs encode, decode and denote.
func TestWideGraphsWellFormed(t *testing.T) {
	for s := uint64(0); s < 200; s++ {
		for _, o := range []GraphOptions{{}, {Exact: true}, {ZeroPreserving: true}} {
			src := NewRandSource(s)
			tc, err := GenWideTyped(src, o)
			if err != nil {
				t.Fatalf("seed %d %+v: %v", s, o, err)
			}
			g, err := BuildTyped(tc.Recipe, spec.Default[spec.Rat]())
			if err != nil {
				t.Fatalf("seed %d %+v: build: %v\n%s", s, o, err, tc.Recipe)
			}
			if o.Exact {
				if _, err := g.Eval(tc.Inputs); err != nil {
					t.Fatalf("seed %d: exact wide graph fails over Rat: %v\n%s", s, err, tc.Recipe)
				}
			}
			gc, err := GenWideGraph(NewRandSource(s), o)
			if err != nil {
				t.Fatalf("seed %d %+v (IR): %v", s, o, err)
			}
			b, err := irsem.EncodeGraph(gc.Graph)
			if err != nil {
				t.Fatalf("seed %d (IR): encode: %v\n%s", s, err, gc.Recipe)
			}
			if _, err := irsem.DecodeGraph(b); err != nil {
				t.Fatalf("seed %d (IR): decode: %v\n%s", s, err, gc.Recipe)
			}
			if o.Exact {
				if _, err := irsem.DenoteAll(gc.Graph, gc.Payload, gc.Input); err != nil {
					t.Fatalf("seed %d (IR): denote over Rat: %v\n%s", s, err, gc.Recipe)
				}
			}
		}
	}
}

// TestWidePlantsTiesAndKinks: the wide stream's exact graphs put exact
// zeros before kinked primitives and equal values in pooling windows on
// some seeds (the generator's flat regions and zero shifts).
func TestWidePlantsTiesAndKinks(t *testing.T) {
	kinkZero, poolTie := 0, 0
	for s := uint64(0); s < 300; s++ {
		tc, err := GenWideTyped(NewRandSource(s), GraphOptions{Exact: true})
		if err != nil {
			t.Fatal(err)
		}
		g, err := BuildTyped(tc.Recipe, spec.Default[spec.Rat]())
		if err != nil {
			t.Fatal(err)
		}
		vals, err := g.Eval(tc.Inputs)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tc.Recipe.Steps {
			if len(st.In) == 0 {
				continue
			}
			x := vals[st.In[0]]
			switch st.Op {
			case "relu", "abs", "sign":
				for _, v := range x.Data {
					if v.IsZero() {
						kinkZero++
						break
					}
				}
			case "max_pool", "max_pool_nd":
				seen := map[string]bool{}
				for _, v := range x.Data {
					if seen[v.String()] {
						poolTie++
						break
					}
					seen[v.String()] = true
				}
			}
		}
	}
	if kinkZero < 5 || poolTie < 5 {
		t.Errorf("planted kinks %d, pool inputs with equal values %d over 300 seeds; want ≥ 5 each", kinkZero, poolTie)
	}
}

// TestWidePlantsNormTies: the wide stream's exact graphs meet the tie of
// l2_normalize (a lane with ‖x‖₂ = ε) and of renorm (a sub-tensor with
// ‖x‖₂ = maxnorm) on some seeds: the squared norm, summed here from the
// definition, equals the bound squared.
func TestWidePlantsNormTies(t *testing.T) {
	ties := map[string]int{}
	for s := uint64(0); s < 300; s++ {
		tc, err := GenWideTyped(NewRandSource(s), GraphOptions{Exact: true, Lead: int(s) + 1})
		if err != nil {
			t.Fatal(err)
		}
		g, err := BuildTyped(tc.Recipe, spec.Default[spec.Rat]())
		if err != nil {
			t.Fatal(err)
		}
		vals, err := g.Eval(tc.Inputs)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range tc.Recipe.Steps {
			var bound *big.Rat
			switch st.Op {
			case "l2_normalize":
				bound = st.Attrs.Eps
			case "renorm":
				bound = st.Attrs.Maxnorm
			default:
				continue
			}
			if bound == nil || bound.Sign() == 0 {
				continue
			}
			x := vals[st.In[0]]
			ax, _ := spec.NormAxis(st.Attrs.Axis, x.Shape.Rank())
			sq := map[int]*big.Rat{} // group → Σ x²
			for flat, v := range x.Data {
				i := flat
				for k := x.Shape.Rank() - 1; k > ax; k-- {
					i /= x.Shape[k]
				}
				key := i % x.Shape[ax]       // renorm: the sub-tensor index
				if st.Op == "l2_normalize" { // the lane: every index but ax's
					inner := 1
					for k := ax + 1; k < x.Shape.Rank(); k++ {
						inner *= x.Shape[k]
					}
					key = flat/(inner*x.Shape[ax])*inner + flat%inner
				}
				if sq[key] == nil {
					sq[key] = new(big.Rat)
				}
				sq[key].Add(sq[key], new(big.Rat).Mul(v.Big(), v.Big()))
			}
			b2 := new(big.Rat).Mul(bound, bound)
			for _, q := range sq {
				if q.Cmp(b2) == 0 {
					ties[st.Op]++
					break
				}
			}
		}
	}
	for _, op := range []string{"l2_normalize", "renorm"} {
		if ties[op] < 1 {
			t.Errorf("%s: no application at its tie over 300 seeds (ties %v)", op, ties)
		}
	}
	t.Logf("applications at the tie: %v", ties)
}
