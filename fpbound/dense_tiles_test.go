package fpbound

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// withTiles runs f with denseTileElems set to n (tiles of max(1, n/in)
// rows of W).
func withTiles(n int, f func()) {
	defer func(v int) { denseTileElems = v }(denseTileElems)
	denseTileElems = n
	f()
}

// untiled is a tile size no test layer reaches: one product over all of
// W, the computation before tiling.
const untiled = 1 << 40

// runTilesAgree compares, for the case c and the weights wf (binary32
// values, some 0), the dense kernel as it ran before tiling — LinearDense
// on the converted weights, one product — with LinearDensePlane32 on wf
// in place and LinearDensePlane on wf widened, each under several tile
// sizes: the same answer and, where applied, the same outputs, ErrOf for
// ErrOf. It returns whether the kernel applied.
func runTilesAgree[F format](t *testing.T, c denseCase, wf []float32, src []int32) bool {
	t.Helper()
	x, _, b := denseInputs[F](c)
	we := make([]ErrOf[F], len(wf))
	w64 := make([]float64, len(wf))
	for i, v := range wf {
		w64[i] = float64(v)
		we[i] = ErrOf[F]{}.FromRat(rat(w64[i]))
	}
	want := make([]ErrOf[F], c.rows*c.out)
	var okW bool
	withTiles(untiled, func() { okW = linearDense(x, src, we, b, want, c.rows, c.out, c.in, c.bias, plantNone) })
	for _, tile := range []int{untiled, 1, c.in, 3*c.in + 1} {
		withTiles(tile, func() {
			for name, run := range map[string]func(y []ErrOf[F]) bool{
				"plane32": func(y []ErrOf[F]) bool {
					return ErrOf[F]{}.LinearDensePlane32(x, src, wf, b, y, c.rows, c.out, c.in, c.bias)
				},
				"plane64": func(y []ErrOf[F]) bool {
					return ErrOf[F]{}.LinearDensePlane(x, src, w64, b, y, c.rows, c.out, c.in, c.bias)
				},
				"converted": func(y []ErrOf[F]) bool {
					return ErrOf[F]{}.LinearDense(x, src, we, b, y, c.rows, c.out, c.in, c.bias)
				},
			} {
				got := make([]ErrOf[F], c.rows*c.out)
				if ok := run(got); ok != okW {
					t.Fatalf("%+v %s tile %d: applied %v, the untiled kernel %v", c, name, tile, ok, okW)
				}
				if okW && !reflect.DeepEqual(want, got) {
					t.Fatalf("%+v %s tile %d: outputs differ from the untiled kernel's", c, name, tile)
				}
			}
		})
	}
	return okW
}

