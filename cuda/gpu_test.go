//go:build cuda && cgo

package cuda

// These tests and benchmarks need an NVIDIA GPU and its driver: a binary
// linking gorgonia.org/cu exits in its package init on a machine without
// one. CI only compiles them (go test -c -tags cuda); ci/gpu-check.sh runs
// them on a GPU machine.

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/refine"
)

func newTestGPU(t testing.TB) *gpu {
	t.Helper()
	g, err := newGPU()
	if err != nil {
		t.Fatalf("CUDA device: %v", err)
	}
	t.Cleanup(func() {
		if err := g.close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return g
}

// randVals draws n float32 values with mixed signs and binades, a few
// subnormals and zeros of both signs.
func randVals(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		switch r.IntN(16) {
		case 0:
			out[i] = float32(math.Copysign(0, -1))
		case 1:
			out[i] = math.Float32frombits(uint32(r.IntN(1 << 23)))
		default:
			out[i] = float32(r.NormFloat64() * math.Ldexp(1, r.IntN(20)-10))
		}
	}
	return out
}

func sameBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, emulation %d", what, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if (g != g && w != w) || math.Float32bits(g) == math.Float32bits(w) {
			continue
		}
		t.Fatalf("%s element %d: GPU %v (%#08x), emulation %v (%#08x)", what, i, g, math.Float32bits(g), w, math.Float32bits(w))
	}
}

