package main

import (
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/leanbridge"
)

// errNoLake is the one line `lean check` and `gate --lean` print where
// Lean is absent.
func errNoLake() error {
	return cli.BadInput(leanbridge.ErrNoLake)
}
