package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/refine"
)

// newCUDAProvider creates the CUDA provider; tests replace it with the CPU
// emulation of the kernels (cuda.NewEmulatedProvider).
var newCUDAProvider = cuda.NewProviderWith

// cudaGate is the gate's CUDA refinement stage (gate --device cuda): the
// checked_cuda capsules of refine.Ops() bound to the CUDA provider (and,
// for sum, to the atomic variant too), each checked against the exact
// semantics within refine's order-independent γ bound.
type cudaGate struct {
	tree, atomic backend.Provider
	// fault is a device error met while running (a failed launch, an
	// out-of-memory): not a refinement verdict, so the gate exits 2 and
	// leaves no certificates behind.
	fault error
}

// gateDevice resolves --device and --plant-cuda-bug before anything runs
// or is written. For cpu it returns nil. For cuda it creates the providers
// or fails with one line saying what is missing and how to fix it.
func gateDevice(device, plant string) (*cudaGate, error) {
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
	if plant != "" && !contains(refine.Ops(), plant) {
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
	g := &cudaGate{tree: tree, atomic: atomic}
	if plant != "" {
		// One significand bit (2^20 ulps) of element 0: far beyond the
		// bound, so the stage must fail and the gate exit 1.
		if g.tree, err = refine.NewFlipBit(tree, plant, 0, 20); err != nil {
			return nil, cli.Usagef("--plant-cuda-bug: %v", err)
		}
		if g.atomic, err = refine.NewFlipBit(atomic, plant, 0, 20); err != nil {
			return nil, cli.Usagef("--plant-cuda-bug: %v", err)
		}
	}
	return g, nil
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// certificates returns the suite and providers the certify and verify
// stages use: with the CUDA provider, native-cuda refinement certificates
// join the default ones (certificates.OptionalProviders); for cpu, nil.
func (g *cudaGate) certificates() (*certificates.Suite, []string) {
	if g == nil {
		return nil, nil
	}
	ps := backend.FastProviders()
	if err := ps.Register(g.tree); err != nil {
		// Cannot happen: a fresh set without a native-cuda provider.
		return nil, nil
	}
	return certificates.FullSuiteWith(ps), append(certificates.Providers(), backend.ProviderNativeCUDA)
}

// suiteOrFull is the gate's certificate suite.
func (c gateConfig) suiteOrFull() *certificates.Suite {
	if c.suite != nil {
		return c.suite
	}
	return certificates.FullSuite()
}

// stages inserts the CUDA stage after the CPU refinement stage.
func (g *cudaGate) stages(base []func(gateConfig) gateStage) []func(gateConfig) gateStage {
	if g == nil {
		return base
	}
	var out []func(gateConfig) gateStage
	for i, s := range base {
		out = append(out, s)
		if i == 1 { // after check and refine
			out = append(out, g.stage)
		}
	}
	return out
}

// stage runs the CUDA refinement checks sequentially (the provider
// serialises on its worker goroutine anyway).
func (g *cudaGate) stage(c gateConfig) gateStage {
	st := gateStage{Name: "refine-cuda", timed: true}
	type pair struct {
		label string
		p     backend.Provider
		op    string
	}
	var pairs []pair
	for _, op := range refine.Ops() {
		pairs = append(pairs, pair{backend.ProviderNativeCUDA, g.tree, op})
		if op == "sum" {
			pairs = append(pairs, pair{backend.ProviderNativeCUDA + "(atomic)", g.atomic, op})
		}
	}
	prog := cli.NewProgress(c.stderr, "gate: refine-cuda", len(pairs))
	defer prog.Done()
	cat := backend.CUDACatalog()
	for _, pr := range pairs {
		start := time.Now()
		name := backend.ProviderNativeCUDA + "." + pr.op
		item := gateItem{GateItem: jsonout.GateItem{Name: pr.label + "." + pr.op}}
		capsule, ok := cat.Lookup(name)
		ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), pr.p)
		var b *backend.Binding
		switch {
		case !ok:
			err = fmt.Errorf("no capsule %s", name)
		case err == nil:
			b, err = ps.Bind(capsule)
		}
		var res *refine.Result
		if err == nil {
			res, err = refine.Check(b, pr.op, c.certs, c.seed)
		}
		var f *refine.Failure
		if err == nil && errors.As(res.Failure, &f) && f.Element < 0 {
			// The provider returned an error (a failed launch, out of
			// memory): an execution failure, not a refinement verdict.
			err = res.Failure
		}
		if err != nil {
			// A binding or device error is not a verdict.
			if g.fault == nil {
				g.fault = fmt.Errorf("refine-cuda %s: %w", item.Name, err)
			}
			item.Failure = err.Error()
			item.Seconds = time.Since(start).Seconds()
			st.Items = append(st.Items, item)
			prog.Step()
			continue
		}
		r := report.Refinement{Provider: pr.label, Op: pr.op, Capsule: name, Policy: string(capsule.Reduction), Cases: len(res.Cases), Holds: res.Failures == 0}
		for _, cs := range res.Cases {
			r.Ratios = append(r.Ratios, ratF(cs.Worst.Big()))
		}
		r.Worst = ratF(res.Worst.Big())
		n, worst := len(res.Cases), jsonout.Number(r.Worst)
		item.Holds = res.Failures == 0
		item.Cases, item.Policy, item.Rule, item.WorstRatio = &n, string(capsule.Reduction), string(res.Obligation.Rule), &worst
		for _, x := range r.Ratios {
			item.Ratios = append(item.Ratios, jsonout.Number(x))
		}
		item.Detail = fmt.Sprintf("%d cases on %s, %s, rule %s, worst error/bound %.3g", len(res.Cases), deviceName(pr.p), capsule.Reduction, res.Obligation.Rule, r.Worst)
		if res.Failure != nil {
			item.Failure = res.Failure.Error()
		}
		item.Seconds = time.Since(start).Seconds()
		st.Items = append(st.Items, item)
		st.Refinements = append(st.Refinements, r)
		prog.Step()
	}
	return st
}

// deviceName describes the device a provider runs on, when it says.
func deviceName(p backend.Provider) string {
	if f, ok := p.(*refine.FlipBit); ok {
		return deviceName(f.Inner) + " (planted fault)"
	}
	if d, ok := p.(interface{ DeviceName() string }); ok {
		return d.DeviceName()
	}
	return string(p.Device())
}
