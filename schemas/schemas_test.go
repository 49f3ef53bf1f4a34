package schemas

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/jsonschema"
)

// TestSchemasMatchDocuments keeps every schema in step with its Go type:
// it compiles, names its format, and lists exactly the fields the
// document emits, at the top and in each nested definition.
func TestSchemasMatchDocuments(t *testing.T) {
	t.Parallel()
	docs := map[string]any{
		jsonout.KindCheck: jsonout.CheckDoc{}, jsonout.KindGate: jsonout.GateDoc{}, jsonout.KindDiff: jsonout.DiffDoc{},
		jsonout.KindEval: jsonout.EvalDoc{}, jsonout.KindGrad: jsonout.GradDoc{}, jsonout.KindVerify: jsonout.VerifyDoc{},
		jsonout.KindPlan: jsonout.PlanDoc{}, jsonout.KindCertify: jsonout.CertifyDoc{}, jsonout.KindTapeExample: jsonout.TapeExampleDoc{},
		jsonout.KindCompare: jsonout.CompareDoc{}, jsonout.KindImport: jsonout.ImportDoc{}, jsonout.KindOnnxMap: jsonout.OnnxMapDoc{},
		jsonout.KindAdapters: jsonout.AdaptersDoc{}, jsonout.KindCompareGrad: jsonout.CompareGradDoc{},
	}
	defs := map[string]any{
		"checkResult": jsonout.CheckResult{}, "gateItem": jsonout.GateItem{}, "gateStage": jsonout.GateStage{},
		"diffFailure": jsonout.DiffFailure{}, "diffCheck": jsonout.DiffCheck{}, "evalNode": jsonout.EvalNode{},
		"verifyFile": jsonout.VerifyFile{}, "planKernel": jsonout.PlanKernel{}, "planNode": jsonout.PlanNode{},
		"binding": jsonout.PlanBinding{}, "certifyFile": jsonout.CertifyFile{}, "input": jsonout.Input{},
		"tensor": jsonout.Tensor{}, "interval": jsonout.Interval{}, "stats": jsonout.Stats{},
		"element": jsonout.CompareElement{}, "output": jsonout.CompareOutput{}, "set": jsonout.CompareSet{}, "file": jsonout.ImportFile{},
		"io_value": jsonout.OnnxMapValue{}, "use": jsonout.OnnxMapUse{}, "initializer": jsonout.OnnxMapInit{},
		"adaptersRow": jsonout.AdaptersRow{}, "adaptersEngine": jsonout.AdaptersEngine{},
		"gradTensor": jsonout.CompareGradTensor{}, "gradElement": jsonout.CompareGradElement{},
	}
	if len(docs) != len(jsonout.Kinds()) {
		t.Fatalf("test covers %d kinds, jsonout has %d", len(docs), len(jsonout.Kinds()))
	}
	keys := func(m map[string]json.RawMessage) []string {
		out := make([]string, 0, len(m))
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	for _, kind := range jsonout.Kinds() {
		data, err := Lookup(kind)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := jsonschema.Compile(data); err != nil {
			t.Errorf("%s: %v", kind, err)
			continue
		}
		type def struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		var s struct {
			ID string `json:"$id"`
			def
			Defs map[string]def `json:"$defs"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatal(err)
		}
		if s.ID != jsonout.Format(kind) || !strings.Contains(string(s.Properties["format"]), `"`+jsonout.Format(kind)+`"`) {
			t.Errorf("%s: $id %q and format %s, want %s", kind, s.ID, s.Properties["format"], jsonout.Format(kind))
		}
		if got, want := keys(s.Properties), jsonschema.StructFields(reflect.TypeOf(docs[kind])); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: schema lists %v, the document emits %v", kind, got, want)
		}
		for name, d := range s.Defs {
			typ, ok := defs[name]
			if !ok {
				continue // a leaf definition (sha256, rat, float, value)
			}
			if got, want := keys(d.Properties), jsonschema.StructFields(reflect.TypeOf(typ)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: $defs/%s lists %v, the Go type emits %v", kind, name, got, want)
			}
		}
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown kind succeeded")
	}
}
