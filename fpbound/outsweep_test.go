package fpbound

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestOutputSweepSkipLossless checks outputBoxUnread's claim
// (outsweep38): on an MLP whose output is followed by one node of each
// Linear primitive, the gradient bounds (boxed, combined, the combined
// parameter bounds, their reasons) with the output's sweeps skipped equal
// those with them run (sweepOutputBox), while the skipped box is wider
// somewhere (the skip is not vacuous); an output whose last step is not
// Linear (the MLP's own linear) is still swept.
func TestOutputSweepSkipLossless(t *testing.T) {
	cases := []struct {
		name  string
		kind  irsem.Kind
		other bool // the second parent is a hidden node
		shape spec.Shape
	}{
		{"add", irsem.Kind{Op: irsem.OpAdd}, true, spec.Shape{6}},
		{"sub", irsem.Kind{Op: irsem.OpSub}, true, spec.Shape{6}},
		{"scale", irsem.Kind{Op: irsem.OpScale, C: spec.NewRat(-3, 8)}, false, spec.Shape{6}},
		{"neg", irsem.Kind{Op: irsem.OpNeg}, false, spec.Shape{6}},
		{"concat", irsem.Kind{Op: irsem.OpConcat, Axis: 0}, true, spec.Shape{12}},
		{"linear (not skipped)", irsem.Kind{}, false, spec.Shape{6}},
	}
	wider := 0
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := nets.MLP(5, 6, 3, irsem.OpTanh, nets.Default)
			if err != nil {
				t.Fatal(err)
			}
			g := n.Graph
			if c.kind.Op != "" {
				o := g.OutputID
				ps := []int{o}
				if c.other {
					ps = append(ps, o-1) // the last hidden tanh, [6]
					if !g.Nodes[o-1].Shape.Equal(spec.Shape{6}) {
						t.Fatalf("node %d has shape %v", o-1, g.Nodes[o-1].Shape)
					}
				}
				id := len(g.Nodes)
				g.Nodes = append(g.Nodes, irsem.Node{ID: id, Parents: ps, Kind: c.kind, Shape: c.shape.Clone()})
				g.OutputID = id
			}
			apps, err := irsem.Applications(g, n.Payload)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := outputBoxUnread(g, apps), c.kind.Op != ""; got != want {
				t.Fatalf("outputBoxUnread = %v, want %v", got, want)
			}
			seed := irsem.RatTensor{Shape: c.shape.Clone()}
			for i := range c.shape.Size() {
				seed.Data = append(seed.Data, spec.NewRat(int64(2*i-5), 4))
			}
			run := func(sweep bool) (*GradBounds, []fwdBox) {
				sweepOutputBox = sweep
				defer func() { sweepOutputBox = false }()
				gb, err := GradErrSharpParams(g, n.Payload, n.Input, seed, Options{})
				if err != nil {
					t.Fatal(err)
				}
				boxes, reason, err := forwardBoxes[binary32](g, n.Payload, n.Input, Options{SweepWork: DefaultGradSweepWork}, DefaultULPs)
				if err != nil || reason != "" {
					t.Fatal(err, reason)
				}
				return gb, boxes
			}
			skip, bs := run(false)
			full, bf := run(true)
			if skip.Reason != "" || skip.CombinedReason != "" {
				t.Fatalf("no boxed/combined bound: %q %q", skip.Reason, skip.CombinedReason)
			}
			// The boxed pass's forward output value (Boxed.Output) is
			// tightened to the output's box and read by no verdict: the
			// gradients (every Err field but the runtime value's id, fresh
			// per run) and the reasons must be equal.
			if d := gradsDiffer(skip, full); d != "" {
				t.Errorf("the output's sweeps skipped: %s", d)
			}
			o := g.OutputID
			for m := range bs[o].box {
				s, f := bs[o].box[m], bf[o].box[m]
				if s.Lo > f.Lo || s.Hi < f.Hi {
					t.Errorf("element %d: the unswept box %v is not a superset of the swept %v", m, s, f)
				}
				if s != f {
					wider++
				}
			}
			for j := range o {
				if !reflect.DeepEqual(bs[j], bf[j]) {
					t.Errorf("node %d's box changed", j)
				}
			}
		})
	}
	if wider == 0 {
		t.Error("no output box got wider without its sweeps: the test is vacuous")
	}
}

// gradsDiffer names the first difference between two GradBounds'
// gradients, undecided counts, combined enclosures and reasons ("" none);
// Err values are compared field by field, less their id.
func gradsDiffer(a, b *GradBounds) string {
	flat := func(gr *irgrad.Gradients[Err]) [][]Err {
		out := [][]Err{gr.Input.Data}
		for _, p := range gr.Params {
			out = append(out, p.Data)
		}
		return out
	}
	for _, pair := range [][2]*irgrad.Gradients[Err]{{a.Classic, b.Classic}, {a.Boxed, b.Boxed}} {
		fa, fb := flat(pair[0]), flat(pair[1])
		if len(fa) != len(fb) {
			return "gradient counts"
		}
		for i := range fa {
			if len(fa[i]) != len(fb[i]) {
				return fmt.Sprintf("gradient %d's length", i)
			}
			for k := range fa[i] {
				u, v := fa[i][k], fb[i][k]
				u.id, v.id = 0, 0
				if u != v {
					return fmt.Sprintf("gradient %d element %d: %v vs %v", i, k, fa[i][k], fb[i][k])
				}
			}
		}
	}
	if a.ClassicUndecided != b.ClassicUndecided || a.BoxedUndecided != b.BoxedUndecided || a.Reason != b.Reason || a.CombinedReason != b.CombinedReason {
		return "undecided counts or reasons"
	}
	if !reflect.DeepEqual(a.Combined, b.Combined) || !reflect.DeepEqual(a.CombinedParams, b.CombinedParams) || !reflect.DeepEqual(a.CombinedParamReasons, b.CombinedParamReasons) {
		return "combined enclosures"
	}
	return ""
}
