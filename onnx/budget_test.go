package onnx

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// TestValueBytesBudget: the decoded values of a model's tensors, their
// exact values included, are charged against onnx-value-bytes before the
// element slice is allocated (issue 26 point 1: a Constant of 2^26 − 2^16
// floats passed onnx-elements and then needed 2.5 GB as exact values).
// The per-element charge is derived here from the types themselves.
func TestValueBytesBudget(t *testing.T) {
	rat := int64(unsafe.Sizeof(spec.Rat{}))
	f32 := int64(unsafe.Sizeof(float32(0)))
	i64 := int64(unsafe.Sizeof(int64(0)))
	for _, c := range []struct {
		name   string
		budget int64
		data   pb
		ok     bool
	}{
		{"3 floats, room for 3", 3 * (f32 + rat), withInit(floatTensor("w", []int64{3}, 1, 2, 3)), true},
		{"3 floats, room for 2", 3*(f32+rat) - 1, withInit(floatTensor("w", []int64{3}, 1, 2, 3)), false},
		{"raw floats, room for 1", f32 + rat, withInit(rawFloatTensor("w", []int64{2}, 1, 2)), false},
		{"int64s cost no exact value", 4 * i64, withInit(tensorDims("w", Int64, 4)), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer limits.Set(limits.Limits{ONNXValueBytes: c.budget})()
			_, err := Decode(c.data)
			if c.ok && err != nil && strings.Contains(err.Error(), "onnx-value-bytes") {
				t.Fatalf("refused within the budget: %v", err)
			}
			if !c.ok && (err == nil || !strings.Contains(err.Error(), "over the onnx-value-bytes limit")) {
				t.Fatalf("error %v, want the onnx-value-bytes limit", err)
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
