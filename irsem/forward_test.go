package irsem

import (
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// compareAll runs CompareWithDenote over T on every corpus graph that T
// can evaluate.
func compareAll[T spec.Scalar[T]](t *testing.T, exactOnly bool) {
	t.Helper()
	for _, c := range opCases(t) {
		if exactOnly && (c.inexact || c.ratErr != "") {
			continue
		}
		cmp, err := CompareWithDenote(c.g, c.p, ConvertTensor[T](c.x))
		if err != nil {
			t.Errorf("%s over %s: %v", c.name, spec.KindOf[T](), err)
			continue
		}
		if !cmp.OK() {
			t.Errorf("%s: %v", c.name, cmp.Err())
		}
		if cmp.Compared+cmp.Excluded != len(c.g.Nodes) {
			t.Errorf("%s: %d compared + %d excluded for %d nodes", c.name, cmp.Compared, cmp.Excluded, len(c.g.Nodes))
		}
	}
}

// TestCompareWithDenote: the lowered forward graph's value table equals
// DenoteAll's node by node — exactly over Rat, bit for bit over the float
// scalars, endpoint for endpoint over intervals.
func TestCompareWithDenote(t *testing.T) {
	t.Run("rat", func(t *testing.T) { compareAll[spec.Rat](t, true) })
	t.Run("f32", func(t *testing.T) { compareAll[spec.F32](t, false) })
	t.Run("f64", func(t *testing.T) { compareAll[spec.F64](t, false) })
	t.Run("binary32", func(t *testing.T) { compareAll[spec.Binary32](t, false) })
	t.Run("interval", func(t *testing.T) { compareAll[spec.Interval](t, false) })
}

// TestRawLogExcluded: raw log nodes are left out of the comparison, and
// the forward graph's total log does not reject x ≤ 0 where DenoteAll
// does.
func TestRawLogExcluded(t *testing.T) {
	g := graphOf(input(2), nd(OpLog, []int{0}, spec.Shape{2}), nd(OpSum, []int{1}, spec.Shape{}))
	x := spec.Vector[spec.F64](2, 3)
	cmp, err := CompareWithDenote(g, nil, x)
	if err != nil || !cmp.OK() || cmp.Excluded != 1 || !cmp.Nodes[1].Excluded || cmp.Compared != 2 {
		t.Fatalf("%+v, %v", cmp, err)
	}
	f, err := LowerForward[spec.F64](g, nil)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := f.Run(spec.Vector[spec.F64](0, 1))
	if err != nil || !math.IsInf(float64(vals[1].Data[0]), -1) {
		t.Errorf("forward graph at 0: %v, %v", vals, err)
	}
	if _, err := DenoteAll(g, nil, spec.Vector[spec.F64](0, 1)); err == nil {
		t.Error("DenoteAll accepted log 0")
	}
}

// TestComparisonReportsMismatch plants a wrong value table.
func TestComparisonReportsMismatch(t *testing.T) {
	g := exampleGraph(t, "quad.ir.json")
	x := exampleTensor(t, "quad.input.json")
	a, err := DenoteAll(g, nil, x)
	if err != nil {
		t.Fatal(err)
	}
	b := append([]RatTensor(nil), a...)
	b[3] = b[3].Clone()
	b[3].Data[1] = spec.NewRat(1, 3)
	cmp, err := CompareTables(g, a, b)
	if err != nil {
		t.Fatal(err)
	}
	if cmp.OK() || cmp.Mismatches != 1 || !strings.Contains(cmp.Err().Error(), "node 3 (add): forward graph and DenoteAll differ over rat: element 1: 9/2 vs 1/3") {
		t.Errorf("%+v: %v", cmp, cmp.Err())
	}
}

func TestLowerForward(t *testing.T) {
	g := exampleGraph(t, "mlp.ir.json")
	p := examplePayload(t, "mlp.payload.json")
	f, err := LowerForward[spec.Rat](g, p)
	if err != nil {
		t.Fatal(err)
	}
	if !f.InShape.Equal(spec.Shape{2}) || len(f.Shapes) != 4 || f.OutputID != 3 || f.Ops[1] != OpLinear {
		t.Errorf("forward graph fields: %+v", f)
	}
	vals, err := f.Run(exampleTensor(t, "mlp.input.json"))
	if err != nil || vals[3].String() != "[9443/28800]" {
		t.Errorf("Run: %v, %v", vals, err)
	}
	if _, err := f.Run(ints(spec.Shape{3}, 1, 2, 3)); err == nil || !strings.Contains(err.Error(), "node 0 (input): shape mismatch: expected [2], got [3]") {
		t.Errorf("wrong input: %v", err)
	}
	// The same forward graph runs again (it keeps no state between runs).
	again, err := f.Run(exampleTensor(t, "mlp.input.json"))
	if err != nil || !spec.SameTensor(again[3], vals[3]) {
		t.Errorf("second run: %v, %v", again, err)
	}
	// The input must be node 0.
	moved := &Graph{InputID: 1, OutputID: 2, Nodes: []Node{
		nd(OpConst, []int{}, spec.Shape{2}, withValueShape(2)),
		nd(OpInput, []int{}, spec.Shape{2}),
		nd(OpAdd, []int{0, 1}, spec.Shape{2}),
	}}
	for i := range moved.Nodes {
		moved.Nodes[i].ID = i
	}
	mp := payloadOf(map[int]*Params{0: {Value: rtp(t, spec.Shape{2}, "1", "2")}})
	if v, err := Denote(moved, mp, ints(spec.Shape{2}, 1, 1)); err != nil || v.String() != "[2, 3]" {
		t.Errorf("DenoteAll with the input at node 1: %v, %v", v, err)
	}
	if _, err := LowerForward[spec.F32](moved, mp); err == nil || !strings.Contains(err.Error(), "node 0 (const): lowering needs the input at node 0") {
		t.Errorf("lowering with the input at node 1: %v", err)
	}
	// Over Rat, lowering rejects inexact tags by name.
	if _, err := LowerForward[spec.Rat](graphOf(input(2), nd(OpTanh, []int{0}, spec.Shape{2})), nil); err == nil ||
		!strings.Contains(err.Error(), "node 1 (tanh): tanh has no exact rational semantics") {
		t.Errorf("tanh over rat: %v", err)
	}
}

// TestRunConcurrent runs one forward graph from several goroutines (go test
// -race checks that Run shares nothing mutable).
func TestRunConcurrent(t *testing.T) {
	c := opCases(t)
	var cases []opCase
	for _, x := range c {
		if strings.HasPrefix(x.name, "conv") || strings.HasPrefix(x.name, "max_pool") || x.name == "examples/mlp" || x.name == "layernorm" {
			cases = append(cases, x)
		}
	}
	for _, x := range cases {
		f, err := LowerForward[spec.F64](x.g, x.p)
		if err != nil {
			t.Fatal(err)
		}
		in := ConvertTensor[spec.F64](x.x)
		want, err := f.Run(in)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 4)
		for k := 0; k < 4; k++ {
			go func() {
				got, err := f.Run(in)
				if err == nil {
					cmp, _ := CompareTables(x.g, got, want)
					err = cmp.Err()
				}
				done <- err
			}()
		}
		for k := 0; k < 4; k++ {
			if err := <-done; err != nil {
				t.Errorf("%s: %v", x.name, err)
			}
		}
	}
}
