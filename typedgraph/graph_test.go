package typedgraph_test

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
	tg "github.com/tlcheck/tlcheck/typedgraph"
)

type R = spec.Rat

func rv(vs ...int64) spec.Tensor[R] {
	t := spec.Tensor[R]{Shape: spec.Shape{len(vs)}, Data: make([]R, len(vs))}
	for i, v := range vs {
		t.Data[i] = spec.NewRat(v, 1)
	}
	return t
}

func wantErr(t *testing.T, err error, substr string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, expected one containing %q", substr)
	}
	if !strings.Contains(err.Error(), substr) {
		t.Fatalf("error %q does not contain %q", err, substr)
	}
}

// The construction errors use the chapter's phrasings and are values
// naming the node id, the op and expected versus actual.
func TestConstructionErrors(t *testing.T) {
	g, err := tg.New[R](nil, spec.Shape{2}, spec.Shape{3})
	if err != nil {
		t.Fatal(err)
	}
	// A declared shape that disagrees with the rule.
	_, err = g.Append("neg", nil, []int{0}, spec.Shape{3})
	wantErr(t, err, "shape mismatch at id=2: expected [3], got [2]")
	var se *tg.ShapeError
	if !errors.As(err, &se) || se.ID != 2 || se.Op != "neg" {
		t.Fatalf("not a ShapeError naming id 2 and neg: %#v", err)
	}
	// Reads of entries that do not exist yet.
	_, err = g.Append("add", nil, []int{0, 2}, spec.Shape{2})
	wantErr(t, err, "invalid id=2 for ctxLen=2")
	var ie *tg.IDError
	if !errors.As(err, &ie) || ie.Arg != 1 || ie.Op != "add" {
		t.Fatalf("not an IDError naming argument 1 of add: %#v", err)
	}
	_, err = g.Append("neg", nil, []int{-1}, spec.Shape{2})
	wantErr(t, err, "invalid id=-1 for ctxLen=2")
	// Shapes the primitive rejects.
	_, err = g.Append("add", nil, []int{0, 1}, spec.Shape{2})
	wantErr(t, err, "node 2 (add): parent 1 has shape [3], expected [2]")
	// Arity and unknown primitives.
	_, err = g.Append("neg", nil, []int{0, 0}, spec.Shape{2})
	wantErr(t, err, "neg takes 1 parents")
	_, err = g.Append("frobnicate", nil, []int{0}, spec.Shape{2})
	wantErr(t, err, "unknown primitive")
	// Nothing was appended by the failures.
	if g.Len() != 2 || g.NumNodes() != 0 {
		t.Fatalf("failed appends changed the graph: %s", g)
	}
	id, err := g.Append("mul", nil, []int{0, 0}, spec.Shape{2})
	if err != nil || id != 2 {
		t.Fatalf("append: %d, %v", id, err)
	}
	// Context declared after a node: rejected by the builder too.
	if err := g.SetResult(3); err == nil {
		t.Fatal("result beyond the graph accepted")
	}
	wantErr(t, g.SetResult(7), "invalid id=7 for ctxLen=3")
	if _, err := tg.New[R](nil, spec.Shape{-1}); err == nil {
		t.Fatal("negative extent accepted")
	}
	if _, err := g.Node(1); err == nil {
		t.Fatal("context entry returned as a node")
	}
	if _, err := g.Node(9); err == nil {
		t.Fatal("node beyond the graph returned")
	}
	_, err = g.InputName(5)
	if !errors.Is(err, tg.ErrInputIndex) {
		t.Fatalf("InputName(5): %v", err)
	}
	wantErr(t, err, "input index out of bounds")
}

