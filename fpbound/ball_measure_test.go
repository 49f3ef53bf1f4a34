package fpbound

import (
	"math"
	"os"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestBallGPT2Widths measures the enclosure width of the exact outputs of
// the GPT-2 stack, interval evaluation against the ball centre
// (BALL_FIGURES=1; docs/bounds.md, "The ball centre").
func TestBallGPT2Widths(t *testing.T) {
	if os.Getenv("BALL_FIGURES") == "" {
		t.Skip("BALL_FIGURES=1 runs the measurement")
	}
	for _, mask := range []nets.Mask{nets.HardMask, nets.FinfoMin} {
		for _, bl := range []int{4, 6, 8, 12} {
			n, err := nets.GPT2(uint64(300+bl), 4, 8, 2, bl, nets.Default, mask)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Now()
			ivs, err := irsem.DenoteAll(n.Graph, n.Payload, irsem.ConvertTensor[spec.Interval](n.Input))
			if err != nil {
				t.Fatal(err)
			}
			tiv := time.Since(t0)
			t0 = time.Now()
			c, err := BallCentre(n.Graph, n.Payload, n.Input)
			if err != nil {
				t.Fatal(err)
			}
			tb := time.Since(t0)
			_, rad, _, err := ballEval(n.Graph, n.Payload, n.Input, c.Prec)
			if err != nil {
				t.Fatal(err)
			}
			out := ivs[n.Graph.OutputID].Data
			var wi, wb []float64
			for i, iv := range out {
				b := c.Nodes[n.Graph.OutputID][i]
				m := math.Max(math.Abs(b.Float64()), 1e-300)
				wi = append(wi, (iv.Hi-iv.Lo)/m)
				wb = append(wb, (b.Hi-b.Lo)/m)
			}
			t.Logf("%s: interval rel width median %.3g max %.3g (%v); ball median %.3g max %.3g at %d bits (radius/max(1,|mid|) ≤ %.3g; %v) fallback %v",
				n.Name, median(wi), maxOf(wi), tiv, median(wb), maxOf(wb), c.Prec, rad, tb, c.Fallback)
		}
	}
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = math.Max(m, x)
	}
	return m
}
