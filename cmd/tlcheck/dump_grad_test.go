package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tlcheck/tlcheck/compare"
	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

// sharedONNXDir finds ../shared/onnx/pytorch-converted above the package
// directory, or skips.
func sharedONNXDir(t *testing.T) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "..", "shared", "onnx", "pytorch-converted")
		if _, err := os.Stat(p); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("no ../shared/onnx/pytorch-converted above the repository: the shared ONNX models are not available here")
		}
		dir = up
	}
}

// ownGrads computes tlcheck's own float32 gradients of the model (seed
// ones on every output element) in the dump layout, naming them as
// compare-grad does.
func ownGrads(t *testing.T, m *compare.GradModel) *compare.Dump {
	t.Helper()
	l, err := irgrad.LowerWith[spec.F32](nil, m.Graph, m.Payload, irgrad.LowerOptions{ConstParams: m.ConstParams})
	if err != nil {
		t.Fatal(err)
	}
	out := m.Graph.Nodes[m.Graph.OutputID].Shape
	seed, _ := spec.Full(out.Clone(), spec.F32(1))
	gr, err := l.VJP(irgrad.PathTape, irsem.ConvertTensor[spec.F32](m.Input), seed)
	if err != nil {
		t.Fatal(err)
	}
	doc := &compare.Dump{Format: compare.GradsFormat, Grads: map[string]compare.DumpTensor{}}
	for _, tg := range m.Targets {
		n := tg.Shape.Size()
		d := compare.DumpTensor{Shape: append([]int{}, tg.Shape...), Values: make([]json.RawMessage, n)}
		for k := range n {
			var v spec.F32
			for _, part := range tg.Parts {
				if part.Param < 0 {
					v += gr.Input.Data[part.Offset+k]
				} else {
					v += gr.Params[part.Param].Data[k]
				}
			}
			d.Values[k] = f32Dump(float32(v))
		}
		doc.Grads[tg.Name] = d
	}
	return doc
}

