package irsem

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// regopsCases are corpus graphs of the tags of spec's other primitives
// (the superset IR forms of existing primitives and the new ones), with
// outputs derived by hand.
func regopsCases(t testing.TB) []opCase {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	withRat := func(set func(k *Kind, r spec.Rat), v string) func(*Kind) {
		r := rat(t, v)
		return func(k *Kind) { set(k, r) }
	}
	cs := []opCase{
		// 1/2, −2/−2, (1/2)/(−1)
		binCase(t, OpDiv, "1/2", "1", "-1/2"),
		// 3/2·2, 3/2·(−2/3)
		{name: "scale", g: graphOf(input(2), nd(OpScale, []int{0}, s(2), withRat(func(k *Kind, r spec.Rat) { k.C = r }, "3/2"))),
			x: rt(t, s(2), "2", "-2/3"), want: rtp(t, s(2), "3", "-1")},
		unaryCase(t, OpNeg, []string{"1", "-1/2", "0"}, []string{"-1", "1/2", "0"}),
		unaryCase(t, OpSquare, []string{"3", "-1/2"}, []string{"9", "1/4"}),
		{name: "clamp", g: graphOf(input(4), nd(OpClamp, []int{0}, s(4), func(k *Kind) { k.Lo, k.Hi = rat(t, "-1"), rat(t, "1/2") })),
			x: rt(t, s(4), "-2", "0", "1", "1/2"), want: rtp(t, s(4), "-1", "0", "1/2", "1/2")},
		{name: "gelu", g: graphOf(input(3), nd(OpGelu, []int{0}, s(3))), x: rt(t, s(3), "1", "-1/2", "2"), inexact: true,
			f64: []float64{gelu64(1), gelu64(-0.5), gelu64(2)}},
		// x − log(e^0 + e^1) per row
		{name: "log_softmax", g: graphOf(input(2, 2), nd(OpLogSoftmax, []int{0}, s(2, 2), withAxis(1))), x: rt(t, s(2, 2), "0", "1", "2", "2"),
			inexact: true, f64: []float64{-math.Log(1 + math.E), 1 - math.Log(1+math.E), -math.Log(2), -math.Log(2)}},
		{name: "slice", g: graphOf(input(2, 3), nd(OpSlice, []int{0}, s(2, 2), func(k *Kind) { k.Axis, k.Start, k.End = 1, 1, 3 })),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(2, 2), "2", "3", "5", "6")},
	}
	return append(cs, regopsPrimCases(t)...)
}

func gelu64(x float64) float64 {
	return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
}

// supersetDoc is a small tlcheck.ir.v1 document with rational, string
// and list attributes.
const supersetDoc = `{"format":"tlcheck.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3]},
  {"id":1,"kind":"scale","parents":[0],"shape":[2,3],"c":"-3/2"},
  {"id":2,"kind":"clamp","parents":[1],"shape":[2,3],"lo":"-1","hi":"1/2"},
  {"id":3,"kind":"slice","parents":[2],"shape":[2,2],"axis":1,"start":0,"end":2}
]}
`

