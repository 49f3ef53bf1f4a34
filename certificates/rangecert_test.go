package certificates

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestExamplesIdentical: the embedded examples are byte-identical to the
// shipped ones.
func TestExamplesIdentical(t *testing.T) {
	t.Parallel()
	names := map[string]bool{}
	for _, ex := range RangeExamples {
		for _, p := range []string{ex.graph, ex.payload, ex.input} {
			if p != "" {
				names[p] = true
			}
		}
	}
	entries, err := exampleFS.ReadDir("examples")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(names) {
		t.Fatalf("%d embedded files, %d used", len(entries), len(names))
	}
	for p := range names {
		emb, err := exampleFS.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		shipped, err := os.ReadFile(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(emb, shipped) {
			t.Errorf("certificates/%s differs from ../%s: copy it again", p, p)
		}
	}
}
