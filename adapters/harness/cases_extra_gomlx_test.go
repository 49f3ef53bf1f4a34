package harness

import "testing"

// TestCasesExtraGomlxSelf: tlcheck's own rules in binary64 hold on the
// extra cases (the only non-holds allowed are zero rows of graphs with a
// primitive the registry does not call zero-preserving), so a finding an
// engine shows there is the engine's; they are in AllCases, whose names
// are unique.
func TestCasesExtraGomlxSelf(t *testing.T) {
	names := map[string]bool{}
	for _, c := range AllCases() {
		if names[c.Name] {
			t.Errorf("case name %s is used twice in AllCases", c.Name)
		}
		names[c.Name] = true
	}
	extra := CasesExtraGomlx()
	for _, c := range extra {
		if !names[c.Name] {
			t.Errorf("extra case %s is not in AllCases", c.Name)
		}
	}
	rows, skipped := Run(newSelf(), extra, Options{})
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
	for _, r := range rows {
		if r.Verdict == Holds || (r.Obligation == OblZero && r.Verdict == Inconclusive) {
			continue
		}
		t.Errorf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
	}
}
