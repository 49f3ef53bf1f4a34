package main

import (
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/leanbridge"
	"github.com/tlcheck/tlcheck/leanbridge/lean4export"
)

// errNoLake is the one line `lean check` and `gate --lean` print where
// Lean is absent.
func errNoLake() error {
	return cli.BadInput(leanbridge.ErrNoLake)
}

// stageLean is the gate's lean stage (gate --lean): lean check against
// lean/statements.lock, one item per theorem.
func stageLean(c gateConfig) gateStage {
	st := gateStage{Name: "lean"}
	fs, err := leanbridge.Check("lean", false, io.Discard, c.stderr)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range fs {
		it := gateItem{GateItem: jsonout.GateItem{Name: lean4export.Escape(f.Theorem), Holds: f.Verdict == lean4export.Accepted}, Detail: "axioms " + lean4export.Escape(strings.Join(f.Axioms, ",")) + " statement " + f.Hash}
		if !it.Holds {
			it.Failure = strings.Join(f.Problems, "; ")
		}
		st.Items = append(st.Items, it)
	}
	return st
}
