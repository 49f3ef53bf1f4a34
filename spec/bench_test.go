package spec

import (
	"math/big"
	randv1 "math/rand"
	"math/rand/v2"
	"testing"
)

var sinkF32 F32
var sinkRat Rat

func BenchmarkF32Ops(b *testing.B) {
	x, y := F32(1.25), F32(-3.5)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q, _ := x.Add(y).Mul(x).Sub(y).Div(x)
		sinkF32 = q
	}
}

func BenchmarkRatOps(b *testing.B) {
	x, y := NewRat(5, 4), NewRat(-7, 2)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q, _ := x.Add(y).Mul(x).Sub(y).Div(x)
		sinkRat = q
	}
}

// BenchmarkF32TensorMul multiplies two 4096-element tensors: one
// allocation per tensor (the output), none per element.
func BenchmarkF32TensorMul(b *testing.B) {
	n := 4096
	x, _ := Full(Shape{n}, F32(1.5))
	y, _ := Full(Shape{n}, F32(-0.25))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := MulT(x, y); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/elem")
}

func BenchmarkF32MatmulRegistry(b *testing.B) {
	p, _ := Default[F32]().Lookup("matmul")
	a, _ := Full(Shape{64, 64}, F32(0.5))
	c, _ := Full(Shape{64, 64}, F32(0.25))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := p.Apply(nil, []Tensor[F32]{a, c}); err != nil {
			b.Fatal(err)
		}
	}
}

// dotOperands returns n-element vectors over Rat: float32 values (small
// dyadics) for kind "f32", and for "wide" float32 weights against
// activations of a 550-bit mantissa (what the deep MLP's exact values
// grow to), for "decimal" k/10 values (non-dyadic).
func dotOperands(kind string, n int) ([]Rat, []Rat) {
	r := rand.New(rand.NewPCG(1, uint64(n)))
	xs, ys := make([]Rat, n), make([]Rat, n)
	for i := range xs {
		w, _ := RatFromFloat64(float64(float32(r.NormFloat64() / 8)))
		ys[i] = w
		switch kind {
		case "f32":
			xs[i], _ = RatFromFloat64(float64(float32(r.NormFloat64())))
		case "wide":
			m := new(big.Int).Rand(r2(r), new(big.Int).Lsh(big.NewInt(1), 550))
			xs[i] = RatFromBig(new(big.Rat).SetFrac(m.Sub(m, new(big.Int).Lsh(big.NewInt(1), 549)), new(big.Int).Lsh(big.NewInt(1), 549)))
		case "decimal":
			xs[i], ys[i] = NewRat(r.Int64N(201)-100, 10), NewRat(r.Int64N(201)-100, 10)
		}
	}
	return xs, ys
}

// r2 adapts a math/rand/v2 source for big.Int.Rand.
func r2(r *rand.Rand) *randv1.Rand { return randv1.New(randv1.NewSource(int64(r.Uint64()))) }

var sinkBig *big.Rat

// BenchmarkRatDot: one 64-term inner product over Rat, as a plain loop of
// Mul and Add (each result normalised), fused (FoldDot), and, for
// reference, the loop in plain big.Rat arithmetic (what Rat did before
// its dyadic fast path: a GCD after every operation).
func BenchmarkRatDot(b *testing.B) {
	for _, kind := range []string{"f32", "wide", "decimal"} {
		xs, ys := dotOperands(kind, 64)
		b.Run(kind+"/bigrat-loop", func(b *testing.B) {
			bx, by := make([]*big.Rat, len(xs)), make([]*big.Rat, len(ys))
			for i := range xs {
				bx[i], by[i] = xs[i].Big(), ys[i].Big()
			}
			b.ReportAllocs()
			for b.Loop() {
				acc := new(big.Rat)
				for i := range bx {
					acc = new(big.Rat).Add(acc, new(big.Rat).Mul(bx[i], by[i]))
				}
				sinkBig = acc
			}
		})
		b.Run(kind+"/loop", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var acc Rat
				for i := range xs {
					acc = acc.Add(xs[i].Mul(ys[i]))
				}
				sinkRat = acc
			}
		})
		b.Run(kind+"/fused", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				sinkRat = FoldDot(Rat{}, xs, ys)
			}
		})
	}
}
