package emit

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// This file is the Go mirror of reduce_prod's exact Taylor identity in
// lean/Tlcheck/Prod.lean: prodD (the product rule by recursion on the
// lane) and prodR (the remainder) transcribed from the Lean, the two
// identities prodL_taylor and prodW_dot_one checked exactly over Rat on
// random lanes (zeros included), prodD of each output's lane compared with
// the registry's own JVP of reduce_prod, and planted wrong rules that the
// identities must reject.

// laneRule is a transcription of prodD or prodR, or a planted variant.
type laneRule func(t *big.Rat, xs, vs vec) *big.Rat

// prodD transcribes Prod.lean's prodD: v·Π xs + x·prodD xs vs.
func prodD(_ *big.Rat, xs, vs vec) *big.Rat {
	if len(xs) == 0 || len(vs) == 0 {
		return rat(0, 1)
	}
	return add(mul(vs[0], prodOf(xs[1:])), mul(xs[0], prodD(nil, xs[1:], vs[1:])))
}

// prodR transcribes Prod.lean's prodR at the product rule d:
// v·d xs vs + (x + t·v)·prodR t xs vs.
func prodR(d laneRule) laneRule {
	var r laneRule
	r = func(t *big.Rat, xs, vs vec) *big.Rat {
		if len(xs) == 0 || len(vs) == 0 {
			return rat(0, 1)
		}
		return add(mul(vs[0], d(t, xs[1:], vs[1:])), mul(add(xs[0], mul(t, vs[0])), r(t, xs[1:], vs[1:])))
	}
	return r
}

// alongV is Deriv.lean's along: x + t·v, truncated to the shorter list.
func alongV(t *big.Rat, xs, vs vec) vec {
	out := vec{}
	for i := 0; i < len(xs) && i < len(vs); i++ {
		out = append(out, add(xs[i], mul(t, vs[i])))
	}
	return out
}

// laneWeights is the map of prodW_dot_one: lane element j's weight
// prodL (take j) · prodL (drop (j+1)), or a planted partial.
func laneWeights(xs vec, partial func(lane vec, j int) *big.Rat) vec {
	w := make(vec, len(xs))
	for j := range xs {
		w[j] = partial(xs, j)
	}
	return w
}

// laneTaylorHolds checks prodL_taylor (with the rule d and its remainder)
// and prodW_dot_one (with the weights partial) on one lane.
func laneTaylorHolds(t *big.Rat, xs, vs vec, d laneRule, partial func(lane vec, j int) *big.Rat) error {
	lhs := prodOf(alongV(t, xs, vs))
	rhs := add(add(prodOf(xs), mul(t, d(t, xs, vs))), mul(mul(t, t), prodR(d)(t, xs, vs)))
	if lhs.Cmp(rhs) != 0 {
		return fmt.Errorf("prodL_taylor: Π(x + t·v) = %s, Π x + t·D + t²·R = %s", lhs.RatString(), rhs.RatString())
	}
	if w, dd := mdot(laneWeights(xs, partial), vs), d(t, xs, vs); w.Cmp(dd) != 0 {
		return fmt.Errorf("prodW_dot_one: the weights applied to v give %s, prodD %s", w.RatString(), dd.RatString())
	}
	return nil
}

// randLane draws a lane of k small rationals, about one in four zero.
func randLane(r *rand.Rand, k int) vec {
	l := make(vec, k)
	for i := range l {
		l[i] = rat(0, 1)
		if r.IntN(4) != 0 {
			l[i] = rat(r.Int64N(15)-7, r.Int64N(4)+1)
		}
	}
	return l
}

