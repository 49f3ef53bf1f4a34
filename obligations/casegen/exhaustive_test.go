package casegen

import "os"

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the full counts of the slow suites; the
// default go test ./... runs a smaller sample and CI runs the full counts
// (ci/exhaustive.sh).
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }
