package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/internal/cli"
)

// mainEnv, set in a child process's environment, makes the test binary
// run tlcheck's main on its arguments instead of the tests: the tests
// that need a real stdout (/dev/full) run tlcheck as a process.
const mainEnv = "TLCHECK_TEST_RUN_MAIN"

// TestMain runs the tests and then fails the run if they left anything
// in the source tree: every test writes under t.TempDir().
func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	// The tests choose their shards themselves: a test run inside a
	// sharded batch job (Bazel, a Kubernetes Indexed Job) must not make
	// every in-process certify a shard.
	for _, v := range []string{certificates.EnvShardIndex, certificates.EnvTotalShards, certificates.EnvJobIndex, certificates.EnvShardStatus} {
		os.Unsetenv(v)
	}
	before, err := treeNames(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	code := m.Run()
	after, err := treeNames(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if added := difference(after, before); len(added) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: the tests left files in the source tree (write under t.TempDir()): %v\n", added)
		code = 1
	}
	os.Exit(code)
}

// treeNames lists every path under root.
func treeNames(root string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		names = append(names, p)
		return nil
	})
	sort.Strings(names)
	return names, err
}

func difference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// flagLine matches one flag line of a usage text: "  --NAME [TYPE]  …".
var flagLine = regexp.MustCompile(`(?m)^  --([a-z0-9-]+)(?: [A-Za-z]+)?  +(.*?)(?: \(default: ([^()]*)\))?$`)

// TestHelpListsEveryFlag walks every command's flag set — the one its run
// function parses — and fails if its help omits a flag, its default or
// its description, lists a flag the command does not have, or a flag's
// description is not one non-empty line.
func TestHelpListsEveryFlag(t *testing.T) {
	for name, c := range commands() {
		code, help, errs := runCmd("help", name)
		if code != 0 || errs != "" {
			t.Errorf("help %s: exit %d, stderr %q", name, code, errs)
			continue
		}
		fs := cli.NewFlags(name)
		if c.run != nil {
			var err error
			if fs, err = commandFlags(name, c); err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
		}
		for _, p := range helpProblems(help, fs) {
			t.Errorf("help %s: %s\n%s", name, p, help)
		}
	}
}

// helpProblems lists what a help text gets wrong about a flag set: a flag
// it omits, a description or default that differs from the flag's, a
// flag it lists that the set lacks, a description that is not one
// non-empty line.
func helpProblems(help string, fs *flag.FlagSet) []string {
	var out []string
	listed := map[string][2]string{}
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		if _, dup := listed[m[1]]; dup {
			out = append(out, "--"+m[1]+" listed twice")
		}
		listed[m[1]] = [2]string{m[2], m[3]}
	}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Usage == "" || strings.Contains(f.Usage, "\n") {
			out = append(out, fmt.Sprintf("--%s: the description must be one non-empty line, got %q", f.Name, f.Usage))
		}
		got, ok := listed[f.Name]
		if !ok {
			out = append(out, "omits --"+f.Name)
			return
		}
		delete(listed, f.Name)
		if _, usage := flag.UnquoteUsage(f); got[0] != usage {
			out = append(out, fmt.Sprintf("--%s: description %q, want %q", f.Name, got[0], usage))
		}
		// The default as the user would type it: the flag's DefValue,
		// "none" for an empty string (no default of ours needs quoting);
		// a required flag (described "… (required)", no default) shows
		// none.
		want := f.DefValue
		switch {
		case want == "" && strings.HasSuffix(f.Usage, "(required)"):
		case want == "":
			want = "none"
		}
		if got[1] != want {
			out = append(out, fmt.Sprintf("--%s: default %s, want %s", f.Name, got[1], want))
		}
	})
	for name := range listed {
		out = append(out, "lists --"+name+", which the command does not have")
	}
	sort.Strings(out)
	return out
}

