package main

import (
	"strings"
	"testing"
)

// TestHelpLimits: `tlcheck help limits` lists every limit with its
// variable and readers; a command shows (and accepts) only the limits it
// reads; the subcommand help the errors hint at works.
func TestHelpLimits(t *testing.T) {
	code, out, errs := runCmd("help", "limits")
	if code != 0 || errs != "" {
		t.Fatalf("help limits: exit %d %q", code, errs)
	}
	for _, groups := range [][]string{graphLimits, onnxLimits, certLimits, leanLimits} {
		for _, n := range groups {
			if !strings.Contains(out, "--max-"+n+" N (TLCHECK_MAX_"+strings.ToUpper(strings.ReplaceAll(n, "-", "_"))+", default ") {
				t.Errorf("help limits does not list --max-%s", n)
			}
		}
	}
	if !strings.Contains(out, "most lines in one lean4export NDJSON file; read by gate, lean\n") {
		t.Errorf("help limits: lean-lines readers wrong:\n%s", out)
	}
	_, evalHelp, _ := runCmd("help", "eval")
	if !strings.Contains(evalHelp, "--max-rat-bits ") || strings.Contains(evalHelp, "--max-lean-lines") || strings.Contains(evalHelp, "--max-cert-cases") {
		t.Errorf("eval's help shows limits it does not read, or lacks one it reads:\n%s", evalHelp)
	}
	if code, _, errs := runCmd("eval", "--max-lean-lines", "5"); code != 2 || !strings.Contains(errs, "unknown flag --max-lean-lines") {
		t.Errorf("eval --max-lean-lines: exit %d %q", code, errs)
	}
	subs := [][]string{{"lean", "audit"}, {"lean", "emit"}, {"lean", "check"}}
	if exhaustive() {
		// The adapters' help comes from the tlcheck-adapters binary, which
		// tlcheck builds from this checkout's adapters module (go build of
		// every engine: minutes of CPU with a cold build cache), so it
		// runs with TLCHECK_EXHAUSTIVE set, as in CI.
		subs = append(subs, []string{"adapters", "run"}, []string{"adapters", "cases"})
	} else {
		t.Log("help adapters run|cases (a build of the adapters module) checked only with TLCHECK_EXHAUSTIVE=1")
	}
	for _, sub := range subs {
		code, out, errs := runCmd(append([]string{"help"}, sub...)...)
		if code != 0 || !strings.HasPrefix(out, "usage: tlcheck "+sub[0]+" "+sub[1]) {
			t.Errorf("help %v: exit %d, %.60q %q", sub, code, out, errs)
		}
	}
	if code, _, errs := runCmd("help", "eval", "x"); code != 2 || !strings.Contains(errs, "unexpected argument") {
		t.Errorf("help eval x: exit %d %q", code, errs)
	}
}
