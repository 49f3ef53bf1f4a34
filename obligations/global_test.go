package obligations

import (
	"errors"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

func TestCheckGlobalHolds(t *testing.T) {
	for _, r := range CheckGlobal(nil, 15, 3, nil) {
		if !r.Holds() {
			t.Errorf("%s: cases %d failure %v", r.Obligation, r.Cases, r.Failure)
		}
	}
}

// TestCheckGlobalCatchesSignFlip: a sign flip in mul's VJP breaks graph
// composition (and the path sums) on random graphs.
func TestCheckGlobalCatchesSignFlip(t *testing.T) {
	reg := spec.New[spec.Rat]()
	p, _ := reg.Lookup("mul")
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil {
			gs[0] = spec.NegT(gs[0])
		}
		return gs, err
	}
	reg.Override(&bad)
	caught := map[Obligation]bool{}
	for _, r := range CheckGlobal(reg, 40, 5, nil) {
		var ce *CaseError
		if r.Failure != nil && errors.As(r.Failure, &ce) {
			caught[r.Obligation] = true
		}
	}
	if !caught[GraphComposition] || !caught[PathSum] {
		t.Fatalf("sign flip not caught by composition and path sums: %v", caught)
	}
}
