package onnx

import (
	"math/big"
	"runtime"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/irsem"
)

// TestImportHoldsOneExactCopy: importing a model with a large initializer
// (a Gemm of 2²⁰ weights) allocates no exact value per weight: the payload
// holds W as the decoded float32 plane (irsem.Plane, shared with the
// decoded tensor) and derives a weight's spec.Rat only where a reader
// needs it. History: the importer once widened the plane to float64 to
// look for −∞ (8 bytes a weight), converted it to rationals (32) and
// copied those (32 more): 72 bytes a weight; mem30 cut that to one
// spec.Rat (32); mem34 to none. The bound is derived from the types: one
// float32 a weight (the decoded plane, which the decoder allocates outside
// Import, is shared; one copy is allowed) plus a margin of 1/8 of that and
// 4 MiB for the graph, the bias and the allocator's rounding; the mem30
// path (a spec.Rat a weight) is above it by more than 7 times. The
// payload's weights are, element by element, the exact values of the
// float32 plane (checked through math/big on every element).
func TestImportHoldsOneExactCopy(t *testing.T) {
	const in, out = 1024, 1024 // 2²⁰ weights
	ws := make([]float32, in*out)
	for i := range ws {
		// Varied exact values: odd mantissas at several exponents and signs.
		ws[i] = float32(int32(i*2654435761%2001)-1000) / float32(int(1)<<(i%23))
	}
	m := newMG(13).in("x", 1, in).init("w", dims(out, in), ws...).init("c", dims(out), make([]float32, out)...).
		op("Gemm", ins("x", "w", "c"), ins("y"), aI("transB", 1)).out("y").model()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	im, err := Import(m, Options{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	f32 := uint64(unsafe.Sizeof(float32(0)))
	n := uint64(len(ws))
	bound := n*f32 + n*f32/8 + 4<<20
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Errorf("Import allocated %d bytes for %d weights (%.1f a weight); want at most %d (one %d-byte float32 a weight, with margin)", got, n, float64(got)/float64(n), bound, f32)
	}
	var e *irsem.Params
	for _, id := range im.Payload.IDs() {
		if x := im.Payload.Entry(id); x.HasWeight() {
			e = x
		}
	}
	if e == nil || e.WeightPlane() == nil || e.WeightPlane().Len() != len(ws) {
		t.Fatalf("no linear weight of %d elements held as a plane in the payload", len(ws))
	}
	w := e.Weight() // the derived rationals
	for i, f := range ws {
		if w.Data[i].Big().Cmp(new(big.Rat).SetFloat64(float64(f))) != 0 {
			t.Fatalf("weight %d is %v, want the float32 %v exactly", i, w.Data[i], f)
		}
	}
}
