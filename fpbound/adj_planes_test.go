package fpbound

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/enclose"
	"github.com/tlcheck/tlcheck/spec"
)

// samePlanes reports that p and q are the same planes bit for bit: the
// same centres and radii (±0 told apart), and a radius plane in both or
// in neither.
func samePlanes(p, q enclose.Planes) bool {
	if len(p.C) != len(q.C) || (p.R == nil) != (q.R == nil) || len(p.R) != len(q.R) {
		return false
	}
	for i := range p.C {
		if math.Float64bits(p.C[i]) != math.Float64bits(q.C[i]) {
			return false
		}
	}
	for i := range p.R {
		if math.Float64bits(p.R[i]) != math.Float64bits(q.R[i]) {
			return false
		}
	}
	return true
}

// point is the adj point v.
func point(v float64) adj { return adj{iv: spec.Interval{Lo: v, Hi: v}} }

// TestAdjPlanesAgree checks that adjPlanes (no endpoint pairs for
// points) gives what adjPlanesPairs (the conversion through pairs) gives:
// the same ok and the same planes bit for bit, on points that are
// binary32 or binary64 values (with ±0), on points one of which is not
// tame (tiny, huge, ±∞, NaN: both go to FromPairs), on intervals (FromRat
// of a non-dyadic rational, random widths), a mix of points and one
// interval, and an unordered interval (both refuse).
func TestAdjPlanesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 1))
	points := func(n int, f func() float64) []adj {
		x := make([]adj, n)
		for i := range x {
			x[i] = point(f())
		}
		return x
	}
	with := func(x []adj, i int, v adj) []adj { x[i] = v; return x }
	f32 := func() float64 { return randF32(r, 1) }
	f64 := func() float64 { return (r.Float64()*2 - 1) * 1e3 }
	cases := []struct {
		name string
		x    []adj
	}{
		{"binary32 points", points(257, f32)},
		{"binary64 points", points(100, f64)},
		{"points with ±0", with(with(points(50, f32), 3, point(0)), 7, point(math.Copysign(0, -1)))},
		{"empty", nil},
		{"a tiny point", with(points(40, f32), 11, point(math.Ldexp(1, -400)))},
		{"a huge point", with(points(40, f32), 0, point(-math.Ldexp(1, 400)))},
		{"an infinite point", with(points(40, f32), 39, point(math.Inf(1)))},
		{"a NaN point", with(points(40, f32), 5, point(math.NaN()))},
		{"a point at 2^-300", with(points(40, f32), 6, point(math.Ldexp(1, -300)))},
		{"a point just below 2^-300", with(points(40, f32), 6, point(math.Nextafter(math.Ldexp(1, -300), 0)))},
		{"one interval", with(points(64, f32), 17, adj{}.FromRat(big.NewRat(1, 3)))},
		{"intervals", func() []adj {
			x := make([]adj, 90)
			for i := range x {
				x[i] = drawAdj(r, true)
			}
			return x
		}()},
		{"an unordered interval", with(points(30, f32), 2, adj{iv: spec.Interval{Lo: 1, Hi: 0}})},
	}
	for _, c := range cases {
		p, ok := adjPlanes(c.x)
		q, okq := adjPlanesPairs(c.x)
		if ok != okq || (ok && !samePlanes(p, q)) {
			t.Errorf("%s: adjPlanes gives ok %v, the pairs ok %v (or other planes)", c.name, ok, okq)
		}
	}
}

// adjLayer is one layer for TestAdjPlanesLayers: a linear layer (src nil)
// or a conv case gathered by im2col.
type adjLayer struct {
	name          string
	x, w, b       []adj
	src           []int32
	rows, out, in int
}

