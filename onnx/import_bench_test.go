package onnx

import (
	"fmt"
	"testing"
)

// convNet is a VGG-like stack: depth × (3×3 Conv with c channels, pads 1,
// BatchNormalization, Relu), then GlobalAveragePool, Flatten and Gemm.
func convNet(depth, c int) *Model {
	m := newMG(13).in("x", 1, int64(c), 16, 16)
	prev := "x"
	for l := 0; l < depth; l++ {
		w := fmt.Sprintf("w%d", l)
		m.init(w, dims(int64(c), int64(c), 3, 3), seq(c*c*9, func(i int) float32 { return float32(i%7-3) / 8 })...)
		m.bnIdentity(fmt.Sprintf("bn%d", l), c)
		conv, norm, relu := fmt.Sprintf("c%d", l), fmt.Sprintf("n%d", l), fmt.Sprintf("r%d", l)
		m.op("Conv", ins(prev, w), ins(conv), aIs("pads", 1, 1, 1, 1))
		bn(m, fmt.Sprintf("bn%d", l), conv, norm).op("Relu", ins(norm), ins(relu))
		prev = relu
	}
	m.init("fw", dims(10, int64(c)), seq(10*c, func(i int) float32 { return float32(i%5) / 4 })...).init("fb", dims(10), make([]float32, 10)...)
	m.op("GlobalAveragePool", ins(prev), ins("g")).op("Flatten", ins("g"), ins("f")).op("Gemm", ins("f", "fw", "fb"), ins("y"), aI("transB", 1)).out("y")
	return m.model()
}

// BenchmarkImportConvNet: importing an 8-layer, 16-channel convolutional
// network on 16×16 (about 18 000 weights read as exact rationals, plus the
// final Graph.Check and CheckPayload; within the default work limit).
func BenchmarkImportConvNet(b *testing.B) {
	m := convNet(8, 16)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Import(m, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
