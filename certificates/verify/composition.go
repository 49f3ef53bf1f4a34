package verify

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// dualJVP is the verifier's JVP side: forward evaluation of the graph over
// dual numbers spec.Dual[spec.Rat] with the input x + dx·ε and the payload
// as constants (tangent 0), node by node with irsem's applications and
// the registry's forward rules only — no JVP rule is consulted. A
// stop-gradient node (a NoGrad primitive such as detach) drops the
// tangent (spec.DropTangent): that is its definition, and the one place where this
// evaluation departs from irsem.DenoteAll over duals, whose detach is the
// identity. For a graph without a stop-gradient node the verifier also
// runs irsem.DenoteAll itself and requires the same output.
//
// It returns the output's tangent.
func dualJVP(g *irsem.Graph, p *irsem.Payload, x, dx spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
	type D = spec.Dual[spec.Rat]
	in := spec.Tensor[D]{Shape: x.Shape.Clone(), Data: make([]D, len(x.Data))}
	for i := range x.Data {
		in.Data[i] = spec.MakeDual(x.Data[i], dx.Data[i])
	}
	apps, err := irsem.Applications(g, p)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, err
	}
	reg := spec.Default[D]()
	vals := make([]spec.Tensor[D], len(g.Nodes))
	stops := false
	exec := func(_ int, s *irsem.Step, xs []spec.Tensor[D]) (spec.Tensor[D], error) {
		prim, err := reg.Lookup(s.Prim)
		if err != nil {
			return spec.Tensor[D]{}, err
		}
		y, err := prim.Apply(s.Attrs, xs)
		if err != nil {
			return y, err
		}
		if prim.NoGrad {
			stops = true
			y = spec.DropTangent(y)
		}
		return y, nil
	}
	for i := range apps {
		a := &apps[i]
		if a.Op == irsem.OpInput {
			vals[i] = in
			continue
		}
		parents := make([]spec.Tensor[D], len(g.Nodes[i].Parents))
		for k, pid := range g.Nodes[i].Parents {
			parents[k] = vals[pid]
		}
		v, err := irsem.RunApplication(a, parents, exec)
		if err != nil {
			return spec.Tensor[spec.Rat]{}, err
		}
		vals[i] = v
	}
	out := vals[g.OutputID]
	if !stops {
		den, err := irsem.DenoteAll(g, p, in)
		if err != nil {
			return spec.Tensor[spec.Rat]{}, fmt.Errorf("DenoteAll over duals: %w", err)
		}
		if !spec.SameTensor(den[g.OutputID], out) {
			return spec.Tensor[spec.Rat]{}, fmt.Errorf("DenoteAll over duals and the node-by-node dual evaluation disagree at the output")
		}
	}
	t := spec.Tensor[spec.Rat]{Shape: out.Shape.Clone(), Data: make([]spec.Rat, len(out.Data))}
	for i, v := range out.Data {
		t.Data[i] = v.Du
	}
	return t, nil
}

// hashedInlineGraph decodes a certificate's inline graph and payload and
// binds them to its recorded graph_hash: the hash must be a lowercase hex
// SHA-256 and equal irsem.GraphHash of what was decoded.
func hashedInlineGraph(file, graphHash string, graph, payload json.RawMessage) (*irsem.Graph, *irsem.Payload, error) {
	if !certificates.IsSHA256Hex(graphHash) {
		return nil, nil, certificates.FieldErr(file, "graph_hash", "%q is not a lowercase hex SHA-256", certificates.Truncate(graphHash))
	}
	g, p, err := decodeInlineGraph(file, "", graph, payload)
	if err != nil {
		return nil, nil, err
	}
	hash, err := irsem.GraphHash(g, p)
	if err != nil {
		return nil, nil, certificates.FieldErr(file, "graph", "%v", err)
	}
	if hash != graphHash {
		return nil, nil, certificates.FieldErr(file, "graph_hash", "recorded %s, the inline graph and payload hash to %s", graphHash, hash)
	}
	return g, p, nil
}

