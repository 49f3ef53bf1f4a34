package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// TestHostileLinks: the symbolic-link rows of the hostile-input table
// (issue 26 acceptance) for every input kind named on the command line —
// IR graph, payload, tensor JSON, ONNX model, TensorProto, gradients
// JSON, lean4export NDJSON — and for the entries of a recorded data set
// directory, which tlcheck walks (safeio's package doc states the rule):
//
//   - a file named on the command line may be a link wherever it leads:
//     the user chose it, and the command does exactly what it does on the
//     target (same exit code, same output but for the path);
//   - a link loop or a dangling link named on the command line is one
//     line, exit 2, saying which;
//   - inside a --data directory, an input_N.pb or output_N.pb or a
//     test_data_set_* directory that is a link out of the directory, a
//     loop or a dangling link is one line, exit 2, naming the entry — the
//     file outside is never read (its bytes would decode: it is refused,
//     not misread), and a dangling later input is never taken for the end
//     of the list.
//
// Certificate and shard directories' link rows are TestHostileDirectories'.
// Each refused case runs as a process under the table's wall and memory
// bounds (checkHostile).
func TestHostileLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges")
	}
	if testing.Short() {
		t.Skip("runs tlcheck as ~100 processes")
	}
	dir := t.TempDir()
	fix := filepath.Join(dir, "fixture")
	model, data, err := writeFixture(fix)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	graph, payload, input := filepath.Join(ex, "mlp.ir.json"), filepath.Join(ex, "mlp.payload.json"), filepath.Join(ex, "mlp.input.json")
	pb := filepath.Join(data, "input_0.pb")
	grads := filepath.Join(fix, "grads.json")
	if err := os.WriteFile(grads, []byte(`{"format":"tlcheck.grads.v1","grads":{"x":{"shape":[2],"values":[2,-3]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	lean, err := filepath.Abs("../../../shared/lean4export/Nat.add_succ.ndjson")
	if _, serr := os.Stat(lean); err != nil || serr != nil {
		lean = filepath.Join(fix, "export.ndjson")
		if err := os.WriteFile(lean, []byte("{\"meta\":{}}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	certs := filepath.Join(dir, "certs")
	if code, out, errs := runCmd("certify", "--onnx", model, "--data", data, "--out", certs, "--cases", "2", "--partial"); code != 0 {
		t.Fatalf("certify: exit %d\n%s%s", code, out, errs)
	}
	out, html := filepath.Join(dir, "out"), filepath.Join(dir, "v.html")

	// Links in their own directory: to the real file elsewhere, a loop
	// (loop → loop2 → loop) and a dangling one.
	links := filepath.Join(dir, "links")
	if err := os.MkdirAll(links, 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("symlink: %v", err)
		}
	}
	mustLink(filepath.Join(links, "loop2"), filepath.Join(links, "loop"))
	mustLink(filepath.Join(links, "loop"), filepath.Join(links, "loop2"))
	mustLink(filepath.Join(dir, "nothing-here"), filepath.Join(links, "dangling"))
	n := 0
	linkTo := func(target string) string {
		t.Helper()
		n++
		// Its own directory, the target's base name: certify records a
		// file's base name.
		d := filepath.Join(links, strconv.Itoa(n))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(d, filepath.Base(target))
		mustLink(target, p)
		return p
	}

	// Each row names one file argument FILE, of the given kind.
	rows := []struct {
		kind, file string
		args       []string
	}{
		{"IR graph", graph, []string{"eval", "--graph", "FILE", "--payload", payload, "--input", input}},
		{"IR graph", graph, []string{"certify", "--graph", "FILE", "--payload", payload, "--input", input, "--out", out}},
		{"IR graph", graph, []string{"view", "--graph", "FILE", "--out", html}},
		{"payload", payload, []string{"eval", "--graph", graph, "--payload", "FILE", "--input", input}},
		{"payload", payload, []string{"grad", "--graph", graph, "--payload", "FILE", "--input", input}},
		{"tensor JSON", input, []string{"eval", "--graph", graph, "--payload", payload, "--input", "FILE"}},
		{"tensor JSON", input, []string{"diff", "--graph", graph, "--payload", payload, "--input", "FILE"}},
		{"ONNX model", model, []string{"import", "--onnx", "FILE", "--out", out}},
		{"ONNX model", model, []string{"eval", "--onnx", "FILE", "--input", pb}},
		{"ONNX model", model, []string{"compare", "--onnx", "FILE", "--data", data}},
		{"ONNX model", model, []string{"view", "--onnx", "FILE", "--out", html}},
		{"ONNX model", model, []string{"verify", "--onnx", "FILE", "--input", pb, certs}},
		{"TensorProto", pb, []string{"eval", "--onnx", model, "--input", "FILE"}},
		{"TensorProto", pb, []string{"certify", "--onnx", model, "--input", "FILE", "--out", out, "--cases", "2", "--partial"}},
		{"TensorProto", pb, []string{"compare-grad", "--onnx", model, "--input", "FILE", "--grads", grads}},
		{"gradients JSON", grads, []string{"compare-grad", "--onnx", model, "--input", pb, "--grads", "FILE"}},
		{"lean4export NDJSON", lean, []string{"lean", "audit", "--export", "FILE"}},
		{"data set directory", data, []string{"compare", "--onnx", model, "--data", "FILE"}},
		{"data set directory", data, []string{"eval", "--onnx", model, "--data", "FILE"}},
	}
	subst := func(args []string, file string) []string {
		out := make([]string, len(args))
		for i, a := range args {
			out[i] = strings.ReplaceAll(a, "FILE", file)
		}
		return out
	}
	clean := func() { os.RemoveAll(out); os.Remove(html) }
	for _, r := range rows {
		name := r.kind + ": " + strings.Join(r.args[:2], " ")
		// Followed: the same verdict and output as the file itself.
		clean()
		code, stdout, stderr := runCmd(subst(r.args, r.file)...)
		clean()
		link := linkTo(r.file)
		lcode, lstdout, lstderr := runCmd(subst(r.args, link)...)
		lstdout, lstderr = strings.ReplaceAll(lstdout, link, r.file), strings.ReplaceAll(lstderr, link, r.file)
		if lcode != code || lstdout != stdout || lstderr != stderr {
			t.Errorf("%s, a link to the file: exit %d, want %d as the file itself\nstdout %q\nwant   %q\nstderr %q\nwant   %q",
				name, lcode, code, lstdout, stdout, lstderr, stderr)
		}
		// A loop and a dangling link: one line, exit 2, saying which.
		for _, bad := range []struct{ path, says string }{{filepath.Join(links, "loop"), "loop"}, {filepath.Join(links, "dangling"), "dangling"}} {
			clean()
			checkHostile(t, name+", a link "+bad.says, runHostile(t, dir, subst(r.args, bad.path)...), 2, bad.says)
		}
	}
	clean()

	// Inside a data set directory: entries that do not resolve inside it.
	outside := filepath.Join(dir, "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(outside, "input_0.pb") // a valid TensorProto: read, it would be used
	if err := os.WriteFile(secret, tensorPB("x", []int64{2}, 1.5, 2), 0o644); err != nil {
		t.Fatal(err)
	}
	sets := 0
	dataSet := func(entry, target string) string {
		t.Helper()
		sets++
		d := filepath.Join(dir, "sets", strings.Repeat("s", sets))
		if err := os.CopyFS(d, os.DirFS(data)); err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(filepath.Join(d, entry)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.HasPrefix(target, "./") {
			target = filepath.Join(d, target)
		}
		mustLink(target, filepath.Join(d, entry))
		return d
	}
	entries := []struct{ entry, target, says string }{
		{"input_0.pb", secret, "out of the directory"},
		{"input_0.pb", "../../outside/input_0.pb", "out of the directory"},
		{"output_0.pb", secret, "out of the directory"},
		{"input_0.pb", "./loop", "loop"},
		{"output_0.pb", "./nothing.pb", "dangling"},
		{"input_1.pb", "./nothing.pb", "dangling"}, // not the end of the input list
	}
	for _, e := range entries {
		d := dataSet(e.entry, e.target)
		if e.target == "./loop" {
			mustLink(filepath.Join(d, "input_0.pb"), filepath.Join(d, "loop"))
		}
		for _, cmd := range [][]string{
			{"compare", "--onnx", model, "--data", d},
			{"eval", "--onnx", model, "--data", d},
			{"certify", "--onnx", model, "--data", d, "--out", out, "--partial"},
		} {
			if e.entry == "output_0.pb" && cmd[0] != "compare" {
				continue // only compare reads the outputs
			}
			res := runHostile(t, dir, cmd...)
			checkHostile(t, "data set, "+e.entry+" → "+e.target+": "+cmd[0], res, 2, e.says)
			if !strings.Contains(res.stderr, e.entry) {
				t.Errorf("data set, %s → %s: %s: the line does not name the entry: %q", e.entry, e.target, cmd[0], res.stderr)
			}
			clean()
		}
	}
	// A test_data_set_* directory linked out of the --data directory.
	parent := filepath.Join(dir, "parent")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	mustLink(outside, filepath.Join(parent, "test_data_set_0"))
	checkHostile(t, "data sets, test_data_set_0 out of the directory: compare", runHostile(t, dir, "compare", "--onnx", model, "--data", parent), 2, "out of the directory")
	// … and one linked inside it is read as the directory itself is.
	inside := filepath.Join(dir, "parent-in")
	if err := os.CopyFS(filepath.Join(inside, "real"), os.DirFS(data)); err != nil {
		t.Fatal(err)
	}
	mustLink("real", filepath.Join(inside, "test_data_set_0"))
	code, stdout, stderr := runCmd("compare", "--onnx", model, "--data", data)
	lcode, lstdout, lstderr := runCmd("compare", "--onnx", model, "--data", inside)
	if lcode != code || strings.Count(lstdout, "\n") != strings.Count(stdout, "\n") {
		t.Errorf("data sets, test_data_set_0 linked inside: exit %d, want %d as the set itself\n%s%s\nwant\n%s%s", lcode, code, lstdout, lstderr, stdout, stderr)
	}
}
