package irsem

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// fuzzSeeds returns the encoded corpus: every tag, every payload field.
func fuzzSeeds(f *testing.F) (graphs, payloads [][]byte) {
	for _, c := range opCases(f) {
		g, err := EncodeGraph(c.g)
		if err != nil {
			f.Fatal(err)
		}
		p, err := EncodePayload(c.p)
		if err != nil {
			f.Fatal(err)
		}
		graphs, payloads = append(graphs, g), append(payloads, p)
	}
	return graphs, payloads
}

// checkOneLine fails on an error that is not a one-line *Error.
func checkOneLine(t *testing.T, err error) {
	t.Helper()
	if _, ok := err.(*Error); !ok {
		t.Fatalf("error %T is not an *Error: %v", err, err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error spans lines: %q", err)
	}
}

func totalElements(g *Graph) int {
	n := 0
	for _, nd := range g.Nodes {
		n += nd.Shape.Size()
	}
	return n
}

// fuzzInput builds a deterministic input for g's input node.
func fuzzInput(g *Graph) RatTensor {
	s := g.Nodes[g.InputID].Shape
	x := RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, s.Size())}
	for i := range x.Data {
		x.Data[i] = spec.NewRat(int64(i%7)-3, int64(1+i%2))
	}
	return x
}

// synthPayload builds a payload that fits g: deterministic small
// rationals of the shapes each parameterised node needs, so that fuzzed
// geometries reach the kernels. Parameters larger than 4096 elements are
// left out (the evaluation then fails its payload check, cleanly).
func synthPayload(g *Graph) *Payload {
	p := &Payload{Entries: map[int]*Params{}}
	mk := func(s spec.Shape, k int) *RatTensor {
		n, err := s.Check(4096)
		if err != nil {
			return nil
		}
		t := RatTensor{Shape: s.Clone(), Data: make([]spec.Rat, n)}
		for i := range t.Data {
			t.Data[i] = spec.NewRat(int64((i*k)%9)-4, int64(1+i%4))
		}
		return &t
	}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		k := &n.Kind
		switch k.Op {
		case OpConst:
			p.Entries[i] = &Params{Value: mk(shapeOrScalar(k.ValueShape), 3)}
		case OpLinear:
			x := g.Nodes[n.Parents[0]].Shape
			out, in := n.Shape[len(n.Shape)-1], x[len(x)-1]
			p.Entries[i] = &Params{W: mk(spec.Shape{out, in}, 5), B: mk(spec.Shape{out}, 7)}
		case OpConv:
			w := k.Window
			ws := append(spec.Shape{w.OutChannels, w.InChannels / w.Groups}, w.Kernel...)
			p.Entries[i] = &Params{W: mk(ws, 2), B: mk(spec.Shape{w.OutChannels}, 3)}
		case OpLayerNorm:
			suffix := g.Nodes[n.Parents[0]].Shape[k.Axis:]
			p.Entries[i] = &Params{Gamma: mk(suffix, 1), Beta: mk(suffix, 2), Eps: ptr(spec.NewRat(1, 4))}
		case OpBatchNormEval:
			c := spec.Shape{k.Channels}
			p.Entries[i] = &Params{Mean: mk(c, 1), Var: mk(c, 2), Gamma: mk(c, 3), Beta: mk(c, 4), Eps: ptr(spec.NewRat(1, 4))}
		}
	}
	for id, e := range p.Entries {
		if e.Value == nil && e.W == nil && e.Gamma == nil && e.Mean == nil {
			delete(p.Entries, id)
		}
	}
	return p
}

// evaluate runs DenoteAll and the forward graph on a small decoded graph:
// whatever the graph, nothing may panic, errors must be one line, and the
// two value tables must agree where both succeed.
func evaluate(t *testing.T, g *Graph, p *Payload) {
	if totalElements(g) > 256 {
		return
	}
	x := fuzzInput(g)
	if _, err := DenoteAll(g, p, ConvertTensor[spec.F64](x)); err != nil {
		checkOneLine(t, err)
	}
	if g.InputID == 0 {
		cmp, err := CompareWithDenote(g, p, ConvertTensor[spec.F32](x))
		if err == nil && !cmp.OK() {
			t.Fatalf("forward graph and DenoteAll disagree: %v", cmp.Err())
		}
	}
	// Rat values can double their size at every product; keep the chains
	// short.
	if len(g.Nodes) <= 12 {
		if _, err := DenoteAll(g, p, x); err != nil {
			checkOneLine(t, err)
		}
	}
}

