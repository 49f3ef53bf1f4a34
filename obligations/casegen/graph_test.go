package casegen

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// graphSeeds is how many seeds the generator tests draw per option set:
// 3000 with TLCHECK_EXHAUSTIVE set (CI), 1000 by default.
func graphSeeds() uint64 {
	if exhaustive() {
		return 3000
	}
	return 1000
}

var genOptionSets = []struct {
	name string
	o    GraphOptions
}{
	{"all", GraphOptions{}},
	{"exact", GraphOptions{Exact: true}},
	{"exact-zp-scalar", GraphOptions{Exact: true, ZeroPreserving: true, ScalarOutput: true}},
	{"polynomial", GraphOptions{Polynomial: true, ScalarOutput: true, MaxNodes: 10}},
	{"small", GraphOptions{MaxNodes: 4, MaxElements: 4, MaxRank: 2}},
}

// Every generated IR graph passes irsem's well-formedness and shape checks
// and its payload check; exact graphs evaluate over Rat; node counts stay
// within the options.
func TestGenGraphWellFormed(t *testing.T) {
	for _, set := range genOptionSets {
		t.Run(set.name, func(t *testing.T) {
			o := set.o.withDefaults()
			seen := map[irsem.Op]int{}
			dups := 0
			for seed := uint64(0); seed < graphSeeds(); seed++ {
				gc, err := GraphSeed(seed, set.o)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if err := gc.Graph.Check(); err != nil {
					t.Fatalf("seed %d: Check: %v\n%s", seed, err, gc.Recipe)
				}
				if err := irsem.CheckPayload(gc.Graph, gc.Payload); err != nil {
					t.Fatalf("seed %d: CheckPayload: %v\n%s", seed, err, gc.Recipe)
				}
				n := len(gc.Graph.Nodes)
				if n < 1 || n > o.MaxNodes+1 {
					t.Fatalf("seed %d: %d nodes, options allow %d…%d", seed, n, o.MinNodes, o.MaxNodes)
				}
				if set.o.ScalarOutput && len(gc.Graph.Nodes[gc.Graph.OutputID].Shape) != 0 {
					t.Fatalf("seed %d: output is not a scalar", seed)
				}
				for _, nd := range gc.Graph.Nodes {
					seen[nd.Kind.Op]++
					if len(nd.Parents) == 2 && nd.Parents[0] == nd.Parents[1] {
						dups++
					}
					if nd.Shape.Size() > o.MaxElements {
						t.Fatalf("seed %d: node %d has %d elements\n%s", seed, nd.ID, nd.Shape.Size(), gc.Recipe)
					}
				}
				if set.o.Exact {
					if _, err := irsem.DenoteAll(gc.Graph, gc.Payload, gc.Input); err != nil {
						t.Fatalf("seed %d: exact graph does not evaluate over Rat: %v\n%s", seed, err, gc.Recipe)
					}
				}
				h1, err := irsem.GraphHash(gc.Graph, gc.Payload)
				if err != nil {
					t.Fatalf("seed %d: hash: %v", seed, err)
				}
				again, _ := GraphSeed(seed, set.o)
				if h2, _ := irsem.GraphHash(again.Graph, again.Payload); h1 != h2 {
					t.Fatalf("seed %d: generation is not deterministic", seed)
				}
			}
			if dups == 0 {
				t.Errorf("no duplicate parent slots generated")
			}
			for _, op := range []irsem.Op{irsem.OpAdd, irsem.OpMulElem, irsem.OpDetach, irsem.OpSum, irsem.OpMatmul, irsem.OpReduceSum} {
				if set.name != "small" && seen[op] == 0 {
					t.Errorf("op %s never generated", op)
				}
			}
			t.Logf("%d duplicate-parent nodes; op counts %v", dups, seen)
		})
	}
}

// Every typed recipe builds as a typed graph, records on a tape, and
// (over Rat, for exact options) evaluates to the same values both ways.
func TestGenTypedBuilds(t *testing.T) {
	for _, set := range genOptionSets {
		t.Run(set.name, func(t *testing.T) {
			for seed := uint64(0); seed < graphSeeds()/3; seed++ {
				tc, err := GenTyped(NewRandSource(seed), set.o)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				g, err := BuildTyped[spec.Rat](tc.Recipe, nil)
				if err != nil {
					t.Fatalf("seed %d: build: %v\n%s", seed, err, tc.Recipe)
				}
				if !set.o.Exact && !set.o.Polynomial {
					continue
				}
				tp, err := RecordTape[spec.Rat](tc.Recipe, nil, tc.Inputs)
				if err != nil {
					t.Fatalf("seed %d: record: %v\n%s", seed, err, tc.Recipe)
				}
				vals, err := g.Eval(tc.Inputs)
				if err != nil {
					t.Fatalf("seed %d: eval: %v\n%s", seed, err, tc.Recipe)
				}
				for id := range vals {
					v, _ := tp.Value(id)
					if !spec.SameTensor(v, vals[id]) {
						t.Fatalf("seed %d: entry %d: tape %v, graph %v", seed, id, v, vals[id])
					}
				}
			}
		})
	}
}

func TestShapesOfSize(t *testing.T) {
	for n := 1; n <= 27; n++ {
		ss := shapesOfSize(n, 3)
		if !ss[0].Equal(spec.Shape{n}) {
			t.Fatalf("n=%d: first shape %v", n, ss[0])
		}
		seen := map[string]bool{}
		for _, s := range ss {
			if s.Size() != n || len(s) > 3 || seen[s.String()] {
				t.Fatalf("n=%d: bad or repeated shape %v in %v", n, s, ss)
			}
			seen[s.String()] = true
		}
	}
}
