package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// u64 is binary64's unit roundoff, written here from IEEE 754 (p = 53),
// not read from the package.
const u64 = 0x1p-53

func gamma64Hand(n float64) float64 { return n * u64 / (1 - n*u64) }

// TestHandDerivedBounds64 checks Bounds64 on tiny graphs against the
// formulas of doc.go with binary64's constants (u = 2^-53, underflow
// 2^-1075 charged as 2^-1074 for a quotient and 2·2^-1075 = 2^-1074 for a
// product, ulp factor 2^-52), worked out by hand.
func TestHandDerivedBounds64(t *testing.T) {
	one := spec.NewRat(1, 1)
	dot := func(n int) (*builder, irsem.RatTensor) {
		b := newBuilder(spec.Shape{n})
		w := b.konst(filled(spec.Shape{n}, spec.NewRat(3, 2)))
		m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
		b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
		return b, filled(spec.Shape{n}, spec.NewRat(3, 4))
	}
	unary := func(op irsem.Op, x spec.Rat) (*builder, irsem.RatTensor) {
		b := newBuilder(spec.Shape{})
		b.node(irsem.Kind{Op: op}, spec.Shape{}, 0)
		return b, ratTensor(spec.Shape{}, x)
	}
	// fl64(1/3) = 6004799503160661/2^54 (2^54/3 = 6004799503160661.33…
	// rounds down), off by 1/(3·2^54).
	e3 := 0x1p-54 / 3
	type tc struct {
		name  string
		build func() (*builder, irsem.RatTensor)
		ulps  int
		want  float64
	}
	var cases []tc
	for _, n := range []int{2, 64, 1000} {
		// Each product 9/8 is charged u·9/8 + 2^-1074; the sum of n terms
		// γ_{n−1}·Σ(9/8 + Eᵢ): E = n·Eᵢ + γ_{n−1}·n·(9/8 + Eᵢ).
		ei := u64*9/8 + 0x1p-1074
		nf := float64(n)
		cases = append(cases, tc{fmt.Sprintf("dot of %d", n), func() (*builder, irsem.RatTensor) { return dot(n) }, 0,
			nf*ei + gamma64Hand(nf-1)*nf*(9.0/8+ei)})
	}
	cases = append(cases,
		tc{"linear", func() (*builder, irsem.RatTensor) {
			// W = (3/4, 5/8, 3), b = 1 at x = (3/2, 5/4, 3/8): products 9/8,
			// 25/32, 9/8, then 4 terms with the bias (γ_3).
			b := newBuilder(spec.Shape{3})
			b.linear(0, ratTensor(spec.Shape{1, 3}, spec.NewRat(3, 4), spec.NewRat(5, 8), spec.NewRat(3, 1)),
				ratTensor(spec.Shape{1}, one))
			return b, ratTensor(spec.Shape{3}, spec.NewRat(3, 2), spec.NewRat(5, 4), spec.NewRat(3, 8))
		}, 0, func() float64 {
			ep := 97.0/32*u64 + 3*0x1p-1074
			return ep + gamma64Hand(3)*(97.0/32+1+ep)
		}()},
		tc{"mean of 6", func() (*builder, irsem.RatTensor) {
			// Σ·(1/6) with fl64(1/6) = fl64(1/3)/2, off by E_c = 1/(3·2^55):
			// P = 6·E_c + (1/6)·γ_5·6 + γ_5·6·E_c, then u·(1 + P) + 2^-1074.
			b := newBuilder(spec.Shape{6})
			b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 0}, spec.Shape{}, 0)
			return b, filled(spec.Shape{6}, one)
		}, 0, func() float64 {
			ec, es := e3/2, gamma64Hand(5)*6
			p := 6*ec + es/6 + es*ec
			return p + u64*(1+p) + 0x1p-1074
		}()},
		tc{"mean of 8", func() (*builder, irsem.RatTensor) {
			// Σ·(1/8): a product by a power of two is exact but for
			// underflow: γ_7·8/8 + 2^-1074.
			b := newBuilder(spec.Shape{8})
			b.node(irsem.Kind{Op: irsem.OpReduceMean, Axis: 0}, spec.Shape{}, 0)
			return b, filled(spec.Shape{8}, one)
		}, 0, gamma64Hand(7) + 0x1p-1074},
		tc{"exp(x + 1/3)", func() (*builder, irsem.RatTensor) {
			// The constant 1/3 is off by e3; exp is charged e^{1/3+e3}·e3
			// plus k ulps of a result ≤ e^{1/3+e3}: k·(2^-52·top + 2^-1074).
			b := newBuilder(spec.Shape{})
			c := b.konst(ratTensor(spec.Shape{}, spec.NewRat(1, 3)))
			s := b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{}, 0, c)
			b.node(irsem.Kind{Op: irsem.OpExp}, spec.Shape{}, s)
			return b, ratTensor(spec.Shape{}, spec.Rat{})
		}, 0, math.Exp(1.0/3+e3)*e3 + 4*(0x1p-52*math.Exp(1.0/3+e3)+0x1p-1074)},
		tc{"exp(x + 1/3), 1 ulp", func() (*builder, irsem.RatTensor) {
			b := newBuilder(spec.Shape{})
			c := b.konst(ratTensor(spec.Shape{}, spec.NewRat(1, 3)))
			s := b.node(irsem.Kind{Op: irsem.OpAdd}, spec.Shape{}, 0, c)
			b.node(irsem.Kind{Op: irsem.OpExp}, spec.Shape{}, s)
			return b, ratTensor(spec.Shape{}, spec.Rat{})
		}, 1, math.Exp(1.0/3+e3)*e3 + (0x1p-52*math.Exp(1.0/3+e3) + 0x1p-1074)},
		tc{"log(3)", func() (*builder, irsem.RatTensor) {
			// An exact argument: only the library's k ulps of log 3.
			return unary(irsem.OpLog, spec.NewRat(3, 1))
		}, 0, 4 * (0x1p-52*math.Log(3) + 0x1p-1074)},
		tc{"log(1/3)", func() (*builder, irsem.RatTensor) {
			// The input 1/3 is held off by e3 (M1); |log′| ≤ 1/(1/3 − e3)
			// on the hull, and |log| ≤ log(3) + a little there.
			return unary(irsem.OpLog, spec.NewRat(1, 3))
		}, 0, e3/(1.0/3-e3) + 4*(0x1p-52*math.Log(3)+0x1p-1074)},
		tc{"tanh(1/3)", func() (*builder, irsem.RatTensor) {
			// |tanh′| ≤ 1 − tanh²(1/3 − e3) on the hull.
			return unary(irsem.OpTanh, spec.NewRat(1, 3))
		}, 0, (1-math.Pow(math.Tanh(1.0/3-e3), 2))*e3 + 4*(0x1p-52*math.Tanh(1.0/3+e3)+0x1p-1074)},
		tc{"tanh(1/2), 2 ulps", func() (*builder, irsem.RatTensor) {
			return unary(irsem.OpTanh, spec.NewRat(1, 2))
		}, 2, 2 * (0x1p-52*math.Tanh(0.5) + 0x1p-1074)},
		tc{"sqrt(2)", func() (*builder, irsem.RatTensor) {
			// Correctly rounded, never subnormal: u·√2.
			return unary(irsem.OpSqrt, spec.NewRat(2, 1))
		}, 0, u64 * math.Sqrt2},
		tc{"inv(3)", func() (*builder, irsem.RatTensor) {
			// 1/3 rounded once: u·(1/3) + η, η = 2^-1075 charged as 2^-1074.
			return unary(irsem.OpInv, spec.NewRat(3, 1))
		}, 0, u64/3 + 0x1p-1074},
		tc{"x·x at 3·2^62", func() (*builder, irsem.RatTensor) {
			// 9·2^124 ≥ Ω₃₂ = 2^128 − 2^103 would overflow binary32 (no
			// bound there), not binary64: u·9·2^124 + 2^-1074.
			b := newBuilder(spec.Shape{})
			b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
			x, _ := spec.RatFromFloat64(3 * 0x1p62)
			return b, ratTensor(spec.Shape{}, x)
		}, 0, u64 * 9 * 0x1p124},
		tc{"x·x at 2^64", func() (*builder, irsem.RatTensor) {
			// A product by an exact power of two is exact but for
			// underflow: 2^-1074 alone.
			b := newBuilder(spec.Shape{})
			b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
			x, _ := spec.RatFromFloat64(0x1p64)
			return b, ratTensor(spec.Shape{}, x)
		}, 0, 0x1p-1074},
		tc{"x·x at 2^512", func() (*builder, irsem.RatTensor) {
			// 2^1024 ≥ Ω = 2^1024 − 2^970 overflows binary64: no bound.
			b := newBuilder(spec.Shape{})
			b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
			x, _ := spec.RatFromFloat64(0x1p512)
			return b, ratTensor(spec.Shape{}, x)
		}, 0, math.Inf(1)},
		tc{"x·x at 1.5·2^511", func() (*builder, irsem.RatTensor) {
			// 2.25·2^1022 = 1.125·2^1023, below MaxFloat64 < Ω: finite,
			// u·1.125·2^1023 + 2^-1074.
			b := newBuilder(spec.Shape{})
			b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
			x, _ := spec.RatFromFloat64(1.5 * 0x1p511)
			return b, ratTensor(spec.Shape{}, x)
		}, 0, u64 * 1.125 * 0x1p1023},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, x := c.build()
			en, err := Bounds64(b.g, b.p, x, Options{ULPs: c.ulps})
			if err != nil {
				t.Fatal(err)
			}
			if math.IsInf(c.want, 1) {
				if !math.IsInf(en[0].Bound, 1) || en[0].Reason == "" {
					t.Errorf("bound %g, reason %q: want +Inf with a reason", en[0].Bound, en[0].Reason)
				}
				return
			}
			near(t, c.name, en[0].Bound, c.want)
		})
	}
	t.Run("classical γ_n bound of a dot product", func(t *testing.T) {
		// Higham 3.5 with u = 2^-53: γ_n·Σ|xᵢwᵢ| + n·2·2^-1074.
		for _, n := range []int{2, 64, 1000} {
			b, x := dot(n)
			en, err := Bounds64(b.g, b.p, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			nf := float64(n)
			// The inequality has a relative slack of about n·u, of the order
			// of the few float64 upward roundings (2^-52 each) the bound
			// costs in binary64: compare with a 10⁻¹² margin.
			if classical := gamma64Hand(nf)*nf*9/8 + nf*0x1p-1073; en[0].Bound > classical*(1+1e-12) {
				t.Errorf("n = %d: bound %g above the classical %g", n, en[0].Bound, classical)
			}
		}
	})
	t.Run("underflow", func(t *testing.T) {
		// x·x at x = 3·2^-540: the exact 9·2^-1080 is below half the least
		// subnormal 2^-1074, so binary64 gives 0. The bound is u·M +
		// 2^-1074 with M ≥ 9·2^-1080; in float64 arithmetic rounded upward
		// u·M (below every positive float64) becomes 2^-1074 and each of
		// the two upward additions may add one more 2^-1074: the bound lies
		// in (2^-1074, 4·2^-1074].
		b := newBuilder(spec.Shape{})
		b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{}, 0, 0)
		tiny, _ := spec.RatFromFloat64(3 * 0x1p-540)
		en, err := Bounds64(b.g, b.p, ratTensor(spec.Shape{}, tiny), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if b := en[0].Bound; !(b > 0x1p-1074 && b <= 0x1p-1072) {
			t.Errorf("bound %g, want in (2^-1074, 2^-1072]", b)
		}
		x := 3 * 0x1p-540
		exact := new(big.Rat).Mul(new(big.Rat).SetFloat64(x), new(big.Rat).SetFloat64(x))
		if got := x * x; got != 0 || !en[0].Exact.Contains(exact) {
			t.Errorf("binary64 gives %g, exact enclosure %v", got, en[0].Exact)
		}
	})
}

