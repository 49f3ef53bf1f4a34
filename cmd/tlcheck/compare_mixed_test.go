package main

import (
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
)

// Graphs that compute in FLOAT and DOUBLE (fpbound's doc, "Mixed binary32
// and binary64 graphs"), judged per node (each node's roundings in its
// own format, fpbound.SharpBoundsMixed):
//
//	d2f:  h = MatMul(x, W1)  DOUBLE [2,3]·[3,4]   y = MatMul(Cast(h, FLOAT), W2)  FLOAT [4,2]: a FLOAT output
//	f2d:  h = MatMul(x, W1)  FLOAT  [2,3]·[3,4]   z = MatMul(Cast(h, DOUBLE), W2) DOUBLE [4,2]: a DOUBLE output
//
// and each with Tanh(h) in h's type before the cast (the library in
// binary64, charged binary32 ulps; in binary32, float32 of Go's float64
// tanh, within one binary32 ulp).
//
// The DOUBLE data are not binary32 values (multiples of 0.1), the FLOAT
// data are. The recorded outputs are independent evaluations in Go —
// float64 arithmetic for the DOUBLE nodes, float32 for the FLOAT ones —
// in four orders (left to right, right to left, pairwise, and left to
// right with float64 fused multiply-adds in the DOUBLE matmul): every
// element holds. A fault planted one ulp of the output's type beyond the
// per-node bound of element 0 (the least value of the type above x.Hi + E,
// x and E from fpbound.SharpBoundsMixed on the loaded model, with the
// importer's types) fails; the per-node bound is below the coarse one
// (fpbound.SharpBounds: binary32's constants for every rounding).

// mixedCase is one of the two graphs and its data.
type mixedCase struct {
	name         string
	inD, w1D     bool // x and W1 DOUBLE (else FLOAT); W2 is the other type
	x, w1, w2    []float64
	outputDouble bool
	tanh         bool // Tanh(h) before the cast
}

var mixedCases = []mixedCase{
	{name: "d2f", inD: true, w1D: true, outputDouble: false,
		x:  []float64{0.1, -0.7, 1.3, 2.9, 0.3, -1.1},
		w1: []float64{0.2, -0.3, 0.7, 1.1, -0.9, 0.4, 0.6, -1.3, 0.5, 0.8, -0.1, 0.9},
		w2: []float64{0.75, -1.5, 0.375, 2.25, -0.625, 1.125, 0.5, -0.25}},
	{name: "f2d", inD: false, w1D: false, outputDouble: true,
		x:  []float64{0.75, -1.5, 1.25, 2.5, 0.375, -1.125},
		w1: []float64{0.5, -0.25, 0.625, 1.125, -0.875, 0.375, 0.5, -1.25, 0.5, 0.75, -0.125, 0.875},
		w2: []float64{0.1, -0.7, 0.3, 1.9, -0.9, 1.3, 0.7, -0.3}},
}

func init() {
	for _, c := range mixedCases[:2] {
		c.name, c.tanh = c.name+"-tanh", true
		mixedCases = append(mixedCases, c)
	}
}

// mixedModel is the case's ModelProto.
func (c mixedCase) mixedModel() []byte {
	et := func(d bool) uint64 {
		if d {
			return 11
		}
		return 1
	}
	vi := func(name string, d bool, dims ...int64) []byte {
		var shape pbuf
		for _, n := range dims {
			shape = shape.bytes(1, pbuf(nil).varint(1, uint64(n)))
		}
		tt := pbuf(nil).varint(1, et(d)).bytes(2, shape)
		return pbuf(nil).str(1, name).bytes(2, pbuf(nil).bytes(1, tt))
	}
	init := func(name string, d bool, dims []int64, v []float64) []byte {
		if d {
			return doubleTensorPB(name, dims, v...)
		}
		return tensorPB(name, dims, f32s(v)...)
	}
	to := uint64(1)
	if c.outputDouble {
		to = 11
	}
	src := "h"
	if c.tanh {
		src = "t"
	}
	cast := pbuf(nodePB("c", "Cast", []string{src}, "hc")).bytes(5, pbuf(nil).str(1, "to").varint(3, to).varint(20, 2))
	g := pbuf(nil).
		bytes(1, nodePB("m1", "MatMul", []string{"x", "w1"}, "h"))
	if c.tanh {
		g = g.bytes(1, nodePB("t", "Tanh", []string{"h"}, "t"))
	}
	g = g.bytes(1, cast).
		bytes(1, nodePB("m2", "MatMul", []string{"hc", "w2"}, "y")).
		str(2, "mixed").
		bytes(5, init("w1", c.w1D, []int64{3, 4}, c.w1)).
		bytes(5, init("w2", c.outputDouble, []int64{4, 2}, c.w2)).
		bytes(11, vi("x", c.inD, 2, 3)).
		bytes(12, vi("y", c.outputDouble, 2, 2))
	return pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
}

