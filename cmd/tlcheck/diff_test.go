package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

func examplePath(name string) string { return filepath.Join("..", "..", "examples", name) }

// Every path and scalar agrees on the shipped examples.
func TestDiffExamplesAgree(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"quad", []string{"--graph", examplePath("quad.ir.json"), "--input", examplePath("quad.input.json")},
			[]string{"rat forward ir ~ tape", "binary32~f32 gradient", "interval containment", "tape ~ typed-graph", "tape ~ backprop-ctx"}},
		{"quad-detach", []string{"--graph", examplePath("quad-detach.ir.json"), "--input", examplePath("quad.input.json")},
			[]string{"ir ~ forward-graph", "tape ~ lowered-tape"}},
		{"mlp", []string{"--graph", examplePath("mlp.ir.json"), "--payload", examplePath("mlp.payload.json"), "--input", examplePath("mlp.input.json")},
			[]string{"f64 gradient tape ~ typed-graph 4 agree", "context-gradient"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errs := runCmd(append([]string{"diff"}, c.args...)...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errs)
			}
			flat := strings.Join(strings.Fields(out), " ")
			for _, w := range append(c.want, "all paths agree", "graph sha256:") {
				if !strings.Contains(flat, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			if strings.Contains(out, "DISAGREE") {
				t.Errorf("a comparison disagrees:\n%s", out)
			}
		})
	}
}

// withHook installs a registry hook for one test.
func withHook(t *testing.T, h func(scalar, path string, reg any)) {
	t.Helper()
	diffRegistryHook = h
	t.Cleanup(func() { diffRegistryHook = nil })
}

// plantReluShift makes relu's forward add 1 in the typed-graph path over
// Rat: the typed graph's values disagree with the IR semantics at the
// relu node.
func plantReluShift(scalar, path string, reg any) {
	r, ok := reg.(*spec.Registry[spec.Rat])
	if !ok || path != "typed-graph" {
		return
	}
	p, _ := r.Lookup("relu")
	bad, orig := *p, p.Forward
	bad.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		y, err := orig(a, xs)
		if err != nil {
			return y, err
		}
		return spec.MapPure(y, func(v spec.Rat) spec.Rat { return v.Add(spec.NewRat(1, 1)) }), nil
	}
	r.Override(&bad)
}

