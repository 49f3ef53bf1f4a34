package irsem

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestExamplesCanonical: every shipped example is a canonical document,
// so export(import(x)) is x byte for byte.
func TestExamplesCanonical(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "examples", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		switch {
		case strings.HasSuffix(f, ".ir.json"):
			g, err := DecodeGraph(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out, err = EncodeGraph(g)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(f, ".payload.json"):
			p, err := DecodePayload(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out, err = EncodePayload(p)
			if err != nil {
				t.Fatal(err)
			}
		case strings.HasSuffix(f, ".input.json"):
			x, err := DecodeTensor(data)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			out, err = EncodeTensor(x)
			if err != nil {
				t.Fatal(err)
			}
		default:
			continue
		}
		if !bytes.Equal(out, data) {
			t.Errorf("%s is not canonical; canonical form:\n%s", f, out)
		}
	}
}

// TestCorpusRoundTrip: import(export(g)) == g and export is idempotent,
// for graphs and payloads using every tag and parameter.
func TestCorpusRoundTrip(t *testing.T) {
	for _, c := range opCases(t) {
		data, err := EncodeGraph(c.g)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		g, err := DecodeGraph(data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, data)
		}
		if !g.Equal(c.g) {
			t.Errorf("%s: graph changed in the round trip", c.name)
		}
		again, _ := EncodeGraph(g)
		if !bytes.Equal(again, data) {
			t.Errorf("%s: export not idempotent:\n%s\n%s", c.name, data, again)
		}
		pdata, err := EncodePayload(c.p)
		if err != nil {
			t.Fatal(err)
		}
		p, err := DecodePayload(pdata)
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, pdata)
		}
		if !p.Equal(c.p) {
			t.Errorf("%s: payload changed in the round trip", c.name)
		}
		if again, _ := EncodePayload(p); !bytes.Equal(again, pdata) {
			t.Errorf("%s: payload export not idempotent", c.name)
		}
	}
}

const quadDoc = `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]},{"id":1,"kind":"relu","parents":[0],"shape":[2]}]}`

// doc wraps node objects in a graph document.
func doc(nodes ...string) string {
	return `{"format":"torchlean.ir.v1","input_id":0,"output_id":` + strconv.Itoa(len(nodes)-1) + `,"nodes":[` + strings.Join(nodes, ",") + `]}`
}

const in2 = `{"id":0,"kind":"input","parents":[],"shape":[2]}`

