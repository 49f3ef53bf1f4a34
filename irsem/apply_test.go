package irsem

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// runByApplications evaluates g node by node through Applications and the
// registry's Prim.Apply; IROnly nodes take DenoteAll's value (want), so
// that the nodes after them are still checked.
func runByApplications[T spec.Scalar[T]](t *testing.T, g *Graph, p *Payload, x spec.Tensor[T], want []spec.Tensor[T]) []spec.Tensor[T] {
	t.Helper()
	apps, err := Applications(g, p)
	if err != nil {
		t.Fatal(err)
	}
	reg := spec.Default[T]()
	vals := make([]spec.Tensor[T], len(g.Nodes))
	for i := range g.Nodes {
		a := &apps[i]
		switch {
		case a.Op == OpInput:
			vals[i] = x
			continue
		case a.IROnly:
			vals[i] = want[i]
			continue
		}
		parents := make([]spec.Tensor[T], len(g.Nodes[i].Parents))
		for j, q := range g.Nodes[i].Parents {
			parents[j] = vals[q]
		}
		v, err := RunApplication(a, parents, func(_ int, s *Step, xs []spec.Tensor[T]) (spec.Tensor[T], error) {
			prim, err := reg.Lookup(s.Prim)
			if err != nil {
				return spec.Tensor[T]{}, err
			}
			return prim.Apply(s.Attrs, xs)
		})
		if err != nil {
			t.Fatalf("node %d: %v", i, err)
		}
		vals[i] = v
	}
	return vals
}

func checkApplications[T spec.Scalar[T]](t *testing.T, c opCase) {
	t.Helper()
	x := ConvertTensor[T](c.x)
	want, err := DenoteAll(c.g, c.p, x)
	if err != nil {
		t.Fatalf("%s: DenoteAll: %v", spec.KindOf[T](), err)
	}
	got := runByApplications(t, c.g, c.p, x, want)
	cmp, err := CompareTables(c.g, got, want)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmp.Err(); err != nil {
		t.Errorf("%s: %v", spec.KindOf[T](), err)
	}
}

// TestApplicationsMatchDenote runs every corpus graph through its
// Applications with the registry's rules and compares the value table
// with DenoteAll's: exactly over Rat (where the graph is exact), bit for
// bit over F32, F64 and Binary32, endpoint for endpoint over Interval.
func TestApplicationsMatchDenote(t *testing.T) {
	for _, c := range opCases(t) {
		t.Run(c.name, func(t *testing.T) {
			if !c.inexact && c.ratErr == "" {
				checkApplications[spec.Rat](t, c)
			}
			checkApplications[spec.F32](t, c)
			checkApplications[spec.F64](t, c)
			checkApplications[spec.Binary32](t, c)
			checkApplications[spec.Interval](t, c)
		})
	}
}

// TestPlanApplications checks that the payload-free applications have the
// same primitives and argument shapes as the full ones, and no values.
func TestPlanApplications(t *testing.T) {
	for _, c := range opCases(t) {
		full, err := Applications(c.g, c.p)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plan, err := PlanApplications(c.g)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range full {
			f, p := &full[i], &plan[i]
			if strings.Join(f.Prims(), ",") != strings.Join(p.Prims(), ",") || f.Source != p.Source || f.IROnly != p.IROnly {
				t.Errorf("%s node %d: plan %v, full %v", c.name, i, p.Prims(), f.Prims())
				continue
			}
			if p.Value != nil {
				t.Errorf("%s node %d: plan application carries a value", c.name, i)
			}
			for k := range f.Steps {
				fa, pa := f.Steps[k].Args, p.Steps[k].Args
				if (f.Op == OpConv || f.Op == OpConvTranspose) && len(fa) == len(pa)+1 && fa[len(fa)-1].Param == ParamB {
					fa = fa[:len(pa)] // the optional bias: only the payload says whether there is one
				}
				if len(fa) != len(pa) {
					t.Errorf("%s node %d step %d: %d arguments, plan %d", c.name, i, k, len(fa), len(pa))
					continue
				}
				for j, a := range fa {
					b := pa[j]
					if !a.Shape.Equal(b.Shape) {
						t.Errorf("%s node %d step %d arg %d: shape %v vs %v", c.name, i, k, j, a.Shape, b.Shape)
					}
					if b.Source == ArgParam && b.Value != nil {
						t.Errorf("%s node %d: plan argument carries a value", c.name, i)
					}
				}
			}
		}
	}
}

