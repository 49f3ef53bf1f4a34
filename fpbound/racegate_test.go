package fpbound

import "testing"

// skipUnderRace skips one of fpbound's heaviest tests under the race
// detector. Each is a sequential check of values (bit identity against an
// old path, exact sweep sums, the figures' rows, soundness over nets)
// whose concurrency is only what every evaluation has: irsem's level
// schedule, enclose's and fastcpu's row splits and fpbound's locked
// caches, which the lighter tests of this package (TestBallDeterministic,
// TestCompare*, the profile fixtures) and those packages' own tests
// already drive under -race. Under ThreadSanitizer these six took about
// 3 of the race stage's 10 minutes (fpbound 249 s of CPU-bound tests); the
// plain go test ./... runs them in full.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceEnabled {
		t.Skip("sequential value check, run by the plain go test ./...; skipped under -race (fpbound/racegate_test.go)")
	}
}