// TestHelpProblemsCatchesPlantedFaults: helpProblems finds each fault
// planted in gate's real help text, and none in the text itself.
func TestHelpProblemsCatchesPlantedFaults(t *testing.T) {
	_, help, _ := runCmd("help", "gate")
	fs, err := commandFlags("gate", commands()["gate"])
	if err != nil {
		t.Fatal(err)
	}
	if p := helpProblems(help, fs); len(p) != 0 {
		t.Fatalf("the real help has problems: %v", p)
	}
	line := func(name string) string {
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(l, "  --"+name+" ") {
				return l + "\n"
			}
		}
		t.Fatalf("no --%s line", name)
		return ""
	}
	cases := []struct {
		name  string
		plant func(string) string
		want  string
	}{
		{"omitted flag", func(h string) string { return strings.Replace(h, line("report"), "", 1) }, "omits --report"},
		{"wrong default", func(h string) string {
			return strings.Replace(h, "(default: 100)", "(default: 10)", 1)
		}, "--cases: default 10, want 100"},
		{"stale description", func(h string) string {
			return strings.Replace(h, "cases per certificate", "cases per cert", 1)
		}, `--cert-cases: description "cases per cert", want "cases per certificate"`},
		{"flag the command lacks", func(h string) string {
			return h + "  --frob int  a flag nobody defined (default: 0)\n"
		}, "lists --frob, which the command does not have"},
		{"flag listed twice", func(h string) string { return h + line("seed") }, "--seed listed twice"},
	}
	for _, c := range cases {
		got := helpProblems(c.plant(help), fs)
		if !slices.Contains(got, c.want) {
			t.Errorf("%s: problems %q, want %q among them", c.name, got, c.want)
		}
	}
	// A multi-line description is caught in the flag set itself.
	bad := cli.NewFlags("x")
	bad.Int("n", 1, "two\nlines")
	var b bytes.Buffer
	_ = cli.WriteUsage(&b, "tlcheck x", "x", bad)
	if got := helpProblems(b.String(), bad); !slices.Contains(got, `--n: the description must be one non-empty line, got "two\nlines"`) {
		t.Errorf("multi-line description: %q", got)
	}
}

// TestHelpForms: `tlcheck CMD -h`, `--help`, `-help` and `tlcheck help CMD`
// print the same usage on stdout and exit 0 with nothing on stderr, for
// every command; the flags named in the issue appear.
func TestHelpForms(t *testing.T) {
	must := map[string][]string{
		"gate":  {"--report string", "--graphs int", "--plant-fault", "--plant-provider-bug", "--junit", "--out", "(default: tlcheck-certs)"},
		"check": {"--graphs int", "all, none, or a comma-separated list of primitives", "--graph-obligations", "--case int"},
	}
	for name := range commands() {
		_, want, _ := runCmd("help", name)
		if !strings.HasPrefix(want, "usage: tlcheck "+name) {
			t.Errorf("help %s: %q", name, want)
		}
		for _, s := range must[name] {
			if !strings.Contains(want, s) {
				t.Errorf("help %s lacks %q:\n%s", name, s, want)
			}
		}
		for _, h := range []string{"-h", "--help", "-help"} {
			code, out, errs := runCmd(name, h)
			if code != 0 || out != want || errs != "" {
				t.Errorf("%s %s: exit %d, stderr %q, stdout differs from help %s: %q", name, h, code, errs, name, out)
			}
		}
	}
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}, {"-help"}} {
		if code, out, errs := runCmd(args...); code != 0 || !strings.Contains(out, "commands:") || errs != "" {
			t.Errorf("%v: exit %d %q %q", args, code, out, errs)
		}
	}
}

// TestNoArguments: a bare tlcheck prints the usage on stderr and exits 2.
func TestNoArguments(t *testing.T) {
	code, out, errs := runCmd()
	if code != 2 || out != "" || !strings.Contains(errs, "commands:") || !strings.HasSuffix(errs, "tlcheck: no command given (run 'tlcheck help')\n") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// TestVersionCommand: version, --version and -version print the tool
// version, the module and the revision lines of the running binary's
// build information.
func TestVersionCommand(t *testing.T) {
	_, first, _ := runCmd("version")
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		code, out, errs := runCmd(args...)
		if code != 0 || errs != "" || out != first {
			t.Errorf("%v: exit %d %q %q", args, code, out, errs)
		}
	}
	lines := strings.Split(strings.TrimSuffix(first, "\n"), "\n")
	if len(lines) < 3 || lines[0] != "tlcheck 0.1.0" || !strings.HasPrefix(lines[1], "module ") || !strings.HasPrefix(lines[2], "revision ") {
		t.Fatalf("version:\n%s", first)
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" && !strings.Contains(lines[1], bi.Main.Path) {
		t.Errorf("module line %q lacks %s", lines[1], bi.Main.Path)
	}
}

