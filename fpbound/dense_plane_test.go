package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// planeWeightsOf draws out×in weights as exact values (the payload's
// rationals, as floats) for one of the kinds below, and their conversion
// by FromRat (what irsem.ConvertTensor builds without a plane).
func planeWeightsOf[F format](r *rand.Rand, kind string, n int) ([]float64, []ErrOf[F]) {
	wp := make([]float64, n)
	for i := range wp {
		switch v := randF32(r, 1); {
		case r.IntN(10) == 0:
			wp[i] = 0
		case kind == "k/256": // a value of every format here
			wp[i] = math.Round(v*255) / 256
		default:
			wp[i] = v
		}
	}
	switch kind {
	case "tiny": // below enclose's tame range in binary64
		wp[n/2] = math.Ldexp(1, -400)
	case "huge":
		wp[n/3] = math.Ldexp(1, 400)
	}
	we := make([]ErrOf[F], n)
	for i, v := range wp {
		we[i] = ErrOf[F]{}.FromRat(rat(v))
	}
	return wp, we
}

// runPlaneAgrees checks LinearDensePlane against LinearDense on the
// converted weights: the same answer (applied or not) and, where applied,
// the same outputs, ErrOf for ErrOf; with and without a gather table.
func runPlaneAgrees[F format](t *testing.T, c denseCase, kind string, gathered bool) (applied bool) {
	x, _, b := denseInputs[F](c)
	r := rand.New(rand.NewPCG(c.seed, 23))
	wp, we := planeWeightsOf[F](r, kind, c.out*c.in)
	var src []int32
	if gathered { // a window-like gather with absent (padding) terms
		src = make([]int32, c.rows*c.in)
		for i := range src {
			src[i] = int32(r.IntN(len(x)+len(x)/4)) - int32(len(x)/4)
		}
	}
	y1, y2 := make([]ErrOf[F], c.rows*c.out), make([]ErrOf[F], c.rows*c.out)
	ok1 := linearDense(x, src, we, b, y1, c.rows, c.out, c.in, c.bias, plantNone)
	ok2 := linearDensePlane(x, src, wp, b, y2, c.rows, c.out, c.in, c.bias, plantNone)
	if ok1 != ok2 {
		t.Fatalf("%+v %s: LinearDense applied %v, the plane form %v", c, kind, ok1, ok2)
	}
	for i := range y1 {
		if ok1 && y1[i] != y2[i] {
			t.Fatalf("%+v %s: output %d: %+v from the converted weights, %+v from the plane", c, kind, i, y1[i], y2[i])
		}
	}
	return ok1
}

// TestLinearDensePlaneAgrees: the plane form of the dense kernel (what
// irsem hands fpbound instead of 72-byte converted weights) gives exactly
// what the kernel gives on the converted weights, or declines where it
// declines, in every format: binary32 weights that binary16 and bfloat16
// do not hold (both decline), k/256 weights that every format holds, and
// a weight outside the tame range.
func TestLinearDensePlaneAgrees(t *testing.T) {
	cases := []denseCase{
		{rows: 1, out: 16, in: 64, bias: true, seed: 31},
		{rows: 3, out: 10, in: 33, seed: 32},
		{rows: 4, out: 24, in: 40, bias: true, zeros: true, pending: true, seed: 33},
	}
	applied := map[string]int{}
	for _, c := range cases {
		for _, kind := range []string{"f32", "k/256", "tiny", "huge"} {
			for _, gathered := range []bool{false, true} {
				name := fmt.Sprintf("%d/%s/%v", c.seed, kind, gathered)
				t.Run(name, func(t *testing.T) {
					for f, run := range map[string]func() bool{
						"binary32": func() bool { return runPlaneAgrees[binary32](t, c, kind, gathered) },
						"binary64": func() bool { return runPlaneAgrees[binary64](t, c, kind, gathered) },
						"binary16": func() bool { return runPlaneAgrees[binary16](t, c, kind, gathered) },
						"bfloat16": func() bool { return runPlaneAgrees[bfloat16](t, c, kind, gathered) },
					} {
						if run() {
							applied[f+"/"+kind]++
						}
					}
				})
			}
		}
	}
	// Both branches of the comparison ran: the plane applied where the
	// weights are tame values of the format, and declined elsewhere.
	for _, k := range []string{"binary32/f32", "binary64/f32", "binary16/k/256", "bfloat16/k/256"} {
		if applied[k] == 0 {
			t.Errorf("%s: the dense kernel never applied", k)
		}
	}
	for _, k := range []string{"binary16/f32", "bfloat16/f32", "binary32/tiny", "binary64/tiny", "binary32/huge"} {
		if applied[k] != 0 {
			t.Errorf("%s: the dense kernel applied %d times", k, applied[k])
		}
	}
}

