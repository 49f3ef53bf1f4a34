package onnx

import (
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestSpecialsTableComplete: docs/onnx.md's per-op table of IEEE special
// values ("How they travel, per op") names every op the importer maps
// (SupportedOps) in exactly one row, no op it does not map, and each row
// holds exactly the ops that the analysis (ieee.go) treats by that row's
// rule: its maps ieeeBinary, exactUnary, ieeeUnary and reorder, and the
// float casts that unaryRule adds; every other op falls to the last row
// (all outputs Unknown). A new imported op without a row, or a row that
// disagrees with the code, fails here; so do the planted faults (an op
// dropped from the table, an op moved to another rule's row).
func TestSpecialsTableComplete(t *testing.T) {
	data, err := os.ReadFile("../docs/onnx.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	for _, e := range specialsTableErrors(doc) {
		t.Error(e)
	}
	for _, plant := range []struct{ name, from, to, want string }{
		{"an op dropped", "`Xor`", "", "no row for 1 imported ops: `Xor`"},
		{"an op in another rule's row", "`Neg`, `Abs`", "`Neg`, `Exp`, `Abs`", "names Exp in 2 rows"},
		{"an op in another rule's row only", "`Tanh`, ", "", "mixes ops of rule"},
	} {
		// Plant within the table only (the ops are named elsewhere too).
		at := strings.Index(doc, "How they travel, per op")
		head, table := doc[:at+1], doc[at+1:]
		if !strings.Contains(table, plant.from) {
			t.Fatalf("planted fault %q: %q is not in the table", plant.name, plant.from)
		}
		table = strings.Replace(table, plant.from, plant.to, 1)
		if plant.name == "an op in another rule's row only" {
			table = strings.Replace(table, "`Neg`, `Abs`", "`Neg`, `Tanh`, `Abs`", 1)
		}
		bad := head + table
		if errs := specialsTableErrors(bad); !strings.Contains(strings.Join(errs, "\n"), plant.want) {
			t.Errorf("planted fault %q not caught: %q", plant.name, errs)
		}
	}
}

// specialsTableErrors checks the table of doc (see
// TestSpecialsTableComplete) and returns what is wrong.
func specialsTableErrors(doc string) []string {
	var errs []string
	i := strings.Index(doc, "How they travel, per op")
	if i < 0 {
		return []string{`docs/onnx.md: no "How they travel, per op" table`}
	}
	var rows [][]string
	tick := regexp.MustCompile("`([A-Za-z0-9]+)`")
	for _, line := range strings.Split(doc[i:], "\n")[1:] {
		if strings.TrimSpace(line) == "" && len(rows) > 0 {
			break
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") {
			continue
		}
		first := strings.SplitN(line[1:], "|", 2)[0]
		var ops []string
		for _, m := range tick.FindAllStringSubmatch(first, -1) {
			ops = append(ops, m[1])
		}
		rows = append(rows, ops)
	}
	supported := map[string]bool{}
	for _, op := range SupportedOps() {
		supported[op] = true
	}
	seen := map[string]int{}
	rowOf := map[string]int{}
	for r, ops := range rows {
		for _, op := range ops {
			seen[op]++
			rowOf[op] = r
			if !supported[op] {
				errs = append(errs, fmt.Sprintf("the specials table names %s, which the importer does not map", op))
			}
		}
	}
	// The rule each op gets in ieee.go, derived from its maps.
	rule := func(op string) string {
		switch {
		case op == "Pow":
			return "pow"
		case ieeeBinary[op] != nil:
			return "binary"
		case exactUnary[op]:
			return "exact"
		case ieeeUnary[op] != nil, op == "Cast", op == "CastLike": // unaryRule: a float cast keeps NaN and ±∞
			return "annexF"
		case reorder[op]:
			return "reorder"
		}
		return "unknown"
	}
	ruleOfRow := map[int]string{}
	var missing []string
	for _, op := range SupportedOps() {
		switch n := seen[op]; {
		case n == 0:
			missing = append(missing, op)
			continue
		case n > 1:
			errs = append(errs, fmt.Sprintf("the specials table names %s in %d rows", op, n))
		}
		r, want := rowOf[op], rule(op)
		if got, ok := ruleOfRow[r]; ok && got != want {
			errs = append(errs, fmt.Sprintf("row %d of the specials table mixes ops of rule %s and %s (%s)", r+1, got, want, op))
		}
		ruleOfRow[r] = want
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		errs = append(errs, fmt.Sprintf("the specials table has no row for %d imported ops: %s", len(missing), "`"+strings.Join(missing, "`, `")+"`"))
	}
	return errs
}
