package obligations

import (
	"strconv"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// intervalDerivative reports whether r is a derivative obligation decided
// by the interval oracle (dual-interval, or inconclusive), which measures
// a relative resolution; over Dual[Rat] (dual-rat) it is exact, like the
// other Rat laws.
func (r *Result) intervalDerivative() bool {
	return r.Obligation == Derivative && (r.Oracles[OracleDualInterval] > 0 || r.Oracles[OracleInconclusive] > 0)
}

// WorstText is r's worst measure as check's table prints it: rel=…
// (and inconclusive=N) for an interval derivative, width=… or bits=N for
// adjointness over intervals or floats, overlap or exact otherwise, "-"
// with no case decided.
func (r *Result) WorstText() string {
	if r.Cases == 0 {
		return "-"
	}
	switch {
	case r.intervalDerivative():
		s := "rel=" + strconv.FormatFloat(r.Worst, 'g', 3, 64)
		if n := r.Oracles[OracleInconclusive]; n > 0 {
			s += " inconclusive=" + strconv.Itoa(n)
		}
		return s
	case r.Oracles[OracleInterval] > 0 && r.Obligation == Adjointness:
		return "width=" + strconv.FormatFloat(r.Worst, 'g', 3, 64)
	case r.Obligation == Adjointness:
		return "bits=" + strconv.Itoa(int(r.Worst))
	}
	if r.Oracles[OracleInterval] > 0 {
		return "overlap"
	}
	return "exact"
}

// CheckResult is r, the result of op, as a JSON record: the same cases as
// WorstText, each measure a number in its own field.
func (r *Result) CheckResult(op string) jsonout.CheckResult {
	out := jsonout.CheckResult{Op: op, Obligation: string(r.Obligation), Cases: r.Cases, Oracles: map[string]int{}, Holds: r.Holds()}
	for o, n := range r.Oracles {
		out.Oracles[string(o)] = n
	}
	if r.Cases == 0 {
		return out
	}
	worst := jsonout.Number(r.Worst)
	switch {
	case r.intervalDerivative():
		out.WorstRel = &worst
		if n := r.Oracles[OracleInconclusive]; n > 0 {
			out.Inconclusive = &n
		}
	case r.Oracles[OracleInterval] > 0 && r.Obligation == Adjointness:
		out.WorstWidth = &worst
	case r.Obligation == Adjointness:
		bits := int(r.Worst)
		out.WorstBits = &bits
	case r.Oracles[OracleInterval] > 0:
		out.Agreement = "overlap"
	default:
		out.Agreement = "exact"
	}
	return out
}
