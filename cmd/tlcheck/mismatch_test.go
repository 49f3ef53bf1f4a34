package main

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

func TestUnravel(t *testing.T) {
	cases := []struct {
		shape spec.Shape
		i     int
		want  string
	}{
		{spec.Shape{}, 0, "()"},
		{spec.Shape{5}, 3, "(3)"},
		{spec.Shape{2, 3}, 5, "(1, 2)"},
		{spec.Shape{2, 3}, 3, "(1, 0)"},
		{spec.Shape{2, 3, 4}, 23, "(1, 2, 3)"},
		{spec.Shape{2, 3, 4}, 13, "(1, 0, 1)"},
	}
	for _, c := range cases {
		if got := indexText(c.shape, c.i); got != c.want {
			t.Errorf("indexText(%v, %d) = %s, want %s", c.shape, c.i, got, c.want)
		}
	}
}

// TestClosenessReport plants two elements outside the bound in a [2,3]
// tensor and checks the summary by hand: 2 of 6 mismatched (33.3%), the
// greatest absolute difference 0.5 at (1, 1), the greatest relative one
// 0.25/0.125 = 2 at (0, 2); an exact value enclosing 0 makes the relative
// difference +Inf.
func TestClosenessReport(t *testing.T) {
	el := func(rec float32, exact float64, bound float64) fpbound.Element {
		return fpbound.Judge(rec, fpbound.Enclosure{Exact: spec.Interval{Lo: exact, Hi: exact}, Bound: bound})
	}
	els := []fpbound.Element{
		el(1, 1, 1e-6), el(2, 2, 1e-6), el(0.375, 0.125, 1e-6),
		el(3, 3, 1e-6), el(4.5, 4, 1e-6), el(5, 5, 1e-6),
	}
	c := closenessOf(spec.Shape{2, 3}, els)
	got := c.lines("  ")
	want := "  Mismatched elements: 2 / 6 (33.3%) outside the bound\n" +
		"  Greatest absolute difference: 0.5 at index (1, 1) (bound 1e-06)\n" +
		"  Greatest relative difference: 2 at index (0, 2)\n"
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	// Every element within the bound: no report.
	if s := closenessOf(spec.Shape{2}, []fpbound.Element{el(1, 1, 1e-6), el(2, 2, 1e-6)}).lines(""); s != "" {
		t.Errorf("a passing tensor reports %q", s)
	}
	if r := relDiff(0.5, spec.Interval{Lo: -1, Hi: 1}); !math.IsInf(r, 1) {
		t.Errorf("relDiff over an enclosure of 0 = %v, want +Inf", r)
	}
	nan := closenessOf(spec.Shape{1}, []fpbound.Element{el(float32(math.NaN()), 1, 1e-6)})
	if !strings.Contains(nan.lines(""), "Greatest absolute difference: +Inf at index (0)") {
		t.Errorf("a NaN recorded value: %q", nan.lines(""))
	}
}

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
