package emit

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"
)

// This file is the Go mirror of reduce_prod_jvp_taps in
// lean/Tlcheck/Prod.lean: output o of the JVP — tapply over Attr.rpTaps x
// applied to v — is prodD of the lanes of x and v at o. The taps and
// tapply are idxops_test.go's and window_test.go's transcriptions of
// Spec.lean; the expected value is computed two independent ways: prodD
// (Prod.lean's recursion, transcribed in prod_test.go) and the brute-force
// sum Σⱼ vⱼ·Π_{i≠j} xᵢ over the lane read by strides. Planted wrong taps
// must be caught: the weight the prefix product alone, and every tap sent
// to the next output.

// laneByStrides reads output o's lane of the [A, K, B] view directly: the
// element at (o / B, j, o % B).
func laneByStrides(x vec, K, B, o int) vec {
	l := make(vec, K)
	for j := range l {
		l[j] = nthR(x, ((o/B)*K+j)*B+o%B)
	}
	return l
}

// bruteD is Σⱼ vⱼ · Π_{i≠j} xᵢ, each product taken in full.
func bruteD(xs, vs vec) *big.Rat {
	s := rat(0, 1)
	for j := range xs {
		p := rat(1, 1)
		for i := range xs {
			if i != j {
				p = mul(p, xs[i])
			}
		}
		s = add(s, mul(vs[j], p))
	}
	return s
}

// rpJVPMatches checks the statement on one instance, for taps built by
// partial and moved by shift (0 for Spec.lean's rpTaps).
func rpJVPMatches(shape []int, axis int, x, v vec, partial func(lane vec, j int) *big.Rat, shift int) error {
	A, K, B := mattr{shape: shape, axis: axis}.dims()
	_, taps := rpEval(shape, axis, x, partial)
	es := make([]wTap, len(taps))
	for k, e := range taps {
		es[k] = wTap{(e.o + shift) % (A * B), e.i, e.w}
	}
	jv := tapply(A*B, es, v)
	for o := 0; o < A*B; o++ {
		lx, lv := laneByStrides(x, K, B, o), laneByStrides(v, K, B, o)
		d, b := prodD(nil, lx, lv), bruteD(lx, lv)
		if d.Cmp(b) != 0 {
			return fmt.Errorf("prodD %s ≠ brute force %s on lane %v, %v", d, b, lx, lv)
		}
		if jv[o].Cmp(d) != 0 {
			return fmt.Errorf("shape %v axis %d output %d: tapply gives %s, prodD %s", shape, axis, o, jv[o], d)
		}
	}
	return nil
}

func randRPCase(r *rand.Rand) ([]int, int, vec, vec) {
	shape := make([]int, 1+r.IntN(3))
	n := 1
	for k := range shape {
		shape[k] = 1 + r.IntN(3)
		n *= shape[k]
	}
	x, v := randLane(r, n), randLane(r, n)
	return shape, r.IntN(len(shape)), x, v
}

func TestReduceProdJVPTaps(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 7))
	for i := 0; i < 400; i++ {
		shape, axis, x, v := randRPCase(r)
		if err := rpJVPMatches(shape, axis, x, v, rpPartial, 0); err != nil {
			t.Fatal(err)
		}
	}
	// By hand: shape [2], axis 0, x = [2, 3], v = [1, 0]: one output,
	// 1·3 + 0·2 = 3.
	jv := tapply(1, []wTap{{0, 0, rat(3, 1)}, {0, 1, rat(2, 1)}}, vec{rat(1, 1), rat(0, 1)})
	_, taps := rpEval([]int{2}, 0, vec{rat(2, 1), rat(3, 1)}, rpPartial)
	if len(taps) != 2 || taps[0].w.Cmp(rat(3, 1)) != 0 || taps[1].w.Cmp(rat(2, 1)) != 0 || jv[0].Cmp(rat(3, 1)) != 0 {
		t.Fatalf("hand instance: taps %v, jvp %v; want weights [3 2] and 3", taps, jv)
	}
	// Prod.lean's reduce_prod_jvp_instance: shape [2, 3], axis 1,
	// x = [1, 2, 3, 4, 0, 5], v = [1, 1, 1, 2, 1, 1]: [11, 20] by hand.
	x6 := vec{rat(1, 1), rat(2, 1), rat(3, 1), rat(4, 1), rat(0, 1), rat(5, 1)}
	v6 := vec{rat(1, 1), rat(1, 1), rat(1, 1), rat(2, 1), rat(1, 1), rat(1, 1)}
	_, taps = rpEval([]int{2, 3}, 1, x6, rpPartial)
	es := make([]wTap, len(taps))
	for k, e := range taps {
		es[k] = wTap{e.o, e.i, e.w}
	}
	if jv := tapply(2, es, v6); jv[0].Cmp(rat(11, 1)) != 0 || jv[1].Cmp(rat(20, 1)) != 0 {
		t.Fatalf("reduce_prod_jvp_instance: jvp %v, by hand [11 20]", jv)
	}
	if err := rpJVPMatches([]int{2, 3}, 1, x6, v6, rpPartial, 0); err != nil {
		t.Fatal(err)
	}
}

func TestReduceProdJVPTapsCatchesPlanted(t *testing.T) {
	prefixOnly := func(lane vec, j int) *big.Rat { return prodOf(lane[:j]) }
	for _, tc := range []struct {
		name    string
		partial func(lane vec, j int) *big.Rat
		shift   int
	}{{"prefix product alone", prefixOnly, 0}, {"taps sent to the next output", rpPartial, 1}} {
		r := rand.New(rand.NewPCG(27, 8))
		caught := false
		for i := 0; i < 400 && !caught; i++ {
			shape, axis, x, v := randRPCase(r)
			caught = rpJVPMatches(shape, axis, x, v, tc.partial, tc.shift) != nil
		}
		if !caught {
			t.Errorf("planted %s not caught", tc.name)
		}
	}
}
