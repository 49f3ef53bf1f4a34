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

// mixedGraph is a graph that computes in binary64 and binary32 (doc.go,
// "Mixed binary32 and binary64 graphs"):
//
//	n1 = linear(x, W1, b1)   binary64, 64 → 8 (W1 multiples of 1/100: no binary32 values)
//	n2 = tanh(n1)            binary64
//	n3 = round_f32(n2)       binary32 (the cast)
//	n4 = linear(n3, W2, b2)  binary32, 8 → 8 (binary32 weights)
//	n5 = tanh(n4)            binary32
//	n6 = linear(n5, W3, b3)  binary64, 8 → 4 (the widening cast is no node)
//
// and narrow marks the binary32 nodes. The input holds multiples of 1/10.
func mixedGraph(r *rand.Rand) (*builder, []bool, irsem.RatTensor) {
	hund := func(lo, hi int) spec.Rat { return spec.NewRat(int64(lo+r.IntN(hi-lo)), 100) }
	eighth := func() spec.Rat { return spec.NewRat(int64(r.IntN(17)-8), 16) }
	mat, vec := ratMatOf, ratVecOf
	b := newBuilder(spec.Shape{64})
	n1 := b.linear(0, mat(8, 64, func() spec.Rat { return hund(-30, 30) }), vec(8, func() spec.Rat { return hund(-50, 50) }))
	n2 := b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{8}, n1)
	n3 := b.node(irsem.Kind{Op: irsem.Op("round_f32")}, spec.Shape{8}, n2)
	n4 := b.linear(n3, mat(8, 8, eighth), vec(8, eighth))
	n5 := b.node(irsem.Kind{Op: irsem.OpTanh}, spec.Shape{8}, n4)
	b.linear(n5, mat(4, 8, func() spec.Rat { return hund(-90, 90) }), vec(4, func() spec.Rat { return hund(-90, 90) }))
	narrow := make([]bool, len(b.g.Nodes))
	narrow[n3], narrow[n4], narrow[n5] = true, true, true
	x := vec(64, func() spec.Rat { return spec.NewRat(int64(r.IntN(41)-20), 10) })
	return b, narrow, x
}

// mixedEvaluations evaluates g node by node, node j over t32 where
// narrow[j] (binary32: every product, sum and library call rounded to
// float32) and over t64 elsewhere, the values passed between nodes as
// float64 (a binary32 node's operand from a binary64 node is the cast's,
// which converts it once, correctly rounded). Evaluators: spec.F32/F64
// (left folds), and the tree scalars under every summation policy, with
// and without fused multiply-adds.
func mixedEvaluations(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, narrow []bool) []evaluation64 {
	t.Helper()
	apps, err := irsem.Applications(g, p)
	if err != nil {
		t.Fatal(err)
	}
	var evs []evaluation64
	add := func(name string, run func(i int, ps [][]float64) ([]float64, error)) {
		vals := make([][]float64, len(g.Nodes))
		for i := range g.Nodes {
			n := &g.Nodes[i]
			if n.Kind.Op == irsem.OpInput {
				vals[i] = make([]float64, len(x.Data))
				for m, r := range x.Data {
					vals[i][m], _ = r.Big().Float64() // exact: multiples of 1/10 as float64 data
				}
				continue
			}
			ps := make([][]float64, len(n.Parents))
			for k, q := range n.Parents {
				ps[k] = vals[q]
			}
			v, err := run(i, ps)
			if err != nil {
				t.Fatalf("%s: node %d: %v", name, i, err)
			}
			vals[i] = v
		}
		evs = append(evs, evaluation64{name, vals[g.OutputID]})
	}
	shapes := func(i int) []spec.Shape {
		var s []spec.Shape
		for _, q := range g.Nodes[i].Parents {
			s = append(s, g.Nodes[q].Shape)
		}
		return s
	}
	add("f32/f64", func(i int, ps [][]float64) ([]float64, error) {
		if narrow[i] {
			return runNodeAs(apps, i, ps, shapes(i), func(v spec.F32) float64 { return float64(v) })
		}
		return runNodeAs(apps, i, ps, shapes(i), func(v spec.F64) float64 { return float64(v) })
	})
	for _, pol := range []policy{polLeft, polReverse, polPairwise, polRandom} {
		for _, fm := range []bool{false, true} {
			treePolicy, treeFMA = pol, fm
			add(fmt.Sprintf("tree(policy %d, fma %v)", pol, fm), func(i int, ps [][]float64) ([]float64, error) {
				switch {
				case g.Nodes[i].Kind.Op == "round_f32": // the tree scalar has no casts: the conversion itself
					return runNodeAs(apps, i, ps, shapes(i), func(v spec.F32) float64 { return float64(v) })
				case narrow[i]:
					return runNodeAs(apps, i, ps, shapes(i), func(v tree) float64 { return float64(v.val()) })
				}
				return runNodeAs(apps, i, ps, shapes(i), func(v tree64) float64 { return float64(v.val()) })
			})
		}
	}
	treePolicy, treeFMA = polLeft, false
	return evs
}

// runNodeAs runs node i's application over T on the parents' values.
func runNodeAs[T spec.Scalar[T]](apps []irsem.Application, i int, ps [][]float64, shapes []spec.Shape, out func(T) float64) ([]float64, error) {
	var z T
	parents := make([]spec.Tensor[T], len(ps))
	for k, d := range ps {
		data := make([]T, len(d))
		for m, v := range d {
			data[m] = z.FromRat(new(big.Rat).SetFloat64(v))
		}
		parents[k] = spec.Tensor[T]{Shape: shapes[k], Data: data}
	}
	reg := spec.Default[T]()
	v, err := irsem.RunApplication(&apps[i], parents, func(_ int, s *irsem.Step, xs []spec.Tensor[T]) (spec.Tensor[T], error) {
		pr, err := reg.Lookup(s.Prim)
		if err != nil {
			return spec.Tensor[T]{}, err
		}
		return pr.Apply(s.Attrs, xs)
	})
	if err != nil {
		return nil, err
	}
	o := make([]float64, len(v.Data))
	for m, e := range v.Data {
		o[m] = out(e)
	}
	return o, nil
}

