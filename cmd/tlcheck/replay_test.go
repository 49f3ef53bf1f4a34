package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// checkJSON runs check with --json and decodes its results.
func checkJSON(t *testing.T, args ...string) (int, []jsonout.CheckResult) {
	t.Helper()
	code, out, stderr := runCmd(append([]string{"check", "--json"}, args...)...)
	var doc jsonout.CheckDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("check %v: exit %d, not JSON (%v): %s %s", args, code, err, out, stderr)
	}
	return code, doc.Results
}

func findRow(rows []jsonout.CheckResult, op, ob string) *jsonout.CheckResult {
	for i := range rows {
		if rows[i].Op == op && rows[i].Obligation == ob {
			return &rows[i]
		}
	}
	return nil
}

// replayArgs turns a printed replay command into arguments for run.
func replayArgs(t *testing.T, cmd string) []string {
	t.Helper()
	f := strings.Fields(cmd)
	if len(f) < 2 || f[0] != "tlcheck" || f[1] != "check" {
		t.Fatalf("replay command %q is not a tlcheck check command", cmd)
	}
	return f[2:]
}

// The replay command printed for a failure reruns exactly the failing
// case, alone: the same counterexample, with the same values, for a local
// case and for a graph case.
func TestReplayReproducesFailingCaseAlone(t *testing.T) {
	cases := []struct {
		name, op, ob string
		args         []string
	}{
		{"local", "mul", "adjointness", []string{"--ops", "mul,tanh,add", "--cases", "20", "--graphs", "0", "--seed", "4", "--plant-fault", "mul"}},
		{"graph", "graphs", "graph-composition", []string{"--ops", "none", "--graphs", "15", "--seed", "3", "--plant-fault", "mul"}},
	}
	caseRE := regexp.MustCompile(`^case ([0-9]+): `)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, rows := checkJSON(t, c.args...)
			if code != 1 {
				t.Fatalf("planted fault: exit %d", code)
			}
			r := findRow(rows, c.op, c.ob)
			if r == nil || r.Holds || r.Replay == "" {
				t.Fatalf("no failing %s/%s row with a replay command: %+v", c.op, c.ob, r)
			}
			m := caseRE.FindStringSubmatch(r.Failure)
			if m == nil {
				t.Fatalf("failure does not name its case: %q", r.Failure)
			}
			if !strings.Contains(r.Replay, " --case "+m[1]+" ") {
				t.Fatalf("replay %q does not select case %s", r.Replay, m[1])
			}
			code, again := checkJSON(t, replayArgs(t, r.Replay)...)
			if code != 1 {
				t.Fatalf("replay %q: exit %d, want 1", r.Replay, code)
			}
			rr := findRow(again, c.op, c.ob)
			if rr == nil || rr.Failure != r.Failure {
				t.Fatalf("replay %q reports\n%+v\nwant the failure\n%s", r.Replay, rr, r.Failure)
			}
			if rr.Replay != r.Replay {
				t.Errorf("replay of the replay is %q, want %q", rr.Replay, r.Replay)
			}
			// Alone: one op (or the one graph obligation), at most one case per row.
			for _, x := range again {
				if x.Op != c.op {
					t.Errorf("replay ran %s/%s too", x.Op, x.Obligation)
				}
				if x.Cases > 1 {
					t.Errorf("replay ran %d cases of %s/%s", x.Cases, x.Op, x.Obligation)
				}
				if c.op == "graphs" && x.Obligation != c.ob && x.Obligation != "any" {
					t.Errorf("replay ran graph obligation %s too", x.Obligation)
				}
			}
		})
	}
}

