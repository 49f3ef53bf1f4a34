package emit

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"sort"
	"testing"
)

// This file is the Go mirror of MaxPool.lean's max_pool_unique_deriv: at
// every output p whose window has a unique maximum (position k), output p
// of the JVP (the taps of Pool.maxWeight applied to v) is v's window value
// at k (maxJvp_unique), the bound winδ is positive, and for every t with
// |t| < winδ, output p of maxFwd(x + t·v) is output p of maxFwd x plus
// t·JVP_p (maxFwd_unique_near). gapδ and winδ are transcribed from the
// Lean definitions. It runs on every emitted max_pool and max_pool_nd case
// and on random pools whose inputs rarely tie.
//
// What it must catch: the planted slopes of MaxPool.lean's header (the
// average of the window's tangents, and the tangent at the window's first
// position) fail the identity inside the bound; and a planted bound just
// past the exact radius r* (the largest R with argmax k on |t| < R,
// min over i of (w_k − w_i)/|v_i − v_k|) fails at t = ±1.001·r*, so the
// check sees an unsound δ; winδ ≤ r* on every output.

// gapDeltaGo is gapδ b a c e: (b − a)/(|c − e| + 1) when a < b, else 1.
func gapDeltaGo(b, a, c, e *big.Rat) *big.Rat {
	if lt(a, b) {
		return div(add(b, neg(a)), add(new(big.Rat).Abs(add(c, neg(e))), rat(1, 1)))
	}
	return rat(1, 1)
}

// winDeltaGo is winδ w u k n: winδ 0 = 1, winδ (i+1) = min(gapδ_i, winδ i).
func winDeltaGo(w, u vec, k, n int) *big.Rat {
	d := rat(1, 1)
	for i := 0; i < n; i++ {
		if g := gapDeltaGo(nthR(w, k), nthR(w, i), nthR(u, i), nthR(u, k)); lt(g, d) {
			d = g
		}
	}
	return d
}

// uniqueArgmax is the k of MaxPool.lean's hypothesis: every other
// position strictly below position k.
func uniqueArgmax(w vec) (int, bool) {
	k := -1
	for i := range w {
		if k < 0 || lt(w[k], w[i]) {
			k = i
		}
	}
	for i := range w {
		if i != k && w[i].Cmp(w[k]) == 0 {
			return 0, false
		}
	}
	return k, k >= 0
}

// exactRadius is r* and the sign of the binding v_i − v_k (0 when no
// position's tangent differs from k's: then k stays the maximum for every t).
func exactRadius(w, u vec, k int) (*big.Rat, int) {
	var r *big.Rat
	sign := 0
	for i := range w {
		d := add(u[i], neg(u[k]))
		if i == k || d.Sign() == 0 {
			continue
		}
		ri := div(add(w[k], neg(w[i])), new(big.Rat).Abs(d))
		if r == nil || lt(ri, r) {
			r, sign = ri, d.Sign()
		}
	}
	return r, sign
}

type maxDerivStats struct {
	outputs, steps, avgCaught, firstCaught, boundCaught, radii int
	ratios                                                     []float64
}

// checkUniqueDeriv checks the theorem on every uniquely-maximal output of
// pool q at x along v.
func checkUniqueDeriv(t *testing.T, name string, q *pool, x, v vec, st *maxDerivStats) {
	t.Helper()
	out, _ := q.sizes()
	S, _, _ := axSizes(q.gs)
	jvp := tapply(out, q.maxTaps(x), v)
	for p := 0; p < out; p++ {
		l, o := ndiv(p, S), nmod(p, S)
		wx, wv := q.window(x, l, o), q.window(v, l, o)
		k, ok := uniqueArgmax(wx)
		if !ok {
			continue
		}
		st.outputs++
		if jvp[p].Cmp(wv[k]) != 0 {
			t.Fatalf("%s output %d: JVP %s, v at the unique argmax %s (maxJvp_unique)", name, p, jvp[p].RatString(), wv[k].RatString())
		}
		delta := winDeltaGo(wx, wv, k, len(wx))
		if delta.Sign() <= 0 {
			t.Fatalf("%s output %d: winδ = %s, not positive", name, p, delta.RatString())
		}
		fx := q.winMax(x, l, o)
		mean := rat(0, 1)
		for _, a := range wv {
			mean = add(mean, a)
		}
		mean = div(mean, rat(int64(len(wv)), 1))
		avgBad, firstBad := false, false
		for j := -4; j <= 4; j++ {
			// t = j/4·δ for |j| < 4, and ±(δ − δ/1000) at the ends.
			tt := mul(delta, rat(int64(j), 4))
			if j == 4 || j == -4 {
				tt = mul(delta, rat(int64(j/4)*999, 1000))
			}
			got := q.winMax(alongV(tt, x, v), l, o)
			st.steps++
			if want := add(fx, mul(tt, jvp[p])); got.Cmp(want) != 0 {
				t.Fatalf("%s output %d, t = %s (|t| < winδ = %s): maxFwd(x + t·v) = %s, maxFwd x + t·JVP = %s",
					name, p, tt.RatString(), delta.RatString(), got.RatString(), want.RatString())
			}
			if got.Cmp(add(fx, mul(tt, mean))) != 0 {
				avgBad = true
			}
			if got.Cmp(add(fx, mul(tt, wv[0]))) != 0 {
				firstBad = true
			}
		}
		if avgBad {
			st.avgCaught++
		}
		if firstBad {
			st.firstCaught++
		}
		r, sign := exactRadius(wx, wv, k)
		if r == nil {
			continue
		}
		st.radii++
		if lt(r, delta) {
			t.Fatalf("%s output %d: winδ = %s exceeds the exact radius %s", name, p, delta.RatString(), r.RatString())
		}
		ratio, _ := div(delta, r).Float64()
		st.ratios = append(st.ratios, ratio)
		tt := mul(r, rat(int64(sign)*1001, 1000))
		if q.winMax(alongV(tt, x, v), l, o).Cmp(add(fx, mul(tt, jvp[p]))) != 0 {
			st.boundCaught++
		}
	}
}