// inputOf decodes the exact input tensor t recorded in field of a
// certificate and checks its shape against g's input node.
func inputOf(file, field string, t certificates.Tensor, g *irsem.Graph) (spec.Tensor[spec.Rat], error) {
	x, err := t.Decode(file, field)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, err
	}
	if in := g.Nodes[g.InputID].Shape; !x.Shape.Equal(in) {
		return spec.Tensor[spec.Rat]{}, certificates.FieldErr(file, field+".shape", "%v, the graph's input has shape %v", x.Shape, in)
	}
	return x, nil
}

// decodeInlineGraph decodes an inline graph and payload and requires them
// to be canonical (equal, up to JSON whitespace, to irsem's canonical
// encoding of what they decode to).
func decodeInlineGraph(file, at string, graph, payload json.RawMessage) (*irsem.Graph, *irsem.Payload, error) {
	pre := at
	if pre != "" {
		pre += "."
	}
	if err := certificates.CheckSafeJSON(file, pre+"graph", graph); err != nil {
		return nil, nil, err
	}
	if err := certificates.CheckSafeJSON(file, pre+"payload", payload); err != nil {
		return nil, nil, err
	}
	g, err := irsem.DecodeGraph(graph)
	if err != nil {
		return nil, nil, certificates.FieldErr(file, pre+"graph", "%v", err)
	}
	if err := g.Check(); err != nil {
		return nil, nil, certificates.FieldErr(file, pre+"graph", "%v", err)
	}
	p, err := irsem.DecodePayload(payload)
	if err != nil {
		return nil, nil, certificates.FieldErr(file, pre+"payload", "%v", err)
	}
	if err := irsem.CheckPayload(g, p); err != nil {
		return nil, nil, certificates.FieldErr(file, pre+"payload", "%v", err)
	}
	for _, d := range []struct {
		name string
		raw  []byte
		enc  func() ([]byte, error)
	}{
		{"graph", graph, func() ([]byte, error) { return irsem.EncodeGraph(g) }},
		{"payload", payload, func() ([]byte, error) { return irsem.EncodePayload(p) }},
	} {
		canon, err := d.enc()
		if err != nil {
			return nil, nil, certificates.FieldErr(file, pre+d.name, "%v", err)
		}
		var a, b bytes.Buffer
		if json.Compact(&a, d.raw) != nil || json.Compact(&b, canon) != nil || !bytes.Equal(a.Bytes(), b.Bytes()) {
			return nil, nil, certificates.FieldErr(file, pre+d.name, "not the canonical encoding of the %s it decodes to", d.name)
		}
	}
	return g, p, nil
}

