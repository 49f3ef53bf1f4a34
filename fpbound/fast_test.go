package fpbound

import (
	"fmt"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// TestFastKernelsWithinBound: the fast provider's float32 kernels, whose
// 8-lane chunked order differs from the registry's left fold
// (fastcpu.Sum, fastcpu.Dot), stay within the bound of the same sum and
// dot product as IR graphs, for lengths across the chunk boundary.
func TestFastKernelsWithinBound(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 100, 1000, fastcpu.ChunkLen + 3} {
		r := newRand(uint64(n))
		x, w := randTensor(r, spec.Shape{n}, 1), randTensor(r, spec.Shape{n}, 1)
		xf, wf := make([]float32, n), make([]float32, n)
		for i := range xf {
			xf[i], wf[i] = float32(x.Data[i].Float64()), float32(w.Data[i].Float64())
		}
		for _, dot := range []bool{false, true} {
			b := newBuilder(spec.Shape{n})
			s := 0
			var got float32
			if dot {
				c := b.konst(w)
				s = b.node(irsem.Kind{Op: irsem.OpMulElem}, spec.Shape{n}, 0, c)
				got = fastcpu.Dot(xf, wf)
			} else {
				got = fastcpu.Sum(xf)
			}
			b.node(irsem.Kind{Op: irsem.OpSum}, spec.Shape{}, s)
			en, err := Bounds(b.g, b.p, x, Options{})
			if err != nil {
				t.Fatal(err)
			}
			exact, err := irsem.Denote(b.g, b.p, x)
			if err != nil {
				t.Fatal(err)
			}
			d := new(big.Rat).Sub(new(big.Rat).SetFloat64(float64(got)), exact.Data[0].Big())
			d.Abs(d)
			if d.Cmp(new(big.Rat).SetFloat64(en[0].Bound)) > 0 {
				t.Errorf("n = %d, dot %v: fastcpu %v off by %s > bound %g", n, dot, got, d.FloatString(12), en[0].Bound)
			}
		}
	}
}

// TestFastLinearWithinBound: fastcpu.Linear (the fast provider's linear
// kernel) on a 256 → 32 layer stays within the bound of the IR linear.
func TestFastLinearWithinBound(t *testing.T) {
	g, p, x := mlp(9, 256, 32, 0, 32, irsem.OpRelu)
	en, err := Bounds(g, p, x, Options{})
	if err != nil {
		t.Fatal(err)
	}
	f32 := func(r irsem.RatTensor) []float32 {
		o := make([]float32, len(r.Data))
		for i, v := range r.Data {
			o[i] = float32(v.Float64())
		}
		return o
	}
	e := p.Entries[1]
	y := make([]float32, 32)
	fastcpu.Linear(f32(x), 1, 256, f32(*e.W), 32, f32(*e.B), y)
	exact, err := irsem.Denote(g, p, x)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range y {
		d := new(big.Rat).Sub(new(big.Rat).SetFloat64(float64(v)), exact.Data[i].Big())
		if d.Abs(d).Cmp(new(big.Rat).SetFloat64(en[i].Bound)) > 0 {
			t.Errorf("element %d: fastcpu.Linear %v off by %s > bound %g", i, v, d.FloatString(12), en[i].Bound)
		}
	}
}

// FuzzSound is TestSoundRandomGraphs as a fuzz target over the graph seed
// (go test -fuzz FuzzSound ./fpbound); without -fuzz it runs its seeds.
func FuzzSound(f *testing.F) {
	for _, s := range []uint64{0, 1, 42, 1 << 40} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		gc, err := casegen.GraphSeed(seed, casegen.GraphOptions{MaxNodes: 12})
		if err != nil {
			t.Skip(err)
		}
		x := binary32Input(newRand(seed), gc.Input)
		checkSound(t, fmt.Sprintf("seed %d", seed), gc.Graph, gc.Payload, x, Options{})
	})
}
