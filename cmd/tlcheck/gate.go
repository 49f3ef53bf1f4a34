package main

import (
	"fmt"
	"io"
	"os/exec"

	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

func runGate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("gate")
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
	if err := fs.parse(args, 0); err != nil {
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
	if c.CUDA, err = gate.NewCUDA(*device, *plantCUDA, newCUDAProvider); err != nil {
		return err
	}
	if err := gate.CheckOutputs(*out, *junit, *reportDir); err != nil {
		return err
	}
	res, err := gate.RunDelivered(c, stdout, *junit, *reportDir, *asJSON)
	if err != nil {
		return err
	}
	if !res.Holds {
		return cli.Failf("gate: %s", cli.Count(res.Failures(), "failure", "failures"))
	}
	return nil
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

// newCUDAProvider creates the CUDA provider; tests replace it with the CPU
// emulation of the kernels (cuda.NewEmulatedProvider).
var newCUDAProvider = cuda.NewProviderWith
