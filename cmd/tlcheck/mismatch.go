package main

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

// closeness summarises one tensor's judged elements. The differences are
// reported, never decided (the verdicts are fpbound's): absolute is the
// upper end of fpbound's enclosure of |recorded − exact| (Element.Dist.Hi,
// rounded outward, so never below the true difference), relative is that
// divided by the least |x| over the exact value's enclosure — +Inf when
// the enclosure holds 0 and the difference is not 0. A NaN or infinite
// recorded value has the absolute difference +Inf.
type closeness struct {
	shape                   spec.Shape
	total, fails, inconc    int
	absMax, absBound        float64
	absAt                   int
	relMax                  float64
	relAt                   int
	firstFail, firstInconcl int
}

// closenessOf summarises els, the elements of a tensor of the given
// shape in row-major order.
func closenessOf(shape spec.Shape, els []fpbound.Element) closeness {
	c := closeness{shape: shape, total: len(els), absAt: -1, relAt: -1, firstFail: -1, firstInconcl: -1}
	for i, el := range els {
		switch el.Verdict {
		case fpbound.Fails:
			c.fails++
			if c.firstFail < 0 {
				c.firstFail = i
			}
		case fpbound.Inconclusive:
			c.inconc++
			if c.firstInconcl < 0 {
				c.firstInconcl = i
			}
		}
		abs := el.Dist.Hi
		if math.IsNaN(abs) {
			abs = math.Inf(1)
		}
		if c.absAt < 0 || abs > c.absMax {
			c.absMax, c.absAt, c.absBound = abs, i, el.Bound
		}
		rel := relDiff(abs, el.Exact)
		if c.relAt < 0 || rel > c.relMax {
			c.relMax, c.relAt = rel, i
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

// lines renders the summary, each line indented; empty when every
// element holds.
func (c closeness) lines(indent string) string {
	if c.fails == 0 && c.inconc == 0 || c.total == 0 {
		return ""
	}
	var b strings.Builder
	pct := 100 * float64(c.fails) / float64(c.total)
	fmt.Fprintf(&b, "%sMismatched elements: %d / %d (%.1f%%) outside the bound", indent, c.fails, c.total, pct)
	if c.inconc > 0 {
		fmt.Fprintf(&b, ", %d inconclusive", c.inconc)
	}
	b.WriteByte('\n')
	fmt.Fprintf(&b, "%sGreatest absolute difference: %s at index %s (bound %s)\n", indent, numText(c.absMax), indexText(c.shape, c.absAt), numText(c.absBound))
	fmt.Fprintf(&b, "%sGreatest relative difference: %s at index %s\n", indent, numText(c.relMax), indexText(c.shape, c.relAt))
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

// indexText is the multi-dimensional index of flat (row-major) element i
// of shape, as a tuple: "(1, 0, 2)"; "()" for a scalar.
func indexText(shape spec.Shape, i int) string {
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
