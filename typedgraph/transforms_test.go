package typedgraph_test

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

func rats(vs ...int64) []R {
	out := make([]R, len(vs))
	for i, v := range vs {
		out[i] = spec.NewRat(v, 1)
	}
	return out
}

func sumCube(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) {
	sq, err := tg.Square(o, in[0])
	if err != nil {
		return sq, err
	}
	c, err := tg.Mul(o, sq, in[0])
	if err != nil {
		return c, err
	}
	return tg.Sum(o, c)
}

// Closed forms: ∇Σx³ = 3x², ∇²Σx³ = diag(6x).
func TestSumCubeClosedForms(t *testing.T) {
	x := spec.Vector(spec.NewRat(1, 1), spec.NewRat(-1, 2), spec.NewRat(2, 1), spec.NewRat(0, 1))
	g, err := tg.Grad(nil, sumCube, x)
	if err != nil {
		t.Fatal(err)
	}
	h, err := tg.Hessian(nil, sumCube, x)
	if err != nil {
		t.Fatal(err)
	}
	for i, xi := range x.Data {
		three := spec.NewRat(3, 1)
		if !g[0].Data[i].Same(three.Mul(xi).Mul(xi)) {
			t.Fatalf("grad[%d] = %v", i, g[0].Data[i])
		}
		for j := range x.Data {
			want := spec.NewRat(0, 1)
			if i == j {
				want = spec.NewRat(6, 1).Mul(xi)
			}
			if !h[0][0].Data[i*4+j].Same(want) {
				t.Fatalf("H[%d][%d] = %v, want %v", i, j, h[0][0].Data[i*4+j], want)
			}
		}
	}
	v := spec.Vector(spec.NewRat(1, 3), spec.NewRat(2, 1), spec.NewRat(-1, 1), spec.NewRat(5, 1))
	hv, err := tg.HVP(nil, sumCube, []spec.Tensor[R]{x}, []spec.Tensor[R]{v})
	if err != nil {
		t.Fatal(err)
	}
	for i := range x.Data {
		if want := spec.NewRat(6, 1).Mul(x.Data[i]).Mul(v.Data[i]); !hv[0].Data[i].Same(want) {
			t.Fatalf("hvp[%d] = %v, want %v", i, hv[0].Data[i], want)
		}
	}
}

// Two inputs: f(x, y) = Σ x⊙y⊙y has H_xx = 0, H_xy = diag(2y),
// H_yx = diag(2y), H_yy = diag(2x); Jacobian blocks are laid out output
// axes first.
func TestTwoInputHessian(t *testing.T) {
	prog := func(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) {
		a, err := tg.Mul(o, in[0], in[1])
		if err != nil {
			return a, err
		}
		b, err := tg.Mul(o, a, in[1])
		if err != nil {
			return b, err
		}
		return tg.Sum(o, b)
	}
	x, y := rv(1, 2), rv(3, -4)
	h, err := tg.Hessian(nil, prog, x, y)
	if err != nil {
		t.Fatal(err)
	}
	diag := func(a, b int64) spec.Tensor[R] {
		return spec.Tensor[R]{Shape: spec.Shape{2, 2}, Data: rats(a, 0, 0, b)}
	}
	want := [2][2]spec.Tensor[R]{{diag(0, 0), diag(6, -8)}, {diag(6, -8), diag(2, 4)}}
	for i := range 2 {
		for j := range 2 {
			if !spec.SameTensor(h[i][j], want[i][j]) {
				t.Fatalf("H[%d][%d] = %v, want %v", i, j, h[i][j], want[i][j])
			}
		}
	}
}