// FuzzDecodeGraph: decoding never panics; a decoded graph re-encodes to a
// canonical document that decodes to an equal graph and re-encodes to the
// same bytes; small graphs evaluate without panicking.
func FuzzDecodeGraph(f *testing.F) {
	graphs, _ := fuzzSeeds(f)
	for _, g := range graphs {
		f.Add(g)
	}
	f.Add([]byte(quadDoc))
	f.Add([]byte(`{"format":"torchlean.ir.v1","input_id":0,"output_id":0,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[1,2,3]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := DecodeGraph(data)
		if err != nil {
			checkOneLine(t, err)
			return
		}
		out, err := EncodeGraph(g)
		if err != nil {
			t.Fatalf("decoded graph does not encode: %v", err)
		}
		g2, err := DecodeGraph(out)
		if err != nil {
			t.Fatalf("canonical form does not decode: %v\n%s", err, out)
		}
		if !g2.Equal(g) {
			t.Fatalf("round trip changed the graph:\n%s", out)
		}
		if out2, _ := EncodeGraph(g2); !bytes.Equal(out, out2) {
			t.Fatalf("export not idempotent:\n%s\n%s", out, out2)
		}
		evaluate(t, g, synthPayload(g))
	})
}

// FuzzDecodePayload: decoding never panics; a decoded payload round-trips
// through its canonical form.
func FuzzDecodePayload(f *testing.F) {
	_, payloads := fuzzSeeds(f)
	for _, p := range payloads {
		f.Add(p)
	}
	f.Add([]byte(`{"format":"tlcheck.payload.v1","entries":{"3":{"W":{"shape":[1],"values":[0.5]},"eps":"-1/3"}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodePayload(data)
		if err != nil {
			checkOneLine(t, err)
			return
		}
		out, err := EncodePayload(p)
		if err != nil {
			t.Fatalf("decoded payload does not encode: %v", err)
		}
		p2, err := DecodePayload(out)
		if err != nil {
			t.Fatalf("canonical form does not decode: %v\n%s", err, out)
		}
		if !p2.Equal(p) {
			t.Fatalf("round trip changed the payload:\n%s", out)
		}
		if out2, _ := EncodePayload(p2); !bytes.Equal(out, out2) {
			t.Fatalf("export not idempotent:\n%s\n%s", out, out2)
		}
	})
}

// FuzzDecodeTensor: the command-line tensor reader never panics and
// round-trips exactly.
func FuzzDecodeTensor(f *testing.F) {
	f.Add([]byte(`{"shape":[2],"values":["3","-3/2"]}`))
	f.Add([]byte(`{"shape":[2,1],"values":[0.1,-1e-3]}`))
	f.Add([]byte(`{"shape":[],"values":["7/9"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := DecodeTensor(data)
		if err != nil {
			checkOneLine(t, err)
			return
		}
		out, err := EncodeTensor(x)
		if err != nil {
			t.Fatal(err)
		}
		y, err := DecodeTensor(out)
		if err != nil || !spec.SameTensor(x, y) {
			t.Fatalf("round trip: %v, %v → %v", x, err, y)
		}
	})
}

// FuzzDenote decodes a graph and a payload together and evaluates them:
// no input may make the semantics or the lowering panic, and where both
// run they agree bit for bit.
func FuzzDenote(f *testing.F) {
	graphs, payloads := fuzzSeeds(f)
	for i := range graphs {
		f.Add(graphs[i], payloads[i])
	}
	f.Fuzz(func(t *testing.T, gdata, pdata []byte) {
		g, err := DecodeGraph(gdata)
		if err != nil {
			return
		}
		p, err := DecodePayload(pdata)
		if err != nil {
			return
		}
		if err := CheckPayload(g, p); err != nil {
			checkOneLine(t, err)
			return
		}
		evaluate(t, g, p)
	})
}
