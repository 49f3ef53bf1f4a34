package fpbound

import (
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// BenchmarkCompareNets times, on the 16×64 ReLU MLP and a small conv
// stack, one float32 evaluation (the runtime's cost), the classic bound
// (Bounds) and compare's first-order bound (SharpBounds), side by side
// (docs/performance.md).
func BenchmarkCompareNets(b *testing.B) {
	mlp, err := nets.MLP(116, 64, 16, irsem.OpRelu, nets.Default)
	if err != nil {
		b.Fatal(err)
	}
	conv, err := nets.ConvStack(204, 16, 4, 4, nets.Default)
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []*nets.Net{mlp, conv} {
		x32 := irsem.ConvertTensor[spec.F32](n.Input)
		b.Run(n.Name+"/f32", func(b *testing.B) {
			for range b.N {
				if _, err := irsem.Denote(n.Graph, n.Payload, x32); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(n.Name+"/bounds", func(b *testing.B) {
			for range b.N {
				if _, err := Bounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(n.Name+"/sharp", func(b *testing.B) {
			for range b.N {
				if _, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBoundsConvStack times the classic bound (Bounds) of a conv
// stack the size of a ResNet stage (3×3, 32 channels, 32×32, depth 2),
// whose convolutions run on the dense path, beside its float32 evaluation.
func BenchmarkBoundsConvStack(b *testing.B) {
	n, err := nets.ConvStack(7, 32, 32, 2, nets.Default)
	if err != nil {
		b.Fatal(err)
	}
	x32 := irsem.ConvertTensor[spec.F32](n.Input)
	b.Run("f32", func(b *testing.B) {
		for range b.N {
			if _, err := irsem.Denote(n.Graph, n.Payload, x32); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bounds", func(b *testing.B) {
		for range b.N {
			if _, err := Bounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
