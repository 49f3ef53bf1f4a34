package main

import (
	"fmt"
)

// scalarAuto is the default of every --scalar flag that evaluates a
// model: exact rationals where the model is exact over them at its input,
// interval enclosures of the exact real values otherwise (model.Model.AutoScalar).
const scalarAuto = "auto"

// scalarLine is the line a text report begins with to say which scalar
// its values are over: "scalar = rat (exact rationals)", and for an
// interval picked by auto, why the rationals did not apply.
func scalarLine(kind, why string) string {
	what := "floating-point, not exact"
	switch kind {
	case "rat":
		what = "exact rationals"
	case "interval":
		what = "interval enclosures of the exact real values"
		if why != "" {
			what += "; not rat: " + why
		}
	}
	return fmt.Sprintf("scalar = %s (%s)\n", kind, what)
}
