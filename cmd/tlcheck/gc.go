package main

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's target when GOGC is not set. The
// checks allocate many short-lived big.Rat values over a live heap of a
// few MiB, so the default target (100%) runs a collection every few
// milliseconds — about 9% of the CPU on one core, and more with two
// workers allocating at once, which eats the parallel speed-up. 400%
// keeps the heap in the tens of MiB and the collector's share small; an
// explicit GOGC still wins.
const gcPercent = 400

func init() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
}