// Evaluation rejects wrong context values, seeds and tangents with errors,
// never a panic.
func TestEvaluationErrors(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{2})
	m, _ := g.Append("mul", nil, []int{0, 0}, spec.Shape{2})
	s, _ := g.Append("sum", nil, []int{m}, spec.Shape{})
	x := rv(3, -1)

	if _, err := g.BackpropCtx([]spec.Tensor[R]{x}, spec.Scalar0(spec.NewRat(1, 1))); err == nil {
		t.Fatal("backprop without a result accepted")
	}
	if _, err := g.Compile(); err == nil {
		t.Fatal("compile without a result accepted")
	}
	if err := g.SetResult(s); err != nil {
		t.Fatal(err)
	}
	_, err := g.Eval([]spec.Tensor[R]{rv(1, 2, 3)})
	wantErr(t, err, "shape mismatch at id=0: expected [2], got [3] (input)")
	_, err = g.Eval(nil)
	wantErr(t, err, "graph context has 1 inputs, got 0 values")
	bad := spec.Tensor[R]{Shape: spec.Shape{2}, Data: make([]R, 3)}
	_, err = g.Eval([]spec.Tensor[R]{bad})
	wantErr(t, err, "holds 3 elements, expected 2")
	_, err = g.BackpropCtx([]spec.Tensor[R]{x}, rv(1))
	wantErr(t, err, "shape mismatch at id=2: expected [], got [1] (seed)")
	_, err = g.JVPCtx([]spec.Tensor[R]{x}, []spec.Tensor[R]{rv(1)})
	wantErr(t, err, "shape mismatch at id=0: expected [2], got [1] (tangent)")
	_, err = g.JVPCtx([]spec.Tensor[R]{x}, nil)
	wantErr(t, err, "got 0 tangents")
	_, err = g.BackpropAllFrom([]spec.Tensor[R]{x}, []spec.Tensor[R]{x})
	wantErr(t, err, "1 initial cotangents for 3 entries")

	e, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Backward(spec.Scalar0(spec.NewRat(1, 1)))
	wantErr(t, err, "no successful Forward")
	if _, err := e.JVP([]spec.Tensor[R]{x}); err == nil {
		t.Fatal("jvp before forward accepted")
	}
	if _, err := e.Value(0); err == nil {
		t.Fatal("value before forward accepted")
	}
	if _, err := e.Forward([]spec.Tensor[R]{x}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Value(17); err == nil {
		t.Fatal("value of a missing entry accepted")
	}
	wantErr(t, e.SetRequiresGrad([]bool{true, false}), "2 flags for 1 context inputs")
	// A failed forward invalidates the plan's values.
	if _, err := e.Forward([]spec.Tensor[R]{rv(1)}); err == nil {
		t.Fatal("bad forward accepted")
	}
	_, err = e.Backward(spec.Scalar0(spec.NewRat(1, 1)))
	wantErr(t, err, "no successful Forward")

	// Transforms.
	_, err = tg.GradGraph(g, []spec.Tensor[R]{rv(1)})
	wantErr(t, err, "shape mismatch at id=0")
	g2, _ := tg.New[R](nil, spec.Shape{2})
	_ = g2.SetResult(0)
	_, err = tg.GradGraph(g2, []spec.Tensor[R]{x})
	wantErr(t, err, "shape mismatch at id=0: expected [], got [2] (scalar result)")
	_, _, err = tg.VJPGraph(g2, []spec.Tensor[R]{x}, rv(1, 2, 3))
	wantErr(t, err, "(seed)")
	_, err = tg.HVPGraph[R](nil, nil, nil)
	wantErr(t, err, "nil graph")
	gd, _ := tg.ToDual(g)
	_, err = tg.HVPGraph(gd, []spec.Tensor[R]{x}, []spec.Tensor[R]{rv(1)})
	wantErr(t, err, "(direction)")
	_, err = tg.HessianGraph(gd, nil)
	wantErr(t, err, "got 0 values")
	var nilg *tg.Graph[R]
	_, err = tg.JacRevGraph(nilg, nil)
	wantErr(t, err, "nil graph")
}

