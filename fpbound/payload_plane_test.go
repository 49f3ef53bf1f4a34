package fpbound

import (
	"math"
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// withPlanes returns a payload equal to p with every W held as a binary32
// plane (irsem.Params.SetWeightPlane), as the ONNX importer stores a FLOAT
// initializer; every W of p must be a binary32 value.
func withPlanes(t *testing.T, p *irsem.Payload) *irsem.Payload {
	t.Helper()
	q := &irsem.Payload{Entries: map[int]*irsem.Params{}}
	for _, id := range p.IDs() {
		e := *p.Entry(id)
		if e.W != nil {
			fs := make([]float32, len(e.W.Data))
			for i, r := range e.W.Data {
				f, ok := r.ExactFloat64()
				if !ok || float64(float32(f)) != f {
					t.Fatalf("node %d: W[%d] = %v is no binary32", id, i, r)
				}
				fs[i] = float32(f)
			}
			pl, err := irsem.NewPlane32(e.W.Shape, fs)
			if err != nil {
				t.Fatal(err)
			}
			e.SetWeightPlane(pl)
		}
		q.Entries[id] = &e
	}
	if !q.Equal(p) || !p.Equal(q) {
		t.Fatal("the plane payload is not Equal to the rational one")
	}
	return q
}

// exactOut is g's exact output on x (irsem over spec.Rat).
func exactOut(t *testing.T, g *irsem.Graph, p *irsem.Payload, x irsem.RatTensor) spec.Tensor[spec.Rat] {
	t.Helper()
	all, err := irsem.DenoteAll(g, p, x)
	if err != nil {
		t.Fatal(err)
	}
	return all[g.OutputID]
}

// TestComparePlanePayload: compare's judgement (every element's verdict,
// bound and enclosure: the whole Result) is the same whether the payload
// holds W as rationals or as binary32 planes, on linear and conv graphs,
// for a recorded output equal to the exact value rounded to binary32 and
// for one with a planted error.
func TestComparePlanePayload(t *testing.T) {
	nets := convLinearNets(1)
	for _, n := range nets {
		q := withPlanes(t, n.p)
		y := exactOut(t, n.g, n.p, n.x)
		rec := make([]float32, len(y.Data))
		for i, r := range y.Data {
			rec[i] = float32(r.Float64())
		}
		planted := append([]float32(nil), rec...)
		planted[0] += 1
		for _, r := range [][]float32{rec, planted} {
			a, err := Compare(n.g, n.p, n.x, r, Options{})
			if err != nil {
				t.Fatalf("%s: %v", n.name, err)
			}
			b, err := Compare(n.g, q, n.x, r, Options{})
			if err != nil {
				t.Fatalf("%s (planes): %v", n.name, err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Errorf("%s: compare differs with W held as planes", n.name)
			}
		}
	}
}

// TestComparePlantedPlaneUlp: one weight one binary32 ulp off in a stored
// plane changes compare's verdict. The graph is y = W·x with W = [[1]]
// and x = [3]: the recorded output 3 is exact; with W planted at 1 + 2⁻²³
// the exact output is 3 + 3·2⁻²³, farther from 3 than binary32's bound
// for one product allows (u·|y| = 3·2⁻²⁴ a rounding), so the element
// fails, while the unplanted plane holds.
func TestComparePlantedPlaneUlp(t *testing.T) {
	b := newBuilder(spec.Shape{1, 1})
	id := b.node(irsem.Kind{Op: irsem.OpLinear}, spec.Shape{1, 1}, 0)
	for _, tc := range []struct {
		w    float32
		want Verdict
	}{
		{1, Holds},
		{math.Nextafter32(1, 2), Fails},
		{math.Nextafter32(1, 0), Fails},
	} {
		pl, err := irsem.NewPlane32(spec.Shape{1, 1}, []float32{tc.w})
		if err != nil {
			t.Fatal(err)
		}
		e := &irsem.Params{B: &irsem.RatTensor{Shape: spec.Shape{1}, Data: []spec.Rat{{}}}}
		e.SetWeightPlane(pl)
		b.p.Entries[id] = e
		x := irsem.RatTensor{Shape: spec.Shape{1, 1}, Data: []spec.Rat{spec.NewRat(3, 1)}}
		r, err := Compare(b.g, b.p, x, []float32{3}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Elements[0].Verdict; got != tc.want {
			t.Errorf("W = %v (plane): %v (bound %g), want %v", tc.w, got, r.Elements[0].Bound, tc.want)
		}
	}
}