// TestPlaneRulesAgree runs spec's plane rules (linear, conv and
// conv_transpose with the weights as a plane, as irsem's steps call them)
// against the registry's rules on the converted weights: the same tensor,
// ErrOf for ErrOf.
func TestPlaneRulesAgree(t *testing.T) {
	reg := spec.Default[Err]()
	for _, c := range convCases() {
		t.Run(c.String(), func(t *testing.T) {
			x, w, b := c.operands()
			wp := make([]float64, len(w.Data))
			for i, v := range w.Data {
				wp[i] = v.x.Lo
			}
			want := c.forward(t, x, w, b)
			win := &spec.Window{Kernel: c.k, Stride: c.s, Pads: c.pads, Dilation: c.d, Groups: c.groups}
			if c.transposed {
				win.OutputPadding = c.op
			}
			var bp *spec.Tensor[Err]
			if c.bias {
				bp = &b
			}
			got, ok := spec.ConvPlane(&spec.Attrs{Window: win}, x, w.Shape, wp, bp, c.transposed)
			if !ok {
				t.Fatal("the plane rule declined")
			}
			sameTensor(t, want, got)
		})
	}
	r := rand.New(rand.NewPCG(41, 1))
	for _, sh := range []spec.Shape{{5, 33}, {2, 3, 64}} {
		x := spec.Tensor[Err]{Shape: sh, Data: make([]Err, sh.Size())}
		for i := range x.Data {
			x.Data[i] = drawErr[binary32](r, true, true)
		}
		out, in := 12, sh[len(sh)-1]
		wp, we := planeWeightsOf[binary32](r, "f32", out*in)
		b := spec.Tensor[Err]{Shape: spec.Shape{out}, Data: make([]Err, out)}
		for i := range b.Data {
			b.Data[i] = pointErr[binary32](r)
		}
		p, err := reg.Lookup("linear")
		if err != nil {
			t.Fatal(err)
		}
		want, err := p.Apply(nil, []spec.Tensor[Err]{x, {Shape: spec.Shape{out, in}, Data: we}, b})
		if err != nil {
			t.Fatal(err)
		}
		got, ok := spec.LinearPlane(x, spec.Shape{out, in}, wp, b)
		if !ok {
			t.Fatalf("%v: the plane rule declined", sh)
		}
		sameTensor(t, want, got)
		// A shape Apply refuses is declined, so that Apply reports it.
		if _, ok := spec.LinearPlane(x, spec.Shape{out, in + 1}, append(wp, make([]float64, out)...), b); ok {
			t.Errorf("%v: the plane rule took a weight of the wrong shape", sh)
		}
	}
}

// TestPlanePlantedWeight plants a one-ulp (binary32) error in one weight of
// the plane: the plane rule's outputs then differ from the exact
// weights', which TestPlaneRulesAgree's comparison must see.
func TestPlanePlantedWeight(t *testing.T) {
	c := convCases()[0]
	x, w, b := c.operands()
	wp := make([]float64, len(w.Data))
	for i, v := range w.Data {
		wp[i] = v.x.Lo
	}
	i := 0
	for wp[i] == 0 {
		i++
	}
	wp[i] = float64(math.Nextafter32(float32(wp[i]), float32(math.Inf(1))))
	want := c.forward(t, x, w, b)
	win := &spec.Window{Kernel: c.k, Stride: c.s, Pads: c.pads, Dilation: c.d, Groups: c.groups}
	got, ok := spec.ConvPlane(&spec.Attrs{Window: win}, x, w.Shape, wp, &b, false)
	if !ok {
		t.Fatal("the plane rule declined")
	}
	differ := 0
	for j := range want.Data {
		if want.Data[j] != got.Data[j] {
			differ++
		}
	}
	if differ == 0 {
		t.Fatal("a weight one ulp off changed no output")
	}
}

