package onnx

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestDecodeKeepsNoInput: what Decode, ReadModel and DecodeTensor return
// holds no reference into the input buffer (issue 24 point 4: a model's
// file bytes — 0.24 GB for AlexNet, 0.58 GB for VGG-19 — must be
// collectable once its tensors are decoded). Each input is decoded, then
// every byte of the buffer is overwritten; the result must still equal
// the decoding of an untouched copy, field for field (reflect.DeepEqual:
// every name, attribute string, tensor element, dim).
func TestDecodeKeepsNoInput(t *testing.T) {
	w := make([]float32, 2*3*3)
	for i := range w {
		w[i] = float32(i%5) - 1.5
	}
	g := graphB{
		name: "keep",
		nodes: []pb{
			node("k", "Constant", nil, []string{"k"}, attrTensor("value", rawFloatTensor("kv", []int64{2}, 0.5, -2))),
			node("conv1", "Conv", []string{"x", "W", "B"}, []string{"c"}, attrInts("pads", 1, 1, 1, 1), attrString("auto_pad", "NOTSET")),
			node("add", "Add", []string{"c", "k"}, []string{"y"}),
		},
		inits:   []pb{rawFloatTensor("W", []int64{2, 1, 3, 3}, w...), floatTensor("B", []int64{2}, 0.25, -1), int64Tensor("shape", []int64{2}, 4, 5)},
		inputs:  []pb{valueInfo("x", Float, 1, 1, 4, 4)},
		outputs: []pb{valueInfo("y", Float, 1, 2, 4, 4)},
	}
	mdl := model(13, g.enc())
	file := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(file, mdl, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		data   pb
		decode func([]byte) (any, error)
	}{
		{"model", mdl, func(b []byte) (any, error) { return Decode(b) }},
		{"tensor file, raw_data", rawFloatTensor("x", []int64{2, 2}, 1, -2, 3.5, 0), func(b []byte) (any, error) { return DecodeTensor(b) }},
		{"tensor file, float_data", floatTensor("x", []int64{3}, 1, -2, 3.5), func(b []byte) (any, error) { return DecodeTensor(b) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			buf := append([]byte(nil), c.data...)
			got, err := c.decode(buf)
			if err != nil {
				t.Fatal(err)
			}
			for i := range buf {
				buf[i] ^= 0xA5
			}
			want, err := c.decode(append([]byte(nil), c.data...))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the decoded %s changed when its input buffer was overwritten: it holds a reference into it", c.name)
			}
		})
	}
	// ReadModel's buffer is its own; the result must equal Decode's.
	rm, err := ReadModel(file)
	if err != nil {
		t.Fatal(err)
	}
	dm, err := Decode(mdl)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(rm, dm) {
		t.Fatal("ReadModel and Decode disagree")
	}
}