// TestMaxPoolUniqueDeriv mirrors max_pool_unique_deriv (see the file
// comment) on the emitted max-pool cases with random tangents, and on
// random pools.
func TestMaxPoolUniqueDeriv(t *testing.T) {
	var st maxDerivStats
	r := rand.New(rand.NewPCG(29, 1))
	randVec := func(n int, span int64) vec {
		out := make(vec, n)
		for i := range out {
			out[i] = rat(r.Int64N(2*span+1)-span, r.Int64N(3)+1)
		}
		return out
	}
	mods := windowModules(t)
	for _, op := range []string{"max_pool", "max_pool_nd"} {
		for ci, c := range readWindowCases(t, mods[op]) {
			for trial := 0; trial < 3; trial++ {
				checkUniqueDeriv(t, fmt.Sprintf("%s case %d", op, ci), c.pool(), c.xs[0], randVec(len(c.xs[0]), 4), &st)
			}
		}
	}
	emitted := st.outputs
	whole := 0
	for n := 0; n < 300; n++ {
		q := randPool(r)
		_, in := q.sizes()
		x, v := randVec(in, 20), randVec(in, 4)
		checkUniqueDeriv(t, "random pool", q, x, v, &st)
		if checkWholeOutput(t, q, x, v) {
			whole++
		}
	}
	if whole == 0 {
		t.Error("no random pool had a unique maximum in every window: max_pool_all_unique_deriv's mirror never ran")
	}
	if emitted == 0 || st.outputs == emitted {
		t.Errorf("outputs with a unique maximum: %d emitted, %d in all; want some of each", emitted, st.outputs)
	}
	if st.avgCaught == 0 || st.firstCaught == 0 {
		t.Errorf("planted slopes caught: %d (mean of the window's tangents), %d (first position); want some of each", st.avgCaught, st.firstCaught)
	}
	if st.boundCaught != st.radii || st.radii == 0 {
		t.Errorf("a bound 1.001·r* caught on %d of %d outputs with a finite radius; want all", st.boundCaught, st.radii)
	}
	sort.Float64s(st.ratios)
	t.Logf("%d pools with every window uniquely maximal (whole output checked); %d uniquely-maximal outputs, %d steps inside winδ; planted slopes caught on %d (mean) and %d (first position); bound 1.001·r* caught on %d of %d; winδ/r* min %.3g median %.3g max %.3g",
		whole, st.outputs, st.steps, st.avgCaught, st.firstCaught, st.boundCaught, st.radii,
		st.ratios[0], st.ratios[len(st.ratios)/2], st.ratios[len(st.ratios)-1])
}

// checkWholeOutput mirrors max_pool_all_unique_deriv: when every output's
// window has a unique maximum, with δ = poolδ (1, then the minimum with
// each output's winδ), maxFwd(x + t·v) = maxFwd x + t·JVP as whole lists
// at t = ±3δ/4. It reports whether the pool qualified.
func checkWholeOutput(t *testing.T, q *pool, x, v vec) bool {
	t.Helper()
	out, _ := q.sizes()
	S, _, _ := axSizes(q.gs)
	delta := rat(1, 1)
	for p := 0; p < out; p++ {
		wx, wv := q.window(x, ndiv(p, S), nmod(p, S)), q.window(v, ndiv(p, S), nmod(p, S))
		k, ok := uniqueArgmax(wx)
		if !ok {
			return false
		}
		if d := winDeltaGo(wx, wv, k, len(wx)); lt(d, delta) {
			delta = d
		}
	}
	jvp := tapply(out, q.maxTaps(x), v)
	for _, c := range []int64{-3, 3} {
		tt := mul(delta, rat(c, 4))
		xt := alongV(tt, x, v)
		got, want := make(vec, out), make(vec, out)
		for p := 0; p < out; p++ {
			got[p] = q.winMax(xt, ndiv(p, S), nmod(p, S))
			want[p] = add(q.winMax(x, ndiv(p, S), nmod(p, S)), mul(tt, jvp[p]))
		}
		if !sameVec(got, want) {
			t.Fatalf("every window uniquely maximal, t = %s (|t| < poolδ = %s): maxFwd(x + t·v) = %v, maxFwd x + t·JVP = %v",
				tt.RatString(), delta.RatString(), got, want)
		}
	}
	return true
}