// TestDenseTilesAgree: the tiled dense kernels (weights read tile by tile,
// from a binary32 plane in place or a float64 plane) give, bit for bit,
// what the untiled kernel gives on the converted weights, in binary32,
// binary64 and binary16 (whose kernel declines binary32 weights it does
// not hold, tiled or not), with and without a gather table, exact-zero
// and pending inputs and a bias; and a float64 plane with a weight 2⁻⁴⁰⁰
// (not tame) is declined by every form, as before.
func TestDenseTilesAgree(t *testing.T) {
	cases := []denseCase{
		{rows: 1, out: 37, in: 64, bias: true, seed: 61},
		{rows: 5, out: 23, in: 33, zeros: true, seed: 62},
		{rows: 6, out: 40, in: 19, bias: true, zeros: true, pending: true, seed: 63},
	}
	applied := map[string]int{}
	for _, c := range cases {
		r := rand.New(rand.NewPCG(c.seed, 5))
		for _, kind := range []string{"f32", "k/256"} {
			wf := make([]float32, c.out*c.in)
			for i := range wf {
				switch v := randF32(r, 1); {
				case r.IntN(8) == 0:
				case kind == "k/256":
					wf[i] = float32(math.Round(v*255) / 256)
				default:
					wf[i] = float32(v)
				}
			}
			for _, gathered := range []bool{false, true} {
				var src []int32
				if gathered {
					n := c.rows * c.in
					src = make([]int32, n)
					for i := range src {
						src[i] = int32(r.IntN(n+n/4)) - int32(n/4)
					}
				}
				t.Run(fmt.Sprintf("%d/%s/%v", c.seed, kind, gathered), func(t *testing.T) {
					if runTilesAgree[binary32](t, c, wf, src) {
						applied["binary32"]++
					}
					if runTilesAgree[binary64](t, c, wf, src) {
						applied["binary64"]++
					}
					if runTilesAgree[binary16](t, c, wf, src) {
						applied["binary16/"+kind]++
					}
				})
			}
		}
		// Not tame: declined by the plane form, tiled or not, as LinearDense
		// declines the converted weight.
		x, _, b := denseInputs[binary64](c)
		w64 := make([]float64, c.out*c.in)
		for i := range w64 {
			w64[i] = randF32(r, 1)
		}
		w64[len(w64)-1] = math.Ldexp(1, -400)
		for _, tile := range []int{untiled, 1} {
			withTiles(tile, func() {
				y := make([]ErrOf[binary64], c.rows*c.out)
				if (ErrOf[binary64]{}).LinearDensePlane(x, nil, w64, b, y, c.rows, c.out, c.in, c.bias) {
					t.Errorf("%+v tile %d: a weight 2⁻⁴⁰⁰ was accepted", c, tile)
				}
			})
		}
	}
	for _, k := range []string{"binary32", "binary64", "binary16/k/256"} {
		if applied[k] == 0 {
			t.Errorf("%s: the dense kernel never applied", k)
		}
	}
	if applied["binary16/f32"] != 0 {
		t.Errorf("binary16 took binary32 weights it does not hold %d times", applied["binary16/f32"])
	}
}

// TestAdjTilesAgree: adj's tiled kernel gives, bit for bit, the untiled
// intervals: LinearDensePlane32 on binary32 weights against LinearDense on
// their conversion, and LinearDense on weights that are intervals in some
// rows of W only (so that some tiles are all points and skip the radius
// product the untiled call runs), with bias intervals, inputs up to 2²⁹⁰
// and a gather table.
func TestAdjTilesAgree(t *testing.T) {
	r := newRand(17)
	const rows, out, in = 4, 13, 29
	x := make([]adj, rows*in)
	for i := range x {
		v := float64(float32(r.NormFloat64()))
		if i%in == 0 {
			v = 0x1p290
		}
		x[i] = adj{iv: spec.Interval{Lo: v, Hi: math.Nextafter(v, math.Inf(1))}}
	}
	b := make([]adj, out)
	for i := range b {
		b[i] = adj{iv: spec.Interval{Lo: 0.5, Hi: 0.75}}
	}
	wf := make([]float32, out*in)
	wp, wi := make([]adj, out*in), make([]adj, out*in)
	for i := range wf {
		if r.IntN(6) != 0 {
			wf[i] = float32(r.NormFloat64())
		}
		v := float64(wf[i])
		wp[i] = adj{iv: spec.Interval{Lo: v, Hi: v}}
		wi[i] = wp[i]
		if i/in >= out/2 { // the lower rows: intervals
			wi[i].iv.Hi = v + 0x1p-10
		}
	}
	src := make([]int32, rows*in)
	for i := range src {
		src[i] = int32(r.IntN(rows*in+8)) - 8
	}
	for _, s := range [][]int32{nil, src} {
		for _, bias := range []bool{false, true} {
			ivs := func(y []adj) []spec.Interval {
				v := make([]spec.Interval, len(y))
				for i := range y {
					v[i] = y[i].iv
				}
				return v
			}
			want32, wantIv := make([]adj, rows*out), make([]adj, rows*out)
			withTiles(untiled, func() {
				if !(adj{}).LinearDense(x, s, wp, b, want32, rows, out, in, bias) || !(adj{}).LinearDense(x, s, wi, b, wantIv, rows, out, in, bias) {
					t.Fatal("the untiled kernel declined")
				}
			})
			for _, tile := range []int{untiled, 1, 2 * in, 5*in - 1} {
				withTiles(tile, func() {
					got32, gotIv := make([]adj, rows*out), make([]adj, rows*out)
					if !(adj{}).LinearDensePlane32(x, s, wf, b, got32, rows, out, in, bias) || !(adj{}).LinearDense(x, s, wi, b, gotIv, rows, out, in, bias) {
						t.Fatalf("tile %d: the tiled kernel declined", tile)
					}
					if !reflect.DeepEqual(ivs(want32), ivs(got32)) {
						t.Errorf("gather %v bias %v tile %d: LinearDensePlane32 differs from the untiled kernel", s != nil, bias, tile)
					}
					if !reflect.DeepEqual(ivs(wantIv), ivs(gotIv)) {
						t.Errorf("gather %v bias %v tile %d: interval weights differ from the untiled kernel", s != nil, bias, tile)
					}
				})
			}
		}
	}
}

