package lean4export

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
)

// FuzzParse: no input panics Parse or the audit of what it accepts, and
// with small limits no input is buffered past them.
func FuzzParse(f *testing.F) {
	base := newFx()
	base.idThm("T")
	for _, s := range []string{base.String(), withSorry(), withAxiom("T._native.native_decide.ax_1_1"), withAxiom("propext"), metaLine + "\n"} {
		f.Add([]byte(s))
	}
	if dir, err := os.Getwd(); err == nil {
		for _, n := range []string{"axiom-control.ndjson", "init-Nat.lt_of_succ_le.ndjson"} {
			if data, err := os.ReadFile(filepath.Join(dir, "..", "..", "..", "shared", "lean4export", n)); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer limits.Set(limits.Limits{LeanLines: 4096, LeanLineBytes: 8192})()
		e, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		names := e.Theorems()
		for _, d := range e.Decls() {
			names = append(names, d.Name)
		}
		fs := Audit(e, names, nil)
		if len(fs) != len(names) {
			t.Fatalf("%d findings for %d names", len(fs), len(names))
		}
		if l, err := NewLock(e, e.Theorems()); err == nil {
			if _, err := ReadLock("x", bytes.NewReader(l.Bytes())); err != nil && len(l.Theorems) > 0 {
				t.Fatalf("a written lock does not read back: %v", err)
			}
		}
	})
}
