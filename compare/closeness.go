package compare

// The failure report of compare and compare-grad, in the manner of
// torch.testing.assert_close: how many elements are outside the bound,
// and the greatest absolute and relative differences from the exact
// value, each with its multi-dimensional index.

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/spec"
)

// Closeness summarises one tensor's judged elements. The differences are
// reported, never decided (the verdicts are fpbound's): absolute is the
// upper end of fpbound's enclosure of |recorded − exact| (Element.Dist.Hi,
// rounded outward, so never below the true difference), relative is that
// divided by the least |x| over the exact value's enclosure — +Inf when
// the enclosure holds 0 and the difference is not 0. A NaN or infinite
// recorded value has the absolute difference +Inf.
type Closeness struct {
	Shape                        spec.Shape
	Total, Fails, Inconclusive   int
	AbsMax, AbsBound             float64 // the greatest absolute difference and its element's bound
	AbsAt                        int     // its element (−1: none)
	RelMax                       float64 // the greatest relative difference
	RelAt                        int     // its element (−1: none)
	FirstFail, FirstInconclusive int     // −1: none
}

// Summarize summarises els, the elements of a tensor of the given
// shape in row-major order.
func Summarize(shape spec.Shape, els []fpbound.Element) Closeness {
	c := Closeness{Shape: shape, Total: len(els), AbsAt: -1, RelAt: -1, FirstFail: -1, FirstInconclusive: -1}
	for i, el := range els {
		switch el.Verdict {
		case fpbound.Fails:
			c.Fails++
			if c.FirstFail < 0 {
				c.FirstFail = i
			}
		case fpbound.Inconclusive:
			c.Inconclusive++
			if c.FirstInconclusive < 0 {
				c.FirstInconclusive = i
			}
		}
		abs := el.Dist.Hi
		if math.IsNaN(abs) {
			abs = math.Inf(1)
		}
		if c.AbsAt < 0 || abs > c.AbsMax {
			c.AbsMax, c.AbsAt, c.AbsBound = abs, i, el.Bound
		}
		rel := relDiff(abs, el.Exact)
		if c.RelAt < 0 || rel > c.RelMax {
			c.RelMax, c.RelAt = rel, i
		}
	}
	return c
}

// relDiff is abs / min{|x| : x ∈ exact}: 0 for no difference, +Inf when
// the enclosure holds 0 (or is not finite) and there is one.
func relDiff(abs float64, exact spec.Interval) float64 {
	if abs == 0 {
		return 0
	}
	lo, hi := exact.Lo, exact.Hi
	var mag float64
	switch {
	case math.IsNaN(lo) || math.IsNaN(hi):
		return math.Inf(1)
	case lo > 0:
		mag = lo
	case hi < 0:
		mag = -hi
	}
	if mag == 0 {
		return math.Inf(1)
	}
	return abs / mag
}

// Lines renders the summary, each line indented; empty when every
// element holds.
func (c Closeness) Lines(indent string) string {
	if c.Fails == 0 && c.Inconclusive == 0 || c.Total == 0 {
		return ""
	}
	var b strings.Builder
	pct := 100 * float64(c.Fails) / float64(c.Total)
	fmt.Fprintf(&b, "%sMismatched elements: %d / %d (%.1f%%) outside the bound", indent, c.Fails, c.Total, pct)
	if c.Inconclusive > 0 {
		fmt.Fprintf(&b, ", %d inconclusive", c.Inconclusive)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%sGreatest absolute difference: %s at index %s (bound %s)\n", indent, numText(c.AbsMax), IndexText(c.Shape, c.AbsAt), numText(c.AbsBound))
	fmt.Fprintf(&b, "%sGreatest relative difference: %s at index %s\n", indent, numText(c.RelMax), IndexText(c.Shape, c.RelAt))
	return b.String()
}

// numText spells a reported float with 6 significant digits, and the
// non-finite values as every --json does: "+Inf", "-Inf", "NaN".
func numText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', 6, 64)
}

// IndexText is the multi-dimensional index of flat (row-major) element i
// of shape, as a tuple: "(1, 0, 2)"; "()" for a scalar.
func IndexText(shape spec.Shape, i int) string {
	idx := unravel(shape, i)
	parts := make([]string, len(idx))
	for k, v := range idx {
		parts[k] = strconv.Itoa(v)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// unravel is the multi-dimensional index of flat element i of shape (the
// last axis varies fastest).
func unravel(shape spec.Shape, i int) []int {
	idx := make([]int, len(shape))
	for k := len(shape) - 1; k >= 0; k-- {
		if shape[k] > 0 {
			idx[k] = i % shape[k]
			i /= shape[k]
		}
	}
	return idx
}
