package harness

import "testing"

// TestCasesExtraSpagoSelf: tlcheck's own rules in binary64 hold on every
// extra case, so a failure of an engine there is the engine's.
func TestCasesExtraSpagoSelf(t *testing.T) {
	rows, skipped := Run(Self(), CasesExtraSpago(), Options{})
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	for _, c := range Cases() {
		for _, e := range CasesExtraSpago() {
			if c.Name == e.Name {
				t.Errorf("extra case %s shadows a shared case", e.Name)
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Case] = true
		// At sqrt_zero's singular elements the gradient and zero rows are
		// inconclusive by construction (Case.Singular).
		if r.Case == "sqrt_zero" && (r.Obligation == OblVJP || r.Obligation == OblZero) && r.Verdict == Inconclusive {
			continue
		}
		if r.Verdict != Holds {
			t.Errorf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
		}
	}
	if n := len(CasesExtraSpago()); len(seen) != n {
		t.Errorf("%d cases ran of %d", len(seen), n)
	}
}
