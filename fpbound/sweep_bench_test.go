package fpbound

import (
	"sort"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// BenchmarkSharpMLP64 is the cost goal of docs/bounds.md: SharpBounds on
// the 64-layer ReLU MLP of width 64 (default init) against tlcheck's own
// float32 evaluation of it (irsem.Denote over spec.F32, timed over 20
// runs beside each bound), reported as the min and median ratio over the
// iterations, with the share of the classic bound (Bounds) in it.
func BenchmarkSharpMLP64(b *testing.B) {
	n, err := nets.MLP(164, 64, 64, irsem.OpRelu, nets.Default)
	if err != nil {
		b.Fatal(err)
	}
	x32 := irsem.ConvertTensor[spec.F32](n.Input)
	var ratios, classic []float64
	for b.Loop() {
		f32 := f32EvalSeconds(b, n.Graph, n.Payload, x32)
		t1 := time.Now()
		if _, err := Bounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
			b.Fatal(err)
		}
		t2 := time.Now()
		if _, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{}); err != nil {
			b.Fatal(err)
		}
		sharp := time.Since(t2).Seconds()
		ratios = append(ratios, sharp/f32)
		classic = append(classic, t2.Sub(t1).Seconds()/sharp)
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[0], "min-ratio")
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(median(classic), "classic-share")
}

// f32EvalSeconds is the mean wall time of tlcheck's own float32
// evaluation (irsem.Denote over spec.F32) of g at x32 over 20 runs: the
// denominator of the cost ratios above.
func f32EvalSeconds(b *testing.B, g *irsem.Graph, p *irsem.Payload, x32 spec.Tensor[spec.F32]) float64 {
	t0 := time.Now()
	for range 20 {
		if _, err := irsem.Denote(g, p, x32); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(t0).Seconds() / 20
}
