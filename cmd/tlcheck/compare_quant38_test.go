package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dqlModel is (y, y_scale, y_zero_point) = DynamicQuantizeLinear(2·x)
// (opset 11), x a FLOAT [n] input: the Mul makes the operand a value
// computed by an op that may round (branch quant38's chain, not the fold
// of a recorded input; an Add whose sums are exact would be folded,
// onnx/known.go). outs names the graph outputs among y, s, z.
func dqlModel(n int64, outs ...string) pbuf {
	vi := typedValueInfoPB
	g := pbuf(nil).
		bytes(1, nodePB("u", "Mul", []string{"x", "q"}, "u")).
		bytes(1, nodePB("dql", "DynamicQuantizeLinear", []string{"u"}, "y", "s", "z")).
		str(2, "dql").bytes(5, tensorPB("q", nil, 2)).bytes(11, vi("x", 1, n))
	for _, o := range outs {
		switch o {
		case "y":
			g = g.bytes(12, vi("y", 2, n))
		case "s":
			g = g.bytes(12, vi("s", 1))
		case "z":
			g = g.bytes(12, vi("z", 2))
		}
	}
	return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 11))
}

// dqlRef is the operator text in Go's float32 arithmetic (another
// implementation: ONNX's reference op_dynamic_quantize_linear.py computes
// each step in numpy float32 the same way): u = 2·x, the scale
// (max(0, max u) − min(0, min u))/255, the zero point
// rne(clamp(0 − min/scale, 0, 255)), y = clamp(rne(u/scale) + zp, 0, 255).
func dqlRef(xs []float32) (ys []byte, s float32, z byte) {
	us := make([]float32, len(xs))
	var mx, mn float32
	for i, x := range xs {
		us[i] = x * 2
		mx, mn = max(mx, us[i]), min(mn, us[i])
	}
	s = (mx - mn) / 255
	izp := 0 - mn/s
	zf := math.RoundToEven(math.Min(255, math.Max(0, float64(izp))))
	ys = make([]byte, len(xs))
	for i, u := range us {
		ys[i] = byte(math.Min(255, math.Max(0, math.RoundToEven(float64(u/s))+zf)))
	}
	return ys, s, byte(zf)
}

