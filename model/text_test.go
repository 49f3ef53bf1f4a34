package model

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func TestTextValue(t *testing.T) {
	rats := []struct {
		v    spec.Rat
		want string
	}{
		{spec.NewRat(3, 1), "3"},
		{spec.NewRat(-37131, 100000), "-0.37131 (= -37131/100000)"},
		{spec.NewRat(1, 3), "0.333333 (= 1/3)"},
		{spec.NewRat(45, 2), "22.5 (= 45/2)"},
	}
	for _, c := range rats {
		if got := textValue(c.v); got != c.want {
			t.Errorf("textValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	ivs := []struct {
		v    spec.Interval
		want string
	}{
		{spec.Interval{Lo: 0.5, Hi: 0.75}, "0.5..0.75"},
		{spec.Interval{Lo: -2, Hi: -1.5}, "-2..-1.5"},
		{spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}, "-Inf..+Inf"},
	}
	for _, c := range ivs {
		if got := textValue(c.v); got != c.want {
			t.Errorf("textValue(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	tt := spec.Tensor[spec.Interval]{Shape: spec.Shape{2}, Data: []spec.Interval{{Lo: 1, Hi: 2}, {Lo: 3, Hi: 3}}}
	if got := Text(tt); got != "[1..2, 3..3]" {
		t.Errorf("Text = %q: an interval must not read as a two-element list", got)
	}
}
