package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// scalarAuto is the default of every --scalar flag that evaluates a
// model: exact rationals where the model is exact over them at its input,
// interval enclosures of the exact real values otherwise (autoScalar).
const scalarAuto = "auto"

// autoScalar resolves --scalar auto for the model and input of fs: "rat"
// when the model is exact over spec.Rat at its input, else "interval"
// and why rat does not apply (a tag without exact rational semantics, or
// a value that leaves the rationals: a batch norm's sqrt(var + ε)).
// Both are exact in the sense tlcheck claims: a rational is the value
// itself, an interval encloses it (spec.Interval rounds outward).
func autoScalar(fs *irFiles) (scalar, why string) {
	for i := range fs.g.Nodes {
		op := fs.g.Nodes[i].Kind.Op
		if info, ok := irsem.LookupTag(op); !ok || !info.Exact {
			return "interval", fmt.Sprintf("node %d (%s) has no exact rational semantics", i, op)
		}
	}
	_, err := irsem.DenoteAll(fs.g, fs.p, fs.x)
	var de *spec.DomainError
	if errors.As(err, &de) && de.Scalar == "rat" && strings.HasPrefix(de.Reason, "no exact rational") {
		return "interval", err.Error()
	}
	return "rat", ""
}

// ratApplies says whether --scalar auto picks rat for fs (autoScalar).
func ratApplies(fs *irFiles) bool {
	s, _ := autoScalar(fs)
	return s == "rat"
}

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