// tiledNets is convLinearNets' graphs and a wider MLP (whose first layer
// spans many tiles at the tile sizes the tests set).
func tiledNets() []planeNet {
	nets := convLinearNets(1)
	r := newRand(9)
	bd := newBuilder(spec.Shape{3, 96})
	h := bd.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{3, 48}, 0)
	w1, b1 := randTensor(r, spec.Shape{48, 96}, 0.2), randTensor(r, spec.Shape{48}, 0.1)
	bd.p.Entries[h] = &irsem.Params{W: &w1, B: &b1}
	h = bd.node(irsem.Kind{Op: irsem.OpRelu}, spec.Shape{3, 48}, h)
	h = bd.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{3, 10}, h)
	w2, b2 := randTensor(r, spec.Shape{10, 48}, 0.2), randTensor(r, spec.Shape{10}, 0.1)
	bd.p.Entries[h] = &irsem.Params{W: &w2, B: &b2}
	return append(nets, planeNet{"mlp", bd.g, bd.p, randTensor(r, spec.Shape{3, 96}, 1)})
}

// withPlanes64 is withPlanes with binary64 planes (irsem.NewPlane64, as
// the importer stores a DOUBLE initializer).
func withPlanes64(t *testing.T, p *irsem.Payload) *irsem.Payload {
	t.Helper()
	q := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for _, id := range p.IDs() {
		e := *p.Entry(id)
		if e.W != nil {
			fs := make([]float64, len(e.W.Data))
			for i, r := range e.W.Data {
				f, ok := r.ExactFloat64()
				if !ok {
					t.Fatalf("node %d: W[%d] = %v is no float64", id, i, r)
				}
				fs[i] = f
			}
			pl, err := irsem.NewPlane64(e.W.Shape, fs)
			if err != nil {
				t.Fatal(err)
			}
			e.SetWeightPlane(pl)
		}
		q.Entries[id] = &e
	}
	return q
}

// denoteErr is every node's Err value of g on x (the classic pass).
func denoteErr(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) []spec.Tensor[Err] {
	t.Helper()
	vals, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[Err](x))
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

// TestPlaneGraphsTiled: on linear, conv and conv_transpose graphs, every
// node's Err value (the classic pass) and compare's whole Result (with
// the first-order bound's forward and local errors) are the same, bit for
// bit, for the rational payload with untiled kernels (the computation
// before this change: the weights widened to one float64 plane) and for
// the payload holding W as binary32 planes (read in place:
// LinearPlane32 / ConvPlane32, adj's LinearDensePlane32 in the
// first-order forward) or as binary64 planes, under small tiles; a
// recorded output with a planted error included.
func TestPlaneGraphsTiled(t *testing.T) {
	for _, n := range tiledNets() {
		q32, q64 := withPlanes(t, n.p), withPlanes64(t, n.p)
		y := exactOut(t, n.g, n.p, n.x)
		rec := make([]float32, len(y.Data))
		for i, r := range y.Data {
			rec[i] = float32(r.Float64())
		}
		planted := append([]float32(nil), rec...)
		planted[len(planted)-1] = math.Nextafter32(planted[len(planted)-1], 10)
		var wantV []spec.Tensor[Err]
		var wantR []*Result
		withTiles(untiled, func() {
			wantV = denoteErr(t, n.g, n.p, n.x)
			for _, r := range [][]float32{rec, planted} {
				res, err := Compare(n.g, n.p, n.x, r, Options{})
				if err != nil {
					t.Fatalf("%s: %v", n.name, err)
				}
				wantR = append(wantR, res)
			}
		})
		for _, tile := range []int{1, 50} {
			for name, q := range map[string]*irsem.Payload{"binary32": q32, "binary64": q64} {
				withTiles(tile, func() {
					got := denoteErr(t, n.g, q, n.x)
					for i := range wantV {
						if !reflect.DeepEqual(wantV[i], got[i]) {
							t.Fatalf("%s %s tile %d: node %d's value differs", n.name, name, tile, i)
						}
					}
					for k, r := range [][]float32{rec, planted} {
						res, err := Compare(n.g, q, n.x, r, Options{})
						if err != nil {
							t.Fatalf("%s %s: %v", n.name, name, err)
						}
						if !reflect.DeepEqual(wantR[k], res) {
							t.Errorf("%s %s tile %d recording %d: compare differs", n.name, name, tile, k)
						}
					}
				})
			}
		}
	}
}