// A planted forward fault on one path is reported at the relu node with
// both exact values, exit 1, one line on stderr.
func TestDiffReportsPlantedForwardFault(t *testing.T) {
	withHook(t, plantReluShift)
	code, out, errs := runCmd("diff", "--graph", examplePath("mlp.ir.json"), "--payload", examplePath("mlp.payload.json"), "--input", examplePath("mlp.input.json"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	// The first relu output (linear row 0: 1/2·1/4 − 1/4·(−3/4) + 0 =
	// 5/16) is 5/16 on the IR path and 21/16 on the planted path.
	for _, w := range []string{"DISAGREE", "first disagreement (rat, forward: ir ~ typed-graph)", "node 2 (relu) element 0", "5/16 ≠ 21/16"} {
		if !strings.Contains(out, w) {
			t.Errorf("stdout lacks %q:\n%s", w, out)
		}
	}
	if !strings.Contains(errs, "ir vs typed-graph disagree over rat on forward at node 2 (relu) element 0: 5/16 vs 21/16") || strings.Count(errs, "\n") != 1 {
		t.Errorf("stderr: %q", errs)
	}
}

// plantMulFlip negates the first contribution of mul's VJP on the tape
// path over every scalar.
func plantMulFlip(scalar, path string, reg any) {
	if path != "tape" {
		return
	}
	switch r := reg.(type) {
	case *spec.Registry[spec.Rat]:
		obligations.FlipVJP(r, "mul")
	case *spec.Registry[spec.F32]:
		obligations.FlipVJP(r, "mul")
	case *spec.Registry[spec.F64]:
		obligations.FlipVJP(r, "mul")
	case *spec.Registry[spec.Binary32]:
		obligations.FlipVJP(r, "mul")
	}
}

// A planted VJP fault on the tape path is reported as a gradient
// disagreement at the input node of the chapter's x⊙x + x⊙x, with both
// values; --json carries the same.
func TestDiffReportsPlantedGradientFault(t *testing.T) {
	withHook(t, plantMulFlip)
	args := []string{"diff", "--graph", examplePath("quad.ir.json"), "--input", examplePath("quad.input.json")}
	code, out, errs := runCmd(args...)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	// x = (3, −3/2): the tape's cotangent of x is 0 (each flipped product
	// sends −δx and δx), the typed graph's 4x = 12.
	if !strings.Contains(out, "first disagreement (rat, gradient: tape ~ typed-graph)") || !strings.Contains(out, "node 0 (input) element 0") || !strings.Contains(out, "0 ≠ 12") {
		t.Errorf("stdout:\n%s", out)
	}
	code, out, _ = runCmd(append(args, "--json")...)
	if code != 1 {
		t.Fatalf("--json: exit %d", code)
	}
	var rep jsonout.DiffDoc
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Agree {
		t.Fatal("--json reports agreement")
	}
	found := false
	for _, c := range rep.Checks {
		if c.Failure != nil && c.Scalar == "rat" && c.What == "gradient" {
			found = true
			if c.Failure.Node != 0 || c.Failure.Element != 0 || c.Failure.LHS != "0" || c.Failure.RHS != "12" {
				t.Errorf("failure %+v", c.Failure)
			}
		}
	}
	if !found {
		t.Errorf("no rat gradient failure in %s", out)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "x.json")
	if err := os.WriteFile(bad, []byte(`{"shape":[3],"values":["1","2","3"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ct := filepath.Join(dir, "c.json")
	if err := os.WriteFile(ct, []byte(`{"shape":[2],"values":["1","2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	quad := examplePath("quad.ir.json")
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"diff"}, "--graph or --onnx is required"},
		{[]string{"diff", "--graph", quad}, "--input is required"},
		{[]string{"diff", "--graph", quad, "--input", bad}, "shape mismatch"},
		{[]string{"diff", "--graph", quad, "--input", examplePath("quad.input.json"), "--scalars", "f16"}, `--scalars: unknown value "f16"`},
		{[]string{"diff", "--graph", quad, "--input", examplePath("quad.input.json"), "--cotangent", ct}, "node 4 (output): shape mismatch: the model declares [], the tensor has [2]"},
		{[]string{"diff", "--graph", filepath.Join(dir, "none.json"), "--input", bad}, "cannot read"},
	}
	for _, c := range cases {
		code, _, errs := runCmd(c.args...)
		if code != 2 || !strings.Contains(errs, c.err) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q (want 2 and %q)", c.args, code, errs, c.err)
		}
	}
}

// --scalars restricts the run; a cotangent file seeds the gradients.
func TestDiffScalarsAndCotangent(t *testing.T) {
	dir := t.TempDir()
	ct := filepath.Join(dir, "c.json")
	if err := os.WriteFile(ct, []byte(`{"shape":[],"values":["-1/2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errs := runCmd("diff", "--graph", examplePath("quad.ir.json"), "--input", examplePath("quad.input.json"), "--scalars", "f32,binary32", "--cotangent", ct)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs, out)
	}
	if strings.Contains(out, "\nrat ") || strings.Contains(out, "f64") || !strings.Contains(out, "binary32~f32") {
		t.Errorf("stdout:\n%s", out)
	}
}

// diff agrees on generated graphs written as files (the replay route the
// rapid cross-path property prints).
func TestDiffGeneratedGraphs(t *testing.T) {
	dir := t.TempDir()
	for seed := uint64(0); seed < 20; seed++ {
		gc, err := casegen.GraphSeed(seed, casegen.GraphOptions{Exact: true, MaxNodes: 15})
		if err != nil {
			t.Fatal(err)
		}
		g, err1 := irsem.EncodeGraph(gc.Graph)
		p, err2 := irsem.EncodePayload(gc.Payload)
		x, err3 := irsem.EncodeTensor(gc.Input)
		if err := errors.Join(err1, err2, err3); err != nil {
			t.Fatal(err)
		}
		paths := map[string][]byte{"g.json": g, "p.json": p, "x.json": x}
		for name, data := range paths {
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		code, out, errs := runCmd("diff", "--graph", filepath.Join(dir, "g.json"), "--payload", filepath.Join(dir, "p.json"), "--input", filepath.Join(dir, "x.json"))
		if code != 0 || !strings.Contains(out, "all paths agree") {
			t.Fatalf("seed %d: exit %d\n%s\n%s\n%s", seed, code, out, errs, gc.Recipe)
		}
	}
}

// plantInvVJPFailure makes inv's VJP fail on the tape path over Rat.
func plantInvVJPFailure(scalar, path string, reg any) {
	r, ok := reg.(*spec.Registry[spec.Rat])
	if !ok || path != "tape" {
		return
	}
	p, _ := r.Lookup("inv")
	bad := *p
	bad.VJP = func(*spec.Attrs, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) ([]spec.Tensor[spec.Rat], error) {
		return nil, errors.New("planted failure")
	}
	r.Override(&bad)
}

// A path that fails in its reverse pass is reported at the user's node:
// in x → linear → relu → inv, inv is IR node 3 but tape node 5 (W and b
// are leaves 1 and 2), and diff must say node 3 (inv).
func TestDiffNamesUserNodeOfFailingPath(t *testing.T) {
	withHook(t, plantInvVJPFailure)
	dir := t.TempDir()
	g := writeTemp(t, dir, "g.json", linearReluInvIR)
	p := writeTemp(t, dir, "p.json", linearReluInvPayload)
	x := writeTemp(t, dir, "x.json", `{"shape":[1],"values":["3"]}`)
	code, out, errs := runCmd("diff", "--graph", g, "--payload", p, "--input", x, "--scalars", "rat")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(errs, "at node 3 (inv)") || !strings.Contains(errs, "node 3 (inv): vjp: planted failure") || strings.Contains(errs, "node 5") {
		t.Errorf("stderr: %q", errs)
	}
}