// TestSupersetFormat: a graph with a superset tag is written as
// tlcheck.ir.v1 and read back equal; a torchlean.ir.v1 document may not use
// one; EncodeTorchLean refuses it naming the first such node and tag, and
// writes a TorchLean-only graph exactly as EncodeGraph does.
func TestSupersetFormat(t *testing.T) {
	g, err := DecodeGraph([]byte(supersetDoc))
	if err != nil {
		t.Fatal(err)
	}
	if g.Format() != FormatIRSuperset || g.FirstSuperset() != 1 {
		t.Errorf("Format %q, FirstSuperset %d; want %q, 1", g.Format(), g.FirstSuperset(), FormatIRSuperset)
	}
	if k := g.Nodes[1].Kind; !k.C.Same(spec.NewRat(-3, 2)) {
		t.Errorf("scale c = %v, want -3/2", k.C)
	}
	if k := g.Nodes[2].Kind; !k.Lo.Same(spec.NewRat(-1, 1)) || !k.Hi.Same(spec.NewRat(1, 2)) {
		t.Errorf("clamp lo, hi = %v, %v", k.Lo, k.Hi)
	}
	out, err := EncodeGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != supersetDoc {
		t.Errorf("round trip:\n%s\nwant\n%s", out, supersetDoc)
	}
	_, err = EncodeTorchLean(g)
	if want := `node 1 (scale): field "kind": scale is a tlcheck.ir.v1 tag that torchlean.ir.v1 does not have`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("EncodeTorchLean: %v, want prefix %q", err, want)
	}
	tl := strings.Replace(supersetDoc, "tlcheck.ir.v1", "torchlean.ir.v1", 1)
	_, err = DecodeGraph([]byte(tl))
	if want := `node 1 (scale): field "kind": scale is a tlcheck.ir.v1 tag`; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("torchlean document with a superset tag: %v, want prefix %q", err, want)
	}
	// A TorchLean-only graph: both encoders write torchlean.ir.v1, and
	// a tlcheck.ir.v1 spelling of it is read but written back as
	// torchlean.ir.v1.
	plain := "{\"format\":\"torchlean.ir.v1\",\"input_id\":0,\"output_id\":1,\"nodes\":[\n  {\"id\":0,\"kind\":\"input\",\"parents\":[],\"shape\":[2]},\n  {\"id\":1,\"kind\":\"relu\",\"parents\":[0],\"shape\":[2]}\n]}\n"
	for _, doc := range []string{plain, strings.Replace(plain, "torchlean.ir.v1", "tlcheck.ir.v1", 1)} {
		h, err := DecodeGraph([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		a, err1 := EncodeGraph(h)
		b, err2 := EncodeTorchLean(h)
		if err1 != nil || err2 != nil || string(a) != plain || string(b) != plain {
			t.Errorf("TorchLean-only graph: %q (%v), %q (%v)", a, err1, b, err2)
		}
	}
}

// TestExamplesByteIdentical: every shipped graph document is written back
// byte for byte (the superset changes nothing for TorchLean graphs).
func TestExamplesByteIdentical(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "*.ir.json"))
	if len(files) == 0 {
		t.Skip("no ../examples/*.ir.json")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		g, err := DecodeGraph(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		out, err := EncodeGraph(g)
		if err != nil || !bytes.Equal(out, data) {
			t.Errorf("%s: not byte-identical after a round trip (%v)", f, err)
		}
		if tl, err := EncodeTorchLean(g); err != nil || !bytes.Equal(tl, data) {
			t.Errorf("%s: EncodeTorchLean differs (%v)", f, err)
		}
	}
}

