package verify

import (
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
)

// TestRoundingBoundForged: a refinement certificate whose recorded
// rounding bound is forged — another decider, format, profile or library
// accuracy — or whose recorded bound of an element is lowered is rejected,
// naming the field; the honest certificate verifies.
func TestRoundingBoundForged(t *testing.T) {
	t.Parallel()
	const op, provider, cases, seed = "matmul", "fast_cpu", 3, 5
	file := certificates.RefinementPath(provider, op)
	env := refinementEnv{providers: backend.FastProviders()}
	m := &certificates.Manifest{Seed: seed, Cases: cases}
	produce := func(t *testing.T) *certificates.RefinementFile {
		f, err := certificates.ProduceUncheckedRefinement(backend.FastProviders(), provider, op, cases, seed)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if _, err := env.verify(file, produce(t), m); err != nil {
		t.Fatalf("honest certificate: %v", err)
	}
	for _, tc := range []struct {
		name  string
		forge func(f *certificates.RefinementFile)
		field string
	}{
		{"decider first-order", func(f *certificates.RefinementFile) { f.RoundingBound.Kind = certificates.BoundFirstOrder }, "rounding_bound.kind"},
		{"decider unknown", func(f *certificates.RefinementFile) { f.RoundingBound.Kind = "sharp" }, "rounding_bound.kind"},
		{"format binary64", func(f *certificates.RefinementFile) { f.RoundingBound.Format = certificates.FormatBinary64 }, "rounding_bound.format"},
		{"profile", func(f *certificates.RefinementFile) { f.RoundingBound.Profile = "onnxruntime-cpu" }, "rounding_bound.profile"},
		{"ulps", func(f *certificates.RefinementFile) { f.RoundingBound.ULPs = 4 }, "rounding_bound.ulps"},
		{"bound halved", func(f *certificates.RefinementFile) {
			for i := range f.Cases {
				for j := range f.Cases[i].Elements {
					el := &f.Cases[i].Elements[j]
					if b, ok := new(big.Rat).SetString(el.Bound); ok && el.Rule == "bound" && b.Sign() > 0 {
						el.Bound = b.Quo(b, big.NewRat(2, 1)).RatString()
						return
					}
				}
			}
			t.Fatal("no element under the bound rule")
		}, ".bound"},
	} {
		f := produce(t)
		tc.forge(f)
		_, err := env.verify(file, f, m)
		var fe *certificates.FieldError
		if !errors.As(err, &fe) || fe.File != file || !strings.HasSuffix(fe.Field, tc.field) {
			t.Errorf("%s: %v, want a failure of %s", tc.name, err, tc.field)
		}
	}
}
