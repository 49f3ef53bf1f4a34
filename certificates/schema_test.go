package certificates

import (
	_ "embed"
	"encoding/json"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/internal/jsonschema"
)

//go:embed schema.json
var schemaJSON []byte

// TestSchemaMatchesStructs keeps certificates/schema.json in step with the
// Go types: every definition lists exactly the fields the writer emits.
func TestSchemaMatchesStructs(t *testing.T) {
	t.Parallel()
	var schema struct {
		Defs map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(schemaJSON, &schema); err != nil {
		t.Fatalf("schema.json is not valid JSON: %v", err)
	}
	// Every format constant of the schema is this build's Format.
	for _, m := range regexp.MustCompile(`"const": "(tlcheck\.cert\.[^"]*)"`).FindAllSubmatch(schemaJSON, -1) {
		if string(m[1]) != Format {
			t.Errorf("schema.json names format %s, the writer writes %s", m[1], Format)
		}
	}
	if !strings.Contains(string(schemaJSON), `"$id": "`+Format+`"`) {
		t.Errorf("schema.json's $id is not %s", Format)
	}
	caseProps := func(def string) map[string]json.RawMessage {
		var d struct {
			Properties map[string]struct {
				Items struct {
					Properties map[string]json.RawMessage `json:"properties"`
				} `json:"items"`
			} `json:"properties"`
		}
		var full struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(schemaJSON, &full); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(full.Defs[def], &d); err != nil {
			t.Fatal(err)
		}
		return d.Properties["cases"].Items.Properties
	}
	keys := func(m map[string]json.RawMessage) []string {
		var out []string
		for k := range m {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	cases := []struct {
		def      string
		typ      any
		caseType any
	}{
		{"manifest", Manifest{}, nil},
		{"shardManifest", ShardManifest{}, nil},
		{"adjointness", AdjointnessFile{}, AdjointCase{}},
		{"composition", CompositionFile{}, CompositionCase{}},
		{"refinement", RefinementFile{}, RefinementCase{}},
		{"range", RangeFile{}, nil},
		{"modelComposition", ModelCompositionFile{}, ModelCompositionCase{}},
		{"modelInterval", ModelIntervalFile{}, nil},
		{"refinementElement", RefinementElement{}, nil},
		{"roundingBound", RoundingBound{}, nil},
		{"attrs", Attrs{}, nil},
	}
	for _, c := range cases {
		got := keys(schema.Defs[c.def].Properties)
		want := jsonschema.StructFields(reflect.TypeOf(c.typ))
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("schema %s lists %v, the Go type emits %v", c.def, got, want)
		}
		if c.caseType != nil {
			got := keys(caseProps(c.def))
			want := jsonschema.StructFields(reflect.TypeOf(c.caseType))
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("schema %s.cases lists %v, the Go type emits %v", c.def, got, want)
			}
		}
	}
}
