package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// d64TensorPB is a DOUBLE TensorProto (dims 1, data_type 2 = 11,
// double_data 10 packed, name 8).
func d64TensorPB(name string, dims []int64, vals ...float64) []byte {
	var m pbuf
	for _, d := range dims {
		m = m.varint(1, uint64(d))
	}
	m = m.varint(2, 11)
	var body []byte
	for _, v := range vals {
		body = protowire.AppendFixed64(body, math.Float64bits(v))
	}
	m = m.bytes(10, body)
	return m.str(8, name)
}

// TestCompareNarrowingCast: Cast(x, to = FLOAT16) of a FLOAT input x =
// 1 + 2^-11 (a binary16 tie, rounding to the even 1, bits 0x3c00) holds;
// two binary16 ulps off (0x3c02) fails (the binary16 evaluation holds the
// FLOAT input as its binary16 rounding, M1, so the bound is one ulp). A
// DOUBLE computation cast to a FLOAT output mixes binary64 and binary32
// arithmetic and is judged per node, each in its own format (fpbound's
// doc, "Mixed binary32 and binary64 graphs"), the report naming the mix.
func TestCompareNarrowingCast(t *testing.T) {
	vi := typedValueInfoPB
	write := func(t *testing.T, g pbuf, in, out []byte) (string, string) {
		dir := t.TempDir()
		model := filepath.Join(dir, "model.onnx")
		data := filepath.Join(dir, "test_data_set_0")
		for p, b := range map[string][]byte{
			model:                              pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 21)),
			filepath.Join(data, "input_0.pb"):  in,
			filepath.Join(data, "output_0.pb"): out,
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return model, data
	}
	castTo := func(to uint64, in, out string) []byte {
		return pbuf(nodePB("c", "Cast", []string{in}, out)).bytes(5, pbuf(nil).str(1, "to").varint(3, to).varint(20, 2))
	}
	g16 := pbuf(nil).bytes(1, castTo(10, "x", "y")).str(2, "c").bytes(11, vi("x", 1, 1)).bytes(12, vi("y", 10, 1))
	for _, c := range []struct {
		name string
		bits uint16
		code int
	}{{"ties to even holds", 0x3c00, 0}, {"two ulps off fails", 0x3c02, 1}} {
		t.Run(c.name, func(t *testing.T) {
			m, d := write(t, g16, tensorPB("x", []int64{1}, 1+0x1p-11), f16TensorPB("y", []int64{1}, c.bits))
			code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s; stdout %s", code, c.code, errs, out)
			}
		})
	}
	t.Run("a DOUBLE computation cast to FLOAT is judged as a mix", func(t *testing.T) {
		g := pbuf(nil).bytes(1, nodePB("s", "Mul", []string{"x", "x"}, "s")).bytes(1, castTo(1, "s", "y")).str(2, "m").
			bytes(11, vi("x", 11, 1)).bytes(12, vi("y", 1, 1))
		m, d := write(t, g, d64TensorPB("x", []int64{1}, 1.5), tensorPB("y", []int64{1}, 2.25))
		code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
		if code != 0 || !strings.Contains(out, "1 hold, 0 fail") || !strings.Contains(out, "format: binary32 and binary64 mixed") {
			t.Fatalf("exit %d, stderr %q, stdout %q; want 0, holding, naming the mix", code, errs, out)
		}
	})
}
