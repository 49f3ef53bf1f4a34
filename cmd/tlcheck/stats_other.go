//go:build !linux && !darwin

package main

// peakRSS is unavailable on this platform.
func peakRSS() (int64, bool) { return 0, false }