func writeDoc(t *testing.T, dir string, doc *compare.Dump) string {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "grads.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// beyond returns the binary32 value one ulp past the far end of the
// allowed range above the exact enclosure: the smallest float32 greater
// than Exact.Hi + Bound (computed exactly), which every modelled
// evaluation misses.
func beyond(en fpbound.Enclosure) (float32, bool) {
	if math.IsInf(en.Bound, 1) || math.IsInf(en.Exact.Hi, 0) {
		return 0, false
	}
	lim := new(big.Rat).Add(new(big.Rat).SetFloat64(en.Exact.Hi), new(big.Rat).SetFloat64(en.Bound))
	f, _ := lim.Float32()
	for new(big.Rat).SetFloat64(float64(f)).Cmp(lim) <= 0 {
		f = math.Nextafter32(f, float32(math.Inf(1)))
	}
	return f, !math.IsInf(float64(f), 0)
}

// largeGrads is the gradient size above which TestCompareGradShared skips
// a model unless TLCHECK_LARGE is set (two max-pool models of 220 000 and
// more input elements, seconds each).
const largeGrads = 50000

// TestCompareGradShared: compare-grad accepts tlcheck's own float32
// gradients of every shared pytorch-converted model and rejects them
// after one element is moved one ulp beyond its bound (exit 1, naming the
// tensor and element).
func TestCompareGradShared(t *testing.T) {
	root := sharedONNXDir(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "test_*"))
	if len(dirs) == 0 {
		t.Skip("no models under " + root)
	}
	dirs = everyKth(dirs, 4) // every model with TLCHECK_EXHAUSTIVE set (ci/exhaustive.sh)
	if testing.Short() {
		dirs = dirs[:min(len(dirs), 8)]
	}
	checked := 0
	for _, dir := range dirs {
		name := filepath.Base(dir)
		start := time.Now()
		modelPath := filepath.Join(dir, "model.onnx")
		ins, _ := filepath.Glob(filepath.Join(dir, "test_data_set_0", "input_*.pb"))
		im, x, err := model.ImportPB(modelPath, ins)
		var m *compare.GradModel
		if err == nil {
			m, err = compare.GradModelONNX(modelPath, im, x)
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		size := 0
		for _, tg := range m.Targets {
			size += tg.Shape.Size()
		}
		if size > largeGrads && os.Getenv("TLCHECK_LARGE") == "" {
			t.Logf("%s: %d gradient elements, over %d: checked only with TLCHECK_LARGE=1 (the JSON round trip of the test dominates)", name, size, largeGrads)
			continue
		}
		doc := ownGrads(t, m)
		tmp := t.TempDir()
		var args []string
		for _, in := range ins {
			args = append(args, "--input", in)
		}
		args = append([]string{"compare-grad", "--onnx", modelPath}, append(args, "--grads", writeDoc(t, tmp, doc))...)
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Errorf("%s: own gradients rejected (exit %d): %s%s", name, code, out.String(), errb.String())
			continue
		}
		// Edit the first element with a finite bound of the first tensor.
		seed, _ := m.Seed(doc)
		gr, _, und, err := fpbound.GradErr(m.Graph, m.Payload, m.Input, seed, fpbound.Options{ConstParams: m.ConstParams})
		if err != nil {
			t.Fatal(err)
		}
		edited := false
		for _, tg := range m.Targets {
			if len(tg.Parts) == 0 || edited {
				continue
			}
			for k := range tg.Shape.Size() {
				var e fpbound.Err
				for j, part := range tg.Parts {
					var v fpbound.Err
					if part.Param < 0 {
						v = gr.Input.Data[part.Offset+k]
					} else {
						v = gr.Params[part.Param].Data[k]
					}
					if j == 0 {
						e = v
					} else {
						e = e.Add(v)
					}
				}
				f, ok := beyond(fpbound.EncloseErr(e, und))
				if !ok {
					continue
				}
				doc.Grads[tg.Name].Values[k] = f32Dump(f)
				args[len(args)-1] = writeDoc(t, tmp, doc)
				out.Reset()
				errb.Reset()
				code := run(args, &out, &errb)
				want := fmt.Sprintf("%s %v: ", tg.Name, tg.Shape)
				if code != 1 || !strings.Contains(out.String(), want) || !strings.Contains(out.String(), fmt.Sprintf("first outside: element %d", k)) {
					t.Errorf("%s: edit of %s[%d] to %v: exit %d\n%s%s", name, tg.Name, k, f, code, out.String(), errb.String())
				}
				edited = true
				break
			}
		}
		if !edited && strings.Contains(out.String(), "not checked: the IR reads it as a constant") {
			t.Logf("%s: nothing differentiable to edit:\n%s", name, out.String())
			continue
		}
		if !edited {
			t.Errorf("%s: no gradient element has a finite bound:\n%s", name, out.String())
			continue
		}
		checked++
		t.Logf("%s %v", name, time.Since(start))
	}
	t.Logf("%d models checked", checked)
}

