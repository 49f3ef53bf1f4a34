package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/certificates/leanemit"
	"github.com/tlcheck/tlcheck/certificates/leanexport"
	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/limits"
)

// leanSubcommands are the subcommands of `tlcheck lean`.
var leanSubcommands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"audit": runLeanAudit,
	"check": runLeanCheck,
	"emit":  runLeanEmit,
}

// runLean dispatches `tlcheck lean audit|check|emit`.
func runLean(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "-help" || args[0] == "--help" {
		fs := cli.NewFlags("lean")
		if len(args) == 0 {
			return cli.Usagef("lean: missing subcommand (audit, check or emit; run 'tlcheck lean audit --help')")
		}
		return &cli.HelpError{Flags: fs}
	}
	sub, ok := leanSubcommands[args[0]]
	if !ok {
		return cli.Usagef("lean: unknown subcommand %s (audit, check or emit)", cli.Quoted(args[0]))
	}
	err := sub(args[1:], stdout, stderr)
	var h *cli.HelpError
	if errors.As(err, &h) {
		return cli.WriteUsage(stdout, "tlcheck lean "+args[0]+" [flags]", leanSummaries[args[0]], h.Flags)
	}
	return err
}

// leanSummaries are the subcommands' one-line summaries.
var leanSummaries = map[string]string{
	"audit": "audit a lean4export NDJSON file: theorem × axioms × statement hash × verdict (exit 1 when a theorem is rejected)",
	"check": "lake build the Lean project, export its theorems with lean4export and audit them against the lock (--lock writes it)",
	"emit":  "turn a certificate directory into Lean modules checked by decide +kernel",
}

// errNoLake is the one line `lean check` and `gate --lean` print where
// Lean is absent.
func errNoLake() error {
	return cli.BadInput(fmt.Errorf("lean: lake is not on PATH: install elan (https://github.com/leanprover/elan), which provides lake and the toolchain lean/lean-toolchain pins (leanprover/lean4:v4.30.0), and lean4export built for that toolchain"))
}

func runLeanAudit(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("lean audit")
	if err := addLimits(fs, "lean"); err != nil {
		return cli.BadInput(err)
	}
	export := fs.String("export", "", "the lean4export NDJSON file to audit (required)")
	lock := fs.String("lock", "", "compare statement hashes with this lock file (lean/statements.lock)")
	theorems := fs.String("theorems", "", "comma-separated theorems to audit (default: the lock's, else every theorem in the export)")
	if err := cli.Parse(fs, args, 0); err != nil {
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
	findings, err := auditFile(*export, *lock, names, "")
	if err != nil {
		return err
	}
	return reportFindings(stdout, findings)
}

// auditFile parses an export and audits names (or the lock's theorems, or
// every theorem) against lockPath ("" for none); a non-empty lean is the
// Lean version the export must come from.
func auditFile(export, lockPath string, names []string, lean string) ([]leanexport.Finding, error) {
	f, err := safeio.Open(export)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	defer f.Close()
	e, err := leanexport.Parse(f)
	if err != nil {
		return nil, cli.BadInput(escapedErr(fmt.Errorf("%s: %v", export, err)))
	}
	if lean != "" && e.Meta.LeanVersion != lean {
		return nil, cli.Failf("%s: exported by Lean %s, the project pins %s: lean4export must be built for the pinned toolchain", export, limits.Quote(e.Meta.LeanVersion), lean)
	}
	var lock *leanexport.Lock
	if lockPath != "" {
		lf, err := safeio.Open(lockPath)
		if err != nil {
			return nil, cli.BadInput(err)
		}
		defer lf.Close()
		if lock, err = leanexport.ReadLock(lockPath, lf); err != nil {
			return nil, cli.BadInput(err)
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
		return nil, cli.BadInput(fmt.Errorf("%s: no theorem to audit", export))
	}
	return leanexport.Audit(e, names, lock), nil
}

// reportFindings prints the table theorem × axioms × statement hash ×
// verdict, then every problem; exit 1 if a theorem is rejected. Every
// string that came from the export, the lock or the command line goes
// through leanexport.Escape (a Finding's Problems already have), so that a
// name holding a newline, ESC, NUL or a bidi override can neither forge a
// row nor drive the terminal.
func reportFindings(w io.Writer, fs []leanexport.Finding) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "theorem\taxioms\tstatement hash\tverdict")
	bad := 0
	for _, f := range fs {
		ax := escapeAll(f.Axioms, ",")
		if ax == "" {
			ax = "none"
		}
		h := f.Hash
		if len(h) > 16 {
			h = h[:16]
		}
		if h == "" {
			h = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", limits.Short(leanexport.Escape(f.Theorem)), limits.Short(ax), h, f.Verdict)
		if f.Verdict != leanexport.Accepted {
			bad++
		}
	}
	tw.Flush()
	for _, f := range fs {
		for _, p := range f.Problems {
			fmt.Fprintf(w, "%s: %s\n", limits.Short(leanexport.Escape(f.Theorem)), limits.Line(p))
		}
	}
	if bad > 0 {
		first := firstRejected(fs)
		return cli.Failf("lean audit: %d of %d theorems rejected; first: %s: %s", bad, len(fs), limits.Short(leanexport.Escape(first.Theorem)), limits.Line(first.Problems[0]))
	}
	return nil
}

// escapedErr is err with its message passed through leanexport.Escape
// unless it is already printable:
// a message that quotes a name or path from the input (an export's
// declaration, a certificate manifest's path) keeps no control character.
func escapedErr(err error) error {
	if leanexport.Printable(err.Error()) {
		return err // already safe (the leanexport messages escape their names)
	}
	return errors.New(leanexport.Escape(err.Error()))
}

// escapeAll escapes each string and joins them with sep.
func escapeAll(xs []string, sep string) string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = leanexport.Escape(x)
	}
	return strings.Join(out, sep)
}

