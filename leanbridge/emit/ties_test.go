package emit

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// This file is the Go mirror of Window.lean's maxWeight_sum_one: on
// every output of every slice whose window has an element, the max pools'
// tie weights (Pool.maxWeight: 1/t on each of the t positions attaining
// the window's maximum, 0 elsewhere) add up to exactly 1 — and, as the
// Lean proof goes, the count t is at least 1 (maxL_attained). Pools are
// random (one or two axes, stride, dilation, padding, one or two slices)
// and inputs are drawn from {0, 1, 2}, so most windows tie. Planted tie
// rules that the identity must reject: weight 1 on every maximum, and
// 1/|window| on every maximum.

// tieRule is a tie weight of position value a in a window w with maximum m.
type tieRule func(a, m *big.Rat, w vec) *big.Rat

// leanTie is Pool.maxWeight's rule.
func leanTie(a, m *big.Rat, w vec) *big.Rat {
	if a.Cmp(m) != 0 {
		return rat(0, 1)
	}
	n := 0
	for _, b := range w {
		if b.Cmp(m) == 0 {
			n++
		}
	}
	return rat(1, int64(n))
}

// randPool draws a pool whose every axis has at least one output.
func randPool(r *rand.Rand) *pool {
	var gs []wAxis
	for d := r.IntN(2) + 1; d > 0; d-- {
		g := wAxis{B: r.IntN(4) + 1, k: r.IntN(3) + 1, s: r.IntN(2) + 1, dl: r.IntN(2) + 1}
		g.pb, g.pe = r.IntN(g.k), r.IntN(g.k)
		span := (g.k-1)*g.dl + 1
		if g.B+g.pb+g.pe < span {
			g.pe += span - (g.B + g.pb + g.pe)
		}
		g.S = (g.B+g.pb+g.pe-span)/g.s + 1
		gs = append(gs, g)
	}
	return &pool{lead: r.IntN(2) + 1, gs: gs, ws: winTaps(gs)}
}

// tieSums is, for every slice l and output o with a non-empty window,
// sumSm o (maxWeight x l) (winTaps axes) under rule: the weights of the
// triples with small index o; it also returns the counts t.
func tieSums(q *pool, x vec, rule tieRule) (sums []*big.Rat, counts []int) {
	S, _, B := axSizes(q.gs)
	for l := 0; l < q.lead; l++ {
		for o := 0; o < S; o++ {
			w := q.window(x, l, o)
			if len(w) == 0 {
				continue
			}
			m := q.winMax(x, l, o)
			s, t := rat(0, 1), 0
			for _, tr := range q.ws {
				if tr.sm == o {
					s = add(s, rule(nthR(x, l*B+tr.bg), m, w))
				}
			}
			for _, a := range w {
				if a.Cmp(m) == 0 {
					t++
				}
			}
			sums, counts = append(sums, s), append(counts, t)
		}
	}
	return sums, counts
}

func TestTieWeightsSumToOne(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 6))
	type instance struct {
		q *pool
		x vec
	}
	var insts []instance
	ties, empty := 0, 0
	for n := 0; n < 200; n++ {
		q := randPool(r)
		_, in := q.sizes()
		x := make(vec, in)
		for i := range x {
			x[i] = rat(r.Int64N(3), 1)
		}
		insts = append(insts, instance{q, x})
	}
	// The Lean instance maxWeight_sum_instance: kernel 2, stride 1 over [2, 2, 1].
	insts = append(insts, instance{&pool{lead: 1, gs: []wAxis{{S: 2, B: 3, k: 2, s: 1, dl: 1}}, ws: winTaps([]wAxis{{S: 2, B: 3, k: 2, s: 1, dl: 1}})}, vec{rat(2, 1), rat(2, 1), rat(1, 1)}})
	for i, in := range insts {
		sums, counts := tieSums(in.q, in.x, leanTie)
		if len(sums) == 0 {
			// Every window lies in the padding (the registry refuses such a
			// geometry); nothing to sum.
			empty++
			continue
		}
		for o, s := range sums {
			if counts[o] < 1 {
				t.Errorf("instance %d output %d: the maximum is attained %d times", i, o, counts[o])
			}
			if counts[o] > 1 {
				ties++
			}
			if s.Cmp(rat(1, 1)) != 0 {
				t.Errorf("instance %d output %d: the tie weights sum to %s", i, o, s.RatString())
			}
		}
	}
	if empty > len(insts)/4 {
		t.Fatalf("%d of %d instances have no window", empty, len(insts))
	}
	if ties == 0 {
		t.Fatal("no window ties: the instances do not exercise the tie rule")
	}
	planted := []struct {
		name string
		rule tieRule
	}{
		{"weight 1 on every maximum", func(a, m *big.Rat, _ vec) *big.Rat {
			if a.Cmp(m) == 0 {
				return rat(1, 1)
			}
			return rat(0, 1)
		}},
		{"1/|window| on every maximum", func(a, m *big.Rat, w vec) *big.Rat {
			if a.Cmp(m) == 0 {
				return rat(1, int64(len(w)))
			}
			return rat(0, 1)
		}},
	}
	for _, p := range planted {
		caught := false
		for _, in := range insts {
			sums, _ := tieSums(in.q, in.x, p.rule)
			for _, s := range sums {
				if s.Cmp(rat(1, 1)) != 0 {
					caught = true
				}
			}
		}
		if !caught {
			t.Errorf("planted tie rule %q: every sum is 1", p.name)
		}
	}
}