// TestConstants64 checks the M1 term of Err64's constants against IEEE
// 754 rounding worked out by hand, and the edges of the range.
func TestConstants64(t *testing.T) {
	pow := func(k int) *big.Rat {
		if k >= 0 {
			return new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), uint(k)))
		}
		return new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), uint(-k)))
	}
	sub := func(a, b *big.Rat) *big.Rat { return new(big.Rat).Sub(a, b) }
	cases := []struct {
		name string
		r    *big.Rat
		want float64 // the bound |r − fl64(r)|, rounded up to a float64
	}{
		{"3/4", big.NewRat(3, 4), 0},
		{"1/3", big.NewRat(1, 3), 0x1p-54 / 3}, // not a float64: near() allows the rounding
		// fl64(1/10) = 3602879701896397/2^55: 3602879701896397·10 − 2^55 = 2.
		{"1/10", big.NewRat(1, 10), 0x1p-55 / 5},
		// 2^53 + 1 is a tie between 2^53 and 2^53 + 2: even is 2^53.
		{"2^53+1", new(big.Rat).SetInt64(1<<53 + 1), 1},
		{"2^53", new(big.Rat).SetInt64(1 << 53), 0},
		// 2^24 + 1 is exact in binary64 (but not in binary32).
		{"2^24+1", new(big.Rat).SetInt64(1<<24 + 1), 0},
		{"2^-1074", pow(-1074), 0},
		// 2^-1075 is a tie between 0 and 2^-1074: even is 0, off by
		// 2^-1075, which is charged as the least float64 2^-1074.
		{"2^-1075", pow(-1075), 0x1p-1074},
		{"MaxFloat64", sub(pow(1024), pow(971)), 0},
		// Just below Ω = 2^1024 − 2^970: rounds to MaxFloat64, off by
		// 2^970 − 2^-10.
		{"Ω − 2^-10", sub(sub(pow(1024), pow(970)), pow(-10)), 0x1p970},
		// Ω itself is a tie between MaxFloat64 (odd significand) and
		// 2^1024: even is 2^1024, an overflow: no bound.
		{"Ω", sub(pow(1024), pow(970)), math.Inf(1)},
		{"2^1024", pow(1024), math.Inf(1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Err64{}.FromRat(c.r)
			got := v.Bound()
			switch {
			case math.IsInf(c.want, 1) || c.want == 0:
				if got != c.want {
					t.Errorf("bound %g, want %g", got, c.want)
				}
			default:
				near(t, c.name, got, c.want)
			}
			if !math.IsInf(got, 1) && !v.Exact().Contains(c.r) {
				t.Errorf("enclosure %v misses %s", v.Exact(), c.r.RatString())
			}
		})
	}
	for _, c := range []struct {
		n    int64
		want float64
	}{{1 << 53, 0}, {-(1 << 53), 0}, {1<<53 + 1, 1}, {-(1<<53 + 1), 1}, {1<<54 + 2, 2}, {1<<24 + 1, 0}} {
		if got := (Err64{}).FromInt(c.n).Bound(); got != c.want {
			t.Errorf("FromInt(%d): bound %g, want %g", c.n, got, c.want)
		}
	}
	// Err is unchanged: 2^24 + 1 is a binary32 tie, even is 2^24.
	if got := (Err{}).FromInt(1<<24 + 1).Bound(); got != 1 {
		t.Errorf("Err FromInt(2^24+1): bound %g, want 1", got)
	}
	if k32, k64 := (Err{}).Kind(), (Err64{}).Kind(); k32 != "fpbound" || k64 != "fpbound64" {
		t.Errorf("kinds %q, %q", k32, k64)
	}
}

