package irgrad

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// safeLogGraph is x → safe_log(x, ε) → sum, with ε a const node
// (computed = false) or a detach of a const node (computed = true, so
// that the composed form softplus → broadcast ε → add → log is used).
func safeLogGraph(t *testing.T, eps string, computed bool) (*irsem.Graph, *irsem.Payload, int) {
	b := newBuilder(sh(3))
	e := b.konst(t, sh(), eps)
	if computed {
		e = b.add(irsem.OpDetach, []int{e}, sh())
	}
	sl := b.add(irsem.OpSafeLog, []int{0, e}, sh(3))
	b.add(irsem.OpSum, []int{sl}, sh())
	g, p := b.graph()
	return g, p, sl
}

// forwardPaths evaluates every node along the four forward paths.
func forwardPaths[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T]) (map[string][]spec.Tensor[T], map[string]error) {
	vals, errs := map[string][]spec.Tensor[T]{}, map[string]error{}
	record := func(name string, v []spec.Tensor[T], err error) {
		if err != nil {
			errs[name] = err
			return
		}
		vals[name] = v
	}
	v, err := irsem.DenoteAll(g, p, x)
	record("ir", v, err)
	if f, err := irsem.LowerForward[T](g, p); err != nil {
		record("forward-graph", nil, err)
	} else {
		v, err := f.Run(x)
		record("forward-graph", v, err)
	}
	l, err := Lower[T](nil, g, p)
	if err != nil {
		record("tape", nil, err)
		record("typed-graph", nil, err)
		return vals, errs
	}
	v, err = l.TapeValues(x)
	record("tape", v, err)
	v, err = l.Values(x)
	record("typed-graph", v, err)
	return vals, errs
}

// TestSafeLogPathsAgree: for a non-positive ε reaching softplus(x)+ε ≤ 0,
// the IR semantics, the forward graph, the tape and the typed graph all
// fail with an error naming the safe_log node and the element (and every
// gradient path fails too); where the argument is positive all four agree
// bit for bit, over every float scalar and Interval, for a const and for a
// computed ε.
func TestSafeLogPathsAgree(t *testing.T) {
	cases := []struct {
		name     string
		eps      string
		computed bool
		x        []string
		failAt   int // the element that must be named, −1 when none
	}{
		{"const ε=-1 rejects", "-1", false, []string{"-50", "0", "50"}, 0},
		{"const ε=-1 rejects late element", "-1", false, []string{"50", "3", "-1/2"}, 2},
		{"const ε=-1 accepts", "-1", false, []string{"1", "2", "50"}, -1},
		{"computed ε=-1 rejects", "-1", true, []string{"-50", "0", "50"}, 0},
		{"computed ε=-1 accepts", "-1", true, []string{"1", "2", "50"}, -1},
		{"const ε=0 deep tail", "0", false, []string{"-800", "-37", "3"}, -1},
		{"const ε=1e-30", "1/1000000000000000000000000000000", false, []string{"-745", "-37", "20"}, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, p, sl := safeLogGraph(t, c.eps, c.computed)
			x := rt(t, sh(3), c.x...)
			checkSafeLogPaths[spec.F64](t, g, p, x, sl, c.failAt)
			checkSafeLogPaths[spec.F32](t, g, p, x, sl, c.failAt)
			checkSafeLogPaths[spec.Binary32](t, g, p, x, sl, c.failAt)
			checkSafeLogPaths[spec.Interval](t, g, p, x, sl, c.failAt)
		})
	}
	// The numbers through the IR: safe_log(−800) with ε = 0 is
	// −800 (the float nearest the true −800 − e^-800/2), not −∞ or NaN.
	g, p, sl := safeLogGraph(t, "0", false)
	vals, errs := forwardPaths(g, p, irsem.ConvertTensor[spec.F64](rt(t, sh(3), "-800", "-37", "3")))
	if len(errs) != 0 || vals["ir"][sl].Data[0] != -800 {
		t.Errorf("safe_log(−800) with ε = 0 = %v (%v), want −800", vals["ir"][sl], errs)
	}
}

func checkSafeLogPaths[T spec.Scalar[T]](t *testing.T, g *irsem.Graph, p *irsem.Payload, xr irsem.RatTensor, sl, failAt int) {
	t.Helper()
	kind := spec.KindOf[T]()
	x := irsem.ConvertTensor[T](xr)
	vals, errs := forwardPaths(g, p, x)
	paths := []string{"ir", "forward-graph", "tape", "typed-graph"}
	if failAt >= 0 {
		for _, name := range paths {
			err := errs[name]
			if err == nil {
				t.Errorf("%s over %s: no error, values %v", name, kind, vals[name][sl])
				continue
			}
			msg := err.Error()
			if !strings.Contains(msg, fmt.Sprintf("element %d", failAt)) || !strings.Contains(msg, "safe_log") {
				t.Errorf("%s over %s: %q does not name safe_log and element %d", name, kind, msg, failAt)
			}
		}
		for _, path := range Paths() {
			if _, _, err := Grad(g, p, x, path); err == nil {
				t.Errorf("gradient path %s over %s: no error", path, kind)
			}
		}
		return
	}
	for _, name := range paths {
		if err := errs[name]; err != nil {
			t.Fatalf("%s over %s: %v", name, kind, err)
		}
	}
	ref := vals["ir"]
	for _, name := range paths[1:] {
		for id := range ref {
			if ok, detail := sameValues(ref[id], vals[name][id]); !ok {
				t.Errorf("node %d over %s: ir and %s differ: %s", id, kind, name, detail)
			}
		}
	}
	var first *Gradients[T]
	for _, path := range Paths() {
		gr, _, err := Grad(g, p, x, path)
		if err != nil {
			t.Fatalf("gradient path %s over %s: %v", path, kind, err)
		}
		if first == nil {
			first = gr
			for i, v := range gr.Input.Data {
				if f := v.Float64(); math.IsNaN(f) || math.IsInf(f, 0) {
					t.Errorf("gradient over %s: element %d is %v", kind, i, v)
				}
			}
			continue
		}
		if ok, detail := sameValues(first.Input, gr.Input); !ok {
			t.Errorf("gradient over %s: %s and %s differ: %s", kind, first.Path, path, detail)
		}
	}
}

func sameValues[T spec.Scalar[T]](a, b spec.Tensor[T]) (bool, string) {
	if !a.Shape.Equal(b.Shape) || len(a.Data) != len(b.Data) {
		return false, fmt.Sprintf("shapes %v and %v", a.Shape, b.Shape)
	}
	for i := range a.Data {
		if !a.Data[i].Same(b.Data[i]) {
			return false, fmt.Sprintf("element %d: %s vs %s", i, a.Data[i], b.Data[i])
		}
	}
	return true, ""
}
