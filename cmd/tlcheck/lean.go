package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/leanbridge"
	"github.com/tlcheck/tlcheck/leanbridge/emit"
	"github.com/tlcheck/tlcheck/leanbridge/lean4export"
	"github.com/tlcheck/tlcheck/limits"
)

// leanSubcommands are the subcommands of `tlcheck lean`, each with its
// one-line summary.
var leanSubcommands = map[string]struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}{
	"audit": {"audit a lean4export NDJSON file: theorem × axioms × statement hash × verdict (exit 1 when a theorem is rejected)", runLeanAudit},
	"check": {"lake build the Lean project, export its theorems with lean4export and audit them against the lock (--lock writes it)", runLeanCheck},
	"emit":  {"turn a certificate directory into Lean modules checked by decide +kernel", runLeanEmit},
}

// runLean dispatches `tlcheck lean audit|check|emit`.
func runLean(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return cli.Usagef("lean: missing subcommand (audit, check or emit; run 'tlcheck lean audit --help')")
	}
	if args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		return &cli.HelpError{Flags: cli.NewFlags("lean")}
	}
	sub, ok := leanSubcommands[args[0]]
	if !ok {
		return cli.Usagef("lean: unknown subcommand %s (audit, check or emit)", cli.Quoted(args[0]))
	}
	err := sub.run(args[1:], stdout, stderr)
	var h *cli.HelpError
	if errors.As(err, &h) {
		return cli.WriteUsage(stdout, "tlcheck lean "+args[0]+" [flags]", sub.summary, h.Flags)
	}
	return err
}

// leanErr classifies leanbridge's errors by the exit code convention: a
// *leanbridge.CheckError fails (exit 1), every other error is bad input
// (exit 2).
func leanErr(err error) error {
	var ce *leanbridge.CheckError
	if errors.As(err, &ce) {
		return &cli.FailureError{Err: err}
	}
	return cli.BadInput(err)
}

func runLeanAudit(args []string, stdout, _ io.Writer) error {
	fs := newFlags("lean audit")
	export := fs.String("export", "", "the lean4export NDJSON file to audit (required)")
	lock := fs.String("lock", "", "compare statement hashes with this lock file (lean/statements.lock)")
	theorems := fs.String("theorems", "", "comma-separated theorems to audit (default: the lock's, else every theorem in the export)")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if *export == "" {
		return cli.Usagef("lean audit: --export FILE is required")
	}
	var names []string
	if *theorems != "" {
		var err error
		if names, err = cli.List("theorems", *theorems); err != nil {
			return err
		}
	}
	findings, err := leanbridge.AuditFile(*export, *lock, names, "")
	if err != nil {
		return leanErr(err)
	}
	return reportFindings(stdout, findings)
}

// reportFindings prints the findings' table and problems; exit 1 if a
// theorem is rejected.
func reportFindings(w io.Writer, fs []lean4export.Finding) error {
	leanbridge.WriteFindings(w, fs)
	if bad := lean4export.Failed(fs); len(bad) > 0 {
		return cli.Failf("lean audit: %d of %d theorems rejected; first: %s: %s", len(bad), len(fs), limits.Short(lean4export.Escape(bad[0].Theorem)), limits.Line(bad[0].Problems[0]))
	}
	return nil
}

func runLeanEmit(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("lean emit")
	certs := fs.String("certs", "", "the certificate directory (required)")
	out := fs.String("out", filepath.Join("lean", "Tlcheck", "Certs"), "the directory of the Tlcheck.Certs modules")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *certs == "" {
		return cli.Usagef("lean emit: --certs DIR is required")
	}
	r, err := emit.Emit(*certs)
	if err != nil {
		return cli.BadInput(lean4export.EscapeError(err))
	}
	if err := emit.Write(*out, r); err != nil {
		return cli.BadInput(lean4export.EscapeError(err))
	}
	fmt.Fprintf(stdout, "wrote %d Lean modules to %s (%d theorems); not emitted: %d files\n", len(r.Modules), lean4export.Escape(*out), len(r.Theorems), len(r.Skipped))
	for _, s := range r.Skipped {
		fmt.Fprintf(stdout, "  skipped %s\n", lean4export.Escape(s))
	}
	return nil
}

func runLeanCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("lean check")
	project := fs.String("project", "lean", "the Lake project directory")
	writeLock := fs.Bool("lock", false, "write PROJECT/statements.lock from this run instead of comparing with it")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	findings, err := leanbridge.Check(*project, *writeLock, stdout, stderr)
	if err != nil {
		return leanErr(err)
	}
	return reportFindings(stdout, findings)
}