func TestDecodeGraphErrors(t *testing.T) {
	cases := []struct{ name, doc, want string }{
		{"not json", `{"format":`, "malformed JSON"},
		{"garbage", `hello`, "malformed JSON"},
		{"not an object", `[1,2]`, "expected a JSON object"},
		{"trailing data", quadDoc + ` {}`, "trailing data"},
		{"trailing garbage", quadDoc + `x`, "trailing data"},
		{"unknown root field", strings.Replace(quadDoc, `"format"`, `"extra":1,"format"`, 1), `field "extra": unknown field`},
		{"duplicate root field", strings.Replace(quadDoc, `"input_id":0`, `"input_id":0,"input_id":0`, 1), `field "input_id": duplicate field`},
		{"missing nodes", `{"format":"torchlean.ir.v1","input_id":0,"output_id":0}`, `field "nodes": missing`},
		{"wrong format", strings.Replace(quadDoc, "torchlean.ir.v1", "torchlean.ir.v2", 1), `field "format": expected "torchlean.ir.v1" or "tlcheck.ir.v1", got "torchlean.ir.v2"`},
		{"format not a string", strings.Replace(quadDoc, `"torchlean.ir.v1"`, `1`, 1), `field "format": expected a JSON string`},
		{"no nodes", `{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":[]}`, `field "nodes": the graph has no nodes`},
		{"nodes null", `{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":null}`, `field "nodes": expected a JSON array, got null`},
		{"unknown tag", doc(in2, `{"id":1,"kind":"frobnicate","parents":[0],"shape":[2]}`), `node 1: field "kind": unknown op tag "frobnicate"`},
		{"missing kind", doc(in2, `{"id":1,"parents":[0],"shape":[2]}`), `node 1: field "kind": missing`},
		{"bad arity", doc(in2, `{"id":1,"kind":"relu","parents":[0,0],"shape":[2]}`), `node 1 (relu): field "parents": relu takes 1 parents, got 2`},
		{"concat arity", doc(in2, `{"id":1,"kind":"concat","parents":[0],"shape":[2],"axis":0}`), `node 1 (concat): field "parents": concat takes at least 2 parents, got 1`},
		{"parent not below", doc(in2, `{"id":1,"kind":"relu","parents":[0],"shape":[2]}`, `{"id":2,"kind":"relu","parents":[5],"shape":[2]}`),
			`node 2 (relu): field "parents": parent 5 is not < id 2`},
		{"self cycle", doc(in2, `{"id":1,"kind":"relu","parents":[1],"shape":[2]}`), `parent 1 is not < id 1 (a node cannot depend on itself: a cycle)`},
		{"negative parent", doc(in2, `{"id":1,"kind":"relu","parents":[-1],"shape":[2]}`), `node 1 (relu): field "parents": entry 0: expected an integer`},
		{"id mismatch", doc(in2, `{"id":3,"kind":"relu","parents":[0],"shape":[2]}`), `node 1 (relu): field "id": nodes[1] has id 3`},
		{"missing id", doc(in2, `{"kind":"relu","parents":[0],"shape":[2]}`), `node 1 (relu): field "id": missing`},
		{"wrong shape", doc(in2, `{"id":1,"kind":"relu","parents":[0],"shape":[3]}`), `node 1 (relu): field "shape": declared [3], inferred [2]`},
		{"matmul mismatch", doc(`{"id":0,"kind":"input","parents":[],"shape":[2,3]}`, `{"id":1,"kind":"matmul","parents":[0,0],"shape":[2,3]}`),
			`node 1 (matmul): field "parents": matmul: matmul inner dimensions differ`},
		{"add mismatch", doc(in2, `{"id":1,"kind":"sum","parents":[0],"shape":[]}`, `{"id":2,"kind":"add","parents":[0,1],"shape":[2]}`),
			`node 2 (add): field "parents": add: parent 1 has shape [], expected [2]`},
		{"oversized shape", doc(`{"id":0,"kind":"input","parents":[],"shape":[100000,100000]}`), `node 0 (input): field "shape": shape [100000,100000] has more than 134217728 elements`},
		{"rank too high", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]}`), `node 0 (input): field "shape": more than 16 entries`},
		{"negative extent", doc(`{"id":0,"kind":"input","parents":[],"shape":[-1]}`), `field "shape": entry 0: expected an integer in [0, 2147483647], got -1`},
		{"fractional extent", doc(`{"id":0,"kind":"input","parents":[],"shape":[1.5]}`), `got 1.5`},
		{"exponent extent", doc(`{"id":0,"kind":"input","parents":[],"shape":[1e3]}`), `got 1e3`},
		{"string extent", doc(`{"id":0,"kind":"input","parents":[],"shape":["2"]}`), `got "2"`},
		{"huge extent", doc(`{"id":0,"kind":"input","parents":[],"shape":[99999999999999999999999]}`), `expected an integer in [0, 2147483647]`},
		{"misplaced attribute", doc(in2, `{"id":1,"kind":"relu","parents":[0],"shape":[2],"axis":0}`), `node 1 (relu): field "axis": relu takes no "axis" attribute`},
		{"unknown node field", doc(in2, `{"id":1,"kind":"relu","parents":[0],"shape":[2],"color":"red"}`), `node 1 (relu): field "color": unknown field`},
		{"duplicate node field", doc(in2, `{"id":1,"kind":"relu","parents":[0],"shape":[2],"shape":[2]}`), `node 1: field "shape": duplicate field`},
		{"missing attribute", doc(in2, `{"id":1,"kind":"softmax","parents":[0],"shape":[2]}`), `node 1 (softmax): field "axis": missing`},
		{"axis out of range", doc(in2, `{"id":1,"kind":"softmax","parents":[0],"shape":[2],"axis":1}`), `node 1 (softmax): field "axis": axis 1 out of range for rank 1`},
		{"negative axis", doc(in2, `{"id":1,"kind":"softmax","parents":[0],"shape":[2],"axis":-1}`), `node 1 (softmax): field "axis": expected an integer`},
		{"bad perm", doc(`{"id":0,"kind":"input","parents":[],"shape":[2,3]}`, `{"id":1,"kind":"permute","parents":[0],"shape":[2,3],"perm":[0,0]}`),
			`node 1 (permute): field "perm": permute: [0 0] is not a permutation of 0..1`},
		{"broadcast from", doc(in2, `{"id":1,"kind":"broadcast_to","parents":[0],"shape":[3,2],"from_shape":[3],"to_shape":[3,2]}`),
			`node 1 (broadcast_to): field "from_shape": from_shape [3] is not the parent's shape [2]`},
		{"reshape size", doc(in2, `{"id":1,"kind":"reshape","parents":[0],"shape":[3],"in_shape":[2],"out_shape":[3]}`),
			`node 1 (reshape): field "out_shape": reshape: cannot reshape [2] (2 elements) to [3] (3 elements)`},
		{"two inputs", doc(in2, `{"id":1,"kind":"input","parents":[],"shape":[2]}`), `field "nodes": the graph has 2 input nodes`},
		{"input_id not input", strings.Replace(quadDoc, `"input_id":0`, `"input_id":1`, 1), `field "input_id": node 1 is a relu node, not an input`},
		{"output_id out of range", strings.Replace(quadDoc, `"output_id":1`, `"output_id":9`, 1), `field "output_id": 9 is not a node id (the graph has 2 nodes)`},
		{"input_id huge", strings.Replace(quadDoc, `"input_id":0`, `"input_id":18446744073709551616`, 1), `field "input_id": expected an integer in [0, 1048576]`},
		{"const value_shape", doc(in2, `{"id":1,"kind":"const","parents":[],"shape":[3],"value_shape":[2]}`), `node 1 (const): field "shape": declared [3], inferred [2]`},
		{"bernoulli parent", doc(in2, `{"id":1,"kind":"bernoulli_mask","parents":[0],"shape":[4],"seed":1}`),
			`node 1 (bernoulli_mask): field "parents": the keep-probability parent 0 must be a scalar`},
		{"seed overflow", doc(`{"id":0,"kind":"input","parents":[],"shape":[]}`, `{"id":1,"kind":"bernoulli_mask","parents":[0],"shape":[4],"seed":18446744073709551616}`),
			`node 1 (bernoulli_mask): field "seed": expected an integer in [0, 18446744073709551615]`},
		{"safe_log eps", doc(in2, `{"id":1,"kind":"safe_log","parents":[0,0],"shape":[2]}`), `node 1 (safe_log): field "parents": the ε parent 0 must be a scalar`},
		{"linear rank", doc(in2, `{"id":1,"kind":"linear","parents":[0],"shape":[3,3]}`), `node 1 (linear): field "shape": linear maps the last axis`},
		{"mask length", doc(in2, `{"id":1,"kind":"hard_masked_softmax","parents":[0],"shape":[2],"mask":{"shape":[2],"allowed":[true]}}`),
			`node 1 (hard_masked_softmax): field "mask.allowed": mask of shape [2] needs 2 entries, got 1`},
		{"mask entry", doc(in2, `{"id":1,"kind":"hard_masked_softmax","parents":[0],"shape":[2],"mask":{"shape":[2],"allowed":[true,1]}}`),
			`node 1 (hard_masked_softmax): field "mask.allowed[1]": expected true or false, got 1`},
		{"mask shape", doc(in2, `{"id":1,"kind":"hard_masked_softmax","parents":[0],"shape":[2],"mask":{"shape":[1,2],"allowed":[true,true]}}`),
			`node 1 (hard_masked_softmax): field "mask": mask shape [1,2] is not the input's shape [2]`},
		{"layernorm suffix", doc(`{"id":0,"kind":"input","parents":[],"shape":[2,0]}`, `{"id":1,"kind":"layernorm","parents":[0],"shape":[2,0],"axis":1}`),
			`node 1 (layernorm): field "axis": the normalized suffix [0] of [2,0] is empty`},
		{"batch norm channels", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,3]}`, `{"id":1,"kind":"batch_norm_eval","parents":[0],"shape":[1,3],"channel_axis":1,"channels":2}`),
			`node 1 (batch_norm_eval): field "channels": channels 2, but axis 1 of the input [1,3] has extent 3`},
		{"conv groups", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,3,4,4]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[1,2,3,3],"kernel":[2,2],"stride":[1,1],"padding":[0,0],"dilation":[1,1],"groups":2,"in_channels":3,"out_channels":2}`),
			`node 1 (conv): field "groups": groups 2 must divide in_channels 3 and out_channels 2`},
		{"conv kernel", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,1,2,2]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[1,1,1,1],"kernel":[3,3],"stride":[1,1],"padding":[0,0],"dilation":[1,1],"groups":1,"in_channels":1,"out_channels":1}`),
			`node 1 (conv): field "kernel": window 3 on spatial axis 0 exceeds the padded extent 2`},
		{"conv stride length", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,1,2,2]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[1,1,1,1],"kernel":[2,2],"stride":[1],"padding":[0,0],"dilation":[1,1],"groups":1,"in_channels":1,"out_channels":1}`),
			`node 1 (conv): field "stride": 1 entries, expected one per spatial axis (2)`},
		{"conv zero stride", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,1,2,2]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[1,1,1,1],"kernel":[2,2],"stride":[0,1],"padding":[0,0],"dilation":[1,1],"groups":1,"in_channels":1,"out_channels":1}`),
			`node 1 (conv): field "stride": entry 0 is 0, outside [1, 134217728]`},
		{"conv missing dilation", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,1,2,2]}`,
			`{"id":1,"kind":"conv","parents":[0],"shape":[1,1,1,1],"kernel":[2,2],"stride":[1,1],"padding":[0,0],"groups":1,"in_channels":1,"out_channels":1}`),
			`node 1 (conv): field "dilation": missing`},
		{"pool dilation", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,4,4]}`,
			`{"id":1,"kind":"max_pool","parents":[0],"shape":[1,2,2],"kernel":[2,2],"stride":[2,2],"padding":[0,0],"dilation":[1,1]}`),
			`node 1 (max_pool): field "dilation": max_pool takes no "dilation" attribute`},
		{"pool padding", doc(`{"id":0,"kind":"input","parents":[],"shape":[1,4,4]}`,
			`{"id":1,"kind":"max_pool","parents":[0],"shape":[1,4,4],"kernel":[2,2],"stride":[2,2],"padding":[2,0]}`),
			`node 1 (max_pool): field "padding": padding 2 on spatial axis 0 must be smaller than the kernel 2`},
		{"deep nesting", `{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":[` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `]}`, "malformed JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := DecodeGraph([]byte(c.doc))
			if err == nil {
				t.Fatalf("decoded %+v, want error %q", g, c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got  %q\nwant %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not an *Error", err)
			}
		})
	}
}

