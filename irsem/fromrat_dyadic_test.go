package irsem

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestFromRatDyadicFastPath: the dyadic fast path (p/2^e with |p| < 2^53)
// rounds exactly as the scalar's own FromRat, over every IEEE scalar.
func TestFromRatDyadicFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 20000; i++ {
		p := r.Int64N(1<<53) - 1<<52
		if i%3 == 0 {
			p = r.Int64N(1<<30) - 1<<29
		}
		q := int64(1) << r.IntN(63)
		x := spec.RatFromBig(big.NewRat(p, q))
		if got, want := FromRat[spec.F32](x), (spec.F32(0)).FromRat(x.Big()); !got.Same(want) {
			t.Fatalf("F32 %d/%d: fast %v, FromRat %v", p, q, got, want)
		}
		if got, want := FromRat[spec.F64](x), (spec.F64(0)).FromRat(x.Big()); !got.Same(want) {
			t.Fatalf("F64 %d/%d: fast %v, FromRat %v", p, q, got, want)
		}
		if got, want := FromRat[spec.Binary32](x), (spec.Binary32(0)).FromRat(x.Big()); !got.Same(want) {
			t.Fatalf("Binary32 %d/%d: fast %v, FromRat %v", p, q, got, want)
		}
	}
}
