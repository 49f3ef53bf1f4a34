package fpbound

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// sharpDiff names the first element where a and b differ in any bit of
// any field (bounds, estimate, exact enclosure, reasons); "" when none.
func sharpDiff(a, b []Sharp) string {
	if len(a) != len(b) {
		return fmt.Sprintf("%d vs %d elements", len(a), len(b))
	}
	bits := math.Float64bits
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case bits(x.Bound) != bits(y.Bound), bits(x.Classic) != bits(y.Classic), bits(x.FirstOrder) != bits(y.FirstOrder), bits(x.Estimate) != bits(y.Estimate):
			return fmt.Sprintf("element %d: bounds %v/%v/%v/%v vs %v/%v/%v/%v", i, x.Bound, x.Classic, x.FirstOrder, x.Estimate, y.Bound, y.Classic, y.FirstOrder, y.Estimate)
		case bits(x.Exact.Lo) != bits(y.Exact.Lo), bits(x.Exact.Hi) != bits(y.Exact.Hi):
			return fmt.Sprintf("element %d: exact %v vs %v", i, x.Exact, y.Exact)
		case x.Reason != y.Reason, x.FirstOrderReason != y.FirstOrderReason:
			return fmt.Sprintf("element %d: reasons %q/%q vs %q/%q", i, x.Reason, x.FirstOrderReason, y.Reason, y.FirstOrderReason)
		}
	}
	return ""
}

// oldSharp is SharpBounds (or SharpBounds64) by the old path: the
// classic enclosures from Bounds' own evaluation and round 0 of the boxes
// from a second one (classicTwice).
func oldSharp(t *testing.T, sixtyFour bool, n *nets.Net) []Sharp {
	t.Helper()
	classicTwice = true
	defer func() { classicTwice = false }()
	f := SharpBounds
	if sixtyFour {
		f = SharpBounds64
	}
	sh, err := f(n.Graph, n.Payload, n.Input, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// onceNets are the figures' nets the test runs (ReLU MLPs with both
// inits, a tanh MLP, a conv stack, a GPT-2 block with either mask).
func onceNets(t *testing.T) []*nets.Net {
	var out []*nets.Net
	for _, c := range []struct {
		act   irsem.Op
		init  nets.Init
		depth int
	}{{irsem.OpRelu, nets.Default, 0}, {irsem.OpRelu, nets.Default, 4}, {irsem.OpRelu, nets.Kaiming, 8}, {irsem.OpTanh, nets.Default, 2}} {
		n, err := nets.MLP(uint64(100+c.depth), 64, c.depth, c.act, c.init)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	n, err := nets.ConvStack(202, 16, 4, 2, nets.Default)
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, n)
	for _, mask := range []nets.Mask{nets.HardMask, nets.FinfoMin} {
		n, err := nets.GPT2(301, 4, 8, 2, 1, nets.Default, mask)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// TestClassicOnce: SharpBounds evaluates the classic bound once and
// serves both the classic enclosures and round 0 of the first-order
// boxes from it. On the figures' nets (binary32 and, for two, binary64)
// and the small ONNX backend test models, every field of every element
// is bit-identical to the old path (two evaluations, classicTwice), and
// the classic bound and its reason are Bounds' own. Planted faults:
// sharing an evaluation at a nudged input, or one with the library at 64
// ulps, must each be caught on some net.
func TestClassicOnce(t *testing.T) {
	skipUnderRace(t)
	ns := onceNets(t)
	nudged, wrongULPs := 0, 0
	for i, n := range ns {
		for _, sixtyFour := range []bool{false, true} {
			if sixtyFour && i%3 != 0 {
				continue
			}
			want := oldSharp(t, sixtyFour, n)
			var got []Sharp
			var err error
			if sixtyFour {
				got, err = SharpBounds64(n.Graph, n.Payload, n.Input, Options{})
			} else {
				got, err = SharpBounds(n.Graph, n.Payload, n.Input, Options{})
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := sharpDiff(got, want); d != "" {
				t.Errorf("%s (64: %v): shared evaluation differs from the old path: %s", n.Name, sixtyFour, d)
			}
		}
		en, err := Bounds(n.Graph, n.Payload, n.Input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		got, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for m := range en {
			if math.Float64bits(en[m].Bound) != math.Float64bits(got[m].Classic) || en[m].Reason != got[m].Reason && !math.IsInf(got[m].Classic, 1) {
				t.Errorf("%s element %d: classic %v %q, Bounds %v %q", n.Name, m, got[m].Classic, got[m].Reason, en[m].Bound, en[m].Reason)
				break
			}
		}
		// The planted faults: a wrong evaluation shared.
		k := DefaultULPs
		x := n.Input
		x.Data = append(x.Data[:0:0], x.Data...)
		x.Data[0] = x.Data[0].Add(spec.NewRat(1, 1<<10))
		bad, err := sharpFrom[binary32](n.Graph, n.Payload, n.Input, Options{}, k, evalClassic[binary32](n.Graph, n.Payload, x, Options{}, k))
		if err == nil && sharpDiff(bad, got) != "" {
			nudged++
		}
		bad, err = sharpFrom[binary32](n.Graph, n.Payload, n.Input, Options{}, k, evalClassic[binary32](n.Graph, n.Payload, n.Input, Options{}, 64))
		if err == nil && sharpDiff(bad, got) != "" {
			wrongULPs++
		}
	}
	t.Logf("planted faults caught on %d (nudged input) and %d (64 ulps) of %d nets", nudged, wrongULPs, len(ns))
	if nudged == 0 || wrongULPs == 0 {
		t.Errorf("planted faults caught on %d (nudged input) and %d (64 ulps) of %d nets", nudged, wrongULPs, len(ns))
	}
}

// TestClassicOnceBackend is TestClassicOnce's bit-identity on the ONNX
// backend test models under ../shared/onnx of declared work ≤ 2¹⁶ (the
// importable ones; at least 50 must run).
func TestClassicOnceBackend(t *testing.T) {
	skipUnderRace(t)
	dirs := backendModelDirs(t)
	l := limits.Current()
	l.GraphElements, l.Work = 1<<24, 1<<28
	defer limits.Set(l)()
	ran := 0
	for _, dir := range dirs {
		ins, _ := filepath.Glob(filepath.Join(dir, "test_data_set_0", "input_*.pb"))
		sort.Strings(ins)
		im, x, err := model.ImportPB(filepath.Join(dir, "model.onnx"), ins)
		if err != nil || declaredWork(im.Graph) > 1<<16 {
			continue
		}
		n := &nets.Net{Name: filepath.Base(dir), Graph: im.Graph, Payload: im.Payload, Input: x}
		got, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		classicTwice = true
		want, err2 := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
		classicTwice = false
		if (err == nil) != (err2 == nil) || err != nil && err.Error() != err2.Error() {
			t.Errorf("%s: errors %v vs %v", n.Name, err, err2)
			continue
		}
		if err != nil {
			continue
		}
		ran++
		if d := sharpDiff(got, want); d != "" {
			t.Errorf("%s: shared evaluation differs from the old path: %s", n.Name, d)
		}
	}
	t.Logf("%d backend models bit-identical", ran)
	if ran < 50 {
		t.Fatalf("only %d backend models ran", ran)
	}
}
