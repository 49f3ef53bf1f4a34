package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneDefaultPerFlag: a flag that check and gate (or any two commands)
// share has one default. --graphs was 20 on check and 50 on gate; the help
// of every command that takes it must now state the same default.
func TestOneDefaultPerFlag(t *testing.T) {
	re := regexp.MustCompile(`(?m)^\s+--(graphs|cases|seed) \S+ .*\(default: ([^)]*)\)$`)
	seen := map[string]map[string]string{} // flag → default → command
	for _, cmd := range []string{"check", "gate"} {
		code, out, errs := runCmd(cmd, "-h")
		help := out + errs
		if code != 0 {
			t.Fatalf("%s -h: exit %d %s", cmd, code, help)
		}
		found := map[string]bool{}
		for _, m := range re.FindAllStringSubmatch(help, -1) {
			found[m[1]] = true
			if seen[m[1]] == nil {
				seen[m[1]] = map[string]string{}
			}
			seen[m[1]][m[2]] = cmd
		}
		if !found["graphs"] {
			t.Errorf("%s -h lists no --graphs with its default:\n%s", cmd, help)
		}
	}
	for flag, defs := range seen {
		if len(defs) != 1 {
			t.Errorf("--%s has %d defaults across check and gate: %v", flag, len(defs), defs)
		}
	}
	if d := seen["graphs"]; d["50"] == "" {
		t.Errorf("--graphs defaults %v, want 50 (the README says so)", d)
	}
}

// TestViewTapeValueFails: the tape view draws a graph whose value cannot
// be computed at the input (inv at 0: 1/0 has no value) and says so; it
// exits 0 as before values were drawn. The grads view still refuses it.
func TestViewTapeValueFails(t *testing.T) {
	dir := t.TempDir()
	g := writeTemp(t, dir, "g.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1]},
  {"id":1,"kind":"inv","parents":[0],"shape":[1]}
]}`)
	x := writeTemp(t, dir, "x.json", `{"shape":[1],"values":["0"]}`)
	out := filepath.Join(dir, "tape.html")
	code, _, errs := runCmd("view", "--graph", g, "--input", x, "--out", out)
	page, _ := os.ReadFile(out)
	if code != 0 || !strings.Contains(string(page), "values not shown: ") {
		t.Errorf("view --what tape: exit %d %q; the page says no values: %v", code, errs, strings.Contains(string(page), "values not shown"))
	}
	if code, _, errs := runCmd("view", "--graph", g, "--input", x, "--what", "grads", "--out", out); code != 2 || strings.Count(errs, "\n") != 1 {
		t.Errorf("view --what grads: exit %d %q, want 2 and one line", code, errs)
	}
}
