package spec_test

import (
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestNodeErrorText: the one wording, part by part, written out by hand.
func TestNodeErrorText(t *testing.T) {
	cause := errors.New("cause")
	cases := []struct {
		err  *spec.NodeError
		want string
	}{
		{&spec.NodeError{Node: 3, Op: "safe_log", Field: "eps", Elem: 2, Msg: "not positive", Err: cause}, `node 3 (safe_log): field "eps": element 2: not positive: cause`},
		{spec.NewNodeError(3, "safe_log", "", cause), "node 3 (safe_log): cause"},
		{spec.NewNodeError(0, "", "shape mismatch", nil), "node 0: shape mismatch"},
		{spec.NewNodeError(-1, "", "no node", nil), "no node"},
		{spec.ElemError(0, cause), "element 0: cause"},
		{&spec.NodeError{Node: -1, Op: "inv", Elem: 1, Err: cause}, "inv: element 1: cause"},
		{&spec.NodeError{Node: -1, Field: "output_id", Elem: -1, Msg: "9 is not a node id"}, `field "output_id": 9 is not a node id`},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("%#v: got %q, want %q", c.err, got, c.want)
		}
	}
	if e := spec.NewNodeError(1, "mul", "", cause); !errors.Is(e, cause) {
		t.Error("Unwrap does not reach the cause")
	}
}

// TestAtNodeAndRelocate: AtNode places an unlocated error and keeps a
// located one; Relocate replaces any node (the internal id of a lowered
// graph) by the user's, and folds a nested internal node away.
func TestAtNodeAndRelocate(t *testing.T) {
	cause := errors.New("division by zero")
	internal := spec.NewNodeError(5, "inv", "vjp", spec.NewNodeError(5, "inv", "vjp", cause))
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"at: element", spec.AtNode(3, "inv", spec.ElemError(0, cause)), "node 3 (inv): element 0: division by zero"},
		{"at: same op named", spec.AtNode(3, "inv", &spec.NodeError{Node: -1, Op: "inv", Elem: 0, Err: cause}), "node 3 (inv): element 0: division by zero"},
		{"at: primitive of a composite tag", spec.AtNode(4, "layernorm", &spec.NodeError{Node: -1, Op: "layer_norm", Elem: -1, Err: cause}), "node 4 (layernorm): layer_norm: division by zero"},
		{"at: plain error", spec.AtNode(2, "add", cause), "node 2 (add): division by zero"},
		{"at: located stays", spec.AtNode(2, "add", spec.NewNodeError(1, "mul", "", cause)), "node 1 (mul): division by zero"},
		{"relocate: internal id", spec.Relocate(3, "inv", spec.NewNodeError(5, "inv", "", spec.ElemError(0, cause))), "node 3 (inv): element 0: division by zero"},
		{"relocate: nested", spec.Relocate(3, "inv", internal), "node 3 (inv): vjp: division by zero"},
		{"relocate: wrapped", spec.Relocate(3, "inv", fmt.Errorf("tape backward: %w", internal)), "node 3 (inv): vjp: division by zero"},
		{"relocate: other op", spec.Relocate(1, "linear", spec.NewNodeError(4, "matmul", "", cause)), "node 1 (linear): matmul: division by zero"},
		{"relocate: plain", spec.Relocate(1, "linear", cause), "node 1 (linear): division by zero"},
	}
	for _, c := range cases {
		if c.err == nil || c.err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.name, c.err, c.want)
		}
	}
	if spec.AtNode(1, "x", nil) != nil || spec.Relocate(1, "x", nil) != nil {
		t.Error("nil must stay nil")
	}
	if internal.Error() != "node 5 (inv): vjp: node 5 (inv): vjp: division by zero" {
		t.Errorf("Relocate modified its argument: %v", internal)
	}
	if got := spec.NodeOf(fmt.Errorf("x: %w", spec.NewNodeError(7, "", "", nil))); got != 7 {
		t.Errorf("NodeOf = %d, want 7", got)
	}
}

// TestKernelErrorsLocate: an elementwise kernel's failure is an unlocated
// NodeError carrying the element index, which Prim.Apply names after the
// primitive: inv of [1, 0] over Rat fails at element 1.
func TestKernelErrorsLocate(t *testing.T) {
	p, err := spec.Default[spec.Rat]().Lookup("inv")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := spec.NewTensor(spec.Shape{2}, []spec.Rat{spec.NewRat(1, 1), {}})
	_, err = p.Apply(nil, []spec.Tensor[spec.Rat]{x})
	var e *spec.NodeError
	if !errors.As(err, &e) || e.Node != -1 || e.Op != "inv" || e.Elem != 1 {
		t.Fatalf("got %#v, want an unlocated NodeError of inv at element 1", err)
	}
	if got, want := spec.AtNode(2, "inv", err).Error(), "node 2 (inv): element 1: div over rat: division by zero"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFirstDiff: the one tensor comparison, over Rat (exact: 1/2 = 2/4)
// and F32 (bits: +0 and −0 differ, a NaN is the same as itself).
func TestFirstDiff(t *testing.T) {
	r := func(n, d int64) spec.Rat { return spec.NewRat(n, d) }
	rt := func(s spec.Shape, v ...spec.Rat) spec.Tensor[spec.Rat] {
		return spec.Tensor[spec.Rat]{Shape: s, Data: v}
	}
	ratCases := []struct {
		name   string
		x, y   spec.Tensor[spec.Rat]
		i      int
		ok     bool
		sameFn func(a, b spec.Rat) bool
	}{
		{"equal", rt(spec.Shape{2}, r(1, 2), r(3, 1)), rt(spec.Shape{2}, r(2, 4), r(3, 1)), -1, true, nil},
		{"second element", rt(spec.Shape{2}, r(1, 2), r(3, 1)), rt(spec.Shape{2}, r(1, 2), r(-3, 1)), 1, false, nil},
		{"shapes", rt(spec.Shape{2}, r(1, 1), r(1, 1)), rt(spec.Shape{1, 2}, r(1, 1), r(1, 1)), -1, false, nil},
		{"lengths", rt(spec.Shape{2}, r(1, 1), r(1, 1)), rt(spec.Shape{2}, r(1, 1)), -1, false, nil},
		{"custom same", rt(spec.Shape{1}, r(1, 1)), rt(spec.Shape{1}, r(-1, 1)), -1, true, func(a, b spec.Rat) bool { return a.Abs().Same(b.Abs()) }},
	}
	for _, c := range ratCases {
		i, ok := spec.FirstDiff(c.x, c.y, c.sameFn)
		if i != c.i || ok != c.ok {
			t.Errorf("%s: got (%d, %v), want (%d, %v)", c.name, i, ok, c.i, c.ok)
		}
		if c.sameFn == nil && spec.SameTensor(c.x, c.y) != c.ok {
			t.Errorf("%s: SameTensor disagrees with FirstDiff", c.name)
		}
	}
	nan := spec.F32(float32(math.NaN()))
	negZero := spec.F32(float32(math.Copysign(0, -1)))
	f := func(v ...spec.F32) spec.Tensor[spec.F32] {
		return spec.Tensor[spec.F32]{Shape: spec.Shape{len(v)}, Data: v}
	}
	if i, ok := spec.FirstDiff(f(1, 0), f(1, negZero), nil); ok || i != 1 {
		t.Errorf("+0 vs −0: got (%d, %v), want (1, false)", i, ok)
	}
	if _, ok := spec.FirstDiff(f(nan), f(nan), nil); !ok {
		t.Error("a NaN must be the same as itself, bit for bit")
	}
}
