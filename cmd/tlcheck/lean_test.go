package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
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
		{[]string{"lean", "audit", "--help"}, 0, "usage: tlcheck lean audit [flags]"},
		{[]string{"lean", "emit", "--certs", p}, 2, "manifest.json"},
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

// fakeLake puts a `lake` on PATH that succeeds on `build` and prints the
// file $FAKE_EXPORT for `env lean4export …`, and returns a project whose
// sources declare theorem T.
func fakeLake(t *testing.T, export string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake lake is a shell script")
	}
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \"$1\" in\nbuild) exit 0;;\nenv) [ \"$2\" = lean4export ] && [ \"$3\" = Tlcheck ] && [ \"$4\" = -- ] && [ \"$LEAN_ABORT_ON_PANIC\" = 1 ] || exit 3; cat \"$FAKE_EXPORT\";;\n*) exit 4;;\nesac\n"
	if err := os.WriteFile(filepath.Join(bin, "lake"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	p := filepath.Join(t.TempDir(), "export.ndjson")
	os.WriteFile(p, []byte(export), 0o644)
	t.Setenv("FAKE_EXPORT", p)
	proj := filepath.Join(t.TempDir(), "lean")
	os.MkdirAll(filepath.Join(proj, "Tlcheck"), 0o755)
	os.WriteFile(filepath.Join(proj, "lean-toolchain"), []byte("leanprover/lean4:v4.30.0\n"), 0o644)
	os.WriteFile(filepath.Join(proj, "Tlcheck", "A.lean"), []byte("theorem T (p : Prop) (h : p) : p := h\n"), 0o644)
	return proj
}

// TestLeanCheckPipeline runs lean check against a fake lake: no lock is
// bad input, --lock writes one, the same export then passes, and a
// changed statement or a Lean version other than the pinned one fails.
func TestLeanCheckPipeline(t *testing.T) {
	proj := fakeLake(t, leanExport)
	if code, _, errOut := runCmd("lean", "check", "--project", proj); code != 2 || !strings.Contains(errOut, "statements.lock does not exist") {
		t.Fatalf("no lock: exit %d, %q", code, errOut)
	}
	if code, out, errOut := runCmd("lean", "check", "--project", proj, "--lock"); code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("--lock: exit %d, %q %q", code, out, errOut)
	}
	lock, err := os.ReadFile(filepath.Join(proj, "statements.lock"))
	if err != nil || !strings.HasPrefix(string(lock), "# tlcheck lean statements lock v1\nlean 4.30.0\ntheorem T ") {
		t.Fatalf("lock %q, %v", lock, err)
	}
	if code, out, errOut := runCmd("lean", "check", "--project", proj); code != 0 || !strings.Contains(out, "accepted") {
		t.Fatalf("against the lock: exit %d, %q %q", code, out, errOut)
	}
	// T's statement weakened to ∀ p : Prop, p → Prop (its body bvar 1 → sort 0).
	weak := strings.Replace(leanExport, `{"forallE":{"binderInfo":"default","body":2,"name":3,"type":1},"ie":3}`, `{"forallE":{"binderInfo":"default","body":0,"name":3,"type":1},"ie":3}`, 1)
	os.WriteFile(os.Getenv("FAKE_EXPORT"), []byte(weak), 0o644)
	if code, out, errOut := runCmd("lean", "check", "--project", proj); code != 1 || !strings.Contains(out, "statement hash") || !strings.Contains(errOut, "T") {
		t.Errorf("weakened statement: exit %d, %q %q", code, out, errOut)
	}
	other := strings.Replace(leanExport, `"version":"4.30.0"`, `"version":"4.29.1"`, 1)
	os.WriteFile(os.Getenv("FAKE_EXPORT"), []byte(other), 0o644)
	if code, _, errOut := runCmd("lean", "check", "--project", proj); code != 1 || !strings.Contains(errOut, "the project pins 4.30.0") {
		t.Errorf("other Lean: exit %d, %q", code, errOut)
	}
}

// TestGateLean: gate --lean runs the lean stage on ./lean (here a fake lake
// and project): it holds against the lock and fails on a changed statement.
func TestGateLean(t *testing.T) {
	proj := fakeLake(t, leanExport)
	t.Chdir(filepath.Dir(proj))
	if code, _, errOut := runCmd("lean", "check", "--lock"); code != 0 {
		t.Fatalf("lean check --lock: exit %d, %q", code, errOut)
	}
	args := []string{"gate", "--lean", "--cases", "1", "--graphs", "1", "--cert-cases", "1", "--out", filepath.Join(t.TempDir(), "c")}
	if code, out, errOut := runCmd(args...); code != 0 || !strings.Contains(out, "lean") {
		t.Fatalf("gate --lean: exit %d, %q %q", code, out, errOut)
	}
	weak := strings.Replace(leanExport, `{"forallE":{"binderInfo":"default","body":2,"name":3,"type":1},"ie":3}`, `{"forallE":{"binderInfo":"default","body":0,"name":3,"type":1},"ie":3}`, 1)
	os.WriteFile(os.Getenv("FAKE_EXPORT"), []byte(weak), 0o644)
	args[len(args)-1] = filepath.Join(t.TempDir(), "c")
	if code, out, _ := runCmd(args...); code != 1 || !strings.Contains(out, "lean") {
		t.Errorf("gate --lean, changed statement: exit %d, %q", code, out)
	}
}

