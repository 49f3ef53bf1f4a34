package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// ieeeModel writes a one-node model y = op(x) (x, y FLOAT [n]), input_0.pb
// = in and output_0.pb = rec, and returns the model's and data set's paths.
func ieeeModel(t *testing.T, op string, in, rec []float32) (model, data string) {
	t.Helper()
	dir := t.TempDir()
	n := int64(len(in))
	g := pbuf(nil).
		bytes(1, nodePB("n", op, []string{"x"}, "y")).
		str(2, "ieee").
		bytes(11, valueInfoPB("x", n)).
		bytes(12, valueInfoPB("y", n))
	model = filepath.Join(dir, "model.onnx")
	data = filepath.Join(dir, "test_data_set_0")
	for p, b := range map[string][]byte{
		model:                              pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13)),
		filepath.Join(data, "input_0.pb"):  tensorPB("x", []int64{n}, in...),
		filepath.Join(data, "output_0.pb"): tensorPB("y", []int64{n}, rec...),
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

// TestCompareIEEE: ONNX's IEEE results at NaN, ±∞ and out-of-domain
// inputs are the reference (sqrt(−1) = NaN, log(0) = −∞, relu(−∞) = 0, by
// IEEE 754 / C99 Annex F, written by hand), the other elements keep their
// exact verdicts, and a number recorded where NaN is required — a planted
// fault — fails.
func TestCompareIEEE(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	cases := []struct {
		name                 string
		op                   string
		in, rec              []float32
		code                 int
		holds, fails, inconc int
	}{
		{"sqrt of −1 recorded NaN holds", "Sqrt", []float32{-1, 4}, []float32{nan, 2}, 0, 2, 0, 0},
		{"sqrt of −1 recorded 0 fails (planted)", "Sqrt", []float32{-1, 4}, []float32{0, 2}, 1, 1, 1, 0},
		{"a wrong finite element beside a NaN still fails", "Sqrt", []float32{-1, 4}, []float32{nan, 2.5}, 1, 1, 1, 0},
		{"log of 0 is −∞, of −2 NaN", "Log", []float32{0, -2, 1}, []float32{-inf, nan, 0}, 0, 3, 0, 0},
		{"log of 0 recorded +∞ fails", "Log", []float32{0, 1}, []float32{inf, 0}, 1, 1, 1, 0},
		{"relu of NaN, +∞, −∞, 1", "Relu", []float32{nan, inf, -inf, 1}, []float32{nan, inf, 0, 1}, 0, 4, 0, 0},
		{"relu of −∞ recorded NaN fails", "Relu", []float32{-inf, 1}, []float32{nan, 1}, 1, 1, 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, d := ieeeModel(t, c.op, c.in, c.rec)
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

// int64TensorPB is an INT64 TensorProto (dims 1, data_type 2 = 7,
// int64_data 7 packed, name 8).
func int64TensorPB(name string, dims []int64, vals ...int64) []byte {
	var m pbuf
	for _, d := range dims {
		m = m.varint(1, uint64(d))
	}
	m = m.varint(2, 7)
	var body []byte
	for _, v := range vals {
		body = protowire.AppendVarint(body, uint64(v))
	}
	m = m.bytes(7, body)
	return m.str(8, name)
}

// TestCompareExactOutputs: an integer output decided at import (ArgMax of
// a graph input, on its recorded value) is compared exactly — the right
// index holds, a planted wrong one fails — beside a float output.
func TestCompareExactOutputs(t *testing.T) {
	// x = (1, 7, 7, 2): argmax = 1 (the first of the tied maxima, by hand);
	// y = Relu(x) = x.
	for _, c := range []struct {
		idx   int64
		code  int
		fails int
	}{{1, 0, 0}, {2, 1, 1}} {
		dir := t.TempDir()
		vi := typedValueInfoPB
		argmax := pbuf(nodePB("am", "ArgMax", []string{"x"}, "i")).bytes(5, pbuf(nil).str(1, "keepdims").varint(3, 0).varint(20, 2))
		g := pbuf(nil).
			bytes(1, nodePB("r", "Relu", []string{"x"}, "y")).
			bytes(1, argmax).
			str(2, "exact").
			bytes(11, vi("x", 1, 4)).
			bytes(12, vi("y", 1, 4)).
			bytes(12, vi("i", 7))
		model := filepath.Join(dir, "model.onnx")
		data := filepath.Join(dir, "test_data_set_0")
		for p, b := range map[string][]byte{
			model:                              pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13)),
			filepath.Join(data, "input_0.pb"):  tensorPB("x", []int64{4}, 1, 7, 7, 2),
			filepath.Join(data, "output_0.pb"): tensorPB("y", []int64{4}, 1, 7, 7, 2),
			filepath.Join(data, "output_1.pb"): int64TensorPB("i", nil, c.idx),
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCmd("compare", "--json", "--onnx", model, "--data", data)
		if code != c.code {
			t.Fatalf("index %d: exit %d, want %d; stderr %s; stdout %s", c.idx, code, c.code, errs, out)
		}
		var doc struct{ Holds, Fails int }
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Holds != 5-c.fails || doc.Fails != c.fails {
			t.Errorf("index %d: holds/fails = %d/%d, want %d/%d", c.idx, doc.Holds, doc.Fails, 5-c.fails, c.fails)
		}
	}
}

// doubleTensorPB is a DOUBLE TensorProto (dims 1, data_type 2 = 11,
// double_data 10 packed, name 8).
func doubleTensorPB(name string, dims []int64, vals ...float64) []byte {
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

// TestCompareDouble: a graph computing in binary64 is judged against the
// binary64 bound on the recorded float64 values: the exact square holds,
// one perturbed by 10⁻¹³ relative (far outside binary64's bound of about
// 2⁻⁵³ relative, far inside binary32's) fails; a graph that computes
// FLOAT values and casts them to DOUBLE is judged as a mix with binary32's
// constants (fpbound's doc, "Mixed binary32 and binary64 graphs"), and one
// with a FLOAT and a FLOAT16 output is refused in one line naming the mix.
func TestCompareDouble(t *testing.T) {
	vi := typedValueInfoPB
	write := func(t *testing.T, g pbuf, in []byte, out []byte) (string, string) {
		dir := t.TempDir()
		model := filepath.Join(dir, "model.onnx")
		data := filepath.Join(dir, "test_data_set_0")
		for p, b := range map[string][]byte{
			model:                              pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13)),
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
	sq := pbuf(nil).bytes(1, nodePB("sq", "Mul", []string{"x", "x"}, "y")).str(2, "d").bytes(11, vi("x", 11, 2)).bytes(12, vi("y", 11, 2))
	// x = (0.1, 3): 0.1·0.1 is not a binary64 value; its rounding is.
	x0 := 0.1
	for _, c := range []struct {
		name string
		rec  []float64
		code int
	}{
		{"the binary64 square holds", []float64{x0 * x0, 9}, 0},
		{"10⁻¹³ relative off fails", []float64{x0 * x0 * (1 + 1e-13), 9}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, d := write(t, sq, doubleTensorPB("x", []int64{2}, x0, 3), doubleTensorPB("y", []int64{2}, c.rec...))
			code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s; stdout %s", code, c.code, errs, out)
			}
		})
	}
	t.Run("a FLOAT computation cast to DOUBLE is judged as a mix", func(t *testing.T) {
		cast := pbuf(nodePB("c", "Cast", []string{"r"}, "y")).bytes(5, pbuf(nil).str(1, "to").varint(3, 11).varint(20, 2))
		g := pbuf(nil).bytes(1, nodePB("r", "Relu", []string{"x"}, "r")).bytes(1, cast).str(2, "m").bytes(11, vi("x", 1, 2)).bytes(12, vi("y", 11, 2))
		m, d := write(t, g, tensorPB("x", []int64{2}, 1, 2), doubleTensorPB("y", []int64{2}, 1, 2))
		code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
		if code != 0 || !strings.Contains(out, "2 hold, 0 fail") || !strings.Contains(out, "format: binary32 and binary64 mixed") {
			t.Fatalf("exit %d, stderr %q, stdout %q; want 0, holding, naming the mix", code, errs, out)
		}
	})
	t.Run("a FLOAT and a FLOAT16 output are refused", func(t *testing.T) {
		cast := pbuf(nodePB("c", "Cast", []string{"x"}, "h")).bytes(5, pbuf(nil).str(1, "to").varint(3, 10).varint(20, 2))
		g := pbuf(nil).bytes(1, nodePB("r", "Relu", []string{"x"}, "y")).bytes(1, cast).str(2, "m").bytes(11, vi("x", 1, 2)).
			bytes(12, vi("y", 1, 2)).bytes(12, vi("h", 10, 2))
		m, d := write(t, g, tensorPB("x", []int64{2}, 1, 2), tensorPB("y", []int64{2}, 1, 2))
		if err := os.WriteFile(filepath.Join(d, "output_1.pb"), f16TensorPB("h", []int64{2}, 0x3c00, 0x4000), 0o644); err != nil {
			t.Fatal(err)
		}
		code, _, errs := runCmd("compare", "--onnx", m, "--data", d)
		if code != 2 || !strings.Contains(errs, `output "y" is FLOAT but the graph also computes FLOAT16`) || strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Fatalf("exit %d, stderr %q; want 2 and one line naming the output", code, errs)
		}
	})
}

