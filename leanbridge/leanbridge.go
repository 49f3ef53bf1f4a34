// Package leanbridge is the Go side of tlcheck's Lean 4 project (lean/):
// it lists the theorems the project declares (Theorems), reads the Lean
// version it pins (PinnedLean), audits a lean4export file against the
// statements lock (AuditFile), and drives the whole check — lake build,
// lake env lean4export, then the audit or a new lock (Check).
//
// Its subpackages hold the two other ideas of the bridge: lean4export
// reads and audits the NDJSON files lean4export writes, trusting nothing
// it reads; emit turns a certificate directory into Lean modules that the
// kernel checks.
//
// # Errors
//
// ErrNoLake says that lake is not on PATH. A *CheckError says that the
// project itself fails the check: lake build failed, the export comes
// from a Lean other than the pinned one, or no lock can be made from it.
// Every other error is about the input: a file missing or malformed, no
// lock to compare with, no theorem to audit.
package leanbridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/leanbridge/lean4export"
	"github.com/tlcheck/tlcheck/limits"
)

// ErrNoLake is Check's error where lake is not on PATH.
var ErrNoLake = errors.New("lean: lake is not on PATH: install elan (https://github.com/leanprover/elan), which provides lake and the toolchain lean/lean-toolchain pins (leanprover/lean4:v4.30.0), and lean4export built for that toolchain")

// A CheckError reports that the project fails the check (as opposed to
// bad input): lake build failed, the export comes from a Lean other than
// the pinned one, or no lock can be made from it.
type CheckError struct{ Err error }

func (e *CheckError) Error() string { return e.Err.Error() }
func (e *CheckError) Unwrap() error { return e.Err }

func checkErrorf(format string, args ...any) error {
	return &CheckError{Err: fmt.Errorf(format, args...)}
}

// AuditFile parses the lean4export file export and audits names (or, if
// names is nil, the lock's theorems, or every theorem in the export)
// against the lock at lockPath ("" for none). A non-empty lean is the
// Lean version the export must come from.
func AuditFile(export, lockPath string, names []string, lean string) ([]lean4export.Finding, error) {
	f, err := safeio.Open(export)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	e, err := lean4export.Parse(f)
	if err != nil {
		return nil, lean4export.EscapeError(fmt.Errorf("%s: %v", export, err))
	}
	if lean != "" && e.Meta.LeanVersion != lean {
		return nil, checkErrorf("%s: exported by Lean %s, the project pins %s: lean4export must be built for the pinned toolchain", export, limits.Quote(e.Meta.LeanVersion), lean)
	}
	var lock *lean4export.Lock
	if lockPath != "" {
		lf, err := safeio.Open(lockPath)
		if err != nil {
			return nil, err
		}
		defer lf.Close()
		if lock, err = lean4export.ReadLock(lockPath, lf); err != nil {
			return nil, err
		}
	}
	if names == nil {
		if lock != nil {
			names = lock.TheoremNames()
		} else {
			names = e.Theorems()
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s: no theorem to audit", export)
	}
	return lean4export.Audit(e, names, lock), nil
}

// Check builds project with lake, exports the theorems its sources
// declare with lake env lean4export, and audits them against
// project/statements.lock; with writeLock it first writes that lock from
// this export (and says so on stdout). Lake's and lean4export's output
// goes to stderr.
func Check(project string, writeLock bool, stdout, stderr io.Writer) ([]lean4export.Finding, error) {
	lake, err := exec.LookPath("lake")
	if err != nil {
		return nil, ErrNoLake
	}
	names, err := Theorems(project)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("lean check: no theorem declared under %s", filepath.Join(project, "Tlcheck"))
	}
	lean, err := PinnedLean(project)
	if err != nil {
		return nil, err
	}
	lockPath := filepath.Join(project, "statements.lock")
	if !writeLock {
		if _, err := os.Stat(lockPath); err != nil {
			return nil, fmt.Errorf("lean check: %s does not exist: write it with tlcheck lean check --project %s --lock on a machine with Lean, and commit it", lockPath, project)
		}
	}
	build := exec.Command(lake, "build")
	build.Dir, build.Stdout, build.Stderr = project, stderr, stderr
	if err := build.Run(); err != nil {
		return nil, checkErrorf("lean check: lake build failed in %s: %v", project, err)
	}
	tmp, err := os.CreateTemp("", "tlcheck-lean4export-*.ndjson")
	if err != nil {
		return nil, err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := export(lake, project, names, tmp, stderr); err != nil {
		return nil, err
	}
	if writeLock {
		n, err := lockFrom(tmp, lockPath, names, lean)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(stdout, "wrote %s (%d theorems)\n", lockPath, n)
	}
	return AuditFile(tmp.Name(), lockPath, names, lean)
}

// export runs lake env lean4export on names in project, writing the
// export to out; a lean4export that panics is not trusted.
func export(lake, project string, names []string, out, stderr io.Writer) error {
	var errBuf bytes.Buffer
	exp := exec.Command(lake, append([]string{"env", "lean4export", "Tlcheck", "--"}, names...)...)
	exp.Dir, exp.Stdout, exp.Stderr = project, out, io.MultiWriter(stderr, &errBuf)
	exp.Env = append(os.Environ(), "LEAN_ABORT_ON_PANIC=1")
	if err := exp.Run(); err != nil {
		return fmt.Errorf("lean check: lake env lean4export failed: %v (is lean4export, built for the pinned toolchain, on lake's PATH?)", err)
	}
	if bytes.Contains(errBuf.Bytes(), []byte("PANIC")) {
		return fmt.Errorf("lean check: lean4export panicked; its export is not trusted")
	}
	return nil
}

// lockFrom writes the lock of names in the export f (which must come
// from Lean lean) to lockPath, and returns how many theorems it locks.
func lockFrom(f io.ReadSeeker, lockPath string, names []string, lean string) (int, error) {
	if _, err := f.Seek(0, 0); err != nil {
		return 0, err
	}
	e, err := lean4export.Parse(f)
	if err != nil {
		return 0, err
	}
	if e.Meta.LeanVersion != lean {
		return 0, checkErrorf("lean check --lock: exported by Lean %s, the project pins %s", limits.Quote(e.Meta.LeanVersion), lean)
	}
	l, err := lean4export.NewLock(e, names)
	if err != nil {
		return 0, checkErrorf("lean check --lock: %v", err)
	}
	if err := os.WriteFile(lockPath, l.Bytes(), 0o644); err != nil {
		return 0, err
	}
	return len(l.Theorems), nil
}
