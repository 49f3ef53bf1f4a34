package typedgraph_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

const propGraphs = 1000

// forGraphs runs f on propGraphs random recipes drawn from a fixed seed.
func forGraphs(t *testing.T, seed uint64, o genOpts, f func(t *testing.T, r *rand.Rand, rc *recipe)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 0x7467))
	for i := 0; i < propGraphs; i++ {
		rc := genRecipe(r, o)
		f(t, r, rc)
		if t.Failed() {
			t.Logf("graph %d:\n%s", i, rc)
			return
		}
	}
}

var exactGen = genOpts{ops: exactOps, maxSteps: 12}

func mustGraph[T spec.Scalar[T]](t *testing.T, rc *recipe) *tg.Graph[T] {
	t.Helper()
	g, err := graphOf[T](rc, nil)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return g
}

func zerosFor[T spec.Scalar[T]](shapes []spec.Shape) []spec.Tensor[T] {
	out := make([]spec.Tensor[T], len(shapes))
	for i, s := range shapes {
		out[i] = spec.Tensor[T]{Shape: s.Clone(), Data: make([]T, s.Size())}
	}
	return out
}

// The chapter's lowering theorem: the every-node sweep of the checked
// lowering equals backpropAllCtx, from the seed array and from an arbitrary
// full initial array.
func testLoweringSweep[T spec.Scalar[T]](t *testing.T, seed uint64) {
	forGraphs(t, seed, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[T](t, rc)
		in := randTensors[T](r, rc.ctx)
		tp, ids, err := g.Lower(in)
		if err != nil {
			t.Fatalf("lower: %v", err)
		}
		for id, tid := range ids {
			if tid != id {
				t.Fatalf("entry %d lowered to tape id %d", id, tid)
			}
		}
		sd := randTensor[T](r, rc.shapes[rc.result])
		init, err := tp.SeedArray(ids[rc.result], sd)
		if err != nil {
			t.Fatal(err)
		}
		fromAll, err := tp.BackwardFromAll(init)
		if err != nil {
			t.Fatalf("tape from-all: %v", err)
		}
		all, err := g.BackpropAllCtx(in, sd)
		if err != nil {
			t.Fatalf("BackpropAllCtx: %v", err)
		}
		if i, ok := sameList(fromAll, all); !ok {
			t.Fatalf("entry %d: lowered every-node sweep %v, BackpropAllCtx %v", i, fromAll[i], all[i])
		}
		ctx, err := g.BackpropCtx(in, sd)
		if err != nil {
			t.Fatal(err)
		}
		if i, ok := sameList(ctx, all[:len(rc.ctx)]); !ok || len(ctx) != len(rc.ctx) {
			t.Fatalf("BackpropCtx entry %d differs from BackpropAllCtx", i)
		}
		// From an arbitrary initial array.
		init = randTensors[T](r, rc.shapes)
		fromAll, err = tp.BackwardFromAll(init)
		if err != nil {
			t.Fatalf("tape from-all: %v", err)
		}
		all, err = g.BackpropAllFrom(in, init)
		if err != nil {
			t.Fatalf("BackpropAllFrom: %v", err)
		}
		if i, ok := sameList(fromAll, all); !ok {
			t.Fatalf("entry %d: lowered every-node sweep %v, BackpropAllFrom %v", i, fromAll[i], all[i])
		}
		// The lowered values are the graph's values.
		vals, err := g.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		for id := range vals {
			v, _ := tp.Value(id)
			if !spec.SameTensor(v, vals[id]) {
				t.Fatalf("entry %d: lowered value %v, Eval %v", id, v, vals[id])
			}
		}
	})
}

func TestLoweringSweepEqualsBackpropAllRat(t *testing.T) { testLoweringSweep[spec.Rat](t, 1) }

// Over F64 the equality is bit for bit: both sweeps add the same
// contributions in the same order, existing value on the left.
func TestLoweringSweepEqualsBackpropAllF64(t *testing.T) { testLoweringSweep[spec.F64](t, 2) }

// The graph theorem: dotList(jvpCtx(dx), seed) = dotList(dx,
// backpropCtx(seed)), exactly over Rat.
func TestGraphAdjointnessRat(t *testing.T) {
	forGraphs(t, 3, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[spec.Rat](t, rc)
		in := randTensors[spec.Rat](r, rc.ctx)
		dx := randTensors[spec.Rat](r, rc.ctx)
		sd := randTensor[spec.Rat](r, rc.shapes[rc.result])
		tans, err := g.JVPCtx(in, dx)
		if err != nil {
			t.Fatalf("JVPCtx: %v", err)
		}
		if len(tans) != len(rc.shapes) {
			t.Fatalf("JVPCtx returned %d tangents for %d entries", len(tans), len(rc.shapes))
		}
		cts, err := g.BackpropCtx(in, sd)
		if err != nil {
			t.Fatalf("BackpropCtx: %v", err)
		}
		lhs, err := spec.Dot(tans[rc.result], sd)
		if err != nil {
			t.Fatal(err)
		}
		rhs, err := spec.DotList(dx, cts)
		if err != nil {
			t.Fatal(err)
		}
		if !lhs.Same(rhs) {
			t.Fatalf("⟨jvp(dx), seed⟩ = %v but ⟨dx, backprop(seed)⟩ = %v", lhs, rhs)
		}
	})
}

