package refine_test

import (
	"testing"

	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// BenchmarkCheck measures refinement-check throughput (cases/s) for a
// 16×16·16×16 matmul and a 1024-element sum, on the fast provider (bound
// rule) and the reference provider (bit-exact rule, which adds the
// soft-float replay), over the default mix of input kinds and over normal
// inputs only.
func BenchmarkCheck(b *testing.B) {
	benches := []struct {
		name   string
		op     string
		shapes []spec.Shape
	}{
		{"matmul16", "matmul", []spec.Shape{{16, 16}, {16, 16}}},
		{"sum1024", "sum", []spec.Shape{{1024}}},
	}
	kinds := []struct {
		name  string
		kinds []refine.Kind
	}{{"mixed", nil}, {"normal", []refine.Kind{refine.KindNormal}}}
	for _, bc := range benches {
		for _, prov := range []string{"fast_cpu", "reference"} {
			for _, k := range kinds {
				b.Run(bc.name+"/"+prov+"/"+k.name, func(b *testing.B) {
					bind := bind(b, prov+"."+bc.op, nil)
					const cases = 7
					b.ReportAllocs()
					for i := 0; b.Loop(); i++ {
						res, err := refine.CheckOptions(bind, bc.op, refine.Options{Cases: cases, Seed: uint64(i),
							Kinds: k.kinds, Shapes: bc.shapes})
						if err != nil {
							b.Fatal(err)
						}
						if res.Failure != nil {
							b.Fatal(res.Failure)
						}
					}
					b.ReportMetric(float64(cases*b.N)/b.Elapsed().Seconds(), "cases/s")
				})
			}
		}
	}
}
