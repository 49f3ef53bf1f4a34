package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/refine"
)

// cudaSet returns the fast providers plus a native-cuda provider (the
// CPU emulation of the PTX kernels stands in for the GPU).
func cudaSet(t *testing.T, p backend.Provider) *backend.Providers {
	t.Helper()
	ps := backend.FastProviders()
	if err := ps.Register(p); err != nil {
		t.Fatal(err)
	}
	return ps
}

// TestCUDARefinementCertificates: native-cuda refinement certificates are
// produced only on request; they verify with the provider (re-executed,
// judged again) and without it (re-derived from the record); a recorded
// output beyond the bound is rejected by re-derivation alone; a provider
// that has gone wrong is caught by re-execution.
func TestCUDARefinementCertificates(t *testing.T) {
	t.Parallel()
	o := certificates.Options{Seed: 5, Cases: 3, Ops: []string{"sum", "matmul"},
		Providers: []string{backend.ProviderReference, backend.ProviderFastCPU, backend.ProviderNativeCUDA}}
	dir := t.TempDir()
	certifyFull(t, dir, certificates.FullSuiteWith(cudaSet(t, cuda.NewEmulatedProvider(cuda.Options{AtomicSum: true}))), o)
	for _, c := range []struct {
		name string
		s    *certificates.Suite
	}{
		{"re-executed", certificates.FullSuiteWith(cudaSet(t, cuda.NewEmulatedProvider(cuda.Options{})))},
		{"re-derived (no CUDA provider)", certificates.FullSuite()},
	} {
		rep, err := Dir(c.s, dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f := rep.Failures(); len(f) != 0 {
			t.Fatalf("%s: %v", c.name, f[0].Err)
		}
		n := 0
		for _, f := range rep.Files {
			if strings.HasPrefix(f.Path, "refinement/native-cuda.") {
				n++
			}
		}
		if n != 2 {
			t.Fatalf("%s: %d native-cuda certificates verified, want 2", c.name, n)
		}
	}

	// A recorded output beyond the bound, checked with no CUDA provider.
	bad, _ := refine.NewFlipBit(cuda.NewEmulatedProvider(cuda.Options{}), "sum", 0, 20)
	f, err := certificates.ProduceUncheckedRefinement(cudaSet(t, bad), backend.ProviderNativeCUDA, "sum", o.Cases, o.Seed)
	if err != nil {
		t.Fatal(err)
	}
	var fe *certificates.FieldError
	_, err = refinementEnv{providers: backend.FastProviders()}.verify("refinement/native-cuda.sum.json", f, &certificates.Manifest{Seed: o.Seed, Cases: o.Cases})
	if !errors.As(err, &fe) || fe.Field != "cases[0].elements[0].error" || !strings.Contains(err.Error(), "exceeds the bound") {
		t.Fatalf("re-derivation: %v", err)
	}

	// An honest certificate re-executed on a provider gone wrong.
	rep, err := Dir(certificates.FullSuiteWith(cudaSet(t, bad)), dir)
	if err != nil {
		t.Fatal(err)
	}
	fails := rep.Failures()
	if len(fails) != 1 || fails[0].Path != "refinement/native-cuda.sum.json" ||
		!errors.As(fails[0].Err, &fe) || fe.Field != "cases[0].output" || !strings.Contains(fe.Msg, "does not refine") {
		t.Fatalf("re-execution: %v", fails)
	}
}
