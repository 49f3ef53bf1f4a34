// Package rapidtests holds the property-based harnesses
// (pgregory.net/rapid) that check the proof obligations of every execution
// path exactly. Each test names the obligation it discharges. Failures are
// shrunk by rapid and replayed from the fail files committed under
// testdata/rapid/ (rapid replays every fail file of a test before drawing
// new cases).
package rapidtests
