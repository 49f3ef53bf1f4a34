package harness

import (
	"math/big"
	"testing"
)

// The engine protocol's messages come from a child process the harness
// does not trust to be well-formed (a broken or hostile engine): the
// decoders of its two kinds of answer must never panic, and what they
// accept must be what they claim. Seeds: testdata/fuzz/FuzzProtocolHello
// and FuzzProtocolAnswer, and the f.Add lines below (schemas/engine.v1.json).

// FuzzProtocolHello: an engine's hello line, decoded (strictJSON) and
// checked (checkHello) as NewProtocol does. Accepted: every machine has a
// name, a float64 or float32 format and the forward transform; every op
// is a registry primitive.
func FuzzProtocolHello(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","protocol":"tlcheck.engine.v1","engine":"tiny","version":"1","machines":[{"name":"cpu","format":"float64"}],"ops":["add","mul"],"conventions":[]}`,
		`{"type":"hello","protocol":"tlcheck.engine.v1","engine":"e","version":"0","machines":[{"name":"a","format":"float32","transforms":["forward","vjp"]}],"ops":["relu"],"conventions":[{"op":"relu","doc":"d","source":"s","builtin":"clamp_half"}]}`,
		`{"type":"hello","protocol":"tlcheck.engine.v1","engine":"e","version":"0","machines":[{"name":"a","format":"float64"}],"ops":[],"conventions":[{"op":"max","doc":"d","source":"s","graph":{"inputs":2,"nodes":[{"op":"add","args":[0,1],"attrs":{"c":"1/2"}}]}}]}`,
		`{"type":"hello","protocol":"tlcheck.engine.v0"}`,
		`{"type":"hello","machines":[{"name":"a","format":"float64","transforms":[]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 1<<16 {
			return
		}
		var h wireHello
		if err := strictJSON(line, &h); err != nil {
			return
		}
		p := &Protocol{hello: h}
		if err := p.checkHello(); err != nil {
			return
		}
		if len(p.hello.Machines) == 0 {
			t.Fatalf("accepted a hello with no machine: %s", line)
		}
		for _, m := range p.hello.Machines {
			if m.Format != Float64 && m.Format != Float32 || !p.Can(m.Name, "forward") {
				t.Fatalf("accepted machine %+v: %s", m, line)
			}
		}
		for _, op := range p.Ops() {
			if !p.ops[op] {
				t.Fatalf("op %q listed but not mapped", op)
			}
		}
	})
}

// FuzzProtocolAnswer: an engine's answer to a case, decoded as call and
// Run do (strictJSON, then each tensor). Accepted tensors hold exactly as
// many elements as their shape's product, computed here in big integers
// (an extent product that overflows int must not pass as a small one).
func FuzzProtocolAnswer(f *testing.F) {
	for _, s := range []string{
		`{"type":"result","id":1,"y":{"shape":[2],"data":["1","-0x1.8p1"]},"grads":[{"shape":[2],"data":["nan","inf"]}]}`,
		`{"type":"result","id":3,"y":{"shape":[],"data":["0.5"]},"jvp":{"shape":[],"data":["-inf"]}}`,
		`{"type":"refusal","id":2,"kind":"unsupported","reason":"no"}`,
		`{"type":"result","id":1,"y":{"shape":[4294967296,4294967296],"data":[]}}`,
		`{"type":"result","id":1,"y":{"shape":[-1],"data":[]}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if len(line) > 1<<16 {
			return
		}
		var a wireAnswer
		if err := strictJSON(line, &a); err != nil {
			return
		}
		ts := append([]wireTensor(nil), a.Grads...)
		if a.Y != nil {
			ts = append(ts, *a.Y)
		}
		if a.JVP != nil {
			ts = append(ts, *a.JVP)
		}
		for _, w := range ts {
			x, err := w.tensor("y")
			if err != nil {
				continue
			}
			n := big.NewInt(1)
			for _, d := range x.Shape {
				n.Mul(n, big.NewInt(int64(d)))
			}
			if n.Cmp(big.NewInt(int64(len(x.Data)))) != 0 {
				t.Fatalf("accepted shape %v (%v elements) with %d values", x.Shape, n, len(x.Data))
			}
		}
	})
}
