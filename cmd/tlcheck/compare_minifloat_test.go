package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// rawTensorPB is a TensorProto of data type dt whose elements are the
// bytes raw (dims 1, data_type 2, raw_data 9, name 8).
func rawTensorPB(name string, dt uint64, dims []int64, raw ...byte) []byte {
	var m pbuf
	for _, d := range dims {
		m = m.varint(1, uint64(d))
	}
	return m.varint(2, dt).bytes(9, raw).str(8, name)
}

// TestCompareMiniFloatCast: Cast of a recorded FLOAT input to
// FLOAT8E4M3FN, to INT4, and of a FLOAT8E4M3FN input to FLOAT, at opset
// 21, judged exactly. The expected bit patterns are written by hand from
// the formats (E4M3FN: S.EEEE.MMM, bias 7; INT4 two's complement, two to a
// byte, the first in the low nibble): 0.3 = 1.2·2^−2 rounds to 1.25·2^−2
// = 0.3125 (0 0101 010 = 0x2A); 10^6 saturates to 448 (0x7E), or is NaN
// (0x7F) with saturate = 0; −10^−7 is −0 (0x80); NaN is 0x7F. A planted
// fault — one code off (0x2B = 0.34375), 448 where saturate = 0 makes
// NaN, a truncated integer off by one, a decoded value one float32 ulp
// off — fails; an INT4 element out of range (9: "undefined if OOR") is
// inconclusive whatever is recorded.
func TestCompareMiniFloatCast(t *testing.T) {
	vi := typedValueInfoPB
	model := func(from, to uint64, saturate int, n int64) pbuf {
		node := pbuf(nodePB("c", "Cast", []string{"x"}, "y")).bytes(5, pbuf(nil).str(1, "to").varint(3, to).varint(20, 2))
		if saturate >= 0 {
			node = node.bytes(5, pbuf(nil).str(1, "saturate").varint(3, uint64(saturate)).varint(20, 2))
		}
		g := pbuf(nil).bytes(1, node).str(2, "c").bytes(11, vi("x", from, n)).bytes(12, vi("y", to, n))
		return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 21))
	}
	inF := tensorPB("x", []int64{4}, 0.3, 1e6, -1e-7, math.Float32frombits(0x7fc00000))
	cases := []compareCase{
		{"FLOAT to E4M3FN holds", model(1, 17, -1, 4), inF, rawTensorPB("y", 17, []int64{4}, 0x2A, 0x7E, 0x80, 0x7F), 0, 4, 0, 0},
		{"one code off fails", model(1, 17, -1, 4), inF, rawTensorPB("y", 17, []int64{4}, 0x2B, 0x7E, 0x80, 0x7F), 1, 3, 1, 0},
		{"saturate=0: NaN holds", model(1, 17, 0, 4), inF, rawTensorPB("y", 17, []int64{4}, 0x2A, 0x7F, 0x80, 0x7F), 0, 4, 0, 0},
		{"saturate=0: 448 fails", model(1, 17, 0, 4), inF, rawTensorPB("y", 17, []int64{4}, 0x2A, 0x7E, 0x80, 0x7F), 1, 3, 1, 0},
		{"FLOAT to INT4: in range exact, 9 undefined", model(1, 22, -1, 3), tensorPB("x", []int64{3}, 3.7, -2.2, 9),
			rawTensorPB("y", 22, []int64{3}, 0xE3, 0x07), 0, 2, 0, 1},
		{"FLOAT to INT4 off by one fails", model(1, 22, -1, 3), tensorPB("x", []int64{3}, 3.7, -2.2, 9),
			rawTensorPB("y", 22, []int64{3}, 0xE4, 0x07), 1, 1, 1, 1},
		{"E4M3FN to FLOAT holds", model(17, 1, -1, 2), rawTensorPB("x", 17, []int64{2}, 0x2A, 0xFF), tensorPB("y", []int64{2}, 0.3125, math.Float32frombits(0x7fc00000)), 0, 2, 0, 0},
		{"E4M3FN to FLOAT one ulp off fails", model(17, 1, -1, 2), rawTensorPB("x", 17, []int64{2}, 0x2A, 0xFF), tensorPB("y", []int64{2}, math.Float32frombits(0x3ea00001), math.Float32frombits(0x7fc00000)), 1, 1, 1, 0},
	}
	runCompareCases(t, cases)
}

// compareCase is one single-data-set compare run: a model, its input and
// recorded output (TensorProto bytes), the exit code and the counts the
// JSON document must report.
type compareCase struct {
	name                 string
	model                pbuf
	in, out              []byte
	code                 int
	holds, fails, inconc int
}

// runCompareCases writes each case out as model.onnx and
// test_data_set_0/{input_0,output_0}.pb, runs `tlcheck compare --json` on it
// and checks the exit code and the holds/fails/inconclusive counts.
func runCompareCases(t *testing.T, cases []compareCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			m := filepath.Join(dir, "model.onnx")
			d := filepath.Join(dir, "test_data_set_0")
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for p, b := range map[string][]byte{m: c.model, filepath.Join(d, "input_0.pb"): c.in, filepath.Join(d, "output_0.pb"): c.out} {
				if err := os.WriteFile(p, b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errs := runCmd("compare", "--json", "--onnx", m, "--data", d)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s; stdout %s", code, c.code, errs, out)
			}
			var doc struct{ Holds, Fails, Inconclusive int }
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Holds != c.holds || doc.Fails != c.fails || doc.Inconclusive != c.inconc {
				t.Errorf("holds/fails/inconclusive = %d/%d/%d, want %d/%d/%d\n%s", doc.Holds, doc.Fails, doc.Inconclusive, c.holds, c.fails, c.inconc, out)
			}
		})
	}
}