// TestGPUMatchesEmulation: every kernel whose order is fixed by the PTX
// (all but tl_sum_atomic) gives the emulation's bits, on sizes that span
// several blocks and tiles and leave partial ones.
func TestGPUMatchesEmulation(t *testing.T) {
	g, e := newTestGPU(t), &emuKernels{}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 255, 256, 257, 70_001} {
		a, b := randVals(r, n), randVals(r, n)
		for _, entry := range []string{"tl_add", "tl_sub", "tl_mul"} {
			got, err := g.binary(entry, a, b)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := e.binary(entry, a, b)
			sameBits(t, entry, got, want)
		}
		for _, entry := range []string{"tl_neg", "tl_relu"} {
			got, err := g.unary(entry, a)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := e.unary(entry, a)
			sameBits(t, entry, got, want)
		}
		dq, err := g.divCount(a, 3*n)
		if err != nil {
			t.Fatal(err)
		}
		dw, _ := e.divCount(a, 3*n)
		sameBits(t, "tl_div_count", dq, dw)
		got, err := g.sumTree(a)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := e.sumTree(a)
		sameBits(t, "tl_sum_tree", []float32{got}, []float32{want})
	}
	for _, s := range [][3]int{{1, 1, 1}, {17, 33, 20}, {64, 64, 64}, {5, 300, 129}} {
		m, n, k := s[0], s[1], s[2]
		a, b := randVals(r, m*k), randVals(r, k*n)
		got, err := g.matmul(a, b, m, n, k)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := e.matmul(a, b, m, n, k)
		sameBits(t, "tl_matmul", got, want)
		bias := randVals(r, n)
		wt := randVals(r, n*k)
		got, err = g.linear(a, wt, bias, m, k, n)
		if err != nil {
			t.Fatal(err)
		}
		want, _ = e.linear(a, wt, bias, m, k, n)
		sameBits(t, "tl_linear", got, want)
	}
	for _, s := range [][3]int{{1, 1, 1}, {3, 600, 2}, {2, 1000, 1}, {4, 5, 7}} {
		x := randVals(r, s[0]*s[1]*s[2])
		got, err := g.reduceSum(x, s[0], s[1], s[2])
		if err != nil {
			t.Fatal(err)
		}
		want, _ := e.reduceSum(x, s[0], s[1], s[2])
		sameBits(t, "tl_reduce_sum", got, want)
	}
	x := randVals(r, 2*3*4)
	got, err := g.broadcast(x[:4], []int{2, 3, 4}, []int{0, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := e.broadcast(x[:4], []int{2, 3, 4}, []int{0, 0, 1})
	sameBits(t, "tl_broadcast", got, want)
}

// TestGPURefine runs refine's check on the GPU provider, both sum
// variants; a planted bit flip must fail.
func TestGPURefine(t *testing.T) {
	for _, o := range []Options{{}, {AtomicSum: true}} {
		p, err := NewProviderWith(o)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range refine.Ops() {
			res, err := refine.Check(bindCUDA(t, p, op), op, 40, 11)
			if err != nil || res.Failures != 0 {
				t.Errorf("atomic=%v %s: %v %v", o.AtomicSum, op, err, res.Failure)
			}
			bad, _ := refine.NewFlipBit(p, op, 0, 20)
			res, err = refine.Check(bindCUDA(t, bad, op), op, 8, 11)
			if err != nil || res.Failures == 0 {
				t.Errorf("atomic=%v %s: planted fault not caught (%v)", o.AtomicSum, op, err)
			}
		}
		p.(*provider).Close()
	}
}

// TestGPUOutOfMemoryNamesCall: a 4 TiB allocation fails with a
// *DriverError naming cuMemAlloc, the kernel and the size.
func TestGPUOutOfMemoryNamesCall(t *testing.T) {
	g := newTestGPU(t)
	err := g.call("tl_matmul", func(b *bufs) error {
		_, err := b.alloc("A", 1<<40)
		return err
	})
	var de *DriverError
	if !errors.As(err, &de) || de.Call != "cuMemAlloc" || !strings.Contains(err.Error(), "tl_matmul A") {
		t.Fatalf("got %v", err)
	}
	// The worker is still usable afterwards.
	if _, err := g.sumTree([]float32{1, 2}); err != nil {
		t.Fatal(err)
	}
}

// benchMatmul times tl_matmul alone (operands resident on the device)
// and reports GFLOP/s = 2·n³ per launch.
func benchMatmul(b *testing.B, n int) {
	g := newTestGPU(b)
	r := rand.New(rand.NewPCG(3, 4))
	a, c := randVals(r, n*n), randVals(r, n*n)
	b.ReportAllocs()
	err := g.call("tl_matmul", func(bs *bufs) error {
		pa, err := bs.upload("A", a)
		if err != nil {
			return err
		}
		pb, err := bs.upload("B", c)
		if err != nil {
			return err
		}
		pc, err := bs.alloc("C", n*n)
		if err != nil {
			return err
		}
		grid := [3]int{(n + MatmulTile - 1) / MatmulTile, (n + MatmulTile - 1) / MatmulTile, 1}
		b.ResetTimer()
		for range b.N {
			if err := g.launch("tl_matmul", grid, [3]int{MatmulTile, MatmulTile, 1}, "bench", uint64(pa), uint64(pb), uint64(pc), uint64(n), uint64(n), uint64(n)); err != nil {
				return err
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(2*float64(n)*float64(n)*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkGPUMatmul1024(b *testing.B) { benchMatmul(b, 1024) }
func BenchmarkGPUMatmul4096(b *testing.B) { benchMatmul(b, 4096) }

// BenchmarkGPUSum2p24 times the tree sum of 2^24 resident floats (every
// level of the tree) and reports GB/s of input read.
func BenchmarkGPUSum2p24(b *testing.B) {
	const n = 1 << 24
	g := newTestGPU(b)
	x := randVals(rand.New(rand.NewPCG(5, 6)), n)
	b.ReportAllocs()
	err := g.call("tl_sum_tree", func(bs *bufs) error {
		px, err := bs.upload("x", x)
		if err != nil {
			return err
		}
		p1, err := bs.alloc("partials", blocksFor(n))
		if err != nil {
			return err
		}
		p2, err := bs.alloc("partials2", blocksFor(blocksFor(n)))
		if err != nil {
			return err
		}
		b.ResetTimer()
		for range b.N {
			cur, m, out := px, n, p1
			for m > 1 {
				gr, bl := oneD(m)
				if err := g.launch("tl_sum_tree", gr, bl, "bench", uint64(cur), uint64(out), uint64(m)); err != nil {
					return err
				}
				cur, m = out, blocksFor(m)
				if out == p1 {
					out = p2
				} else {
					out = p1
				}
			}
		}
		b.StopTimer()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n)*4*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
}
