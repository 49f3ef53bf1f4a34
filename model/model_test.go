package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// reluFiles writes a relu graph over [3] and the input x = [1, −1, 1/2].
func reluFiles(t *testing.T) (graph, input string) {
	t.Helper()
	dir := t.TempDir()
	graph = filepath.Join(dir, "g.json")
	input = filepath.Join(dir, "x.json")
	g := `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[3]},{"id":1,"kind":"relu","parents":[0],"shape":[3]}]}`
	if err := os.WriteFile(graph, []byte(g), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(input, []byte(`{"shape":[3],"values":["1","-1","1/2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return graph, input
}

// TestLoadIR: the graph and input load, each recorded with its digest,
// and relu evaluates exactly to [1, 0, 1/2] on every path; by hand
// ∇x Σ relu(x) = step(x) = [1, 0, 1].
func TestLoadIR(t *testing.T) {
	graph, input := reluFiles(t)
	m, err := LoadIR("eval", graph, "", input)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Files) != 2 || m.Files[0].Role != "graph" || m.Files[1].Role != "input" || len(m.Files[1].SHA256) != 64 {
		t.Fatalf("files %+v", m.Files)
	}
	if s, why := m.AutoScalar(); s != "rat" || why != "" {
		t.Errorf("AutoScalar = %q, %q; want rat", s, why)
	}
	for _, path := range EvalPaths {
		vals, err := Values(m.Graph, m.Payload, m.Input, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got := Text(vals[m.Graph.OutputID]); got != "[1, 0, 0.5 (= 1/2)]" {
			t.Errorf("%s: output %s", path, got)
		}
	}
	g, err := Grad[spec.Rat](m, nil, "tape")
	if err != nil {
		t.Fatal(err)
	}
	if got := Text(g.Input); got != "[1, 0, 1]" {
		t.Errorf("gradient %s", got)
	}
}

// TestLoadIRRefuses: an input of another shape is refused, naming the
// flag, the file and the input node.
func TestLoadIRRefuses(t *testing.T) {
	graph, _ := reluFiles(t)
	bad := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(bad, []byte(`{"shape":[2],"values":["1","2"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadIR("eval", graph, "", bad)
	if err == nil || !strings.HasPrefix(err.Error(), "--input "+bad+": node 0 (input): shape mismatch") {
		t.Errorf("err = %v", err)
	}
	if _, err := LoadIR("eval", graph, "", ""); err == nil || err.Error() != "eval: --input is required" {
		t.Errorf("no input: %v", err)
	}
}

// TestPackUnpack: two values are the concatenation of their flattened
// elements, each from its offset; one value is the IR tensor itself.
func TestPackUnpack(t *testing.T) {
	r := func(ns ...int64) []spec.Rat {
		out := make([]spec.Rat, len(ns))
		for i, n := range ns {
			out[i] = spec.NewRat(n, 1)
		}
		return out
	}
	vals := []onnx.IOValue{{Name: "a", Shape: spec.Shape{2}, Offset: 0}, {Name: "b", Shape: spec.Shape{1, 2}, Offset: 2}}
	ts := []irsem.RatTensor{{Shape: spec.Shape{2}, Data: r(1, 2)}, {Shape: spec.Shape{1, 2}, Data: r(3, 4)}}
	p, err := pack(vals, ts, spec.Shape{4})
	if err != nil || Text(p) != "[1, 2, 3, 4]" {
		t.Fatalf("Pack = %s, %v", Text(p), err)
	}
	parts, err := Unpack(vals, p.Data)
	if err != nil || len(parts) != 2 || parts[1][0] != p.Data[2] || len(parts[1]) != 2 {
		t.Fatalf("Unpack = %v, %v", parts, err)
	}
	one, err := pack(vals[:1], ts[:1], spec.Shape{1, 2})
	if err != nil || !one.Shape.Equal(spec.Shape{1, 2}) {
		t.Errorf("one value: %v, %v", one.Shape, err)
	}
	if _, err := pack(vals[:1], ts[:1], spec.Shape{3}); err == nil {
		t.Error("2 values packed into 3")
	}
}
