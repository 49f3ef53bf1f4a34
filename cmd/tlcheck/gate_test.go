package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// junitSuites reads back the parts of the gate's JUnit report the tests
// look at.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Tests   int      `xml:"tests,attr"`
	Fails   int      `xml:"failures,attr"`
	Suites  []struct {
		Name  string `xml:"name,attr"`
		Time  string `xml:"time,attr"`
		Cases []struct {
			Name      string    `xml:"name,attr"`
			Classname string    `xml:"classname,attr"`
			Time      string    `xml:"time,attr"`
			Failure   *struct{} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func TestGateHolds(t *testing.T) {
	dir := t.TempDir()
	out, junit := filepath.Join(dir, "certs"), filepath.Join(dir, "gate.xml")
	code, stdout, stderr := runCmd("gate", "--out", out, "--junit", junit, "--cases", "10", "--cert-cases", "3")
	if code != 0 {
		t.Fatalf("gate exit %d: %s\n%s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "gate holds") {
		t.Fatalf("summary:\n%s", stdout)
	}
	// The certificates it leaves behind verify.
	if code, _, stderr := runCmd("verify", out); code != 0 {
		t.Fatalf("verify of the gate's certificates: exit %d %s", code, stderr)
	}
	data, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var js junitSuites
	if err := xml.Unmarshal(data, &js); err != nil || js.Tests == 0 || js.Fails != 0 {
		t.Fatalf("junit: %v tests=%d fails=%d", err, js.Tests, js.Fails)
	}
}

// TestGatePlantedFault: a planted wrong VJP makes the gate exit 1, and the
// JUnit report carries the failure.
func TestGatePlantedFault(t *testing.T) {
	dir := t.TempDir()
	junit := filepath.Join(dir, "gate.xml")
	code, stdout, stderr := runCmd("gate", "--out", filepath.Join(dir, "c"), "--junit", junit, "--cases", "10", "--cert-cases", "2", "--plant-fault", "mul")
	if code != 1 || !strings.Contains(stdout, "gate FAILS") || !strings.Contains(stderr, "gate:") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	data, _ := os.ReadFile(junit)
	var js junitSuites
	if err := xml.Unmarshal(data, &js); err != nil || js.Fails == 0 {
		t.Fatalf("junit should report failures: %v %d", err, js.Fails)
	}
	if !strings.Contains(string(data), "adjointness fails for mul") {
		t.Fatal("junit lacks the counterexample")
	}
}

func TestGateJSON(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := runCmd("gate", "--out", filepath.Join(dir, "c"), "--json", "--cases", "5", "--cert-cases", "2")
	if code != 0 {
		t.Fatal(code)
	}
	var res jsonout.GateDoc
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || !res.Holds || len(res.Stages) < 3 {
		t.Fatalf("json: %v %+v", err, res)
	}
}

func TestGateBadFlags(t *testing.T) {
	for _, args := range [][]string{{"--cases", "0"}, {"--plant-fault", "frob"}, {"--bogus"}} {
		code, _, errs := runCmd(append([]string{"gate"}, args...)...)
		if code != 2 || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// TestGatePlantedProviderBug: one flipped bit in a fast_cpu result, far
// beyond the rounding bound, makes the gate exit 1.
func TestGatePlantedProviderBug(t *testing.T) {
	dir := t.TempDir()
	code, stdout, _ := runCmd("gate", "--out", filepath.Join(dir, "c"), "--cases", "3", "--cert-cases", "3", "--plant-provider-bug", "matmul")
	if code != 1 || !strings.Contains(stdout, "refine: fast_cpu.matmul") {
		t.Fatalf("exit %d\n%s", code, stdout)
	}
	if code, _, errs := runCmd("gate", "--plant-provider-bug", "relu"); code != 2 || !strings.Contains(errs, "not a fast_cpu op") {
		t.Fatalf("bad op: %d %s", code, errs)
	}
}

func TestGateReport(t *testing.T) {
	dir := t.TempDir()
	rep := filepath.Join(dir, "report")
	code, _, errs := runCmd("gate", "--out", filepath.Join(dir, "c"), "--cases", "3", "--cert-cases", "4", "--report", rep)
	if code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	md, err := os.ReadFile(filepath.Join(rep, "summary.md"))
	if err != nil || !strings.Contains(string(md), "| fast_cpu | sum |") || !strings.Contains(string(md), "ratios.svg") {
		t.Fatalf("summary: %v\n%s", err, md)
	}
	pic, err := os.ReadFile(filepath.Join(rep, "ratios.svg"))
	if err != nil || len(pic) < 1000 || !strings.HasPrefix(string(pic), "<svg ") {
		t.Fatalf("plot: %v (%d bytes)", err, len(pic))
	}
}

func TestGateUnwritableOut(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, []byte("x"), 0o644)
	code, _, errs := runCmd("gate", "--out", filepath.Join(file, "sub"))
	if code != 2 || !strings.Contains(errs, "--out") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("exit %d %q", code, errs)
	}
}
