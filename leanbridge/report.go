package leanbridge

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/leanbridge/lean4export"
	"github.com/tlcheck/tlcheck/limits"
)

// WriteFindings writes the table theorem × axioms × statement hash
// (its first 16 hex digits) × verdict, then every problem, one line each.
// Every string that came from the export, the lock or the command line
// goes through lean4export.Escape (a Finding's Problems already have), so
// that a name holding a newline, ESC, NUL or a bidi override can neither
// forge a row nor drive the terminal.
func WriteFindings(w io.Writer, fs []lean4export.Finding) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "theorem\taxioms\tstatement hash\tverdict")
	for _, f := range fs {
		ax, h := lean4export.Escape(strings.Join(f.Axioms, ",")), f.Hash
		if ax == "" {
			ax = "none"
		}
		if len(h) > 16 {
			h = h[:16]
		}
		if h == "" {
			h = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", limits.Short(lean4export.Escape(f.Theorem)), limits.Short(ax), h, f.Verdict)
	}
	tw.Flush()
	for _, f := range fs {
		for _, p := range f.Problems {
			fmt.Fprintf(w, "%s: %s\n", limits.Short(lean4export.Escape(f.Theorem)), limits.Line(p))
		}
	}
}