// f16TensorPB is a FLOAT16 TensorProto given by its elements' bits
// (dims 1, data_type 2 = 10, int32_data 5 packed, name 8).
func f16TensorPB(name string, dims []int64, bits ...uint16) []byte {
	var m pbuf
	for _, d := range dims {
		m = m.varint(1, uint64(d))
	}
	m = m.varint(2, 10)
	var body []byte
	for _, b := range bits {
		body = protowire.AppendVarint(body, uint64(b))
	}
	m = m.bytes(5, body)
	return m.str(8, name)
}

// TestCompareFloat16: a graph computing in binary16 is judged against the
// binary16 bound. x = 1 + 2^-10 (bits 0x3c01): x·x = 1 + 2^-9 + 2^-20,
// whose binary16 rounding is 1 + 2^-9 (0x3c02), 2^-20 off — outside
// binary32's bound (about 2^-24), inside binary16's (about 2^-11): it
// holds; 1 + 2^-5 (0x3c20) is far outside and fails. A FLOAT16
// computation cast to a FLOAT output is refused.
func TestCompareFloat16(t *testing.T) {
	vi := typedValueInfoPB
	write := func(t *testing.T, g pbuf, out []byte) (string, string) {
		dir := t.TempDir()
		model := filepath.Join(dir, "model.onnx")
		data := filepath.Join(dir, "test_data_set_0")
		for p, b := range map[string][]byte{
			model:                              pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13)),
			filepath.Join(data, "input_0.pb"):  f16TensorPB("x", []int64{1}, 0x3c01),
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
	sq := pbuf(nil).bytes(1, nodePB("sq", "Mul", []string{"x", "x"}, "y")).str(2, "h").bytes(11, vi("x", 10, 1)).bytes(12, vi("y", 10, 1))
	for _, c := range []struct {
		name string
		bits uint16
		code int
	}{{"the binary16 square holds", 0x3c02, 0}, {"1 + 2^-5 fails", 0x3c20, 1}} {
		t.Run(c.name, func(t *testing.T) {
			m, d := write(t, sq, f16TensorPB("y", []int64{1}, c.bits))
			code, out, errs := runCmd("compare", "--onnx", m, "--data", d)
			if code != c.code {
				t.Fatalf("exit %d, want %d; stderr %s; stdout %s", code, c.code, errs, out)
			}
		})
	}
	t.Run("a FLOAT16 computation cast to FLOAT is refused", func(t *testing.T) {
		cast := pbuf(nodePB("c", "Cast", []string{"s"}, "y")).bytes(5, pbuf(nil).str(1, "to").varint(3, 1).varint(20, 2))
		g := pbuf(nil).bytes(1, nodePB("s", "Mul", []string{"x", "x"}, "s")).bytes(1, cast).str(2, "m").bytes(11, vi("x", 10, 1)).bytes(12, vi("y", 1, 1))
		m, d := write(t, g, tensorPB("y", []int64{1}, 1))
		code, _, errs := runCmd("compare", "--onnx", m, "--data", d)
		if code != 2 || !strings.Contains(errs, `output "y" is FLOAT but the graph also computes FLOAT16`) {
			t.Fatalf("exit %d, stderr %q; want 2 naming the output and the mix", code, errs)
		}
	})
}