// maxLGo is Spec.lean's maxL: the left fold of maxS (if a < b then b
// else a) from the first element, 0 when empty.
func maxLGo(w vec) *big.Rat {
	if len(w) == 0 {
		return rat(0, 1)
	}
	m := w[0]
	for _, a := range w[1:] {
		if lt(m, a) {
			m = a
		}
	}
	return m
}

// TestMaxLinearBetweenTies mirrors Window.lean's maxL_along_linear: on
// random windows w, tangents v and steps t, wherever a position p is a
// maximum both of w and of w + t·v, maxL(w + t·v) = maxL w + t·v_p; a
// planted slope (v at the first position, or the mean of v) fails that,
// and where no such p exists the identity can fail (the hypothesis is
// needed: the max pool bends at a change of argmax).
func TestMaxLinearBetweenTies(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 7))
	held, first, mean, bent := 0, 0, 0, 0
	for n := 0; n < 2000; n++ {
		k := r.IntN(5) + 1
		w, v := make(vec, k), make(vec, k)
		for i := range w {
			w[i], v[i] = rat(r.Int64N(7)-3, 1), rat(r.Int64N(9)-4, r.Int64N(2)+1)
		}
		tt := rat(r.Int64N(7)-3, r.Int64N(4)+1)
		wt := alongV(tt, w, v)
		p := -1
		for q := range w {
			if w[q].Cmp(maxLGo(w)) == 0 && wt[q].Cmp(maxLGo(wt)) == 0 {
				p = q
				break
			}
		}
		if p < 0 {
			// No common maximum: linearity with any slope at an argmax of w may fail.
			for q := range w {
				if w[q].Cmp(maxLGo(w)) == 0 && maxLGo(wt).Cmp(add(maxLGo(w), mul(tt, v[q]))) != 0 {
					bent++
					break
				}
			}
			continue
		}
		held++
		if got, want := maxLGo(wt), add(maxLGo(w), mul(tt, v[p])); got.Cmp(want) != 0 {
			t.Fatalf("w %v, v %v, t %s, p %d: maxL(w + t·v) = %s, maxL w + t·v_p = %s", w, v, tt.RatString(), p, got.RatString(), want.RatString())
		}
		if maxLGo(wt).Cmp(add(maxLGo(w), mul(tt, v[0]))) != 0 {
			first++
		}
		s := rat(0, 1)
		for _, a := range v {
			s = add(s, a)
		}
		if maxLGo(wt).Cmp(add(maxLGo(w), mul(tt, div(s, rat(int64(k), 1))))) != 0 {
			mean++
		}
	}
	if held == 0 || first == 0 || mean == 0 || bent == 0 {
		t.Errorf("cases: %d with a common maximum; planted slopes caught: %d (v at the first position), %d (the mean of v); %d bent without one; want some of each", held, first, mean, bent)
	}
}

// TestMaxFwdLinearBetweenTies mirrors Window.lean's maxFwd_along_linear at
// the pool's own indexing, on every emitted max_pool and max_pool_nd case
// with random tangents and steps: output p of maxFwd is winMax of slice
// p / S at position p % S (Pool.win), the window of x + t·v is the window
// of x plus t times v's (window_along), and wherever a window position k
// is a maximum at x and at x + t·v, output p moves by exactly t·(v's
// window)ₖ. A planted indexing (slice p % S at position p / S) reads
// another window and is caught where the two differ.
func TestMaxFwdLinearBetweenTies(t *testing.T) {
	mods := windowModules(t)
	r := rand.New(rand.NewPCG(27, 4))
	held, planted := 0, 0
	for _, op := range []string{"max_pool", "max_pool_nd"} {
		for ci, c := range readWindowCases(t, mods[op]) {
			q := c.pool()
			out, _ := q.sizes()
			S, _, _ := axSizes(q.gs)
			x := c.xs[0]
			for trial := 0; trial < 4; trial++ {
				v := make(vec, len(x))
				for i := range v {
					v[i] = rat(r.Int64N(9)-4, r.Int64N(2)+1)
				}
				tt := rat(r.Int64N(5)-2, r.Int64N(3)+1)
				xt := alongV(tt, x, v)
				for p := 0; p < out; p++ {
					l, o := ndiv(p, S), nmod(p, S)
					wx, wv, wt := q.window(x, l, o), q.window(v, l, o), q.window(xt, l, o)
					if !sameVec(wt, alongV(tt, wx, wv)) {
						t.Fatalf("%s case %d output %d: window_along fails", op, ci, p)
					}
					if l2, o2 := nmod(p, S), ndiv(p, S); (l2 != l || o2 != o) && !sameVec(q.window(x, l2, o2), wx) {
						planted++
					}
					for k := range wx {
						if wx[k].Cmp(maxLGo(wx)) != 0 || wt[k].Cmp(maxLGo(wt)) != 0 {
							continue
						}
						held++
						if got, want := q.winMax(xt, l, o), add(q.winMax(x, l, o), mul(tt, wv[k])); got.Cmp(want) != 0 {
							t.Fatalf("%s case %d output %d position %d: maxFwd(x + t·v) = %s, maxFwd x + t·v = %s", op, ci, p, k, got.RatString(), want.RatString())
						}
						break
					}
				}
			}
		}
	}
	if held == 0 || planted == 0 {
		t.Errorf("outputs with a common maximum: %d; planted indexings caught: %d; want some of each", held, planted)
	}
}
