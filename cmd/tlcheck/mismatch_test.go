package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareReportsCloseness: compare's failure report carries the
// assert_close summary (the fixture's output moved by 1/2 at element 0:
// relative 1/2 / 3).
func TestCompareReportsCloseness(t *testing.T) {
	m, d := onnxFixture(t, 3.5, 0)
	code, out, _ := runCmd("compare", "--onnx", m, "--data", d)
	for _, want := range []string{
		"first fails element 0: recorded 3.5",
		"Mismatched elements: 1 / 2 (50.0%) outside the bound",
		"Greatest absolute difference: 0.5 at index (0)",
		"Greatest relative difference: 0.166667 at index (0)",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("compare: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	// compare-grad with --data and the same summary on a planted gradient:
	// ∂Σy/∂x = (2, 0) by hand; 3 and +Inf are given.
	dir := t.TempDir()
	g := writeTemp(t, dir, "g.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[3.0,"+Inf"]}}}`)
	code, out, errs := runCmd("compare-grad", "--onnx", m, "--data", d, "--grads", g)
	for _, want := range []string{
		"x [2]: 0 holds, 2 fails",
		"first outside: element 0 at index (0)",
		"Mismatched elements: 2 / 2 (100.0%) outside the bound",
		"Greatest absolute difference: +Inf at index (1)",
	} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("compare-grad: exit %d (%q), output lacks %q:\n%s", code, errs, want, out)
		}
	}
	// The old spelling "Infinity" is not a tlcheck value.
	bad := writeTemp(t, dir, "bad.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[3.0,"Infinity"]}}}`)
	if code, _, errs := runCmd("compare-grad", "--onnx", m, "--data", d, "--grads", bad); code != 2 || !strings.Contains(errs, `"+Inf"`) {
		t.Errorf("compare-grad with \"Infinity\": exit %d %q", code, errs)
	}
	if code, _, errs := runCmd("compare-grad", "--onnx", m, "--data", d, "--input", filepath.Join(d, "input_0.pb"), "--grads", g); code != 2 || !strings.Contains(errs, "give one") {
		t.Errorf("compare-grad --input and --data: exit %d %q", code, errs)
	}
}
