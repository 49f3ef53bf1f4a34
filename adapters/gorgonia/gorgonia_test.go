package gorgonia

import (
	"testing"

	"github.com/tlcheck/tlcheck/adapters/harness"
)

func TestDump(t *testing.T) {
	rows, skipped := harness.Run(New(), harness.Cases(), harness.Options{})
	for _, s := range skipped {
		t.Logf("skip %s", s)
	}
	for _, r := range rows {
		if r.Verdict != harness.Holds {
			t.Logf("%s %s %s: %s %s", r.Case, r.Machine, r.Obligation, r.Verdict, r.Detail)
		}
	}
}
