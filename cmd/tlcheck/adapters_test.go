package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAdaptersDelegates: tlcheck adapters runs $TLCHECK_ADAPTERS with its
// arguments, passes its output through and takes its exit status without
// a line of its own; a runner that cannot start is one line, exit 2.
func TestAdaptersDelegates(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "fake-adapters")
	body := "#!/bin/sh\necho \"ran: $*\"\necho 'tlcheck: adapters: 1 finding' >&2\nexit 1\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TLCHECK_ADAPTERS", script)
	code, so, se := runCmd("adapters", "run", "--engine", "gorgonia")
	if code != 1 || so != "ran: run --engine gorgonia\n" || se != "tlcheck: adapters: 1 finding\n" {
		t.Errorf("exit %d, stdout %q, stderr %q", code, so, se)
	}
	t.Setenv("TLCHECK_ADAPTERS", filepath.Join(dir, "missing"))
	code, _, se = runCmd("adapters", "cases")
	if code != 2 || strings.Count(se, "\n") != 1 || !strings.Contains(se, "missing") {
		t.Errorf("missing runner: exit %d, stderr %q", code, se)
	}
	if code, _, se = runCmd("adapters"); code != 2 || !strings.Contains(se, "missing subcommand") {
		t.Errorf("no subcommand: exit %d, stderr %q", code, se)
	}
}
