package irsem

import (
	"strings"
	"testing"
)

// TestOneReadingOfInputs (issue 10 §4b): the graph, payload and tensor
// readers refuse every second spelling that another JSON reader would read
// differently — a duplicate key (last wins in encoding/json), a key that
// differs only in case (encoding/json matches it), an unknown key, a
// missing required one — and every non-canonical rational, each with an
// error naming the node, field or element.
func TestOneReadingOfInputs(t *testing.T) {
	const graph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"relu","parents":[0],"shape":[2]}]}`
	const payload = `{"format":"tlcheck.payload.v1","entries":{"1":{"W":{"shape":[1,2],"values":["1/2","-1"]},"b":{"shape":[1],"values":["0"]}}}}`
	const tensor = `{"shape":[2],"values":["3","-3/2"]}`
	type doc int
	const (
		isGraph doc = iota
		isPayload
		isTensor
	)
	decode := func(d doc, s string) error {
		var err error
		switch d {
		case isGraph:
			_, err = DecodeGraph([]byte(s))
		case isPayload:
			_, err = DecodePayload([]byte(s))
		default:
			_, err = DecodeTensor([]byte(s))
		}
		return err
	}
	cases := []struct {
		name     string
		d        doc
		old, new string // the edit of the valid document
		want     string // "" for accepted
	}{
		{"graph as is", isGraph, "", "", ""},
		{"payload as is", isPayload, "", "", ""},
		{"tensor as is", isTensor, "", "", ""},
		{"graph: duplicate key", isGraph, `"output_id":1`, `"output_id":0,"output_id":1`, `"output_id": duplicate field`},
		{"graph: case variant", isGraph, `"output_id":1`, `"output_id":1,"Output_ID":0`, `"Output_ID": unknown field`},
		{"graph node: case variant", isGraph, `"kind":"relu"`, `"kind":"relu","Kind":"exp"`, `node 1 (relu): field "Kind": unknown field`},
		{"graph node: duplicate", isGraph, `"kind":"relu"`, `"kind":"exp","kind":"relu"`, `duplicate field`},
		{"graph node: missing shape", isGraph, `"parents":[0],"shape":[2]`, `"parents":[0]`, `node 1 (relu): field "shape": missing`},
		{"payload: case variant entries", isPayload, `"entries"`, `"Entries"`, `"Entries": unknown field`},
		{"payload: case variant parameter", isPayload, `"W"`, `"w"`, `node 1: field "w": unknown payload parameter`},
		{"payload: duplicate parameter", isPayload, `"b":`, `"W":{"shape":[0],"values":[]},"b":`, `"W": duplicate field`},
		{"payload: 2/4", isPayload, `"1/2"`, `"2/4"`, `W.values[0]": non-canonical rational "2/4": write "1/2"`},
		{"payload: -0", isPayload, `["0"]`, `["-0"]`, `b.values[0]": non-canonical rational "-0"`},
		{"tensor: case variant", isTensor, `"shape"`, `"Shape"`, `"Shape": unknown field`},
		{"tensor: duplicate", isTensor, `"values"`, `"shape":[1],"values"`, `duplicate field`},
		{"tensor: missing values", isTensor, `,"values":["3","-3/2"]`, ``, `values`},
		{"tensor: 1/1", isTensor, `"3"`, `"3/1"`, `write "3"`},
		{"tensor: 01", isTensor, `"3"`, `"03"`, `a leading zero`},
		{"tensor: 1/1 literally", isTensor, `"3"`, `"1/1"`, `write "1"`},
		{"tensor: JSON number -0", isTensor, `"3"`, `-0`, `negative zero`},
		{"tensor: decimal", isTensor, `"3"`, `3.0`, ""},
	}
	for _, c := range cases {
		src := map[doc]string{isGraph: graph, isPayload: payload, isTensor: tensor}[c.d]
		if c.old != "" {
			if !strings.Contains(src, c.old) {
				t.Fatalf("%s: no %q in the document", c.name, c.old)
			}
			src = strings.Replace(src, c.old, c.new, 1)
		}
		err := decode(c.d, src)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
