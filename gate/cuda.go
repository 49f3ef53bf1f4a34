package gate

import (
	"errors"
	"fmt"
	"time"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/report"
	"github.com/tlcheck/tlcheck/refine"
)

// CUDA is the gate's CUDA refinement stage (refine-cuda): the checked_cuda
// capsules of refine.Ops() bound to the CUDA provider (and, for sum, to
// its atomic variant too), each checked against the exact semantics
// within refine's order-independent γ bound.
type CUDA struct {
	Tree   backend.Provider // the CUDA provider (tree reductions)
	Atomic backend.Provider // the CUDA provider with atomic sums
}

// Plant wraps both providers of g so that element 0 of op's result has
// one significand bit (2^20 ulps) flipped: far beyond the bound, so the
// refine-cuda stage must fail (the self-test of the stage).
func (g *CUDA) Plant(op string) error {
	tree, err := refine.NewFlipBit(g.Tree, op, 0, 20)
	if err != nil {
		return err
	}
	atomic, err := refine.NewFlipBit(g.Atomic, op, 0, 20)
	if err != nil {
		return err
	}
	g.Tree, g.Atomic = tree, atomic
	return nil
}

// certificates returns the suite and providers the certify and verify
// stages use with the CUDA provider: native-cuda refinement certificates
// join the default ones (certificates.OptionalProviders).
func (g *CUDA) certificates() (*certificates.Suite, []string) {
	ps := backend.FastProviders()
	if err := ps.Register(g.Tree); err != nil {
		// Cannot happen: a fresh set without a native-cuda provider.
		return certificates.FullSuite(), nil
	}
	return certificates.FullSuiteWith(ps), append(certificates.Providers(), backend.ProviderNativeCUDA)
}

// stage runs the CUDA refinement checks sequentially (the provider
// serialises on its worker goroutine anyway). Its error is the first
// binding or device error met: not a verdict.
func (g *CUDA) stage(c Config) (Stage, error) {
	st := Stage{Name: "refine-cuda", Timed: true}
	type pair struct {
		label string
		p     backend.Provider
		op    string
	}
	var pairs []pair
	for _, op := range refine.Ops() {
		pairs = append(pairs, pair{backend.ProviderNativeCUDA, g.Tree, op})
		if op == "sum" {
			pairs = append(pairs, pair{backend.ProviderNativeCUDA + "(atomic)", g.Atomic, op})
		}
	}
	prog := cli.NewProgress(c.Stderr, "gate: refine-cuda", len(pairs))
	defer prog.Done()
	cat := backend.CUDACatalog()
	var fault error
	for _, pr := range pairs {
		start := time.Now()
		item := Item{GateItem: jsonout.GateItem{Name: pr.label + "." + pr.op}}
		capsule, res, err := g.check(cat, pr.p, pr.op, c)
		if err != nil {
			if fault == nil {
				fault = fmt.Errorf("refine-cuda %s: %w", item.Name, err)
			}
			item.Failure = err.Error()
		} else {
			var r report.Refinement
			item, r = refinement(item, pr.label, pr.op, capsule, res, " on "+deviceName(pr.p))
			st.Refinements = append(st.Refinements, r)
		}
		item.Seconds = time.Since(start).Seconds()
		st.Items = append(st.Items, item)
		prog.Step()
	}
	return st, fault
}

// check binds op's CUDA capsule to p and checks it. A binding error, or a
// provider that returned an error (a failed launch, out of memory), is
// an execution failure, not a refinement verdict: it is the error.
func (g *CUDA) check(cat *backend.Catalog, p backend.Provider, op string, c Config) (backend.Capsule, *refine.Result, error) {
	name := backend.ProviderNativeCUDA + "." + op
	capsule, ok := cat.Lookup(name)
	if !ok {
		return capsule, nil, fmt.Errorf("no capsule %s", name)
	}
	ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), p)
	if err != nil {
		return capsule, nil, err
	}
	b, err := ps.Bind(capsule)
	if err != nil {
		return capsule, nil, err
	}
	res, err := refine.Check(b, op, c.CertCases, c.Seed)
	if err != nil {
		return capsule, nil, err
	}
	var f *counterexample.Failure
	if errors.As(res.Failure, &f) && f.Element < 0 {
		return capsule, nil, res.Failure
	}
	return capsule, res, nil
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
