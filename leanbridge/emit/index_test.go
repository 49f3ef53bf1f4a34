package emit

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The instances of lean/Tlcheck/Index.lean, read from the Lean source
// and recomputed with the Go transcription of Spec.lean's index lists
// (model_test.go): an estimate, made here without Lean, that each
// `decide +kernel` holds. The expected lists in the Lean file come from
// numpy (transpose, swapaxes, slicing, broadcast_to, concatenate, take, pad on
// arange; tile's and scatter's written out by hand from numpy's and torch's rules); this test catches a list that Spec.lean's formulas do not give.
var indexThmRE = regexp.MustCompile(`(?s)theorem (\w+) :\s*Attr\.(\w+)Idx \{ attr0 with ([^}]*) \} =\s*\[([0-9, ]*)\] := by decide \+kernel`)

func TestIndexInstances(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "lean", "Tlcheck", "Index.lean"))
	if err != nil {
		t.Fatal(err)
	}
	ops := map[string]string{"transpose": "transpose", "permute": "permute", "slice": "slice", "bcast": "broadcast_to", "concat": "concat", "gather": "gather", "pad": "pad", "tile": "tile", "scatter": "scatter"}
	ms := indexThmRE.FindAllStringSubmatch(string(src), -1)
	if len(ms) != 13 {
		t.Fatalf("%d index instances in Index.lean, want 13", len(ms))
	}
	for _, m := range ms {
		a := mattr{c: rat(0, 1), lo: rat(0, 1), hi: rat(0, 1)}
		for _, f := range splitTop(m[3]) {
			k, v, _ := strings.Cut(f, " := ")
			switch k {
			case "shape":
				a.shape = readInts(t, strings.Trim(v, "[]"))
			case "toShape":
				a.toShape = readInts(t, strings.Trim(v, "[]"))
			case "perm":
				a.perm = readInts(t, strings.Trim(v, "[]"))
			case "shapes":
				for _, s := range splitTop(strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")) {
					a.shapes = append(a.shapes, readInts(t, strings.Trim(s, "[]")))
				}
			case "axis", "axis2", "start", "stop":
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: field %s: %v", m[1], k, err)
				}
				*map[string]*int{"axis": &a.axis, "axis2": &a.axis2, "start": &a.start, "stop": &a.stop}[k] = n
			default:
				t.Fatalf("%s: unexpected field %q", m[1], k)
			}
		}
		op, ok := ops[m[2]]
		if !ok {
			t.Fatalf("%s: unknown index list %s", m[1], m[2])
		}
		got, _ := a.index(op)
		want := readInts(t, m[4])
		if len(got) != len(want) {
			t.Errorf("%s: Spec.lean's %s list has %d entries, the theorem %d", m[1], op, len(got), len(want))
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: entry %d: Spec.lean gives %d, the theorem %d", m[1], i, got[i], want[i])
				break
			}
		}
	}
}
