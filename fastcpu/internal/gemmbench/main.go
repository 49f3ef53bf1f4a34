// Command gemmbench measures fastcpu's float32 matrix products against
// the machine's peak and, when built with -tags openblas, against
// OpenBLAS's cblas_sgemm in the same process, interleaved.
//
//	go run ./fastcpu/internal/gemmbench                      # fastcpu and peak only
//	OPENBLAS_CORETYPE=SkylakeX go run -tags openblas ./fastcpu/internal/gemmbench
//
// (the openblas tag needs cgo and libopenblas-dev; the main module never
// does). For each size (256³, 1024³, 2048³ by default) and thread count
// (1, 2) it runs, round after round, each contender once — fastcpu.Sgemm
// (the bit-identical fixed-left fold), fastcpu.SgemmFast (the
// implementation-defined FMA path) and OpenBLAS — so that load from other
// processes hits all of them alike, and reports for each the best and
// the median GFLOP/s (2·m·n·k per call over wall time) over the rounds,
// with the ratios of the medians and of the bests. Peak is measured with
// register-only microkernels (no memory traffic): AVX-512 FMA, AVX-512
// separate multiply + add, AVX2 separate multiply + add, each on every
// thread at once.
//
// Threads: GOMAXPROCS for fastcpu, openblas_set_num_threads for OpenBLAS
// (set OPENBLAS_NUM_THREADS to the largest count too, so that its pool
// has that many threads).
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/fastcpu/internal/peak"
)

func main() {
	sizes := flag.String("sizes", "256,1024,2048", "comma-separated n for n×n×n products")
	threads := flag.String("threads", "1,2", "comma-separated thread counts")
	rounds := flag.Int("rounds", 5, "interleaved rounds per size and thread count")
	minTime := flag.Duration("mintime", 200*time.Millisecond, "least time per contender per round (calls are repeated)")
	flag.Parse()
	ns, err := ints(*sizes)
	if err == nil {
		var ts []int
		ts, err = ints(*threads)
		if err == nil {
			run(ns, ts, *rounds, *minTime)
			return
		}
	}
	fmt.Fprintln(os.Stderr, "gemmbench:", err)
	os.Exit(2)
}

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("bad list %q", s)
		}
		out = append(out, v)
	}
	return out, nil
}

type contender struct {
	name string
	f    func(n int, a, b, c []float32)
}

func run(sizes, threads []int, rounds int, minTime time.Duration) {
	cs := []contender{
		{"fastcpu.Sgemm (fixed-left)", func(n int, a, b, c []float32) { fastcpu.Sgemm(n, n, n, a, n, b, n, c, n) }},
		{"fastcpu.SgemmFast", func(n int, a, b, c []float32) { fastcpu.SgemmFast(n, n, n, a, n, b, n, c, n) }},
	}
	if openblasAvailable {
		cs = append(cs, contender{"OpenBLAS sgemm", openblasSgemm})
		fmt.Printf("OpenBLAS: %s\n", openblasInfo())
	}
	fmt.Printf("GOMAXPROCS default %d, NumCPU %d, rounds %d, ≥ %v per contender per round\n\n", runtime.GOMAXPROCS(0), runtime.NumCPU(), rounds, minTime)
	for _, t := range threads {
		prev := runtime.GOMAXPROCS(t)
		fmt.Printf("peak, %d thread(s), GFLOP/s (best of %d):", t, rounds)
		for _, p := range peak.Kernels() {
			best := 0.0
			for range rounds {
				best = max(best, measurePeak(p, t))
			}
			fmt.Printf("  %s %.1f", p.Name, best)
		}
		fmt.Println()
		runtime.GOMAXPROCS(prev)
	}
	fmt.Println()
	fmt.Println("| n | threads | contender | GFLOP/s median | best | median ÷ OpenBLAS | best ÷ OpenBLAS |")
	fmt.Println("|---|---|---|---:|---:|---:|---:|")
	for _, n := range sizes {
		r := rand.New(rand.NewPCG(1, uint64(n)))
		a, b, c := make([]float32, n*n), make([]float32, n*n), make([]float32, n*n)
		for i := range a {
			a[i], b[i] = r.Float32()*2-1, r.Float32()*2-1
		}
		flops := 2 * float64(n) * float64(n) * float64(n)
		for _, t := range threads {
			prev := runtime.GOMAXPROCS(t)
			setOpenblasThreads(t)
			g := make([][]float64, len(cs))
			for i := range cs {
				cs[i].f(n, a, b, c) // warm pools and caches
			}
			for range rounds {
				for i, ct := range cs {
					calls := 0
					start := time.Now()
					for calls == 0 || time.Since(start) < minTime {
						ct.f(n, a, b, c)
						calls++
					}
					g[i] = append(g[i], flops*float64(calls)/time.Since(start).Seconds()/1e9)
				}
			}
			runtime.GOMAXPROCS(prev)
			ref := len(cs) - 1
			for i, ct := range cs {
				med, best := median(g[i]), slices.Max(g[i])
				rm, rb := "", ""
				if openblasAvailable {
					rm = fmt.Sprintf("%.2f", med/median(g[ref]))
					rb = fmt.Sprintf("%.2f", best/slices.Max(g[ref]))
				}
				fmt.Printf("| %d | %d | %s | %.1f | %.1f | %s | %s |\n", n, t, ct.name, med, best, rm, rb)
			}
		}
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// measurePeak runs p on t goroutines at once, each locked to its own OS
// thread, and returns the total GFLOP/s.
func measurePeak(p peak.Kernel, t int) float64 {
	const iters = 4 << 20
	var wg sync.WaitGroup
	start := time.Now()
	for range t {
		wg.Add(1)
		go func() {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			p.Run(iters)
		}()
	}
	wg.Wait()
	return p.FlopsPerIter * iters * float64(t) / time.Since(start).Seconds() / 1e9
}