// Node payload: the context must match the node, VJP is dense over the
// context with duplicate reads accumulated, Validate reports the phrases.
func TestNodePayload(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{2}, spec.Shape{2})
	m, _ := g.Append("mul", nil, []int{0, 0}, spec.Shape{2}) // x⊙x: two reads of entry 0
	n, err := g.Node(m)
	if err != nil {
		t.Fatal(err)
	}
	x, y := rv(3, -2), rv(5, 7)
	ctx := []spec.Tensor[R]{x, y}
	vj, err := n.VJP(ctx, rv(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	// d(x⊙x) = 2x, and entry 1 is unread: zero.
	if !spec.SameTensor(vj[0], rv(6, -4)) || !spec.SameTensor(vj[1], rv(0, 0)) || len(vj) != 2 {
		t.Fatalf("vjp = %v", vj)
	}
	jv, err := n.JVP(ctx, []spec.Tensor[R]{rv(1, 0), rv(9, 9)})
	if err != nil || !spec.SameTensor(jv, rv(6, 0)) {
		t.Fatalf("jvp = %v, %v", jv, err)
	}
	err = n.Validate(ctx[:0])
	wantErr(t, err, "input index out of bounds")
	if !errors.Is(err, tg.ErrInputIndex) {
		t.Fatalf("not ErrInputIndex: %v", err)
	}
	wantErr(t, n.Validate([]spec.Tensor[R]{x, y, y}), "context has 3 entries, expected 2")
	wantErr(t, n.Validate([]spec.Tensor[R]{rv(1), y}), "shape mismatch at id=0: expected [2], got [1] (mul)")
	_, err = n.VJP(ctx, rv(1))
	wantErr(t, err, "shape mismatch at id=2: expected [2], got [1] (mul cotangent)")
	_, err = n.JVP(ctx, []spec.Tensor[R]{rv(1, 0)})
	wantErr(t, err, "1 tangents for 2 context entries")
	if n.Op() != "mul" || n.ID() != 2 || len(n.Inputs()) != 2 || !n.Shape().Equal(spec.Shape{2}) || n.NoGrad() {
		t.Fatalf("node accessors: %s %d %v %v", n.Op(), n.ID(), n.Inputs(), n.Shape())
	}
	// Attrs and Inputs are copies.
	n.Inputs()[0] = 1
	if n.Inputs()[0] != 0 {
		t.Fatal("Inputs exposes the node's slice")
	}
}

// The result may be a context input: no dummy node is needed, and the
// gradient of an input with respect to itself is the seed.
func TestResultIsInput(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{}, spec.Shape{2})
	_, _ = g.Append("square", nil, []int{1}, spec.Shape{2})
	if err := g.SetResult(0); err != nil {
		t.Fatal(err)
	}
	in := []spec.Tensor[R]{spec.Scalar0(spec.NewRat(5, 1)), rv(1, 2)}
	gs, err := tg.GradGraph(g, in)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.SameTensor(gs[0], spec.Scalar0(spec.NewRat(1, 1))) || !spec.IsZeroTensor(gs[1]) {
		t.Fatalf("grad = %v", gs)
	}
	all, err := g.BackpropAllCtx(in, spec.Scalar0(spec.NewRat(7, 1)))
	if err != nil || !spec.SameTensor(all[0], spec.Scalar0(spec.NewRat(7, 1))) {
		t.Fatalf("backprop = %v, %v", all, err)
	}
	v, err := g.EvalResult(in)
	if err != nil || !spec.SameTensor(v, in[0]) {
		t.Fatalf("eval = %v, %v", v, err)
	}
}

// Duplicate reads are meaningful: x⊙x names x twice and owes two
// contributions; the graph's every-node sweep, the lowered tape and the
// plan all give 2x.
func TestDuplicateReads(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{2})
	m, _ := g.Append("mul", nil, []int{0, 0}, spec.Shape{2})
	c, _ := g.Append("concat", nil, []int{m, 0, m}, spec.Shape{6})
	s, _ := g.Append("sum", nil, []int{c}, spec.Shape{})
	_ = g.SetResult(s)
	x := rv(3, -1)
	// d/dx Σ(x², x, x²) = 4x + 1.
	gs, err := tg.GradGraph(g, []spec.Tensor[R]{x})
	if err != nil || !spec.SameTensor(gs[0], rv(13, -3)) {
		t.Fatalf("grad = %v, %v", gs, err)
	}
	tp, _, err := g.Lower([]spec.Tensor[R]{x})
	if err != nil {
		t.Fatal(err)
	}
	want := `#[(some "x0", #[]), (some "mul", #[0, 0]), (some "concat", #[1, 0, 1]), (some "sum", #[2])]`
	if tp.NodeList() != want {
		t.Fatalf("lowered %s", tp.NodeList())
	}
}