func f32s(v []float64) []float32 {
	out := make([]float32, len(v))
	for i, f := range v {
		out[i] = float32(f)
	}
	return out
}

// sumOrder sums the terms t in one of the orders (0 left to right, 1
// right to left, 2 pairwise); add is the format's rounded addition.
func sumOrder(t []float64, order int, add func(a, b float64) float64) float64 {
	switch order {
	case 1:
		s := t[len(t)-1]
		for i := len(t) - 2; i >= 0; i-- {
			s = add(s, t[i])
		}
		return s
	case 2:
		if len(t) == 1 {
			return t[0]
		}
		h := len(t) / 2
		return add(sumOrder(t[:h], 2, add), sumOrder(t[h:], 2, add))
	}
	s := t[0]
	for _, v := range t[1:] {
		s = add(s, v)
	}
	return s
}

// matmulIn is a·b ([r,k]·[k,c]) in binary32 (dbl false: every product and
// sum rounded to float32) or binary64 in the order given; order 3 is left
// to right with float64 fused multiply-adds (binary64 only; binary32
// uses order 0 then).
func matmulIn(a, b []float64, r, k, c int, dbl bool, order int) []float64 {
	add := func(x, y float64) float64 { return float64(float32(x) + float32(y)) }
	mul := func(x, y float64) float64 { return float64(float32(x) * float32(y)) }
	if dbl {
		add = func(x, y float64) float64 { return x + y }
		mul = func(x, y float64) float64 { return x * y }
	}
	out := make([]float64, r*c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			if order == 3 && dbl {
				s := a[i*k] * b[j]
				for q := 1; q < k; q++ {
					s = math.FMA(a[i*k+q], b[q*c+j], s)
				}
				out[i*c+j] = s
				continue
			}
			t := make([]float64, k)
			for q := range t {
				t[q] = mul(a[i*k+q], b[q*c+j])
			}
			o := order
			if o == 3 {
				o = 0
			}
			out[i*c+j] = sumOrder(t, o, add)
		}
	}
	return out
}

// evaluate is the case's output evaluated in Go in the given order.
func (c mixedCase) evaluate(order int) []float64 {
	x, w1, w2 := c.x, c.w1, c.w2
	if !c.inD {
		x = f64s(f32s(x))
	}
	if !c.w1D {
		w1 = f64s(f32s(w1))
	}
	if !c.outputDouble {
		w2 = f64s(f32s(w2))
	}
	h := matmulIn(x, w1, 2, 3, 4, c.inD, order)
	if c.tanh {
		for i, v := range h {
			h[i] = math.Tanh(v)
			if !c.inD {
				h[i] = float64(float32(h[i]))
			}
		}
	}
	if !c.outputDouble {
		h = f64s(f32s(h)) // Cast DOUBLE → FLOAT: round to nearest, ties to even
	}
	return matmulIn(h, w2, 2, 4, 2, c.outputDouble, order)
}

func f64s(v []float32) []float64 {
	out := make([]float64, len(v))
	for i, f := range v {
		out[i] = float64(f)
	}
	return out
}

// write writes the model and a data set with the recorded output rec.
func (c mixedCase) write(t *testing.T, rec []float64) (string, string) {
	t.Helper()
	dir := t.TempDir()
	m := filepath.Join(dir, "model.onnx")
	data := filepath.Join(dir, "test_data_set_0")
	in := tensorPB("x", []int64{2, 3}, f32s(c.x)...)
	if c.inD {
		in = doubleTensorPB("x", []int64{2, 3}, c.x...)
	}
	out := tensorPB("y", []int64{2, 2}, f32s(rec)...)
	if c.outputDouble {
		out = doubleTensorPB("y", []int64{2, 2}, rec...)
	}
	for p, b := range map[string][]byte{m: c.mixedModel(), filepath.Join(data, "input_0.pb"): in, filepath.Join(data, "output_0.pb"): out} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return m, data
}