func sameTensor(t *testing.T, want, got spec.Tensor[Err]) {
	t.Helper()
	if !want.Shape.Equal(got.Shape) || len(want.Data) != len(got.Data) {
		t.Fatalf("shape %v (%d values), want %v (%d)", got.Shape, len(got.Data), want.Shape, len(want.Data))
	}
	for i := range want.Data {
		if want.Data[i] != got.Data[i] {
			t.Fatalf("element %d: %+v, want %+v", i, got.Data[i], want.Data[i])
		}
	}
}

// linearGraph is x [2, 40] → linear 40→16 → relu → linear 16→8, random
// binary32 weights.
func linearGraph(seed uint64) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	r := newRand(seed)
	b := newBuilder(spec.Shape{2, 40})
	x := b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{2, 16}, 0)
	w1, b1 := randTensor(r, spec.Shape{16, 40}, 0.3), randTensor(r, spec.Shape{16}, 0.1)
	b.p.Entries[x] = &irsem.Params{W: &w1, B: &b1}
	x = b.node(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{2, 16}, x)
	x = b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{2, 8}, x)
	w2, b2 := randTensor(r, spec.Shape{8, 16}, 0.3), randTensor(r, spec.Shape{8}, 0.1)
	b.p.Entries[x] = &irsem.Params{W: &w2, B: &b2}
	return b.g, b.p, randTensor(r, spec.Shape{2, 40}, 1)
}

// TestApplicationPlanesAgree: on graphs of linear, conv and conv_transpose
// nodes, every node's value by RunApplicationPlanes (how the first-order
// bound's local errors run) is, ErrOf for ErrOf, its value by
// RunApplication with the converted weights, and the plane rule ran.
func TestApplicationPlanesAgree(t *testing.T) {
	reg := spec.Default[Err]()
	exec := func(_ int, s *irsem.Step, xs []spec.Tensor[Err]) (spec.Tensor[Err], error) {
		pr, err := reg.Lookup(s.Prim)
		if err != nil {
			return spec.Tensor[Err]{}, err
		}
		return pr.Apply(s.Attrs, xs)
	}
	nets := convLinearNets(2)
	for _, n := range nets {
		vals, err := irsem.DenoteAll(n.g, n.p, irsem.ConvertTensor[Err](n.x))
		if err != nil {
			t.Fatalf("%s: %v", n.name, err)
		}
		apps, err := irsem.Applications(n.g, n.p)
		if err != nil {
			t.Fatal(err)
		}
		planes := 0
		for i, nd := range n.g.Nodes {
			switch nd.Kind.Op {
			case irsem.OpLinear, irsem.OpConv, irsem.OpConvTranspose:
			default:
				continue
			}
			parents := make([]spec.Tensor[Err], len(nd.Parents))
			for k, q := range nd.Parents {
				parents[k] = vals[q]
			}
			want, err := irsem.RunApplication(&apps[i], parents, exec)
			if err != nil {
				t.Fatalf("%s node %d: %v", n.name, i, err)
			}
			got, err := irsem.RunApplicationPlanes(reg, &apps[i], parents, func(k int, s *irsem.Step, xs []spec.Tensor[Err]) (spec.Tensor[Err], error) {
				if s.Prim == string(nd.Kind.Op) || s.Prim == "linear" {
					t.Errorf("%s node %d: the plane rule declined", n.name, i)
				}
				return exec(k, s, xs)
			})
			if err != nil {
				t.Fatalf("%s node %d: %v", n.name, i, err)
			}
			sameTensor(t, want, got)
			sameTensor(t, vals[i], got) // DenoteAll's plane step too
			planes++
		}
		if planes == 0 {
			t.Errorf("%s: no dense node", n.name)
		}
	}
}

// planeNet is a small test graph of dense layers with its payload and
// input.
type planeNet struct {
	name string
	g    *irsem.Graph
	p    *irsem.Payload
	x    irsem.RatTensor
}

// convLinearNets returns convGraph(seed, 5+seed, 4) ("conv/seed") and
// linearGraph(seed) ("linear/seed") for seed = 1 … seeds.
func convLinearNets(seeds uint64) []planeNet {
	var nets []planeNet
	for seed := uint64(1); seed <= seeds; seed++ {
		g, p, x := convGraph(seed, 5+int(seed), 4)
		nets = append(nets, planeNet{fmt.Sprintf("conv/%d", seed), g, p, x})
		g, p, x = linearGraph(seed)
		nets = append(nets, planeNet{fmt.Sprintf("linear/%d", seed), g, p, x})
	}
	return nets
}
