package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

func runGate(args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("gate")
	if err := addLimits(fs, "gate"); err != nil {
		return cli.BadInput(err)
	}
	out := fs.String("out", "tlcheck-certs", "directory for the certificates")
	junit := fs.String("junit", "", "also write a JUnit XML report to FILE")
	asJSON := fs.Bool("json", false, "print the result as JSON instead of a table")
	seed := fs.Uint64("seed", 0, "generation seed")
	cases := fs.Int("cases", 100, "cases per primitive obligation")
	certs := fs.Int("cert-cases", 20, "cases per certificate")
	graphs := fs.Int("graphs", defaultGraphs, "random graphs per graph-level obligation (as check's --graphs, with the same default)")
	plant := fs.String("plant-fault", "", "self-test: negate the VJP of this primitive; the gate must fail")
	plantProvider := fs.String("plant-provider-bug", "", "self-test: flip a high bit of one fast_cpu OP result; the gate must fail")
	withLean := fs.Bool("lean", false, "add the lean stage: lake build lean/, export and audit its theorems (needs lake on PATH)")
	reportDir := fs.String("report", "", "also write a Markdown summary and a PNG plot of error/bound ratios to DIR")
	device := fs.String("device", "cpu", "cpu|cuda (cuda adds the CUDA refinement stage)")
	plantCUDA := fs.String("plant-cuda-bug", "", "self-test: flip a high bit of one CUDA OP result; the gate must fail")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *cases < 1 || *cases > 1_000_000 {
		return cli.Usagef("--cases must be between 1 and 1000000, got %d", *cases)
	}
	if *certs < 1 {
		return cli.Usagef("--cert-cases must be at least 1, got %d", *certs)
	}
	if max := limits.Current().CertCases; *certs > max {
		return cli.BadInput(fmt.Errorf("--cert-cases: %w", limits.Exceeded("cert-cases", int64(max), "%d cases per certificate", *certs)))
	}
	reg := obligations.DefaultRegistries()
	if *plant != "" {
		if _, err := spec.Info(*plant); err != nil {
			return cli.Usagef("--plant-fault: unknown primitive %q", *plant)
		}
		reg = obligations.PlantFault(*plant)
	}
	if *graphs < 1 || *graphs > 100_000 {
		return cli.Usagef("--graphs must be between 1 and 100000, got %d", *graphs)
	}
	c := gate.Config{Out: *out, Seed: *seed, Cases: *cases, Graphs: *graphs, CertCases: *certs, Check: gateCheck(reg), Stderr: stderr}
	if *withLean {
		if _, err := exec.LookPath("lake"); err != nil {
			return errNoLake()
		}
		c.Lean = gate.Lean
	}
	if *plantProvider != "" {
		ps, err := gate.PlantedProviders(*plantProvider)
		if err != nil {
			return cli.Usagef("--plant-provider-bug: %v", err)
		}
		c.Providers = ps
	}
	var err error
	if c.CUDA, err = gateDevice(*device, *plantCUDA); err != nil {
		return err
	}
	if err := checkGateOutputs(*out, *junit, *reportDir); err != nil {
		return err
	}
	// undelivered: a report that cannot be written is exit 2, and a run
	// that exits 2 leaves none of the outputs it created itself (the
	// certificate directory, the report directory, the JUnit file);
	// what existed before the run stays.
	var fresh []string
	for _, p := range []string{*out, *reportDir, *junit} {
		if _, err := os.Lstat(p); p != "" && errors.Is(err, os.ErrNotExist) {
			fresh = append(fresh, p)
		}
	}
	undelivered := func(err error) error {
		for _, p := range fresh {
			os.RemoveAll(p)
		}
		return err
	}
	res, fault := gate.Run(c)
	if fault != nil {
		return undelivered(cli.BadInput(fault))
	}
	if err := deliverGate(res, stdout, *junit, *reportDir, *asJSON); err != nil {
		return undelivered(err)
	}
	if !res.Holds {
		return cli.Failf("gate: %s", cli.Count(res.Failures(), "failure", "failures"))
	}
	return nil
}

