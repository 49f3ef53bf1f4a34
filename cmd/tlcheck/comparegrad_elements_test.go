package main

import (
	"encoding/json"
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
	// holds, element 1 (+Inf) fails.
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
	if len(doc.Grads) != 2 || len(doc.Grads[0].Elements) != 2 || doc.Grads[1].Status != "constant" || doc.Grads[1].Elements != nil {
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
