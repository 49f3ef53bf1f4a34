package certificates

import (
	"encoding/json"
	"fmt"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
	"github.com/tlcheck/tlcheck/typedgraph"
)

// CompositionName is the composition certificate's path in a directory.
const CompositionName = "composition.json"

// compositionGraphs are the generator options of the composition
// certificate's graphs: exact primitives only, so that both sides are
// exact rationals. The verifier regenerates every graph with the same
// options, so changing them changes the certificates.
var compositionGraphs = casegen.GraphOptions{Exact: true, MaxNodes: 16}

// CompositionCase is one certified instance of the graph theorem
//
//	⟨JVP(x; dx), cotangent⟩ = ⟨dx, VJP(x; cotangent)⟩
//
// on a generated IR graph with its payload, differentiated with respect
// to the graph's input (the payload parameters are held constant).
type CompositionCase struct {
	// Seed is the case seed: casegen.GraphSeed(Seed) draws the graph,
	// its payload and the input.
	Seed uint64 `json:"seed"`
	// GraphHash is irsem.GraphHash of the graph and payload.
	GraphHash string `json:"graph_hash"`
	// Graph and Payload are the canonical torchlean.ir.v1 and
	// tlcheck.payload.v1 documents, inline, so that the certificate is
	// self-contained.
	Graph   json.RawMessage `json:"graph"`
	Payload json.RawMessage `json:"payload"`
	// Input is x, Dx the tangent of the input and Cotangent the seed of
	// the reverse pass (of the output's shape).
	Input     Tensor `json:"input"`
	Dx        Tensor `json:"dx"`
	Cotangent Tensor `json:"cotangent"`
	// LHS is ⟨JVP(dx), cotangent⟩ and RHS ⟨dx, VJP(cotangent)⟩, exactly.
	LHS string `json:"lhs"`
	RHS string `json:"rhs"`
}

// CompositionFile certifies the composition law on generated graphs.
type CompositionFile struct {
	Header
	Cases []CompositionCase `json:"cases"`
}

// CompositionInstance draws case i: the graph, payload and input from the
// case seed spec.CaseSeed(seed, "composition", i), then the tangent and the
// cotangent from the second family spec.CaseSeed(seed,
// "composition.tangents", i).
func CompositionInstance(seed uint64, i int) (uint64, *casegen.GraphCase, spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
	cs := spec.CaseSeed(seed, KindComposition, i)
	gc, err := casegen.GraphSeed(cs, compositionGraphs)
	if err != nil {
		return cs, nil, spec.Tensor[spec.Rat]{}, spec.Tensor[spec.Rat]{}, err
	}
	out := gc.Graph.Nodes[gc.Graph.OutputID].Shape
	src := casegen.NewRandSource(spec.CaseSeed(seed, KindComposition+".tangents", i))
	dx := casegen.GenTensor(src, gc.Input.Shape, casegen.Any, "dx")
	cot := casegen.GenTensor(src, out, casegen.Any, "cotangent")
	return cs, gc, dx, cot, nil
}

// ProduceComposition checks cases generated graphs along the typed-graph
// path — irgrad's lowering to a registry-ruled typed graph, its
// forward-mode JVPGraph with the tangent dx on the input (and zero on every
// payload parameter) and its compiled reverse sweep — and returns the
// certificate. It fails if a graph cannot be generated or lowered, or if
// the two sides differ.
func ProduceComposition(cases int, seed uint64) (*CompositionFile, error) {
	f := &CompositionFile{Header: Header{Format: Format, Kind: KindComposition}}
	for i := range cases {
		cs, gc, dx, cot, err := CompositionInstance(seed, i)
		if err != nil {
			return nil, fmt.Errorf("composition case %d (seed %d): %w", i, cs, err)
		}
		lhs, rhs, err := typedSides(gc, dx, cot)
		if err != nil {
			return nil, fmt.Errorf("composition case %d (seed %d): %w", i, cs, err)
		}
		if !lhs.Same(rhs) {
			return nil, fmt.Errorf("composition case %d (seed %d): ⟨JVP(dx), cotangent⟩ = %s ≠ ⟨dx, VJP(cotangent)⟩ = %s", i, cs, lhs, rhs)
		}
		hash, gdoc, pdoc, err := inlineGraph(gc.Graph, gc.Payload)
		if err != nil {
			return nil, fmt.Errorf("composition case %d: %w", i, err)
		}
		f.Cases = append(f.Cases, CompositionCase{
			Seed: cs, GraphHash: hash, Graph: gdoc, Payload: pdoc,
			Input: RatTensor(gc.Input), Dx: RatTensor(dx), Cotangent: RatTensor(cot),
			LHS: lhs.String(), RHS: rhs.String(),
		})
	}
	return f, nil
}

