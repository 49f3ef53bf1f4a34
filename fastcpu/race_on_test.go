//go:build race

package fastcpu

// raceEnabled is true under the race detector, whose sync.Pool drops a
// random share of Puts on purpose (to expose code that relies on reuse), so
// a zero-allocation claim about pooled scratch is not observable there.
const raceEnabled = true
