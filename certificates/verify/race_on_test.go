//go:build race

package verify

// raceEnabled is true when the tests run under the race detector (go test
// -race), where every memory access is instrumented and the exhaustive
// edit tests cost 10–20 times their normal time; see raceStride.
const raceEnabled = true