// checkGateOutputs checks the paths the gate will write (--out, --junit,
// --report; "" for none) before anything is written; the certificate
// directory is created by the certify stage.
func checkGateOutputs(out, junit, reportDir string) error {
	if err := cli.CheckOutputPath("out", out, true); err != nil {
		return err
	}
	// The gate owns its certificate directory: it replaces one that holds
	// a manifest, and refuses any other non-empty directory.
	if err := certificates.CheckOutputDir(out, certificates.OverwriteCertificates); err != nil {
		return cli.Usagef("--out: %v", err)
	}
	if junit != "" {
		if err := cli.CheckOutputPath("junit", junit, false); err != nil {
			return err
		}
	}
	if reportDir != "" {
		if err := cli.CheckOutputPath("report", reportDir, true); err != nil {
			return err
		}
	}
	return nil
}

// deliverGate writes the gate's report (to reportDir), its JUnit file
// (to junit; "" for none of either) and its table or JSON to stdout.
func deliverGate(res *gate.Result, stdout io.Writer, junit, reportDir string, asJSON bool) error {
	if reportDir != "" {
		if err := res.WriteReport(reportDir); err != nil {
			return cli.Usagef("--report: %v", err)
		}
	}
	if junit != "" {
		if err := writeJUnit(junit, res); err != nil {
			return cli.Usagef("--junit: %v", err)
		}
	}
	if asJSON {
		return res.WriteJSON(stdout)
	}
	return res.WriteText(stdout)
}

// gateCheck is the gate's check stage's checker: check's, over reg.
func gateCheck(reg obligations.Registries) gate.CheckFunc {
	return func(ops []string, obs []obligations.Obligation, cases, graphs int, seed uint64, p *cli.Progress) ([]gate.CheckRow, error) {
		rows, err := runChecksGraphs(reg, checkRun{Suite: obligations.Suite{Ops: ops, Cases: cases, Graphs: graphs, GraphObs: obs, Seed: seed, Only: -1}}, p)
		out := make([]gate.CheckRow, len(rows))
		for i, r := range rows {
			out[i] = gate.CheckRow(r)
		}
		return out, err
	}
}

// writeJUnit writes the gate's JUnit report to the file path.
func writeJUnit(path string, r *gate.Result) error {
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// newCUDAProvider creates the CUDA provider; tests replace it with the CPU
// emulation of the kernels (cuda.NewEmulatedProvider).
var newCUDAProvider = cuda.NewProviderWith

// gateDevice resolves --device and --plant-cuda-bug before anything runs
// or is written. For cpu it returns nil. For cuda it creates the providers
// of the gate's CUDA stage or fails with one line saying what is missing
// and how to fix it.
func gateDevice(device, plant string) (*gate.CUDA, error) {
	switch device {
	case "cpu":
		if plant != "" {
			return nil, cli.Usagef("--plant-cuda-bug needs --device cuda")
		}
		return nil, nil
	case "cuda":
	default:
		return nil, cli.Usagef("--device: unknown value %q (want cpu|cuda)", device)
	}
	if plant != "" && !slices.Contains(refine.Ops(), plant) {
		return nil, cli.Usagef("--plant-cuda-bug: %q is not a CUDA op checked by refinement (%s)", plant, strings.Join(refine.Ops(), ","))
	}
	tree, err := newCUDAProvider(cuda.Options{})
	if err != nil {
		return nil, cli.Usagef("--device cuda: %v", err)
	}
	atomic, err := newCUDAProvider(cuda.Options{AtomicSum: true})
	if err != nil {
		return nil, cli.Usagef("--device cuda: %v", err)
	}
	g := &gate.CUDA{Tree: tree, Atomic: atomic}
	if plant != "" {
		if err := g.Plant(plant); err != nil {
			return nil, cli.Usagef("--plant-cuda-bug: %v", err)
		}
	}
	return g, nil
}
