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

// TestConvertTensorPerScalar: ConvertTensor, which picks the conversion
// once per tensor, gives every element exactly the scalar's own general
// conversion T.FromRat(big.Rat) (an independent path: no fast path, no
// dispatch), over each scalar of the package's denotations, on small
// fractions, dyadics, huge and tiny rationals and zero.
func TestConvertTensorPerScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	var data []spec.Rat
	for i := 0; i < 3000; i++ {
		var x *big.Rat
		switch i % 5 {
		case 0: // a small fraction (the division fast path)
			x = big.NewRat(r.Int64N(1<<25)-1<<24, r.Int64N(1<<24)+1)
		case 1: // a dyadic (a binary32 weight)
			x = big.NewRat(r.Int64N(1<<53)-1<<52, int64(1)<<r.IntN(63))
		case 2: // no small fraction: big.Rat
			n, _ := new(big.Int).SetString("123456789012345678901234567890123", 10)
			x = new(big.Rat).SetFrac(n.Add(n, big.NewInt(r.Int64N(1000))), big.NewInt(r.Int64N(999)+7))
		case 3: // tiny
			x = new(big.Rat).SetFrac(big.NewInt(r.Int64N(1000)+1), new(big.Int).Lsh(big.NewInt(3), 1100))
		default:
			x = new(big.Rat)
		}
		data = append(data, spec.RatFromBig(x))
	}
	in := RatTensor{Shape: spec.Shape{len(data)}, Data: data}
	cases := []struct {
		name  string
		check func(t *testing.T)
	}{
		{"F32", func(t *testing.T) { convertAgrees(t, in, func(a, b spec.F32) bool { return a.Same(b) }) }},
		{"F64", func(t *testing.T) { convertAgrees(t, in, func(a, b spec.F64) bool { return a.Same(b) }) }},
		{"Binary32", func(t *testing.T) { convertAgrees(t, in, func(a, b spec.Binary32) bool { return a.Same(b) }) }},
		{"Interval", func(t *testing.T) { convertAgrees(t, in, func(a, b spec.Interval) bool { return a == b }) }},
		{"Rat", func(t *testing.T) {
			convertAgrees(t, in, func(a, b spec.Rat) bool { return a.Big().Cmp(b.Big()) == 0 })
		}},
	}
	for _, c := range cases {
		t.Run(c.name, c.check)
	}
}

func convertAgrees[T spec.Scalar[T]](t *testing.T, in RatTensor, same func(a, b T) bool) {
	t.Helper()
	got := ConvertTensor[T](in)
	var z T
	for i, x := range in.Data {
		if want := z.FromRat(x.Big()); !same(got.Data[i], want) {
			t.Fatalf("element %d (%v): ConvertTensor %v, FromRat %v", i, x.Big(), got.Data[i], want)
		}
		if one := FromRat[T](x); !same(one, got.Data[i]) {
			t.Fatalf("element %d (%v): FromRat %v, ConvertTensor %v", i, x.Big(), one, got.Data[i])
		}
	}
}
