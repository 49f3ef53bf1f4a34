package certificates

import (
	"fmt"
	"slices"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/spec"
)

// FullSuite returns every certificate kind this build produces and
// verifies: adjointness, composition, refinement (through
// backend.FastProviders) and range; it also verifies (never produces) a
// user's model's kinds, model_composition and model_range (ModelSuite).
func FullSuite() *Suite {
	return FullSuiteWith(nil)
}

// FullSuiteWith is FullSuite with the refinement certificates produced and
// verified through the providers ps (nil: backend.FastProviders). A
// self-test passes a set in which a provider has a planted fault
// (refine.FlipBit) to confirm that certify, or verify, then fails.
func FullSuiteWith(ps *backend.Providers) *Suite {
	s := NewSuite()
	s.providers = ps
	s.Register(KindComposition, produceCompositionFile)
	s.Expect(KindComposition, func(Options) ([]string, error) { return []string{CompositionName}, nil })
	s.subjects = append(s.subjects, func(Options) int { return 1 })
	env := refinementEnv{providers: ps}
	s.Register(KindRefinement, env.produce)
	s.Expect(KindRefinement, func(o Options) ([]string, error) {
		pairs, err := refinementPairs(o)
		var out []string
		for _, p := range pairs {
			out = append(out, RefinementPath(p[0], p[1]))
		}
		return out, err
	})
	s.subjects = append(s.subjects, func(o Options) int {
		pairs, err := refinementPairs(o)
		if err != nil {
			return 0
		}
		return len(pairs)
	})
	s.Register(KindRange, produceRangeFiles)
	s.Expect(KindRange, expectedRangeFiles)
	s.subjects = append(s.subjects, func(Options) int { return len(RangeExamples) })
	// A user's model's directory (ModelSuite) verifies here too.
	s.acceptModelKinds()
	return s
}

// Providers lists the providers the refinement certificates cover by
// default.
func Providers() []string { return []string{backend.ProviderReference, backend.ProviderFastCPU} }

// OptionalProviders lists the providers certified only when Options names
// them, because they exist only on some machines: native-cuda (a GPU and
// a -tags cuda build). Their certificates verify anywhere: without the
// provider the verifier re-derives the exact values, bounds and verdicts
// from the recorded inputs and outputs; with it, it also re-executes the
// kernel and requires the new output to satisfy the same rule (not to
// repeat the recorded bits: an atomic reduction's order may differ from
// run to run).
func OptionalProviders() []string { return []string{backend.ProviderNativeCUDA} }

// KnownProvider reports whether p is in Providers or OptionalProviders.
func KnownProvider(p string) bool {
	return slices.Contains(Providers(), p) || slices.Contains(OptionalProviders(), p)
}

// Subjects estimates how many progress steps Certify takes with o: one
// per adjointness primitive, one for the composition certificate, one per
// (provider, op) refinement pair and one per range example.
func (s *Suite) Subjects(o Options) int {
	if o.Shard.Sharded() {
		return s.subjectsIn(o, o.Shard)
	}
	n := len(spec.Infos())
	if o.Ops != nil {
		n = len(o.Ops)
	}
	for _, f := range s.subjects {
		n += f(o)
	}
	return n
}

// selectedProviders returns o.Providers (default Providers()), rejecting
// unknown names.
func selectedProviders(o Options) ([]string, error) {
	if o.Providers == nil {
		return Providers(), nil
	}
	for _, p := range o.Providers {
		if !KnownProvider(p) {
			return nil, fmt.Errorf("certify: unknown provider %q (known: %v, and on request %v)", p, Providers(), OptionalProviders())
		}
	}
	return o.Providers, nil
}