// TestMixedFormatsSound: on random instances of mixedGraph, every mixed
// evaluation (binary64 nodes in float64, binary32 nodes in float32, nine
// evaluators) lies within the per-node bound (SharpBoundsMixed, and the
// classic BoundsMixed) of the exact value, decided exactly; the per-node
// bound is below the coarse one (every rounding binary32's). Planted
// faults: the bound computed with every node binary64 (the format map
// wrong) is violated by some evaluation, and a value one binary64 ulp past
// exact.Hi + bound fails.
func TestMixedFormatsSound(t *testing.T) {
	r := rand.New(rand.NewPCG(36, 64))
	caughtMap := 0
	for inst := 0; inst < 6; inst++ {
		b, narrow, x := mixedGraph(r)
		rats, ivs := exactOf(b.g, b.p, x)
		evs := mixedEvaluations(t, b.g, b.p, x, narrow)
		sh, err := SharpBoundsMixed(b.g, b.p, x, narrow, Options{})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := BoundsMixed(b.g, b.p, x, narrow, Options{})
		if err != nil {
			t.Fatal(err)
		}
		coarse, err := SharpBounds(b.g, b.p, x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		encl := make([]Enclosure, len(sh))
		for i, s := range sh {
			encl[i] = s.Enclosure
			if !(s.Bound < coarse[i].Bound) {
				t.Errorf("instance %d element %d: per-node bound %g not below the coarse %g", inst, i, s.Bound, coarse[i].Bound)
			}
			if !(cl[i].Bound <= coarse[i].Classic) {
				t.Errorf("instance %d element %d: classic per-node bound %g above the coarse classic %g", inst, i, cl[i].Bound, coarse[i].Classic)
			}
		}
		for _, e := range [][]Enclosure{encl, cl} {
			finite, bad, worst := violations(e, rats, ivs, evs)
			if finite != len(e) || len(bad) > 0 {
				t.Fatalf("instance %d: %d of %d bounded, violations %v", inst, finite, len(e), bad)
			}
			if inst == 0 {
				t.Logf("instance 0: worst evaluation at %.3g of the bound", worst)
			}
		}
		if inst == 0 {
			t.Logf("instance 0, element 0: per-node bound %.3g (classic %.3g, first-order %.3g), coarse %.3g",
				sh[0].Bound, sh[0].Classic, sh[0].FirstOrder, coarse[0].Bound)
		}
		// The wrong map: every node binary64.
		wide, err := SharpBoundsMixed(b.g, b.p, x, make([]bool, len(narrow)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		we := make([]Enclosure, len(wide))
		for i, s := range wide {
			we[i] = s.Enclosure
		}
		if _, bad, _ := violations(we, rats, ivs, evs); len(bad) > 0 {
			caughtMap++
		}
		// One binary64 ulp past exact.Hi + bound fails.
		en := sh[0].Enclosure
		lim := new(big.Rat).Add(new(big.Rat).SetFloat64(en.Exact.Hi), new(big.Rat).SetFloat64(en.Bound))
		f, _ := lim.Float64()
		for new(big.Rat).SetFloat64(f).Cmp(lim) <= 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		if v := JudgeFloat64(f, en).Verdict; v != Fails {
			t.Errorf("instance %d: %v one ulp past the bound %g: %v, want Fails", inst, f, en.Bound, v)
		}
	}
	if caughtMap == 0 {
		t.Errorf("the wrong format map (every node binary64) was never caught")
	}
	t.Logf("wrong format map caught on %d of 6 instances", caughtMap)
}

// TestMixedFormatsArgs: a format map of the wrong length is an error; no
// mixed state outlives an evaluation.
func TestMixedFormatsArgs(t *testing.T) {
	b, narrow, x := mixedGraph(rand.New(rand.NewPCG(1, 2)))
	if _, err := SharpBoundsMixed(b.g, b.p, x, narrow[1:], Options{}); err == nil {
		t.Errorf("a short format map was accepted")
	}
	if _, err := BoundsMixed(b.g, b.p, x, append(narrow, false), Options{}); err == nil {
		t.Errorf("a long format map was accepted")
	}
	if _, err := SharpBoundsMixed(b.g, b.p, x, narrow, Options{}); err != nil {
		t.Fatal(err)
	}
	if mixedNodes != nil || mixedOn.Load() || narrowNow.Load() {
		t.Errorf("mixed state left after the evaluation")
	}
	if (Err64{}).Kind() != "fpbound64" || constsOf[binary64]() != &consts64 {
		t.Errorf("binary64 no longer binary64 after a mixed evaluation")
	}
}

// ratMatOf is a rows×cols tensor whose elements f draws in row-major order.
func ratMatOf(rows, cols int, f func() spec.Rat) irsem.RatTensor {
	d := make([]spec.Rat, rows*cols)
	for i := range d {
		d[i] = f()
	}
	return ratTensor(spec.Shape{rows, cols}, d...)
}

// ratVecOf is an n-vector whose elements f draws in order.
func ratVecOf(n int, f func() spec.Rat) irsem.RatTensor {
	t := ratMatOf(1, n, f)
	t.Shape = spec.Shape{n}
	return t
}
