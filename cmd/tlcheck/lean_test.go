package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates/leanemit"
)

// leanExport is a minimal 3.1.0 export: theorem T : ∀ p : Prop, p → p,
// and theorem S proved by an axiom bad : Prop.
const leanExport = `{"meta":{"exporter":{"name":"lean4export","version":"3.1.0"},"format":{"version":"3.1.0"},"lean":{"githash":"0","version":"4.30.0"}}}
{"in":1,"str":{"pre":0,"str":"T"}}
{"in":2,"str":{"pre":0,"str":"p"}}
{"ie":0,"sort":0}
{"in":3,"str":{"pre":0,"str":"h"}}
{"bvar":0,"ie":1}
{"bvar":1,"ie":2}
{"forallE":{"binderInfo":"default","body":2,"name":3,"type":1},"ie":3}
{"forallE":{"binderInfo":"default","body":3,"name":2,"type":0},"ie":4}
{"ie":5,"lam":{"binderInfo":"default","body":1,"name":3,"type":1}}
{"ie":6,"lam":{"binderInfo":"default","body":5,"name":2,"type":0}}
{"thm":{"all":[1],"levelParams":[],"name":1,"type":4,"value":6}}
{"in":4,"str":{"pre":0,"str":"bad"}}
{"axiom":{"isUnsafe":false,"levelParams":[],"name":4,"type":0}}
{"in":5,"str":{"pre":0,"str":"S"}}
{"const":{"name":4,"us":[]},"ie":7}
{"thm":{"all":[5],"levelParams":[],"name":5,"type":0,"value":7}}
`

func TestLeanAudit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.ndjson")
	os.WriteFile(p, []byte(leanExport), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"lean", "audit", "--export", p, "--theorems", "T"}, 0, "accepted"},
		{[]string{"lean", "audit", "--export", p, "--theorems", "T,S"}, 1, "uses axiom bad, which is not on the allow-list"},
		{[]string{"lean", "audit", "--export", p + ".missing"}, 2, "no such file"},
		{[]string{"lean", "audit"}, 2, "--export FILE is required"},
		{[]string{"lean", "nope"}, 2, "unknown subcommand"},
	} {
		code, out, errOut := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d (want %d), output %q %q, want %q", tc.args, code, tc.code, out, errOut, tc.want)
		}
	}
	// A real 3.0.0 export is refused as bad input naming the version.
	if _, err := os.Stat("../../../shared/lean4export/Nat.add_succ.ndjson"); err == nil {
		code, _, errOut := runCmd("lean", "audit", "--export", "../../../shared/lean4export/Nat.add_succ.ndjson")
		if code != 2 || !strings.Contains(errOut, `format version "3.0.0" is not supported`) {
			t.Errorf("3.0.0 export: exit %d, %q", code, errOut)
		}
	}
}

// TestLeanWithoutLake: lean check and gate --lean exit 2 with one line
// naming what to install.
func TestLeanWithoutLake(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	for _, args := range [][]string{{"lean", "check"}, {"gate", "--lean", "--out", filepath.Join(t.TempDir(), "c")}} {
		code, _, errOut := runCmd(args...)
		if code != 2 || !strings.Contains(errOut, "lake is not on PATH: install elan") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

// TestLeanTheoremsExist: every theorem the emitter writes and every one the
// lock names is declared in the Lean sources, and each covered primitive
// has its adjointness theorem (a grep-level check: no Lean here).
func TestLeanTheoremsExist(t *testing.T) {
	names, err := LeanTheorems(filepath.Join("..", "..", "lean"))
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, n := range names {
		have[n] = true
	}
	var want []string
	for _, op := range leanemit.Covered {
		want = append(want, "Tlcheck.Certs.Adjointness."+op+".cert", "Tlcheck."+op+"_adjoint")
	}
	want = append(want, "Tlcheck.checkAll_sound", "Tlcheck.checkCase_sound")
	if data, err := os.ReadFile(filepath.Join("..", "..", "lean", "statements.lock")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if f := strings.Fields(line); len(f) == 4 && f[0] == "theorem" {
				want = append(want, f[1])
			}
		}
	}
	for _, w := range want {
		if !have[w] {
			t.Errorf("theorem %s is not declared in lean/Tlcheck", w)
		}
	}
}
