package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// TestCompareGradElements: --elements lists every checked element of the
// --json document in row-major order, with the verdict the counts sum, and
// the document still matches its schema; without --json it is a usage
// error (exit 2).
func TestCompareGradElements(t *testing.T) {
	dir := t.TempDir()
	om, od := onnxFixture(t)
	// ∂Σy/∂x of the ONNX fixture is (2, 0) (onnxfixture_test.go): element 0
	// holds, element 1 (+Inf) fails. The initializer w, read as data by
	// Mul, is a parameter the dump does not give: not_given.
	grads := writeTemp(t, dir, "grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,"+Inf"]}}}`)
	args := []string{"compare-grad", "--json", "--elements", "--onnx", om, "--data", od, "--grads", grads}
	code, out, errs := runCmd(args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s\n%s", code, errs, out)
	}
	if err := compiled(t, "compare-grad").Validate([]byte(out)); err != nil {
		t.Fatalf("does not match the schema: %v\n%s", err, out)
	}
	var doc jsonout.CompareGradDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Grads) != 2 || len(doc.Grads[0].Elements) != 2 || doc.Grads[1].Status != "not_given" || doc.Grads[1].Elements != nil {
		t.Fatalf("elements: %+v", doc.Grads)
	}
	want := []string{"holds", "fails"}
	for k, el := range doc.Grads[0].Elements {
		if el.Index != k || el.Verdict != want[k] {
			t.Errorf("element %d: index %d verdict %s, want %d %s", k, el.Index, el.Verdict, k, want[k])
		}
	}
	if g := doc.Grads[0]; g.Holds != 1 || g.Fails != 1 || g.First == nil || g.First.Index != 1 {
		t.Errorf("counts %+v", g)
	}
	// Without --elements the document is as before: no element list.
	code, out, _ = runCmd(append([]string{"compare-grad", "--json"}, args[3:]...)...)
	var doc2 jsonout.CompareGradDoc
	if err := json.Unmarshal([]byte(out), &doc2); err != nil || code != 1 || doc2.Grads[0].Elements != nil {
		t.Errorf("without --elements: exit %d, %v, elements %v", code, err, doc2.Grads)
	}
	if code, _, errs := runCmd("compare-grad", "--elements", "--onnx", om, "--data", od, "--grads", grads); code != 2 || errs == "" {
		t.Errorf("--elements without --json: exit %d, stderr %q", code, errs)
	}
}

// TestCompareGradInitializerAsData: an initializer that a node reads as
// data (the fixture's Mul weight w, as LayerNormalization's scale and
// PRelu's slope are read) has its dumped gradient judged. The fixture is
// y = relu(x ⊙ w) with x = (3/2, 2), w = (2, −3): x ⊙ w = (3, −6), so
// ∂Σy/∂w = x ⊙ relu′(x ⊙ w) = (3/2, 0), worked by hand; both elements are
// exact products of dyadics, so a value one float32 step away fails.
func TestCompareGradInitializerAsData(t *testing.T) {
	om, od := onnxFixture(t)
	cases := []struct {
		name   string
		w      string // the dumped ∂Σy/∂w
		code   int
		verdic [2]string
	}{
		{"exact", `[1.5, 0.0]`, 0, [2]string{"holds", "holds"}},
		{"one float32 step up", `[1.5000001192092896, 0.0]`, 1, [2]string{"fails", "holds"}},
		{"the kink's other side", `[1.5, 2.0]`, 1, [2]string{"holds", "fails"}},
		{"sign flipped", `[-1.5, 0.0]`, 1, [2]string{"fails", "holds"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			grads := writeTemp(t, t.TempDir(), "grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]},"w":{"shape":[2],"values":`+tc.w+`}}}`)
			code, out, errs := runCmd("compare-grad", "--json", "--elements", "--onnx", om, "--data", od, "--grads", grads)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, tc.code, errs, out)
			}
			var doc jsonout.CompareGradDoc
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Grads) != 2 || doc.Grads[1].Name != "w" || doc.Grads[1].Status != "checked" || len(doc.Grads[1].Elements) != 2 {
				t.Fatalf("grads: %+v", doc.Grads)
			}
			for k, el := range doc.Grads[1].Elements {
				if el.Verdict != tc.verdic[k] {
					t.Errorf("w[%d]: %s, want %s", k, el.Verdict, tc.verdic[k])
				}
			}
		})
	}
}