func firstRejected(fs []leanexport.Finding) leanexport.Finding {
	for _, f := range fs {
		if f.Verdict != leanexport.Accepted {
			return f
		}
	}
	return leanexport.Finding{}
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
	r, err := leanemit.Emit(*certs)
	if err != nil {
		return cli.BadInput(escapedErr(err))
	}
	if err := leanemit.Write(*out, r); err != nil {
		return cli.BadInput(escapedErr(err))
	}
	fmt.Fprintf(stdout, "wrote %d Lean modules to %s (%d theorems); not emitted: %d files\n", len(r.Modules), leanexport.Escape(*out), len(r.Theorems), len(r.Skipped))
	for _, s := range r.Skipped {
		fmt.Fprintf(stdout, "  skipped %s\n", leanexport.Escape(s))
	}
	return nil
}

func runLeanCheck(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("lean check")
	if err := addLimits(fs, "lean"); err != nil {
		return cli.BadInput(err)
	}
	project := fs.String("project", "lean", "the Lake project directory")
	writeLock := fs.Bool("lock", false, "write PROJECT/statements.lock from this run instead of comparing with it")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	findings, err := leanCheck(*project, *writeLock, stdout, stderr)
	if err != nil {
		return err
	}
	return reportFindings(stdout, findings)
}

