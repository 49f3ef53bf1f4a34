package main

import (
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

func runQuickstart(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("quickstart-mlp")
	steps := fs.Int("steps", 200, "training steps (0 to 10000000)")
	seed := fs.Uint64("seed", 0, "initialisation seed (unsigned 64-bit)")
	execution := fs.String("execution", "eager", "eager|typed-graph")
	arithmetic := fs.String("arithmetic", "native", "native (hardware float32) | ieee (bit-level Binary32 soft-float)")
	device := fs.String("device", "cpu", "cpu|cuda")
	show := fs.Bool("show-backend", false, "print a banner per eager session and each capsule's report lines the first time it is selected")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	n, s := *steps, *seed
	if n < 0 || n > 10_000_000 {
		return cli.Usagef("--steps must be between 0 and 10000000, got %d", n)
	}
	exec, err := nn.ParseExecution(*execution)
	if err != nil {
		return cli.Usagef("--execution: %v", err)
	}
	if err := oneOf("arithmetic", *arithmetic, "native", "ieee"); err != nil {
		return err
	}
	// Configuration-time device checks: an unknown device, a device whose
	// provider is not built, or a device the execution does not support
	// fail before anything runs.
	if _, err := backend.ProfileFor(*device); err != nil {
		return cli.Usagef("--device: %v", err)
	}
	providers := backend.DefaultProviders()
	if *device == string(backend.DeviceCUDA) {
		if exec == nn.TypedGraph {
			return cli.Usagef("--device cuda: the typed-graph trainer supports CPU execution only")
		}
		p, err := newCUDAProvider(cuda.Options{})
		if err != nil {
			return cli.Usagef("--device cuda: %v", err)
		}
		if err := providers.Register(p); err != nil {
			return cli.Usagef("--device cuda: %v", err)
		}
	}
	var report *backend.Report
	if *show {
		report = backend.NewReport(stdout)
	}
	newSelector := func() (func(string) error, error) {
		sess, err := backend.NewDeviceSession(*device, providers, report)
		if err != nil {
			return nil, err
		}
		return sess.Select, nil
	}
	opts := nn.QuickstartOptions{Steps: n, Seed: s, Execution: exec, Arithmetic: "native", Scalar: "Float32", NewSelector: newSelector}
	if *arithmetic == "ieee" {
		opts.Arithmetic, opts.Scalar = "ieee", "Binary32"
		err = nn.Quickstart[spec.Binary32](stdout, opts)
	} else {
		err = nn.Quickstart[spec.F32](stdout, opts)
	}
	if err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}
	return nil
}