// compareOutputs writes model and the data set (input_0 and the outputs
// in order) under a temporary directory and runs `tlcheck compare --json`.
func compareOutputs(t *testing.T, model pbuf, in []byte, outs ...[]byte) (code int, doc struct{ Holds, Fails, Inconclusive int }, stderr string) {
	t.Helper()
	dir := t.TempDir()
	m := filepath.Join(dir, "model.onnx")
	d := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{m: model, filepath.Join(d, "input_0.pb"): in}
	for k, o := range outs {
		files[filepath.Join(d, fmt.Sprintf("output_%d.pb", k))] = o
	}
	for p, b := range files {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, errs := runCmd("compare", "--json", "--onnx", m, "--data", d)
	if code == 0 || code == 1 {
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
	}
	return code, doc, errs
}

// TestCompareDynamicQuantizeComputed: DynamicQuantizeLinear of a computed
// x (dqlModel) judged through tlcheck compare against dqlRef. u = 2·x
// spans [−8, 23.875], so the scale is 31.875/255 = 1/8 and the zero point
// 64 exactly (checked by hand below); u = 1, −3.3, 2.7 give codes 72,
// 38, 86; u = 1/16 lies on the tie 1/2 (rne: 0 → 64): the enclosure of
// the computed scale holds the jump, so inconclusive, never a FAIL. The
// codes and the zero point hold, one code off at any decided element (and
// in the zero point) FAILS. A 400-input sweep within 0–3 float32 ulps of
// ties and codes: no FAIL, and every decided element planted one code off
// FAILS.
func TestCompareDynamicQuantizeComputed(t *testing.T) {
	xs := []float32{11.9375, -4, 0.5, -1.65, 1.35, 1.0 / 32}
	ys, s, z := dqlRef(xs)
	if s != 0.125 || z != 64 || string(ys) != string([]byte{255, 0, 72, 38, 86, 64}) {
		t.Fatalf("reference: codes %v, scale %v, zero point %d; want [255 0 72 38 86 64], 1/8, 64 (by hand: 191+64, −64+64, 8+64, −26.4+64, 21.6+64, tie 1/2 → 0, +64)", ys, s, z)
	}
	n := int64(len(xs))
	in := tensorPB("x", []int64{n}, xs...)
	out := func(ys []byte, z byte) [][]byte {
		return [][]byte{rawTensorPB("y", 2, []int64{n}, ys...), tensorPB("s", nil, s), rawTensorPB("z", 2, nil, z)}
	}
	code, doc, errs := compareOutputs(t, dqlModel(n, "y", "s", "z"), in, out(ys, z)...)
	if code != 0 || doc.Holds != 7 || doc.Fails != 0 || doc.Inconclusive != 1 {
		t.Fatalf("hold case: exit %d, holds/fails/inconclusive %d/%d/%d, want 0, 7/0/1 (the tie inconclusive); %s", code, doc.Holds, doc.Fails, doc.Inconclusive, errs)
	}
	for j := range 5 { // the decided codes, one off
		off := append([]byte(nil), ys...)
		if off[j] == 255 {
			off[j]--
		} else {
			off[j]++
		}
		if code, doc, _ := compareOutputs(t, dqlModel(n, "y", "s", "z"), in, out(off, z)...); code != 1 || doc.Fails != 1 {
			t.Errorf("code %d one off: exit %d, fails %d; want 1, 1", j, code, doc.Fails)
		}
	}
	if code, doc, _ := compareOutputs(t, dqlModel(n, "y", "s", "z"), in, out(ys, z+1)...); code != 1 || doc.Fails != 1 {
		t.Errorf("zero point one off: exit %d, fails %d; want 1, 1", code, doc.Fails)
	}

	// The sweep: u = (k + 1/2)/8 or k/8 nudged by 0–3 ulps inside [−8,
	// 23.875] (the first two elements fix the scale and the zero point).
	sw := nearTieSweep(38, []float32{11.9375, -4}, 250, 62)
	sy, ss, _ := dqlRef(sw)
	if ss != 0.125 {
		t.Fatalf("sweep scale %v, want 1/8", ss)
	}
	m := int64(len(sw))
	sin := tensorPB("x", []int64{m}, sw...)
	code, doc, errs = compareOutputs(t, dqlModel(m, "y"), sin, rawTensorPB("y", 2, []int64{m}, sy...))
	if code != 0 || doc.Fails != 0 || doc.Holds == 0 || doc.Holds+doc.Inconclusive != len(sw) {
		t.Fatalf("sweep: exit %d, holds/fails/inconclusive %d/%d/%d over %d: want no FAIL and some decided; %s", code, doc.Holds, doc.Fails, doc.Inconclusive, len(sw), errs)
	}
	t.Logf("sweep: %d of %d decided, %d inconclusive", doc.Holds, len(sw), doc.Inconclusive)
	off := append([]byte(nil), sy...)
	for i := range off {
		if off[i] == 255 {
			off[i]--
		} else {
			off[i]++
		}
	}
	_, pd, _ := compareOutputs(t, dqlModel(m, "y"), sin, rawTensorPB("y", 2, []int64{m}, off...))
	if pd.Fails != doc.Holds || pd.Inconclusive != doc.Inconclusive {
		t.Fatalf("sweep plant: fails/inconclusive %d/%d, want %d/%d (every decided element caught)", pd.Fails, pd.Inconclusive, doc.Holds, doc.Inconclusive)
	}
}

// selModel reads qParamsModel's computed codes q (UINT8 [n]) with op:
// Max/Min(q, 100), ReduceMax/ReduceMin(q) (keepdims 0, a scalar), or
// Max(q, f) with f a FLOAT input (refused).
func selModel(n int64, op string) pbuf {
	vi := typedValueInfoPB
	g := qParamsNodes()
	yd := []int64{n}
	switch op {
	case "Max", "Min":
		g = g.bytes(1, nodePB("sel", op, []string{"q", "c"}, "y")).bytes(5, rawTensorPB("c", 2, nil, 100))
	case "ReduceMax", "ReduceMin":
		g = g.bytes(1, pbuf(nodePB("sel", op, []string{"q"}, "y")).bytes(5, keepdims0()))
		yd = nil
	case "MaxFloat":
		g = g.bytes(1, nodePB("sel", "Max", []string{"q", "x"}, "y"))
	}
	g = g.str(2, "sel").bytes(5, tensorPB("d", nil, 400)).bytes(5, tensorPB("k", nil, 1600)).
		bytes(11, vi("x", 1, n)).bytes(12, vi("y", 2, yd...))
	return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
}

// TestCompareSelectComputedInt: Max, Min, ReduceMax and ReduceMin of the
// computed codes of TestCompareQuantizeComputedParams (qParamsRef: 116,
// 47, 143, 255, 0, and 100 at the tie, inconclusive). The selections are
// computed here from the reference codes; each holds, one off FAILS where
// the selected code is decided, and an element that selects the
// inconclusive code stays inconclusive. Max of a code and a FLOAT is
// refused (exit 2, one line naming the node).
func TestCompareSelectComputedInt(t *testing.T) {
	xs := []float32{1, -3.3, 2.7, 25, -30, 1.0 / 32}
	q := qParamsRef(xs)
	n := int64(len(xs))
	in := tensorPB("x", []int64{n}, xs...)
	for _, op := range []string{"Max", "Min"} {
		y := make([]byte, n)
		for i, c := range q {
			if op == "Max" {
				y[i] = max(c, 100)
			} else {
				y[i] = min(c, 100)
			}
		}
		code, doc, errs := compareOutputs(t, selModel(n, op), in, rawTensorPB("y", 2, []int64{n}, y...))
		if code != 0 || doc.Holds != 5 || doc.Inconclusive != 1 {
			t.Fatalf("%s: exit %d, holds/fails/inconclusive %d/%d/%d, want 0, 5/0/1; %s", op, code, doc.Holds, doc.Fails, doc.Inconclusive, errs)
		}
		for j := range 5 {
			off := append([]byte(nil), y...)
			off[j] ^= 1
			if code, doc, _ := compareOutputs(t, selModel(n, op), in, rawTensorPB("y", 2, []int64{n}, off...)); code != 1 || doc.Fails != 1 {
				t.Errorf("%s element %d one off: exit %d, fails %d; want 1, 1", op, j, code, doc.Fails)
			}
		}
	}
	// ReduceMax selects 255 (decided); ReduceMin selects 0 (decided): the
	// inconclusive 100 lies strictly inside, and its hull ({100, 101} at
	// most, one code apart) is no contender — but the bound of a maximum is
	// the largest of its operands' (fpbound), so both stay undecided.
	for _, c := range []struct {
		op   string
		want byte
	}{{"ReduceMax", 255}, {"ReduceMin", 0}} {
		code, doc, errs := compareOutputs(t, selModel(n, c.op), in, rawTensorPB("y", 2, nil, c.want))
		if code != 0 || doc.Fails != 0 || doc.Holds+doc.Inconclusive != 1 {
			t.Fatalf("%s: exit %d, holds/fails/inconclusive %d/%d/%d; %s", c.op, code, doc.Holds, doc.Fails, doc.Inconclusive, errs)
		}
		t.Logf("%s: holds/inconclusive %d/%d", c.op, doc.Holds, doc.Inconclusive)
	}
	// On the decided codes alone (drop the tie element) both reductions hold
	// and one off FAILS.
	xd := xs[:5]
	qd := qParamsRef(xd)
	ind := tensorPB("x", []int64{5}, xd...)
	for _, c := range []struct {
		op   string
		want byte
	}{{"ReduceMax", max(qd[0], qd[1], qd[2], qd[3], qd[4])}, {"ReduceMin", min(qd[0], qd[1], qd[2], qd[3], qd[4])}} {
		if code, doc, errs := compareOutputs(t, selModel(5, c.op), ind, rawTensorPB("y", 2, nil, c.want)); code != 0 || doc.Holds != 1 {
			t.Fatalf("%s of decided codes: exit %d, holds %d; %s", c.op, code, doc.Holds, errs)
		}
		if code, doc, _ := compareOutputs(t, selModel(5, c.op), ind, rawTensorPB("y", 2, nil, c.want^1)); code != 1 || doc.Fails != 1 {
			t.Errorf("%s one off: exit %d, fails %d; want 1, 1", c.op, code, doc.Fails)
		}
	}
	code, _, errs := compareOutputs(t, selModel(n, "MaxFloat"), in, rawTensorPB("y", 2, []int64{n}, q...))
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "sel") {
		t.Fatalf("Max of a code and a FLOAT: exit %d, stderr %q; want 2 and one line naming the node", code, errs)
	}
	t.Logf("refusal: %s", strings.TrimSpace(errs))
}