// TestGradsLayout runs compare-grad on a relu graph with documents laid
// out as tools/export_grads.py writes them (a cotangent, Python floats,
// the "NaN" string) and on malformed ones. By hand: x = [1, −1, 1/2],
// y = relu(x), cotangent c = [2, 3, 1/2]: ∇x = c·step(x) = [2, 0, 1/2],
// every operation exact, so the bound is 0 and only those values hold.
func TestGradsLayout(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	graph := write("g.json", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[3]},{"id":1,"kind":"relu","parents":[0],"shape":[3]}]}`)
	input := write("x.json", `{"shape":[3],"values":["1","-1","1/2"]}`)
	doc := func(grad string) string {
		return `{"format": "tlcheck.grads.v1", "cotangent": {"output": {"shape": [3], "values": [2.0, 3.0, 0.5]}}, "grads": {"input": {"shape": [3], "values": [` + grad + `]}}}`
	}
	for _, tc := range []struct {
		name, grads string
		code        int
		want        string
	}{
		{"exact", doc("2.0, 0.0, 0.5"), 0, "input [3]: 3 holds, 0 fails"},
		{"one ulp off", doc("2.0, 0.0, 0.5000000596046448"), 1, "first outside: element 2"},
		{"NaN", doc(`2.0, "NaN", 0.5`), 1, "first outside: element 1"},
		{"negative zero", doc("2.0, -0.0, 0.5"), 0, "3 holds"},
		{"bad value", doc(`2.0, "zero", 0.5`), 2, "element 1"},
		{"bad format", `{"format":"x","grads":{}}`, 2, "format"},
		{"unknown name", `{"format":"tlcheck.grads.v1","grads":{"node9.W":{"shape":[1],"values":[1]}}}`, 2, "node9.W"},
		{"wrong shape", `{"format":"tlcheck.grads.v1","grads":{"input":{"shape":[2],"values":[1,2]}}}`, 2, "shape"},
		{"short", `{"format":"tlcheck.grads.v1","grads":{"input":{"shape":[3],"values":[1,2]}}}`, 2, "holds 3 values"},
		{"unknown member", `{"format":"tlcheck.grads.v1","grads":{},"extra":1}`, 2, "extra"},
		{"bad cotangent", `{"format":"tlcheck.grads.v1","cotangent":{"y":{"shape":[3],"values":[1,1,1]}},"grads":{"input":{"shape":[3],"values":[1,0,1]}}}`, 2, `"y"`},
		// issue 26 point 9: nothing to compare is not a pass, and the reader
		// is the one strict reader.
		{"no gradient", `{"format":"tlcheck.grads.v1","grads":{}}`, 2, "nothing to compare"},
		{"duplicate key", `{"format":"tlcheck.grads.v1","grads":{"input":{"shape":[3],"values":[9,9,9]},"input":{"shape":[3],"values":[2,0,0.5]}}}`, 2, "duplicate"},
		{"trailing garbage", doc("2.0, 0.0, 0.5") + "garbage", 2, "grads.json"},
		{"second document", doc("2.0, 0.0, 0.5") + doc("9, 9, 9"), 2, "grads.json"},
	} {
		var out, errb bytes.Buffer
		g := write("grads.json", tc.grads)
		code := run([]string{"compare-grad", "--graph", graph, "--input", input, "--grads", g}, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%s: exit %d (want %d), output:\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"compare-grad", "--graph", graph, "--onnx", graph, "--grads", input}, &out, &errb); code != 2 {
		t.Errorf("--graph with --onnx: exit %d", code)
	}
}

// quadGrads writes the exact gradient of examples/quad.ir.json at
// examples/quad.input.json — sum(x⊙x + x⊙x) has gradient 4x = [12, −6] at
// x = [3, −3/2] — so that compare-grad holds (exit 0), for the conventions
// tests. (A dump with no gradient is bad input: issue 26 point 9.)
func quadGrads(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "quad-grads.json")
	if err := os.WriteFile(p, []byte(`{"format":"tlcheck.grads.v1","grads":{"input":{"shape":[2],"values":[12,-6]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGradsPB: gradients given as named TensorProtos, on the relu graph
// of TestGradsLayout with the default cotangent (ones): by hand
// ∇x = step(x) = [1, 0, 1] at x = [1, −1, 1/2], exact, bound 0.
func TestGradsPB(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	graph := write("g.json", []byte(`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[3]},{"id":1,"kind":"relu","parents":[0],"shape":[3]}]}`))
	input := write("x.json", []byte(`{"shape":[3],"values":["1","-1","1/2"]}`))
	for _, tc := range []struct {
		name string
		pb   []byte
		code int
		want string
	}{
		{"right", tensorPB("input", []int64{3}, []float32{1, 0, 1}...), 0, "input [3]: 3 holds"},
		{"wrong", tensorPB("input", []int64{3}, []float32{1, 0, 0.5}...), 1, "first outside: element 2"},
		{"unnamed", tensorPB("", []int64{3}, []float32{1, 0, 1}...), 2, "no name"},
		{"short", tensorPB("input", []int64{3}, []float32{1, 0}...), 2, "2 elements, but dims [3] have 3"},
		{"wrong shape", tensorPB("input", []int64{1, 3}, []float32{1, 0, 1}...), 2, "shape [1 3], expected [3]"},
	} {
		var out, errb bytes.Buffer
		code := run([]string{"compare-grad", "--graph", graph, "--input", input, "--grads", write("g.pb", tc.pb)}, &out, &errb)
		if code != tc.code || !strings.Contains(out.String()+errb.String(), tc.want) {
			t.Errorf("%s: exit %d (want %d):\n%s%s", tc.name, code, tc.code, out.String(), errb.String())
		}
	}
}

// f32Dump spells a float32 as a gradient dump does: the float64 repr of
// the value, or "NaN", "+Inf", "-Inf".
func f32Dump(f float32) json.RawMessage {
	switch {
	case math.IsNaN(float64(f)):
		return json.RawMessage(`"NaN"`)
	case math.IsInf(float64(f), 1):
		return json.RawMessage(`"+Inf"`)
	case math.IsInf(float64(f), -1):
		return json.RawMessage(`"-Inf"`)
	}
	return json.RawMessage(strconv.FormatFloat(float64(f), 'g', -1, 64))
}