// TestSupersetAttrsStrict: every new attribute is decoded strictly; the
// errors name the node, the tag and the field.
func TestSupersetAttrsStrict(t *testing.T) {
	node := func(body string) string {
		return `{"format":"tlcheck.ir.v1","input_id":0,"output_id":1,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2,3]},` + body + `]}`
	}
	cases := []struct{ name, body, want string }{
		{"rational as number", `{"id":1,"kind":"scale","parents":[0],"shape":[2,3],"c":1.5}`, `node 1 (scale): field "c": expected a rational as a JSON string`},
		{"non-canonical rational", `{"id":1,"kind":"scale","parents":[0],"shape":[2,3],"c":"2/4"}`, `node 1 (scale): field "c": non-canonical rational "2/4"`},
		{"malformed rational", `{"id":1,"kind":"scale","parents":[0],"shape":[2,3],"c":"1/0"}`, `node 1 (scale): field "c": malformed rational "1/0": zero denominator`},
		{"missing c", `{"id":1,"kind":"scale","parents":[0],"shape":[2,3]}`, `node 1 (scale): field "c": missing`},
		{"missing hi", `{"id":1,"kind":"clamp","parents":[0],"shape":[2,3],"lo":"0"}`, `node 1 (clamp): field "hi": missing`},
		{"misspelled", `{"id":1,"kind":"clamp","parents":[0],"shape":[2,3],"lo":"0","Hi":"1"}`, `node 1 (clamp): field "Hi": unknown field`},
		{"stray attr", `{"id":1,"kind":"neg","parents":[0],"shape":[2,3],"c":"1"}`, `node 1 (neg): field "c": neg takes no "c" attribute`},
		{"clamp lo > hi", `{"id":1,"kind":"clamp","parents":[0],"shape":[2,3],"lo":"1","hi":"0"}`, `node 1 (clamp)`},
		{"slice end past extent", `{"id":1,"kind":"slice","parents":[0],"shape":[2,3],"axis":1,"start":0,"end":4}`, `node 1 (slice): field "parents": slice: slice [0:4) out of range`},
		{"slice negative start", `{"id":1,"kind":"slice","parents":[0],"shape":[2,3],"axis":1,"start":-1,"end":2}`, `node 1 (slice): field "start": expected an integer`},
		{"log_softmax axis", `{"id":1,"kind":"log_softmax","parents":[0],"shape":[2,3],"axis":2}`, `node 1 (log_softmax): field "axis": axis 2 out of range for rank 2`},
		{"pad mode", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0,0,0],"mode":"wrap","value":"0"}`, `node 1 (pad): field "mode": expected "constant", "reflect" or "edge", got "wrap"`},
		{"pad mode not string", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0,0,0],"mode":1,"value":"0"}`, `node 1 (pad): field "mode": expected a JSON string`},
		{"pad negative width", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,-1,0,0],"mode":"edge","value":"0"}`, `node 1 (pad): field "widths": entry 1`},
		{"gather index not natural", `{"id":1,"kind":"gather","parents":[0],"shape":[2,1],"axis":1,"indices_shape":[1],"indices":[0.5]}`, `node 1 (gather): field "indices": entry 0`},
		{"lrn size", `{"id":1,"kind":"lrn","parents":[0],"shape":[2,3],"size":"3","alpha":"1","beta":"1","bias":"1"}`, `node 1 (lrn): field "size": expected an integer`},
		{"pad value as number", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0,0,0],"mode":"constant","value":0}`, `node 1 (pad): field "value": expected a rational as a JSON string`},
		{"pad value outside constant", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0,0,0],"mode":"edge","value":"1"}`, `node 1 (pad): field "parents": pad: value 1 is only meaningful in constant mode`},
		{"pad widths count", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0],"mode":"edge","value":"0"}`, `node 1 (pad): field "parents": pad: widths has 2 entries, expected 2·rank = 4`},
		{"pad reflect at extent", `{"id":1,"kind":"pad","parents":[0],"shape":[4,3],"widths":[2,0,0,0],"mode":"reflect","value":"0"}`, `node 1 (pad): field "parents": pad: axis 0: reflect widths 2, 0 must be smaller than the extent 2`},
		{"pad missing mode", `{"id":1,"kind":"pad","parents":[0],"shape":[2,3],"widths":[0,0,0,0],"value":"0"}`, `node 1 (pad): field "mode": missing`},
		{"gather index past extent", `{"id":1,"kind":"gather","parents":[0],"shape":[2,1],"axis":1,"indices_shape":[1],"indices":[3]}`, `node 1 (gather): field "parents": gather: index 3 (entry 0) outside [0, 3)`},
		{"gather count", `{"id":1,"kind":"gather","parents":[0],"shape":[2,2],"axis":1,"indices_shape":[2],"indices":[0]}`, `node 1 (gather): field "parents": gather: indices_shape [2] needs 2 indices, got 1`},
		{"gather indices_shape negative", `{"id":1,"kind":"gather","parents":[0],"shape":[2,1],"axis":1,"indices_shape":[-1],"indices":[0]}`, `node 1 (gather): field "indices_shape": entry 0`},
		{"lrn alpha malformed", `{"id":1,"kind":"lrn","parents":[0],"shape":[2,3],"size":3,"alpha":"+1","beta":"1","bias":"1"}`, `node 1 (lrn): field "alpha": malformed rational "+1"`},
		{"lrn size 0", `{"id":1,"kind":"lrn","parents":[0],"shape":[2,3],"size":0,"alpha":"1","beta":"1","bias":"1"}`, `node 1 (lrn): field "parents": lrn: lrn size 0 must be ≥ 1`},
		{"lrn beta missing", `{"id":1,"kind":"lrn","parents":[0],"shape":[2,3],"size":3,"alpha":"1","bias":"1"}`, `node 1 (lrn): field "beta": missing`},
		{"shrink negative lambd", `{"id":1,"kind":"shrink","parents":[0],"shape":[2,3],"lambd":"-1","bias":"0"}`, `node 1 (shrink): field "parents": shrink: shrink threshold lambd = -1 must be ≥ 0`},
		{"slice misspelled", `{"id":1,"kind":"slice","parents":[0],"shape":[2,2],"axis":1,"Start":0,"end":2}`, `node 1 (slice): field "Start": unknown field`},
		{"instance_norm rank", `{"id":1,"kind":"instance_norm","parents":[0],"shape":[2,3],"channels":3}`, `node 1 (instance_norm): field "channels": channels 3, but the input [2,3] is not [N, 3, spatial…]`},
		{"superset attr on torchlean tag", `{"id":1,"kind":"relu","parents":[0],"shape":[2,3],"mode":"edge"}`, `node 1 (relu): field "mode": relu takes no "mode" attribute`},
		{"shrink lambd", `{"id":1,"kind":"shrink","parents":[0],"shape":[2,3],"lambd":"x","bias":"0"}`, `node 1 (shrink): field "lambd": malformed rational "x"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeGraph([]byte(node(c.body)))
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("got  %v\nwant prefix %q", err, c.want)
			}
		})
	}
}

// regopsPrimCases are corpus graphs of the primitives added for imported
// models, each output worked out by hand from the ONNX definition.
func regopsPrimCases(t testing.TB) []opCase {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	pad := func(mode string, value string, w ...int) func(*Kind) {
		return func(k *Kind) { k.Widths, k.Mode, k.Value = w, mode, rat(t, value) }
	}
	return []opCase{
		// reflect: positions −2, −1 mirror to 2, 1; position 3 to 2·2−3 = 1.
		{name: "pad-reflect", g: graphOf(input(1, 3), nd(OpPad, []int{0}, s(1, 6), pad("reflect", "0", 0, 2, 0, 1))),
			x: rt(t, s(1, 3), "1", "2", "3"), want: rtp(t, s(1, 6), "3", "2", "1", "2", "3", "2")},
		{name: "pad-edge", g: graphOf(input(2), nd(OpPad, []int{0}, s(5), pad("edge", "0", 1, 2))),
			x: rt(t, s(2), "1", "2"), want: rtp(t, s(5), "1", "1", "2", "2", "2")},
		{name: "pad-constant", g: graphOf(input(2), nd(OpPad, []int{0}, s(3), pad("constant", "-1/2", 1, 0))),
			x: rt(t, s(2), "1", "2"), want: rtp(t, s(3), "-1/2", "1", "2")},
		{name: "gather", g: graphOf(input(2, 3), nd(OpGather, []int{0}, s(2, 2), func(k *Kind) { k.Axis, k.IndicesShape, k.Indices = 1, s(2), []int{2, 0} })),
			x: reshaped(seq(6), 2, 3), want: rtp(t, s(2, 2), "3", "1", "6", "4")},
		{name: "gather-repeated", g: graphOf(input(2, 2), nd(OpGather, []int{0}, s(2, 2), func(k *Kind) { k.Axis, k.IndicesShape, k.Indices = 0, s(2), []int{1, 1} })),
			x: reshaped(seq(4), 2, 2), want: rtp(t, s(2, 2), "3", "4", "3", "4")},
		unaryCase(t, OpSign, []string{"-2", "0", "1/3"}, []string{"-1", "0", "1"}),
		// λ = 1/2, b = 1/4: −1 + 1/4, inside [−1/2, 1/2] → 0, 2 − 1/4.
		{name: "shrink", g: graphOf(input(5), nd(OpShrink, []int{0}, s(5), func(k *Kind) { k.Lambd, k.Bias = rat(t, "1/2"), rat(t, "1/4") })),
			x: rt(t, s(5), "-1", "-1/2", "0", "1/2", "2"), want: rtp(t, s(5), "-3/4", "0", "0", "0", "7/4")},
		// μ = 2, σ² = 1 (ε = 0): x̂ = (−1, 1), then ·2 + 1.
		{name: "instance_norm", g: graphOf(input(1, 1, 2), nd(OpInstanceNorm, []int{0}, s(1, 1, 2), func(k *Kind) { k.Channels = 1 })),
			p: payloadOf(map[int]*Params{1: {Gamma: rtp(t, s(1), "2"), Beta: rtp(t, s(1), "1"), Eps: ptr(rat(t, "0"))}}),
			x: rt(t, s(1, 1, 2), "1", "3"), want: rtp(t, s(1, 1, 2), "-1", "3")},
		// size 2: W(0) = {0, 1}, W(1) = {1}; d = 1 + (1/2)·S: 7/2 and 3; β = 1.
		{name: "lrn", g: graphOf(input(1, 2), nd(OpLRN, []int{0}, s(1, 2), func(k *Kind) {
			k.Size, k.Alpha, k.Beta, k.Bias = 2, rat(t, "1"), rat(t, "1"), rat(t, "1")
		})), x: rt(t, s(1, 2), "1", "2"), inexact: true, f64: []float64{2.0 / 7, 2.0 / 3}},
	}
}

// everySupersetDoc is a canonical tlcheck.ir.v1 document using every
// superset tag of spec's other primitives.
const everySupersetDoc = `{"format":"tlcheck.ir.v1","input_id":0,"output_id":16,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,3]},
  {"id":1,"kind":"div","parents":[0,0],"shape":[1,2,3]},
  {"id":2,"kind":"scale","parents":[1],"shape":[1,2,3],"c":"-5/3"},
  {"id":3,"kind":"neg","parents":[2],"shape":[1,2,3]},
  {"id":4,"kind":"square","parents":[3],"shape":[1,2,3]},
  {"id":5,"kind":"clamp","parents":[4],"shape":[1,2,3],"lo":"-1/2","hi":"7"},
  {"id":6,"kind":"gelu","parents":[5],"shape":[1,2,3]},
  {"id":7,"kind":"log_softmax","parents":[6],"shape":[1,2,3],"axis":2},
  {"id":8,"kind":"slice","parents":[7],"shape":[1,2,2],"axis":2,"start":1,"end":3},
  {"id":9,"kind":"sign","parents":[8],"shape":[1,2,2]},
  {"id":10,"kind":"shrink","parents":[9],"shape":[1,2,2],"lambd":"1/2","bias":"0"},
  {"id":11,"kind":"pad","parents":[10],"shape":[1,4,4],"widths":[0,1,1,0,1,1],"mode":"reflect","value":"0"},
  {"id":12,"kind":"pad","parents":[11],"shape":[2,4,4],"widths":[1,0,0,0,0,0],"mode":"constant","value":"-3/4"},
  {"id":13,"kind":"gather","parents":[12],"shape":[2,2,2,4],"axis":1,"indices_shape":[2,2],"indices":[3,0,3,3]},
  {"id":14,"kind":"reshape","parents":[13],"shape":[2,4,4],"in_shape":[2,2,2,4],"out_shape":[2,4,4]},
  {"id":15,"kind":"lrn","parents":[14],"shape":[2,4,4],"size":3,"alpha":"1/10000","beta":"3/4","bias":"1"},
  {"id":16,"kind":"instance_norm","parents":[15],"shape":[2,4,4],"channels":4}
]}
`

// TestEverySupersetTagRoundTrips: a document with every superset tag is
// read and written back byte for byte, and its Kind attributes survive
// Clone and Equal.
func TestEverySupersetTagRoundTrips(t *testing.T) {
	g, err := DecodeGraph([]byte(everySupersetDoc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := EncodeGraph(g)
	if err != nil || string(out) != everySupersetDoc {
		t.Fatalf("round trip (%v):\n%s", err, out)
	}
	c := g.Clone()
	if !c.Equal(g) {
		t.Fatal("clone differs")
	}
	// Every attribute takes part in Equal, and Clone shares no slice.
	c.Nodes[12].Kind.Value = spec.NewRat(1, 3)
	c.Nodes[13].Kind.Indices[0] = 1
	if c.Equal(g) || g.Nodes[13].Kind.Indices[0] != 3 {
		t.Error("Equal ignores an attribute, or Clone shares Indices")
	}
	for _, n := range g.Nodes {
		if o, _ := LookupTag(n.Kind.Op); n.Kind.Op != OpInput && n.Kind.Op != OpReshape && !o.Superset {
			t.Errorf("%s is not marked as a superset tag", n.Kind.Op)
		}
	}
}

// torchLeanTags is TorchLean's tag set (torchlean.ir.v1, the table of
// FORMAT.md before the superset): exactly these are not superset tags.
var torchLeanTags = []Op{"input", "const", "rand_uniform", "bernoulli_mask", "add", "sub", "mul_elem", "max_elem", "min_elem",
	"abs", "sqrt", "inv", "relu", "tanh", "sigmoid", "exp", "log", "sin", "cos", "softplus", "safe_log", "matmul", "linear",
	"reduce_sum", "reduce_mean", "sum", "softmax", "hard_masked_softmax", "layernorm", "batch_norm_eval", "permute", "transpose",
	"broadcast_to", "reshape", "flatten", "concat", "conv", "max_pool", "avg_pool", "detach", "mse_loss"}

// TestTorchLeanTagsStayTorchLean: every tag TorchLean has is still a
// torchlean.ir.v1 tag, and every other tag is marked Superset.
func TestTorchLeanTagsStayTorchLean(t *testing.T) {
	tl := map[Op]bool{}
	for _, op := range torchLeanTags {
		tl[op] = true
		if _, ok := LookupTag(op); !ok {
			t.Errorf("TorchLean tag %s is missing", op)
		}
	}
	for _, o := range Ops() {
		if o.Superset == tl[o.Op] {
			t.Errorf("tag %s: Superset %v, TorchLean tag %v", o.Op, o.Superset, tl[o.Op])
		}
	}
}
