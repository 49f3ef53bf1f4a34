package certificates

import (
	"strings"
	"testing"
)

// TestCheckSources: the manifest's sources are checked as the writer
// writes them: roles known and in place, safe names, hex digests.
func TestCheckSources(t *testing.T) {
	t.Parallel()
	h := strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		l    []Source
		ok   bool
	}{
		{"onnx and inputs", []Source{{SourceONNX, "m.onnx", h}, {SourceInput, "a.pb", h}, {SourceInput, "b.pb", h}}, true},
		{"graph, payload, input", []Source{{SourceGraph, "g", h}, {SourcePayload, "p", h}, {SourceInput, "x", h}}, true},
		{"empty list", []Source{}, false},
		{"input first", []Source{{SourceInput, "x", h}, {SourceONNX, "m", h}}, false},
		{"payload after onnx", []Source{{SourceONNX, "m", h}, {SourcePayload, "p", h}}, false},
		{"unknown role", []Source{{"weights", "m", h}}, false},
		{"unsafe name", []Source{{SourceONNX, "m\x1b[2J", h}}, false},
		{"uppercase digest", []Source{{SourceONNX, "m", strings.Repeat("A", 64)}}, false},
	} {
		if err := checkSources(ManifestName, "sources", tc.l); (err == nil) != tc.ok {
			t.Errorf("%s: %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}
