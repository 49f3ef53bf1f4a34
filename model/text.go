package model

import (
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Text spells a tensor for a text report (eval, grad): nested
// brackets as spec.Format lays them out, each element as textValue
// spells it.
func Text[T spec.Scalar[T]](t spec.Tensor[T]) string {
	return spec.Format(t, textValue[T])
}

// textValue spells one value for a reader: an exact rational that is not
// an integer as a 6-digit decimal beside its exact value, "-0.371311 (=
// -37131/100000)" (the decimal is a reading aid, the fraction the value);
// an integer as itself; an interval as "lo..hi", its two binary64
// endpoints as shortest decimals (so that no interval reads as a
// two-element tensor); floats as their String.
func textValue[T spec.Scalar[T]](v T) string {
	switch x := any(v).(type) {
	case spec.Rat:
		s := x.String()
		if !strings.Contains(s, "/") {
			return s
		}
		d := x.Big().FloatString(12)
		f, _ := strconv.ParseFloat(d, 64)
		return strconv.FormatFloat(f, 'g', 6, 64) + " (= " + s + ")"
	case spec.Interval:
		return floatText(x.Lo) + ".." + floatText(x.Hi)
	}
	return v.String()
}

// floatText is a binary64's shortest decimal; strconv spells the
// non-finite values "+Inf", "-Inf" and "NaN", as every --json does.
func floatText(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
