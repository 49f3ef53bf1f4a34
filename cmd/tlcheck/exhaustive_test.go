package main

import "os"

// exhaustive reports whether TLCHECK_EXHAUSTIVE is set (non-empty), the
// repository's one switch for the slow parts of the test suite that the
// default go test ./... leaves out or samples; .ci/run sets it for the
// tests that read it, so CI's coverage is unchanged.
func exhaustive() bool { return os.Getenv("TLCHECK_EXHAUSTIVE") != "" }
