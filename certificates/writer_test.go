package certificates

import (
	"strings"
	"testing"
)

// TestPutRejectsUnsafeStrings: the writer refuses a certificate with a
// string outside the safe alphabet.
func TestPutRejectsUnsafeStrings(t *testing.T) {
	t.Parallel()
	w := &Writer{dir: t.TempDir()}
	f := &RangeFile{Header: Header{Format: Format, Kind: KindRange}, Name: "quad; rm -rf /"}
	if err := w.Put("range/quad.json", KindRange, f); err == nil || !strings.Contains(err.Error(), "safe-alphabet") {
		t.Fatalf("unsafe name written: %v", err)
	}
	if len(w.files) != 0 {
		t.Fatal("rejected file listed")
	}
}
