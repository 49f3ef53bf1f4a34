package fpbound

import (
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// planeNets are the graphs of dense layers the plane tests run on: the
// linear layers of linearGraph and mlp, and convGraph's conv,
// conv_transpose and matmuls by constants (both sides).
func planeNets() []planeNet {
	type net = planeNet
	nets := convLinearNets(2)
	g, p, x := mlp(7, 16, 64, 4, 10, irsem.OpRelu)
	nets = append(nets, net{"mlp", g, p, x})
	// A weight 2⁻⁴⁰⁰ (a normal float64, not tame: the plane declines and
	// the converted weights take adjPlanes' pairs path) beside one 2⁻²⁹⁹
	// (tame); a weight 1/3 (no float64: no plane) and one 2⁻¹⁰⁷⁴ (a
	// subnormal: no plane).
	set := func(p *irsem.Payload, layer, i int, v spec.Rat) {
		p.Entries[[]int{1, 3}[layer]].W.Data[i] = v // linearGraph's two linear nodes
	}
	f := func(v float64) spec.Rat { r, _ := spec.RatFromFloat64(v); return r }
	g, p, x = linearGraph(3)
	set(p, 0, 0, f(0x1p-400))
	set(p, 1, 3, f(0x1p-299))
	nets = append(nets, net{"linear/untame", g, p, x})
	g, p, x = linearGraph(4)
	set(p, 0, 1, spec.NewRat(1, 3))
	set(p, 1, 2, f(0x1p-1074))
	nets = append(nets, net{"linear/inexact", g, p, x})
	return nets
}

// boxNodes is the first-order pass's node states on boxes around the
// exact values (their interval enclosure widened by a relative 2⁻²⁰ and
// 2⁻⁴⁰ absolute), every node marked as reached by an error.
func boxNodes(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []foNode {
	t.Helper()
	apps, err := irsem.Applications(g, p)
	if err != nil {
		t.Fatal(err)
	}
	all, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		t.Fatal(err)
	}
	nodes := newFoNodes(g, apps)
	for i := range nodes {
		nodes[i].box = make([]spec.Interval, len(all[i].Data))
		for m, v := range all[i].Data {
			w := math.Ldexp(max(math.Abs(v.Lo), math.Abs(v.Hi)), -20) + 0x1p-40
			nodes[i].box[m] = spec.Interval{Lo: v.Lo - w, Hi: v.Hi + w}
		}
		nodes[i].err = true
	}
	return nodes
}

func sameAdj(t *testing.T, what string, want, got []spec.Tensor[adj]) {
	t.Helper()
	if len(want) != len(got) {
		t.Fatalf("%s: %d tensors, want %d", what, len(got), len(want))
	}
	for s := range want {
		if !want[s].Shape.Equal(got[s].Shape) || len(want[s].Data) != len(got[s].Data) {
			t.Fatalf("%s %d: shape %v (%d values), want %v (%d)", what, s, got[s].Shape, len(got[s].Data), want[s].Shape, len(want[s].Data))
		}
		for i := range want[s].Data {
			a, b := want[s].Data[i].iv, got[s].Data[i].iv
			if math.Float64bits(a.Lo) != math.Float64bits(b.Lo) || math.Float64bits(a.Hi) != math.Float64bits(b.Hi) {
				t.Fatalf("%s %d element %d: %v, want %v", what, s, i, b, a)
			}
		}
	}
}

// runPlanes runs forwardSteps on every node (in order, each node's
// forward reading its parents' boxes) with the weight planes on or off,
// then nodeVJP of every dense node with a cotangent of random intervals
// (seeded: the same for both), and returns the step values and the
// contributions; plane counts the steps that kept no converted weight.
func runPlanes(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor, on bool) (steps, vjps [][]spec.Tensor[adj], plane int) {
	t.Helper()
	defer func(v bool) { planeWeightsOn = v }(planeWeightsOn)
	planeWeightsOn = on
	nodes := boxNodes(t, g, p, x)
	reg := spec.Default[adj]()
	r := newRand(99)
	for j := range nodes {
		if g.Nodes[j].Kind.Op == irsem.OpInput {
			steps = append(steps, nil)
			vjps = append(vjps, nil)
			continue
		}
		fwd, args, err := forwardSteps(g, j, nodes, reg)
		if err != nil {
			t.Fatalf("node %d: %v", j, err)
		}
		nodes[j].steps, nodes[j].args = fwd, args
		steps = append(steps, fwd)
		for s, xs := range args {
			for u := range xs {
				if planeWeight(&nodes[j].app.Steps[s], u) && xs[u].Data == nil {
					plane++
				}
			}
		}
		var pc []spec.Tensor[adj]
		switch g.Nodes[j].Kind.Op {
		case irsem.OpLinear, irsem.OpConv, irsem.OpConvTranspose, irsem.OpMatmul:
			dy := make([]adj, len(nodes[j].box))
			for i := range dy {
				c := r.Float64()*2 - 1
				dy[i] = adj{iv: spec.Interval{Lo: c - 0x1p-10, Hi: c + 0x1p-10}}
			}
			pc, err = nodeVJP(g, nodes, j, spec.Tensor[adj]{Shape: g.Nodes[j].Shape, Data: dy}, reg)
			if err != nil {
				t.Fatalf("node %d: %v", j, err)
			}
		}
		vjps = append(vjps, pc)
	}
	return steps, vjps, plane
}

// TestPlaneForwardAgrees: on graphs of linear, conv, conv_transpose and
// matmul-by-a-constant nodes, the first-order forward with its weights
// read as planes (planeForward) gives every step's interval bit for bit
// as with the converted weights, keeps no converted weight in args where
// it ran, and the sweeps' VJPs (nodeVJP, which converts the weights again
// for the read) give the same adjoints bit for bit; and the whole bound
// (SharpBounds: boxes, sweeps through linearIn and the VJP runs, the
// first-order and classic bounds) is the same either way.
func TestPlaneForwardAgrees(t *testing.T) {
	for _, n := range planeNets() {
		s0, v0, p0 := runPlanes(t, n.g, n.p, n.x, false)
		s1, v1, p1 := runPlanes(t, n.g, n.p, n.x, true)
		// Every dense layer's weights read as a plane, but for the
		// declined layers of linear/untame (one) and linear/inexact (two).
		want := map[string]int{"mlp": 5, "linear/untame": 1, "linear/inexact": 0}[n.name]
		if want == 0 && n.name != "linear/inexact" {
			want = 2
		}
		if p0 != 0 || p1 != want {
			t.Errorf("%s: %d (off) and %d (on) steps kept no converted weight, want 0 and %d", n.name, p0, p1, want)
		}
		for j := range s0 {
			sameAdj(t, fmt.Sprintf("%s node %d step", n.name, j), s0[j], s1[j])
			sameAdj(t, fmt.Sprintf("%s node %d vjp", n.name, j), v0[j], v1[j])
		}
		sh := func(on bool) []Sharp {
			defer func(v bool) { planeWeightsOn = v }(planeWeightsOn)
			planeWeightsOn = on
			r, err := SharpBounds(n.g, n.p, n.x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		if a, b := sh(false), sh(true); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: SharpBounds differ with the weight planes:\n%+v\n%+v", n.name, b, a)
		} else {
			t.Logf("%s: %d plane steps; first-order %g, classic %g", n.name, p1, a[0].FirstOrder, a[0].Classic)
		}
	}
}

// TestPlaneForwardPlanted: a plane that is not the payload's exact
// values is caught. One weight (the first of every plane step) one
// binary32 ulp up changes a step's interval of the forward, which
// TestPlaneForwardAgrees compares bit for bit; every weight one binary32
// ulp up changes, besides, the bound SharpBounds reports (the boxes).
func TestPlaneForwardPlanted(t *testing.T) {
	up := func(v float64) float64 { return float64(math.Nextafter32(float32(v), float32(math.Inf(1)))) }
	for _, n := range planeNets() {
		if n.name == "linear/inexact" {
			continue // no plane
		}
		s0, _, _ := runPlanes(t, n.g, n.p, n.x, true)
		a, err := SharpBounds(n.g, n.p, n.x, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, all := range []bool{false, true} {
			planePlant = func(wp []float64) {
				wp[0] = up(wp[0])
				for i := 1; all && i < len(wp); i++ {
					wp[i] = up(wp[i])
				}
			}
			s1, _, _ := runPlanes(t, n.g, n.p, n.x, true)
			b, err := SharpBounds(n.g, n.p, n.x, Options{})
			planePlant = nil
			if err != nil {
				t.Fatal(err)
			}
			caught := false
			for j := range s0 {
				for s := range s0[j] {
					for i := range s0[j][s].Data {
						caught = caught || s0[j][s].Data[i].iv != s1[j][s].Data[i].iv
					}
				}
			}
			if !caught {
				t.Errorf("%s (every weight: %v): a weight one binary32 ulp off changed no step of the forward", n.name, all)
			}
			if same := reflect.DeepEqual(a, b); all && same {
				t.Errorf("%s: every weight one binary32 ulp off changed no bound", n.name)
			} else if !all {
				t.Logf("%s: one weight one binary32 ulp off: the bound changed: %v", n.name, !same)
			}
		}
	}
}

// TestLinearDensePlaneAdj: adj's LinearDensePlane fills y bit for bit as
// LinearDense does on the weights converted by FromRat (the payload's
// conversion), for every weight plane it accepts, with and without a
// bias, and accepts every plane of tame values; the cases include
// weights that are not tame (2⁻⁴⁰⁰, 2³⁰¹, beside 0, ±2⁻²⁹⁹ and random
// binary32 values) against inputs of up to 2²⁹⁰, where the pairs path's
// lifting of a tiny weight shows in the result.
func TestLinearDensePlaneAdj(t *testing.T) {
	r := newRand(5)
	const rows, out, in = 3, 4, 5
	for c, special := range [][]float64{nil, {0, 0x1p-299, -0x1p-299}, {0x1p-400}, {0x1p301}, {-0x1p-400, 0x1p-300}} {
		for _, bias := range []bool{false, true} {
			w := make([]float64, out*in)
			for i := range w {
				w[i] = float64(float32(r.NormFloat64()))
			}
			copy(w, special)
			x := make([]adj, rows*in)
			for i := range x {
				v := float64(float32(r.NormFloat64()))
				if i%in == 0 {
					v = 0x1p290
				}
				x[i] = adj{iv: spec.Interval{Lo: v, Hi: math.Nextafter(v, math.Inf(1))}}
			}
			var b []adj
			if bias {
				b = make([]adj, out)
				for i := range b {
					b[i] = adj{iv: spec.Interval{Lo: 0.5, Hi: 0.75}}
				}
			}
			wa := make([]adj, len(w))
			for i, v := range w {
				rv, err := spec.RatFromFloat64(v)
				if err != nil {
					t.Fatal(err)
				}
				wa[i] = irsem.ConvertTensor[adj](irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{rv}}).Data[0]
			}
			want, got := make([]adj, rows*out), make([]adj, rows*out)
			okW := adj{}.LinearDense(x, nil, wa, b, want, rows, out, in, bias)
			okG := adj{}.LinearDensePlane(x, nil, w, b, got, rows, out, in, bias)
			tame := true
			for _, v := range w {
				tame = tame && (v == 0 || (math.Abs(v) >= 0x1p-300 && math.Abs(v) <= 0x1p300))
			}
			if tame && !okG {
				t.Errorf("case %d bias %v: a tame plane declined", c, bias)
			}
			if !okG {
				continue
			}
			if !okW {
				t.Fatalf("case %d bias %v: the plane path ran where LinearDense declines", c, bias)
			}
			for i := range want {
				if want[i].iv != got[i].iv {
					t.Fatalf("case %d bias %v: y[%d] = %v, want %v", c, bias, i, got[i].iv, want[i].iv)
				}
			}
		}
	}
}
