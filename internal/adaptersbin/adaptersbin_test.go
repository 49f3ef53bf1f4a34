package adaptersbin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckoutIsSelf: the checkout is the one this package was compiled
// from (never the working directory's), keyed by a path hash when the
// binary records no revision (a test binary).
func TestCheckoutIsSelf(t *testing.T) {
	self, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(t.TempDir())
	root, rev, err := checkout()
	if err != nil || root != self || !strings.HasPrefix(rev, "path-") {
		t.Errorf("checkout() = %q, %q, %v; want %s and a path key (a test binary records no revision)", root, rev, err, self)
	}
}

// TestHandshake: an installed tlcheck-adapters is used only when
// `tlcheck-adapters handshake` prints this tlcheck's release and registry
// hash; another line, a failing binary, or one that predates the
// handshake is refused, naming the binary and both lines.
func TestHandshake(t *testing.T) {
	dir := t.TempDir()
	fake := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	want := Handshake()
	if !strings.HasPrefix(want, "tlcheck-adapters ") || !strings.Contains(want, " registry ") {
		t.Fatalf("handshake line %q", want)
	}
	for _, c := range []struct {
		name, body, says string // says: "" when it must pass
	}{
		{"same", "echo '" + want + "'\n", ""},
		{"other-registry", "echo '" + strings.Replace(want, " registry ", " registry 0", 1) + "'\n", "this tlcheck is"},
		{"other-release", "echo 'tlcheck-adapters 0.0.9" + want[strings.Index(want, " registry "):] + "'\n", "this tlcheck is"},
		{"predates", "echo 'usage: ...' >&2\nexit 2\n", "no handshake"},
	} {
		err := CheckHandshake(fake(c.name, c.body))
		switch {
		case c.says == "" && err != nil:
			t.Errorf("%s: refused: %v", c.name, err)
		case c.says != "" && (err == nil || !strings.Contains(err.Error(), c.says) || !strings.Contains(err.Error(), c.name)):
			t.Errorf("%s: got %v, want a refusal naming the binary and saying %q", c.name, err, c.says)
		}
	}
}