// verifyComposition re-derives every case of a composition certificate.
//
// For each case it decodes the inline graph and payload (canonical
// documents only), re-hashes them against graph_hash, regenerates the case
// from the manifest's seed and requires the same case seed, graph,
// payload, input, tangent and cotangent (binding seed and graph), then
// recomputes the JVP side by forward evaluation over dual numbers
// (dualJVP, no JVP rule involved) and the VJP side along irgrad's tape
// path (TapeVJP, not the typed graph the producer used). Both must equal
// the recorded sides exactly, and each other.
func verifyComposition(file string, f *certificates.CompositionFile, m *certificates.Manifest) (int, error) {
	if len(f.Cases) == 0 || len(f.Cases) != m.Cases {
		return 0, certificates.FieldErr(file, "cases", "%d cases, the manifest promises %d", len(f.Cases), m.Cases)
	}
	for i, c := range f.Cases {
		at := fmt.Sprintf("cases[%d]", i)
		cs := spec.CaseSeed(m.Seed, certificates.KindComposition, i)
		if c.Seed != cs {
			return 0, seedErr(certificates.FieldErr(file, at+".seed", "%d, the manifest's seed gives %d", c.Seed, cs))
		}
		if !certificates.IsSHA256Hex(c.GraphHash) {
			return 0, certificates.FieldErr(file, at+".graph_hash", "%q is not a lowercase hex SHA-256", certificates.Truncate(c.GraphHash))
		}
		g, p, err := decodeInlineGraph(file, at, c.Graph, c.Payload)
		if err != nil {
			return 0, err
		}
		hash, err := irsem.GraphHash(g, p)
		if err != nil {
			return 0, certificates.FieldErr(file, at+".graph", "%v", err)
		}
		if hash != c.GraphHash {
			return 0, certificates.FieldErr(file, at+".graph_hash", "recorded %s, the inline graph and payload hash to %s", c.GraphHash, hash)
		}
		x, err := c.Input.Decode(file, at+".input")
		if err != nil {
			return 0, err
		}
		dx, err := c.Dx.Decode(file, at+".dx")
		if err != nil {
			return 0, err
		}
		cot, err := c.Cotangent.Decode(file, at+".cotangent")
		if err != nil {
			return 0, err
		}
		_, gc, gdx, gcot, err := certificates.CompositionInstance(m.Seed, i)
		if err != nil {
			return 0, certificates.FieldErr(file, at, "cannot regenerate the case: %v", err)
		}
		if !gc.Graph.Equal(g) {
			return 0, seedErr(certificates.FieldErr(file, at+".graph", "differs from the graph the case seed generates"))
		}
		if !certificates.PayloadOrEmpty(gc.Payload).Equal(p) {
			return 0, seedErr(certificates.FieldErr(file, at+".payload", "differs from the payload the case seed generates"))
		}
		if err := sameTensors(file, at+".input", []spec.Tensor[spec.Rat]{x}, []spec.Tensor[spec.Rat]{gc.Input}); err != nil {
			return 0, err
		}
		if err := sameTensors(file, at+".dx", []spec.Tensor[spec.Rat]{dx}, []spec.Tensor[spec.Rat]{gdx}); err != nil {
			return 0, err
		}
		if err := sameTensors(file, at+".cotangent", []spec.Tensor[spec.Rat]{cot}, []spec.Tensor[spec.Rat]{gcot}); err != nil {
			return 0, err
		}
		if err := rederiveCompositionSides(file, at, g, p, x, dx, cot, c.LHS, c.RHS); err != nil {
			return 0, err
		}
	}
	return len(f.Cases), nil
}

// rederiveCompositionSides recomputes both sides of the composition law
// on g with payload p at x — the JVP side ⟨JVP(x; dx), cot⟩ by forward
// evaluation over dual numbers (dualJVP, no JVP rule involved), the VJP
// side ⟨dx, VJP(x; cot)⟩ along irgrad's tape path (TapeVJP) — and requires
// the recorded sides lhs and rhs (of the case at JSON path at), exactly
// and canonically spelt, and their equality.
func rederiveCompositionSides(file, at string, g *irsem.Graph, p *irsem.Payload, x, dx, cot spec.Tensor[spec.Rat], recLHS, recRHS string) error {
	jv, err := dualJVP(g, p, x, dx)
	if err != nil {
		return certificates.FieldErr(file, at+".lhs", "forward evaluation over dual numbers failed: %v", err)
	}
	lhs, err := spec.Dot(jv, cot)
	if err != nil {
		return certificates.FieldErr(file, at+".cotangent", "%v", err)
	}
	vj, err := certificates.TapeVJP(g, p, x, cot)
	if err != nil {
		return certificates.FieldErr(file, at+".rhs", "the tape's reverse sweep failed: %v", err)
	}
	rhs, err := spec.Dot(dx, vj)
	if err != nil {
		return certificates.FieldErr(file, at+".dx", "%v", err)
	}
	for _, s := range []struct {
		name, rec string
		got       spec.Rat
	}{{"lhs", recLHS, lhs}, {"rhs", recRHS, rhs}} {
		rec, err := certificates.DecodeRat(file, at+"."+s.name, s.rec)
		if err != nil {
			return err
		}
		if !rec.Same(s.got) || s.rec != s.got.String() {
			return certificates.FieldErr(file, at+"."+s.name, "recorded %s, recomputed %s", certificates.Truncate(s.rec), s.got)
		}
	}
	if !lhs.Same(rhs) {
		return certificates.FieldErr(file, at, "composition fails: ⟨JVP(dx), cotangent⟩ = %s ≠ ⟨dx, VJP(cotangent)⟩ = %s", lhs, rhs)
	}
	return nil
}

func verifyCompositionFile(file string, data []byte, m *certificates.Manifest) (int, error) {
	var f certificates.CompositionFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	return verifyComposition(file, &f, m)
}
