package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// updateDigests rewrites testdata/digests.txt from this run's outputs:
//
//	go test ./cmd/tlcheck -run TestOutputDigests -update-digests
//
// Only for a change that means to change output bytes; the commit says
// which digests moved and why.
var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/digests.txt from this run")

// digestNormalisers remove what legitimately differs between two runs of
// the same command on the same inputs: wall-clock times and the paths of
// temporary directories. Nothing else is touched, so a changed number,
// order, message or byte in any output changes its digest.
var digestNormalisers = []struct {
	re   *regexp.Regexp
	repl string
}{
	// t.TempDir paths (…/TestOutputDigestsNNN/001): one placeholder.
	{regexp.MustCompile(regexp.QuoteMeta(os.TempDir()) + `/Test[A-Za-z0-9_]*/[0-9]+`), "$$TMP"},
	// JSON wall-clock fields.
	{regexp.MustCompile(`"(seconds|wall_seconds|elapsed_seconds)": ?[0-9.eE+-]+`), `"$1": 0`},
	// The environment a message reports.
	{regexp.MustCompile(`GOMAXPROCS [0-9]+`), "GOMAXPROCS N"},
	// SHA-256 fields: a file written under a temporary directory (import's
	// onnx-map.json names the model's path) hashes differently each run;
	// every file written is digested on its own, after normalising.
	{regexp.MustCompile(`"sha256": "[0-9a-f]{64}"`), `"sha256": "H"`},
	// The same in JUnit's system-out ("sha256 <hex>"): the certify stage's
	// items name each file's hash; the files are digested on their own.
	{regexp.MustCompile(`sha256 [0-9a-f]{64}`), "sha256 H"},
	// binary32 NaN payloads (exponent all ones, fraction non-zero) in
	// recorded bits: when two operands are NaN, IEEE 754 does not say
	// whose payload the result carries, and the compiled code decides (the
	// race build orders the operands of the same float32 additions
	// differently, so refinement certificates record other NaN bits). Every
	// NaN is one placeholder; ±∞ (0x7f800000, 0xff800000) and every
	// finite value keep their bits.
	{regexp.MustCompile(`"0x[7f]f(8[0-9a-f]{4}[1-9a-f]|8[0-9a-f]{3}[1-9a-f][0-9a-f]|8[0-9a-f]{2}[1-9a-f][0-9a-f]{2}|8[0-9a-f][1-9a-f][0-9a-f]{3}|8[1-9a-f][0-9a-f]{4}|[9a-f][0-9a-f]{5})"`), `"NaN32"`},
	// JUnit time attributes.
	{regexp.MustCompile(`time="[0-9.eE+-]+"`), `time="0"`},
	// The gate table's seconds column: "stage  items  failed  seconds  verdict".
	{regexp.MustCompile(`(?m)^(check|refine|certify|verify|cuda|lean) +([0-9]+) +([0-9]+) +[0-9.]+ +`), "$1 $2 $3 T "},
	// The Markdown report's seconds column.
	{regexp.MustCompile(`(?m)^\| (check|refine|certify|verify|cuda|lean) \| ([0-9]+) \| ([0-9]+) \| [0-9.]+ \|`), "| $1 | $2 | $3 | T |"},
}

func normaliseDigest(b []byte) []byte {
	for _, n := range digestNormalisers {
		b = n.re.ReplaceAll(b, []byte(n.repl))
	}
	return b
}

func digest(b []byte) string {
	s := sha256.Sum256(normaliseDigest(b))
	return hex.EncodeToString(s[:])
}

