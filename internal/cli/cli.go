// Package cli holds the conventions every tlcheck command shares: exit
// codes, one-line error reporting, strict flag parsing with usage derived
// from the flag set itself (flags.go), stdout write errors as exit 2
// (output.go), and progress output that appears only on a terminal.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"

	"github.com/tlcheck/tlcheck/limits"
)

// Exit codes.
const (
	ExitOK      = 0 // every obligation holds
	ExitFailed  = 1 // an obligation or comparison failed
	ExitBadUser = 2 // bad input or usage
	// ExitCrash is tlcheck's own failure, a panic recovered in main — a bug,
	// never an input's fault — so that a script can tell it from bad input.
	ExitCrash = 3
)

// UsageError marks an error caused by the user's input or flags; the
// command exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// BadInput wraps err as a UsageError (nil stays nil).
func BadInput(err error) error {
	if err == nil {
		return nil
	}
	var u *UsageError
	if errors.As(err, &u) {
		return err
	}
	return &UsageError{Err: err}
}

// FailureError marks an obligation that does not hold; the command exits 1.
type FailureError struct{ Err error }

func (e *FailureError) Error() string { return e.Err.Error() }
func (e *FailureError) Unwrap() error { return e.Err }

// Failf returns a FailureError with a formatted message.
func Failf(format string, args ...any) error {
	return &FailureError{Err: fmt.Errorf(format, args...)}
}

// Code maps an error to the exit code convention.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var f *FailureError
	if errors.As(err, &f) {
		return ExitFailed
	}
	return ExitBadUser
}

// Report prints err as one line on w, prefixed with the program name:
// newlines become "; ", every other character a terminal would act on
// (ESC sequences, carriage returns, NUL, bidirectional overrides, invalid
// UTF-8) is escaped (limits.Escape) — whatever input names an error line
// echoes, a node id, an op, a file name, it cannot forge a line or drive
// the terminal — and the line is cut at limits.LineBytes.
func Report(w io.Writer, err error) {
	msg := limits.Line(limits.Escape(strings.ReplaceAll(err.Error(), "\n", "; ")))
	fmt.Fprintf(w, "tlcheck: %s\n", msg)
}

// IsTerminal reports whether w is a terminal, so progress bars appear only
// for a person watching.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress draws a one-line progress bar on a terminal and nothing
// otherwise.
type Progress struct {
	w       io.Writer
	on      bool
	label   string
	total   int
	done    int
	lastPct int
}

// NewProgress returns a progress bar writing to w when w is a terminal.
func NewProgress(w io.Writer, label string, total int) *Progress {
	return &Progress{w: w, on: IsTerminal(w), label: label, total: total, lastPct: -1}
}

// Step advances the bar by one unit.
func (p *Progress) Step() {
	p.done++
	if !p.on || p.total <= 0 {
		return
	}
	pct := p.done * 100 / p.total
	if pct == p.lastPct {
		return
	}
	p.lastPct = pct
	n := pct / 5
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%%", p.label, strings.Repeat("#", n), strings.Repeat(".", 20-n), pct)
}

// Done clears the bar.
func (p *Progress) Done() {
	if p.on {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", len(p.label)+30))
	}
}
