package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// userModel is the shipped MLP example as a user's model (linear → relu →
// linear: exact over Rat, with range rules).
func userModel(t *testing.T) *certificates.Model {
	t.Helper()
	g, p, x, err := certificates.LoadExample(certificates.RangeExamples[0])
	if err != nil {
		t.Fatal(err)
	}
	return &certificates.Model{Name: "my model.onnx", Graph: g, Payload: p, Input: x}
}

func certifyModel(t *testing.T, m *certificates.Model, dir string, seed uint64) (*certificates.Manifest, []string) {
	t.Helper()
	s, skipped, err := certificates.ModelSuite(m, seed)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := certificates.ModelOps(m)
	if err != nil {
		t.Fatal(err)
	}
	man, err := s.Certify(dir, certificates.Options{Seed: seed, Cases: 3, Ops: ops, Providers: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	return man, skipped
}

// TestModelCertifyVerify: a user's model's directory holds the adjointness
// of the primitives it applies (linear, relu), its composition and range
// certificates, and FullSuite verifies all of it; each planted fault — a
// recorded side changed, a payload weight changed (the hash no longer
// matches), a tangent that is not the seed's, a trace endpoint moved —
// fails naming the file and field.
func TestModelCertifyVerify(t *testing.T) {
	t.Parallel()
	m := userModel(t)
	dir := t.TempDir()
	man, skipped := certifyModel(t, m, dir, 5)
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	var paths []string
	for _, f := range man.Files {
		paths = append(paths, f.Path)
	}
	if got, want := strings.Join(paths, ","), "adjointness/linear.json,adjointness/relu.json,model_composition.json,model_range.json"; got != want {
		t.Fatalf("files %s, want %s", got, want)
	}
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("fresh model certificates fail: %v", f[0].Err)
	}
	if rep.Cases()[certificates.KindModelComposition] != 3 || rep.Cases()[certificates.KindModelRange] != 4 {
		t.Fatalf("cases %v (want 3 composition cases, 4 range nodes)", rep.Cases())
	}
	data, err := os.ReadFile(filepath.Join(dir, certificates.ModelCompositionName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"my_model.onnx"`) {
		t.Fatalf("the model's name is not recorded in the safe alphabet")
	}
	rdata, err := os.ReadFile(filepath.Join(dir, certificates.ModelRangeName))
	if err != nil {
		t.Fatal(err)
	}
	var mc certificates.ModelCompositionFile
	if err := certificates.DecodeStrict(certificates.ModelCompositionName, data, &mc); err != nil {
		t.Fatal(err)
	}
	var rf certificates.RangeFile
	if err := certificates.DecodeStrict(certificates.ModelRangeName, rdata, &rf); err != nil {
		t.Fatal(err)
	}
	mm := *man
	cases := []struct {
		name, file, wantField string
		run                   func() error
	}{
		{"lhs", certificates.ModelCompositionName, "cases[1].lhs", func() error {
			f := mc
			f.Cases = append([]certificates.ModelCompositionCase{}, mc.Cases...)
			f.Cases[1].LHS = "12345"
			_, err := verifyModelComposition(certificates.ModelCompositionName, &f, &mm)
			return err
		}},
		{"weight", certificates.ModelCompositionName, "graph_hash", func() error {
			f := mc
			f.Payload = []byte(strings.Replace(string(mc.Payload), `"1/2"`, `"1/3"`, 1))
			if string(f.Payload) == string(mc.Payload) {
				t.Fatal("the payload has no 1/2 to plant a fault in")
			}
			_, err := verifyModelComposition(certificates.ModelCompositionName, &f, &mm)
			return err
		}},
		{"dx", certificates.ModelCompositionName, "cases[0].dx[0].values[0]", func() error {
			f := mc
			f.Cases = append([]certificates.ModelCompositionCase{}, mc.Cases...)
			f.Cases[0].Dx = certificates.Tensor{Shape: mc.Cases[0].Dx.Shape, Values: append([]string{"77"}, mc.Cases[0].Dx.Values[1:]...)}
			_, err := verifyModelComposition(certificates.ModelCompositionName, &f, &mm)
			return err
		}},
		{"trace", certificates.ModelRangeName, "trace[3][0].hi", func() error {
			f := rf
			f.Trace = append([][]certificates.Enclosure32{}, rf.Trace...)
			f.Trace[3] = []certificates.Enclosure32{{Lo: rf.Trace[3][0].Lo, Hi: "0x00000000"}}
			_, err := verifyModelRange(certificates.ModelRangeName, &f, &mm)
			return err
		}},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.file+": field "+c.wantField+":") {
			t.Errorf("%s: got %v, want a failure at %s field %s", c.name, err, c.file, c.wantField)
		}
	}
}

// TestModelSuiteSkipsInexact: a model with tanh is not exact over Rat, so
// its directory has no composition certificate but, in its place, the
// interval certificate of its output (and a note says why), beside a range
// certificate; a model whose input does not fit is refused.
func TestModelSuiteSkipsInexact(t *testing.T) {
	t.Parallel()
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Parents: []int{}, Shape: spec.Shape{2}},
		{ID: 1, Kind: irsem.Kind{Op: irsem.OpTanh}, Parents: []int{0}, Shape: spec.Shape{2}},
	}}
	x, _ := spec.NewTensor(spec.Shape{2}, []spec.Rat{spec.NewRat(1, 1), spec.NewRat(-2, 1)})
	m := &certificates.Model{Name: "t", Graph: g, Input: x}
	dir := t.TempDir()
	man, skipped := certifyModel(t, m, dir, 1)
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if len(man.Files) != 3 || man.Files[1].Path != certificates.ModelIntervalName || man.Files[2].Path != certificates.ModelRangeName {
		t.Fatalf("files %v", man.Files)
	}
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("%v", f[0].Err)
	}
	bad, _ := spec.NewTensor(spec.Shape{3}, []spec.Rat{spec.NewRat(1, 1), spec.NewRat(1, 1), spec.NewRat(1, 1)})
	if _, _, err := certificates.ModelSuite(&certificates.Model{Graph: g, Input: bad}, 1); err == nil {
		t.Fatal("an input of the wrong shape was accepted")
	}
}

// TestModelEmptyInput: a model whose input has no elements (an imported
// Embedding: its indices bound at import, no float input) certifies and
// verifies; its range certificate's box is the empty list, never null.
// concat([], c) = c = (1/2, −3) is the output, by hand.
func TestModelEmptyInput(t *testing.T) {
	t.Parallel()
	g := &irsem.Graph{InputID: 0, OutputID: 3, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Parents: []int{}, Shape: spec.Shape{0}},
		{ID: 1, Kind: irsem.Kind{Op: irsem.OpConst, ValueShape: spec.Shape{2}}, Parents: []int{}, Shape: spec.Shape{2}},
		{ID: 2, Kind: irsem.Kind{Op: irsem.OpConcat, Axis: 0}, Parents: []int{0, 1}, Shape: spec.Shape{2}},
		{ID: 3, Kind: irsem.Kind{Op: irsem.OpRelu}, Parents: []int{2}, Shape: spec.Shape{2}},
	}}
	c, _ := spec.NewTensor(spec.Shape{2}, []spec.Rat{spec.NewRat(1, 2), spec.NewRat(-3, 1)})
	p := &irsem.Payload{Entries: map[int]*irsem.Params{1: {Value: &c}}}
	x, _ := spec.NewTensor(spec.Shape{0}, []spec.Rat{})
	dir := t.TempDir()
	man, skipped := certifyModel(t, &certificates.Model{Name: "embedding", Graph: g, Payload: p, Input: x}, dir, 2)
	if len(skipped) != 0 || len(man.Files) != 4 {
		t.Fatalf("skipped %v, files %v", skipped, man.Files)
	}
	data, err := os.ReadFile(filepath.Join(dir, certificates.ModelRangeName))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"box": []`) {
		t.Errorf("the empty box is not []")
	}
	rep, err := Dir(certificates.FullSuite(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if f := rep.Failures(); len(f) != 0 {
		t.Fatalf("%v", f[0].Err)
	}
}