// TestCheckRejectsStrayAttributes: a Kind built in code that sets an
// attribute its tag does not read would not survive export; Check refuses
// it.
func TestCheckRejectsStrayAttributes(t *testing.T) {
	cases := []struct {
		g    *Graph
		want string
	}{
		{graphOf(input(2), nd(OpRelu, []int{0}, spec.Shape{2}, withAxis(1))), `node 1 (relu): field "axis": relu takes no "axis" attribute`},
		{graphOf(input(2), nd(OpRelu, []int{0}, spec.Shape{2}, withSeed(1))), `field "seed"`},
		{graphOf(input(1, 4, 4), nd(OpMaxPool, []int{0}, spec.Shape{1, 2, 2},
			withWindow(spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Padding: []int{0, 0}, Groups: 1}))), `field "groups"`},
		{&Graph{Nodes: []Node{{ID: 1, Kind: Kind{Op: OpInput}}}}, `node 0: field "id": nodes[0] has id 1`},
		{graphOf(input(2), nd("frob", []int{0}, spec.Shape{2})), `node 1: field "kind": unknown op tag "frob"`},
		{&Graph{}, `field "nodes": the graph has no nodes`},
	}
	for _, c := range cases {
		err := c.g.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
		if _, err := EncodeGraph(c.g); err == nil {
			t.Errorf("EncodeGraph accepted an invalid graph (%s)", c.want)
		}
	}
}

