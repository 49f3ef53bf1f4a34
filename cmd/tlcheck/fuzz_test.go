package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The command-line surfaces of issue 26 point 11 that had no fuzz target:
// loading a model with --onnx, certify, view and merge. Each target
// writes the fuzzed bytes as the file the command reads and runs the
// command in-process (run, with its panic recovery): the contract is the
// hostile table's — exit 0, 1 or 2, never 3 (a recovered panic: a bug),
// and a failure is exactly one line on stderr. Seeds: the f.Add inputs
// and testdata/fuzz/TARGET. Run by ci/stage-fuzz.sh.

// fuzzContract checks one run's exit code and stderr.
func fuzzContract(t *testing.T, args []string, code int, stderr string) {
	t.Helper()
	if code == 3 || code < 0 || code > 3 {
		t.Fatalf("%v: exit %d (a crash)\n%s", args, code, stderr)
	}
	if code != 0 && (strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n")) {
		t.Fatalf("%v: exit %d, stderr is not one line: %q", args, code, stderr)
	}
}

// fuzzWrite writes data as dir/name.
func fuzzWrite(t *testing.T, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// FuzzCLIONNX: the bytes as --onnx MODEL of eval (with the fixture's
// input) and of view; the fixture model and its truncations seed it.
func FuzzCLIONNX(f *testing.F) {
	m := fixtureModel()
	f.Add(m)
	f.Add(m[:len(m)/2])
	f.Add(m[:len(m)-3])
	f.Fuzz(func(t *testing.T, model []byte) {
		if len(model) > 1<<16 {
			return
		}
		dir := t.TempDir()
		p := fuzzWrite(t, dir, "model.onnx", model)
		in := fuzzWrite(t, dir, "input_0.pb", tensorPB("x", []int64{2}, 1.5, 2))
		for _, args := range [][]string{
			{"eval", "--onnx", p, "--input", in},
			{"view", "--onnx", p, "--out", filepath.Join(dir, "v.html")},
		} {
			code, _, errs := runCmd(args...)
			fuzzContract(t, args, code, errs)
		}
	})
}

// FuzzCertifyGraph: the bytes as certify's --graph, with the example
// MLP's payload and input when the graph is theirs (the example graph
// seeds it) and as view's --graph.
func FuzzCertifyGraph(f *testing.F) {
	ex := filepath.Join("..", "..", "examples")
	g, err := os.ReadFile(filepath.Join(ex, "quad.ir.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(g)
	f.Add(g[:len(g)/2])
	f.Add([]byte(`{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]}]}`))
	f.Fuzz(func(t *testing.T, graph []byte) {
		if len(graph) > 1<<16 {
			return
		}
		dir := t.TempDir()
		p := fuzzWrite(t, dir, "g.json", graph)
		for _, args := range [][]string{
			{"certify", "--graph", p, "--input", filepath.Join(ex, "quad.input.json"), "--cases", "1", "--partial", "--out", filepath.Join(dir, "out")},
			{"view", "--graph", p, "--out", filepath.Join(dir, "v.html")},
		} {
			code, _, errs := runCmd(args...)
			fuzzContract(t, args, code, errs)
		}
	})
}

// FuzzMerge: the bytes as the manifest of the first of two shard
// directories given to merge (a valid shard manifest seeds it).
func FuzzMerge(f *testing.F) {
	base := f.TempDir()
	shards := make([]string, 2)
	for i := range shards {
		shards[i] = filepath.Join(base, "s"+string(rune('0'+i)))
		args := []string{"certify", "--ops", "mul", "--cases", "1", "--providers", "reference", "--shard", string(rune('0'+i)) + "/2", "--out", shards[i]}
		if code, out, errs := runCmd(args...); code != 0 {
			f.Fatalf("%v: exit %d\n%s%s", args, code, out, errs)
		}
	}
	man, err := os.ReadFile(filepath.Join(shards[0], "manifest.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(man)
	f.Add(man[:len(man)/2])
	f.Fuzz(func(t *testing.T, manifest []byte) {
		if len(manifest) > 1<<16 {
			return
		}
		dir := t.TempDir()
		s0 := filepath.Join(dir, "s0")
		if err := os.CopyFS(s0, os.DirFS(shards[0])); err != nil {
			t.Fatal(err)
		}
		fuzzWrite(t, s0, "manifest.json", manifest)
		args := []string{"merge", filepath.Join(dir, "merged"), s0, shards[1]}
		code, _, errs := runCmd(args...)
		fuzzContract(t, args, code, errs)
	})
}
