package verify

import (
	"errors"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// TestMatchSources: the given files must be the recorded ones, role for
// role and digest for digest, in order; the first difference is named.
func TestMatchSources(t *testing.T) {
	t.Parallel()
	a, b, c := strings.Repeat("a", 64), strings.Repeat("b", 64), strings.Repeat("c", 64)
	m := &certificates.Manifest{Kinds: []string{certificates.KindModelRange}, Sources: []certificates.Source{{Role: certificates.SourceONNX, Name: "m.onnx", SHA256: a}, {Role: certificates.SourceInput, Name: "x.pb", SHA256: b}}}
	for _, tc := range []struct {
		name  string
		given []certificates.Source
		want  string // "" holds
	}{
		{"same", []certificates.Source{{Role: certificates.SourceONNX, Name: "here/m.onnx", SHA256: a}, {Role: certificates.SourceInput, Name: "x", SHA256: b}}, ""},
		{"model byte changed", []certificates.Source{{Role: certificates.SourceONNX, Name: "m2.onnx", SHA256: c}, {Role: certificates.SourceInput, Name: "x", SHA256: b}}, "SHA-256 " + c + ", but the certificate records " + a},
		{"input changed", []certificates.Source{{Role: certificates.SourceONNX, Name: "m.onnx", SHA256: a}, {Role: certificates.SourceInput, Name: "y", SHA256: c}}, "records " + b},
		{"input missing", []certificates.Source{{Role: certificates.SourceONNX, Name: "m.onnx", SHA256: a}}, "was not given"},
		{"input extra", []certificates.Source{{Role: certificates.SourceONNX, Name: "m.onnx", SHA256: a}, {Role: certificates.SourceInput, Name: "x", SHA256: b}, {Role: certificates.SourceInput, Name: "z", SHA256: c}}, "records no such file"},
		{"graph for onnx", []certificates.Source{{Role: certificates.SourceGraph, Name: "g.json", SHA256: a}, {Role: certificates.SourceInput, Name: "x", SHA256: b}}, "in its place"},
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
	if err := MatchSources(&certificates.Manifest{Kinds: []string{certificates.KindModelRange}}, m.Sources); !errors.Is(err, certificates.ErrNoSources) {
		t.Errorf("no sources recorded: %v", err)
	}
}
