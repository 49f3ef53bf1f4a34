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

// TestAdaptersExitCodes: a runner's exit 1 or 2 is tlcheck's; any other
// status (7, a signal) is one line naming it and exit 2, never passed
// through (issue 26 point 11).
func TestAdaptersExitCodes(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		body      string
		code      int
		stderrHas string
	}{
		{"exit 0", 0, ""},
		{"exit 1", 1, ""},
		{"exit 2", 2, ""},
		{"exit 7", 2, "exit status 7"},
		{"kill -9 $$", 2, "signal: killed"},
	} {
		script := filepath.Join(dir, "runner")
		if err := os.WriteFile(script, []byte("#!/bin/sh\n"+c.body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("TLCHECK_ADAPTERS", script)
		code, _, se := runCmd("adapters", "cases")
		if code != c.code || (c.stderrHas != "" && (strings.Count(se, "\n") != 1 || !strings.Contains(se, c.stderrHas))) {
			t.Errorf("%s: exit %d, stderr %q; want exit %d saying %q", c.body, code, se, c.code, c.stderrHas)
		}
	}
}

// TestAdaptersNeverBuildsAncestor: with no runner installed, tlcheck
// adapters builds only the checkout it was compiled from, never an
// adapters/go.mod above the working directory (issue 26 point 7: a
// planted module there was built and ran). The planted module's build
// would write a marker; with no go command on $PATH nothing is built at
// all, and the error names the checkout tlcheck came from.
func TestAdaptersNeverBuildsAncestor(t *testing.T) {
	plant := t.TempDir()
	if err := os.MkdirAll(filepath.Join(plant, "adapters", "cmd", "tlcheck-adapters"), 0o755); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{
		"adapters/go.mod":                       "module planted\n\ngo 1.22\n",
		"adapters/cmd/tlcheck-adapters/main.go": "package main\n\nimport \"os\"\n\nfunc main() { os.WriteFile(\"" + filepath.Join(plant, "PWNED") + "\", nil, 0o644) }\n",
	} {
		if err := os.WriteFile(filepath.Join(plant, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := filepath.Join(plant, "work", "deeper")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(work)
	t.Setenv("TLCHECK_ADAPTERS", "")
	t.Setenv("PATH", t.TempDir()) // no tlcheck-adapters, no go
	code, _, se := runCmd("adapters", "cases")
	if code != 2 || strings.Count(se, "\n") != 1 || strings.Contains(se, plant) || !strings.Contains(se, filepath.Join(self, "adapters")) {
		t.Errorf("exit %d, stderr %q: want one line naming %s, never %s", code, se, filepath.Join(self, "adapters"), plant)
	}
	if _, err := os.Stat(filepath.Join(plant, "PWNED")); err == nil {
		t.Error("the planted module ran")
	}
}
