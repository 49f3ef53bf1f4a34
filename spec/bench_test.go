package spec

import "testing"

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
