package gate

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/refine"
)

// CheckOutputs checks the paths the gate will write (--out, --junit,
// --report; "" for none) before anything is written; the certificate
// directory is created by the certify stage.
func CheckOutputs(out, junit, reportDir string) error {
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

// Deliver writes the gate's report (to reportDir), its JUnit file
// (to junit; "" for none of either) and its table or JSON to stdout.
func (res *Result) Deliver(stdout io.Writer, junit, reportDir string, asJSON bool) error {
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

// writeJUnit writes the gate's JUnit report to the file path.
func writeJUnit(path string, r *Result) error {
	var b bytes.Buffer
	if err := r.WriteJUnit(&b); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// NewCUDA resolves the gate's --device and --plant-cuda-bug before
// anything runs or is written. For cpu it returns nil. For cuda it creates
// the providers of the gate's CUDA stage with newProvider (the CUDA
// provider, or in tests its CPU emulation) or fails with one line saying
// what is missing and how to fix it.
func NewCUDA(device, plant string, newProvider func(cuda.Options) (backend.Provider, error)) (*CUDA, error) {
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
	tree, err := newProvider(cuda.Options{})
	if err != nil {
		return nil, cli.Usagef("--device cuda: %v", err)
	}
	atomic, err := newProvider(cuda.Options{AtomicSum: true})
	if err != nil {
		return nil, cli.Usagef("--device cuda: %v", err)
	}
	g := &CUDA{Tree: tree, Atomic: atomic}
	if plant != "" {
		if err := g.Plant(plant); err != nil {
			return nil, cli.Usagef("--plant-cuda-bug: %v", err)
		}
	}
	return g, nil
}

// RunDelivered runs the gate (Run) and delivers its result to stdout,
// junit and reportDir (Deliver); a device fault is bad input. Either, or
// a report that cannot be written, leaves none of the outputs the run
// created itself (c.Out, reportDir, junit): what existed before it stays.
func RunDelivered(c Config, stdout io.Writer, junit, reportDir string, asJSON bool) (*Result, error) {
	var fresh []string
	for _, p := range []string{c.Out, reportDir, junit} {
		if _, err := os.Lstat(p); p != "" && errors.Is(err, os.ErrNotExist) {
			fresh = append(fresh, p)
		}
	}
	res, err := Run(c)
	if err != nil {
		err = cli.BadInput(err)
	} else {
		err = res.Deliver(stdout, junit, reportDir, asJSON)
	}
	if err != nil {
		for _, p := range fresh {
			os.RemoveAll(p)
		}
		return nil, err
	}
	return res, nil
}
