package onnx

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sharedONNX returns ../shared/onnx (found by walking up from the package
// directory), or skips the test saying why.
func sharedONNX(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		p := filepath.Join(dir, "..", "shared", "onnx")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("../shared/onnx (the ONNX backend test data) is not present above the repository; the real-file checks did not run")
		}
		dir = up
	}
}

// TestSharedModels decodes every model.onnx and test_data_set_0/*.pb under
// ../shared/onnx and checks that what was read is sane: a default-domain
// opset, known op types, the recorded inputs' dims equal to the graph
// inputs' declared shapes, and the outputs' to the graph outputs'.
func TestSharedModels(t *testing.T) {
	root := sharedONNX(t)
	models, err := filepath.Glob(filepath.Join(root, "*", "test_*", "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	if len(models) < 80 {
		t.Fatalf("found only %d models under %s", len(models), root)
	}
	ops := map[string]bool{}
	for _, path := range models {
		name := filepath.Base(filepath.Dir(path))
		m, err := ReadModel(path)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		v, ok := m.Opset("")
		if !ok || v < 1 || v > 30 {
			t.Errorf("%s: default opset %d %v", name, v, ok)
		}
		if len(m.Graph.Nodes) == 0 || len(m.Graph.Outputs) == 0 {
			t.Errorf("%s: %d nodes, %d outputs", name, len(m.Graph.Nodes), len(m.Graph.Outputs))
		}
		for _, n := range m.Graph.Nodes {
			ops[n.OpType] = true
		}
		for _, init := range m.Graph.Initializers {
			if _, err := init.Rats(); err != nil && init.DataType.IsFloat() {
				t.Errorf("%s: %v", name, err)
			}
		}
		// Graph inputs that are not initializers, in order, against input_N.pb.
		inits := map[string]bool{}
		for _, in := range m.Graph.Initializers {
			inits[in.Name] = true
		}
		var ins []*ValueInfo
		for _, in := range m.Graph.Inputs {
			if !inits[in.Name] {
				ins = append(ins, in)
			}
		}
		data := filepath.Join(filepath.Dir(path), "test_data_set_0")
		checkPB := func(kind string, vis []*ValueInfo) {
			for i, vi := range vis {
				p := filepath.Join(data, kind+"_"+strconv.Itoa(i)+".pb")
				tn, err := ReadTensor(p)
				if err != nil {
					if os.IsNotExist(err) || strings.Contains(err.Error(), "no such file") {
						continue // gradient models record fewer files
					}
					t.Errorf("%s: %v", name, err)
					continue
				}
				if tn.DataType != vi.ElemType {
					t.Errorf("%s: %s_%d.pb has type %v, the graph's %s has %v", name, kind, i, tn.DataType, vi.Name, vi.ElemType)
				}
				if vi.HasShape {
					want := make([]int64, len(vi.Shape))
					for j, d := range vi.Shape {
						want[j] = d.Value
						if !d.Known() {
							want[j] = tn.Dims[min(j, len(tn.Dims)-1)]
						}
					}
					if !slices.Equal(tn.Dims, want) {
						t.Errorf("%s: %s_%d.pb has dims %v, the graph's %s has %v", name, kind, i, tn.Dims, vi.Name, vi.Shape)
					}
				}
				if n, err := tn.NumElements(); err != nil || n != tn.Len() {
					t.Errorf("%s: %s_%d.pb: %d elements, %d held, %v", name, kind, i, n, tn.Len(), err)
				}
			}
		}
		checkPB("input", ins)
		checkPB("output", m.Graph.Outputs)
	}
	for _, op := range []string{"Conv", "Relu", "MaxPool", "AveragePool", "BatchNormalization", "Gemm", "Gather", "Pad", "ConvTranspose", "Softmax"} {
		if !ops[op] {
			t.Errorf("no model uses %s", op)
		}
	}
}

// TestSharedConv2d checks test_Conv2d in detail: opset, one Conv node with a
// 4-D weight initializer whose in-channels match the input's.
func TestSharedConv2d(t *testing.T) {
	root := sharedONNX(t)
	dir := filepath.Join(root, "pytorch-converted", "test_Conv2d")
	m, err := ReadModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		t.Fatal(err)
	}
	var conv *Node
	for _, n := range m.Graph.Nodes {
		if n.OpType == "Conv" {
			conv = n
		}
	}
	if conv == nil || len(conv.Inputs) < 2 {
		t.Fatalf("no Conv with a weight in %v", m.Graph.Nodes)
	}
	var w *Tensor
	for _, in := range m.Graph.Initializers {
		if in.Name == conv.Inputs[1] {
			w = in
		}
	}
	if w == nil || len(w.Dims) != 4 || w.DataType != Float {
		t.Fatalf("Conv weight %q: %+v", conv.Inputs[1], w)
	}
	if a := conv.Attr("kernel_shape"); a != nil && (a.Type != AttrInts || !slices.Equal(a.Ints, w.Dims[2:])) {
		t.Errorf("kernel_shape %v, weight dims %v", a, w.Dims)
	}
	x, err := ReadTensor(filepath.Join(dir, "test_data_set_0", "input_0.pb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Dims) != 4 || x.Dims[1] != w.Dims[1] || x.DataType != Float {
		t.Errorf("input dims %v, weight dims %v", x.Dims, w.Dims)
	}
	if _, err := x.Rats(); err != nil {
		t.Error(err)
	}
}