// leanCheck builds the project with lake, exports its theorems with
// lean4export and audits them against the lock (or writes the lock).
func leanCheck(project string, writeLock bool, stdout, stderr io.Writer) ([]leanexport.Finding, error) {
	lake, err := exec.LookPath("lake")
	if err != nil {
		return nil, errNoLake()
	}
	names, err := LeanTheorems(project)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	if len(names) == 0 {
		return nil, cli.BadInput(fmt.Errorf("lean check: no theorem declared under %s", filepath.Join(project, "Tlcheck")))
	}
	lean, err := pinnedLean(project)
	if err != nil {
		return nil, cli.BadInput(err)
	}
	lockPath := filepath.Join(project, "statements.lock")
	if !writeLock {
		if _, err := os.Stat(lockPath); err != nil {
			return nil, cli.BadInput(fmt.Errorf("lean check: %s does not exist: write it with tlcheck lean check --project %s --lock on a machine with Lean, and commit it", lockPath, project))
		}
	}
	build := exec.Command(lake, "build")
	build.Dir, build.Stdout, build.Stderr = project, stderr, stderr
	if err := build.Run(); err != nil {
		return nil, cli.Failf("lean check: lake build failed in %s: %v", project, err)
	}
	tmp, err := os.CreateTemp("", "tlcheck-lean4export-*.ndjson")
	if err != nil {
		return nil, cli.BadInput(err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	var errBuf bytes.Buffer
	exp := exec.Command(lake, append([]string{"env", "lean4export", "Tlcheck", "--"}, names...)...)
	exp.Dir, exp.Stdout, exp.Stderr = project, tmp, io.MultiWriter(stderr, &errBuf)
	exp.Env = append(os.Environ(), "LEAN_ABORT_ON_PANIC=1")
	if err := exp.Run(); err != nil {
		return nil, cli.BadInput(fmt.Errorf("lean check: lake env lean4export failed: %v (is lean4export, built for the pinned toolchain, on lake's PATH?)", err))
	}
	if bytes.Contains(errBuf.Bytes(), []byte("PANIC")) {
		return nil, cli.BadInput(fmt.Errorf("lean check: lean4export panicked; its export is not trusted"))
	}
	if writeLock {
		if _, err := tmp.Seek(0, 0); err != nil {
			return nil, cli.BadInput(err)
		}
		e, err := leanexport.Parse(tmp)
		if err != nil {
			return nil, cli.BadInput(err)
		}
		if e.Meta.LeanVersion != lean {
			return nil, cli.Failf("lean check --lock: exported by Lean %s, the project pins %s", limits.Quote(e.Meta.LeanVersion), lean)
		}
		l, err := leanexport.NewLock(e, names)
		if err != nil {
			return nil, cli.Failf("lean check --lock: %v", err)
		}
		if err := os.WriteFile(lockPath, l.Bytes(), 0o644); err != nil {
			return nil, cli.BadInput(err)
		}
		fmt.Fprintf(stdout, "wrote %s (%d theorems)\n", lockPath, len(l.Theorems))
	}
	return auditFile(tmp.Name(), lockPath, names, lean)
}

var toolchainRE = regexp.MustCompile(`^leanprover/lean4:v([0-9]+\.[0-9]+\.[0-9]+(?:-rc[0-9]+)?)\n?$`)

// pinnedLean reads PROJECT/lean-toolchain ("leanprover/lean4:v4.30.0") and
// returns the Lean version it pins ("4.30.0").
func pinnedLean(project string) (string, error) {
	data, err := os.ReadFile(filepath.Join(project, "lean-toolchain"))
	if err != nil {
		return "", fmt.Errorf("lean check: %v", err)
	}
	m := toolchainRE.FindSubmatch(data)
	if m == nil {
		return "", fmt.Errorf("lean check: %s: not a leanprover/lean4:vX.Y.Z pin", filepath.Join(project, "lean-toolchain"))
	}
	return string(m[1]), nil
}

var (
	leanNamespaceRE = regexp.MustCompile(`^namespace\s+([A-Za-z_][A-Za-z0-9_.]*)\s*$`)
	leanEndRE       = regexp.MustCompile(`^end\s+([A-Za-z_][A-Za-z0-9_.]*)\s*$`)
	leanTheoremRE   = regexp.MustCompile(`^theorem\s+([A-Za-z_][A-Za-z0-9_'.]*)`)
)

// LeanTheorems lists the fully qualified theorems declared in the .lean
// files under project/Tlcheck (a line-level scan: top-level
// `namespace X` / `end X` and `theorem NAME` at the start of a line),
// sorted.
func LeanTheorems(project string) ([]string, error) {
	var out []string
	root := filepath.Join(project, "Tlcheck")
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".lean") {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		var ns []string
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Text()
			if m := leanNamespaceRE.FindStringSubmatch(line); m != nil {
				ns = append(ns, m[1])
			} else if m := leanEndRE.FindStringSubmatch(line); m != nil && len(ns) > 0 && ns[len(ns)-1] == m[1] {
				ns = ns[:len(ns)-1]
			} else if m := leanTheoremRE.FindStringSubmatch(line); m != nil {
				out = append(out, strings.Join(append(append([]string{}, ns...), m[1]), "."))
			}
		}
		return sc.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("lean sources: %v", err)
	}
	sort.Strings(out)
	return out, nil
}

// stageLean is the gate's lean stage (gate --lean): lean check against
// lean/statements.lock, one item per theorem.
func stageLean(c gate.Config) gate.Stage {
	st := gate.Stage{Name: "lean"}
	fs, err := leanCheck("lean", false, io.Discard, c.Stderr)
	if err != nil {
		st.Err = err.Error()
		return st
	}
	for _, f := range fs {
		it := gate.Item{GateItem: jsonout.GateItem{Name: leanexport.Escape(f.Theorem), Holds: f.Verdict == leanexport.Accepted}, Detail: "axioms " + escapeAll(f.Axioms, ",") + " statement " + f.Hash}
		if !it.Holds {
			it.Failure = strings.Join(f.Problems, "; ")
		}
		st.Items = append(st.Items, it)
	}
	return st
}
