package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/limits"
)

// parseProviders validates --providers.
func parseProviders(v string) ([]string, error) {
	known := certificates.Providers()
	if v == "" || v == "all" {
		return nil, nil
	}
	var out []string
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		ok := false
		for _, k := range known {
			ok = ok || k == p
		}
		if !ok {
			return nil, cli.Usagef("--providers: unknown provider %q (known: %s)", p, strings.Join(known, ","))
		}
		out = append(out, p)
	}
	return out, nil
}

func runCertify(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("certify")
	if err := limits.AddFlags(fs); err != nil {
		return cli.BadInput(err)
	}
	out := fs.String("out", "", "directory to write the certificates into (required)")
	seed := fs.Uint64("seed", 0, "generation seed")
	cases := fs.Int("cases", 20, "cases per certificate")
	opsFlag := fs.String("ops", "all", "all, or a comma-separated list of primitives")
	provFlag := fs.String("providers", "all", "all, or a comma-separated list of providers")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *out == "" {
		return cli.Usagef("certify: --out DIR is required")
	}
	if *cases < 1 {
		return cli.Usagef("--cases must be at least 1, got %d", *cases)
	}
	if max := limits.Current().CertCases; *cases > max {
		return cli.BadInput(fmt.Errorf("--cases: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", *cases)))
	}
	ops, err := parseOps(*opsFlag)
	if err != nil {
		return err
	}
	provs, err := parseProviders(*provFlag)
	if err != nil {
		return err
	}
	m, err := certifyDir(*out, certificates.Options{Seed: *seed, Cases: *cases, Ops: ops, Providers: provs}, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d certificate files and %s to %s (seed %d, %d cases each)\n", len(m.Files), certificates.ManifestName, *out, *seed, *cases)
	return nil
}

// certifyDir writes the full certificate suite with a progress bar on a
// terminal.
func certifyDir(dir string, o certificates.Options, stderr io.Writer) (*certificates.Manifest, error) {
	suite := certificates.FullSuite()
	prog := cli.NewProgress(stderr, "certify", suite.Subjects(o))
	o.Progress = prog.Step
	m, err := suite.Certify(dir, o)
	prog.Done()
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, cli.Usagef("certify: %v", err)
		}
		return nil, cli.Failf("certify: %v", err)
	}
	return m, nil
}

// verifyDir verifies a directory and prints one line per file.
func verifyDir(dir string, w io.Writer) (*certificates.Report, error) {
	rep, err := certificates.FullSuite().Verify(dir)
	if err != nil {
		return nil, cli.Usagef("verify: %v", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, f := range rep.Files {
		status := "ok"
		detail := strconv.Itoa(f.Cases) + " cases"
		if f.Err != nil {
			status, detail = "FAIL", f.Err.Error()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", status, f.Kind, f.Path, detail)
	}
	tw.Flush()
	return rep, nil
}

func runVerify(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("verify")
	if err := limits.AddFlags(fs); err != nil {
		return cli.BadInput(err)
	}
	if err := cli.Parse(fs, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("verify: usage: tlcheck verify DIR")
	}
	rep, err := verifyDir(fs.Arg(0), stdout)
	if err != nil {
		return err
	}
	if f := rep.Failures(); len(f) > 0 {
		return cli.Failf("verify: %d of %d certificate files fail; first: %v", len(f), len(rep.Files), f[0].Err)
	}
	total := 0
	for _, n := range rep.Cases() {
		total += n
	}
	fmt.Fprintf(stdout, "verified %d files, %d cases: every claim re-derived\n", len(rep.Files), total)
	return nil
}
