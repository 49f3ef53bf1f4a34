package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestErfBound: over y = erf(x), the float32 value of the library erf
// (math.Erf rounded to float32, within an ulp) holds against the bound,
// and a value off by 10⁻³ relative fails: the judge catches the planted
// error.
func TestErfBound(t *testing.T) {
	xs := []float64{-2, -0.5, 0, 0.75, 1, 3}
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Shape: spec.Shape{len(xs)}},
		{ID: 1, Parents: []int{0}, Kind: irsem.Kind{Op: "erf"}, Shape: spec.Shape{len(xs)}},
	}}
	data := make([]spec.Rat, len(xs))
	for i, x := range xs {
		data[i], _ = spec.RatFromFloat64(x)
	}
	in, err := spec.NewTensor(spec.Shape{len(xs)}, data)
	if err != nil {
		t.Fatal(err)
	}
	ens, err := Bounds(g, &irsem.Payload{}, in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if math.IsInf(ens[i].Bound, 1) {
			t.Fatalf("erf(%v): no bound (%s)", x, ens[i].Reason)
		}
		good := float32(math.Erf(x))
		if v := Judge(good, ens[i]).Verdict; v != Holds {
			t.Errorf("erf(%v): float32 %v is %v, want holds (bound %g, exact %v)", x, good, v, ens[i].Bound, ens[i].Exact)
		}
		if x == 0 {
			continue
		}
		bad := float32(math.Erf(x) * (1 + 1e-3))
		if v := Judge(bad, ens[i]).Verdict; v != Fails {
			t.Errorf("erf(%v): planted %v is %v, want fails", x, bad, v)
		}
	}
}
