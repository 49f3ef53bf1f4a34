// Package docs holds the tests that keep the repository's documents true
// of the code: ARCHITECTURE.md's package table (every package directory
// has a row, and every import of a non-test file points to a lower floor)
// and the figures README.md states that can be computed (the number of
// registry primitives). It has no API.
package docs
