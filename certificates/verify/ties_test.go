package verify

import (
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// TestKWayMaxPoolTieVerifies: a max-pool tie of three or more elements
// certifies and verifies. The verifier recomputes the JVP with dual
// numbers through the forward rule; before the n-ary tie rule
// (spec.MaxOf) a fold of the binary Dual.Max averaged two tangents at a
// time (¼, ¼, ½), against the rule's 1/t each, and verify failed
// ("recorded 0, recomputed −3/4") on correct models. Each graph has
// every window tied.
func TestKWayMaxPoolTieVerifies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, graph, payload string
		shape                spec.Shape
		values               []int64
	}{
		{"max_pool kernel 3 over [1,1,1]", `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,3]},
  {"id":1,"kind":"max_pool","parents":[0],"shape":[1,1],"kernel":[3],"stride":[3],"padding":[0]},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}]}`, "", spec.Shape{1, 3}, []int64{1, 1, 1}},
		{"max_pool_nd kernel 3 stride 1", `{"format":"tlcheck.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,1,4]},
  {"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,2],"kernel":[3],"stride":[1],"pads":[0,0],"dilation":[1],"ceil_mode":false},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}]}`, "", spec.Shape{1, 1, 4}, []int64{2, 2, 2, 2}},
		// conv (a 1×1 kernel of weight 1) → relu → 2×2 max pool over a flat
		// zero region: every window is a 4-way tie at 0.
		{"conv relu 2x2 max pool on zeros", `{"format":"torchlean.ir.v1","input_id":0,"output_id":4,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,4,4]},
  {"id":1,"kind":"conv","parents":[0],"shape":[1,4,4],"kernel":[1,1],"stride":[1,1],"padding":[0,0],"dilation":[1,1],"groups":1,"in_channels":1,"out_channels":1},
  {"id":2,"kind":"relu","parents":[1],"shape":[1,4,4]},
  {"id":3,"kind":"max_pool","parents":[2],"shape":[1,2,2],"kernel":[2,2],"stride":[2,2],"padding":[0,0]},
  {"id":4,"kind":"sum","parents":[3],"shape":[]}]}`,
			`{"format":"tlcheck.payload.v1","entries":{"1":{"W":{"shape":[1,1,1,1],"values":["1"]},"b":{"shape":[1],"values":["0"]}}}}`,
			spec.Shape{1, 4, 4}, make([]int64, 16)},
	}
	for _, c := range cases {
		g, err := irsem.DecodeGraph([]byte(c.graph))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := &irsem.Payload{}
		if c.payload != "" {
			if p, err = irsem.DecodePayload([]byte(c.payload)); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		x := irsem.RatTensor{Shape: c.shape, Data: make([]spec.Rat, len(c.values))}
		for i, v := range c.values {
			x.Data[i] = spec.NewRat(v, 1)
		}
		m := &certificates.Model{Name: "ties", Graph: g, Payload: p, Input: x}
		dir := t.TempDir()
		certifyModel(t, m, dir, 0)
		rep, err := Dir(certificates.FullSuite(), dir)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if f := rep.Failures(); len(f) != 0 {
			t.Errorf("%s: a correct k-way tie fails verify: %v", c.name, f[0].Err)
		}
		if rep.Cases()[certificates.KindModelComposition] == 0 {
			t.Errorf("%s: no composition case verified", c.name)
		}
	}
}