// The local law of every node, through the public node payload:
// dot(jvp(x, dx), δ) = Σ_entries dot(dx_i, vjp(x, δ)_i), with vjp returning
// one contribution per context entry.
func TestNodeAdjointnessRat(t *testing.T) {
	forGraphs(t, 4, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[spec.Rat](t, rc)
		in := randTensors[spec.Rat](r, rc.ctx)
		vals, err := g.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		for id := len(rc.ctx); id < g.Len(); id++ {
			n, err := g.Node(id)
			if err != nil {
				t.Fatal(err)
			}
			ctx := vals[:id]
			if err := n.Validate(ctx); err != nil {
				t.Fatalf("node %d validate: %v", id, err)
			}
			y, err := n.Forward(ctx)
			if err != nil || !spec.SameTensor(y, vals[id]) {
				t.Fatalf("node %d forward %v (%v), Eval %v", id, y, err, vals[id])
			}
			dctx := randTensors[spec.Rat](r, rc.shapes[:id])
			d := randTensor[spec.Rat](r, rc.shapes[id])
			jv, err := n.JVP(ctx, dctx)
			if err != nil {
				t.Fatalf("node %d jvp: %v", id, err)
			}
			vj, err := n.VJP(ctx, d)
			if err != nil {
				t.Fatalf("node %d vjp: %v", id, err)
			}
			if len(vj) != id {
				t.Fatalf("node %d vjp returned %d contributions for %d context entries", id, len(vj), id)
			}
			read := map[int]bool{}
			for _, p := range n.Inputs() {
				read[p] = true
			}
			for e := range vj {
				if !read[e] && !spec.IsZeroTensor(vj[e]) {
					t.Fatalf("node %d vjp: non-zero contribution %v to unread entry %d", id, vj[e], e)
				}
			}
			lhs, _ := spec.Dot(jv, d)
			rhs, err := spec.DotList(dctx, vj)
			if err != nil {
				t.Fatal(err)
			}
			if !lhs.Same(rhs) {
				t.Fatalf("node %d (%s): ⟨jvp, δ⟩ = %v, Σ⟨dx, vjp⟩ = %v", id, n.Op(), lhs, rhs)
			}
		}
	})
}

// Exec.Backward is the eager tape's dense-all sweep of the same program,
// bit for bit, for every requires-grad mask; over Rat it also equals the
// every-node sweep (zero preservation holds for exact linear VJPs).
func testExecMatchesEager[T spec.Scalar[T]](t *testing.T, seed uint64, exact bool) {
	forGraphs(t, seed, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[T](t, rc)
		e, err := g.Compile()
		if err != nil {
			t.Fatal(err)
		}
		for rep := 0; rep < 2; rep++ { // reuse the plan
			in := randTensors[T](r, rc.ctx)
			mask := make([]bool, len(rc.ctx))
			for i := range mask {
				mask[i] = rep == 0 || r.IntN(2) == 0
			}
			if err := e.SetRequiresGrad(mask); err != nil {
				t.Fatal(err)
			}
			tp, err := eagerTape(rc, in, mask)
			if err != nil {
				t.Fatalf("eager: %v", err)
			}
			out, err := e.Forward(in)
			if err != nil {
				t.Fatalf("forward: %v", err)
			}
			want, _ := tp.Value(rc.result)
			if !spec.SameTensor(out, want) {
				t.Fatalf("forward %v, eager %v", out, want)
			}
			sd := randTensor[T](r, rc.shapes[rc.result])
			dense, err := tp.BackwardAll(rc.result, sd)
			if err != nil {
				t.Fatalf("eager backward: %v", err)
			}
			got, err := e.Backward(sd)
			if err != nil {
				t.Fatalf("exec backward: %v", err)
			}
			if i, ok := sameList(got, dense); !ok {
				t.Fatalf("mask %v entry %d: exec %v, eager %v", mask, i, got[i], dense[i])
			}
			if exact && rep == 0 {
				all, err := g.BackpropAllCtx(in, sd)
				if err != nil {
					t.Fatal(err)
				}
				if i, ok := sameList(got[:len(rc.ctx)], all[:len(rc.ctx)]); !ok {
					t.Fatalf("context entry %d: skipping sweep %v, every-node sweep %v", i, got[i], all[i])
				}
			}
		}
	})
}

