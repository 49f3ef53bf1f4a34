package onnx

import (
	"math"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// TestValueBytesBudget: the decoded values of a model's tensors are
// charged against onnx-value-bytes before the element slice is allocated
// (issue 26 point 1: a Constant of 2^26 − 2^16 floats passed onnx-elements
// and then needed 2.5 GB as exact values), at their decoded size: a
// model's float's exact value is charged where the importer makes it
// (TestValueBytesAtImport). A TensorProto file's floats, which are always
// converted, are charged their exact values at decode. The per-element
// charge is derived here from the types themselves.
func TestValueBytesBudget(t *testing.T) {
	rat := int64(unsafe.Sizeof(spec.Rat{}))
	f32 := int64(unsafe.Sizeof(float32(0)))
	i64 := int64(unsafe.Sizeof(int64(0)))
	model := func(b []byte) error { _, err := Decode(b); return err }
	file := func(b []byte) error { _, err := DecodeTensor(b); return err }
	for _, c := range []struct {
		name   string
		budget int64
		decode func([]byte) error
		data   pb
		ok     bool
	}{
		{"3 floats, room for 3", 3 * f32, model, withInit(floatTensor("w", []int64{3}, 1, 2, 3)), true},
		{"3 floats, room for 2", 3*f32 - 1, model, withInit(floatTensor("w", []int64{3}, 1, 2, 3)), false},
		{"raw floats, room for 1", f32, model, withInit(rawFloatTensor("w", []int64{2}, 1, 2)), false},
		{"int64s cost no exact value", 4 * i64, model, withInit(tensorDims("w", Int64, 4)), true},
		{"tensor file: 3 floats and their exact values", 3 * (f32 + rat), file, floatTensor("x", []int64{3}, 1, 2, 3), true},
		{"tensor file: room for 2 floats with exact values", 3*(f32+rat) - 1, file, floatTensor("x", []int64{3}, 1, 2, 3), false},
		{"tensor file: int64s", 4 * i64, file, tensorDims("x", Int64, 4), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer limits.Set(limits.Limits{ONNXValueBytes: c.budget})()
			err := c.decode(c.data)
			if c.ok && err != nil && strings.Contains(err.Error(), "onnx-value-bytes") {
				t.Fatalf("refused within the budget: %v", err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), "over the onnx-value-bytes limit")) {
				t.Fatalf("error %v, want the onnx-value-bytes limit", err)
			}
		})
	}
}

// TestValueBytesAtImport: the importer charges a model float's exact value
// (a spec.Rat) against onnx-value-bytes, on top of the model's decoded
// values, where it converts the tensor — an initializer another op reads,
// a Constant, a tensor holding −∞ — and not for a linear or conv weight,
// held as its decoded plane. Each case's budget is the exact account,
// derived from the sizes of the types: admitted at it, refused one byte
// below, with an error naming the tensor and the node.
func TestValueBytesAtImport(t *testing.T) {
	rat := int64(unsafe.Sizeof(spec.Rat{}))
	f32 := int64(unsafe.Sizeof(float32(0)))
	const n = 64
	ws := make([]float32, n*n)
	for i := range ws {
		ws[i] = float32(i%7) - 3
	}
	ninf := append([]float32(nil), ws[:n]...)
	ninf[5] = float32(math.Inf(-1))
	for _, c := range []struct {
		name   string
		m      *Model
		budget int64 // the decoded values plus the exact values made
		names  string
	}{
		{"Gemm weight: a plane, only the bias converted",
			newMG(13).in("x", 1, n).init("w", dims(n, n), ws...).init("c", dims(n), ws[:n]...).
				op("Gemm", ins("x", "w", "c"), ins("y"), aI("transB", 1)).out("y").model(),
			(n*n+n)*f32 + n*rat, `"c"`},
		{"Conv weight: a plane",
			newMG(13).in("x", 1, 1, 8, 8).init("w", dims(n, 1, 1, 1), ws[:n]...).
				op("Conv", ins("x", "w"), ins("y")).op("Relu", ins("y"), ins("z")).out("z").model(),
			n * f32, ""},
		{"an initializer Add reads",
			newMG(13).in("x", 1, n*n).init("w", dims(1, n*n), ws...).
				op("Add", ins("x", "w"), ins("y")).out("y").model(),
			n * n * (f32 + rat), `"w"`},
		{"a Constant Mul reads",
			newMG(13).in("x", 1, n).op("Constant", nil, ins("k"), aT("value", ftensor("k", dims(1, n), ws[:n]...))).
				op("Mul", ins("x", "k"), ins("y")).out("y").model(),
			n * (f32 + rat), `"k"`},
		{"an initializer holding −∞, converted at once",
			newMG(13).in("x", 1, n).init("m", dims(1, n), ninf...).
				op("Add", ins("x", "m"), ins("y")).op("Softmax", ins("y"), ins("z")).out("z").model(),
			n * (f32 + rat), `"m"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, budget := range []int64{c.budget, c.budget - 1} {
				restore := limits.Set(limits.Limits{ONNXValueBytes: budget})
				_, err := Import(c.m, Options{})
				restore()
				over := err != nil && strings.Contains(err.Error(), "over the onnx-value-bytes limit")
				if budget == c.budget && err != nil {
					t.Fatalf("budget %d (the exact account): %v", budget, err)
				}
				if budget < c.budget && !over {
					t.Fatalf("budget %d: error %v, want the onnx-value-bytes limit", budget, err)
				}
				if over && !strings.Contains(err.Error(), c.names) {
					t.Errorf("error %q does not name %s", err, c.names)
				}
			}
		})
	}
}

// TestValueBytesBeforeAllocation: a tensor over the budget is refused
// having allocated far less than its elements would take.
func TestValueBytesBeforeAllocation(t *testing.T) {
	const n = 1 << 20 // 4 MiB of raw floats, 36 MiB as decoded and exact values
	vs := make([]float32, n)
	data := withInit(rawFloatTensor("w", []int64{n}, vs...))
	defer limits.Set(limits.Limits{ONNXValueBytes: 1 << 20})()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode(data)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "onnx-value-bytes") {
		t.Fatalf("error %v, want the onnx-value-bytes limit", err)
	}
	if used := after.TotalAlloc - before.TotalAlloc; used > 1<<20 {
		t.Errorf("allocated %d bytes before refusing", used)
	}
}
