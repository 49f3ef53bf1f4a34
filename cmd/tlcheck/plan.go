package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/cuda"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
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
		if p, err := newCUDAProvider(cuda.Options{}); err == nil {
			if err := providers.Register(p); err != nil {
				return nil, nil, cli.Usagef("--profile %s: %v", name, err)
			}
		}
	}
	return prof, providers, nil
}

func runPlan(args []string, stdout, _ io.Writer) error {
	fs := newFlags("plan")
	mf := addModelFlags(fs.FlagSet, "plan", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	profile := fs.String("profile", backend.ProfileCheckedCPU, strings.Join(planProfiles(), "|"))
	asJSON := fs.Bool("json", false, "print a tlcheck.plan.v1 JSON document instead of the report")
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	prof, providers, err := planProfile(*profile)
	if err != nil {
		return err
	}
	files, err := mf.LoadGraph()
	if err != nil {
		return err
	}
	inputs := files.Files
	res := backend.Plan(files.Graph, prof)
	if res.Err != nil {
		return files.Err(res.Err)
	}
	binding := res.Bind(providers)
	var b strings.Builder
	if *asJSON {
		if err := jsonout.Write(&b, res.JSON(binding, inputs)); err != nil {
			return err
		}
	} else {
		if err := backend.WritePlanReport(&b, res); err != nil {
			return err
		}
		switch {
		case binding == nil:
		case binding.OK:
			fmt.Fprintf(&b, "binding: ok: %s bound to runtime handlers\n", cli.Count(binding.Kernels, "kernel", "kernels"))
		default:
			fmt.Fprintf(&b, "binding: fails: %s\n", binding.Error)
		}
	}
	if _, err := io.WriteString(stdout, b.String()); err != nil {
		return err
	}
	if !res.Accepted {
		rej := res.Rejected()
		return cli.Failf("plan rejected on profile %s: %s", prof.Name, rej[0].NodeLine())
	}
	if binding != nil && !binding.OK {
		// The plan cannot run here: exit 1 like a rejected one.
		return cli.Failf("plan accepted on profile %s but its capsules do not bind: %s", prof.Name, binding.Error)
	}
	return nil
}