// Constants: rational values become the registry's const primitive (and
// survive Rebuild over any scalar); a value with no rational form is a
// literal that Rebuild carries over only with a conversion function.
func TestConstants(t *testing.T) {
	b := tg.NewBuilder[spec.F64](nil)
	x, _ := b.Input("x", spec.Shape{2})
	c, err := b.Const("w", spec.Vector[spec.F64](0.1, -2))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := tg.Mul[spec.F64](b, x, c)
	s, _ := tg.Sum[spec.F64](b, p)
	g, err := b.Finish(s)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := g.Node(c.ID())
	if n.Op() != "const" || n.Name() != "w" || len(n.Attrs().Values) != 2 {
		t.Fatalf("const node %s %q %v", n.Op(), n.Name(), n.Attrs())
	}
	// 0.1 as F64 is a dyadic rational; the rebuilt Rat graph holds it
	// exactly.
	gr, err := tg.Rebuild[R](g, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := gr.EvalResult([]spec.Tensor[R]{rv(1, 1)})
	if err != nil {
		t.Fatal(err)
	}
	want := new(big.Rat).SetFloat64(0.1)
	want.Add(want, big.NewRat(-2, 1))
	if v.Data[0].Big().Cmp(want) != 0 {
		t.Fatalf("rebuilt const gives %v, want %v", v, want)
	}
	// A non-finite F64 has no rational form: a literal.
	b2 := tg.NewBuilder[spec.F64](nil)
	_, _ = b2.Input("x", spec.Shape{})
	inf, err := b2.Const("inf", spec.Scalar0(spec.F64(1).Add(1e308).Mul(1e308)))
	if err != nil {
		t.Fatal(err)
	}
	g2, _ := b2.Finish(inf)
	if _, err := tg.Rebuild[R](g2, nil, nil); err == nil {
		t.Fatal("rebuild of a literal without conversion accepted")
	}
	if _, err := tg.ToDual(g2); err != nil {
		t.Fatalf("ToDual converts literals: %v", err)
	}
	// Bad constants.
	if _, err := b2.Const("bad", spec.Tensor[spec.F64]{Shape: spec.Shape{2}, Data: nil}); err == nil {
		t.Fatal("const with missing data accepted")
	}
	if _, err := g.Append("const", &spec.Attrs{Shape: spec.Shape{2}}, nil, spec.Shape{2}); err == nil {
		t.Fatal("const without values accepted")
	}
}

// Builder misuse is an error, never a panic.
func TestBuilderErrors(t *testing.T) {
	b := tg.NewBuilder[R](nil)
	x, _ := b.Input("x", spec.Shape{2})
	other := tg.NewBuilder[R](nil)
	y, _ := other.Input("y", spec.Shape{2})
	_, err := b.Apply("add", nil, x, y)
	wantErr(t, err, "add argument 1: variable belongs to a different builder")
	_, err = b.Apply("neg", nil, tg.Var{})
	wantErr(t, err, "uninitialised variable")
	if _, err := b.Input("bad", spec.Shape{-2}); err == nil {
		t.Fatal("bad input shape accepted")
	}
	n, _ := tg.Neg[R](b, x)
	_, err = b.Input("late", spec.Shape{1})
	wantErr(t, err, "before the first node")
	if s, err := b.Shape(n); err != nil || !s.Equal(spec.Shape{2}) {
		t.Fatalf("shape %v, %v", s, err)
	}
	if _, err := b.Finish(y); err == nil {
		t.Fatal("finish with a foreign variable accepted")
	}
	g, err := b.Finish(n)
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := g.Result(); !ok || r != n.ID() {
		t.Fatalf("result %d %v", r, ok)
	}
	_, err = b.Apply("neg", nil, x)
	wantErr(t, err, "builder already finished")
	_, err = tg.Trace[R](nil, nil)
	wantErr(t, err, "nil program")
	_, err = tg.Trace(nil, func(o tg.Ops[R, tg.Var], in []tg.Var) (tg.Var, error) {
		return o.Apply("add", nil, in[0], in[1])
	}, spec.Shape{2}, spec.Shape{3})
	wantErr(t, err, "node 2 (add): parent 1 has shape [3], expected [2]")

	var nb *tg.Builder[R]
	if _, err := nb.Apply("neg", nil); err == nil {
		t.Fatal("nil builder accepted")
	}
	var ne tg.Eager[R]
	if _, err := ne.Apply("neg", nil); err == nil {
		t.Fatal("eager without a session accepted")
	}
	if _, _, err := tg.RunEager[R](nil, nil); err == nil {
		t.Fatal("nil eager accepted")
	}
}

// The eager interpreter consults Select before every primitive, and a
// selection error records nothing.
func TestEagerSelect(t *testing.T) {
	e := tg.NewEager[R](nil)
	e.Select = func(op string) error {
		if op == "relu" {
			return errors.New("no capsule for relu")
		}
		return nil
	}
	x, _ := e.Session.Param("x", rv(1, -1))
	if _, err := tg.Neg[R](e, x); err != nil {
		t.Fatal(err)
	}
	_, err := tg.Relu[R](e, x)
	wantErr(t, err, "eager relu: selection: no capsule for relu")
	if e.Session.Tape().Len() != 2 {
		t.Fatalf("a rejected op was recorded: %s", e.Session.Tape().NodeList())
	}
	// Stale references from before a reset are rejected by the session.
	e.Session.Reset()
	_, err = tg.Neg[R](e, x)
	wantErr(t, err, "stale tensor reference")
}

// Checked lowering onto an existing tape validates the context nodes.
func TestLowerTo(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{2})
	m, _ := g.Append("square", nil, []int{0}, spec.Shape{2})
	_ = g.SetResult(m)
	tp := tape.New[R](nil)
	a, _ := tp.Param("a", rv(1, 2, 3))
	_, err := g.LowerTo(tp, []int{a})
	wantErr(t, err, "shape mismatch at id=0: expected [2], got [3] (input)")
	_, err = g.LowerTo(tp, []int{5})
	wantErr(t, err, "invalid node id 5")
	_, err = g.LowerTo(tp, nil)
	wantErr(t, err, "got 0 tape ids")
	_, err = g.LowerTo(nil, nil)
	wantErr(t, err, "nil tape")
	b, _ := tp.Input("b", rv(4, 5))
	ids, err := g.LowerTo(tp, []int{b})
	if err != nil {
		t.Fatal(err)
	}
	if ids[0] != b || ids[1] != 2 {
		t.Fatalf("ids %v", ids)
	}
	v, _ := tp.Value(ids[1])
	if !spec.SameTensor(v, rv(16, 25)) {
		t.Fatalf("lowered value %v", v)
	}
	if _, _, err := g.Lower(nil); err == nil {
		t.Fatal("lower without inputs accepted")
	}
}