// TestApplicationShapes pins the mapping of the composite tags.
func TestApplicationShapes(t *testing.T) {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	cases := []struct {
		name  string
		g     *Graph
		node  int
		prims string
	}{
		{"layernorm-suffix", graphOf(input(2, 3, 4), nd(OpLayerNorm, []int{0}, s(2, 3, 4), withAxis(1))), 1, "reshape,layer_norm,reshape"},
		{"layernorm-2d", graphOf(input(2, 3), nd(OpLayerNorm, []int{0}, s(2, 3), withAxis(1))), 1, "layer_norm"},
		{"safe_log-const", graphOf(input(3), nd(OpConst, nil, s(), withValueShape()), nd(OpSafeLog, []int{0, 1}, s(3))), 2, "safe_log"},
		{"safe_log-computed", graphOf(input(3), nd(OpSum, []int{0}, s()), nd(OpSafeLog, []int{0, 1}, s(3))), 2, "softplus,broadcast_to,add,log"},
		{"safe_log-scalar", graphOf(input(), nd(OpAbs, []int{0}, s()), nd(OpSafeLog, []int{0, 1}, s())), 2, "softplus,add,log"},
		{"linear", graphOf(input(2), nd(OpLinear, []int{0}, s(3))), 1, "linear"},
		{"const", graphOf(input(2), nd(OpConst, nil, s(2), withValueShape(2))), 1, ""},
		{"max_pool", graphOf(input(1, 4, 4), nd(OpMaxPool, []int{0}, s(1, 2, 2), withWindow(spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}}))), 1, "max_pool"},
		{"iro", graphOf(input(1, 4), nd(OpHardMaskedSoftmax, []int{0}, s(1, 4), withMask(HardMask{Shape: s(1, 4), Allowed: []bool{true, false, true, true}}))), 1, "hard_masked_softmax"},
	}
	for _, c := range cases {
		apps, err := PlanApplications(c.g)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got := strings.Join(apps[c.node].Prims(), ","); got != c.prims {
			t.Errorf("%s: prims %q, want %q", c.name, got, c.prims)
		}
	}
	// A computed ε: the composition equals DenoteAll over F64.
	g := graphOf(input(3), nd(OpSum, []int{0}, s()), nd(OpAbs, []int{1}, s()), nd(OpSafeLog, []int{0, 2}, s(3)))
	checkApplications[spec.F64](t, opCase{name: "safe_log-computed", g: g, x: rt(t, s(3), "-2", "1/2", "3")})
}

func TestApplicationErrors(t *testing.T) {
	if _, err := Applications(nil, nil); err == nil {
		t.Error("nil graph accepted")
	}
	g := graphOf(input(2), nd(OpLinear, []int{0}, spec.Shape{3}))
	if _, err := Applications(g, nil); err == nil || !strings.Contains(err.Error(), "node 1 (linear)") {
		t.Errorf("missing payload: %v", err)
	}
	apps, err := PlanApplications(g)
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Vector(spec.F64(1), 2)
	if _, err := RunApplication(&apps[1], []spec.Tensor[spec.F64]{x}, nil); err == nil || !strings.Contains(err.Error(), "no value for parameter") {
		t.Errorf("plan application ran: %v", err)
	}
	if _, err := RunApplication[spec.F64](&apps[0], nil, nil); err == nil || !strings.Contains(err.Error(), "node 0 (input)") {
		t.Errorf("input ran: %v", err)
	}
	if _, err := RunApplication(&Application{Node: 4, Op: OpConv, IROnly: true}, []spec.Tensor[spec.F64]{x}, nil); err == nil || !strings.Contains(err.Error(), "no registry primitive") {
		t.Errorf("IROnly ran: %v", err)
	}
}