// evaluations64 runs the binary64 evaluators on (g, p, x): spec.F64 (left
// folds, one rounding per operation) and the binary64 tree scalar under
// every summation policy, with and without math.FMA contraction.
func evaluations64(g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []evaluation64 {
	var evs []evaluation64
	if f, err := irsem.Denote(g, p, irsem.ConvertTensor[spec.F64](x)); err == nil {
		o := make([]float64, len(f.Data))
		for i, v := range f.Data {
			o[i] = float64(v)
		}
		evs = append(evs, evaluation64{"f64", o})
	}
	for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom} {
		for _, fma := range []bool{false, true} {
			treePolicy, treeFMA = pol, fma
			r, err := irsem.Denote(g, p, irsem.ConvertTensor[tree64](x))
			if err != nil {
				continue
			}
			o := make([]float64, len(r.Data))
			for i, v := range r.Data {
				o[i] = float64(v.val())
			}
			evs = append(evs, evaluation64{fmt.Sprintf("tree64(policy %d, fma %v)", pol, fma), o})
		}
	}
	treePolicy, treeFMA = polLeft, false
	return evs
}

// evaluation64 is one evaluation's name and output, as float64 values.
type evaluation64 struct {
	name string
	out  []float64
}

// evaluations32 is evaluations (binary32) with float64 outputs.
func evaluations32(t testing.TB, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []evaluation64 {
	var evs []evaluation64
	for _, ev := range evaluations(t, g, p, x) {
		o := make([]float64, len(ev.out))
		for i, v := range ev.out {
			o[i] = float64(v)
		}
		evs = append(evs, evaluation64{ev.name, o})
	}
	return evs
}

// violations lists, over the elements with a finite bound, every
// evaluation that is non-finite or farther than the bound from the exact
// value (decided exactly: the distance to the exact rational, or to the
// interval enclosure — a lower bound of the distance to the exact value —
// when the graph is not rational). It also returns the number of bounded
// elements and the largest ratio distance/bound.
func violations(encl []Enclosure, rats []*big.Rat, ivs []spec.Interval, evs []evaluation64) (finite int, bad []string, worst float64) {
	for i, en := range encl {
		if math.IsInf(en.Bound, 1) {
			continue
		}
		finite++
		b := new(big.Rat).SetFloat64(en.Bound)
		if rats != nil && !en.Exact.Contains(rats[i]) {
			bad = append(bad, fmt.Sprintf("element %d: exact %s not in %v", i, rats[i].RatString(), en.Exact))
		}
		for _, ev := range evs {
			v := ev.out[i]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				bad = append(bad, fmt.Sprintf("element %d: %s gave %v under a finite bound %g", i, ev.name, v, en.Bound))
				continue
			}
			fv := new(big.Rat).SetFloat64(v)
			d := new(big.Rat)
			switch {
			case rats != nil:
				d.Abs(d.Sub(fv, rats[i]))
			case ivs != nil:
				if lo := new(big.Rat).SetFloat64(ivs[i].Lo); !math.IsInf(ivs[i].Lo, 0) && lo.Cmp(fv) > 0 {
					d.Sub(lo, fv)
				} else if hi := new(big.Rat).SetFloat64(ivs[i].Hi); !math.IsInf(ivs[i].Hi, 0) && fv.Cmp(hi) > 0 {
					d.Sub(fv, hi)
				}
			default:
				continue
			}
			df, _ := d.Float64()
			if d.Cmp(b) > 0 {
				bad = append(bad, fmt.Sprintf("element %d: %s gave %v, |error| %g > bound %g (exact in %v)", i, ev.name, v, df, en.Bound, en.Exact))
			}
			if en.Bound > 0 {
				worst = max(worst, df/en.Bound)
			}
		}
	}
	return finite, bad, worst
}

