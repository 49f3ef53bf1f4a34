package main

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/adapters/harness"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/jsonschema"
	"github.com/tlcheck/tlcheck/schemas"
)

func runCmd(args ...string) (int, string, string) {
	var so, se bytes.Buffer
	code := run(args, &so, &se)
	return code, so.String(), se.String()
}

// flipped is the baseline engine with the sign of every gradient of
// input 0 flipped: a planted fault on every case.
type flipped struct{ harness.Engine }

func (flipped) Name() string { return "flipped" }

func (f flipped) Run(m string, g harness.Graph, xs []harness.Tensor64, cot harness.Tensor64) (harness.Tensor64, []harness.Tensor64, error) {
	y, gs, err := f.Engine.Run(m, g, xs, cot)
	if err == nil && len(gs) > 0 {
		for k := range gs[0].Data {
			gs[0].Data[k] = -gs[0].Data[k] + 1.0/8
		}
	}
	return y, gs, err
}

func TestRun(t *testing.T) {
	old := engineList
	defer func() { engineList = old }()
	engineList = func() []harness.Engine { return []harness.Engine{harness.Self(), flipped{harness.Self()}} }
	tests := []struct {
		args []string
		code int
		out  string // substring of stdout
		err  string // substring of stderr
	}{
		{[]string{"run", "--engine", "tlcheck", "--case", "relu,max_tie,dag_mlp"}, 0, "0 fails", ""},
		{[]string{"run", "--engine", "flipped", "--case", "square"}, 1, "smallest: element 0: x0=[1][1] cot=[1][3/4]", "3 rows fail"},
		{[]string{"run", "--engine", "tlcheck", "--case", "square", "--json"}, 0, `"format": "tlcheck.adapters.v1"`, ""},
		{[]string{"run", "--engine", "tlcheck", "--case", "square", "--format", "json"}, 0, `"format": "tlcheck.adapters.v1"`, "adapters run: --format json is deprecated: use --json\n"},
		{[]string{"run", "--engine", "tlcheck", "--case", "square", "--format", "text"}, 0, "0 fails", "--format text is deprecated"},
		{[]string{"run", "--format", "text", "--json"}, 2, "", "give --json alone"},
		{[]string{"run", "--engine", "nope"}, 2, "", `unknown engine "nope" (known: flipped, jax, onnxruntime, tlcheck, torch, python)`},
		{[]string{"run", "--engine", "torch,nope"}, 2, "", `unknown engine "nope"`},
		{[]string{"run", "--timeout", "0s"}, 2, "", "--timeout and --memory must be positive"},
		{[]string{"run", "--case", "nope"}, 2, "", `unknown case "nope"`},
		{[]string{"run", "--format", "xml"}, 2, "", "neither text nor json"},
		{[]string{"run", "--help"}, 0, "usage: tlcheck adapters run [flags]", ""},
		{[]string{"cases", "--case", "relu"}, 0, "relu\trelu\tx0=[6][1 -1/2 0 3 -3 1/4] cot=[6][3/4 -5/4 1/2 2 1/4 -1]", ""},
		{[]string{"run", "--engine", "tlcheck", "--case", "none", "--random", "60", "--seed", "3"}, 0, "0 fails; 0 cases skipped", ""},
		{[]string{"run", "--engine", "flipped", "--case", "none", "--random", "5"}, 1, "flipped tape rand-1-0 path_sum (fails): smallest: 1 node(s): v1 = ", "rows fail"},
		{[]string{"run", "--engine", "tlcheck", "--case", "none"}, 0, "0 rows", ""},
		{[]string{"run", "--random", "100001"}, 2, "", "--random: 100001 is not in [0, 100000]"},
		{[]string{"run", "--random", "-1"}, 2, "", "--random: -1 is not in [0, 100000]"},
		{[]string{"cases", "--random", "x"}, 2, "", "--random"},
		{[]string{"cases", "--case", "none", "--random", "2", "--seed", "5"}, 0, "rand-5-1\t", ""},
		{[]string{"cases", "--case", "relu", "--random", "1"}, 0, "relu\trelu\t", ""},
		{[]string{"frob"}, 2, "", "unknown subcommand"},
		{nil, 2, "", "missing subcommand"},
	}
	for _, tc := range tests {
		code, so, se := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(so, tc.out) || !strings.Contains(se, tc.err) || (tc.err != "" && strings.Count(se, "\n") != 1) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, so, se)
		}
	}
}