// TestFlagErrorsNameTheFlag: through the commands, a flag parse error is
// one line naming --FLAG and why.
func TestFlagErrorsNameTheFlag(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"check", "--seed", "abc"}, "tlcheck: --seed: not an integer: abc\n"},
		{[]string{"check", "-seed", "abc"}, "tlcheck: --seed: not an integer: abc\n"},
		{[]string{"gate", "--cases", "ten"}, "tlcheck: --cases: not an integer: ten\n"},
		{[]string{"certify", "--seed", "-3"}, "tlcheck: --seed: not an unsigned integer (must be ≥ 0): -3\n"},
		{[]string{"eval", "--all=maybe"}, "tlcheck: --all: not a boolean (want true or false): maybe\n"},
		{[]string{"grad", "--graph"}, "tlcheck: --graph: missing value\n"},
		{[]string{"plan", "--nope"}, "tlcheck: plan: unknown flag --nope (run 'tlcheck help plan')\n"},
		{[]string{"verify", "a", "b"}, "tlcheck: verify: unexpected argument \"b\"\n"},
		{[]string{"--nope"}, "tlcheck: unknown flag \"--nope\" before the command (run 'tlcheck help')\n"},
		{[]string{"check", "--ops", ""}, "tlcheck: --ops: empty value (give a comma-separated list)\n"},
		{[]string{"check", "--ops", "mul,"}, "tlcheck: --ops: empty element 1 in mul,\n"},
		{[]string{"certify", "--out", "x", "--ops", ""}, "tlcheck: --ops: empty value (give a comma-separated list)\n"},
		{[]string{"certify", "--out", "x", "--ops", "none"}, "tlcheck: --ops none: certify needs at least one primitive (all, or a comma-separated list)\n"},
		{[]string{strings.Repeat("x", 5000)}, "tlcheck: unknown command \"" + strings.Repeat("x", 40) + "… (5000 bytes)\" (run 'tlcheck help')\n"},
		{[]string{"help", "frob\nok"}, "tlcheck: unknown command \"frob\\nok\" (run 'tlcheck help')\n"},
	}
	for _, c := range cases {
		code, out, errs := runCmd(c.args...)
		if code != 2 || errs != c.want || out != "" {
			t.Errorf("%q: exit %d, stderr %q, want %q (stdout %q)", c.args, code, errs, c.want, out)
		}
	}
}

// failAfter is a stdout that fails every write beyond its first limit
// bytes, as a full disk does.
type failAfter struct{ limit, n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n+len(p) > w.limit {
		k := w.limit - w.n
		w.n = w.limit
		return k, errors.New("no space left on device")
	}
	w.n += len(p)
	return len(p), nil
}