func adjLayers() []adjLayer {
	r := rand.New(rand.NewPCG(33, 2))
	var ls []adjLayer
	for k, s := range [][3]int{{1, 8, 16}, {3, 17, 9}, {2, 64, 40}} {
		for _, ivw := range []bool{false, true} {
			rows, out, in := s[0], s[1], s[2]
			l := adjLayer{name: fmt.Sprintf("linear %v ivw=%v", s, ivw), rows: rows, out: out, in: in,
				x: make([]adj, rows*in), w: make([]adj, out*in), b: make([]adj, out)}
			for i := range l.x {
				l.x[i] = drawAdj(r, k == 1)
			}
			for _, d := range [][]adj{l.w, l.b} {
				for i := range d {
					d[i] = point(randF32(r, 1))
					if ivw && r.IntN(4) == 0 {
						d[i] = adj{}.FromRat(big.NewRat(int64(r.IntN(2001)-1000), int64(3+2*r.IntN(500))))
					}
				}
			}
			ls = append(ls, l)
		}
	}
	for _, c := range convCases() {
		if c.groups != 1 || !c.bias {
			continue
		}
		for _, ivw := range []bool{false, true} {
			x, w, b := adjOperands(c, ivw)
			ls = append(ls, adjLayer{name: fmt.Sprintf("%v ivw=%v", c, ivw), x: x.Data, w: w.Data, b: b.Data,
				src: im2col(c), rows: prodInts(c.outExtent()), out: c.cout, in: c.cin * prodInts(c.k)})
		}
	}
	return ls
}

// runLayer runs adjLinearDense on l with planesOf set to conv.
func runLayer(t *testing.T, l adjLayer, conv func([]adj) (enclose.Planes, bool)) []adj {
	t.Helper()
	defer func(f func([]adj) (enclose.Planes, bool)) { planesOf = f }(planesOf)
	planesOf = conv
	y := make([]adj, l.rows*l.out)
	if !adjLinearDense(l.x, l.src, l.w, l.b, y, l.rows, l.out, l.in, true, 1) {
		t.Fatalf("%s: the dense path did not apply", l.name)
	}
	return y
}

// sameIntervals reports that x and y hold the same intervals bit for bit
// (ids aside: every result has a fresh one).
func sameIntervals(x, y []adj) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if math.Float64bits(x[i].iv.Lo) != math.Float64bits(y[i].iv.Lo) || math.Float64bits(x[i].iv.Hi) != math.Float64bits(y[i].iv.Hi) {
			return false
		}
	}
	return true
}

// TestAdjPlanesLayers runs adj's dense layer (linear layers, and the
// conv cases with a bias and one group gathered by im2col; point weights
// and weights a quarter of which are intervals) with adjPlanes and with
// adjPlanesPairs and requires identical intervals. Then it plants a fault
// the planes must carry: one weight one ulp off (binary32's ulp, and
// binary64's) changes the weight plane, and the binary32 one changes the
// layer's outputs.
func TestAdjPlanesLayers(t *testing.T) {
	for _, l := range adjLayers() {
		y := runLayer(t, l, adjPlanes)
		if !sameIntervals(y, runLayer(t, l, adjPlanesPairs)) {
			t.Errorf("%s: adjPlanes and the pairs give different outputs", l.name)
		}
		i := len(l.w) / 2
		for l.w[i].iv.Lo != l.w[i].iv.Hi || l.w[i].iv.Lo == 0 {
			i = (i + 1) % len(l.w)
		}
		v := l.w[i].iv.Lo
		p0, _ := adjPlanes(l.w)
		for _, u := range []struct {
			name string
			v    float64
		}{
			{"binary32", float64(math.Nextafter32(float32(v), float32(math.Inf(1))))},
			{"binary64", math.Nextafter(v, math.Inf(1))},
		} {
			l.w[i] = point(u.v)
			p, ok := adjPlanes(l.w)
			if !ok || samePlanes(p, p0) {
				t.Errorf("%s: a weight one %s ulp off was not carried by the plane", l.name, u.name)
			}
			if u.name == "binary32" && sameIntervals(runLayer(t, l, adjPlanes), y) {
				t.Errorf("%s: a weight one binary32 ulp off left the outputs unchanged", l.name)
			}
			l.w[i] = point(v)
		}
	}
}
