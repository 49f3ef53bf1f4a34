package certificates

import (
	"errors"
	"strings"
	"testing"
)

// TestMatchSources: the given files must be the recorded ones, role for
// role and digest for digest, in order; the first difference is named.
func TestMatchSources(t *testing.T) {
	t.Parallel()
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	m := &Manifest{Kinds: []string{KindModelRange}, Sources: []Source{{SourceONNX, "m.onnx", a}, {SourceInput, "x.pb", b}}}
	for _, tc := range []struct {
		name  string
		given []Source
		want  string // "" holds
	}{
		{"same", []Source{{SourceONNX, "here/m.onnx", a}, {SourceInput, "x", b}}, ""},
		{"model byte changed", []Source{{SourceONNX, "m2.onnx", c}, {SourceInput, "x", b}}, "SHA-256 " + c + ", but the certificate records " + a},
		{"input changed", []Source{{SourceONNX, "m.onnx", a}, {SourceInput, "y", c}}, "records " + b},
		{"input missing", []Source{{SourceONNX, "m.onnx", a}}, "was not given"},
		{"input extra", []Source{{SourceONNX, "m.onnx", a}, {SourceInput, "x", b}, {SourceInput, "z", c}}, "records no such file"},
		{"graph for onnx", []Source{{SourceGraph, "g.json", a}, {SourceInput, "x", b}}, "in its place"},
	} {
		err := MatchSources(m, tc.given)
		var sm *SourceMismatch
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (!errors.As(err, &sm) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want a mismatch naming %q", tc.name, err, tc.want)
		}
	}
	if err := MatchSources(&Manifest{Kinds: []string{KindModelRange}}, m.Sources); !errors.Is(err, ErrNoSources) {
		t.Errorf("no sources recorded: %v", err)
	}
}

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
