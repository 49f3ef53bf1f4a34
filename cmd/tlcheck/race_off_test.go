//go:build !race

package main

// raceEnabled is true under the race detector; see race_on_test.go.
const raceEnabled = false
