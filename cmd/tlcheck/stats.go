package main

import (
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// statsUsage is the help of --stats, shared by eval, grad and compare.
const statsUsage = `with --json, add "stats": {"peak_rss_bytes": N}, the process's peak resident set size read after the run (not deterministic; absent by default, so the document is byte-identical without it)`

// runStats returns the stats object for a document when want is set (nil
// otherwise), or a usage error where the platform cannot measure it.
func runStats(want bool) (*jsonout.Stats, error) {
	if !want {
		return nil, nil
	}
	rss, ok := peakRSS()
	if !ok {
		return nil, cli.Usagef("--stats: the peak resident set size cannot be read on this platform")
	}
	return &jsonout.Stats{PeakRSSBytes: rss}, nil
}
