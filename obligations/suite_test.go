package obligations

import "testing"

// TestSuitePlantFault: a suite over mul holds with the reference rules
// and fails with PlantFault("mul"); Steps counts one step per case, and
// Only replays one case of each family.
func TestSuitePlantFault(t *testing.T) {
	s := Suite{Ops: []string{"mul"}, Cases: 4, Graphs: 0, Seed: 1, Only: -1}
	if got := s.Steps(); got != 4 {
		t.Fatalf("Steps = %d, want 4", got)
	}
	holds := func(reg Registries) bool {
		all, err := reg.CheckSuite(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 {
			t.Fatalf("%d groups, want 1", len(all))
		}
		for _, r := range all[0] {
			if !r.Holds() {
				return false
			}
		}
		return true
	}
	if !holds(DefaultRegistries()) {
		t.Errorf("mul fails with the reference rules")
	}
	if holds(PlantFault("mul")) {
		t.Errorf("mul holds with its VJP negated")
	}
	s.Only, s.Graphs, s.GraphObs = 2, 3, []Obligation{PathSum}
	if got := s.Steps(); got != 2 {
		t.Fatalf("Steps with Only = %d, want 2", got)
	}
	all, err := DefaultRegistries().CheckSuite(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || all[1][0].Op != "graphs" || all[1][0].Obligation != PathSum || all[1][0].Cases > 1 {
		t.Fatalf("replay of case 2: %d groups", len(all))
	}
}
