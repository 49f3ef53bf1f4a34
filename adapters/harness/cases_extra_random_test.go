package harness

import "testing"

// TestCasesExtraRandomSelf: tlcheck's own rules in binary64 hold on every
// case of CasesExtraRandom (so a failure of an engine there is the
// engine's), every case has tangents (none sits on a kink: smoothAt
// agrees), and no name shadows another case list's.
func TestCasesExtraRandomSelf(t *testing.T) {
	rows, skipped := Run(Self(), CasesExtraRandom(), Options{})
	if len(skipped) != 0 {
		t.Errorf("skipped %v", skipped)
	}
	seen := map[string]bool{}
	for _, r := range rows {
		seen[r.Case] = true
		if r.Verdict != Holds {
			t.Errorf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
		}
	}
	if n := len(CasesExtraRandom()); len(seen) != n {
		t.Errorf("%d cases ran of %d", len(seen), n)
	}
	names := map[string]int{}
	for _, c := range AllCases() {
		names[c.Name]++
	}
	for _, c := range CasesExtraRandom() {
		if names[c.Name] != 1 {
			t.Errorf("%s: %d cases of that name", c.Name, names[c.Name])
		}
		if c.Tangents == nil || !smoothAt(c.Graph, c.Xs) {
			t.Errorf("%s: no tangents, or not smooth", c.Name)
		}
	}
}
