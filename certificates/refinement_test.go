package certificates

import (
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
)

// TestOptionalProvidersNotByDefault: native-cuda (an optional provider) is
// certified only when Options names it; by default the pairs are exactly
// one per default provider.
func TestOptionalProvidersNotByDefault(t *testing.T) {
	pairs, err := refinementPairs(Options{Ops: []string{"sum"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != len(Providers()) {
		t.Errorf("default pairs %v, want one per provider of %v", pairs, Providers())
	}
	for _, p := range pairs {
		if slices.Contains(OptionalProviders(), p[0]) || p[0] == backend.ProviderNativeCUDA {
			t.Errorf("optional provider %s certified without being named", p[0])
		}
	}
}
