package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// castStraddleGraph is a mixed graph whose cast input straddles binary32
// rounding midpoints (round_cast.go, "Casts in the first-order bound"):
//
//	n1 = linear(x, W1, b1)   binary64, 8 → 8; b1 makes the exact n1_i = μ_i + o_i
//	[n1' = relu(n1)]         binary64 (unfused: the sum closed before the cast)
//	n2 = round_f32(n1 or n1') binary32 (the cast)
//	n3 = linear(n2, W2, b2)  binary32, 8 → 8
//	n4 = tanh(n3)            binary32
//	n5 = linear(n4, W3, b3)  binary64, 8 → 4
//
// μ_i a midpoint of adjacent binary32 values in [1, 2) (an odd multiple of
// 2^-24) and o_i ∈ {0, ±2^-52, ±2^-51}: the exact value is a tie or a
// binary64 ulp or two beside one, so that binary64 evaluations of n1 land
// on either side. It returns the builder, the binary32 nodes, the input,
// n1's id and its exact values.
func castStraddleGraph(r *rand.Rand, fused bool) (*builder, []bool, irsem.RatTensor, int, []*big.Rat) {
	hund := func(lo, hi int) spec.Rat { return spec.NewRat(int64(lo+r.IntN(hi-lo)), 100) }
	eighth := func() spec.Rat { return spec.NewRat(int64(r.IntN(17)-8), 16) }
	mat, vec := ratMatOf, ratVecOf
	x := vec(8, func() spec.Rat { return spec.NewRat(int64(r.IntN(41)-20), 10) })
	w1 := mat(8, 8, func() spec.Rat { return hund(-30, 30) })
	offs := []int64{0, 1, -1, 2, -2}
	exact := make([]*big.Rat, 8)
	b1 := make([]spec.Rat, 8)
	for i := range b1 {
		mu := new(big.Rat).SetFrac(big.NewInt(int64(1<<24+2*r.IntN(1<<23)+1)), big.NewInt(1<<24)) // odd multiple of 2^-24 in [1, 2)
		o := new(big.Rat).SetFrac(big.NewInt(offs[r.IntN(len(offs))]), new(big.Int).Lsh(big.NewInt(1), 52))
		exact[i] = new(big.Rat).Add(mu, o)
		s := new(big.Rat)
		for j := 0; j < 8; j++ {
			s.Add(s, new(big.Rat).Mul(w1.Data[i*8+j].Big(), x.Data[j].Big()))
		}
		b1[i] = spec.RatFromBig(new(big.Rat).Sub(exact[i], s))
	}
	b := newBuilder(spec.Shape{8})
	n1 := b.linear(0, w1, ratTensor(spec.Shape{8}, b1...))
	in := n1
	if !fused {
		in = b.node(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{8}, n1)
	}
	n2 := b.node(irsem.Kind{Op: irsem.Op("round_f32")}, spec.Shape{8}, in)
	n3 := b.linear(n2, mat(8, 8, eighth), vec(8, eighth))
	n4 := b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{8}, n3)
	b.linear(n4, mat(4, 8, func() spec.Rat { return hund(-90, 90) }), vec(4, func() spec.Rat { return hund(-90, 90) }))
	narrow := make([]bool, len(b.g.Nodes))
	narrow[n2], narrow[n3], narrow[n4] = true, true, true
	return b, narrow, x, n1, exact
}

// straddles counts the elements of n1, over the binary64 evaluations of
// it (spec.F64's left fold and tree64 under every summation policy, with
// and without FMA), whose binary32 rounding differs from the exact value's:
// evaluations that cross a rounding midpoint the exact value does not.
func straddles(t *testing.T, b *builder, x irsem.RatTensor, n1 int, exact []*big.Rat) int {
	t.Helper()
	apps, err := irsem.Applications(b.g, b.p)
	if err != nil {
		t.Fatal(err)
	}
	in := make([]float64, len(x.Data))
	for m, r := range x.Data {
		in[m], _ = r.Big().Float64()
	}
	var runs [][]float64
	v, err := runNodeAs(apps, n1, [][]float64{in}, []spec.Shape{{8}}, func(v spec.F64) float64 { return float64(v) })
	if err != nil {
		t.Fatal(err)
	}
	runs = append(runs, v)
	for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom} {
		for _, fm := range []bool{false, true} {
			treePolicy, treeFMA = pol, fm
			v, err := runNodeAs(apps, n1, [][]float64{in}, []spec.Shape{{8}}, func(v tree64) float64 { return float64(v.val()) })
			if err != nil {
				t.Fatal(err)
			}
			runs = append(runs, v)
		}
	}
	treePolicy, treeFMA = polLeft, false
	n := 0
	for _, v := range runs {
		for i, e := range exact {
			want, _ := spec.FormatBinary32.RoundRat(e)
			if new(big.Rat).SetFloat64(float64(float32(v[i]))).Cmp(want) != 0 {
				n++
			}
		}
	}
	return n
}