// TestPlaneTiledPlantedUlp: one weight one binary32 ulp up in a binary32
// plane, in the last row of W (the last tile), changes the dense layer's
// outputs in the tiled kernel read in place — in ErrOf (the classic pass)
// and adj (the first-order forward) — and the node's value in the graph:
// the smallest change a binary32 weight can carry is seen.
func TestPlaneTiledPlantedUlp(t *testing.T) {
	c := denseCase{rows: 2, out: 9, in: 31, bias: true, seed: 71}
	x, _, b := denseInputs[binary32](c)
	r := rand.New(rand.NewPCG(c.seed, 3))
	wf := make([]float32, c.out*c.in)
	for i := range wf {
		wf[i] = float32(randF32(r, 1))
	}
	pl := append([]float32(nil), wf...)
	k := len(pl) - 1
	pl[k] = math.Nextafter32(pl[k], float32(math.Inf(1)))
	xa := make([]adj, len(x))
	for i := range x {
		xa[i] = adj{iv: x[i].close().x}
	}
	ba := make([]adj, len(b))
	for i := range b {
		ba[i] = adj{iv: b[i].x}
	}
	withTiles(c.in, func() {
		y1, y2 := make([]ErrOf[binary32], c.rows*c.out), make([]ErrOf[binary32], c.rows*c.out)
		a1, a2 := make([]adj, c.rows*c.out), make([]adj, c.rows*c.out)
		if !(ErrOf[binary32]{}).LinearDensePlane32(x, nil, wf, b, y1, c.rows, c.out, c.in, true) ||
			!(ErrOf[binary32]{}).LinearDensePlane32(x, nil, pl, b, y2, c.rows, c.out, c.in, true) ||
			!(adj{}).LinearDensePlane32(xa, nil, wf, ba, a1, c.rows, c.out, c.in, true) ||
			!(adj{}).LinearDensePlane32(xa, nil, pl, ba, a2, c.rows, c.out, c.in, true) {
			t.Fatal("the kernel declined")
		}
		if reflect.DeepEqual(y1, y2) {
			t.Error("ErrOf: a weight one binary32 ulp off in the last tile changed no output")
		}
		same := true
		for i := range a1 {
			same = same && a1[i].iv == a2[i].iv
		}
		if same {
			t.Error("adj: a weight one binary32 ulp off in the last tile changed no output")
		}
	})
	// In a graph: the MLP's first layer, its last weight one ulp up.
	n := tiledNets()[len(tiledNets())-1]
	q := withPlanes(t, n.p)
	id := n.g.Nodes[1].ID
	e := *q.Entry(id)
	ws := append([]float32(nil), e.WeightPlane().Float32s()...)
	ws[len(ws)-1] = math.Nextafter32(ws[len(ws)-1], float32(math.Inf(1)))
	p2, err := irsem.NewPlane32(e.WeightPlane().Shape(), ws)
	if err != nil {
		t.Fatal(err)
	}
	e.SetWeightPlane(p2)
	qp := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for _, i := range q.IDs() {
		qp.Entries[i] = q.Entry(i)
	}
	qp.Entries[id] = &e
	withTiles(50, func() {
		a, b := denoteErr(t, n.g, q, n.x), denoteErr(t, n.g, qp, n.x)
		if reflect.DeepEqual(a[id], b[id]) {
			t.Error("graph: a weight one binary32 ulp off changed the layer's value")
		}
	})
}