// TestCompareDynamicQuantizeComputedZero: x all zero makes the text's
// scale 0 and its zero point 0/0 (ONNX's reference takes 1/255 instead):
// no exact value, so no verdict on any element — never a hold or a FAIL.
func TestCompareDynamicQuantizeComputedZero(t *testing.T) {
	in := tensorPB("x", []int64{3}, 0, 0, 0)
	code, doc, errs := compareOutputs(t, dqlModel(3, "y"), in, rawTensorPB("y", 2, []int64{3}, 0, 0, 0))
	t.Logf("exit %d, holds/fails/inconclusive %d/%d/%d, stderr %q", code, doc.Holds, doc.Fails, doc.Inconclusive, errs)
	if code != 0 || doc.Holds != 0 || doc.Fails != 0 || doc.Inconclusive != 3 {
		t.Fatalf("x all zero: exit %d, holds/fails/inconclusive %d/%d/%d: want 0, 0/0/3 (no verdict)", code, doc.Holds, doc.Fails, doc.Inconclusive)
	}
}

// blockedModel is y = QuantizeLinear(x, s, axis 1, block_size block)
// (opset 21, UINT8) of x FLOAT [2, 4] with the computed blocked scale s =
// ReduceMax(Reshape(x, [2, 2, 2]), axes [2])/200, shape [2, 2]: each block
// of two along axis 1 quantized by its own maximum over 200.
func blockedModel(block int64) pbuf {
	vi := typedValueInfoPB
	g := pbuf(nil).
		bytes(1, nodePB("rs", "Reshape", []string{"x", "shp"}, "r")).
		bytes(1, pbuf(nodePB("mx", "ReduceMax", []string{"r", "ax"}, "mx")).bytes(5, keepdims0())).
		bytes(1, nodePB("s", "Div", []string{"mx", "d"}, "s")).
		bytes(1, pbuf(nodePB("q", "QuantizeLinear", []string{"x", "s"}, "y")).
			bytes(5, pbuf(nil).str(1, "axis").varint(3, 1).varint(20, 2)).
			bytes(5, pbuf(nil).str(1, "block_size").varint(3, uint64(block)).varint(20, 2))).
		str(2, "blocked").
		bytes(5, rawTensorPB("shp", 7, []int64{3}, i64s(2, 2, 2)...)).
		bytes(5, rawTensorPB("ax", 7, []int64{1}, i64s(2)...)).
		bytes(5, tensorPB("d", nil, 200)).
		bytes(11, vi("x", 1, 2, 4)).bytes(12, vi("y", 2, 2, 4))
	return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 21))
}

