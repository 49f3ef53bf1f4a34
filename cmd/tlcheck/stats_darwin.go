//go:build darwin

package main

import "syscall"

// peakRSS is the process's peak resident set size in bytes
// (getrusage(RUSAGE_SELF).ru_maxrss, which macOS reports in bytes).
func peakRSS() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return int64(ru.Maxrss), true
}
