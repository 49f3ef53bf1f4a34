package refine

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// bindFast binds fast_cpu's capsule of op to the provider p.
func bindFast(t *testing.T, op string, p backend.Provider) *backend.Binding {
	t.Helper()
	c, err := backend.FastCPUCapsule(op)
	if err != nil {
		t.Fatal(err)
	}
	return &backend.Binding{Capsule: c, Provider: p}
}

// TestDeclaredOrderHolds: fast_cpu's sum and reduce_sum follow their
// documented 8-lane chunked order bit for bit, at seeds 0–20.
func TestDeclaredOrderHolds(t *testing.T) {
	for _, op := range DeclaredOrderOps() {
		b := bindFast(t, op, backend.NewFastCPUProvider())
		for seed := uint64(0); seed <= 20; seed++ {
			if err := CheckDeclaredOrder(b, op, seed); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
	}
}

// TestDeclaredOrderCatchesPlants: a sequential left fold in the 8-lane
// provider (within the γ bound, so refinement admits it), and per-thread
// partials whose split depends on GOMAXPROCS, are caught at seed 0 and at
// every seed 1–20.
func TestDeclaredOrderCatchesPlants(t *testing.T) {
	seqSum := func(v []spec.F32) spec.F32 {
		var acc float32
		for _, x := range v {
			acc = acc + float32(x)
		}
		return spec.F32(acc)
	}
	// Partials over GOMAXPROCS contiguous parts, merged left to right.
	threadSum := func(v []spec.F32) spec.F32 {
		p := runtime.GOMAXPROCS(0)
		var total float32
		for k := 0; k < p; k++ {
			var part float32
			for _, x := range v[k*len(v)/p : (k+1)*len(v)/p] {
				part = part + float32(x)
			}
			total = total + part
		}
		return spec.F32(total)
	}
	for _, pl := range []struct {
		name string
		sum  func([]spec.F32) spec.F32
	}{{"sequential fold", seqSum}, {"per-thread partials", threadSum}} {
		prov, err := backend.NewFuncProvider("fast_cpu", backend.DeviceCPU, []string{"sum"}, func(_ string, _ *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return spec.Tensor[spec.F32]{Shape: spec.Shape{}, Data: []spec.F32{pl.sum(xs[0].Data)}}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		b := bindFast(t, "sum", prov)
		for seed := uint64(0); seed <= 20; seed++ {
			err := CheckDeclaredOrder(b, "sum", seed)
			if err == nil || !strings.Contains(err.Error(), "documented 8-lane chunked order") {
				t.Fatalf("%s, seed %d: %v, want the declared-order failure", pl.name, seed, err)
			}
		}
		// Refinement alone admits the sequential fold: it is within γ.
		if pl.name == "sequential fold" {
			if res, err := Check(b, "sum", 20, 0); err != nil || res.Failures != 0 {
				t.Logf("refinement: %v %+v", err, res)
			}
		}
	}
}