// everyCommand gives, for each command, arguments that succeed and print
// something; it fails the test when a command has none, so a new command
// cannot escape the stdout-error test.
func everyCommand(t *testing.T) map[string][]string {
	dir := t.TempDir()
	certs := filepath.Join(dir, "certs")
	if code, _, errs := runCmd("certify", "--out", certs, "--cases", "1", "--ops", "mul", "--providers", "reference"); code != 0 {
		t.Fatalf("certify: %s", errs)
	}
	shard := filepath.Join(dir, "shard")
	if code, _, errs := runCmd("certify", "--out", shard, "--cases", "1", "--ops", "mul", "--providers", "reference", "--shard", "0/1"); code != 0 {
		t.Fatalf("certify --shard: %s", errs)
	}
	quad := irExamples[0]
	om, od := onnxFixture(t)
	m := map[string][]string{
		"import":         {"import", "--force", "--onnx", om, "--out", filepath.Join(dir, "imported")},
		"compare":        {"compare", "--onnx", om, "--data", od},
		"gate":           {"gate", "--out", filepath.Join(dir, "gate-certs"), "--cases", "1", "--graphs", "1", "--cert-cases", "1"},
		"help":           {"help"},
		"version":        {"version"},
		"certify":        {"certify", "--force", "--out", filepath.Join(dir, "c2"), "--cases", "1", "--ops", "mul", "--providers", "reference"},
		"verify":         {"verify", certs},
		"check":          {"check", "--ops", "mul", "--cases", "2", "--graphs", "0"},
		"quickstart-mlp": {"quickstart-mlp", "--steps", "1"},
		"tape-example":   {"tape-example"},
		"eval":           quad.args("eval"),
		"grad":           quad.args("grad"),
		"diff":           quad.args("diff", "--scalars", "rat"),
		"plan":           {"plan", "--graph", quad.graph},
		"adapters":       {"adapters", "--help"},
		"view":           {"view", "--graph", quad.graph, "--format", "dot", "--out", "-"},
		"lean":           {"lean", "emit", "--certs", certs, "--out", filepath.Join(dir, "lean-certs")},
		"merge":          {"merge", filepath.Join(dir, "merged"), shard},
		"compare-grad":   quad.args("compare-grad", "--grads", quadGrads(t, dir)),
		"tensor":         {"tensor", filepath.Join(od, "input_0.pb")},
	}
	for name := range commands() {
		if _, ok := m[name]; !ok {
			t.Fatalf("command %s has no entry in everyCommand", name)
		}
	}
	return m
}

// TestStdoutWriteFailureExits2: on every command, a stdout that fails —
// at the first byte or halfway — makes it exit 2 with one line on stderr,
// even when the command would otherwise exit 0 or 1; a gate run that
// exits so leaves no certificate directory it created.
func TestStdoutWriteFailureExits2(t *testing.T) {
	cmds := everyCommand(t)
	cmds["check-failing"] = []string{"check", "--ops", "mul", "--cases", "5", "--graphs", "0", "--plant-fault", "mul"}
	cmds["gate-json"] = append(slices.Clone(cmds["gate"]), "--json")
	cmds["gate-reports"] = append(slices.Clone(cmds["gate"]), "--junit", cmds["gate"][2]+".xml", "--report", cmds["gate"][2]+".report")
	for name, args := range cmds {
		var full, errb bytes.Buffer
		want := 0
		if name == "check-failing" {
			want = 1
		}
		if name == "merge" {
			os.RemoveAll(args[1]) // OUT, created afresh by each run
		}
		if code := run(args, &full, &errb); code != want || full.Len() == 0 {
			t.Errorf("%s: baseline exit %d (%s), %d bytes", name, code, errb.String(), full.Len())
			continue
		}
		for _, limit := range []int{0, full.Len() / 2} {
			if name == "merge" {
				os.RemoveAll(args[1])
			}
			if strings.HasPrefix(name, "gate") {
				os.RemoveAll(args[2]) // --out, created afresh by each run
				os.RemoveAll(args[2] + ".xml")
				os.RemoveAll(args[2] + ".report")
			}
			var errb bytes.Buffer
			code := run(args, &failAfter{limit: limit}, &errb)
			errs := errb.String()
			if code != 2 || !strings.Contains(errs, "cannot write the output: no space left on device") || strings.Count(errs, "\n") != 1 {
				t.Errorf("%s (stdout fails after %d bytes): exit %d, stderr %q", name, limit, code, errs)
			}
			if strings.HasPrefix(name, "gate") {
				for _, p := range []string{args[2], args[2] + ".xml", args[2] + ".report"} {
					if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("%s: exit 2 left %s behind (%v)", name, p, err)
					}
				}
			}
			if name == "merge" {
				if _, err := os.Stat(args[1]); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("merge: exit 2 left OUT %s behind (%v)", args[1], err)
				}
			}
		}
	}
}

// runProcess runs tlcheck as a process (the test binary in main mode) in
// dir with stdout going to the file stdoutPath.
func runProcess(t *testing.T, dir, stdoutPath string, args ...string) (int, string) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(stdoutPath, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no %s: %v", stdoutPath, err)
	}
	defer out.Close()
	var errb bytes.Buffer
	cmd := exec.Command(exe, args...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, out, &errb
	cmd.Env = append(os.Environ(), mainEnv+"=1")
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errb.String()
}

