package refine_test

import (
	"reflect"
	"testing"

	"github.com/tlcheck/tlcheck/refine"
)

// GenerateInputs draws exactly the inputs CheckOptions checks (kind, axis
// and every bit), for every op and for explicit kinds; case i does not
// depend on how many cases are drawn; and bad options are errors.
func TestGenerateInputsMatchesCheck(t *testing.T) {
	for _, tc := range []struct {
		capsule string
		o       refine.Options
	}{
		{"fast_cpu.matmul", refine.Options{Cases: 9, Seed: 3}},
		{"fast_cpu.linear", refine.Options{Cases: 8, Seed: 0}},
		{"fast_cpu.sum", refine.Options{Cases: 8, Seed: 2026, Kinds: []refine.Kind{refine.KindSpecial, refine.KindCancel}}},
		{"fast_cpu.reduce_sum", refine.Options{Cases: 7, Seed: 5}},
	} {
		b := bind(t, tc.capsule, nil)
		res, err := refine.CheckOptions(b, b.Capsule.Op, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		gen, err := refine.GenerateInputs(b.Capsule.Op, tc.o)
		if err != nil {
			t.Fatal(err)
		}
		if len(gen) != len(res.Cases) {
			t.Fatalf("%s: %d generated, %d checked", tc.capsule, len(gen), len(res.Cases))
		}
		for i, g := range gen {
			c := res.Cases[i]
			if g.Index != c.Index || g.Kind != c.Kind || g.Seed != c.Seed || g.Axis != c.Axis || !reflect.DeepEqual(g.Inputs, c.Inputs) {
				t.Errorf("%s case %d: generated (%d %s %d axis %d %v), checked (%d %s %d axis %d %v)", tc.capsule, i,
					g.Index, g.Kind, g.Seed, g.Axis, g.Inputs, c.Index, c.Kind, c.Seed, c.Axis, c.Inputs)
			}
		}
		// Case i alone: a shorter run draws the same first cases.
		short := tc.o
		short.Cases = 3
		few, err := refine.GenerateInputs(b.Capsule.Op, short)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(few, gen[:3]) {
			t.Errorf("%s: the first cases depend on the case count", tc.capsule)
		}
	}
	for _, bad := range []struct {
		op string
		o  refine.Options
	}{
		{"mul", refine.Options{Cases: 1}},
		{"sum", refine.Options{Cases: -1}},
		{"sum", refine.Options{Cases: 1, Kinds: []refine.Kind{}}},
		{"sum", refine.Options{Cases: 1, Kinds: []refine.Kind{"bogus"}}},
	} {
		if _, err := refine.GenerateInputs(bad.op, bad.o); err == nil {
			t.Errorf("GenerateInputs(%q, %+v) accepted", bad.op, bad.o)
		}
	}
}
