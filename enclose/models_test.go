package enclose_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// sharedONNX finds ../shared/onnx above the working directory.
func sharedONNX(t *testing.T) string {
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
			t.Skip("../shared/onnx (the ONNX backend test data) is not present; the model checks did not run")
		}
		dir = up
	}
}

// dense reports whether a node runs on the dense kernels (matmul, linear,
// conv, conv_transpose; the lane sums of reduce_sum, reduce_mean and sum
// from 64 elements on).
func dense(op irsem.Op) bool {
	switch op {
	case irsem.OpMatmul, irsem.OpLinear, irsem.OpConv, irsem.OpConvTranspose,
		irsem.OpReduceSum, irsem.OpReduceMean, irsem.OpSum:
		return true
	}
	return false
}

// TestBackendModelsEnclosed: for every ONNX backend test model under
// ../shared/onnx that imports and has exact rational semantics, the
// interval evaluation of every node (matmul, linear and the convolutions
// on the dense midpoint-radius kernels) contains the node's exact
// rational value, on the recorded input. Models that need an op without
// exact semantics, or do not import, are skipped by name; so are, unless
// TLCHECK_EXHAUSTIVE=1 (which CI sets), the few whose declared work
// exceeds 2²² (their exact evaluation dominates the test's time). The test
// fails if fewer than 20 models with dense nodes were checked.
func TestBackendModelsEnclosed(t *testing.T) {
	root := sharedONNX(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "pytorch-converted", "test_*"))
	simple, _ := filepath.Glob(filepath.Join(root, "simple", "test_*"))
	dirs = append(dirs, simple...)
	sort.Strings(dirs)
	l := limits.Current()
	l.GraphElements, l.Work = 1<<24, 1<<28
	defer limits.Set(l)()
	checked, denseModels := 0, 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		g, p, x, err := load(dir)
		if err != nil {
			t.Logf("%s: not checked: %v", name, err)
			continue
		}
		if w := work(g); w > 1<<22 && os.Getenv("TLCHECK_EXHAUSTIVE") == "" {
			t.Logf("%s: declared work %d; checked only with TLCHECK_EXHAUSTIVE=1", name, w)
			continue
		}
		exact, err := irsem.DenoteAll(g, p, x)
		if err != nil {
			t.Logf("%s: no exact value: %v", name, err)
			continue
		}
		iv, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Interval](x))
		if err != nil {
			t.Errorf("%s: interval evaluation: %v", name, err)
			continue
		}
		checked++
		hasDense := false
		for i := range exact {
			hasDense = hasDense || dense(g.Nodes[i].Kind.Op)
			for j, r := range exact[i].Data {
				if !iv[i].Data[j].Contains(r.Big()) {
					t.Fatalf("%s: node %d (%s) element %d: interval %v does not contain %s", name, i, g.Nodes[i].Kind.Op, j, iv[i].Data[j], r)
				}
			}
		}
		if hasDense {
			denseModels++
		}
	}
	t.Logf("%d models checked, %d with dense nodes", checked, denseModels)
	if denseModels < 20 {
		t.Fatalf("only %d models with dense nodes were checked", denseModels)
	}
}

// work is the graph's declared work (irsem.DeclaredWork summed).
func work(g *irsem.Graph) int64 {
	var w int64
	for i := range g.Nodes {
		var in []spec.Shape
		for _, p := range g.Nodes[i].Parents {
			in = append(in, g.Nodes[p].Shape)
		}
		w += irsem.DeclaredWork(&g.Nodes[i], in)
	}
	return w
}

// load imports a backend test directory with its recorded input.
func load(dir string) (*irsem.Graph, *irsem.Payload, irsem.RatTensor, error) {
	m, err := onnx.ReadModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	var ts []*onnx.Tensor
	for i := 0; ; i++ {
		f := filepath.Join(dir, "test_data_set_0", fmt.Sprintf("input_%d.pb", i))
		if _, err := os.Stat(f); err != nil {
			break
		}
		tt, err := onnx.ReadTensor(f)
		if err != nil {
			return nil, nil, irsem.RatTensor{}, err
		}
		ts = append(ts, tt)
	}
	o, floats, err := onnx.OptionsFor(m, ts)
	if err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	im, err := onnx.Import(m, o)
	if err != nil {
		return nil, nil, irsem.RatTensor{}, err
	}
	x, err := im.PackInputs(floats)
	return im.Graph, im.Payload, x, err
}