func TestReduceProdLaneTaylor(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 4))
	type lane struct{ t, xs, vs vec }
	var lanes []lane
	for n := 0; n < 300; n++ {
		k := r.IntN(6)
		lanes = append(lanes, lane{vec{rat(r.Int64N(13)-6, r.Int64N(3)+1)}, randLane(r, k), randLane(r, k)})
	}
	// The hand instance of Prod.lean (prodL_taylor_instance): 70 = 6 + 29 + 35.
	if d, rr := prodD(nil, vec{rat(2, 1), rat(3, 1)}, vec{rat(5, 1), rat(7, 1)}), prodR(prodD)(rat(1, 1), vec{rat(2, 1), rat(3, 1)}, vec{rat(5, 1), rat(7, 1)}); d.Cmp(rat(29, 1)) != 0 || rr.Cmp(rat(35, 1)) != 0 {
		t.Fatalf("the Lean instance: prodD %s (want 29), prodR %s (want 35)", d.RatString(), rr.RatString())
	}
	for i, l := range lanes {
		if err := laneTaylorHolds(l.t[0], l.xs, l.vs, prodD, rpPartial); err != nil {
			t.Fatalf("lane %d (x %v, v %v, t %s): %v", i, l.xs, l.vs, l.t[0].RatString(), err)
		}
	}
	// Planted rules, each caught on some lane (and the first by the
	// counter-instance of the Lean doc comment: x = [2, 3], v = [0, 1], t = 1).
	unscaled := func(_ *big.Rat, xs, vs vec) *big.Rat {
		var d laneRule
		d = func(_ *big.Rat, xs, vs vec) *big.Rat {
			if len(xs) == 0 || len(vs) == 0 {
				return rat(0, 1)
			}
			return add(mul(vs[0], prodOf(xs[1:])), d(nil, xs[1:], vs[1:]))
		}
		return d(nil, xs, vs)
	}
	if laneTaylorHolds(rat(1, 1), vec{rat(2, 1), rat(3, 1)}, vec{rat(0, 1), rat(1, 1)}, unscaled, rpPartial) == nil {
		t.Error("the counter-instance of Prod.lean's doc comment does not catch the unscaled tail")
	}
	planted := []struct {
		name    string
		d       laneRule
		partial func(lane vec, j int) *big.Rat
	}{
		{"the tail's partials unscaled by the head", unscaled, rpPartial},
		{"the head's partial doubled", func(_ *big.Rat, xs, vs vec) *big.Rat {
			if len(xs) == 0 || len(vs) == 0 {
				return rat(0, 1)
			}
			return add(mul(rat(2, 1), mul(vs[0], prodOf(xs[1:]))), mul(xs[0], prodD(nil, xs[1:], vs[1:])))
		}, rpPartial},
		{"the weights' prefix including element j", prodD, func(l vec, j int) *big.Rat { return mul(prodOf(l[:j+1]), prodOf(l[j+1:])) }},
		{"the weights without the suffix", prodD, func(l vec, j int) *big.Rat { return prodOf(l[:j]) }},
	}
	for _, p := range planted {
		caught := 0
		for _, l := range lanes {
			if laneTaylorHolds(l.t[0], l.xs, l.vs, p.d, p.partial) != nil {
				caught++
			}
		}
		if caught == 0 {
			t.Errorf("planted %s: no lane rejects it", p.name)
		}
	}
}

// TestReduceProdLaneIsRegistryJVP: on random [A, K, B] tensors (zeros
// included) the registry's forward at x + t·v is reduce_prod_taylor's
// lane identity output by output, and its JVP of reduce_prod along axis 1, output o, is
// prodD of o's lane and tangent lane (Attr.rpSrc's addressing), and its
// forward is Π of the lane.
func TestReduceProdLaneIsRegistryJVP(t *testing.T) {
	p, err := ratReg.Lookup("reduce_prod")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(27, 5))
	for n := 0; n < 40; n++ {
		A, K, B := r.IntN(3)+1, r.IntN(4)+1, r.IntN(3)+1
		shape := []int{A, K, B}
		x, v := randLane(r, A*K*B), randLane(r, A*K*B)
		toT := func(l vec) spec.Tensor[spec.Rat] {
			data := make([]spec.Rat, len(l))
			for j := range l {
				data[j] = spec.RatFromBig(l[j])
			}
			tt, err := spec.NewTensor(spec.Shape(shape), data)
			if err != nil {
				t.Fatal(err)
			}
			return tt
		}
		a := &spec.Attrs{Axis: 1}
		y, err := p.Forward(a, []spec.Tensor[spec.Rat]{toT(x)})
		if err != nil {
			t.Fatal(err)
		}
		// reduce_prod_taylor: the registry's forward at x + t·v is, output
		// by output, Π lane + t·prodD + t²·prodR of x's and v's lanes.
		tt := rat(r.Int64N(9)-4, r.Int64N(3)+1)
		yl, err := p.Forward(a, []spec.Tensor[spec.Rat]{toT(alongV(tt, x, v))})
		if err != nil {
			t.Fatal(err)
		}
		jv, err := p.JVP(a, []spec.Tensor[spec.Rat]{toT(x)}, y, []spec.Tensor[spec.Rat]{toT(v)})
		if err != nil {
			t.Fatal(err)
		}
		if len(jv.Data) != A*B || len(y.Data) != A*B {
			t.Fatalf("shape %v: %d forward and %d JVP elements, want %d", shape, len(y.Data), len(jv.Data), A*B)
		}
		for o := 0; o < A*B; o++ {
			xl, vl := make(vec, K), make(vec, K)
			for j := 0; j < K; j++ {
				src := (o/B*K+j)*B + o%B
				xl[j], vl[j] = x[src], v[src]
			}
			taylor := add(add(prodOf(xl), mul(tt, prodD(nil, xl, vl))), mul(mul(tt, tt), prodR(prodD)(tt, xl, vl)))
			if yl.Data[o].Big().Cmp(taylor) != 0 {
				t.Fatalf("shape %v output %d: the registry's forward at x + %s·v is %s, the lane identity %s", shape, o, tt.RatString(), yl.Data[o].Big().RatString(), taylor.RatString())
			}
			if want := prodD(nil, xl, vl); jv.Data[o].Big().Cmp(want) != 0 {
				t.Fatalf("shape %v output %d: the registry's JVP %s, prodD of the lane %s", shape, o, jv.Data[o].Big().RatString(), want.RatString())
			}
			if want := prodOf(xl); y.Data[o].Big().Cmp(want) != 0 {
				t.Fatalf("shape %v output %d: the registry's forward %s, Π of the lane %s", shape, o, y.Data[o].Big().RatString(), want.RatString())
			}
		}
	}
}