// TestCastIdentityFirstOrder: on graphs whose cast input straddles
// binary32 midpoints (castStraddleGraph, fused and unfused), the
// first-order bound was void (+∞: the cast a discontinuity) without the
// identity treatment and is finite with it; every mixed evaluation
// (mixedEvaluations: nine node-by-node evaluators, binary64 nodes in
// float64, binary32 nodes in float32, the cast the conversion) lies within
// the first-order bound alone of the exact value (ONNX's: the cast
// rounds), decided exactly, though some evaluations do round n1 to the
// other side of a midpoint than the exact value; a value one binary64 ulp
// past exact.Hi + the first-order bound fails.
func TestCastIdentityFirstOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 24))
	crossed := 0
	for inst := 0; inst < 8; inst++ {
		fused := inst%2 == 0
		b, narrow, x, n1, exact := castStraddleGraph(r, fused)
		crossed += straddles(t, b, x, n1, exact)
		castIdentity = false
		before, err := SharpBoundsMixed(b.g, b.p, x, narrow, Options{})
		castIdentity = true
		if err != nil {
			t.Fatal(err)
		}
		sh, err := SharpBoundsMixed(b.g, b.p, x, narrow, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rats, ivs := exactOf(b.g, b.p, x)
		evs := mixedEvaluations(t, b.g, b.p, x, narrow)
		fo := make([]Enclosure, len(sh))
		for i, s := range sh {
			if !math.IsInf(before[i].FirstOrder, 1) {
				t.Errorf("instance %d element %d: first-order bound %g without the identity treatment, want +∞ (a straddling cast)", inst, i, before[i].FirstOrder)
			}
			if math.IsInf(s.FirstOrder, 1) {
				t.Fatalf("instance %d (fused %v) element %d: no first-order bound: %s", inst, fused, i, s.FirstOrderReason)
			}
			fo[i] = s.Enclosure
			fo[i].Bound = s.FirstOrder
		}
		finite, bad, worst := violations(fo, rats, ivs, evs)
		if finite != len(fo) || len(bad) > 0 {
			t.Fatalf("instance %d (fused %v): %d of %d bounded, violations %v", inst, fused, finite, len(fo), bad)
		}
		// One binary64 ulp past exact.Hi + the first-order bound fails.
		en := fo[0]
		lim := new(big.Rat).Add(new(big.Rat).SetFloat64(en.Exact.Hi), new(big.Rat).SetFloat64(en.Bound))
		f, _ := lim.Float64()
		for new(big.Rat).SetFloat64(f).Cmp(lim) <= 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		if v := JudgeFloat64(f, en).Verdict; v != Fails {
			t.Errorf("instance %d: %v one ulp past the bound %g: %v, want Fails", inst, f, en.Bound, v)
		}
		if inst < 2 {
			t.Logf("instance %d (fused %v), element 0: first-order %.3g, classic %.3g; worst evaluation at %.3g of the first-order bound; planted %.3g beyond exact.Hi + bound (%.2g of it)",
				inst, fused, sh[0].FirstOrder, sh[0].Classic, worst, f-en.Exact.Hi-en.Bound, (f-en.Exact.Hi-en.Bound)/en.Bound)
		}
	}
	if crossed == 0 {
		t.Errorf("no evaluation rounded n1 across a midpoint: the test exercises nothing")
	}
	t.Log(fmt.Sprintf("evaluations of n1 rounded to the other side of a midpoint than the exact value: %d", crossed))
}