// TestRandomCases: tlcheck adapters cases --random N --seed S prints N
// cases (name, primitives, inputs, graph), byte-identical on every run
// and whatever GOMAXPROCS, with the fixed cases before them unless
// --case none.
func TestRandomCases(t *testing.T) {
	_, a, _ := runCmd("cases", "--case", "none", "--random", "50", "--seed", "9")
	old := runtime.GOMAXPROCS(1)
	_, b, _ := runCmd("cases", "--case", "none", "--random", "50", "--seed", "9")
	runtime.GOMAXPROCS(old)
	if a != b || strings.Count(a, "\trand-") != 0 || strings.Count(a, "\n\tgraph: ") != 50 || !strings.HasPrefix(a, "rand-9-0\t") || !strings.Contains(a, "\nrand-9-49\t") {
		t.Errorf("cases --random 50:\n%s\n---\n%s", a, b)
	}
	_, c, _ := runCmd("cases", "--case", "relu,square", "--random", "3")
	if !strings.HasPrefix(c, "relu\t") || !strings.Contains(c, "\nsquare\t") || !strings.Contains(c, "\nrand-1-2\t") {
		t.Errorf("cases --case relu,square --random 3:\n%s", c)
	}
}

// TestJSONSchema: the JSON document of a passing and of a failing run
// validates against schemas/adapters.v1.json, and its counts match.
func TestJSONSchema(t *testing.T) {
	old := engineList
	defer func() { engineList = old }()
	engineList = func() []harness.Engine { return []harness.Engine{harness.Self(), flipped{harness.Self()}} }
	data, err := schemas.Lookup(jsonout.KindAdapters)
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.Compile(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		engine string
		code   int
		fails  int
	}{{"tlcheck", 0, 0}, {"flipped", 1, 3}} {
		code, so, _ := runCmd("run", "--engine", tc.engine, "--case", "square,max_tie", "--json")
		if code != tc.code {
			t.Errorf("%s: exit %d", tc.engine, code)
		}
		if err := s.Validate([]byte(so)); err != nil {
			t.Errorf("%s: %v\n%s", tc.engine, err, so)
		}
		var doc jsonout.AdaptersDoc
		if err := json.Unmarshal([]byte(so), &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Fails < tc.fails || doc.Holds != (tc.fails == 0) || doc.Format != "tlcheck.adapters.v1" {
			t.Errorf("%s: fails %d, holds %v, format %s", tc.engine, doc.Fails, doc.Holds, doc.Format)
		}
	}
}

// TestEngineCmd: --engine-cmd runs a protocol engine written outside Go
// (harness/testdata/tiny_engine.py) like any other: its rows, a planted
// fault's exit 1, a protocol version mismatch's one line and exit 2.
func TestEngineCmd(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not on $PATH: --engine-cmd's test engine is a Python script (CI has python3)")
	}
	eng := py + " ../../harness/testdata/tiny_engine.py"
	for _, tc := range []struct {
		args     []string
		code     int
		out, err string
	}{
		{[]string{"run", "--engine-cmd", eng, "--case", "neg,exp"}, 0, "tiny (tiny 1 (tlcheck.engine.v1), machines py)", ""},
		{[]string{"run", "--engine-cmd", eng + " vjp-scale", "--case", "exp"}, 1, "tiny py exp vjp (fails)", "rows fail"},
		{[]string{"run", "--engine", "tlcheck", "--engine-cmd", eng, "--case", "neg"}, 0, "tlcheck (github.com", ""},
		{[]string{"run", "--engine-cmd", eng + " version"}, 2, "", `handshake: the engine speaks protocol "tlcheck.engine.v0"`},
	} {
		code, so, se := runCmd(tc.args...)
		if code != tc.code || !strings.Contains(so, tc.out) || !strings.Contains(se, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", tc.args, code, so, se)
		}
		if tc.code == 2 && strings.Count(se, "\n") != 1 {
			t.Errorf("%v: stderr is not one line: %q", tc.args, se)
		}
	}
}
