package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// A tiny ONNX model built in Go (protowire), so that the commands' ONNX
// tests need no file from outside the repository:
//
//	m = Mul(x, w)   x: FLOAT [2] (graph input), w: FLOAT [2] = (2, −3) (initializer)
//	y = Relu(m)     y: FLOAT [2] (graph output)
//
// At x = (3/2, 2): m = (3, −6), y = (3, 0); with the cotangent ones,
// ∂Σy/∂x = w ⊙ relu′(m) = (2, 0) and ∂Σy/∂w = x ⊙ relu′(m) = (3/2, 0)
// (relu′(−6) = 0) — by hand.

type pbuf []byte

func (m pbuf) varint(n protowire.Number, v uint64) pbuf {
	return protowire.AppendVarint(protowire.AppendTag(m, n, protowire.VarintType), v)
}
func (m pbuf) bytes(n protowire.Number, v []byte) pbuf {
	return protowire.AppendBytes(protowire.AppendTag(m, n, protowire.BytesType), v)
}
func (m pbuf) str(n protowire.Number, s string) pbuf { return m.bytes(n, []byte(s)) }

// tensorPB is a FLOAT TensorProto (dims 1, data_type 2, float_data 4
// packed, name 8).
func tensorPB(name string, dims []int64, vals ...float32) []byte {
	var m pbuf
	for _, d := range dims {
		m = m.varint(1, uint64(d))
	}
	m = m.varint(2, 1)
	var body []byte
	for _, v := range vals {
		body = protowire.AppendFixed32(body, math.Float32bits(v))
	}
	m = m.bytes(4, body)
	return m.str(8, name)
}

// valueInfoPB is a ValueInfoProto of a FLOAT tensor of the given dims
// (name 1, type 2 → tensor_type 1 → elem_type 1, shape 2 → dim 1 →
// dim_value 1).
func valueInfoPB(name string, dims ...int64) []byte { return typedValueInfoPB(name, 1, dims...) }

// typedValueInfoPB is a ValueInfoProto of a tensor of element type et
// (onnx.proto's TensorProto.DataType) and the given dims.
func typedValueInfoPB(name string, et uint64, dims ...int64) []byte {
	var shape pbuf
	for _, d := range dims {
		shape = shape.bytes(1, pbuf(nil).varint(1, uint64(d)))
	}
	tt := pbuf(nil).varint(1, et).bytes(2, shape)
	return pbuf(nil).str(1, name).bytes(2, pbuf(nil).bytes(1, tt))
}

// nodePB is a NodeProto (input 1, output 2, name 3, op_type 4).
func nodePB(name, op string, ins []string, outs ...string) []byte {
	var m pbuf
	for _, s := range ins {
		m = m.str(1, s)
	}
	for _, s := range outs {
		m = m.str(2, s)
	}
	return m.str(3, name).str(4, op)
}

// fixtureModel is the model above as ModelProto bytes (ir_version 1,
// graph 7, opset_import 8 → version 2 = 13).
func fixtureModel() []byte {
	g := pbuf(nil).
		bytes(1, nodePB("scale", "Mul", []string{"x", "w"}, "m")).
		bytes(1, nodePB("act", "Relu", []string{"m"}, "y")).
		str(2, "fixture").
		bytes(5, tensorPB("w", []int64{2}, 2, -3)).
		bytes(11, valueInfoPB("x", 2)).
		bytes(12, valueInfoPB("y", 2))
	return pbuf(nil).varint(1, 8).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
}

// onnxFixture writes the model and a recorded data set (input_0.pb =
// (3/2, 2), output_0.pb = y, or the output given) into a temporary
// directory and returns the model's path and the data set's.
func onnxFixture(t *testing.T, output ...float32) (model, data string) {
	t.Helper()
	model, data, err := writeFixture(t.TempDir(), output...)
	if err != nil {
		t.Fatal(err)
	}
	return model, data
}

// writeFixture writes the fixture files into dir (see onnxFixture).
func writeFixture(dir string, output ...float32) (model, data string, err error) {
	model = filepath.Join(dir, "model.onnx")
	data = filepath.Join(dir, "test_data_set_0")
	if len(output) == 0 {
		output = []float32{3, 0}
	}
	for p, b := range map[string][]byte{
		model:                              fixtureModel(),
		filepath.Join(data, "input_0.pb"):  tensorPB("x", []int64{2}, 1.5, 2),
		filepath.Join(data, "output_0.pb"): tensorPB("y", []int64{2}, output...),
		filepath.Join(dir, "cotangent.pb"): tensorPB("ct", []int64{2}, 5, 7),
		filepath.Join(dir, "x.json"):       []byte(`{"shape":[2],"values":["3/2","2"]}`),
		filepath.Join(dir, "bad-shape.pb"): tensorPB("x", []int64{3}, 1, 2, 3),
		filepath.Join(dir, "truncated.pb"): tensorPB("x", []int64{2}, 1.5, 2)[:5],
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", "", err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return "", "", err
		}
	}
	return model, data, nil
}

// Example_gradONNX is the README's grad transcript: the exact gradient of
// the sum of Relu(x ⊙ w) w.r.t. the input and the initializer w.
func Example_gradONNX() {
	dir, err := os.MkdirTemp("", "tlcheck-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	model, data, err := writeFixture(dir)
	if err != nil {
		panic(err)
	}
	code := run([]string{"grad", "--onnx", model, "--data", data}, os.Stdout, os.Stderr)
	fmt.Println("exit", code)
	// Output:
	// scalar = rat (exact rationals)
	// output = [3, 0]
	// cotangent = ones (the gradient of the sum of the outputs)
	// grad input = [2, 0]
	// grad w = [1.5 (= 3/2), 0]
	// exit 0
}
