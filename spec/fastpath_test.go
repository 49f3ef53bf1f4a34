package spec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestFastPathsBitIdentical: the devirtualised F32 matmul (forward and
// VJP) gives the same bits as the generic rule run over the bit-level
// Binary32 scalar, which performs the same operations in the same order.
func TestFastPathsBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	shapes := [][2]Shape{{{3, 5}, {5, 4}}, {{5}, {5, 2}}, {{2, 1, 3, 4}, {2, 4, 3}}, {{7}, {7}}}
	f := func() float32 { return float32(rng.NormFloat64()) * float32(math.Pow(2, float64(rng.IntN(20)-10))) }
	for _, sh := range shapes {
		a32, _ := Zeros[F32](sh[0])
		b32, _ := Zeros[F32](sh[1])
		for i := range a32.Data {
			a32.Data[i] = F32(f())
		}
		for i := range b32.Data {
			b32.Data[i] = F32(f())
		}
		toB := func(x Tensor[F32]) Tensor[Binary32] {
			return Convert(x, func(v F32) Binary32 { return Binary32FromFloat32(float32(v)) })
		}
		p32, _ := Default[F32]().Lookup("matmul")
		pb, _ := Default[Binary32]().Lookup("matmul")
		y32, err := p32.Apply(nil, []Tensor[F32]{a32, b32})
		if err != nil {
			t.Fatal(err)
		}
		yb, _ := pb.Apply(nil, []Tensor[Binary32]{toB(a32), toB(b32)})
		d32 := y32.Clone()
		for i := range d32.Data {
			d32.Data[i] = F32(f())
		}
		g32, _ := p32.VJP(nil, []Tensor[F32]{a32, b32}, y32, d32)
		gb, _ := pb.VJP(nil, []Tensor[Binary32]{toB(a32), toB(b32)}, yb, toB(d32))
		check := func(what string, x Tensor[F32], y Tensor[Binary32]) {
			for i := range x.Data {
				if math.Float32bits(float32(x.Data[i])) != y.Data[i].Bits() {
					t.Fatalf("%v·%v %s element %d: fast %v, generic %v", sh[0], sh[1], what, i, x.Data[i], y.Data[i])
				}
			}
		}
		check("forward", y32, yb)
		check("dA", g32[0], gb[0])
		check("dB", g32[1], gb[1])
	}
}

// TestLinearFastPathBitIdentical: the fastcpu-backed F32 linear (forward,
// JVP and VJP) gives the same bits as the generic rule over Binary32.
func TestLinearFastPathBitIdentical(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	f := func() float32 { return float32(rng.NormFloat64()) * float32(math.Pow(2, float64(rng.IntN(30)-15))) }
	toB := func(x Tensor[F32]) Tensor[Binary32] {
		return Convert(x, func(v F32) Binary32 { return Binary32FromFloat32(float32(v)) })
	}
	fill := func(s Shape) Tensor[F32] {
		x, _ := Zeros[F32](s)
		for i := range x.Data {
			x.Data[i] = F32(f())
		}
		return x
	}
	check := func(what string, x Tensor[F32], y Tensor[Binary32]) {
		t.Helper()
		for i := range x.Data {
			if math.Float32bits(float32(x.Data[i])) != y.Data[i].Bits() {
				t.Fatalf("%s element %d: fast %v, generic %v", what, i, x.Data[i], y.Data[i])
			}
		}
	}
	p32, _ := Default[F32]().Lookup("linear")
	pb, _ := Default[Binary32]().Lookup("linear")
	for _, sh := range [][3]int{{1, 3, 2}, {5, 17, 9}, {0, 4, 3}, {3, 0, 2}, {64, 70, 33}} {
		rows, in, out := sh[0], sh[1], sh[2]
		xs := []Tensor[F32]{fill(Shape{rows, in}), fill(Shape{out, in}), fill(Shape{out})}
		bs := []Tensor[Binary32]{toB(xs[0]), toB(xs[1]), toB(xs[2])}
		y32, err := p32.Apply(nil, xs)
		if err != nil {
			t.Fatal(err)
		}
		yb, _ := pb.Apply(nil, bs)
		check("forward", y32, yb)
		dxs := []Tensor[F32]{fill(Shape{rows, in}), fill(Shape{out, in}), fill(Shape{out})}
		j32, _ := p32.JVP(nil, xs, y32, dxs)
		jb, _ := pb.JVP(nil, bs, yb, []Tensor[Binary32]{toB(dxs[0]), toB(dxs[1]), toB(dxs[2])})
		check("jvp", j32, jb)
		d := fill(y32.Shape)
		g32, _ := p32.VJP(nil, xs, y32, d)
		gb, _ := pb.VJP(nil, bs, yb, toB(d))
		for k := range g32 {
			check("vjp", g32[k], gb[k])
		}
	}
}