func TestParseRational(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{"3", "3", ""},
		{"-3/2", "-3/2", ""},
		// One spelling per integer and fraction (issue 10 §4b): these
		// were accepted before and are refused now.
		{"6/4", "", `non-canonical rational "6/4": write "3/2"`},
		{"2/4", "", `write "1/2"`},
		{"1/1", "", `write "1"`},
		{"-4/2", "", `write "-2"`},
		{"0/5", "", `write "0"`},
		{"-0/5", "", "negative zero"},
		{"-0.0", "", "negative zero"},
		{"-0e3", "", "negative zero"},
		{"01", "", "a leading zero"},
		{"-01/2", "", "a leading zero"},
		{"01.5", "", "a leading zero"},
		{"1/02", "", "a leading zero in the denominator"},
		{"0", "0", ""},
		{"0.5", "1/2", ""},
		{"1.50", "3/2", ""},
		{"12/35", "12/35", ""},
		{"0.1", "1/10", ""},
		{"-2.5e-3", "-1/400", ""},
		{"1E2", "100", ""},
		{"007", "", "a leading zero"},
		{"-0", "", "a negative zero"},
		{"1/0", "", "zero denominator"},
		{"1/00", "", "a leading zero in the denominator"},
		{"1/-2", "", "denominator must be a positive integer"},
		{"+1", "", "malformed rational"},
		{" 1", "", "malformed rational"},
		{"1 ", "", "malformed rational"},
		{"0x10", "", "malformed rational"},
		{"1.", "", "digits after the decimal point"},
		{".5", "", "malformed rational"},
		{"1e", "", "digits in the exponent"},
		{"1e5000", "", "exponent beyond ±4096"},
		{"1e99999999999999999999", "", "exponent beyond ±4096"},
		{"Inf", "", "malformed rational"},
		{"NaN", "", "malformed rational"},
		{"1/2/3", "", "denominator must be a positive integer"},
		{"", "", "empty"},
		{strings.Repeat("9", 5000), "", "longer than 4096 bytes"},
	}
	for _, c := range cases {
		r, err := ParseRational(c.in)
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("ParseRational(%.20q) = %v, %v; want error %q", c.in, r, err, c.err)
			}
		case err != nil || r.String() != c.want:
			t.Errorf("ParseRational(%q) = %v, %v; want %s", c.in, r, err, c.want)
		}
	}
}