// binary64Input redraws x's values as random binary64 numbers of mixed
// magnitudes scaled by 2^exp (exact rationals): full 53-bit significands,
// so that products and sums round. exp = −1060 reaches binary64's
// subnormal range, exp = 520 makes products and squares overflow.
func binary64Input(r *rand.Rand, x irsem.RatTensor, exp int) irsem.RatTensor {
	out := irsem.RatTensor{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	for i := range out.Data {
		v, _ := spec.RatFromFloat64(r.NormFloat64() * math.Ldexp(1, r.IntN(5)-2+exp))
		out.Data[i] = v
	}
	return out
}

// soundCase64 is one random graph and one of its inputs.
type soundCase64 struct {
	label  string
	g      *irsem.Graph
	p      *irsem.Payload
	x      irsem.RatTensor
	single bool // one rounding per element: where the bound is tightest
}

// singleRounding returns one-operation graphs on 64 random binary64
// values (and a random binary64 constant): each element is one rounded
// product, sum, quotient, square root or library call, where the error of
// a binary64 evaluation comes closest to the bound.
func singleRounding(r *rand.Rand) []soundCase64 {
	sh := spec.Shape{64}
	in := irsem.RatTensor{Shape: sh, Data: make([]spec.Rat, 64)}
	var cs []soundCase64
	for k, op := range []irsem.Op{irsem.OpMulElem, irsem.OpAdd, irsem.OpSquare, irsem.OpInv, irsem.OpSqrt, irsem.OpExp, irsem.OpTanh} {
		b := newBuilder(sh)
		switch op {
		case irsem.OpMulElem, irsem.OpAdd:
			c := b.konst(binary64Input(r, in, 0))
			b.node(irsem.Kind{Op: op}, sh, 0, c)
		case irsem.OpSqrt:
			a := b.node(irsem.Kind{Op: irsem.OpAbs}, sh, 0)
			b.node(irsem.Kind{Op: op}, sh, a)
		default:
			b.node(irsem.Kind{Op: op}, sh, 0)
		}
		cs = append(cs, soundCase64{fmt.Sprintf("single %d (%s)", k, op), b.g, b.p, binary64Input(r, in, 0), true})
	}
	return cs
}

// soundCases64 returns the single-rounding graphs and n random IR graphs
// of every generator primitive (casegen.GenGraph), each on its small
// rational input and on random binary64 inputs (every fourth also in the
// subnormal and the overflow range).
func soundCases64(t *testing.T, n int) []soundCase64 {
	r := rand.New(rand.NewPCG(17, 19))
	cs := singleRounding(r)
	for seed := range n {
		gc, err := casegen.GraphSeed(uint64(seed), casegen.GraphOptions{MaxNodes: 10})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		inputs := []irsem.RatTensor{gc.Input, binary64Input(r, gc.Input, 0)}
		if seed%4 == 0 {
			inputs = append(inputs, binary64Input(r, gc.Input, -1060), binary64Input(r, gc.Input, 520))
		}
		for k, x := range inputs {
			cs = append(cs, soundCase64{fmt.Sprintf("seed %d input %d (%s)", seed, k, gc.Recipe), gc.Graph, gc.Payload, x, false})
		}
	}
	return cs
}

// TestSound64RandomGraphs is the empirical side of the theorem for
// binary64: every binary64 evaluation of random graphs — left folds,
// reversed, pairwise and random summation trees, with and without
// math.FMA contraction of products into sums — is within Bounds64 of the
// exact value wherever that bound is finite, and the exact value is in
// the enclosure.
func TestSound64RandomGraphs(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	finite, total, worst := 0, 0, 0.0
	for _, c := range soundCases64(t, n) {
		encl, err := Bounds64(c.g, c.p, c.x, Options{})
		if err != nil {
			t.Fatalf("%s: Bounds64: %v", c.label, err)
		}
		rats, ivs := exactOf(c.g, c.p, c.x)
		f, bad, w := violations(encl, rats, ivs, evaluations64(c.g, c.p, c.x))
		if len(bad) > 0 {
			t.Fatalf("%s: %d violation(s), first: %s", c.label, len(bad), bad[0])
		}
		finite += f
		total += len(encl)
		worst = max(worst, w)
	}
	t.Logf("%d of %d output elements bounded; worst error/bound %.3g", finite, total, worst)
	if finite < total/2 {
		t.Errorf("only %d of %d elements have a finite bound: the bound is useless", finite, total)
	}
	if worst == 0 {
		t.Errorf("no evaluation ever rounded: the test exercises nothing")
	}
}

// binary64BadU is a planted fault: binary64 with u = 2^-56, eight times
// too small.
type binary64BadU struct{ binary64 }

var constsBadU = func() consts { c := consts64; c.u = 0x1p-56; return c }()

func (binary64BadU) consts() *consts { return &constsBadU }

// TestSound64PlantedFaults: the soundness check catches a bound that is
// too small — binary32 evaluations judged against the binary64 bound, and
// binary64 evaluations against a binary64 bound with a wrong u — on the
// random graphs of TestSound64RandomGraphs.
func TestSound64PlantedFaults(t *testing.T) {
	cases := soundCases64(t, 40)
	for _, f := range []struct {
		name  string
		bound func(c soundCase64) ([]Enclosure, error)
		evals func(c soundCase64) []evaluation64
	}{
		{"float32 evaluations against Err64", func(c soundCase64) ([]Enclosure, error) {
			return Bounds64(c.g, c.p, c.x, Options{})
		}, func(c soundCase64) []evaluation64 { return evaluations32(t, c.g, c.p, c.x) }},
		{"u = 2^-56", func(c soundCase64) ([]Enclosure, error) {
			return bounds[binary64BadU](c.g, c.p, c.x, Options{})
		}, func(c soundCase64) []evaluation64 { return evaluations64(c.g, c.p, c.x) }},
	} {
		t.Run(f.name, func(t *testing.T) {
			caught, bounded, singleCaught, singles := 0, 0, 0, 0
			for _, c := range cases {
				encl, err := f.bound(c)
				if err != nil {
					t.Fatalf("%s: %v", c.label, err)
				}
				rats, ivs := exactOf(c.g, c.p, c.x)
				n, bad, _ := violations(encl, rats, ivs, f.evals(c))
				if n > 0 {
					bounded++
				}
				if len(bad) > 0 {
					caught++
				}
				if c.single {
					singles++
					if len(bad) > 0 {
						singleCaught++
					}
				}
			}
			t.Logf("caught on %d of %d cases with a bounded element (%d of the %d single-rounding ones)", caught, bounded, singleCaught, singles)
			// TestSound64RandomGraphs fails on the first caught case; on
			// the single-rounding graphs an 8-fold too small u (or the
			// 2^29-fold larger binary32 rounding) shows on most.
			if caught == 0 || singleCaught < singles/2 {
				t.Errorf("the planted fault is caught on %d cases, %d of %d single-rounding ones", caught, singleCaught, singles)
			}
		})
	}
}

// TestErr64TighterThanErr: on well-conditioned graphs (binary32 weights
// and inputs, so that M1 costs nothing in either format; no undecided
// discontinuity) every element's binary64 bound is at most 2^-28 of its
// binary32 bound: every term of the bound scales with u, the ulp factor or
// the underflow terms, each 2^29 or more smaller in binary64.
func TestErr64TighterThanErr(t *testing.T) {
	type graph struct {
		name string
		g    *irsem.Graph
		p    *irsem.Payload
		x    irsem.RatTensor
	}
	var gs []graph
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, l := range []int{0, 1, 2, 4} {
			g, p, x := mlp(uint64(10+l), 16, 32, l, 10, act)
			gs = append(gs, graph{fmt.Sprintf("MLP %s depth %d", act, l), g, p, x})
		}
	}
	for _, n := range []int{8, 1000} {
		b := newBuilder(spec.Shape{n})
		r := newRand(uint64(n))
		w := b.konst(randTensor(r, spec.Shape{n}, 1))
		m := b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, w)
		b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, m)
		gs = append(gs, graph{fmt.Sprintf("dot of %d", n), b.g, b.p, randTensor(r, spec.Shape{n}, 1)})
	}
	worst := 0.0
	for _, c := range gs {
		e32, err := Bounds(c.g, c.p, c.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		e64, err := Bounds64(c.g, c.p, c.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range e32 {
			b32, b64 := e32[i].Bound, e64[i].Bound
			if math.IsInf(b32, 1) || b32 == 0 {
				t.Fatalf("%s element %d: binary32 bound %g: not a well-conditioned case", c.name, i, b32)
			}
			if !(b64 <= b32*0x1p-28) {
				t.Errorf("%s element %d: binary64 bound %g > binary32 bound %g · 2^-28", c.name, i, b64, b32)
			}
			worst = max(worst, b64/b32)
		}
	}
	t.Logf("largest Err64/Err bound ratio %.3g (2^%.1f)", worst, math.Log2(worst))
}

// TestEvaluateServesErr64: Evaluate runs Err64 code with the requested
// library accuracy and counts its undecided comparisons, and EncloseErr
// closes Err64 values.
func TestEvaluateServesErr64(t *testing.T) {
	third := Err64{}.FromRat(big.NewRat(1, 3))
	var v Err64
	und, err := Evaluate(Options{ULPs: 1}, func() error {
		var err error
		v, err = third.Exp()
		if err != nil {
			return err
		}
		// 1/3 against its own rounded neighbourhood: undecidable.
		third.Compare(Value64(spec.Point(1.0/3), 0))
		return nil
	})
	if err != nil || und != 1 {
		t.Fatalf("Evaluate: %d undecided, %v; want 1, nil", und, err)
	}
	// exp(1/3) with the argument off by e3 and ULPs = 1.
	e3 := 0x1p-54 / 3
	top := math.Exp(1.0/3 + e3)
	want := top*e3 + (0x1p-52*top + 0x1p-1074)
	near(t, "exp(1/3) ulps=1", EncloseErr(v, 0).Bound, want)
	if en := EncloseErr(v, und); !math.IsInf(en.Bound, 1) || en.Reason == "" {
		t.Errorf("EncloseErr with an undecided comparison: %+v", en)
	}
	// Outside Evaluate the default of 4 ulps is back.
	w, _ := third.Exp()
	near(t, "exp(1/3) default ulps", w.Bound(), top*e3+4*(0x1p-52*top+0x1p-1074))
}

// flatGrads lists the input's and every parameter's gradient elements.
func flatGrads[T spec.Scalar[T]](gr *irgrad.Gradients[T]) []T {
	out := append([]T(nil), gr.Input.Data...)
	for _, p := range gr.Params {
		out = append(out, p.Data...)
	}
	return out
}

// vjpOf runs the tape VJP of (g, p) over T at x with the seed.
func vjpOf[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x, seed irsem.RatTensor) ([]T, error) {
	l, err := irgrad.Lower[T](nil, g, p)
	if err != nil {
		return nil, err
	}
	gr, err := l.VJP(irgrad.PathTape, irsem.ConvertTensor[T](x), irsem.ConvertTensor[T](seed))
	if err != nil {
		return nil, err
	}
	return flatGrads(gr), nil
}

// TestSound64Gradients: GradErr64's theorem on the reverse pass — every
// binary64 evaluation of the registry's forward and VJP formulas (left
// folds, and the tree scalar's summation orders with and without
// math.FMA) is within the bound of every gradient element of random
// graphs at random binary64 inputs and cotangents, and the exact
// gradient (over spec.Rat) is in the enclosure.
func TestSound64Gradients(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 40
	}
	r := rand.New(rand.NewPCG(23, 29))
	finite, total, checked := 0, 0, 0
	for _, c := range soundCases64(t, n) {
		sh := c.g.Nodes[c.g.OutputID].Shape
		seed := binary64Input(r, irsem.RatTensor{Shape: sh, Data: make([]spec.Rat, sh.Size())}, 0)
		gr, _, und, err := GradErr64(c.g, c.p, c.x, seed, Options{})
		if err != nil {
			continue // a tag without a VJP, or an evaluation error
		}
		exact, err := vjpOf[spec.Rat](c.g, c.p, c.x, seed)
		if err != nil {
			continue // not rational: nothing exact to compare with
		}
		var encl []Enclosure
		for _, v := range flatGrads(gr) {
			encl = append(encl, EncloseErr(v, und))
		}
		rats := make([]*big.Rat, len(exact))
		for i, v := range exact {
			rats[i] = v.Big()
		}
		var evs []evaluation64
		if f, err := vjpOf[spec.F64](c.g, c.p, c.x, seed); err == nil {
			o := make([]float64, len(f))
			for i, v := range f {
				o[i] = float64(v)
			}
			evs = append(evs, evaluation64{"f64", o})
		}
		for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom} {
			for _, fma := range []bool{false, true} {
				treePolicy, treeFMA = pol, fma
				f, err := vjpOf[tree64](c.g, c.p, c.x, seed)
				if err != nil {
					continue
				}
				o := make([]float64, len(f))
				for i, v := range f {
					o[i] = float64(v.val())
				}
				evs = append(evs, evaluation64{fmt.Sprintf("tree64(policy %d, fma %v)", pol, fma), o})
			}
		}
		treePolicy, treeFMA = polLeft, false
		f, bad, _ := violations(encl, rats, nil, evs)
		if len(bad) > 0 {
			t.Fatalf("%s: %d violation(s), first: %s", c.label, len(bad), bad[0])
		}
		finite += f
		total += len(encl)
		checked++
	}
	t.Logf("%d graphs with exact gradients; %d of %d gradient elements bounded", checked, finite, total)
	if checked < n/2 || finite < total/2 {
		t.Errorf("only %d graphs, %d of %d elements bounded: the test exercises little", checked, finite, total)
	}
}
