package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
)

// TestCompareCentreFallback: compare at an exact-arithmetic budget the
// model's rational evaluation runs past (--max-rat-work 1, --max-rat-bits
// 1) is not refused: the fixture (onnxfixture_test.go, y = relu(x ⊙ w) =
// (3, 0) by hand) is judged with the ball centre, the JSON and the text say
// which centre and which limit, the correct output holds, and the output
// moved by 1/2 at element 0 still fails. At the default limits the centre
// is the exact one and no fallback is named.
func TestCompareCentreFallback(t *testing.T) {
	good, gd := onnxFixture(t)
	bad, bd := onnxFixture(t, 3.5, 0)
	cases := []struct {
		flags         []string
		model, data   string
		code          int
		centre, limit string
	}{
		{nil, good, gd, 0, "exact", ""},
		{[]string{"--max-rat-work", "1"}, good, gd, 0, "ball", "rat-work"},
		{[]string{"--max-rat-bits", "1"}, good, gd, 0, "ball", "rat-bits"},
		{[]string{"--max-rat-work", "1"}, bad, bd, 1, "ball", "rat-work"},
	}
	for _, c := range cases {
		args := append(append([]string{"compare", "--json"}, c.flags...), "--onnx", c.model, "--data", c.data)
		code, out, errs := runCmd(args...)
		var doc jsonout.CompareDoc
		if err := json.Unmarshal([]byte(out), &doc); err != nil || code != c.code {
			t.Fatalf("%v: exit %d (want %d), %v, stderr %q", args, code, c.code, err, errs)
		}
		o := doc.Sets[0].Outputs[0]
		if o.Centre != c.centre || (c.limit == "") != (o.CentreFallback == "") || (c.limit != "" && !strings.Contains(o.CentreFallback, "over the "+c.limit+" limit")) {
			t.Errorf("%v: centre %q, fallback %q; want %q naming %q", args, o.Centre, o.CentreFallback, c.centre, c.limit)
		}
		if want := map[int][2]int{0: {2, 0}, 1: {1, 1}}[c.code]; o.Holds != want[0] || o.Fails != want[1] || o.Inconclusive != 0 {
			t.Errorf("%v: %d hold, %d fail, %d inconclusive; want %d, %d, 0", args, o.Holds, o.Fails, o.Inconclusive, want[0], want[1])
		}
		_, text, _ := runCmd(append([]string{"compare"}, args[2:]...)...)
		if line := "(centre: the ball enclosure, not the exact rational value: "; strings.Contains(text, line) != (c.limit != "") {
			t.Errorf("%v: the text report's centre line (%q) is wrong:\n%s", args, line, text)
		}
	}
	// compare-grad's boxed bound takes the same enclosure (fpbound's
	// forwardBoxes): ∂Σy/∂x = (2, 0) by hand holds, 3 at element 0 fails,
	// at a rat-work of 1 as at the default.
	g := writeTemp(t, t.TempDir(), "g.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0]}}}`)
	b := writeTemp(t, t.TempDir(), "b.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[3.0,0]}}}`)
	for _, c := range []struct {
		grads string
		code  int
		want  string
	}{{g, 0, "x [2]: 2 holds, 0 fails"}, {b, 1, "x [2]: 1 holds, 1 fails"}} {
		code, out, errs := runCmd("compare-grad", "--max-rat-work", "1", "--onnx", good, "--data", gd, "--grads", c.grads)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("compare-grad --max-rat-work 1 %s: exit %d (want %d), stderr %q, output lacks %q:\n%s", c.grads, code, c.code, errs, c.want, out)
		}
	}
}
