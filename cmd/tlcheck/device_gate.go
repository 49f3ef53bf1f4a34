package main

import (
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/gate"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/refine"
)

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
