package onnx

import (
	"math/big"
	"runtime"
	"testing"
	"unsafe"

	"github.com/tlcheck/tlcheck/spec"
)

// TestImportHoldsOneExactCopy: importing a model with a large initializer
// (a Gemm of 2²⁰ weights) allocates one exact value per weight, not
// several. Before, the importer widened the plane to float64 to look for
// −∞ (8 bytes a weight), converted it to rationals (Tensor.Rats, 32) and
// copied those into the payload (ratTensor, 32 more): 72 bytes a weight,
// 4.4 GB of AlexNet's peak. The bound is derived from the types: one
// spec.Rat per weight, plus a margin of 1/8 of that and 4 MiB for the
// graph, the bias and the allocator's rounding; the old path is above it
// by more than two spec.Rats a weight. The payload's weights are, element
// by element, the exact values of the float32 plane (checked through
// math/big on a sample, by the exact float64 widening on the rest).
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
	rat := uint64(unsafe.Sizeof(spec.Rat{}))
	n := uint64(len(ws))
	bound := n*rat + n*rat/8 + 4<<20
	if got := after.TotalAlloc - before.TotalAlloc; got > bound {
		t.Errorf("Import allocated %d bytes for %d weights (%.1f a weight); want at most %d (one %d-byte spec.Rat a weight, with margin)", got, n, float64(got)/float64(n), bound, rat)
	}
	var w *spec.Tensor[spec.Rat]
	for _, id := range im.Payload.IDs() {
		if e := im.Payload.Entry(id); e.W != nil {
			w = e.W
		}
	}
	if w == nil || len(w.Data) != len(ws) {
		t.Fatalf("no linear weight of %d elements in the payload", len(ws))
	}
	for i, f := range ws {
		ok := w.Data[i].Float64() == float64(f) // a float32 widens to float64 exactly
		if i%509 == 0 {                         // exactly, through math/big, on a sample
			ok = w.Data[i].Big().Cmp(new(big.Rat).SetFloat64(float64(f))) == 0
		}
		if !ok {
			t.Fatalf("weight %d is %v, want the float32 %v exactly", i, w.Data[i], f)
		}
	}
}
