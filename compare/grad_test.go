package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/model"
)

// reluModel loads a relu graph over [3] at x = [1, −1, 1/2]; by hand
// ∇x ⟨c, relu(x)⟩ = c·step(x), every operation exact: the bound is 0.
func reluModel(t *testing.T) *GradModel {
	t.Helper()
	dir := t.TempDir()
	graph, input := filepath.Join(dir, "g.json"), filepath.Join(dir, "x.json")
	g := `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[3]},{"id":1,"kind":"relu","parents":[0],"shape":[3]}]}`
	if err := os.WriteFile(graph, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, []byte(`{"shape":[3],"values":["1","-1","1/2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := model.LoadIR("compare-grad", graph, "", input)
	if err != nil {
		t.Fatal(err)
	}
	gm, err := GradModelIR(m)
	if err != nil {
		t.Fatal(err)
	}
	return gm
}

func dump(t *testing.T, s string) *Dump {
	t.Helper()
	d, err := ReadDump(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGrads: with the cotangent c = [2, 3, 1/2] the exact gradient
// [2, 0, 1/2] holds and one ulp above 1/2 fails, at element 2; its
// --json entry counts and names the element.
func TestGrads(t *testing.T) {
	m := reluModel(t)
	if len(m.Targets) != 1 || m.Targets[0].Name != "input" {
		t.Fatalf("targets %+v", m.Targets)
	}
	doc := func(grad string) *Dump {
		return dump(t, `{"format":"tlcheck.grads.v1","cotangent":{"output":{"shape":[3],"values":[2,3,0.5]}},"grads":{"input":{"shape":[3],"values":[`+grad+`]}}}`)
	}
	res, err := Grads(m, doc("2.0, 0.0, 0.5"), fpbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := fpbound.Summarize(res[0].Elements); len(res) != 1 || res[0].Status != Checked || s.Holds != 3 {
		t.Fatalf("exact gradient: %+v", res)
	}
	res, err = Grads(m, doc("2.0, 0.0, 0.5000000596046448"), fpbound.Options{})
	if err != nil {
		t.Fatal(err)
	}
	j := res[0].JSON(true)
	if j.Holds != 2 || j.Fails != 1 || j.First == nil || j.First.Index != 2 || j.First.Verdict != Fails || len(j.Elements) != 3 {
		b, _ := json.Marshal(j)
		t.Errorf("one ulp off: %s", b)
	}
	if _, err := Grads(m, dump(t, `{"format":"tlcheck.grads.v1","grads":{"node9.W":{"shape":[1],"values":[1]}}}`), fpbound.Options{}); err == nil || !strings.Contains(err.Error(), `"node9.W"`) {
		t.Errorf("unknown gradient: %v", err)
	}
}

// TestVerdict: fails outranks inconclusive, which outranks holds; a
// gradient not given or constant has a status and no counts.
func TestVerdict(t *testing.T) {
	for _, c := range []struct {
		fails, inconc int
		want          string
	}{{0, 0, Holds}, {0, 2, Inconclusive}, {1, 2, Fails}} {
		if got := Verdict(c.fails, c.inconc); got != c.want {
			t.Errorf("Verdict(%d, %d) = %s, want %s", c.fails, c.inconc, got, c.want)
		}
	}
	j := Grad{Name: "w", Status: NotGiven}.JSON(true)
	if j.Status != NotGiven || j.First != nil || j.Elements != nil || j.Holds != 0 {
		t.Errorf("not given: %+v", j)
	}
	h, f, i := Counts([]Set{{Outputs: []Output{{Holds: 1, Fails: 2}, {Inconc: 3}}}, {Outputs: []Output{{Holds: 4}}}})
	if h != 5 || f != 2 || i != 3 {
		t.Errorf("Counts = %d, %d, %d", h, f, i)
	}
}

// TestGradsThroughCast: y = round_f16(x·3), x = [1/3, 5/7]; the registry's
// gradient is 0 (the cast is piecewise constant), PyTorch's
// straight-through gradient with cotangent 1 is 3 (worked by hand: the
// derivative of x·3, passed through the cast). That dump is inconclusive,
// naming the cast, not FAILS; the same dump on the graph without the cast
// (y = x·3, gradient 3 holds) and a wrong one (4) there fails — the
// planted fault the convention must not hide where there is no cast.
func TestGradsThroughCast(t *testing.T) {
	load := func(cast bool) *GradModel {
		dir := t.TempDir()
		graph, input := filepath.Join(dir, "g.json"), filepath.Join(dir, "x.json")
		nodes := `{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"scale","parents":[0],"shape":[2],"c":"3"}`
		out := 1
		if cast {
			nodes += `,{"id":2,"kind":"round_f16","parents":[1],"shape":[2]}`
			out = 2
		}
		g := `{"format":"tlcheck.ir.v1","input_id":0,"output_id":` + string(rune('0'+out)) + `,"nodes":[` + nodes + `]}`
		if err := os.WriteFile(graph, []byte(g), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(input, []byte(`{"shape":[2],"values":["1/3","5/7"]}`), 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := model.LoadIR("compare-grad", graph, "", input)
		if err != nil {
			t.Fatal(err)
		}
		gm, err := GradModelIR(m)
		if err != nil {
			t.Fatal(err)
		}
		return gm
	}
	doc := func(g string) *Dump {
		return dump(t, `{"format":"tlcheck.grads.v1","cotangent":{"output":{"shape":[2],"values":[1,1]}},"grads":{"input":{"shape":[2],"values":[`+g+`]}}}`)
	}
	for _, tc := range []struct {
		name                 string
		cast                 bool
		grad                 string
		holds, inconc, fails int
	}{
		{"straight-through through a cast", true, "3, 3", 0, 2, 0},
		{"the registry's 0 through a cast", true, "0, 0", 2, 0, 0},
		{"no cast, right", false, "3, 3", 2, 0, 0},
		{"no cast, planted wrong", false, "4, 3", 1, 0, 1},
	} {
		res, err := Grads(load(tc.cast), doc(tc.grad), fpbound.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		s := fpbound.Summarize(res[0].Elements)
		if s.Holds != tc.holds || s.Inconclusive != tc.inconc || s.Fails != tc.fails {
			t.Errorf("%s: holds %d, inconclusive %d, fails %d; want %d, %d, %d", tc.name, s.Holds, s.Inconclusive, s.Fails, tc.holds, tc.inconc, tc.fails)
		}
		if tc.inconc > 0 && !strings.Contains(res[0].Elements[0].Reason, "round_f16") {
			t.Errorf("%s: reason %q does not name the cast", tc.name, res[0].Elements[0].Reason)
		}
		// An element withheld across the convention is decided by no bound,
		// although its bound is finite.
		js := res[0].JSON(true)
		if got := js.ByClassic + js.ByBoxed; got != tc.holds+tc.fails {
			t.Errorf("%s: by_classic %d + by_boxed %d, want the %d decided elements", tc.name, js.ByClassic, js.ByBoxed, tc.holds+tc.fails)
		}
		for k, e := range js.Elements {
			if (e.Verdict == "inconclusive") != (e.DecidedBy == fpbound.GradByNone) {
				t.Errorf("%s: element %d is %s, decided by %q", tc.name, k, e.Verdict, e.DecidedBy)
			}
		}
	}
}