func TestDecodeTensor(t *testing.T) {
	cases := []struct{ in, want, err string }{
		{`{"shape":[2],"values":["3","-3/2"]}`, "[3, -3/2]", ""},
		{`{"values":[0.1, 1e-3, -7],"shape":[3]}`, "[1/10, 1/1000, -7]", ""},
		{` {"shape":[],"values":[5]} `, "5", ""},
		{`{"shape":[2,0],"values":[]}`, "[[], []]", ""},
		{`{"shape":[2],"values":["3"]}`, "", `field "values": a tensor of shape [2] needs 2 values, got 1`},
		{`{"shape":[2],"values":["3","x"]}`, "", `field "values[1]": malformed rational "x"`},
		{`{"shape":[1],"values":[true]}`, "", `field "values[0]": expected a rational (a string "p/q" or a number), got true`},
		{`{"shape":[1],"values":[null]}`, "", `got null`},
		{`{"shape":[1],"values":["1/0"]}`, "", `zero denominator`},
		{`{"shape":[1]}`, "", `field "values": missing`},
		{`{"shape":[1],"values":[1],"dtype":"f32"}`, "", `field "dtype": unknown field`},
		{`{"shape":[1],"values":[1]}{}`, "", `trailing data`},
		{`{"shape":[70000,70000],"values":[]}`, "", `field "shape": shape [70000,70000] has more than`},
		{`{"shape":[1],"values":[1e5000]}`, "", `exponent beyond`},
	}
	for _, c := range cases {
		x, err := DecodeTensor([]byte(c.in))
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("DecodeTensor(%s) = %v, %v; want error %q", c.in, x, err, c.err)
			}
		case err != nil || x.String() != c.want:
			t.Errorf("DecodeTensor(%s) = %v, %v; want %s", c.in, x, err, c.want)
		}
	}
}