// TestLeanAuditForgedAxiom: issue 27's forgery — axiom Classical.choice :
// Prop and axiom propext : Classical.choice, used by theorem T — is
// rejected without a lock (exit 1), naming the forged declaration.
func TestLeanAuditForgedAxiom(t *testing.T) {
	forged := `{"meta":{"exporter":{"name":"lean4export","version":"3.1.0"},"format":{"version":"3.1.0"},"lean":{"githash":"0","version":"4.30.0"}}}
{"in":1,"str":{"pre":0,"str":"Classical"}}
{"in":2,"str":{"pre":1,"str":"choice"}}
{"ie":0,"sort":0}
{"axiom":{"isUnsafe":false,"levelParams":[],"name":2,"type":0}}
{"in":3,"str":{"pre":0,"str":"propext"}}
{"const":{"name":2,"us":[]},"ie":1}
{"axiom":{"isUnsafe":false,"levelParams":[],"name":3,"type":1}}
{"in":4,"str":{"pre":0,"str":"T"}}
{"const":{"name":3,"us":[]},"ie":2}
{"thm":{"all":[4],"levelParams":[],"name":4,"type":1,"value":2}}
`
	p := filepath.Join(t.TempDir(), "forged.ndjson")
	os.WriteFile(p, []byte(forged), 0o644)
	code, out, errOut := runCmd("lean", "audit", "--export", p)
	if code != 1 || !strings.Contains(out, "axiom propext has statement hash") || !strings.Contains(out, "forged declaration under an allowed name") || !strings.Contains(errOut, "1 of 1 theorems rejected") {
		t.Errorf("forged axioms: exit %d, %q %q", code, out, errOut)
	}
}

// TestLeanAuditEscapes: a theorem name holding a newline, ESC sequences,
// NUL and a right-to-left override prints escaped: no raw control
// character reaches the terminal and no forged "accepted" row appears.
func TestLeanAuditEscapes(t *testing.T) {
	evil := "T\n\x1b[1A\x1b[2K\x1b[32mS  none  0123456789abcdef  accepted\x00\u202edetpecca"
	js := strings.NewReplacer("\n", `\n`, "\x1b", `\u001b`, "\x00", `\u0000`).Replace(evil)
	export := strings.Replace(leanExport, `{"in":1,"str":{"pre":0,"str":"T"}}`, `{"in":1,"str":{"pre":0,"str":"`+js+`"}}`, 1)
	p := filepath.Join(t.TempDir(), "evil.ndjson")
	os.WriteFile(p, []byte(export), 0o644)
	for _, tc := range []struct {
		args []string
		code int
		rows int
	}{
		{[]string{"lean", "audit", "--export", p}, 1, 2}, // the evil T (accepted) and S (rejected)
		{[]string{"lean", "audit", "--export", p, "--theorems", evil}, 0, 1},
	} {
		code, out, errOut := runCmd(tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, %q %q", tc.args, code, out, errOut)
		}
		for _, s := range []string{out, errOut} {
			for _, r := range strings.TrimSuffix(s, "\n") {
				if r < 0x20 && r != '\n' || r == 0x7f || r == 0x202e {
					t.Errorf("%q: output holds raw %U: %q", tc.args, r, s)
					break
				}
			}
		}
		// One table row per theorem: the name's newline forged no row.
		rows := 0
		for _, line := range strings.Split(out, "\n") {
			if strings.HasSuffix(line, "accepted") || strings.HasSuffix(line, "rejected") {
				rows++
			}
		}
		if rows != tc.rows {
			t.Errorf("%q: %d rows, want %d: %q", tc.args, rows, tc.rows, out)
		}
		if !strings.Contains(out, `T\n\x1b[1A\x1b[2K\x1b[32mS  none`) {
			t.Errorf("%q: the name is not printed escaped: %q", tc.args, out)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%q: stderr is not one line: %q", tc.args, errOut)
		}
	}
}

// TestLeanAuditParseErrorEscaped: a malformed export whose error quotes a
// declared name (declared twice) prints the name escaped, on one line.
func TestLeanAuditParseErrorEscaped(t *testing.T) {
	export := `{"meta":{"exporter":{"name":"lean4export","version":"3.1.0"},"format":{"version":"3.1.0"},"lean":{"githash":"0","version":"4.30.0"}}}
{"in":1,"str":{"pre":0,"str":"A\u001b[31m\u202eB"}}
{"ie":0,"sort":0}
{"axiom":{"isUnsafe":false,"levelParams":[],"name":1,"type":0}}
{"axiom":{"isUnsafe":false,"levelParams":[],"name":1,"type":0}}
`
	p := filepath.Join(t.TempDir(), "dup.ndjson")
	os.WriteFile(p, []byte(export), 0o644)
	code, _, errOut := runCmd("lean", "audit", "--export", p)
	if code != 2 || !strings.Contains(errOut, `declared twice`) || strings.ContainsAny(errOut, "\x1b\u202e") ||
		!strings.Contains(errOut, `\x1b[31m\u202eB`) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
