package typedgraph_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

// randAttrs draws attributes with hostile values: out-of-range axes,
// non-permutations, bad slice bounds, negative or huge shapes, missing
// constants.
func randAttrs(r *rand.Rand) *spec.Attrs {
	a := &spec.Attrs{Axis: r.IntN(9) - 4, Axis2: r.IntN(9) - 4, Start: r.IntN(6) - 1, End: r.IntN(6) - 1}
	if r.IntN(2) == 0 {
		a.Shape = spec.Shape{r.IntN(5) - 1, r.IntN(4)}[:r.IntN(3)]
		if r.IntN(10) == 0 {
			a.Shape = spec.Shape{1 << 20, 1 << 20}
		}
	}
	if r.IntN(2) == 0 {
		a.Perm = []int{r.IntN(4) - 1, r.IntN(3), r.IntN(3)}[:r.IntN(4)]
	}
	if r.IntN(2) == 0 {
		a.C, a.Lo, a.Hi, a.Eps, a.P = randRat(r), randRat(r), randRat(r), randRat(r), randRat(r)
	}
	if r.IntN(2) == 0 {
		a.Values = randRats(r, r.IntN(5))
		if len(a.Values) > 0 && r.IntN(3) == 0 {
			a.Values[0] = nil
		}
	}
	return a
}

// No sequence of public calls with bad ids, shapes, attributes, context
// values, seeds or tangents panics; every failure is an error.
func TestNoPanicsFromHostileUse(t *testing.T) {
	names := spec.Default[R]().Names()
	r := rand.New(rand.NewPCG(99, 3))
	nodesTotal := 0
	defer func() { t.Logf("%d nodes appended", nodesTotal) }()
	for iter := 0; iter < 3000; iter++ {
		func() {
			var trace []string
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("iteration %d panicked: %v\ncalls: %v", iter, p, trace)
				}
			}()
			ctx := []spec.Shape{randShape(r, 2), randShape(r, 2)}
			g, err := tg.New[R](nil, ctx...)
			if err != nil {
				t.Fatal(err)
			}
			for k := 0; k < 6; k++ {
				op := names[r.IntN(len(names))]
				in := make([]int, r.IntN(4))
				for j := range in {
					in[j] = r.IntN(g.Len()+2) - 1
				}
				a := randAttrs(r)
				out := randShape(r, 2)
				trace = append(trace, fmt.Sprintf("%s%v %+v -> %v", op, in, *a, out))
				if r.IntN(2) == 0 {
					_, _ = g.AppendInferred(op, a, in)
				} else {
					_, _ = g.Append(op, a, in, out)
				}
			}
			nodesTotal += g.NumNodes()
			_ = g.SetResult(r.IntN(g.Len()+2) - 1)
			shapes := make([]spec.Shape, g.CtxLen())
			for i := range shapes {
				shapes[i] = ctx[i]
				if r.IntN(5) == 0 {
					shapes[i] = randShape(r, 2)
				}
			}
			in := randTensors[R](r, shapes)
			if r.IntN(7) == 0 {
				in = in[:len(in)-1]
			}
			_, _ = g.Eval(in)
			rs, _ := g.ResultShape()
			if r.IntN(4) == 0 {
				rs = randShape(r, 2)
			}
			sd := randTensor[R](r, rs)
			_, _ = g.BackpropCtx(in, sd)
			_, _ = g.JVPCtx(in, randTensors[R](r, shapes))
			_, _, _ = g.Lower(in)
			_, _ = tg.GradGraph(g, in)
			_, _, _ = tg.VJPGraph(g, in, sd)
			_, _ = tg.JacRevGraph(g, in)
			_, _ = tg.JacFwdGraph(g, in)
			if gd, err := tg.ToDual(g); err == nil {
				_, _ = tg.HVPGraph(gd, in, randTensors[R](r, shapes))
			}
			if e, err := g.Compile(); err == nil {
				_ = e.SetRequiresGrad(make([]bool, r.IntN(3)))
				_, _ = e.Forward(in)
				_, _ = e.Backward(sd)
				_, _ = e.BackwardFrom(randTensors[R](r, []spec.Shape{rs}))
				_, _ = e.JVP(in)
			}
			for id := 0; id < g.Len(); id++ {
				if n, err := g.Node(id); err == nil {
					vs, _ := g.Eval(in)
					ctxv := vs
					if len(vs) > id {
						ctxv = vs[:id]
					}
					_, _ = n.VJP(ctxv, sd)
					_, _ = n.JVP(ctxv, ctxv)
				}
			}
			_, _ = g.AppendConst("c", spec.Tensor[R]{Shape: randShape(r, 2), Data: make([]R, r.IntN(4))})
			_ = big.NewRat(1, 1)
		}()
	}
}