// TestNumbersExact: plain JSON numbers are the exact decimals they spell,
// never float64 approximations.
func TestNumbersExact(t *testing.T) {
	x, err := DecodeTensor([]byte(`{"shape":[3],"values":[0.1,1e-30,123456789012345678901234567890]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1/10", "1/1000000000000000000000000000000", "123456789012345678901234567890"}
	for i, w := range want {
		if x.Data[i].String() != w {
			t.Errorf("value %d = %s, want %s", i, x.Data[i], w)
		}
	}
}

func TestDecodePayloadErrors(t *testing.T) {
	w := func(entries string) string { return `{"format":"tlcheck.payload.v1","entries":{` + entries + `}}` }
	cases := []struct{ name, doc, want string }{
		{"ok", w(`"1":{"W":{"shape":[1],"values":[1]},"eps":"1/3"}`), ""},
		{"empty", w(``), ""},
		{"malformed json", `{"format":`, "malformed JSON"},
		{"wrong format", `{"format":"torchlean.ir.v1","entries":{}}`, `field "format": expected "tlcheck.payload.v1"`},
		{"missing entries", `{"format":"tlcheck.payload.v1"}`, `field "entries": missing`},
		{"unknown root", `{"format":"tlcheck.payload.v1","entries":{},"x":1}`, `field "x": unknown field`},
		{"trailing", w(``) + `]`, "trailing data"},
		{"bad key", w(`"01":{}`), `field "entries": key "01" is not a node id`},
		{"negative key", w(`"-1":{}`), `field "entries": key "-1" is not a node id`},
		{"huge key", w(`"99999999999":{}`), `is not a node id`},
		{"duplicate key", w(`"1":{},"1":{}`), `field "entries.1": duplicate field`},
		{"unknown param", w(`"1":{"Q":{"shape":[1],"values":[1]}}`), `node 1: field "Q": unknown payload parameter`},
		{"zero denominator", w(`"1":{"W":{"shape":[2],"values":["1","1/0"]}}`), `node 1: field "W.values[1]": malformed rational "1/0": zero denominator`},
		{"hex", w(`"1":{"W":{"shape":[1],"values":["0x10"]}}`), `node 1: field "W.values[0]": malformed rational "0x10"`},
		{"nan", w(`"1":{"W":{"shape":[1],"values":["NaN"]}}`), `malformed rational "NaN"`},
		{"bool", w(`"1":{"W":{"shape":[1],"values":[false]}}`), `expected a rational`},
		{"count", w(`"1":{"W":{"shape":[2],"values":[1,2,3]}}`), `node 1: field "W.values": a tensor of shape [2] needs 2 values, got more`},
		{"eps tensor", w(`"1":{"eps":{"shape":[1],"values":[1]}}`), `node 1: field "eps": expected a rational`},
		{"oversized", w(`"1":{"W":{"shape":[100000,100000],"values":[]}}`), `node 1: field "W.shape": shape [100000,100000] has more than`},
		{"exponent bomb", w(`"1":{"W":{"shape":[8],"values":[1e4000,1e4000,1e4000,1e4000,1e4000,1e4000,1e4000,1e4000]}}`), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := DecodePayload([]byte(c.doc))
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v (%v)\nwant %q", err, p, c.want)
			}
		})
	}
	// The bit budget stops a document whose exponents would allocate far
	// more than its size.
	var b strings.Builder
	b.WriteString(`{"format":"tlcheck.payload.v1","entries":{"1":{"W":{"shape":[2000],"values":[`)
	for i := 0; i < 2000; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("1e4096")
	}
	b.WriteString(`]}}}}`)
	if _, err := DecodePayload([]byte(b.String())); err == nil || !strings.Contains(err.Error(), "bit budget") {
		t.Errorf("exponent bomb: %v", err)
	}
}

func TestCheckPayloadErrors(t *testing.T) {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	lin := graphOf(input(2), nd(OpLinear, []int{0}, s(3)), nd(OpRelu, []int{1}, s(3)))
	W, b := rtp(t, s(3, 2), "1", "2", "3", "4", "5", "6"), rtp(t, s(3), "1", "2", "3")
	ln := graphOf(input(2, 3), nd(OpLayerNorm, []int{0}, s(2, 3), withAxis(1)))
	bn := graphOf(input(1, 2), nd(OpBatchNormEval, []int{0}, s(1, 2), func(k *Kind) { k.ChannelAxis, k.Channels = 1, 2 }))
	cn := graphOf(input(1, 4, 4), nd(OpConv, []int{0}, s(2, 3, 3),
		withWindow(spec.Window{Kernel: []int{2, 2}, Stride: []int{1, 1}, Padding: []int{0, 0}, Dilation: []int{1, 1}, Groups: 1, InChannels: 1, OutChannels: 2})))
	cases := []struct {
		name string
		g    *Graph
		p    *Payload
		want string
	}{
		{"ok", lin, payloadOf(map[int]*Params{1: {W: W, B: b}}), ""},
		{"missing entry", lin, nil, "node 1 (linear): missing linear payload for node 1"},
		{"missing W", lin, payloadOf(map[int]*Params{1: {B: b}}), `node 1 (linear): payload entry missing "W"`},
		{"missing b", lin, payloadOf(map[int]*Params{1: {W: W}}), `node 1 (linear): payload entry missing "b"`},
		{"W shape", lin, payloadOf(map[int]*Params{1: {W: rtp(t, s(2, 3), "1", "2", "3", "4", "5", "6"), B: b}}), `node 1 (linear): payload "W" has shape [2,3], expected [3,2]`},
		{"stray param", lin, payloadOf(map[int]*Params{1: {W: W, B: b, Gamma: b}}), `node 1 (linear): payload "gamma" is not a parameter of linear`},
		{"entry for relu", lin, payloadOf(map[int]*Params{1: {W: W, B: b}, 2: {}}), "node 2 (relu): relu takes no payload entry"},
		{"entry for no node", lin, payloadOf(map[int]*Params{1: {W: W, B: b}, 9: {}}), "node 9: payload entry for a node the graph does not have (it has 3 nodes)"},
		{"layernorm ok", ln, payloadOf(map[int]*Params{1: {Gamma: rtp(t, s(3), "1", "1", "1")}}), ""},
		{"layernorm none", ln, nil, ""},
		{"layernorm gamma", ln, payloadOf(map[int]*Params{1: {Gamma: rtp(t, s(2), "1", "1")}}), `node 1 (layernorm): payload "gamma" has shape [2], expected [3]`},
		{"batchnorm var", bn, payloadOf(map[int]*Params{1: {Mean: rtp(t, s(2), "1", "1")}}), `node 1 (batch_norm_eval): payload entry missing "var"`},
		{"batchnorm beta", bn, payloadOf(map[int]*Params{1: {Mean: rtp(t, s(2), "1", "1"), Var: rtp(t, s(2), "1", "1"), Beta: rtp(t, s(1), "1")}}),
			`node 1 (batch_norm_eval): payload "beta" has shape [1], expected [2]`},
		{"conv W", cn, payloadOf(map[int]*Params{1: {W: rtp(t, s(2, 1, 2), "1", "1", "1", "1")}}), `node 1 (conv): payload "W" has shape [2,1,2], expected [2,1,2,2]`},
		{"conv ok", cn, payloadOf(map[int]*Params{1: {W: ptr(ints(s(2, 1, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8))}}), ""},
		{"const", graphOf(input(2), nd(OpConst, nil, s(2), withValueShape(2))), nil, "node 1 (const): missing const payload for node 1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckPayload(c.g, c.p)
			if c.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// TestReaders exercises the io.Reader entry points and their size limit.
func TestReaders(t *testing.T) {
	g, err := ReadGraph(strings.NewReader(quadDoc))
	if err != nil || len(g.Nodes) != 2 {
		t.Fatalf("ReadGraph: %v", err)
	}
	if _, err := ReadPayload(strings.NewReader(`{"format":"tlcheck.payload.v1","entries":{}}`)); err != nil {
		t.Fatalf("ReadPayload: %v", err)
	}
	x, err := ReadTensor(strings.NewReader(`{"shape":[2],"values":["3","-3/2"]}`))
	if err != nil || x.String() != "[3, -3/2]" {
		t.Fatalf("ReadTensor: %v %v", x, err)
	}
	if _, err := DecodeGraph(make([]byte, MaxDocumentBytes+1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("oversized document: %v", err)
	}
}

// TestEncodeTensorFloats: floats print as their shortest decimals, which
// read back exactly to the same float.
func TestEncodeTensorFloats(t *testing.T) {
	x := spec.Vector[spec.F32](0.1, -2.5, 3)
	data, err := EncodeTensor(x)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != `{"shape":[3],"values":["0.1","-2.5","3"]}`+"\n" {
		t.Errorf("got %s", data)
	}
	r, err := DecodeTensor(data)
	if err != nil {
		t.Fatal(err)
	}
	if back := ConvertTensor[spec.F32](r); !spec.SameTensor(back, x) {
		t.Errorf("round trip %v → %v", x, back)
	}
}

// TestLongArraysStopEarly: an array longer than its bound is rejected
// without reading the excess (the count in the message is the bound).
func TestLongArraysStopEarly(t *testing.T) {
	long := strings.Repeat("0,", 1<<20) + "0"
	cases := []struct{ doc, want string }{
		{doc(in2, `{"id":1,"kind":"relu","parents":[`+long+`],"shape":[2]}`), `node 1 (relu): field "parents": 4097 or more parents: over the parents limit 4096 (raise it with --max-parents or TLCHECK_MAX_PARENTS)`},
		{`{"shape":[2],"values":[` + long + `]}`, `field "values": a tensor of shape [2] needs 2 values, got more`},
		{`{"shape":[3],"values":[1,[2],3]}`, `field "values[1]": expected a rational (a string "p/q" or a number), got an array`},
		{doc(in2, `{"id":1,"kind":"hard_masked_softmax","parents":[0],"shape":[2],"mask":{"allowed":[true,true,true],"shape":[2]}}`),
			`node 1 (hard_masked_softmax): field "mask.allowed": mask of shape [2] needs 2 entries, got more`},
	}
	for _, c := range cases {
		var err error
		if strings.HasPrefix(c.doc, `{"shape"`) {
			_, err = DecodeTensor([]byte(c.doc))
		} else {
			_, err = DecodeGraph([]byte(c.doc))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}
