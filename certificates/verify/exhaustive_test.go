package verify

import "os"

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the full counts of slow exhaustive suites;
// CI sets it for the tests that read it (.ci/run, "exhaustive suites").
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }

// editStride is the step between the numbers the every-number-edit tests
// edit: 1 (every number of every file) with TLCHECK_EXHAUSTIVE set;
// otherwise every 16th number, the first of each file included (as under
// the race detector, see raceStride; every 4th before testcpu38, which made
// these two tests a third of the package's default CPU), so every file and
// every verifier still sees edited input in the default go test ./... and
// CI's exhaustive run decides every edit.
func editStride() int {
	if exhaustive() {
		return 1
	}
	return max(raceStride(), 16)
}
