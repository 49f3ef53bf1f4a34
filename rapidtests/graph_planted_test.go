package rapidtests

import (
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/tape"
)

// Property 10 for the global obligations: each self-test plants one
// deliberately wrong rule, asserts that the property that should catch it
// fails, and that rapid shrinks the counterexample to a small graph. The
// shrunk cases are committed under testdata/rapid/<name>/ and replay first.

// A shrunk counterexample must be small: the smallest graph exhibiting
// each fault is one input and one node (x⊙x, x+x). rapid's shrinker may
// keep an unused input or an extra unary node, and an input of up to 3×3
// elements when the failing element is not the first (it cannot move a
// value to an earlier element without growing the bitstream).
const (
	maxShrunkSteps    = 2
	maxShrunkEntries  = 4
	maxShrunkElements = 9
)

// assertSmall checks the last (shrunk) failing recipe and the printed
// counterexample against the bounds above.
func assertSmall(t *testing.T, last *casegen.Recipe, out string) {
	t.Helper()
	if last == nil {
		t.Fatalf("no failing graph was recorded:\n%s", out)
	}
	if len(last.Steps) > maxShrunkSteps || last.Len() > maxShrunkEntries {
		t.Fatalf("counterexample not shrunk: %d nodes, %d entries\n%s\n%s", len(last.Steps), last.Len(), last, out)
	}
	for id, s := range last.Shapes {
		if s.Size() > maxShrunkElements {
			t.Fatalf("counterexample not shrunk: entry %d has shape %v\n%s", id, s, last)
		}
	}
	if n := graphLines(out); n == 0 || n > maxShrunkEntries {
		t.Fatalf("printed counterexample has %d graph lines:\n%s", n, out)
	}
}

// aliased reports that two tensors share storage: the tape hands the same
// value to both slots of an operation whose parents are the same node.
func aliased[T any](x, y spec.Tensor[T]) bool {
	return len(x.Data) > 0 && len(y.Data) > 0 && &x.Data[0] == &y.Data[0]
}

// dropDuplicateMul returns a private registry whose mul VJP, when both
// slots hold the same node (x⊙x), returns the contribution of the first
// slot only — as if the parent list had been deduplicated without
// changing the rule.
func dropDuplicateMul() *spec.Registry[spec.Rat] {
	reg := spec.New[spec.Rat]()
	p, _ := reg.Lookup("mul")
	bad, orig := *p, p.VJP
	bad.VJP = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat], y, dy spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		gs, err := orig(a, xs, y, dy)
		if err == nil && len(xs) == 2 && aliased(xs[0], xs[1]) {
			gs[1] = spec.ZerosLike(gs[1])
		}
		return gs, err
	}
	reg.Override(&bad)
	return reg
}

// TestPlantedDroppedDuplicate is property 10(a): with mul's VJP dropping
// the second slot's contribution when both slots are the same node, the
// path-sum property fails (the duplicate slot is a path of its own) and
// shrinks to x⊙x.
func TestPlantedDroppedDuplicate(t *testing.T) {
	var last *casegen.Recipe
	failed, out := expectPlanted("PlantedDroppedDuplicate", &last)
	if !failed {
		t.Fatal("a dropped duplicate-parent contribution went undetected")
	}
	if !strings.Contains(out, "path-sum fails at node") {
		t.Fatalf("counterexample does not name the obligation and node:\n%s", out)
	}
	assertSmall(t, last, out)
	if !strings.Contains(last.String(), "mul [0 0]") {
		t.Fatalf("shrunk counterexample is not x⊙x:\n%s", last)
	}
}

// accumulateFunc folds an incoming contribution into a slot.
type accumulateFunc func(existing, incoming spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error)

// sweepWith is a test-local reimplementation of the tape's dense sweep
// (visit ids n−1 … 0, skip unreached nodes and nodes without
// requiresGrad, drop contributions to parents without requiresGrad) whose
// accumulation is acc: with spec.AddT it is the tape's sweep, with an
// overwrite it is the planted fault.
func sweepWith(acc accumulateFunc) obligations.Sweep {
	return func(tp *tape.Tape[spec.Rat], out int, seed spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], []bool, error) {
		n := tp.Len()
		slots, reached := make([]spec.Tensor[spec.Rat], n), make([]bool, n)
		slots[out], reached[out] = seed, true
		for id := n - 1; id >= 0; id-- {
			nd, err := tp.Node(id)
			if err != nil {
				return nil, nil, err
			}
			if !reached[id] || !nd.RequiresGrad || nd.Backward == nil {
				continue
			}
			cs, err := nd.Backward(slots[id])
			if err != nil {
				return nil, nil, err
			}
			for _, c := range cs {
				p, err := tp.Node(c.Parent)
				if err != nil {
					return nil, nil, err
				}
				if !p.RequiresGrad {
					continue
				}
				if !reached[c.Parent] {
					slots[c.Parent], reached[c.Parent] = c.Grad, true
					continue
				}
				if slots[c.Parent], err = acc(slots[c.Parent], c.Grad); err != nil {
					return nil, nil, err
				}
			}
		}
		for id := range slots {
			if !reached[id] {
				v, _ := tp.Value(id)
				slots[id] = spec.ZerosLike(v)
			}
		}
		return slots, reached, nil
	}
}

func overwrite(_, incoming spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
	return incoming, nil
}

// TestReimplementedSweepHolds: the test-local sweep with a correct add
// satisfies the path-sum property, so the planted overwrite below is the
// only fault in TestPlantedOverwrite.
func TestReimplementedSweepHolds(t *testing.T) {
	rapid.Check(t, pathSumProperty(nil, sweepWith(spec.AddT[spec.Rat]), nil))
}

// TestPlantedOverwrite is property 10(b): a sweep whose accumulation
// overwrites the existing cotangent instead of adding to it fails the
// path-sum property, shrunk to a node with two contributions to one
// parent (x+x or x⊙x).
func TestPlantedOverwrite(t *testing.T) {
	var last *casegen.Recipe
	failed, out := expectPlanted("PlantedOverwrite", &last)
	if !failed {
		t.Fatal("an overwrite in accumulation went undetected")
	}
	if !strings.Contains(out, "path-sum fails at node") {
		t.Fatalf("counterexample does not name the obligation and node:\n%s", out)
	}
	assertSmall(t, last, out)
}

// TestPlantedSignFlipComposition is property 10(c) for graph composition:
// with the sign of mul's VJP flipped in the typed graph's rules, the
// graph-composition property fails, names a mul node and an element, and
// shrinks to a graph of at most a few nodes.
func TestPlantedSignFlipComposition(t *testing.T) {
	var last *casegen.Recipe
	failed, out := expectPlanted("PlantedSignFlipComposition", &last)
	if !failed {
		t.Fatal("a sign flip in mul's VJP went undetected by graph composition")
	}
	if !strings.Contains(out, "graph-composition fails at node") || !strings.Contains(out, "(mul) element") {
		t.Fatalf("counterexample does not name the obligation, node and element:\n%s", out)
	}
	assertSmall(t, last, out)
}
