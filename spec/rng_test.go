package spec

import "testing"

// The expected values were computed outside Go, by a direct Python
// transcription of splitmix64 and 64-bit FNV-1a (the formula in CaseSeed's
// doc); SplitMix64(0) = 0xe220a8397b1dcdaf and FNV-1a("a") =
// 0xaf63dc4c8601ec8c are also the published reference values.
func TestCaseSeedReferenceValues(t *testing.T) {
	if got := SplitMix64(0); got != 0xe220a8397b1dcdaf {
		t.Errorf("SplitMix64(0) = %#x, want 0xe220a8397b1dcdaf", got)
	}
	for _, c := range []struct {
		s    string
		want uint64
	}{{"", 0xcbf29ce484222325}, {"a", 0xaf63dc4c8601ec8c}, {"mul", 0x7e66519174a3ce1}} {
		if got := fnv1a64(c.s); got != c.want {
			t.Errorf("fnv1a64(%q) = %#x, want %#x", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		seed  uint64
		label string
		i     int
		want  uint64
	}{
		{0, "mul", 0, 0xc5f8c26652f342b2},
		{0, "mul", 13, 0xe96e264d9b1d2553},
		{1, "mul", 0, 0xa378dd05c56f8281},
		{0, "add", 0, 0x9cab48d52f563cc8},
		{2026, "graph-composition", 7, 0xa2662778d6ea06e},
		{0xffffffffffffffff, "refine/matmul", 3, 0x9c193c997a705583},
		{0, "", 0, 0xa6bbc8dcbe30928c},
	} {
		if got := CaseSeed(c.seed, c.label, c.i); got != c.want {
			t.Errorf("CaseSeed(%d, %q, %d) = %#x, want %#x", c.seed, c.label, c.i, got, c.want)
		}
	}
}

// Labels in use must not collide: every registry primitive, the graph
// obligations and the certificate families, over a few seeds and indices.
func TestCaseSeedSeparatesLabels(t *testing.T) {
	labels := []string{"graph-composition", "path-sum", "sweep-agreement", "sweep-singular", "cross-path",
		"interval-soundness", "hessian-symmetry", "composition", "composition.tangents",
		"graph-composition-all-ops", "path-sum-all-ops", "sweep-agreement-all-ops", "cross-path-all-ops",
		"interval-soundness-all-ops", "hessian-symmetry-all-ops", "rewrite",
		"refine/matmul", "refine/linear", "refine/sum", "refine/reduce_sum"}
	for _, info := range Infos() {
		labels = append(labels, info.Name)
	}
	seen := map[uint64]string{}
	for _, seed := range []uint64{0, 1, 2026} {
		for _, l := range labels {
			for i := range 50 {
				s := CaseSeed(seed, l, i)
				key := l + "/" + string(rune('a'+i))
				if prev, ok := seen[s]; ok {
					t.Fatalf("CaseSeed collision: %s and %s (seed %d) both give %#x", prev, key, seed, s)
				}
				seen[s] = key
			}
		}
	}
}
