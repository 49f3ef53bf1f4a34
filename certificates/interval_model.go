package certificates

import (
	"encoding/json"
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The interval model certificate: written for a user's model in place of
// model_composition when the model is not exact over the rationals at its
// input (a batch norm's sqrt(var + ε) has no exact rational value).
//
// Claim. For the model's graph G with payload P (inline, hashed) and the
// recorded input x (exact rationals), every element k of the exact real
// output G_P(x)[k] lies in the recorded closed interval
// Output.Values[k] = [lo_k, hi_k] (float64 endpoints, read as exact
// dyadic rationals; an infinite endpoint bounds nothing on its side).
//
// Theorem (enclosure). Let Ĝ be the evaluation of G over spec.Interval
// (irsem.DenoteAll[spec.Interval]) with every input and payload element
// r replaced by Interval.FromRat(r). Then G_P(x)[k] ∈ Ĝ(x)[k] for every k.
// Proof, by induction over the nodes in id order (parents precede their
// children, irsem.Graph.Check): an input or payload element r lies in
// FromRat(r), which rounds outward; a node applies its registry forward
// rule — one generic function over spec.Scalar — to its parents' values,
// and every Interval operation the rule performs is sound (spec.Interval:
// for any reals in the operands the exact result lies in the result), so
// a composition of such operations, applied to intervals containing the
// exact parent values, contains the exact node value (inclusion
// isotonicity composes); a rule that branches on a comparison takes the
// hull over the branches the operands allow. The output node's value is
// the claim. The theorem rests on spec.Interval's trusted boundary (Go's
// math library within 2 ulps for exp, log, log1p, tanh, sin, cos, widened
// by 4), as every interval verdict does.
//
// Verification (decided: equality, which implies containment). The
// verifier decodes the inline graph and payload (canonical documents
// only, hashed against graph_hash), checks the input against the graph's
// input shape and recomputes Ĝ(x). Each recorded interval must contain
// the recomputed one — that is what makes the claim a theorem — and must
// equal it bit for bit: the certificate records the interval evaluation's
// output, one reading, so a widened bound (still true, but not what the
// evaluation gives) is refused like any other edit, and a narrowed one
// fails containment. The two failures are reported differently: "does
// not contain" means the recorded claim is not proved; "wider than" means
// the file is not this build's evaluation (an edit, or a math library on
// another architecture that rounds a transcendental differently:
// certify again there). The re-evaluation is the producer's own
// semantics: the independence of this kind lies in the theorem, not in a
// second implementation.
const (
	KindModelInterval = "model_interval"
	ModelIntervalName = KindModelInterval + ".json"
)

// IntervalTensor is an interval tensor in a certificate: its shape and
// each element's enclosure as float64 bit patterns.
type IntervalTensor struct {
	Shape  []int       `json:"shape"`
	Values []Enclosure `json:"values"`
}

// ModelIntervalFile certifies an enclosure of a user's model's output at
// its input (see KindModelInterval for the claim, the theorem and how
// verify decides).
type ModelIntervalFile struct {
	Header
	Model     string          `json:"model"`
	GraphHash string          `json:"graph_hash"`
	Graph     json.RawMessage `json:"graph"`
	Payload   json.RawMessage `json:"payload"`
	Input     Tensor          `json:"input"`
	Output    IntervalTensor  `json:"output"`
}

// IntervalOutput evaluates g with payload p over spec.Interval at the
// exact input x and returns the output node's enclosure.
func IntervalOutput(g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat]) (spec.Tensor[spec.Interval], error) {
	return irsem.Denote(g, p, irsem.ConvertTensor[spec.Interval](x))
}

// ProduceModelInterval evaluates m over intervals at its input and
// returns the certificate of the output's enclosure.
func ProduceModelInterval(m *Model) (*ModelIntervalFile, error) {
	p := PayloadOrEmpty(m.Payload)
	hash, gdoc, pdoc, err := inlineGraph(m.Graph, p)
	if err != nil {
		return nil, err
	}
	y, err := IntervalOutput(m.Graph, p, m.Input)
	if err != nil {
		return nil, fmt.Errorf("model interval: %w", err)
	}
	f := &ModelIntervalFile{Header: Header{Format: Format, Kind: KindModelInterval}, Model: SafeName(m.Name),
		GraphHash: hash, Graph: gdoc, Payload: pdoc, Input: RatTensor(m.Input),
		Output: IntervalTensor{Shape: append([]int{}, y.Shape...), Values: make([]Enclosure, len(y.Data))}}
	for i, v := range y.Data {
		f.Output.Values[i] = IntervalEnclosure(v)
	}
	return f, nil
}

// producedModelInterval produces m's interval model certificate and
// checks that a verifier will read it (MaxFileBytes).
func producedModelInterval(m *Model) (*ModelIntervalFile, error) {
	f, err := ProduceModelInterval(m)
	if err != nil {
		return nil, err
	}
	data, err := Encode(f)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("the certificate would be %d bytes, over the %d a verifier reads", len(data), MaxFileBytes)
	}
	return f, nil
}

// registerModelInterval adds the interval model certificate f to s
// (ModelSuite, when the model is not exact over the rationals).
func (s *Suite) registerModelInterval(f *ModelIntervalFile) {
	s.Register(KindModelInterval, func(w *Writer, o Options) error {
		if err := w.Put(ModelIntervalName, KindModelInterval, f); err != nil {
			return err
		}
		if o.Progress != nil {
			o.Progress()
		}
		return nil
	})
	s.Expect(KindModelInterval, modelFile(ModelIntervalName))
	s.subjects = append(s.subjects, func(Options) int { return 1 })
}

// Notes lists, for a model suite (ModelSuite), each certificate kind
// written in place of another and why: "model_interval in place of
// model_composition: not exact over rat: …".
func (s *Suite) Notes() []string { return append([]string(nil), s.notes...) }
