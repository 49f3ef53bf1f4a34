package verify

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// chainModel is a chain of n − 1 relu nodes over a [2] input, the shape of
// issue 26's 65 000-relu model (whose verify was reported at 15× certify).
func chainModel(t *testing.T, n int) *certificates.Model {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":"torchlean.ir.v1","input_id":0,"output_id":%d,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]}`, n-1)
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, `,{"id":%d,"kind":"relu","parents":[%d],"shape":[2]}`, i, i-1)
	}
	b.WriteString("]}")
	g, err := irsem.DecodeGraph([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Tensor[spec.Rat]{Shape: spec.Shape{2}, Data: []spec.Rat{spec.NewRat(3, 1), spec.NewRat(-3, 2)}}
	return &certificates.Model{Name: "chain", Graph: g, Input: x}
}

// mallocs runs f and returns the heap allocations it made: a count of
// work units that does not depend on the machine's load.
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// chainCost certifies and verifies the chain of n nodes and returns the
// allocations of each.
func chainCost(t *testing.T, n int) (certify, verify uint64) {
	t.Helper()
	m := chainModel(t, n)
	dir := filepath.Join(t.TempDir(), "c")
	certify = mallocs(func() {
		s, skipped, err := certificates.ModelSuite(m, 1)
		if err != nil || len(skipped) != 0 {
			t.Fatalf("model suite: %v %v", err, skipped)
		}
		if _, err := s.Certify(dir, certificates.Options{Seed: 1, Cases: 2, Ops: []string{"relu"}, Providers: []string{}}); err != nil {
			t.Fatal(err)
		}
	})
	verify = mallocs(func() {
		rep, err := Dir(certificates.FullSuite(), dir)
		if err != nil {
			t.Fatal(err)
		}
		if f := rep.Failures(); len(f) != 0 {
			t.Fatalf("chain of %d: %v", n, f[0].Err)
		}
	})
	return certify, verify
}

// TestVerifyCostLinear (issue 26 points 3 and 11): verifying the
// certificate of a relu chain is linear in its length and within a small
// factor of certifying it. The work is counted in heap allocations (not
// time): k× the nodes may cost at most 1.25·k× the allocations (a
// quadratic step would cost k²×), and verify at most 8× certify (5.7×
// measured: it rebuilds the producer's trace, then replays it in binary32,
// through the kernels and exactly). The chain of 64 000 nodes (issue 26's
// 65 000-relu model) runs with TLCHECK_EXHAUSTIVE set (CI's exhaustive
// run), not under -short; the default run compares 1 000 and 4 000.
func TestVerifyCostLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts under the race detector are not the build's")
	}
	sizes := []int{1000, 4000}
	if exhaustive() && !testing.Short() {
		sizes = append(sizes, 64000)
	}
	var prev uint64
	for i, n := range sizes {
		c, v := chainCost(t, n)
		t.Logf("chain of %d nodes: certify %d allocations, verify %d (%.2f×)", n, c, v, float64(v)/float64(c))
		if float64(v) > 8*float64(c) {
			t.Errorf("chain of %d nodes: verify made %d allocations, more than 8× certify's %d", n, v, c)
		}
		if i > 0 {
			k := float64(n) / float64(sizes[i-1])
			if float64(v) > 1.25*k*float64(prev) {
				t.Errorf("chain of %d nodes: verify made %d allocations, more than 1.25·%.0f× the %d of %d nodes: not linear", n, v, k, prev, sizes[i-1])
			}
		}
		prev = v
	}
}
