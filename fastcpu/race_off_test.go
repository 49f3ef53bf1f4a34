//go:build !race

package fastcpu

// raceEnabled is false outside the race detector; see race_on_test.go.
const raceEnabled = false