// mixedBeyond is the least value of the output's type (binary64, or binary32)
// strictly above hi + e, decided in exact arithmetic.
func mixedBeyond(hi, e float64, dbl bool) float64 {
	lim := new(big.Rat).Add(new(big.Rat).SetFloat64(hi), new(big.Rat).SetFloat64(e))
	f, _ := lim.Float64()
	if !dbl {
		f32, _ := lim.Float32()
		f = float64(f32)
	}
	for new(big.Rat).SetFloat64(f).Cmp(lim) <= 0 {
		if dbl {
			f = math.Nextafter(f, math.Inf(1))
		} else {
			f = float64(math.Nextafter32(float32(f), float32(math.Inf(1))))
		}
	}
	return f
}

func TestCompareMixed(t *testing.T) {
	for _, c := range mixedCases {
		t.Run(c.name, func(t *testing.T) {
			for order := 0; order < 4; order++ {
				m, d := c.write(t, c.evaluate(order))
				code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
				if code != 0 || !strings.Contains(out, "4 hold, 0 fail, 0 inconclusive") || !strings.Contains(out, "format: binary32 and binary64 mixed") {
					t.Fatalf("order %d: exit %d, want 0 with 4 holding and the mixed format named; stderr %s; stdout %s", order, code, errs, out)
				}
			}
			// The planted fault: element 0 one ulp of the output's type
			// beyond x.Hi + E.
			m, d := c.write(t, c.evaluate(0))
			lm, err := model.LoadONNX(m, []string{filepath.Join(d, "input_0.pb")}, model.Options{Recorded: true})
			if err != nil {
				t.Fatal(err)
			}
			// The coarse bound (every rounding charged binary32's
			// constants: mixed32's) for the record, and the per-node one
			// compare now judges with (each IR node in its own format,
			// from the importer's types).
			coarse, err := fpbound.SharpBounds(lm.Graph, lm.Payload, lm.Input, fpbound.Options{})
			if err != nil {
				t.Fatal(err)
			}
			narrow := make([]bool, len(lm.Graph.Nodes))
			kinds := map[onnx.DataType]int{}
			for j, ty := range lm.ONNX.Imported.Types {
				narrow[j] = ty != onnx.Double
				kinds[ty]++
				// A node of the DOUBLE matmul is DOUBLE, of the FLOAT one FLOAT;
				// the cast to FLOAT (round_f32) is never DOUBLE.
				if op := lm.Graph.Nodes[j].Kind.Op; op == "round_f32" && ty == onnx.Double {
					t.Errorf("node %d (round_f32) typed DOUBLE", j)
				}
			}
			if kinds[onnx.Double] == 0 || kinds[onnx.Float] == 0 {
				t.Errorf("node types %v: want both DOUBLE and FLOAT nodes", kinds)
			}
			sh, err := fpbound.SharpBoundsMixed(lm.Graph, lm.Payload, lm.Input, narrow, fpbound.Options{})
			if err != nil {
				t.Fatal(err)
			}
			en := sh[0].Enclosure
			if !(en.Bound < coarse[0].Bound) {
				t.Errorf("element 0: per-node bound %v, not below the coarse %v", en.Bound, coarse[0].Bound)
			}
			if math.IsInf(en.Bound, 1) || en.Bound <= 0 {
				t.Fatalf("element 0: bound %v, want finite and positive", en.Bound)
			}
			rec := c.evaluate(0)
			rec[0] = mixedBeyond(en.Exact.Hi, en.Bound, c.outputDouble)
			m, d = c.write(t, rec)
			code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
			if code != 1 || !strings.Contains(out, "1 fail") {
				t.Fatalf("planted %v (exact ≤ %v, bound %v): exit %d, want 1 with one failing element; stderr %s; stdout %s", rec[0], en.Exact.Hi, en.Bound, code, errs, out)
			}
			t.Logf("%s: coarse bound %.3g, per-node bound %.3g (%.3g of it); planted %.17g, %.3g beyond exact.Hi + bound (%.3g of the bound)", c.name, coarse[0].Bound, en.Bound, en.Bound/coarse[0].Bound, rec[0], rec[0]-en.Exact.Hi-en.Bound, (rec[0]-en.Exact.Hi-en.Bound)/en.Bound)
		})
	}
}
