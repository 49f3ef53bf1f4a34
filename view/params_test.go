package view

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// mlpGraph is x ↦ linear₂(relu(linear₁(x))) with W₁ = [[1, 2], [−1, 1]],
// b₁ = (0, 1/4), W₂ = [[3, −5]], b₂ = (7), at x = (1, 1/2). By hand:
// h = W₁x + b₁ = (2, −1/4), a = relu(h) = (2, 0), y = 3·2 − 5·0 + 7 = 13;
// with the seed 1: ∂y/∂b₂ = 1, ∂y/∂W₂ = a = [[2, 0]], ∂y/∂a = (3, −5),
// ∂y/∂h = (3, 0) (relu′(−1/4) = 0), ∂y/∂W₁ = (∂y/∂h) xᵀ = [[3, 3/2], [0, 0]],
// ∂y/∂b₁ = (3, 0).
const mlpGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"linear","parents":[0],"shape":[2]},
  {"id":2,"kind":"relu","parents":[1],"shape":[2]},
  {"id":3,"kind":"linear","parents":[2],"shape":[1]}
]}`

const mlpPayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"W":{"shape":[2,2],"values":["1","2","-1","1"]},"b":{"shape":[2],"values":["0","1/4"]}},
  "3":{"W":{"shape":[1,2],"values":["3","-5"]},"b":{"shape":[1],"values":["7"]}}
}}`

func mlpModel(t *testing.T, what What) (*Model, *irsem.Graph, *irsem.Payload, spec.Tensor[spec.Rat]) {
	t.Helper()
	g := graphOf(t, mlpGraph)
	p, err := irsem.DecodePayload([]byte(mlpPayload))
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Vector(spec.NewRat(1, 1), spec.NewRat(1, 2))
	m, err := FromGraph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.What = what
	if what == Grads {
		if err := AddGrads(m, g, p, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := AddValues(m, g, p, x); err != nil {
		t.Fatal(err)
	}
	m.Fold(-1)
	if err := AddParams(m, g, p, x, ParamOptions{Grads: what == Grads}); err != nil {
		t.Fatal(err)
	}
	return m, g, p, x
}

// TestParamsView: the tape view of the MLP draws each W and b as a box of
// its own (class param) with one edge into its reader (slot -1), one
// layer above the reader; every box shows its value (the tape
// view's value line and table column), and the grads view each
// parameter's gradient — all equal to the values worked out by hand
// (mlpGraph).
func TestParamsView(t *testing.T) {
	m, _, _, _ := mlpModel(t, Tape)
	p, _ := svgOf(t, m)
	if len(p.nodes) != 8 || len(p.edges) != 7 {
		t.Fatalf("%d boxes %d edges, want 4 nodes + 4 parameters and 3 + 4 edges", len(p.nodes), len(p.edges))
	}
	wantValue := map[string]string{"0": "[1, 1/2]", "1": "[2, -1/4]", "2": "[2, 0]", "3": "[13]"}
	for id, n := range p.nodes {
		txt := n.text()
		if !n.class("param") {
			if w := wantValue[id]; !strings.Contains(txt, "|= "+w) {
				t.Errorf("box %s %q: want the value line = %s", id, txt, w)
			}
			continue
		}
		es := 0
		for _, e := range p.edges {
			if e.Attr["data-from"] == id {
				es++
				if e.Attr["data-slot"] != "-1" {
					t.Errorf("parameter edge %v: slot %s, want -1", e.Attr, e.Attr["data-slot"])
				}
			}
		}
		if es != 1 {
			t.Errorf("parameter box %s has %d edges, want 1", id, es)
		}
	}
	type prm struct{ reader, field, value, grad string }
	want := []prm{
		{"1", "W", "[[1, 2], [-1, 1]]", "[[3, 3/2], [0, 0]]"},
		{"1", "b", "[0, 1/4]", "[3, 0]"},
		{"3", "W", "[[3, -5]]", "[[2, 0]]"},
		{"3", "b", "[7]", "[1]"},
	}
	find := func(p picture, reader, field string) *elem {
		for _, n := range p.nodes {
			if n.class("param") && strings.HasPrefix(n.text(), "param "+field+" → #"+reader+"|") {
				return n
			}
		}
		return nil
	}
	for _, w := range want {
		n := find(p, w.reader, w.field)
		if n == nil {
			t.Errorf("no parameter box %s of #%s", w.field, w.reader)
			continue
		}
		if !strings.Contains(n.text(), "|= "+w.value) {
			t.Errorf("parameter %s of #%s: %q, want the value %s", w.field, w.reader, n.text(), w.value)
		}
		// One layer above its reader.
		py, _ := strconv.Atoi(n.Kids[1].Attr["y"])
		ry, _ := strconv.Atoi(p.nodes[w.reader].Kids[1].Attr["y"])
		if py+NodeH+GapY != ry {
			t.Errorf("parameter %s of #%s at y %d, its reader at %d: not one layer above", w.field, w.reader, py, ry)
		}
	}
	var page bytes.Buffer
	if err := HTML(&page, m, Place(m)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), `<td>relu</td><td>[2]</td><td>[2, 0]</td>`) {
		t.Errorf("the tape view's table has no value column for node 2")
	}
	g, _, _, _ := mlpModel(t, Grads)
	pg, _ := svgOf(t, g)
	for _, w := range want {
		n := find(pg, w.reader, w.field)
		if n == nil || !strings.HasSuffix(n.text(), "|grad = "+w.grad) || !n.class("reached") {
			t.Errorf("grads view: parameter %s of #%s: %v, want grad = %s", w.field, w.reader, n, w.grad)
		}
	}
}

// TestConstParams: with ConstParams (an imported ONNX model, whose
// initializers are const nodes) a const node is its own parameter box:
// no new box, its gradient on it. y = x ⊙ c with c = (3, 4) at
// x = (1, 1/2): ∂Σy/∂c = x = (1, 1/2), by hand.
func TestConstParams(t *testing.T) {
	g := graphOf(t, `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"const","parents":[],"shape":[2],"value_shape":[2]},
  {"id":2,"kind":"mul_elem","parents":[0,1],"shape":[2]}
]}`)
	p, err := irsem.DecodePayload([]byte(`{"format":"tlcheck.payload.v1","entries":{"1":{"value":{"shape":[2],"values":["3","4"]}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	x := spec.Vector(spec.NewRat(1, 1), spec.NewRat(1, 2))
	m, err := FromGraph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.What = Grads
	if err := AddGrads(m, g, p, x); err != nil {
		t.Fatal(err)
	}
	if err := AddParams(m, g, p, x, ParamOptions{Grads: true, ConstParams: true, Name: func(node int, field string) string {
		if node == 1 && field == "value" {
			return "scale"
		}
		return ""
	}}); err != nil {
		t.Fatal(err)
	}
	pic, _ := svgOf(t, m)
	c := pic.nodes["1"]
	if len(pic.nodes) != 3 || c == nil || !c.class("param") || !strings.Contains(c.text(), "|grad = [1, 1/2]") || !strings.Contains(c.text(), `"scale"`) {
		t.Fatalf("%d boxes; const box %v", len(pic.nodes), c)
	}
}
