package fpbound

import "os"

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the full counts of slow exhaustive suites:
// the default go test ./... runs a sample of the tests that read it, and
// CI runs them in full with the flag set (ci/exhaustive.sh; internal/docs'
// TestExhaustiveGatesRunInCI checks that every such test is there).
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }
