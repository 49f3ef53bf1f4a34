package ranges

import (
	le "encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
)

// TestDegenerateShapes traces and checks graphs with empty and scalar
// values: nothing to enclose is not a failure.
func TestDegenerateShapes(t *testing.T) {
	for _, doc := range []string{
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,0]},
  {"id":1,"kind":"softmax","parents":[0],"shape":[2,0],"axis":1}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[0,3]},
  {"id":1,"kind":"reduce_mean","parents":[0],"shape":[0],"axis":1}]}`,
		// A mean over the empty axis 0 has no value (a shape error, see
		// spec); the empty sum is 0.
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[0,3]},
  {"id":1,"kind":"reduce_sum","parents":[0],"shape":[3],"axis":0}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[0]},
  {"id":1,"kind":"mse_loss","parents":[0,0],"shape":[]}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,0]},
  {"id":1,"kind":"transpose","parents":[0],"shape":[0,2],"axis1":0,"axis2":1},
  {"id":2,"kind":"matmul","parents":[0,1],"shape":[2,2]}]}`,
		`{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[]},
  {"id":1,"kind":"sum","parents":[0],"shape":[]},
  {"id":2,"kind":"broadcast_to","parents":[1],"shape":[2],"from_shape":[],"to_shape":[2]}]}`,
	} {
		g := mustGraph(t, doc)
		s := shapeOrScalar(g.Nodes[0].Shape)
		box := Interval32Tensor{Shape: s, Data: make([]Interval32, s.Size())}
		for i := range box.Data {
			box.Data[i] = Interval32{-1, 2}
		}
		c, err := Produce(g, nil, box, backend.CheckedCPU())
		if err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
		if _, err := CheckWith(c, Options{Exact: true, Providers: backend.DefaultProviders()}); err != nil {
			t.Fatalf("%s: %v", doc, err)
		}
	}
}

// FuzzCheck feeds decoded graphs and payloads, boxes made of arbitrary bit
// patterns and a tampered trace to Produce and Check: neither may panic,
// and a produced certificate is accepted unless it was tampered with.
func FuzzCheck(f *testing.F) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		return string(b)
	}
	box := func(vs ...float32) []byte {
		out := make([]byte, 4*len(vs))
		for i, v := range vs {
			le.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
		}
		return out
	}
	f.Add(read("../examples/quad.ir.json"), "", box(-1, 2, 0.5, 0.5), uint16(0))
	f.Add(read("../examples/mlp.ir.json"), read("../examples/mlp.payload.json"), box(-1, 1, -1, 1), uint16(7))
	f.Add(elementwiseGraph, elementwisePayload, box(-1, 1, 0, 0, 2, 3), uint16(3))
	f.Add(exactGraph, exactPayload, box(-1, 1, 0, 0, 2, 3, 1e30, 1e30, -5, 5, 0, 1e-40), uint16(11))
	f.Add(normGraph, normPayload, box(-1, 1, 0, 0, 2, 3, -3, 3, 1, 1, 0, 0), uint16(65535))
	f.Fuzz(func(t *testing.T, gdoc, pdoc string, boxBits []byte, flip uint16) {
		g, err := irsem.DecodeGraph([]byte(gdoc))
		if err != nil {
			return
		}
		var p *irsem.Payload
		if pdoc != "" {
			if p, err = irsem.DecodePayload([]byte(pdoc)); err != nil {
				return
			}
		}
		total := 0
		for i := range g.Nodes {
			total += shapeOrScalar(g.Nodes[i].Shape).Size()
		}
		s := shapeOrScalar(g.Nodes[g.InputID].Shape)
		n := s.Size()
		if n > 64 || total > 1<<12 {
			return // keep each run fast; the limits have their own test
		}
		bx := Interval32Tensor{Shape: s, Data: make([]Interval32, n)}
		for i := range bx.Data {
			var lo, hi uint32
			if len(boxBits) >= 8*(i+1) {
				lo = le.LittleEndian.Uint32(boxBits[8*i:])
				hi = le.LittleEndian.Uint32(boxBits[8*i+4:])
			}
			bx.Data[i] = Interval32{math.Float32frombits(lo), math.Float32frombits(hi)}
		}
		c, err := Produce(g, p, bx, backend.CheckedCPU())
		if err != nil {
			return
		}
		if _, err := CheckWith(c, Options{Samples: 2, MaxCorners: 4}); err != nil {
			t.Fatalf("produced certificate rejected: %v", err)
		}
		// Tamper with one bit of one endpoint, if there is one.
		total = 0
		for _, es := range c.Trace {
			total += len(es)
		}
		if total == 0 {
			return
		}
		k := int(flip) % (2 * total)
		for i := range c.Trace {
			if k < 2*len(c.Trace[i]) {
				e := &c.Trace[i][k/2]
				if k%2 == 0 {
					e.Lo ^= 1 << (flip % 32)
				} else {
					e.Hi ^= 1 << (flip % 32)
				}
				break
			}
			k -= 2 * len(c.Trace[i])
		}
		if _, err := CheckWith(c, Options{Samples: 1, MaxCorners: 2}); err == nil {
			t.Fatal("tampered certificate accepted")
		}
	})
}