// Case i of a certificate is case i of check: under a planted VJP fault
// (which leaves the JVP side alone), check --case I reports the
// certificate's recorded ⟨jvp, δ⟩ for case I, for several I — including
// cases after the first failing one, which a --cases N replay never
// isolated.
func TestCertificateCaseReplaysWithCheck(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := runCmd("certify", "--out", dir, "--ops", "mul", "--providers", "reference", "--cases", "20", "--seed", "11"); code != 0 {
		t.Fatalf("certify: exit %d %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "adjointness", "mul.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f certificates.AdjointnessFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	lhsRE := regexp.MustCompile(`⟨jvp,δ⟩=(-?[0-9/]+) ≠`)
	checked := 0
	for _, i := range []int{0, 7, 13, 19} {
		_, rows := checkJSON(t, "--ops", "mul", "--case", itoa(i), "--graphs", "0", "--seed", "11", "--plant-fault", "mul")
		r := findRow(rows, "mul", "adjointness")
		if r == nil {
			t.Fatalf("case %d: no adjointness row", i)
		}
		if r.Holds { // the fault is invisible when dx₁·δ·x₂ = 0
			if f.Cases[i].LHS != f.Cases[i].RHS {
				t.Fatalf("case %d holds under the fault but the certificate's sides differ", i)
			}
			continue
		}
		m := lhsRE.FindStringSubmatch(r.Failure)
		if m == nil || !strings.HasPrefix(r.Failure, "case "+itoa(i)+": ") {
			t.Fatalf("case %d: failure %q", i, r.Failure)
		}
		if m[1] != f.Cases[i].LHS {
			t.Errorf("case %d: check reports ⟨jvp,δ⟩ = %s, the certificate records %s", i, m[1], f.Cases[i].LHS)
		}
		checked++
	}
	if checked < 2 {
		t.Fatalf("only %d cases exercised the fault", checked)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// withProcs runs f under runtime.GOMAXPROCS(p).
func withProcs(p int, f func()) {
	old := runtime.GOMAXPROCS(p)
	defer runtime.GOMAXPROCS(old)
	f()
}

// readTree maps every file under dir (relative, slash-separated) to its
// bytes.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Output and certificates are byte-identical for GOMAXPROCS 1, 2 and 8:
// check's table and JSON (passing and failing), the gate's JSON (stage
// timings aside) and its certificate directory, certify's directory and
// verify's report.
func TestOutputIndependentOfGOMAXPROCS(t *testing.T) {
	type outputs struct {
		check, checkFail, gate, verify string
		gateCerts, certs               map[string][]byte
	}
	secondsRE := regexp.MustCompile(`"seconds": [0-9.e+-]+`)
	run := func(p int) outputs {
		var o outputs
		withProcs(p, func() {
			base := t.TempDir()
			_, o.check, _ = runCmd("check", "--cases", "15", "--graphs", "8", "--seed", "9")
			_, o.checkFail, _ = runCmd("check", "--json", "--cases", "15", "--graphs", "8", "--seed", "9", "--plant-fault", "matmul")
			gdir := filepath.Join(base, "gate")
			code, g, stderr := runCmd("gate", "--json", "--out", gdir, "--cases", "10", "--graphs", "5", "--cert-cases", "3", "--seed", "9")
			if code != 0 {
				t.Fatalf("GOMAXPROCS=%d: gate exit %d %s", p, code, stderr)
			}
			o.gate = strings.ReplaceAll(secondsRE.ReplaceAllString(g, `"seconds": 0`), gdir, "DIR")
			o.gateCerts = readTree(t, gdir)
			cdir := filepath.Join(base, "certs")
			if code, _, stderr := runCmd("certify", "--out", cdir, "--cases", "4", "--seed", "9"); code != 0 {
				t.Fatalf("GOMAXPROCS=%d: certify exit %d %s", p, code, stderr)
			}
			o.certs = readTree(t, cdir)
			_, o.verify, _ = runCmd("verify", cdir)
		})
		return o
	}
	ref := run(1)
	if !strings.Contains(ref.verify, "every claim re-derived") || len(ref.certs) < 10 || !strings.Contains(ref.checkFail, `"holds": false`) {
		t.Fatalf("reference run did not do the work: verify %q, %d certificate files", ref.verify, len(ref.certs))
	}
	for _, p := range []int{2, 8} {
		got := run(p)
		for _, c := range []struct{ name, a, b string }{
			{"check", ref.check, got.check}, {"check --plant-fault", ref.checkFail, got.checkFail},
			{"gate --json", ref.gate, got.gate}, {"verify", ref.verify, got.verify},
		} {
			if c.a != c.b {
				t.Errorf("GOMAXPROCS=%d: %s output differs from GOMAXPROCS=1:\n%s\n---\n%s", p, c.name, c.b, c.a)
			}
		}
		for _, c := range []struct {
			name string
			a, b map[string][]byte
		}{{"gate certificates", ref.gateCerts, got.gateCerts}, {"certify", ref.certs, got.certs}} {
			if len(c.a) != len(c.b) {
				t.Errorf("GOMAXPROCS=%d: %s wrote %d files, %d under GOMAXPROCS=1", p, c.name, len(c.b), len(c.a))
			}
			for rel, data := range c.a {
				if !bytes.Equal(data, c.b[rel]) {
					t.Errorf("GOMAXPROCS=%d: %s: %s differs from GOMAXPROCS=1", p, c.name, rel)
				}
			}
		}
	}
}
