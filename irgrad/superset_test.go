package irgrad

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// gradAllPaths computes the exact gradient along every path, requires
// them to agree exactly, and returns the input's and the parameters' (by
// name) cotangents as strings.
func gradAllPaths(t *testing.T, doc, pdoc string, x irsem.RatTensor) (map[string][]string, []string) {
	t.Helper()
	g, err := irsem.DecodeGraph([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	p := &irsem.Payload{}
	if pdoc != "" {
		if p, err = irsem.DecodePayload([]byte(pdoc)); err != nil {
			t.Fatal(err)
		}
	}
	var first *Gradients[spec.Rat]
	var params []Param
	for _, path := range Paths() {
		gr, ps, err := Grad[spec.Rat](g, p, x, path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if first == nil {
			first, params = gr, ps
			continue
		}
		if !spec.SameTensor(gr.Input, first.Input) {
			t.Errorf("%s input gradient %v, %s %v", path, gr.Input.Data, first.Path, first.Input.Data)
		}
		for i := range gr.Params {
			if !spec.SameTensor(gr.Params[i], first.Params[i]) {
				t.Errorf("%s %s gradient %v, %s %v", path, ps[i].Name, gr.Params[i].Data, first.Path, first.Params[i].Data)
			}
		}
	}
	strs := func(ts spec.Tensor[spec.Rat]) []string {
		out := make([]string, len(ts.Data))
		for i, v := range ts.Data {
			out[i] = v.String()
		}
		return out
	}
	byName := map[string][]string{}
	for i, prm := range params {
		byName[prm.Name] = strs(first.Params[i])
	}
	return byName, strs(first.Input)
}

func ratT(t *testing.T, s spec.Shape, vs ...string) irsem.RatTensor {
	x := irsem.RatTensor{Shape: s, Data: make([]spec.Rat, len(vs))}
	for i, v := range vs {
		r, err := irsem.ParseRational(v)
		if err != nil {
			t.Fatal(err)
		}
		x.Data[i] = r
	}
	return x
}

func eqStrs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestSupersetGradients: the new registry tags lower to the tape and the
// typed graph, every path gives the same exact gradient, and the
// gradients are the hand-derived ones.
func TestSupersetGradients(t *testing.T) {
	// pad reflect [2,1] of x[3] is (x2, x1, x0, x1, x2, x1); gather
	// [0,0,5] of it is (x2, x2, x1); the sum 2·x2 + x1 has gradient
	// (0, 1, 2): the reflected copies and the repeated index accumulate.
	index := `{"format":"tlcheck.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[3]},
  {"id":1,"kind":"pad","parents":[0],"shape":[6],"widths":[2,1],"mode":"reflect","value":"0"},
  {"id":2,"kind":"gather","parents":[1],"shape":[3],"axis":0,"indices_shape":[3],"indices":[0,0,5]},
  {"id":3,"kind":"sum","parents":[2],"shape":[]}
]}`
	_, gx := gradAllPaths(t, index, "", ratT(t, spec.Shape{3}, "1", "-2", "1/3"))
	if want := []string{"0", "1", "2"}; !eqStrs(gx, want) {
		t.Errorf("pad+gather: d/dx = %v, want %v", gx, want)
	}

	// batch_norm_eval over channel axis 1 with ε = 0: s = (2, 1/2), so
	// for y = Σ ((x−μ)/s)·γ + β: ∂/∂x = γ/s = (1/2, 1/2, 4, 4); ∂/∂μ =
	// −Σ γ/s = (−1, −8); ∂/∂σ² = −Σ q·γ/(2s²) with q = (1/2, 3/2 | 2, −2):
	// (−1/4, 0); ∂/∂γ = Σ q = (2, 0); ∂/∂β = (2, 2).
	bn := `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,2]},
  {"id":1,"kind":"batch_norm_eval","parents":[0],"shape":[1,2,2],"channel_axis":1,"channels":2},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`
	bnp := `{"format":"tlcheck.payload.v1","entries":{
  "1":{"gamma":{"shape":[2],"values":["1","2"]},"beta":{"shape":[2],"values":["0","0"]},"mean":{"shape":[2],"values":["0","1"]},"var":{"shape":[2],"values":["4","1/4"]},"eps":"0"}
}}`
	ps, gx := gradAllPaths(t, bn, bnp, ratT(t, spec.Shape{1, 2, 2}, "1", "3", "2", "0"))
	if want := []string{"1/2", "1/2", "4", "4"}; !eqStrs(gx, want) {
		t.Errorf("batch_norm_eval: d/dx = %v, want %v", gx, want)
	}
	for name, want := range map[string][]string{
		"node1.mean": {"-1", "-8"}, "node1.var": {"-1/4", "0"}, "node1.gamma": {"2", "0"}, "node1.beta": {"2", "2"},
	} {
		if !eqStrs(ps[name], want) {
			t.Errorf("batch_norm_eval: d/d%s = %v, want %v", name, ps[name], want)
		}
	}

	// Every path agrees on a graph of the other exact superset tags.
	mixed := `{"format":"tlcheck.ir.v1","input_id":0,"output_id":9,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,2]},
  {"id":1,"kind":"instance_norm","parents":[0],"shape":[1,2,2],"channels":2},
  {"id":2,"kind":"shrink","parents":[1],"shape":[1,2,2],"lambd":"1/2","bias":"1/4"},
  {"id":3,"kind":"sign","parents":[0],"shape":[1,2,2]},
  {"id":4,"kind":"mul_elem","parents":[2,3],"shape":[1,2,2]},
  {"id":5,"kind":"clamp","parents":[4],"shape":[1,2,2],"lo":"-1","hi":"2"},
  {"id":6,"kind":"scale","parents":[5],"shape":[1,2,2],"c":"-3"},
  {"id":7,"kind":"square","parents":[6],"shape":[1,2,2]},
  {"id":8,"kind":"slice","parents":[7],"shape":[1,1,2],"axis":1,"start":1,"end":2},
  {"id":9,"kind":"sum","parents":[8],"shape":[]}
]}`
	mp := `{"format":"tlcheck.payload.v1","entries":{
  "1":{"gamma":{"shape":[2],"values":["3","-2"]},"beta":{"shape":[2],"values":["1/2","1"]},"eps":"0"}
}}`
	gradAllPaths(t, mixed, mp, ratT(t, spec.Shape{1, 2, 2}, "1", "3", "-1/2", "5/2"))
}