// A data-dependent forward failure (division by an exact zero) is an
// error naming the node.
func TestForwardFailure(t *testing.T) {
	g, _ := tg.New[R](nil, spec.Shape{2}, spec.Shape{2})
	d, _ := g.Append("div", nil, []int{0, 1}, spec.Shape{2})
	_ = g.SetResult(d)
	_, err := g.Eval([]spec.Tensor[R]{rv(1, 2), rv(1, 0)})
	// 1/0 at element 1: the one wording of a node-located failure.
	const want = "node 2 (div): element 1: div over rat: division by zero"
	wantErr(t, err, want)
	var ne *spec.NodeError
	if !errors.As(err, &ne) || ne.Node != 2 || ne.Op != "div" || ne.Elem != 1 {
		t.Fatalf("Eval: %#v is not a NodeError at node 2 (div), element 1", err)
	}
	_, _, err = g.Lower([]spec.Tensor[R]{rv(1, 2), rv(1, 0)})
	wantErr(t, err, want)
}

// Zero values are unusable but never panic.
func TestZeroValues(t *testing.T) {
	var g tg.Graph[R]
	if _, ok := g.Result(); ok {
		t.Fatal("zero graph has a result")
	}
	if _, err := g.Compile(); err == nil {
		t.Fatal("zero graph compiled")
	}
	if _, err := g.EvalResult(nil); err == nil {
		t.Fatal("zero graph evaluated")
	}
	if vs, err := g.Eval(nil); err != nil || len(vs) != 0 {
		t.Fatalf("empty graph eval: %v %v", vs, err)
	}
	id, err := g.Append("const", &spec.Attrs{Shape: spec.Shape{}, Values: []*big.Rat{big.NewRat(2, 1)}}, nil, spec.Shape{})
	if err != nil || id != 0 {
		t.Fatalf("append to the zero graph: %d %v", id, err)
	}
	var e tg.Exec[R]
	if _, err := e.Forward(nil); err == nil {
		t.Fatal("zero exec ran")
	}
	if _, err := e.Backward(spec.Scalar0(spec.NewRat(1, 1))); err == nil {
		t.Fatal("zero exec ran backward")
	}
	if err := e.SetRequiresGrad(nil); err == nil {
		t.Fatal("zero exec accepted a mask")
	}
	var n tg.Node[R]
	if _, err := n.Forward(nil); err == nil || n.NoGrad() {
		t.Fatal("zero node ran")
	}
	if _, err := n.VJP(nil, spec.Tensor[R]{}); err == nil {
		t.Fatal("zero node ran its vjp")
	}
	if _, err := n.JVP(nil, nil); err == nil {
		t.Fatal("zero node ran its jvp")
	}
	if _, err := tg.Rebuild[R, R](nil, nil, nil); err == nil {
		t.Fatal("rebuild of nil accepted")
	}
}