// TestCompareQuantizeBlockedComputed: blocked QuantizeLinear with a
// computed scale (blockedModel, branch quant38). Reference in Go float32:
// per block s = max/200, code clamp(rne(x/s), 0, 255). The codes hold,
// one code off at each element FAILS, the codes of the per-column reading
// (element j reading scale j mod 2, not ⌊j/2⌋) FAIL, and a block size
// whose scale shape does not fit is refused (exit 2, one line).
func TestCompareQuantizeBlockedComputed(t *testing.T) {
	xs := []float32{1, 4, 2, 8, 3, 1.5, 0.5, 10}
	ref := func(blockOf func(j int) int) []byte {
		ys := make([]byte, 8)
		for r := range 2 {
			for j := range 4 {
				b := blockOf(j)
				s := max(xs[4*r+2*b], xs[4*r+2*b+1]) / 200
				ys[4*r+j] = byte(math.Min(255, math.Max(0, math.RoundToEven(float64(xs[4*r+j]/s)))))
			}
		}
		return ys
	}
	ys := ref(func(j int) int { return j / 2 })
	if want := []byte{50, 200, 50, 200, 200, 100, 10, 200}; string(ys) != string(want) {
		t.Fatalf("reference codes %v, want %v (by hand: 1/0.02, 4/0.02, 2/0.04, 8/0.04; 3/0.015, 1.5/0.015, 0.5/0.05, 10/0.05)", ys, want)
	}
	in := tensorPB("x", []int64{2, 4}, xs...)
	cases := []compareCase{{"blocked codes hold", blockedModel(2), in, rawTensorPB("y", 2, []int64{2, 4}, ys...), 0, 8, 0, 0}}
	for j := range 8 {
		off := append([]byte(nil), ys...)
		off[j]++
		cases = append(cases, compareCase{"one code off fails", blockedModel(2), in, rawTensorPB("y", 2, []int64{2, 4}, off...), 1, 7, 1, 0})
	}
	wrong := ref(func(j int) int { return j % 2 })
	nw := 0
	for j := range wrong {
		if wrong[j] != ys[j] {
			nw++
		}
	}
	cases = append(cases, compareCase{"per-column reading fails", blockedModel(2), in, rawTensorPB("y", 2, []int64{2, 4}, wrong...), 1, 8 - nw, nw, 0})
	runCompareCases(t, cases)
	code, _, errs := compareOutputs(t, blockedModel(1), in, rawTensorPB("y", 2, []int64{2, 4}, ys...))
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "block") {
		t.Fatalf("block size 1 with a [2, 2] scale: exit %d, stderr %q; want 2 and one line", code, errs)
	}
	t.Logf("refusal: %s", strings.TrimSpace(errs))
}