// TestOutputDigests pins the bytes of what users see and keep: every
// command's stdout, stderr and exit code (text and --json), the files
// certify, gate, import, view and lean emit write, and every command's
// usage text, against SHA-256 digests stored in testdata/digests.txt. It
// exists so that moving code between packages (issue 29) is provably
// behaviour-preserving: a move that changes one byte of any output fails
// here, naming the output. Times and temporary paths are normalised
// (digestNormalisers) and nothing else.
func TestOutputDigests(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: runs the full default gate")
	}
	dir := t.TempDir()
	got := map[string]string{}
	record := func(name string, b []byte) {
		if _, dup := got[name]; dup {
			t.Fatalf("digest name %q recorded twice", name)
		}
		got[name] = digest(b)
		if d := os.Getenv("TLCHECK_DIGEST_DUMP"); d != "" {
			// Debugging a changed digest: the normalised bytes, one file each.
			os.WriteFile(filepath.Join(d, strings.NewReplacer("/", "_", " ", "_").Replace(name)), normaliseDigest(b), 0o644)
		}
	}
	// files records every file under root, by path relative to root.
	files := func(name, root string) {
		n := 0
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			record(name+"/"+filepath.ToSlash(rel), data)
			n++
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if n == 0 {
			t.Fatalf("%s: no files under %s", name, root)
		}
	}
	run := func(name string, args ...string) {
		code, out, errs := runCmd(args...)
		record(name+" exit", []byte(fmt.Sprint(code)))
		record(name+" stdout", []byte(out))
		record(name+" stderr", []byte(errs))
	}
	p := func(name string) string { return filepath.Join(dir, name) }

	quad, qin := examplePath("quad.ir.json"), examplePath("quad.input.json")
	mlp := irExamples[2].args("")[1:]
	om, od := onnxFixture(t)
	bm, bd := onnxFixture(t, 3.5, 0)
	goodGrads := writeTemp(t, dir, "good-grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2.0,0.0]}}}`)
	badGrads := writeTemp(t, dir, "bad-grads.json", `{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[3.0,"+Inf"]}}}`)

	// The main job on its embedded defaults, with every report it writes.
	run("gate", "gate", "--out", p("gate"), "--junit", p("gate.junit.xml"), "--report", p("gate-report"))
	files("gate-certs", p("gate"))
	files("gate-junit", p("gate.junit.xml"))
	files("gate-report", p("gate-report"))
	run("gate-json", "gate", "--json", "--out", p("gate-json"), "--cases", "3", "--graphs", "2", "--cert-cases", "2", "--seed", "9")
	run("gate-fails", "gate", "--out", p("gate-fails"), "--cases", "3", "--graphs", "1", "--cert-cases", "2", "--plant-provider-bug", "sum")
	run("gate-planted", "gate", "--out", p("gate-planted"), "--cases", "3", "--graphs", "1", "--cert-cases", "2", "--plant-fault", "tanh")

	// Every reporting command, text and JSON (the cases of
	// TestJSONOutputsMatchSchemas, whose inputs are fixed).
	cases := []struct {
		name string
		args []string
	}{
		{"check", []string{"check", "--ops", "mul,tanh,add", "--cases", "4", "--graphs", "2", "--seed", "7"}},
		{"check-all", []string{"check", "--cases", "5", "--graphs", "3", "--seed", "11"}},
		{"check-fails", []string{"check", "--ops", "mul", "--cases", "4", "--graphs", "0", "--plant-fault", "mul"}},
		{"check-case", []string{"check", "--ops", "mul", "--case", "3", "--graphs", "0"}},
		{"certify", []string{"certify", "--out", p("certs"), "--cases", "2", "--seed", "5"}},
		{"verify", []string{"verify", p("certs")}},
		{"diff", []string{"diff", "--graph", quad, "--input", qin}},
		{"diff-mlp", append([]string{"diff"}, mlp...)},
		{"eval-rat", []string{"eval", "--graph", quad, "--input", qin, "--all"}},
		{"eval-interval", append(append([]string{"eval"}, mlp...), "--scalar", "interval", "--all")},
		{"eval-binary32", []string{"eval", "--graph", quad, "--input", qin, "--scalar", "binary32"}},
		{"grad", append([]string{"grad"}, mlp...)},
		{"grad-f64", []string{"grad", "--graph", quad, "--input", qin, "--scalar", "f64"}},
		{"plan", []string{"plan", "--graph", irExamples[2].graph}},
		{"plan-fast", []string{"plan", "--graph", irExamples[2].graph, "--profile", "fast_cpu"}},
		{"tape-example", []string{"tape-example"}},
		{"tape-example-f32", []string{"tape-example", "--scalar", "f32", "--detach"}},
		{"compare", []string{"compare", "--onnx", om, "--data", od}},
		{"compare-fails", []string{"compare", "--onnx", bm, "--data", bd}},
		{"import", []string{"import", "--onnx", om, "--out", p("imported")}},
		{"grad-onnx", []string{"grad", "--onnx", om, "--data", od}},
		{"grad-onnx-interval", []string{"grad", "--onnx", om, "--data", od, "--scalar", "interval", "--cotangent", filepath.Join(filepath.Dir(om), "cotangent.pb")}},
		{"eval-onnx", []string{"eval", "--onnx", om, "--data", od}},
		{"plan-onnx", []string{"plan", "--onnx", om}},
		{"diff-onnx", []string{"diff", "--onnx", om, "--data", od, "--scalars", "rat"}},
		{"compare-grad", []string{"compare-grad", "--onnx", om, "--data", od, "--grads", goodGrads}},
		{"compare-grad-fails", []string{"compare-grad", "--onnx", om, "--input", filepath.Join(od, "input_0.pb"), "--grads", badGrads}},
		{"certify-onnx", []string{"certify", "--onnx", om, "--data", od, "--out", p("model-certs"), "--cases", "2"}},
		{"verify-onnx", []string{"verify", p("model-certs")}},
	}
	for _, c := range cases {
		// JSON first: the text run then finds the directories it wrote,
		// so it certifies into a fresh one.
		jargs := append([]string{c.args[0], "--json"}, c.args[1:]...)
		for i, a := range jargs {
			if i > 0 && jargs[i-1] == "--out" {
				jargs[i] = a + "-json"
			}
		}
		if c.name == "verify" || c.name == "verify-onnx" {
			jargs[len(jargs)-1] += "-json"
		}
		run(c.name+" --json", jargs...)
		run(c.name, c.args...)
	}
	files("certify", p("certs"))
	files("certify-onnx", p("model-certs"))
	files("import", p("imported"))

	// Pictures: each view, each format.
	for _, what := range []string{"tape", "grads", "trace", "diff"} {
		for _, format := range []string{"html", "svg", "dot"} {
			name := "view-" + what + "." + format
			run(name, append(append([]string{"view"}, mlp...), "--what", what, "--format", format, "--out", p(name))...)
			files(name, p(name))
		}
	}
	run("view-onnx", "view", "--onnx", om, "--data", od, "--what", "grads", "--out", p("view-onnx.html"))
	files("view-onnx", p("view-onnx.html"))

	// Certificates as Lean modules.
	run("lean-emit", "lean", "emit", "--certs", p("certs"), "--out", p("lean-emit"))
	if fi, err := os.Stat(p("lean-emit")); err == nil && fi.IsDir() {
		files("lean-emit", p("lean-emit"))
	}

	// Usage: the command list and every command's help.
	run("help", "help")
	names := make([]string, 0, len(commands()))
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		run("help "+n, "help", n)
	}

	compareDigests(t, got)
}

