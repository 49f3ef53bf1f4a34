package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// evaluation is one binary32 evaluation of the model: its name and output.
type evaluation struct {
	name string
	out  []float32
}

// evaluations runs every evaluator the tests have on (g, p, x): spec.F32
// (left folds), spec.Binary32 (the bit-level soft-float), and the tree
// scalar under every policy, with and without fused multiply-adds.
func evaluations(t testing.TB, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []evaluation {
	t.Helper()
	var evs []evaluation
	f, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.F32](x))
	if err == nil {
		o := make([]float32, len(f.Data))
		for i, v := range f.Data {
			o[i] = float32(v)
		}
		evs = append(evs, evaluation{"f32", o})
	}
	b, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.Binary32](x))
	if err == nil {
		o := make([]float32, len(b.Data))
		for i, v := range b.Data {
			o[i] = v.Float32()
		}
		evs = append(evs, evaluation{"binary32", o})
	}
	for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom, polBlocked8} {
		for _, fma := range []bool{false, true} {
			treePolicy, treeFMA = pol, fma
			r, err := irsem.Denote(g, p, irsem.ConvertTensor[tree](x))
			if err != nil {
				continue
			}
			o := make([]float32, len(r.Data))
			for i, v := range r.Data {
				o[i] = float32(v.val())
			}
			evs = append(evs, evaluation{fmt.Sprintf("tree(policy %d, fma %v)", pol, fma), o})
		}
	}
	treePolicy, treeFMA = polLeft, false
	return evs
}

// exactOf returns the exact output over spec.Rat, or nil when the graph
// has no exact rational semantics (or fails over Rat), and the interval
// enclosure of it over spec.Interval otherwise.
func exactOf(g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) ([]*big.Rat, []spec.Interval) {
	if r, err := irsem.Denote(g, p, x); err == nil {
		out := make([]*big.Rat, len(r.Data))
		for i, v := range r.Data {
			out[i] = v.Big()
		}
		return out, nil
	}
	iv, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		return nil, nil
	}
	return nil, iv.Data
}

// checkSound asserts the theorem on one case: wherever the bound is
// finite, the exact value lies in Exact and every evaluation is finite and
// within Bound of it (decided exactly). It returns the number of elements
// with a finite bound, and the largest ratio error/bound seen.
func checkSound(t *testing.T, label string, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, o Options) (finite int, worst float64) {
	t.Helper()
	encl, err := Bounds(g, p, x, o)
	if err != nil {
		t.Fatalf("%s: Bounds: %v", label, err)
	}
	rats, ivs := exactOf(g, p, x)
	evs := evaluations(t, g, p, x)
	for i, en := range encl {
		if math.IsInf(en.Bound, 1) {
			continue
		}
		finite++
		b := new(big.Rat).SetFloat64(en.Bound)
		if rats != nil && !en.Exact.Contains(rats[i]) {
			t.Fatalf("%s: element %d: exact %s not in %v", label, i, rats[i].RatString(), en.Exact)
		}
		for _, ev := range evs {
			v := float64(ev.out[i])
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: element %d: %s gave %v under a finite bound %g", label, i, ev.name, v, en.Bound)
			}
			fv := new(big.Rat).SetFloat64(v)
			var d *big.Rat
			switch {
			case rats != nil:
				d = new(big.Rat).Abs(new(big.Rat).Sub(fv, rats[i]))
			case ivs != nil:
				// The distance to the interval enclosure of the exact
				// value is a lower bound of |v − exact|.
				d = new(big.Rat)
				if lo := new(big.Rat).SetFloat64(ivs[i].Lo); !math.IsInf(ivs[i].Lo, 0) && lo.Cmp(fv) > 0 {
					d.Sub(lo, fv)
				} else if hi := new(big.Rat).SetFloat64(ivs[i].Hi); !math.IsInf(ivs[i].Hi, 0) && fv.Cmp(hi) > 0 {
					d.Sub(fv, hi)
				}
			default:
				continue
			}
			if d.Cmp(b) > 0 {
				df, _ := d.Float64()
				t.Fatalf("%s: element %d: %s gave %v, |error| %g > bound %g (exact in %v)", label, i, ev.name, v, df, en.Bound, en.Exact)
			}
			if en.Bound > 0 {
				df, _ := d.Float64()
				worst = max(worst, df/en.Bound)
			}
		}
	}
	return finite, worst
}

// binary32Input redraws x's values as random binary32 numbers of mixed
// magnitudes (exact rationals).
func binary32Input(r *rand.Rand, x irsem.RatTensor) irsem.RatTensor {
	return scaledInput(r, x, 0)
}

// scaledInput is binary32Input with every magnitude scaled by 2^exp:
// exp = −140 reaches the subnormal range (products underflow), exp = 60
// makes products and squares overflow binary32.
func scaledInput(r *rand.Rand, x irsem.RatTensor, exp int) irsem.RatTensor {
	out := irsem.RatTensor{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	for i := range out.Data {
		f := float32(r.NormFloat64() * math.Ldexp(1, r.IntN(5)-2+exp))
		v, _ := spec.RatFromFloat64(float64(f))
		out.Data[i] = v
	}
	return out
}

// TestSoundRandomGraphs is the empirical side of the theorem: random IR
// graphs of every generator primitive (casegen.GenGraph), on their
// small rational inputs and on random binary32 inputs, evaluated by ten
// binary32 evaluators that differ in summation order and FMA use; every
// evaluation must be within the bound wherever the bound is finite, and the
// exact value inside the enclosure. 1500 graphs with TLCHECK_EXHAUSTIVE
// set (CI's ci/exhaustive.sh), 400 by default, 100 under -short.
func TestSoundRandomGraphs(t *testing.T) {
	cases := 400
	if os.Getenv("TLCHECK_EXHAUSTIVE") != "" {
		cases = 1500
	}
	if testing.Short() {
		cases = 100
	}
	r := rand.New(rand.NewPCG(7, 11))
	finite, total := 0, 0
	worst := 0.0
	for seed := range cases {
		gc, err := casegen.GraphSeed(uint64(seed), casegen.GraphOptions{MaxNodes: 10})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		inputs := []irsem.RatTensor{gc.Input, binary32Input(r, gc.Input)}
		if seed%4 == 0 {
			inputs = append(inputs, scaledInput(r, gc.Input, -140), scaledInput(r, gc.Input, 60))
		}
		for k, x := range inputs {
			f, w := checkSound(t, fmt.Sprintf("seed %d input %d (%s)", seed, k, gc.Recipe), gc.Graph, gc.Payload, x, Options{})
			finite += f
			total += gc.Graph.Nodes[gc.Graph.OutputID].Shape.Size()
			worst = max(worst, w)
		}
	}
	t.Logf("%d of %d output elements bounded; worst error/bound %.3g", finite, total, worst)
	if finite < total/2 {
		t.Errorf("only %d of %d elements have a finite bound: the bound is useless", finite, total)
	}
}