// blockedDQModel is the round trip z = DequantizeLinear(QuantizeLinear(x,
// s, zp), s, zp) (opset 21, UINT8) of x FLOAT [2, 4] with the computed
// blocked scale s = ReduceMax(Reshape(x, [2, 2, 2]), axes [2])/200, shape
// [2, 2], and the computed blocked zero point zp = QuantizeLinear(s, 0.001)
// (a computed UINT8 [2, 2]); QuantizeLinear blocks by qBlock and
// DequantizeLinear (node "dq") by dqBlock along axis 1 (branch dq38b).
func blockedDQModel(qBlock, dqBlock int64) pbuf {
	vi := typedValueInfoPB
	blocked := func(n pbuf, block int64) pbuf {
		return n.bytes(5, pbuf(nil).str(1, "axis").varint(3, 1).varint(20, 2)).
			bytes(5, pbuf(nil).str(1, "block_size").varint(3, uint64(block)).varint(20, 2))
	}
	g := pbuf(nil).
		bytes(1, nodePB("rs", "Reshape", []string{"x", "shp"}, "r")).
		bytes(1, pbuf(nodePB("mx", "ReduceMax", []string{"r", "ax"}, "mx")).bytes(5, keepdims0())).
		bytes(1, nodePB("s", "Div", []string{"mx", "d"}, "s")).
		bytes(1, nodePB("zq", "QuantizeLinear", []string{"s", "c"}, "zp")).
		bytes(1, blocked(pbuf(nodePB("q", "QuantizeLinear", []string{"x", "s", "zp"}, "y")), qBlock)).
		bytes(1, blocked(pbuf(nodePB("dq", "DequantizeLinear", []string{"y", "s", "zp"}, "z")), dqBlock)).
		str(2, "blockeddq").
		bytes(5, rawTensorPB("shp", 7, []int64{3}, i64s(2, 2, 2)...)).
		bytes(5, rawTensorPB("ax", 7, []int64{1}, i64s(2)...)).
		bytes(5, tensorPB("d", nil, 200)).
		bytes(5, tensorPB("c", nil, 0.001)).
		bytes(11, vi("x", 1, 2, 4)).bytes(12, vi("z", 1, 2, 4))
	return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 21))
}

