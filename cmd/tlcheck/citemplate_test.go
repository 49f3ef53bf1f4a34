package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCITemplateGate runs ci/templates/tlcheck-gate.sh, with this test
// binary standing in for tlcheck (TestHelperMain), on a user's repository
// laid out as the template expects: a passing model and gradient dump,
// then a model whose recorded output is off. The passing run leaves
// certs/ and a JUnit file without failures; the failing one exits 1,
// leaves no certs/ (certs.FAILED/ and FAILED instead) and a JUnit
// failure naming the check.
func TestCITemplateGate(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "ci", "templates", "tlcheck-gate.sh"))
	if err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nargs=$(printf '%s\\n' \"$@\")\nTLCHECK_HELPER_ARGS=\"$args\" exec " + self + " -test.run='^TestHelperMain$'\n"
	if err := os.WriteFile(filepath.Join(bin, "tlcheck"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	repo := func(output ...float32) string {
		dir := t.TempDir()
		if _, _, err := writeFixture(filepath.Join(dir, "models", "fix"), output...); err != nil {
			t.Fatal(err)
		}
		// ∂Σy/∂x = (2, 0) by hand (onnxfixture_test.go).
		if err := os.MkdirAll(filepath.Join(dir, "grads"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeTemp(t, filepath.Join(dir, "grads"), "fix.grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]}}}`)
		return dir
	}
	gate := func(dir string) (int, string) {
		cmd := exec.Command("bash", script, "out")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"), "CERTIFY=1")
		b, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, string(b)
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }

	good := repo()
	code, out := gate(good)
	junit, _ := os.ReadFile(filepath.Join(good, "out", "junit.xml"))
	if code != 0 || !exists(filepath.Join(good, "out", "certs", "fix", "manifest.json")) || exists(filepath.Join(good, "out", "FAILED")) {
		t.Fatalf("passing repository: exit %d\n%s", code, out)
	}
	if !strings.Contains(string(junit), `tests="4" failures="0" errors="0"`) || !strings.Contains(string(junit), `name="compare-grad fix"`) {
		t.Errorf("junit.xml of the passing run:\n%s", junit)
	}
	if b, _ := os.ReadFile(filepath.Join(good, "out", "fix.compare-grad.json")); !strings.Contains(string(b), `"verdict": "holds"`) {
		t.Errorf("fix.compare-grad.json: %s", b)
	}

	bad := repo(3.5, 0)
	code, out = gate(bad)
	junit, _ = os.ReadFile(filepath.Join(bad, "out", "junit.xml"))
	failedList, _ := os.ReadFile(filepath.Join(bad, "out", "FAILED"))
	if code != 1 || exists(filepath.Join(bad, "out", "certs")) || !exists(filepath.Join(bad, "out", "certs.FAILED")) {
		t.Errorf("failing repository: exit %d, certs/ exists %v\n%s", code, exists(filepath.Join(bad, "out", "certs")), out)
	}
	if !strings.Contains(string(failedList), "compare fix") || !strings.Contains(string(junit), `failures="1"`) || !strings.Contains(string(junit), "<failure message=") {
		t.Errorf("failing repository: FAILED %q, junit.xml:\n%s", failedList, junit)
	}
}