// inlineGraph is what a certificate records of a graph it carries inline:
// irsem.GraphHash of g and p, and the canonical encodings of g and
// of p (a nil payload encodes as the empty one). hashedInlineGraph is the
// verifier's inverse.
func inlineGraph(g *irsem.Graph, p *irsem.Payload) (hash string, gdoc, pdoc []byte, err error) {
	if hash, err = irsem.GraphHash(g, p); err != nil {
		return "", nil, nil, err
	}
	if gdoc, err = irsem.EncodeGraph(g); err != nil {
		return "", nil, nil, err
	}
	if pdoc, err = irsem.EncodePayload(PayloadOrEmpty(p)); err != nil {
		return "", nil, nil, err
	}
	return hash, gdoc, pdoc, nil
}

// PayloadOrEmpty is p, or the empty payload for a graph without one.
func PayloadOrEmpty(p *irsem.Payload) *irsem.Payload {
	if p == nil {
		return &irsem.Payload{Entries: map[int]*irsem.Params{}}
	}
	return p
}

// typedSides is the producer's computation: both sides through irgrad's
// typed graph.
func typedSides(gc *casegen.GraphCase, dx, cot spec.Tensor[spec.Rat]) (spec.Rat, spec.Rat, error) {
	var z spec.Rat
	l, err := irgrad.Lower[spec.Rat](nil, gc.Graph, gc.Payload)
	if err != nil {
		return z, z, err
	}
	ctx, err := l.Context(gc.Input)
	if err != nil {
		return z, z, err
	}
	tangents := []spec.Tensor[spec.Rat]{dx}
	for _, p := range l.Params {
		t, err := spec.Zeros[spec.Rat](p.Shape)
		if err != nil {
			return z, z, err
		}
		tangents = append(tangents, t)
	}
	_, jv, err := typedgraph.JVPGraph(l.Graph, ctx, tangents)
	if err != nil {
		return z, z, fmt.Errorf("typed-graph JVP: %w", err)
	}
	lhs, err := spec.Dot(jv, cot)
	if err != nil {
		return z, z, fmt.Errorf("⟨JVP, cotangent⟩: %w", err)
	}
	gr, err := l.VJP(irgrad.PathTypedGraph, gc.Input, cot)
	if err != nil {
		return z, z, fmt.Errorf("typed-graph VJP: %w", err)
	}
	rhs, err := spec.Dot(dx, gr.Input)
	if err != nil {
		return z, z, fmt.Errorf("⟨dx, VJP⟩: %w", err)
	}
	return lhs, rhs, nil
}

func produceCompositionFile(w *Writer, o Options) error {
	if !o.Shard.Has(CompositionName) {
		return nil
	}
	f, err := ProduceComposition(o.Cases, o.Seed)
	if err != nil {
		return err
	}
	if err := w.Put(CompositionName, KindComposition, f); err != nil {
		return err
	}
	if o.Progress != nil {
		o.Progress()
	}
	return nil
}

// TapeVJP is the verifier's VJP side: irgrad's direct tape recording and
// the tape's dense sweep (PathTape), not the typed graph. The producer runs
// it too, before the typed graph, to apply the budgets the verifier will
// apply (budgetSides).
func TapeVJP(g *irsem.Graph, p *irsem.Payload, x, cot spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
	l, err := irgrad.Lower[spec.Rat](nil, g, p)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, err
	}
	gr, err := l.VJP(irgrad.PathTape, x, cot)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, err
	}
	return gr.Input, nil
}