func compareDigests(t *testing.T, got map[string]string) {
	t.Helper()
	path := filepath.Join("testdata", "digests.txt")
	names := make([]string, 0, len(got))
	for n := range got {
		names = append(names, n)
	}
	sort.Strings(names)
	if *updateDigests {
		var b bytes.Buffer
		b.WriteString("# SHA-256 of normalised outputs (cmd/tlcheck/digests_test.go); regenerate with -update-digests\n")
		for _, n := range names {
			fmt.Fprintf(&b, "%s  %s\n", got[n], n)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update-digests once to create it)", err)
	}
	want := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("%s: malformed line %q", path, line)
		}
		want[name] = sum
	}
	for _, n := range names {
		if w, ok := want[n]; !ok {
			t.Errorf("%s: a new output, not in %s", n, path)
		} else if w != got[n] {
			t.Errorf("%s: bytes changed (digest %s, stored %s)", n, got[n][:12], w[:12])
		}
	}
	for n := range want {
		if _, ok := got[n]; !ok {
			t.Errorf("%s: stored in %s but not produced", n, path)
		}
	}
}

// TestDigestNormalisersMaskOnlyNoise: two outputs that differ only in a
// time or a temporary path digest alike; a changed count, verdict or
// value digests differently (the digest test catches a planted change).
func TestDigestNormalisersMaskOnlyNoise(t *testing.T) {
	tmp := os.TempDir() + "/TestOutputDigests123/001"
	cases := []struct {
		a, b string
		same bool
	}{
		{"check    457    0         0.72     holds\n", "check    457    0         1.94     holds\n", true},
		{"check    457    0         0.72     holds\n", "check    456    0         0.72     holds\n", false},
		{"check    457    0         0.72     holds\n", "check    457    0         0.72     fails\n", false},
		{`{"seconds": 0.1, "holds": true}`, `{"seconds": 2.5e-05, "holds": true}`, true},
		{`{"seconds": 0.1, "worst_ratio": 0.5}`, `{"seconds": 0.1, "worst_ratio": 0.25}`, false},
		{`<testcase time="0.12"/>`, `<testcase time="3"/>`, true},
		{"certificates in " + tmp + "/gate verified", "certificates in " + os.TempDir() + "/TestOutputDigests9/004/gate verified", true},
		{"certificates in " + tmp + "/gate verified", "certificates in " + tmp + "/gate2 verified", false},
		{"| verify | 75 | 0 | 0.13 |", "| verify | 75 | 0 | 9.99 |", true},
		{"| verify | 75 | 0 | 0.13 |", "| verify | 75 | 1 | 0.13 |", false},
		{"element 0 is -323607.44 (GOMAXPROCS 2)", "element 0 is -323607.44 (GOMAXPROCS 1)", true},
		{"element 0 is -323607.44 (GOMAXPROCS 2)", "element 0 is -323607.45 (GOMAXPROCS 2)", false},
		{`"bits": ["0xffe59464"]`, `"bits": ["0x7fdde581"]`, true},
		{`"bits": ["0x7fc00000"]`, `"bits": ["0xff800001"]`, true},
		{`"bits": ["0x7f800000"]`, `"bits": ["0xff800000"]`, false},
		{`"bits": ["0x7f800000"]`, `"bits": ["0x7fc00000"]`, false},
		{`"bits": ["0x7f7fffff"]`, `"bits": ["0x7fc00000"]`, false},
		{`"bits": ["0x3f800000"]`, `"bits": ["0x3f800001"]`, false},
		{"<system-out>sha256 3449193b581cde79e921c3fe75a677743cffbb3bed26935e8cc57bc2b3869cae</system-out>", "<system-out>sha256 74c5f76a517a41133b046fbf8463fd166f219dbeb32f84b63311bb1a74e913b6</system-out>", true},
	}
	for i, c := range cases {
		if same := digest([]byte(c.a)) == digest([]byte(c.b)); same != c.same {
			t.Errorf("case %d: %q vs %q: same digest %v, want %v", i, c.a, c.b, same, c.same)
		}
	}
}
