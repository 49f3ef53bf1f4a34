package main

import (
	"encoding/json"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// qParamsModel is y = QuantizeLinear(x, s, z) (UINT8, opset 13) with a
// computed scale s = ReduceMax(x)/400 and a computed zero point z =
// Cast(Round(s·1600), UINT8) (branch qdyn37), x a FLOAT [n] input; with
// moves, y is moved through Unsqueeze, Transpose, Flatten, Squeeze,
// Concat (with itself), Slice (the second copy), Gather (reversed),
// Reshape (back to [n]) and Clip to [10, 200] (UINT8 bounds) first: y
// reversed and clipped.
func qParamsModel(n int64, moves ...bool) pbuf {
	vi := typedValueInfoPB
	g := qParamsNodes()
	if len(moves) > 0 && moves[0] {
		i64 := func(v int64) []byte { // little-endian raw INT64
			b := make([]byte, 8)
			for k := range b {
				b[k] = byte(v >> (8 * k))
			}
			return b
		}
		rev := make([]byte, 0, 8*n) // Gather's indices: n−1, …, 0
		for i := n - 1; i >= 0; i-- {
			rev = append(rev, i64(i)...)
		}
		g = g.bytes(1, nodePB("u", "Unsqueeze", []string{"q", "ax"}, "u")).
			bytes(1, nodePB("t", "Transpose", []string{"u"}, "t")).
			bytes(1, pbuf(nodePB("f", "Flatten", []string{"t"}, "f")).bytes(5, pbuf(nil).str(1, "axis").varint(3, 0).varint(20, 2))).
			bytes(1, nodePB("sq", "Squeeze", []string{"f"}, "sq")).
			bytes(1, pbuf(nodePB("cc", "Concat", []string{"sq", "sq"}, "cc")).bytes(5, pbuf(nil).str(1, "axis").varint(3, 0).varint(20, 2))).
			bytes(1, nodePB("sl", "Slice", []string{"cc", "st", "en"}, "sl")).
			bytes(1, nodePB("ga", "Gather", []string{"sl", "rev"}, "ga")).
			bytes(1, nodePB("r", "Reshape", []string{"ga", "shp"}, "r")).
			bytes(1, nodePB("cl", "Clip", []string{"r", "lo", "hi"}, "y")).
			bytes(5, rawTensorPB("lo", 2, nil, 10)).bytes(5, rawTensorPB("hi", 2, nil, 200)).
			bytes(5, rawTensorPB("ax", 7, []int64{1}, i64(0)...)).
			bytes(5, rawTensorPB("st", 7, []int64{1}, i64(n)...)).
			bytes(5, rawTensorPB("en", 7, []int64{1}, i64(2*n)...)).
			bytes(5, rawTensorPB("rev", 7, []int64{n}, rev...)).
			bytes(5, rawTensorPB("shp", 7, []int64{1}, i64(n)...))
	} else {
		g = g.bytes(1, nodePB("id", "Identity", []string{"q"}, "y"))
	}
	g = g.str(2, "qparams").
		bytes(5, tensorPB("d", nil, 400)).bytes(5, tensorPB("k", nil, 1600)).
		bytes(11, vi("x", 1, n)).bytes(12, vi("y", 2, n))
	return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
}

// qParamsRef is the runtime's y for x, computed here in Go's float32
// arithmetic (another implementation of the operator text: binary32
// division, math.RoundToEven, the zero point, saturation to [0, 255]).
func qParamsRef(xs []float32) []byte {
	mx := xs[0]
	for _, x := range xs {
		mx = max(mx, x)
	}
	s := mx / 400
	z := math.RoundToEven(float64(s * 1600))
	ys := make([]byte, len(xs))
	for i, x := range xs {
		ys[i] = byte(math.Min(255, math.Max(0, math.RoundToEven(float64(x/s))+z)))
	}
	return ys
}

// TestCompareQuantizeComputedParams: QuantizeLinear whose scale and zero
// point are computed from the input (qParamsModel), judged through tlcheck
// compare against Go float32 references. max x = 25: s = 1/16, z = 100;
// x = 1, −3.3, 2.7 give 116, 47, 143; x = 25 and −30 saturate (500 → 255,
// −380 → 0); x = 1/32 puts x/s on the tie 1/2 exactly (rne: 0 → 100): the
// enclosure of the computed scale holds the jump, so inconclusive, never
// a FAIL. One code off at any decided element FAILS. Then a sweep: 400
// inputs within a few float32 ulps of ties and codes — no element FAILS
// (soundness), and the reference with one code off at a decided element
// FAILS.
func TestCompareQuantizeComputedParams(t *testing.T) {
	xs := []float32{1, -3.3, 2.7, 25, -30, 1.0 / 32}
	ys := qParamsRef(xs)
	if want := []byte{116, 47, 143, 255, 0, 100}; string(ys) != string(want) {
		t.Fatalf("reference codes %v, want %v (the hand derivation above)", ys, want)
	}
	n := int64(len(xs))
	in := tensorPB("x", []int64{n}, xs...)
	cases := []compareCase{{"computed scale and zero point hold", qParamsModel(n), in, rawTensorPB("y", 2, []int64{n}, ys...), 0, 5, 0, 1}}
	for j := range 5 { // the decided elements
		off := append([]byte(nil), ys...)
		if off[j] == 255 {
			off[j]--
		} else {
			off[j]++
		}
		cases = append(cases, compareCase{"one code off fails", qParamsModel(n), in, rawTensorPB("y", 2, []int64{n}, off...), 1, 4, 1, 1})
	}
	// The same codes moved (qParamsModel's moves: reversed, clipped): judged
	// exactly as before; one code off still FAILS, and so do the codes in
	// their original order (a move that kept the order would pass them).
	rv := make([]byte, len(ys))
	for i, y := range ys {
		rv[len(ys)-1-i] = min(200, max(10, y))
	}
	off := append([]byte(nil), rv...)
	off[2]++
	cases = append(cases,
		compareCase{"moved codes hold", qParamsModel(n, true), in, rawTensorPB("y", 2, []int64{n}, rv...), 0, 5, 0, 1},
		compareCase{"moved codes one off fails", qParamsModel(n, true), in, rawTensorPB("y", 2, []int64{n}, off...), 1, 4, 1, 1},
		compareCase{"moved codes unreversed fail", qParamsModel(n, true), in, rawTensorPB("y", 2, []int64{n}, ys...), 1, 0, 5, 1})
	runCompareCases(t, cases)

	// The sweep: x = (k + 1/2)·s or k·s nudged by 0–3 ulps, s = 1/16
	// (max x = 25 is the first element), codes across the whole range.
	sw := nearTieSweep(37, []float32{25}, 400, 200)
	sy := qParamsRef(sw)
	sin := tensorPB("x", []int64{int64(len(sw))}, sw...)
	dir := t.TempDir()
	doc := compareJSON(t, dir, qParamsModel(int64(len(sw))), sin, rawTensorPB("y", 2, []int64{int64(len(sw))}, sy...))
	if doc.Fails != 0 || doc.Holds+doc.Inconclusive != len(sw) || doc.Holds == 0 {
		t.Fatalf("sweep: holds/fails/inconclusive %d/%d/%d over %d elements: want no FAIL and some decided", doc.Holds, doc.Fails, doc.Inconclusive, len(sw))
	}
	t.Logf("sweep: %d of %d elements decided, %d inconclusive", doc.Holds, len(sw), doc.Inconclusive)
	// The plant: every element one code off (toward the range's inside);
	// each decided element FAILS, the undecided stay inconclusive.
	off = append([]byte(nil), sy...)
	for i := range off {
		if off[i] == 255 {
			off[i]--
		} else {
			off[i]++
		}
	}
	pd := compareJSON(t, t.TempDir(), qParamsModel(int64(len(sw))), sin, rawTensorPB("y", 2, []int64{int64(len(sw))}, off...))
	if pd.Fails != doc.Holds || pd.Inconclusive != doc.Inconclusive {
		t.Fatalf("sweep plant: fails/inconclusive %d/%d, want %d/%d (every decided element caught)", pd.Fails, pd.Inconclusive, doc.Holds, doc.Inconclusive)
	}
}

// compareJSON writes the model and one data set under dir, runs `tlcheck
// compare --json` and returns its counts (exit 0 or 1).
func compareJSON(t *testing.T, dir string, model pbuf, in, out []byte) (doc struct{ Holds, Fails, Inconclusive int }) {
	t.Helper()
	m := filepath.Join(dir, "model.onnx")
	d := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{m: model, filepath.Join(d, "input_0.pb"): in, filepath.Join(d, "output_0.pb"): out} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, errs := runCmd("compare", "--json", "--onnx", m, "--data", d)
	if code != 0 && code != 1 {
		t.Fatalf("exit %d; stderr %s", code, errs)
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestCompareQDQComputedParamsPerAxis: per-axis QuantizeLinear (axis 0)
// of x [2, 3] with a computed scale s = ReduceMax(x, axes [1])/400 and a
// computed zero point Cast(Round(s·1600), UINT8), then DequantizeLinear
// with the same computed s and z into FLOAT (branch qdyn37). References in
// Go float32: row 0 has max 25 (s = 1/16, z = 100), row 1 max 10 (s =
// 1/40, z = 40); the DQ output is float32((q − z))·s. The codes hold and
// one code off FAILS; the dequantized floats hold and a few ulps off
// FAIL (the smallest k caught, k = 1, 2, 4, …, is logged).
func TestCompareQDQComputedParamsPerAxis(t *testing.T) {
	vi := typedValueInfoPB
	model := func(out string, yt uint64) pbuf {
		g := pbuf(nil).
			bytes(1, pbuf(nodePB("mx", "ReduceMax", []string{"x"}, "mx")).
				bytes(5, pbuf(nil).str(1, "keepdims").varint(3, 0).varint(20, 2)).
				bytes(5, pbuf(nil).str(1, "axes").varint(8, 1).varint(20, 7))).
			bytes(1, nodePB("s", "Div", []string{"mx", "d"}, "s")).
			bytes(1, nodePB("zf", "Mul", []string{"s", "k"}, "zf")).
			bytes(1, nodePB("zr", "Round", []string{"zf"}, "zr")).
			bytes(1, pbuf(nodePB("z", "Cast", []string{"zr"}, "z")).bytes(5, pbuf(nil).str(1, "to").varint(3, 2).varint(20, 2))).
			bytes(1, pbuf(nodePB("q", "QuantizeLinear", []string{"x", "s", "z"}, "q")).bytes(5, pbuf(nil).str(1, "axis").varint(3, 0).varint(20, 2))).
			bytes(1, pbuf(nodePB("dq", "DequantizeLinear", []string{"q", "s", "z"}, "dq")).bytes(5, pbuf(nil).str(1, "axis").varint(3, 0).varint(20, 2))).
			str(2, "qdqaxis").
			bytes(5, tensorPB("d", nil, 400)).bytes(5, tensorPB("k", nil, 1600)).
			bytes(11, vi("x", 1, 2, 3)).bytes(12, vi(out, yt, 2, 3))
		return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
	}
	xs := []float32{1, -3.3, 25, 2.2, -7, 10}
	codes := make([]byte, 6)
	dqs := make([]float32, 6)
	for r := range 2 {
		row := xs[3*r : 3*r+3]
		s := max(row[0], row[1], row[2]) / 400
		z := math.RoundToEven(float64(s * 1600))
		for j, x := range row {
			q := math.Min(255, math.Max(0, math.RoundToEven(float64(x/s))+z))
			codes[3*r+j] = byte(q)
			dqs[3*r+j] = float32(q-z) * s
		}
	}
	if want := []byte{116, 47, 255, 128, 0, 255}; string(codes) != string(want) {
		t.Fatalf("reference codes %v, want %v (x/s + z by hand: 16+100, −52.8+100, 400+100; 88+40, −280+40, 400+40)", codes, want)
	}
	in := tensorPB("x", []int64{2, 3}, xs...)
	offC := append([]byte(nil), codes...)
	offC[3]++
	runCompareCases(t, []compareCase{
		{"per-axis codes hold", model("q", 2), in, rawTensorPB("q", 2, []int64{2, 3}, codes...), 0, 6, 0, 0},
		{"per-axis code off fails", model("q", 2), in, rawTensorPB("q", 2, []int64{2, 3}, offC...), 1, 5, 1, 0},
		{"dequantized holds", model("dq", 1), in, tensorPB("dq", []int64{2, 3}, dqs...), 0, 6, 0, 0},
	})
	// The smallest plant caught on the dequantized output (element 0, 1.0):
	// k ulps up, k = 1, 2, 4, …; compare's 4-ulp tolerance and the scale's
	// division bound hide the first few.
	caught := 0
	for k := 1; k <= 64 && caught == 0; k *= 2 {
		offD := append([]float32(nil), dqs...)
		for range k {
			offD[0] = math.Nextafter32(offD[0], 100)
		}
		if d := compareJSON(t, t.TempDir(), model("dq", 1), in, tensorPB("dq", []int64{2, 3}, offD...)); d.Fails == 1 {
			caught = k
		} else if d.Fails != 0 || d.Holds != 6 {
			t.Fatalf("%d ulps off at element 0: holds/fails/inconclusive %d/%d/%d", k, d.Holds, d.Fails, d.Inconclusive)
		}
	}
	if caught == 0 {
		t.Fatal("a 64-ulp plant on the dequantized output is not caught")
	}
	t.Logf("dequantized output: the smallest plant caught at 1.0 is %d ulps", caught)
}

// nearTieSweep returns 400 inputs: head, then k/16 or (k + 1/2)/16 for k
// drawn uniformly from [−lo, span − lo), each nudged by 0–3 float32 ulps
// up or down — values on and beside the rounding ties of a scale 1/16 (or
// 1/8) quantizer, drawn from seed.
func nearTieSweep(seed int64, head []float32, span, lo int) []float32 {
	r := rand.New(rand.NewSource(seed))
	sw := append([]float32(nil), head...)
	for len(sw) < 400 {
		k := float32(r.Intn(span) - lo)
		if r.Intn(2) == 0 {
			k += 0.5
		}
		x := k / 16
		for range r.Intn(4) {
			x = math.Nextafter32(x, float32(r.Intn(2)*2-1)*100)
		}
		sw = append(sw, x)
	}
	return sw
}

// qParamsNodes is the graph prefix of qParamsModel and selModel: the
// computed scale s = ReduceMax(x)/d, zero point z = Cast<UINT8>(Round(s·k))
// and codes q = QuantizeLinear(x, s, z).
func qParamsNodes() pbuf {
	toU8 := pbuf(nil).str(1, "to").varint(3, 2).varint(20, 2)
	return pbuf(nil).
		bytes(1, pbuf(nodePB("mx", "ReduceMax", []string{"x"}, "mx")).bytes(5, keepdims0())).
		bytes(1, nodePB("s", "Div", []string{"mx", "d"}, "s")).
		bytes(1, nodePB("zf", "Mul", []string{"s", "k"}, "zf")).
		bytes(1, nodePB("zr", "Round", []string{"zf"}, "zr")).
		bytes(1, pbuf(nodePB("z", "Cast", []string{"zr"}, "z")).bytes(5, toU8)).
		bytes(1, nodePB("q", "QuantizeLinear", []string{"x", "s", "z"}, "q"))
}

// keepdims0 is the attribute keepdims = 0 (INT) of a reduction node.
func keepdims0() pbuf { return pbuf(nil).str(1, "keepdims").varint(3, 0).varint(20, 2) }
