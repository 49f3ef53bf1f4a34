package compare

import (
	"math"
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
		if got := IndexText(c.shape, c.i); got != c.want {
			t.Errorf("IndexText(%v, %d) = %s, want %s", c.shape, c.i, got, c.want)
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
	c := Summarize(spec.Shape{2, 3}, els)
	got := c.Lines("  ")
	want := "  Mismatched elements: 2 / 6 (33.3%) outside the bound\n" +
		"  Greatest absolute difference: 0.5 at index (1, 1) (bound 1e-06)\n" +
		"  Greatest relative difference: 2 at index (0, 2)\n"
	if got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	// Every element within the bound: no report.
	if s := Summarize(spec.Shape{2}, []fpbound.Element{el(1, 1, 1e-6), el(2, 2, 1e-6)}).Lines(""); s != "" {
		t.Errorf("a passing tensor reports %q", s)
	}
	if r := relDiff(0.5, spec.Interval{Lo: -1, Hi: 1}); !math.IsInf(r, 1) {
		t.Errorf("relDiff over an enclosure of 0 = %v, want +Inf", r)
	}
	nan := Summarize(spec.Shape{1}, []fpbound.Element{el(float32(math.NaN()), 1, 1e-6)})
	if !strings.Contains(nan.Lines(""), "Greatest absolute difference: +Inf at index (0)") {
		t.Errorf("a NaN recorded value: %q", nan.Lines(""))
	}
}
