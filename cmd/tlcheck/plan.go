package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
)

// planProfiles lists the profiles plan accepts: the maintained ones and
// the fast float32 CPU profile.
func planProfiles() []string {
	var names []string
	for _, p := range backend.Profiles() {
		names = append(names, p.Name)
	}
	return names
}

// planProfile returns the named profile and the providers its capsules
// bind through: the reference provider, plus the fast_cpu provider for
// fast_cpu and the CUDA provider for checked_cuda when it is built (when
// it is not, binding reports the missing provider).
func planProfile(name string) (*backend.Profile, *backend.Providers, error) {
	if name == backend.ProfileFastCPU {
		return backend.FastCPU(), backend.FastProviders(), nil
	}
	prof, err := backend.ProfileNamed(name)
	if err != nil {
		return nil, nil, cli.Usagef("--profile: unknown value %q (want %s)", name, strings.Join(planProfiles(), "|"))
	}
	providers := backend.DefaultProviders()
	if prof.Device == backend.DeviceCUDA {
		if p, err := cuda.NewProvider(); err == nil {
			if err := providers.Register(p); err != nil {
				return nil, nil, cli.Usagef("--profile %s: %v", name, err)
			}
		}
	}
	return prof, providers, nil
}

func runPlan(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("plan")
	if err := limits.AddFlags(fs); err != nil {
		return cli.BadInput(err)
	}
	graph := fs.String("graph", "", "torchlean.ir.v1 graph file (required)")
	profile := fs.String("profile", backend.ProfileCheckedCPU, strings.Join(planProfiles(), "|"))
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *graph == "" {
		return cli.Usagef("plan: --graph is required")
	}
	prof, providers, err := planProfile(*profile)
	if err != nil {
		return err
	}
	g, err := readDoc("graph", *graph, irsem.ReadGraph)
	if err != nil {
		return err
	}
	res := backend.Plan(g, prof)
	if res.Err != nil {
		return cli.Usagef("--graph %s: %v", *graph, res.Err)
	}
	var b strings.Builder
	if err := backend.WritePlanReport(&b, res); err != nil {
		return err
	}
	if res.Accepted {
		// An accepted plan is a choice; binding says whether runtime
		// handlers exist for it.
		if _, err := backend.Bind(res.Plan, providers); err != nil {
			fmt.Fprintf(&b, "binding: fails: %s\n", strings.TrimPrefix(err.Error(), "backend: bind: "))
		} else {
			fmt.Fprintf(&b, "binding: ok: %d kernels bound to runtime handlers\n", res.Plan.KernelCount())
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if !res.Accepted {
		rej := res.Rejected()
		return cli.Failf("plan rejected on profile %s: %s", prof.Name, rej[0].NodeLine())
	}
	return nil
}
