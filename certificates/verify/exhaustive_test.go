package verify

import "os"

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the full counts of slow exhaustive suites;
// CI sets it for the tests that read it (.ci/run, "exhaustive suites").
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }

// editStride is the step between the numbers the every-number-edit tests
// edit: 1 (every number of every file) with TLCHECK_EXHAUSTIVE set;
// otherwise every 4th number, the first of each file included (every 16th
// under the race detector, see raceStride), so every file and every
// verifier still sees edited input in the default go test ./... and CI's
// exhaustive run decides every edit.
func editStride() int {
	if exhaustive() {
		return 1
	}
	return max(raceStride(), 4)
}
