package irgrad

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func mlpExample(b *testing.B) (*irsem.Graph, *irsem.Payload, irsem.RatTensor) {
	return exampleGraph(b, "mlp.ir.json"), examplePayload(b, "mlp.payload.json"), exampleTensor(b, "mlp.input.json")
}

// BenchmarkLowerMLP measures lowering the example MLP (2→8→1) to a typed
// graph: checking the IR and payload, converting the parameters, building
// the graph.
func BenchmarkLowerMLP(b *testing.B) {
	g, p, _ := mlpExample(b)
	b.Run("f32", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Lower[spec.F32](nil, g, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rat", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := Lower[spec.Rat](nil, g, p); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGradMLP measures one forward and reverse pass of the lowered
// MLP along each path (the lowering is done once, outside the loop).
func BenchmarkGradMLP(b *testing.B) {
	g, p, x := mlpExample(b)
	l, err := Lower[spec.F32](nil, g, p)
	if err != nil {
		b.Fatal(err)
	}
	xf := irsem.ConvertTensor[spec.F32](x)
	for _, path := range Paths() {
		b.Run(string(path)+"/f32", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := l.Grad(path, xf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	lr, err := Lower[spec.Rat](nil, g, p)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("tape/rat", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if _, err := lr.Grad(PathTape, x); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkLowerAndGradMLP is the whole of `tlcheck grad` on the MLP
// minus the I/O: lower, then one reverse pass.
func BenchmarkLowerAndGradMLP(b *testing.B) {
	g, p, x := mlpExample(b)
	xf := irsem.ConvertTensor[spec.F32](x)
	for _, path := range []Path{PathTape, PathTypedGraph} {
		b.Run(string(path)+"/f32", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				l, err := Lower[spec.F32](nil, g, p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := l.Grad(path, xf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
