package gate

import (
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/leanbridge"
	"github.com/tlcheck/tlcheck/leanbridge/lean4export"
)

// Lean is the lean stage (gate --lean; set it as Config.Lean): lake builds
// the project in ./lean, lean4export exports its theorems, and each is
// audited against lean/statements.lock (leanbridge.Check), one item per
// theorem.
func Lean(c Config) Stage {
	st := Stage{Name: "lean"}
	fs, err := leanbridge.Check("lean", false, io.Discard, c.Stderr)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range fs {
		it := Item{GateItem: jsonout.GateItem{Name: lean4export.Escape(f.Theorem), Holds: f.Verdict == lean4export.Accepted}, Detail: "axioms " + lean4export.Escape(strings.Join(f.Axioms, ",")) + " statement " + f.Hash}
		if !it.Holds {
			it.Failure = strings.Join(f.Problems, "; ")
		}
		st.Items = append(st.Items, it)
	}
	return st
}
