package onnx

import (
	"testing"
)

// conv2dBench is a Conv model whose weight initializer W[64,64,8,8]
// (262 144 float32, 1 MiB) is raw_data (as torch.onnx.export writes it) or
// packed float_data.
func conv2dBench(raw bool) pb {
	w := make([]float32, 64*64*8*8)
	for i := range w {
		w[i] = float32(i%251) / 256
	}
	dims := []int64{64, 64, 8, 8}
	wt := floatTensor("W", dims, w...)
	if raw {
		wt = rawFloatTensor("W", dims, w...)
	}
	g := graphB{
		nodes:   []pb{node("conv1", "Conv", []string{"x", "W"}, []string{"y"}, attrInts("kernel_shape", 8, 8), attrInts("pads", 0, 0, 0, 0))},
		inits:   []pb{wt},
		inputs:  []pb{valueInfo("x", Float, 1, 64, 32, 32)},
		outputs: []pb{valueInfo("y", Float, 1, 64, 25, 25)},
	}
	return model(13, g.enc())
}

func benchDecode(b *testing.B, data pb) {
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		m, err := Decode(data)
		if err != nil || len(m.Graph.Initializers[0].Float32) != 64*64*8*8 {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeConv2d decodes a Conv model with a 1 MiB raw_data weight.
func BenchmarkDecodeConv2d(b *testing.B) { benchDecode(b, conv2dBench(true)) }

// BenchmarkDecodeConv2dFloatData decodes the same model with the weight as
// packed float_data.
func BenchmarkDecodeConv2dFloatData(b *testing.B) { benchDecode(b, conv2dBench(false)) }

// BenchmarkRatsConv2d converts the 1 MiB weight to exact rationals.
func BenchmarkRatsConv2d(b *testing.B) {
	m, err := Decode(conv2dBench(true))
	if err != nil {
		b.Fatal(err)
	}
	w := m.Graph.Initializers[0]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := w.Rats(); err != nil {
			b.Fatal(err)
		}
	}
}