// Jacobian layout: output axes, then input axes. For y = W·x the Jacobian
// is W; for a permutation of a [2,3] input it has shape [3,2,2,3].
func TestJacobianLayout(t *testing.T) {
	w := spec.Tensor[R]{Shape: spec.Shape{2, 3}, Data: rats(1, 2, 3, 4, 5, 6)}
	lin := func(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) {
		c, err := o.Const("W", w)
		if err != nil {
			return c, err
		}
		return tg.MatMul(o, c, in[0])
	}
	x := rv(1, -1, 2)
	for name, jac := range map[string]func(*spec.Registry[R], tg.Program[R, tg.Var], ...spec.Tensor[R]) ([]spec.Tensor[R], error){
		"jacrev": tg.JacRev[R], "jacfwd": tg.JacFwd[R],
	} {
		j, err := jac(nil, lin, x)
		if err != nil {
			t.Fatal(err)
		}
		if !spec.SameTensor(j[0], w) {
			t.Fatalf("%s: J = %v, want W = %v", name, j[0], w)
		}
	}
	perm := func(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) { return tg.Permute(o, in[0], []int{1, 0}) }
	xm := spec.Tensor[R]{Shape: spec.Shape{2, 3}, Data: rats(1, 2, 3, 4, 5, 6)}
	j, err := tg.JacRev(nil, perm, xm)
	if err != nil {
		t.Fatal(err)
	}
	if !j[0].Shape.Equal(spec.Shape{3, 2, 2, 3}) {
		t.Fatalf("shape %v", j[0].Shape)
	}
	// J[o0,o1,a0,a1] = 1 iff (a0,a1) = (o1,o0).
	for o0 := range 3 {
		for o1 := range 2 {
			for a0 := range 2 {
				for a1 := range 3 {
					want := int64(0)
					if a0 == o1 && a1 == o0 {
						want = 1
					}
					if got := j[0].Data[((o0*2+o1)*2+a0)*3+a1]; !got.Same(spec.NewRat(want, 1)) {
						t.Fatalf("J[%d,%d,%d,%d] = %v", o0, o1, a0, a1, got)
					}
				}
			}
		}
	}
}

