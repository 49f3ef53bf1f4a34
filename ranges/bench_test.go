package ranges

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// BenchmarkTraceMLP traces the quickstart-shaped MLP example (linear 2→8,
// relu, linear 8→1) over a box, with the kernel plan made once.
func BenchmarkTraceMLP(b *testing.B) {
	tg := mlpGraph(b)
	box := mustBox(b, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1})
	plan := mustPlan(b, tg.g, backend.CheckedCPU())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Trace(tg.g, tg.p, box, plan); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlanAndTraceMLP includes planning the kernels.
func BenchmarkPlanAndTraceMLP(b *testing.B) {
	tg := mlpGraph(b)
	box := mustBox(b, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1})
	prof := backend.CheckedCPU()
	b.ReportAllocs()
	for b.Loop() {
		plan, err := PlanKernels(tg.g, prof)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Trace(tg.g, tg.p, box, plan); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckMLP verifies an MLP certificate: re-plan, rebuild, compare
// and replay binary32 at 4 corners, the centre and 16 random points.
func BenchmarkCheckMLP(b *testing.B) {
	tg := mlpGraph(b)
	c := produce(b, tg, mustBox(b, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Check(c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTraceWideMLP traces a wider MLP (linear 64→64, relu, linear
// 64→64, relu, linear 64→1) to show how a trace scales with the
// multiply-adds (about 8.3k here).
func BenchmarkTraceWideMLP(b *testing.B) {
	g, p := wideMLP(b, 64)
	lo, hi := make([]float32, 64), make([]float32, 64)
	for i := range lo {
		lo[i], hi[i] = -1, 1
	}
	box := mustBox(b, spec.Shape{64}, lo, hi)
	plan := mustPlan(b, g, backend.CheckedCPU())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Trace(g, p, box, plan); err != nil {
			b.Fatal(err)
		}
	}
}

// wideMLP builds linear n→n, relu, linear n→n, relu, linear n→1 with
// small dyadic weights.
func wideMLP(t testing.TB, n int) (*irsem.Graph, *irsem.Payload) {
	t.Helper()
	doc := fmt.Sprintf(`{"format":"torchlean.ir.v1","input_id":0,"output_id":5,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[%[1]d]},
  {"id":1,"kind":"linear","parents":[0],"shape":[%[1]d]},
  {"id":2,"kind":"relu","parents":[1],"shape":[%[1]d]},
  {"id":3,"kind":"linear","parents":[2],"shape":[%[1]d]},
  {"id":4,"kind":"relu","parents":[3],"shape":[%[1]d]},
  {"id":5,"kind":"linear","parents":[4],"shape":[1]}]}`, n)
	g := mustGraph(t, doc)
	tensor := func(shape []int, seed uint64) string {
		size := 1
		for _, d := range shape {
			size *= d
		}
		vs := make([]string, size)
		for i := range vs {
			// The canonical spelling: the payload reader refuses "2/128".
			vs[i] = `"` + big.NewRat(int64(spec.UniformBits(seed, i)%9)-4, int64(8*n)).RatString() + `"`
		}
		return fmt.Sprintf(`{"shape":%s,"values":[%s]}`, strings.ReplaceAll(fmt.Sprint(shape), " ", ","), strings.Join(vs, ","))
	}
	pdoc := fmt.Sprintf(`{"format":"tlcheck.payload.v1","entries":{
  "1":{"W":%s,"b":%s},
  "3":{"W":%s,"b":%s},
  "5":{"W":%s,"b":%s}}}`,
		tensor([]int{n, n}, 1), tensor([]int{n}, 2), tensor([]int{n, n}, 3), tensor([]int{n}, 4), tensor([]int{1, n}, 5), tensor([]int{1}, 6))
	return g, mustPayload(t, pdoc)
}

// TestWideMLPCertificate keeps the benchmark's graph honest: its
// certificate checks.
func TestWideMLPCertificate(t *testing.T) {
	g, p := wideMLP(t, 16)
	lo, hi := make([]float32, 16), make([]float32, 16)
	for i := range lo {
		lo[i], hi[i] = -1, 1
	}
	c, err := Produce(g, p, mustBox(t, spec.Shape{16}, lo, hi), backend.CheckedCPU())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := CheckWith(c, Options{Exact: true}); err != nil {
		t.Fatal(err)
	}
}
