//go:build race

package fpbound

// raceEnabled is true under the race detector (go test -race).
const raceEnabled = true