// VJP and JVP through the program forms agree with the gradient: for a
// scalar program, jvp(dx) = ⟨∇f, dx⟩ and vjp(c) = c·∇f.
func TestProgramVJPAndJVP(t *testing.T) {
	x := rv(2, -3)
	dx := rv(5, 7)
	out, tan, err := tg.JVP(nil, sumCube, []spec.Tensor[R]{x}, []spec.Tensor[R]{dx})
	if err != nil {
		t.Fatal(err)
	}
	// f = 8 − 27 = −19; ∇f = (12, 27); ⟨∇f, dx⟩ = 60 + 189 = 249.
	if !out.Data[0].Same(spec.NewRat(-19, 1)) || !tan.Data[0].Same(spec.NewRat(249, 1)) {
		t.Fatalf("jvp = %v, %v", out, tan)
	}
	out, cts, err := tg.VJP(nil, sumCube, []spec.Tensor[R]{x}, spec.Scalar0(spec.NewRat(-2, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if !out.Data[0].Same(spec.NewRat(-19, 1)) || !spec.SameTensor(cts[0], rv(-24, -54)) {
		t.Fatalf("vjp = %v, %v", out, cts)
	}
	if _, _, err := tg.VJP(nil, sumCube, []spec.Tensor[R]{x}, rv(1)); err == nil {
		t.Fatal("vjp with a wrong seed shape accepted")
	}
	if _, err := tg.Grad(nil, sumCube); err == nil {
		t.Fatal("grad without inputs accepted")
	}
}

// JacRev (one-hot VJPs on one lowered tape) and JacFwd (basis JVPs) agree
// exactly on random graphs over Rat.
func TestJacRevEqualsJacFwd(t *testing.T) {
	forGraphs(t, 11, genOpts{ops: exactOps, maxSteps: 8}, func(t *testing.T, r *rand.Rand, rc *recipe) {
		g := mustGraph[R](t, rc)
		in := randTensors[R](r, rc.ctx)
		jr, err := tg.JacRevGraph(g, in)
		if err != nil {
			t.Fatalf("jacrev: %v", err)
		}
		jf, err := tg.JacFwdGraph(g, in)
		if err != nil {
			t.Fatalf("jacfwd: %v", err)
		}
		if i, ok := sameList(jr, jf); !ok {
			t.Fatalf("input %d: jacrev %v, jacfwd %v", i, jr[i], jf[i])
		}
		for i := range jr {
			want := append(rc.shapes[rc.result].Clone(), rc.ctx[i]...)
			if !jr[i].Shape.Equal(want) {
				t.Fatalf("block %d has shape %v, want %v", i, jr[i].Shape, want)
			}
		}
	})
}

// The Hessian of a polynomial program is exactly symmetric over Rat, HVP
// agrees with the Hessian, and both agree with JacFwd of the gradient —
// where the gradient is built as an explicit typed graph (reverse mode as a
// program transformation) and differentiated by the registry's JVP rules,
// a route that shares nothing with the dual-number reverse pass.
func TestHessianSymmetricAndHVPEqualsJacFwdOfGrad(t *testing.T) {
	n := 0
	r := rand.New(rand.NewPCG(12, 0x7467))
	for i := 0; i < 300; i++ {
		rc := genRecipe(r, genOpts{ops: polyOps, maxSteps: 8, scalar: true})
		gg, err := symbolicGrad(rc)
		if err != nil {
			continue // a recipe the symbolic builder does not cover
		}
		n++
		g := mustGraph[R](t, rc)
		in := randTensors[R](r, rc.ctx)
		// The symbolic gradient graph computes the gradient.
		want, err := tg.GradGraph(g, in)
		if err != nil {
			t.Fatal(err)
		}
		flat, err := gg.EvalResult(in)
		if err != nil {
			t.Fatalf("symbolic gradient: %v\n%s", err, rc)
		}
		off := 0
		for k := range want {
			for a, v := range want[k].Data {
				if !flat.Data[off+a].Same(v) {
					t.Fatalf("symbolic gradient of input %d[%d] = %v, grad %v\n%s", k, a, flat.Data[off+a], v, rc)
				}
			}
			off += len(want[k].Data)
		}
		jac, err := tg.JacFwdGraph(gg, in)
		if err != nil {
			t.Fatal(err)
		}
		gd, err := tg.ToDual(g)
		if err != nil {
			t.Fatal(err)
		}
		h, err := tg.HessianGraph(gd, in)
		if err != nil {
			t.Fatalf("hessian: %v\n%s", err, rc)
		}
		offs := make([]int, len(in)+1)
		for k := range in {
			offs[k+1] = offs[k] + in[k].Len()
		}
		for a := range in {
			for b := range in {
				na, nb := in[a].Len(), in[b].Len()
				for p := 0; p < na; p++ {
					for q := 0; q < nb; q++ {
						hab := h[a][b].Data[p*nb+q]
						if !hab.Same(h[b][a].Data[q*na+p]) {
							t.Fatalf("H[%d][%d][%d,%d] = %v but H[%d][%d][%d,%d] = %v\n%s", a, b, p, q, hab, b, a, q, p, h[b][a].Data[q*na+p], rc)
						}
						if jf := jac[b].Data[(offs[a]+p)*nb+q]; !hab.Same(jf) {
							t.Fatalf("H[%d][%d][%d,%d] = %v, JacFwd(grad) = %v\n%s", a, b, p, q, hab, jf, rc)
						}
					}
				}
			}
		}
		// HVP in a random direction equals H·v.
		v := randTensors[R](r, rc.ctx)
		hv, err := tg.HVPGraph(gd, in, v)
		if err != nil {
			t.Fatal(err)
		}
		for a := range in {
			for p := range in[a].Data {
				var acc R
				for b := range in {
					nb := in[b].Len()
					for q := 0; q < nb; q++ {
						acc = acc.Add(jac[b].Data[(offs[a]+p)*nb+q].Mul(v[b].Data[q]))
					}
				}
				if !hv[a].Data[p].Same(acc) {
					t.Fatalf("hvp[%d][%d] = %v, JacFwd(grad)·v = %v\n%s", a, p, hv[a].Data[p], acc, rc)
				}
			}
		}
	}
	if n < 200 {
		t.Fatalf("only %d of 300 recipes were covered by the symbolic gradient", n)
	}
	t.Logf("%d of 300 recipes checked", n)
}

// symbolicGrad builds, for a scalar polynomial recipe, a typed graph over
// the same context whose result is the gradient (every input flattened and
// concatenated), using only forward primitives: each node's VJP written as
// graph nodes.
func symbolicGrad(rc *recipe) (*tg.Graph[R], error) {
	g, err := tg.New[R](nil, rc.ctx...)
	if err != nil {
		return nil, err
	}
	var bad error
	ap := func(op string, a *spec.Attrs, in ...int) int {
		if bad != nil {
			return 0
		}
		id, err := g.AppendInferred(op, a, in)
		if err != nil {
			bad = fmt.Errorf("%s%v: %w", op, in, err)
		}
		return id
	}
	shape := func(id int) spec.Shape { s, _ := g.Shape(id); return s }
	zeros := func(s spec.Shape) int {
		id, err := g.AppendConst("0", spec.Tensor[R]{Shape: s.Clone(), Data: make([]R, s.Size())})
		if err != nil && bad == nil {
			bad = err
		}
		return id
	}
	for _, st := range rc.steps {
		if st.op == "const" {
			if _, err := g.AppendConst("c", tensorOf[R](st.attrs.Shape, st.val)); err != nil {
				return nil, err
			}
			continue
		}
		ap(st.op, st.attrs, st.in...)
	}
	ct := make([]int, len(rc.shapes))
	for i := range ct {
		ct[i] = -1
	}
	acc := func(p, c int) {
		if ct[p] < 0 {
			ct[p] = c
		} else {
			ct[p] = ap("add", nil, ct[p], c)
		}
	}
	ct[rc.result] = ap("const", &spec.Attrs{Shape: spec.Shape{}, Values: []*big.Rat{big.NewRat(1, 1)}})
	nctx := len(rc.ctx)
	for k := len(rc.steps) - 1; k >= 0 && bad == nil; k-- {
		id, st := nctx+k, rc.steps[k]
		d := ct[id]
		if d < 0 {
			continue
		}
		in := st.in
		switch st.op {
		case "add":
			acc(in[0], d)
			acc(in[1], d)
		case "sub":
			acc(in[0], d)
			acc(in[1], ap("neg", nil, d))
		case "mul":
			acc(in[0], ap("mul", nil, d, in[1]))
			acc(in[1], ap("mul", nil, d, in[0]))
		case "neg":
			acc(in[0], ap("neg", nil, d))
		case "scale":
			acc(in[0], ap("scale", st.attrs, d))
		case "square":
			acc(in[0], ap("scale", &spec.Attrs{C: big.NewRat(2, 1)}, ap("mul", nil, d, in[0])))
		case "sum":
			acc(in[0], ap("broadcast_to", &spec.Attrs{Shape: shape(in[0])}, d))
		case "reduce_sum":
			s := shape(in[0])
			ax := (st.attrs.Axis + len(s)) % len(s)
			s1 := s.Clone()
			s1[ax] = 1
			acc(in[0], ap("broadcast_to", &spec.Attrs{Shape: s}, ap("reshape", &spec.Attrs{Shape: s1}, d)))
		case "reshape":
			acc(in[0], ap("reshape", &spec.Attrs{Shape: shape(in[0])}, d))
		case "permute":
			inv := make([]int, len(st.attrs.Perm))
			for i, p := range st.attrs.Perm {
				inv[p] = i
			}
			acc(in[0], ap("permute", &spec.Attrs{Perm: inv}, d))
		case "broadcast_to":
			s0, s := shape(in[0]), st.attrs.Shape
			cur := d
			lead := len(s) - len(s0)
			for i := 0; i < lead; i++ {
				cur = ap("reduce_sum", &spec.Attrs{Axis: 0}, cur)
			}
			for i := len(s0) - 1; i >= 0; i-- {
				if s0[i] == 1 && s[lead+i] != 1 {
					cur = ap("reduce_sum", &spec.Attrs{Axis: i}, cur)
				}
			}
			acc(in[0], ap("reshape", &spec.Attrs{Shape: s0}, cur))
		case "concat":
			off := 0
			for _, p := range in {
				n := shape(p)[st.attrs.Axis]
				acc(p, ap("slice", &spec.Attrs{Axis: st.attrs.Axis, Start: off, End: off + n}, d))
				off += n
			}
		case "slice":
			s := shape(in[0])
			ax := st.attrs.Axis
			parts := []int{}
			if st.attrs.Start > 0 {
				z := s.Clone()
				z[ax] = st.attrs.Start
				parts = append(parts, zeros(z))
			}
			parts = append(parts, d)
			if st.attrs.End < s[ax] {
				z := s.Clone()
				z[ax] = s[ax] - st.attrs.End
				parts = append(parts, zeros(z))
			}
			acc(in[0], ap("concat", &spec.Attrs{Axis: ax}, parts...))
		case "matmul":
			a, b := shape(in[0]), shape(in[1])
			tr := &spec.Attrs{Axis: 0, Axis2: 1}
			switch {
			case len(a) == 2 && len(b) == 2:
				acc(in[0], ap("matmul", nil, d, ap("transpose", tr, in[1])))
				acc(in[1], ap("matmul", nil, ap("transpose", tr, in[0]), d))
			case len(a) == 1 && len(b) == 2:
				acc(in[0], ap("matmul", nil, in[1], d))
				acc(in[1], ap("matmul", nil, ap("reshape", &spec.Attrs{Shape: spec.Shape{a[0], 1}}, in[0]),
					ap("reshape", &spec.Attrs{Shape: spec.Shape{1, b[1]}}, d)))
			case len(a) == 2 && len(b) == 1:
				acc(in[0], ap("matmul", nil, ap("reshape", &spec.Attrs{Shape: spec.Shape{a[0], 1}}, d),
					ap("reshape", &spec.Attrs{Shape: spec.Shape{1, b[0]}}, in[1])))
				acc(in[1], ap("matmul", nil, ap("transpose", tr, in[0]), d))
			case len(a) == 1 && len(b) == 1:
				acc(in[0], ap("mul", nil, ap("broadcast_to", &spec.Attrs{Shape: a}, d), in[1]))
				acc(in[1], ap("mul", nil, ap("broadcast_to", &spec.Attrs{Shape: b}, d), in[0]))
			default:
				return nil, fmt.Errorf("batched matmul not covered")
			}
		case "linear":
			x, w := shape(in[0]), shape(in[1])
			rows := x.Size() / max(w[1], 1)
			if w[1] == 0 {
				return nil, fmt.Errorf("empty linear not covered")
			}
			acc(in[0], ap("reshape", &spec.Attrs{Shape: x},
				ap("matmul", nil, ap("reshape", &spec.Attrs{Shape: spec.Shape{rows, w[0]}}, d), in[1])))
			d2 := ap("reshape", &spec.Attrs{Shape: spec.Shape{rows, w[0]}}, d)
			x2 := ap("reshape", &spec.Attrs{Shape: spec.Shape{rows, w[1]}}, in[0])
			acc(in[1], ap("matmul", nil, ap("transpose", &spec.Attrs{Axis: 0, Axis2: 1}, d2), x2))
			acc(in[2], ap("reduce_sum", &spec.Attrs{Axis: 0}, d2))
		case "mse_loss":
			s := shape(in[0])
			n := int64(max(s.Size(), 1))
			diff := ap("sub", nil, in[0], in[1])
			k := ap("scale", &spec.Attrs{C: big.NewRat(2, n)}, ap("broadcast_to", &spec.Attrs{Shape: s}, d))
			ga := ap("mul", nil, k, diff)
			acc(in[0], ga)
			acc(in[1], ap("neg", nil, ga))
		case "detach", "const":
		default:
			return nil, fmt.Errorf("op %s not covered", st.op)
		}
	}
	if bad != nil {
		return nil, bad
	}
	var flat []int
	for i, s := range rc.ctx {
		c := ct[i]
		if c < 0 {
			c = zeros(s)
		}
		flat = append(flat, ap("reshape", &spec.Attrs{Shape: spec.Shape{s.Size()}}, c))
	}
	res := ap("concat", &spec.Attrs{Axis: 0}, flat...)
	if bad != nil {
		return nil, bad
	}
	return g, g.SetResult(res)
}

// A registry with a planted fault (a mul VJP that drops the second
// factor's contribution) is caught by the adjointness property, while the
// lowering and the graph agree with each other, since both take their rules
// from the same registry.
func TestPlantedFaultIsCaught(t *testing.T) {
	reg := spec.New[R]()
	mul, _ := reg.Lookup("mul")
	bad := *mul
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[R], y, dy spec.Tensor[R]) ([]spec.Tensor[R], error) {
		gs, err := mul.VJP(a, xs, y, dy)
		if err != nil {
			return nil, err
		}
		return []spec.Tensor[R]{gs[0], spec.ZerosLike(gs[1])}, nil
	}
	reg.Override(&bad)
	g, _ := tg.New(reg, spec.Shape{2})
	m, _ := g.Append("mul", nil, []int{0, 0}, spec.Shape{2})
	s, _ := g.Append("sum", nil, []int{m}, spec.Shape{})
	_ = g.SetResult(s)
	x, dx := rv(3, -1), rv(1, 1)
	tans, err := g.JVPCtx([]spec.Tensor[R]{x}, []spec.Tensor[R]{dx})
	if err != nil {
		t.Fatal(err)
	}
	cts, err := g.BackpropCtx([]spec.Tensor[R]{x}, spec.Scalar0(spec.NewRat(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	lhs := tans[s].Data[0]
	rhs, _ := spec.DotList([]spec.Tensor[R]{dx}, cts)
	if lhs.Same(rhs) {
		t.Fatalf("planted fault not detected: %v = %v", lhs, rhs)
	}
	gs, err := tg.GradGraph(g, []spec.Tensor[R]{x})
	if err != nil || !spec.SameTensor(gs[0], cts[0]) {
		t.Fatalf("lowering and graph disagree under the same registry: %v vs %v", gs, cts)
	}
}

// A stop-gradient boundary stops tangents in the dual forward pass too:
// f(x) = mse(x, detach(x)) has gradient 2(x − sg(x))/N and, forward over
// reverse, Hessian 2I/N — what JacFwd of that gradient gives, since
// detach's JVP is zero.
func TestHessianThroughDetach(t *testing.T) {
	prog := func(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) {
		d, err := o.Detach(in[0])
		if err != nil {
			return d, err
		}
		return tg.MSE(o, in[0], d)
	}
	h, err := tg.Hessian(nil, prog, rv(1, -2))
	if err != nil {
		t.Fatal(err)
	}
	want := spec.Tensor[R]{Shape: spec.Shape{2, 2}, Data: rats(1, 0, 0, 1)}
	if !spec.SameTensor(h[0][0], want) {
		t.Fatalf("H = %v, want %v", h[0][0], want)
	}
}

// The chapter's example through both interpreters: x⊙x + x⊙x at
// x = (3, −1.5) has gradient (12, −6); with the second product detached,
// (6, −3). The eager tape's reverse sweep, the graph's checked lowering,
// the compiled plan and the graph's every-node backprop all agree exactly.
func TestChapterExampleBothInterpreters(t *testing.T) {
	x := spec.Vector(spec.NewRat(3, 1), spec.NewRat(-3, 2))
	for _, c := range []struct {
		detach bool
		want   spec.Tensor[R]
	}{
		{false, spec.Vector(spec.NewRat(12, 1), spec.NewRat(-6, 1))},
		{true, spec.Vector(spec.NewRat(6, 1), spec.NewRat(-3, 1))},
	} {
		e := tg.NewEager[R](nil)
		out, refs, err := tg.RunEager(e, quad[R, tape.Ref](c.detach), x)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := e.Session.Backward(out)
		if err != nil {
			t.Fatal(err)
		}
		eg, ok, err := e.Session.Grad(gr, refs[0])
		if err != nil || !ok {
			t.Fatalf("eager gradient missing: %v", err)
		}
		g, err := tg.Trace(nil, quad[R, tg.Var](c.detach), x.Shape)
		if err != nil {
			t.Fatal(err)
		}
		gg, err := tg.GradGraph(g, []spec.Tensor[R]{x})
		if err != nil {
			t.Fatal(err)
		}
		bp, err := g.BackpropCtx([]spec.Tensor[R]{x}, spec.Scalar0(spec.NewRat(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		ex, _ := g.Compile()
		if _, err := ex.Forward([]spec.Tensor[R]{x}); err != nil {
			t.Fatal(err)
		}
		pg, err := ex.Backward(spec.Scalar0(spec.NewRat(1, 1)))
		if err != nil {
			t.Fatal(err)
		}
		for name, got := range map[string]spec.Tensor[R]{"eager": eg, "grad": gg[0], "backprop": bp[0], "plan": pg[0]} {
			if !spec.SameTensor(got, c.want) {
				t.Fatalf("detach=%v %s: %v, want %v", c.detach, name, got, c.want)
			}
		}
		ev, _ := e.Session.Value(out)
		gv, _ := g.EvalResult([]spec.Tensor[R]{x})
		if !spec.SameTensor(ev, gv) || !ev.Data[0].Same(spec.NewRat(45, 2)) {
			t.Fatalf("loss: eager %v, graph %v", ev, gv)
		}
	}
}
