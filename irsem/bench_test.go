package irsem

import (
	"strconv"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// mlpGraph is input [batch, sizes[0]] → linear → relu → … → linear, with
// payload weights k/1024 (exact in binary32, so conversion rounds nothing).
func mlpGraph(batch int, sizes ...int) (*Graph, *Payload) {
	nodes := []Node{input(batch, sizes[0])}
	p := &Payload{Entries: map[int]*Params{}}
	for l := 1; l < len(sizes); l++ {
		in, out := sizes[l-1], sizes[l]
		if l > 1 {
			nodes = append(nodes, nd(OpRelu, []int{len(nodes) - 1}, spec.Shape{batch, in}))
		}
		nodes = append(nodes, nd(OpLinear, []int{len(nodes) - 1}, spec.Shape{batch, out}))
		w := RatTensor{Shape: spec.Shape{out, in}, Data: make([]spec.Rat, out*in)}
		for i := range w.Data {
			w.Data[i] = spec.NewRat(int64((i*37+l)%255)-127, 1024)
		}
		b := RatTensor{Shape: spec.Shape{out}, Data: make([]spec.Rat, out)}
		for i := range b.Data {
			b.Data[i] = spec.NewRat(int64(i%9)-4, 64)
		}
		p.Entries[len(nodes)-1] = &Params{W: &w, B: &b}
	}
	return graphOf(nodes...), p
}

func mlpInput(batch, in int) spec.Tensor[spec.F32] {
	x := spec.Tensor[spec.F32]{Shape: spec.Shape{batch, in}, Data: make([]spec.F32, batch*in)}
	for i := range x.Data {
		x.Data[i] = spec.F32(float32(i%17-8) / 16)
	}
	return x
}

// BenchmarkDenoteAllF32MLP: DenoteAll over F32 on a 784→128→10 MLP with a
// batch of 64 (payload conversion included, as DenoteAll does it on every
// call).
func BenchmarkDenoteAllF32MLP(b *testing.B) {
	g, p := mlpGraph(64, 784, 128, 10)
	x := mlpInput(64, 784)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DenoteAll(g, p, x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkForwardGraphF32MLP: the same MLP through the lowered forward
// graph, whose parameters were converted once.
func BenchmarkForwardGraphF32MLP(b *testing.B) {
	g, p := mlpGraph(64, 784, 128, 10)
	f, err := LowerForward[spec.F32](g, p)
	if err != nil {
		b.Fatal(err)
	}
	x := mlpInput(64, 784)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.Run(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHandLoopF32MLP is the baseline: the same arithmetic (left folds
// from +0, bias last, one rounding per operation) written as plain loops
// over float32.
func BenchmarkHandLoopF32MLP(b *testing.B) {
	g, p := mlpGraph(64, 784, 128, 10)
	ws := [][]float32{}
	bs := [][]float32{}
	for _, n := range g.Nodes {
		if n.Kind.Op == OpLinear {
			e := p.Entries[n.ID]
			w, bb := ConvertTensor[spec.F32](*e.W), ConvertTensor[spec.F32](*e.B)
			wf, bf := make([]float32, len(w.Data)), make([]float32, len(bb.Data))
			for i, v := range w.Data {
				wf[i] = float32(v)
			}
			for i, v := range bb.Data {
				bf[i] = float32(v)
			}
			ws, bs = append(ws, wf), append(bs, bf)
		}
	}
	xin := mlpInput(64, 784)
	sizes := []int{784, 128, 10}
	b.ReportAllocs()
	for b.Loop() {
		x := make([]float32, len(xin.Data))
		for i, v := range xin.Data {
			x[i] = float32(v)
		}
		for l := 0; l < 2; l++ {
			in, out := sizes[l], sizes[l+1]
			y := make([]float32, 64*out)
			for r := 0; r < 64; r++ {
				for j := 0; j < out; j++ {
					var acc float32
					for k := 0; k < in; k++ {
						acc += float32(x[r*in+k] * ws[l][j*in+k])
					}
					y[r*out+j] = acc + bs[l][j]
				}
			}
			if l == 0 {
				for i, v := range y {
					y[i] = max(v, 0)
				}
			}
			x = y
		}
	}
}

// chainGraph is a chain of depth linear 4→4 layers with weights whose
// denominators are not powers of two, so that over Rat the bit length of
// the values grows with depth.
func chainGraph(depth int) (*Graph, *Payload) {
	nodes := []Node{input(4)}
	p := &Payload{Entries: map[int]*Params{}}
	for l := 0; l < depth; l++ {
		nodes = append(nodes, nd(OpLinear, []int{len(nodes) - 1}, spec.Shape{4}))
		w := RatTensor{Shape: spec.Shape{4, 4}, Data: make([]spec.Rat, 16)}
		for i := range w.Data {
			w.Data[i] = spec.NewRat(int64((i*5+l)%7)-3, int64(3+(i+l)%5))
		}
		b := RatTensor{Shape: spec.Shape{4}, Data: make([]spec.Rat, 4)}
		for i := range b.Data {
			b.Data[i] = spec.NewRat(int64(i+1), 7)
		}
		p.Entries[len(nodes)-1] = &Params{W: &w, B: &b}
	}
	return graphOf(nodes...), p
}

// BenchmarkDenoteAllRatChain shows how exact evaluation cost grows with
// depth: the "bits" metric is the largest bit length (numerator plus
// denominator) among the output's elements.
func BenchmarkDenoteAllRatChain(b *testing.B) {
	x := ints(spec.Shape{4}, 1, -2, 3, -4)
	for _, depth := range []int{1, 2, 5, 10, 20} {
		b.Run("depth="+strconv.Itoa(depth), func(b *testing.B) {
			g, p := chainGraph(depth)
			var out RatTensor
			b.ReportAllocs()
			for b.Loop() {
				vals, err := DenoteAll(g, p, x)
				if err != nil {
					b.Fatal(err)
				}
				out = vals[len(vals)-1]
			}
			bits := 0
			for _, v := range out.Data {
				bits = max(bits, v.BitLen())
			}
			b.ReportMetric(float64(bits), "bits")
		})
	}
}
