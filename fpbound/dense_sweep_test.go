package fpbound

import (
	"fmt"
	"sort"
	"time"

	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// liveCase is an o×n adjoint s (centres, some columns all 0) and an n×nq
// Jacobian J with radii, for liveProduct.
type liveCase struct {
	o, n, nq int
	s        []float64
	jc, jr   []float64
}

// liveCases are the products of TestLiveProductEncloses: a tight one
// (one live column, s = 1, J = ⟨1/2, 1/4⟩: the centre is exact, the
// exact range [1/4, 3/4] and ρ exceeds 1/4 by the a-priori rounding
// charge alone, a few ulps) and random ones with dead columns.
func liveCases() []liveCase {
	tight := liveCase{o: 3, n: 6, nq: 4}
	tight.s = make([]float64, tight.o*tight.n)
	tight.jc = make([]float64, tight.n*tight.nq)
	tight.jr = make([]float64, tight.n*tight.nq)
	for a := 0; a < tight.o; a++ {
		tight.s[a*tight.n+2] = 1
	}
	for i := range tight.jc {
		tight.jc[i], tight.jr[i] = 0.5, 0.25
	}
	cs := []liveCase{tight}
	r := rand.New(rand.NewPCG(38, 1))
	for _, d := range [][3]int{{4, 16, 8}, {8, 64, 16}, {5, 33, 7}} {
		c := liveCase{o: d[0], n: d[1], nq: d[2]}
		c.s = make([]float64, c.o*c.n)
		c.jc = make([]float64, c.n*c.nq)
		c.jr = make([]float64, c.n*c.nq)
		for p := 0; p < c.n; p++ {
			if p%3 == 1 {
				continue // a dead column
			}
			for a := 0; a < c.o; a++ {
				c.s[a*c.n+p] = r.NormFloat64()
			}
		}
		for i := range c.jc {
			c.jc[i] = r.NormFloat64()
			if i%4 == 0 {
				c.jr[i] = math.Abs(r.NormFloat64()) / 8
			}
		}
		cs = append(cs, c)
	}
	return cs
}

// liveRun runs liveProduct on c with a planted shrink of shrink ulps (0:
// none) and, with all, every term (sweepAllTerms).
func liveRun(t *testing.T, c liveCase, shrink int, all bool) enclose.Planes {
	t.Helper()
	s := &adjMat{c: append([]float64(nil), c.s...)}
	J := jac{rows: c.n, cols: c.nq, p: enclose.Planes{C: c.jc, R: c.jr}}
	out := enclose.Make(c.o * c.nq)
	liveShrink, sweepAllTerms = shrink, all
	defer func() { liveShrink, sweepAllTerms = 0, false }()
	if _, _, _, _, _, ok := liveProduct(s, &J, c.o, c.n, c.nq, out, planePool{}); !ok {
		t.Fatal("liveProduct declined tame operands")
	}
	return out
}

// liveContains counts the elements of out whose ⟨Ĉ, ρ⟩ does not contain
// the exact range {Σ_p s[a,p]·J[p,q] : J ∈ ⟨Jᶜ, Jʳ⟩} = Σ s·Jᶜ ± Σ |s|·Jʳ,
// computed over big.Rat from c alone.
func liveContains(c liveCase, out enclose.Planes) (bad int) {
	for a := 0; a < c.o; a++ {
		for q := 0; q < c.nq; q++ {
			mid, rad := new(big.Rat), new(big.Rat)
			for p := 0; p < c.n; p++ {
				x := new(big.Rat).SetFloat64(c.s[a*c.n+p])
				mid.Add(mid, new(big.Rat).Mul(x, new(big.Rat).SetFloat64(c.jc[p*c.nq+q])))
				rad.Add(rad, new(big.Rat).Mul(new(big.Rat).Abs(x), new(big.Rat).SetFloat64(c.jr[p*c.nq+q])))
			}
			i := a*c.nq + q
			cc, rr := new(big.Rat).SetFloat64(out.C[i]), new(big.Rat).SetFloat64(out.R[i])
			lo, hi := new(big.Rat).Sub(mid, rad), new(big.Rat).Add(mid, rad)
			if new(big.Rat).Sub(cc, rr).Cmp(lo) > 0 || new(big.Rat).Add(cc, rr).Cmp(hi) < 0 {
				bad++
			}
		}
	}
	return bad
}

// TestLiveProductEncloses: the dense sweep's product over the live terms
// only (liveProduct) encloses the exact range of s·J over J's enclosure,
// checked over big.Rat on every element; its centres are those of the
// product over every term bit for bit and its radii at most theirs (N =
// the live terms: a smaller γ_N); and a planted fault, every radius
// lowered by m ulps, is caught — the smallest m caught is logged (the
// sensitivity; the tight case's slack is the a-priori rounding charge).
func TestLiveProductEncloses(t *testing.T) {
	for ci, c := range liveCases() {
		got, all := liveRun(t, c, 0, false), liveRun(t, c, 0, true)
		if bad := liveContains(c, got); bad != 0 {
			t.Errorf("case %d: %d elements not enclosed", ci, bad)
		}
		for i := range got.C {
			if math.Float64bits(got.C[i]) != math.Float64bits(all.C[i]) || got.R[i] > all.R[i] {
				t.Errorf("case %d element %d: ⟨%v, %v⟩ over the live terms, ⟨%v, %v⟩ over all", ci, i, got.C[i], got.R[i], all.C[i], all.R[i])
				break
			}
		}
	}
	tight := liveCases()[0]
	caught := 0
	for m := 1; m <= 64 && caught == 0; m++ {
		if liveContains(tight, liveRun(t, tight, m, false)) > 0 {
			caught = m
		}
	}
	if caught == 0 {
		t.Fatal("a radius lowered by up to 64 ulps is not caught")
	}
	t.Logf("smallest planted radius shrink caught: %d ulps (ρ = %v over the exact radius 1/4)", caught, liveRun(t, tight, 0, false).R[0])
}

// TestLiveTermsTighter: on the figures' nets (onceNets: ReLU MLPs with
// both inits, a tanh MLP, a conv stack, GPT-2 blocks) and a 16-layer ReLU
// MLP, the products over the live terms change no classic bound, exact
// enclosure or reason, bit for bit, and no first-order bound, bound or
// estimate grows (each is at most its value over every term).
func TestLiveTermsTighter(t *testing.T) {
	skipUnderRace(t)
	ns := onceNets(t)
	deep, err := nets.MLP(116, 64, 16, irsem.OpRelu, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	ns = append(ns, deep)
	tighter, total := 0, 0
	for _, n := range ns {
		got, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		sweepAllTerms = true
		want, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		sweepAllTerms = false
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			x, y := got[i], want[i]
			same := math.Float64bits(x.Classic) == math.Float64bits(y.Classic) &&
				math.Float64bits(x.Exact.Lo) == math.Float64bits(y.Exact.Lo) && math.Float64bits(x.Exact.Hi) == math.Float64bits(y.Exact.Hi) &&
				x.Reason == y.Reason && x.FirstOrderReason == y.FirstOrderReason
			if !same || x.FirstOrder > y.FirstOrder || x.Bound > y.Bound || x.Estimate > y.Estimate {
				t.Errorf("%s element %d: live terms %+v, every term %+v", n.Name, i, x, y)
				break
			}
			total++
			if x.FirstOrder < y.FirstOrder {
				tighter++
			}
		}
	}
	t.Logf("%d of %d first-order bounds tighter, the others identical", tighter, total)
}

// BenchmarkSharpMLPDepths is BenchmarkSharpMLP64 at depths 16, 32 and 64
// (docs/performance.md, sweep38): the min and median ratio of SharpBounds
// to tlcheck's own float32 evaluation (irsem.Denote over F32, 20 runs
// beside each bound), and the largest and summed first-order bound of the
// output (fo-max, fo-sum) to compare builds' bounds.
func BenchmarkSharpMLPDepths(b *testing.B) {
	for _, depth := range []int{16, 32, 64} {
		n, err := nets.MLP(164, 64, depth, irsem.OpRelu, nets.Default)
		if err != nil {
			b.Fatal(err)
		}
		x32 := irsem.ConvertTensor[spec.F32](n.Input)
		b.Run(fmt.Sprintf("depth%d", depth), func(b *testing.B) {
			var ratios []float64
			var sh []Sharp
			for b.Loop() {
				f32 := f32EvalSeconds(b, n.Graph, n.Payload, x32)
				t1 := time.Now()
				if sh, err = SharpBounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
					b.Fatal(err)
				}
				ratios = append(ratios, time.Since(t1).Seconds()/f32)
			}
			sort.Float64s(ratios)
			fmax, fsum := 0.0, 0.0
			for _, s := range sh {
				fmax, fsum = max(fmax, s.FirstOrder), fsum+s.FirstOrder
			}
			b.ReportMetric(ratios[0], "min-ratio")
			b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
			b.ReportMetric(fmax, "fo-max")
			b.ReportMetric(fsum, "fo-sum")
		})
	}
}
