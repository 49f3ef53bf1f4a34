package main

import (
	"regexp"
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