// TestCompareDequantizeBlockedComputed: blocked DequantizeLinear with a
// computed scale and a computed zero point (blockedDQModel, branch dq38b).
// Reference in Go float32, not the code under test: per block b of row r,
// s = max/200, zp = clamp(rne(s/0.001), 0, 255), code = clamp(rne(x/s) +
// zp, 0, 255), z = fl32(code − zp)·s. The outputs hold; one quantization
// step (+s of the element's block) on any one element FAILS; the
// per-column reading (DequantizeLinear's element j reading s and zp of
// j mod 2, not ⌊j/2⌋) FAILS; a DequantizeLinear block size whose scale
// shape does not fit is refused (exit 2, one line naming node "dq").
func TestCompareDequantizeBlockedComputed(t *testing.T) {
	xs := []float32{1, 4, 2, 8, 3, 1.5, 0.5, 10}
	sc := func(r, b int) (s, zp float32) {
		s = max(xs[4*r+2*b], xs[4*r+2*b+1]) / 200
		c := float32(0.001)
		return s, float32(math.Min(255, math.Max(0, math.RoundToEven(float64(s/c)))))
	}
	codes := make([]float32, 8)
	for r := range 2 {
		for j := range 4 {
			s, zp := sc(r, j/2)
			codes[4*r+j] = float32(math.Min(255, math.Max(0, math.RoundToEven(float64(xs[4*r+j]/s))+float64(zp))))
		}
	}
	if want := []float32{70, 220, 90, 240, 215, 115, 60, 250}; fmt.Sprint(codes) != fmt.Sprint(want) {
		t.Fatalf("reference codes %v, want %v (by hand: zero points 0.02/0.001 = 20, 40, 15, 50 plus the codes 50, 200, 50, 200; 200, 100, 10, 200)", codes, want)
	}
	deq := func(blockOf func(j int) int) []float32 {
		zs := make([]float32, 8)
		for r := range 2 {
			for j := range 4 {
				s, zp := sc(r, blockOf(j))
				zs[4*r+j] = (codes[4*r+j] - zp) * s
			}
		}
		return zs
	}
	zs := deq(func(j int) int { return j / 2 })
	in := tensorPB("x", []int64{2, 4}, xs...)
	out := func(vs []float32) []byte { return tensorPB("z", []int64{2, 4}, vs...) }
	cases := []compareCase{{"blocked dequantized values hold", blockedDQModel(2, 2), in, out(zs), 0, 8, 0, 0}}
	for j := range 8 {
		off := append([]float32(nil), zs...)
		s, _ := sc(j/4, j%4/2)
		off[j] += s
		cases = append(cases, compareCase{"one step off fails", blockedDQModel(2, 2), in, out(off), 1, 7, 1, 0})
	}
	wrong := deq(func(j int) int { return j % 2 })
	nw := 0
	for j := range wrong {
		if wrong[j] != zs[j] {
			nw++
		}
	}
	if nw == 0 {
		t.Fatal("the per-column reading gives the blocked values: no test")
	}
	cases = append(cases, compareCase{"per-column reading fails", blockedDQModel(2, 2), in, out(wrong), 1, 8 - nw, nw, 0})
	runCompareCases(t, cases)
	// Sensitivity: per element, the smallest plant of 2^k float32 ulps
	// (k = 0..6) that FAILS, every other element held exact.
	var caught []int
	for j := range 8 {
		got := -1
		for k := 0; k <= 6 && got < 0; k++ {
			off := append([]float32(nil), zs...)
			u := math.Float32frombits(math.Float32bits(zs[j])+1) - zs[j]
			off[j] += float32(int(1)<<k) * u
			if code, doc, _ := compareOutputs(t, blockedDQModel(2, 2), in, out(off)); code == 1 && doc.Fails == 1 {
				got = 1 << k
			}
		}
		if got < 0 {
			t.Errorf("element %d: a plant of 64 float32 ulps is not caught", j)
		}
		caught = append(caught, got)
	}
	t.Logf("smallest plant caught per element (float32 ulps, -1: none up to 64): %v; per-column reading differs at %d of 8", caught, nw)
	code, _, errs := compareOutputs(t, blockedDQModel(2, 1), in, out(zs))
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, `"dq"`) || !strings.Contains(errs, "block") {
		t.Fatalf("DequantizeLinear block size 1 with a [2, 2] scale: exit %d, stderr %q; want 2 and one line naming node \"dq\"", code, errs)
	}
	t.Logf("refusal: %s", strings.TrimSpace(errs))
}

// i64s is vs as ONNX's raw_data of an INT64 tensor (little-endian).
func i64s(vs ...int64) []byte {
	b := make([]byte, 0, 8*len(vs))
	for _, v := range vs {
		for k := range 8 {
			b = append(b, byte(v>>(8*k)))
		}
	}
	return b
}
