package view

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// summaryAbove is the largest tensor a label prints element by element;
// a bigger one is summarised (valueText).
const summaryAbove = 8

// valueText is how a picture labels a tensor: every element when it has
// at most summaryAbove of them, else its size, least and greatest element
// and Euclidean norm, "60 elements: min ≈ -1.2, max ≈ 3.4, ‖·‖₂ ≈ 5.6" —
// approximations for reading (an exact value's nearest binary64, an
// interval's midpoint), never a verdict; the exact values are in
// `tlcheck grad --json`.
//
// A small interval tensor prints each element as its value when the
// interval is a point, else as "≈" and its midpoint to 6 significant
// digits (the enclosure itself is in `tlcheck grad --json`).
func valueText[T spec.Scalar[T]](t spec.Tensor[T]) string {
	if len(t.Data) <= summaryAbove {
		if iv, ok := any(t).(spec.Tensor[spec.Interval]); ok {
			return intervalText(iv)
		}
		return t.String()
	}
	lo, hi, sq := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range t.Data {
		f := approx(v)
		lo, hi = math.Min(lo, f), math.Max(hi, f)
		sq += f * f
	}
	g := func(f float64) string { return strconv.FormatFloat(f, 'g', 4, 64) }
	return fmt.Sprintf("%d elements: min ≈ %s, max ≈ %s, ‖·‖₂ ≈ %s", len(t.Data), g(lo), g(hi), g(math.Sqrt(sq)))
}

// approx is a value's nearest binary64 (an interval's midpoint).
func approx(v any) float64 {
	switch x := v.(type) {
	case spec.Rat:
		return x.Float64()
	case spec.F32:
		return float64(x)
	case spec.F64:
		return float64(x)
	case spec.Interval:
		return x.Lo/2 + x.Hi/2
	case spec.Binary32:
		f, _ := strconv.ParseFloat(x.String(), 64)
		return f
	}
	f, _ := strconv.ParseFloat(fmt.Sprint(v), 64)
	return f
}

// intervalText prints a small interval tensor (see valueText), nested as
// spec.Tensor.String nests a tensor.
func intervalText(t spec.Tensor[spec.Interval]) string {
	el := make([]string, len(t.Data))
	for i, v := range t.Data {
		if v.Lo == v.Hi {
			el[i] = strconv.FormatFloat(v.Lo, 'g', -1, 64)
		} else {
			el[i] = "≈" + strconv.FormatFloat(v.Lo/2+v.Hi/2, 'g', 6, 64)
		}
	}
	var rec func(dims []int, el []string) string
	rec = func(dims []int, el []string) string {
		if len(dims) == 0 {
			if len(el) == 0 {
				return "[]"
			}
			return el[0]
		}
		n := dims[0]
		if n == 0 {
			return "[]"
		}
		step := len(el) / n
		parts := make([]string, n)
		for i := range n {
			parts[i] = rec(dims[1:], el[i*step:(i+1)*step])
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return rec(t.Shape, el)
}
