//go:build race

package spec

// raceEnabled is true under the race detector (go test -race).
const raceEnabled = true
