//go:build race

package main

// raceEnabled is true under the race detector (go test -race), whose
// ThreadSanitizer runtime reserves its shadow memory up front and cannot
// start under a small ulimit -v at all.
const raceEnabled = true
