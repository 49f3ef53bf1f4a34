package main

import (
	"github.com/tlcheck/tlcheck/adapters/gomlx"
	"github.com/tlcheck/tlcheck/adapters/gorgonia"
	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/adapters/spago"
)

// engines lists every engine the command checks, in table order: the
// baseline (tlcheck's own rules in binary64) first.
func engines() []harness.Engine {
	return []harness.Engine{harness.Self(), gorgonia.New(), spago.New(), gomlx.New()}
}
