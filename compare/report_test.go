package compare

import (
	"strconv"
	"testing"
)

// TestOutward: compare's printed enclosures are rounded outward, so the
// printed [lo, hi] contains the computed one; short values print as they
// are. Expected spellings by hand.
func TestOutward(t *testing.T) {
	cases := []struct {
		v      float64
		lo, hi string
	}{
		{1.1906298613695299e-07, "1.19e-07", "1.191e-07"},
		{3.5762786865234386e-07, "3.576e-07", "3.577e-07"},
		{-1.23456789, "-1.235", "-1.234"},
		{0.5, "0.5", "0.5"},
		{0, "0", "0"},
		{123456789, "1.234e+08", "1.235e+08"},
	}
	for _, c := range cases {
		lo, hi := outward(c.v, false), outward(c.v, true)
		if lo != c.lo || hi != c.hi {
			t.Errorf("outward(%v) = [%s, %s], want [%s, %s]", c.v, lo, hi, c.lo, c.hi)
		}
		l, _ := strconv.ParseFloat(lo, 64)
		h, _ := strconv.ParseFloat(hi, 64)
		if l > c.v || h < c.v {
			t.Errorf("outward(%v): [%s, %s] does not contain it", c.v, lo, hi)
		}
	}
}