// TestCompareGradDecider: the v3 document names, per element, the bound
// that decided it and counts them per gradient. With --bound classic the
// first-order bounds are not run, so every element with a bound is the
// classic one's; with the default the counts of combined and boxed
// elements are the ones the text report prints ("the combined
// first-order bound decides N and the boxed one M of K"), and each
// element's decider is re-derived here from the classic-only document:
// an element is a first-order bound's (boxed or combined) exactly when
// its bound is below the classic one.
func TestCompareGradDecider(t *testing.T) {
	om, od := onnxFixture(t)
	grads := writeTemp(t, t.TempDir(), "grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]},"w":{"shape":[2],"values":[1.5,0.0]}}}`)
	base := []string{"--onnx", om, "--data", od, "--grads", grads}
	doc := func(extra ...string) jsonout.CompareGradDoc {
		t.Helper()
		code, out, errs := runCmd(append(append([]string{"compare-grad", "--json", "--elements"}, extra...), base...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, errs, out)
		}
		if err := compiled(t, "compare-grad").Validate([]byte(out)); err != nil {
			t.Fatalf("does not match the schema: %v\n%s", err, out)
		}
		var d jsonout.CompareGradDoc
		if err := json.Unmarshal([]byte(out), &d); err != nil {
			t.Fatal(err)
		}
		if d.Format != "tlcheck.compare-grad.v3" {
			t.Fatalf("format %q", d.Format)
		}
		return d
	}
	classic, sharp := doc("--bound", "classic"), doc()
	_, text, _ := runCmd(append([]string{"compare-grad"}, base...)...)
	for gi, g := range sharp.Grads {
		cg := classic.Grads[gi]
		if g.Status != "checked" {
			continue
		}
		if cg.ByBoxed != 0 || cg.ByCombined != 0 || cg.ByClassic != len(cg.Elements) {
			t.Errorf("%s, --bound classic: by_classic %d, by_boxed %d, by_combined %d of %d elements", g.Name, cg.ByClassic, cg.ByBoxed, cg.ByCombined, len(cg.Elements))
		}
		by := map[string]int{}
		for k, el := range g.Elements {
			c := cg.Elements[k]
			if c.DecidedBy != "classic" {
				t.Errorf("%s[%d], --bound classic: decided_by %s", g.Name, k, c.DecidedBy)
			}
			want := "classic"
			switch {
			case el.Bound == nil || math.IsInf(float64(*el.Bound), 1):
				want = "none"
			case c.Bound == nil || float64(*el.Bound) < float64(*c.Bound):
				want = "first-order"
			}
			if got := el.DecidedBy; got != want && !(want == "first-order" && (got == "boxed" || got == "combined")) {
				t.Errorf("%s[%d]: decided_by %s, want %s (bound %v, classic %v)", g.Name, k, el.DecidedBy, want, el.Bound, c.Bound)
			}
			by[el.DecidedBy]++
		}
		if g.ByBoxed != by["boxed"] || g.ByCombined != by["combined"] || g.ByClassic+g.ByBoxed+g.ByCombined != len(g.Elements) {
			t.Errorf("%s: by_classic %d, by_boxed %d, by_combined %d; elements say %v of %d", g.Name, g.ByClassic, g.ByBoxed, g.ByCombined, by, len(g.Elements))
		}
		if line := fmt.Sprintf("the combined first-order bound decides %d and the boxed one %d of %d elements", g.ByCombined, g.ByBoxed, len(g.Elements)); g.ByBoxed+g.ByCombined > 0 && !strings.Contains(text, line) {
			t.Errorf("%s: the text report lacks %q:\n%s", g.Name, line, text)
		}
	}
}
