package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/obligations"
)

func runCertify(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("certify")
	out := fs.String("out", "", "directory to write the certificates into (required)")
	seed := fs.Uint64("seed", 0, "generation seed")
	cases := fs.Int("cases", 20, "cases per certificate")
	opsFlag := fs.String("ops", "all", "all, or a comma-separated list of primitives")
	provFlag := fs.String("providers", "all", "all, or a comma-separated list of providers")
	asJSON := fs.Bool("json", false, "print a tlcheck.certify.v1 JSON document listing the files written")
	force := fs.Bool("force", false, "empty a non-empty --out directory first (without it, certify refuses one)")
	partial := fs.Bool("partial", false, "with a model: write the certificates that apply when one does not (a model without range rules has no model_range certificate) and list the rest as \"not certified\"; without it such a model is refused, exit 1, nothing written (a model not exact over the rationals gets model_interval in place of model_composition, and needs no --partial)")
	mf := addModelFlags(fs.FlagSet, "certify", "with --input: certify this torchlean.ir.v1 or tlcheck.ir.v1 graph (a user's model) instead of the built-in subjects", true)
	shardFlag := fs.String("shard", "", certificates.ShardFlagUsage)
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	shard, err := certificates.SelectShard(*shardFlag, os.Getenv)
	if err != nil {
		return err
	}
	if *out == "" {
		return cli.Usagef("certify: --out DIR is required")
	}
	if mf.Graph != "" || mf.ONNX != "" {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		for _, name := range []string{"ops", "providers"} {
			if set[name] {
				return cli.Usagef("certify: --%s selects the built-in subjects; a model's directory certifies the primitives the model applies", name)
			}
		}
		if shard.Sharded() {
			return cli.Usagef("certify: --shard %s (or the shard variables) partitions the built-in suite; a model's certificates are written whole", shard)
		}
		return certifyModel(mf, modelCertOpts{out: *out, seed: *seed, cases: *cases, force: *force, json: *asJSON, partial: *partial}, stdout, stderr)
	}
	if *partial {
		return cli.Usagef("certify: --partial goes with a model (--graph or --onnx): the built-in suite is always whole")
	}
	if err := certificates.CheckCases(*cases); err != nil {
		return err
	}
	ops, err := obligations.ParseOps(*opsFlag)
	if err != nil {
		return err
	}
	if ops == nil {
		// certificates.Options reads nil as every primitive.
		return cli.Usagef("--ops none: certify needs at least one primitive (all, or a comma-separated list)")
	}
	provs, err := certificates.ParseProviders(*provFlag)
	if err != nil {
		return err
	}
	o := certificates.Options{Seed: *seed, Cases: *cases, Ops: ops, Providers: provs, Shard: shard}
	if *force {
		o.Overwrite = certificates.OverwriteForce
	}
	if err := certificates.CheckOutputDir(*out, o.Overwrite); err != nil {
		return cli.Usagef("--out: %v", err)
	}
	// Bazel's protocol: the status file says the tool shards, whether or
	// not this shard then passes.
	if err := certificates.TouchShardStatus(shard, os.Getenv); err != nil {
		return err
	}
	m, err := certifyDir(*out, o, stderr)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeCertifyJSON(stdout, *out, m, nil)
	}
	if shard.Sharded() {
		_, err = fmt.Fprintf(stdout, "wrote shard %s: %s and %s to %s (seed %d, %s each)\n", shard, cli.Count(len(m.Files), "certificate file", "certificate files"), certificates.ManifestName, *out, *seed, cli.Count(*cases, "case", "cases"))
		return err
	}
	_, err = fmt.Fprintf(stdout, "wrote %s and %s to %s (seed %d, %s each)\n", cli.Count(len(m.Files), "certificate file", "certificate files"), certificates.ManifestName, *out, *seed, cli.Count(*cases, "case", "cases"))
	return err
}

// writeCertifyJSON prints the files certify wrote, as the manifest lists
// them, and the SHA-256 of the manifest as written (read back); inputs,
// for a model, are the files it was made from (the header's inputs).
func writeCertifyJSON(w io.Writer, dir string, m *certificates.Manifest, inputs []jsonout.Input) error {
	data, err := os.ReadFile(filepath.Join(dir, certificates.ManifestName))
	if err != nil {
		return cli.Failf("certify: reading back %s: %v", certificates.ManifestName, err)
	}
	return jsonout.Write(w, m.CertifyDoc(dir, data, inputs))
}

// certifyDir writes the full certificate suite with a progress bar on a
// terminal.
func certifyDir(dir string, o certificates.Options, stderr io.Writer) (*certificates.Manifest, error) {
	return certifyDirWith(certificates.FullSuite(), dir, o, stderr)
}

// certifyDirWith is certifyDir with the suite given (gate --device cuda
// certifies through a provider set that holds the CUDA provider).
func certifyDirWith(suite *certificates.Suite, dir string, o certificates.Options, stderr io.Writer) (*certificates.Manifest, error) {
	prog := cli.NewProgress(stderr, "certify", suite.Subjects(o))
	o.Progress = prog.Step
	m, err := suite.Certify(dir, o)
	prog.Done()
	if err != nil {
		return nil, certificates.CertifyErr(err)
	}
	return m, nil
}