func TestExecBackwardMatchesEagerRat(t *testing.T) { testExecMatchesEager[spec.Rat](t, 5, true) }
func TestExecBackwardMatchesEagerF64(t *testing.T) { testExecMatchesEager[spec.F64](t, 6, false) }
func TestExecBackwardMatchesEagerF32(t *testing.T) { testExecMatchesEager[spec.F32](t, 7, false) }

// The lowered tape's own dense sweep (the one Grad and VJP run) agrees
// with the compiled plan over Rat.
func TestLoweredDenseSweepRat(t *testing.T) {
	forGraphs(t, 8, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[spec.Rat](t, rc)
		in := randTensors[spec.Rat](r, rc.ctx)
		sd := randTensor[spec.Rat](r, rc.shapes[rc.result])
		out, cts, err := tg.VJPGraph(g, in, sd)
		if err != nil {
			t.Fatalf("VJPGraph: %v", err)
		}
		e, _ := g.Compile()
		y, err := e.Forward(in)
		if err != nil || !spec.SameTensor(y, out) {
			t.Fatalf("forward %v (%v), vjp value %v", y, err, out)
		}
		got, err := e.Backward(sd)
		if err != nil {
			t.Fatal(err)
		}
		if i, ok := sameList(got[:len(rc.ctx)], cts); !ok {
			t.Fatalf("input %d: exec %v, lowered %v", i, got[i], cts[i])
		}
	})
}

// Rebuilding a graph over duals and evaluating with zero tangents gives
// the primal values and zero tangents.
func TestRebuildDualPrimal(t *testing.T) {
	forGraphs(t, 9, exactGen, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[spec.Rat](t, rc)
		gd, err := tg.ToDual(g)
		if err != nil {
			t.Fatal(err)
		}
		if gd.String() != g.String() {
			t.Fatalf("rebuilt %s, original %s", gd, g)
		}
		in := randTensors[spec.Rat](r, rc.ctx)
		din := make([]spec.Tensor[spec.Dual[spec.Rat]], len(in))
		for i, v := range in {
			din[i] = spec.Convert(v, func(x spec.Rat) spec.Dual[spec.Rat] { return spec.Dual[spec.Rat]{Re: x} })
		}
		want, err := g.Eval(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := gd.Eval(din)
		if err != nil {
			t.Fatal(err)
		}
		for id := range want {
			re := spec.Convert(got[id], func(x spec.Dual[spec.Rat]) spec.Rat { return x.Re })
			du := spec.Convert(got[id], func(x spec.Dual[spec.Rat]) spec.Rat { return x.Du })
			if !spec.SameTensor(re, want[id]) || !spec.IsZeroTensor(du) {
				t.Fatalf("entry %d: dual %v, primal %v", id, got[id], want[id])
			}
		}
	})
}

// Both interpreters run the same program text to identical values and
// gradients over Rat, and the graph interpreter records exactly the
// recipe's graph.
func TestInterpretersAgree(t *testing.T) {
	forGraphs(t, 10, genOpts{ops: exactOps, maxSteps: 12, scalar: true}, func(t *testing.T, r *rand.Rand, rc *recipe) {
		in := randTensors[spec.Rat](r, rc.ctx)
		e := tg.NewEager[spec.Rat](nil)
		out, refs, err := tg.RunEager(e, programOf[spec.Rat, tape.Ref](rc), in...)
		if err != nil {
			t.Fatalf("eager: %v", err)
		}
		g, err := tg.Trace(nil, programOf[spec.Rat, tg.Var](rc), rc.ctx...)
		if err != nil {
			t.Fatalf("trace: %v", err)
		}
		if ref := mustGraph[spec.Rat](t, rc); strings.ReplaceAll(ref.String(), `"const"`, `"c"`) != g.String() {
			t.Fatalf("traced %s, expected %s", g, ref)
		}
		if e.Session.Tape().NodeList()+" -> "+itoa(out.ID()) != g.String() {
			t.Fatalf("eager tape %s, graph %s", e.Session.Tape().NodeList(), g)
		}
		ev, _ := e.Session.Value(out)
		gv, err := g.EvalResult(in)
		if err != nil || !spec.SameTensor(ev, gv) {
			t.Fatalf("eager value %v, graph value %v (%v)", ev, gv, err)
		}
		grads, err := e.Session.Backward(out)
		if err != nil {
			t.Fatalf("eager backward: %v", err)
		}
		gg, err := tg.GradGraph(g, in)
		if err != nil {
			t.Fatalf("grad: %v", err)
		}
		for i, ref := range refs {
			eg, ok, err := e.Session.Grad(grads, ref)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				eg = spec.ZerosLike(in[i])
			}
			if !spec.SameTensor(eg, gg[i]) {
				t.Fatalf("input %d: eager gradient %v, graph gradient %v", i, eg, gg[i])
			}
		}
	})
}

func itoa(n int) string {
	return spec.Const[spec.Rat](int64(n)).String()
}