// TestDevFull: `tlcheck … > /dev/full` exits 2 as a real process (the
// issue's `check > /dev/full` exited 0), and the gate leaves no
// tlcheck-certs/ behind.
func TestDevFull(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"check", "--ops", "mul", "--cases", "2", "--graphs", "0"},
		{"version"},
		{"help", "gate"},
		{"gate", "--cases", "1", "--graphs", "1", "--cert-cases", "1"},
	} {
		code, errs := runProcess(t, dir, "/dev/full", args...)
		if code != 2 || errs != "tlcheck: cannot write the output: write /dev/stdout: no space left on device\n" {
			t.Errorf("%v > /dev/full: exit %d, stderr %q", args, code, errs)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestNothingWrittenBeforeValidation: a command refused for its
// arguments, or a gate whose report cannot be written, leaves the working
// directory as it was — no empty (or full) tlcheck-certs/.
func TestNothingWrittenBeforeValidation(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args  []string
		inErr string
	}{
		{[]string{"gate", "--plant-provider-bug", "relu"}, `--plant-provider-bug: "relu" is not a fast_cpu op`},
		{[]string{"gate", "--plant-fault", "frob"}, "--plant-fault: unknown primitive"},
		{[]string{"gate", "--graphs", "0"}, "--graphs must be between"},
		{[]string{"gate", "--junit", "."}, "--junit .: is a directory"},
		{[]string{"gate", "--report", file}, "exists and is not a directory"},
		{[]string{"gate", "--junit", filepath.Join(file, "g.xml")}, "is not a directory"},
		{[]string{"gate", "--junit", "/dev/full", "--cases", "1", "--graphs", "1", "--cert-cases", "1"}, "--junit: write /dev/full: no space left on device"},
		{[]string{"certify", "--out", "c", "--ops", "frob"}, `--ops: unknown primitive "frob"`},
		{[]string{"certify", "--out", "c", "--cases", "0"}, "--cases must be at least 1"},
	}
	for _, c := range cases {
		if c.args[2] == "/dev/full" {
			if _, err := os.Stat("/dev/full"); err != nil {
				continue
			}
		}
		dir := t.TempDir()
		t.Chdir(dir)
		code, _, errs := runCmd(c.args...)
		if code != 2 || !strings.Contains(errs, c.inErr) || strings.Count(errs, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", c.args, code, errs, c.inErr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v wrote %v before failing", c.args, ents)
		}
	}
}

// TestVerifyCountsPerFile: a manifest whose entries are reversed fails
// once per out-of-order entry, but it is one failing file: the count is
// per file — the manifest and the N certificate files it lists, N read
// from the manifest itself.
func TestVerifyCountsPerFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "certs")
	if code, _, errs := runCmd("certify", "--out", dir, "--cases", "1", "--ops", "mul,add", "--providers", "reference"); code != 0 {
		t.Fatal(errs)
	}
	path := filepath.Join(dir, certificates.ManifestName)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m certificates.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	n := len(m.Files)
	if n < 3 {
		t.Fatalf("only %d files: the reversal needs at least 3", n)
	}
	slices.Reverse(m.Files)
	rev, err := json.MarshalIndent(&m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(rev, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errs := runCmd("verify", dir)
	want := fmt.Sprintf("tlcheck: verify: 1 of %d files fails; first: ", n+1)
	if code != 1 || !strings.HasPrefix(errs, want) || !strings.Contains(errs, certificates.ManifestName) {
		t.Fatalf("exit %d, stderr %q, want prefix %q", code, errs, want)
	}
	// And a tampered certificate file besides: two failing files.
	adj := filepath.Join(dir, "adjointness", "mul.json")
	b, _ := os.ReadFile(adj)
	if err := os.WriteFile(adj, append(b, ' '), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errs := runCmd("verify", dir); code != 1 || !strings.HasPrefix(errs, fmt.Sprintf("tlcheck: verify: 2 of %d files fail; first: ", n+1)) {
		t.Fatalf("tampered: exit %d, stderr %q", code, errs)
	}
}
