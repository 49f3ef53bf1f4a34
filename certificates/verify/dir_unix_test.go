//go:build unix

package verify

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/certificates"
)

// TestFIFONeverBlocks: a FIFO at a listed path (a tar bundle can carry
// one) and an unlisted one are refused without being opened, so verify
// returns.
func TestFIFONeverBlocks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := certificates.NewSuite().Certify(dir, oneReadOptions); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "adjointness/mul.json")
	os.Remove(p)
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no FIFOs:", err)
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "adjointness/extra.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan *Report, 1)
	go func() {
		rep, err := Dir(certificates.NewSuite(), dir)
		if err != nil {
			t.Error(err)
		}
		done <- rep
	}()
	select {
	case rep := <-done:
		if rep == nil {
			return
		}
		want := map[string]bool{"adjointness/mul.json": false, "adjointness/extra.json": false}
		for _, f := range rep.Failures() {
			if _, ok := want[f.Path]; ok && strings.Contains(f.Err.Error(), "named pipe (FIFO)") {
				want[f.Path] = true
			}
		}
		for p, ok := range want {
			if !ok {
				t.Errorf("no FIFO failure for %s: %v", p, rep.Failures())
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("verify blocked on a FIFO")
	}
}