// verifyDir verifies a directory and prints one line per file.
func verifyDir(dir string, w io.Writer) (*verify.Report, error) {
	return verifyDirWith(certificates.FullSuite(), dir, w)
}

// verifyDirWith is verifyDir with the suite given.
func verifyDirWith(suite *certificates.Suite, dir string, w io.Writer) (*verify.Report, error) {
	rep, err := verify.Dir(suite, dir)
	return printVerify(rep, err, w)
}

// printVerify prints a verification report as a table, one line per file.
func printVerify(rep *verify.Report, err error, w io.Writer) (*verify.Report, error) {
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
	fs := newFlags("verify")
	asJSON := fs.Bool("json", false, "print a tlcheck.verify.v1 JSON document instead of the table")
	shardFlag := fs.String("shard", "", "I/N: verify a shard directory written by certify --shard I/N (its part of the complete set)")
	mf := addModelFlags(fs.FlagSet, "verify", "with --input: the torchlean.ir.v1 or tlcheck.ir.v1 graph a model directory must be about (its SHA-256 and the graph it holds are compared)", true)
	if err := fs.parse(args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return cli.Usagef("verify: usage: tlcheck verify [--json] [--shard I/N] [--onnx MODEL | --graph G [--payload P]] [--input X …] DIR")
	}
	table := stdout
	if *asJSON {
		table = io.Discard
	}
	// A model named on the command line is read (and refused, exit 2)
	// before the directory is verified.
	var model *model.Model
	if mf.Graph != "" || mf.ONNX != "" || mf.Payload != "" || len(mf.Inputs) > 0 || mf.Data != "" {
		if *shardFlag != "" {
			return cli.Usagef("verify: --shard verifies a part of the built-in suite; a model's directory is never sharded")
		}
		var err error
		if model, err = mf.Load(); err != nil {
			return err
		}
	}
	var rep *verify.Report
	var err error
	if *shardFlag != "" {
		sh, perr := certificates.ParseShard("--shard", *shardFlag)
		if perr != nil {
			return perr
		}
		r, verr := verify.Shard(certificates.FullSuite(), fs.Arg(0), sh)
		rep, err = printVerify(r, verr, table)
	} else {
		rep, err = verifyDir(fs.Arg(0), table)
	}
	if err != nil {
		return err
	}
	if model != nil {
		// Tied only to a directory that verifies (a failing one fails
		// on its own account below).
		if len(rep.Failures()) == 0 {
			if err := verifyModelGiven(model, fs.Arg(0), rep.Manifest, table); err != nil {
				return err
			}
		}
	} else if *shardFlag == "" {
		printSources(table, rep.Manifest)
	}
	if *asJSON {
		var given []jsonout.Input
		if model != nil {
			given = model.Files
		}
		if err := jsonout.Write(stdout, rep.VerifyDoc(fs.Arg(0), given)); err != nil {
			return err
		}
		return rep.Verdict()
	}
	if err := rep.Verdict(); err != nil {
		return err
	}
	total := 0
	for _, n := range rep.Cases() {
		total += n
	}
	fmt.Fprintf(stdout, "verified %s, %s: every claim re-derived\n", cli.Count(len(rep.Files), "file", "files"), cli.Count(total, "case", "cases"))
	return nil
}

// modelCertOpts are certify's flags for a user's model.
type modelCertOpts struct {
	out                  string
	seed                 uint64
	cases                int
	force, json, partial bool
}

// certifyModel writes a user's model's certificate directory
// (certificates.CertifyModel) and prints its notes, the certificates not
// written (beside --json, on stderr) and what it wrote.
func certifyModel(mf *model.Spec, mo modelCertOpts, stdout, stderr io.Writer) error {
	out, seed, cases := mo.out, mo.seed, mo.cases
	if err := certificates.CheckCases(cases); err != nil {
		return err
	}
	o := certificates.Options{Seed: seed, Cases: cases, Providers: []string{}}
	if mo.force {
		o.Overwrite = certificates.OverwriteForce
	}
	if err := certificates.CheckOutputDir(out, o.Overwrite); err != nil {
		return cli.Usagef("--out: %v", err)
	}
	files, err := mf.Load()
	if err != nil {
		return err
	}
	man, notes, skipped, err := certificates.CertifyModel(files, out, o, mo.partial, stderr)
	if err != nil {
		return err
	}
	w := stdout
	if mo.json {
		w = stderr
	}
	for _, s := range notes {
		fmt.Fprintf(w, "certified: %s\n", s)
	}
	for _, s := range skipped {
		fmt.Fprintf(w, "not certified: %s\n", s)
	}
	if mo.json {
		return writeCertifyJSON(stdout, out, man, files.Files)
	}
	printSources(stdout, man)
	_, err = fmt.Fprintf(stdout, "wrote %s and %s to %s for the model %s (seed %d, %s each)\n", cli.Count(len(man.Files), "certificate file", "certificate files"),
		certificates.ManifestName, out, files.GraphPath, seed, cli.Count(cases, "case", "cases"))
	return err
}
