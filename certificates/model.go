package certificates

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// The kinds of a user's model's certificates (ModelSuite): one file each,
// at a fixed path, so that the manifest's kinds alone state the complete
// file set.
const (
	KindModelComposition = "model_composition"
	KindModelRange       = "model_range"
	ModelCompositionName = KindModelComposition + ".json"
	ModelRangeName       = KindModelRange + ".json"
)

// Model is a user's model to certify: an IR graph with its payload (an
// imported ONNX model, say) and one input point. Name labels it in the
// certificates (SafeName makes any file name fit the safe alphabet).
type Model struct {
	Name    string
	Graph   *irsem.Graph
	Payload *irsem.Payload
	Input   spec.Tensor[spec.Rat]
}

// SafeName maps a name into the certificates' safe alphabet
// [A-Za-z0-9_.:-]{1,128}: every other byte becomes '_', and the result is
// cut to 128 bytes ("model" for an empty name).
func SafeName(s string) string {
	b := []byte(s)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:-", c) >= 0
		if !ok {
			b[i] = '_'
		}
	}
	if len(b) > 128 {
		b = b[:128]
	}
	if len(b) == 0 {
		return "model"
	}
	return string(b)
}

// ModelCompositionCase is one certified instance of
//
//	⟨JVP(x; dx), cotangent⟩ = ⟨dx, VJP(x; cotangent)⟩
//
// on the model at its input x, w.r.t. the input (payload held constant).
type ModelCompositionCase struct {
	Dx        Tensor `json:"dx"`
	Cotangent Tensor `json:"cotangent"`
	LHS       string `json:"lhs"`
	RHS       string `json:"rhs"`
}

// ModelCompositionFile certifies the composition law on a user's model:
// the graph, payload and input are carried inline (the verifier needs
// nothing else, not the file the model was imported from); the tangents
// and cotangents are drawn from the manifest's seed, case i from
// spec.CaseSeed(seed, "model_composition", i).
type ModelCompositionFile struct {
	Header
	Model     string                 `json:"model"`
	GraphHash string                 `json:"graph_hash"`
	Graph     json.RawMessage        `json:"graph"`
	Payload   json.RawMessage        `json:"payload"`
	Input     Tensor                 `json:"input"`
	Cases     []ModelCompositionCase `json:"cases"`
}

// ModelTangents draws case i's tangent (of the input's shape) and
// cotangent (of the output's shape).
func ModelTangents(seed uint64, i int, in, out spec.Shape) (spec.Tensor[spec.Rat], spec.Tensor[spec.Rat]) {
	src := casegen.NewRandSource(spec.CaseSeed(seed, KindModelComposition, i))
	dx := casegen.GenTensor(src, in, casegen.Any, "dx")
	cot := casegen.GenTensor(src, out, casegen.Any, "cotangent")
	return dx, cot
}

// ProduceModelComposition checks the composition law on m at its input
// for cases seeded tangent/cotangent pairs, along the typed-graph path
// (as ProduceComposition), and returns the certificate. The model must be
// exact over spec.Rat (every tag Exact); the two sides must agree.
func ProduceModelComposition(m *Model, cases int, seed uint64) (*ModelCompositionFile, error) {
	p := PayloadOrEmpty(m.Payload)
	hash, gdoc, pdoc, err := inlineGraph(m.Graph, p)
	if err != nil {
		return nil, err
	}
	f := &ModelCompositionFile{Header: Header{Format: Format, Kind: KindModelComposition}, Model: SafeName(m.Name),
		GraphHash: hash, Graph: gdoc, Payload: pdoc, Input: RatTensor(m.Input)}
	gc := &casegen.GraphCase{Graph: m.Graph, Payload: p, Input: m.Input}
	out := m.Graph.Nodes[m.Graph.OutputID].Shape
	for i := range cases {
		dx, cot := ModelTangents(seed, i, m.Input.Shape, out)
		if err := budgetSides(m.Graph, p, m.Input, dx, cot); err != nil {
			return nil, fmt.Errorf("model composition case %d: %w", i, err)
		}
		lhs, rhs, err := typedSides(gc, dx, cot)
		if err != nil {
			return nil, fmt.Errorf("model composition case %d: %w", i, err)
		}
		if !lhs.Same(rhs) {
			return nil, fmt.Errorf("model composition case %d: ⟨JVP(dx), cotangent⟩ = %s ≠ ⟨dx, VJP(cotangent)⟩ = %s", i, lhs, rhs)
		}
		f.Cases = append(f.Cases, ModelCompositionCase{Dx: RatTensor(dx), Cotangent: RatTensor(cot), LHS: lhs.String(), RHS: rhs.String()})
	}
	return f, nil
}

// budgetSides applies the exact-evaluation budgets (limits rat-work,
// rat-bits, rat-bits-total) to one composition case before the typed
// graph computes it, whose kernels multiply rationals unchecked: the
// forward and tangent values over spec.Dual[spec.Rat] through
// irsem.DenoteAll (rat-work checked before anything runs; every rule's
// result checked against rat-bits, naming the node) and the adjoints
// along the tape (every VJP rule's result checked). Past them the typed
// graph computes the same exact values, and each value inside one of its
// rules is a sum of products of a bounded number of them, so its work is
// bounded too. A budget exceeded is a *limits.Error (wrapped, with the
// node), which certify reports as bad input, exit 2 — as eval does.
func budgetSides(g *irsem.Graph, p *irsem.Payload, x, dx, cot spec.Tensor[spec.Rat]) error {
	type D = spec.Dual[spec.Rat]
	in := spec.Tensor[D]{Shape: x.Shape.Clone(), Data: make([]D, len(x.Data))}
	for i := range x.Data {
		in.Data[i] = spec.MakeDual(x.Data[i], dx.Data[i])
	}
	if _, err := irsem.DenoteAll(g, p, in); err != nil && limits.IsLimit(err) {
		return err
	}
	if _, err := TapeVJP(g, p, x, cot); err != nil && limits.IsLimit(err) {
		return err
	}
	return nil
}

// ModelOps lists the registry primitives the model's nodes apply
// (irsem.Applications), in registry order: the primitives whose local
// adjointness a model's certificate directory certifies alongside the
// model's own claims.
func ModelOps(m *Model) ([]string, error) {
	apps, err := irsem.Applications(m.Graph, PayloadOrEmpty(m.Payload))
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for i := range apps {
		for _, p := range apps[i].Prims() {
			used[p] = true
		}
	}
	var ops []string
	for _, info := range spec.Infos() {
		if used[info.Name] {
			ops = append(ops, info.Name)
		}
	}
	return ops, nil
}

// ModelSuite returns the suite that certifies the user's model m with the
// seed the directory will be certified with: the local adjointness of
// every primitive the model applies (Options.Ops should be ModelOps(m)),
// and, where they apply,
//
//   - model_composition.json — the composition law on m at its input,
//     over spec.Rat; it applies when m is exact over Rat at its input
//     (irgrad lowers it over Rat — every tag Exact — and every value
//     stays rational);
//   - model_interval.json — where model_composition does not apply, the
//     interval enclosure of m's output at its input (KindModelInterval);
//     it applies when the interval evaluation succeeds;
//   - model_range.json — a range certificate of m over the box
//     input ± 1/8 under checked_cpu; it applies when ranges.Produce
//     traces the model (every tag has a range rule, nothing overflows).
//
// skipped says, per kind that does not apply, why (Suite.Notes says which
// kind stands in for which); a model to which none applies is an error. The files carry the graph and payload
// inline, so verify needs nothing but the directory (FullSuite verifies
// these kinds too).
func ModelSuite(m *Model, seed uint64) (s *Suite, skipped []string, err error) {
	if m == nil || m.Graph == nil {
		return nil, nil, fmt.Errorf("certify: no model")
	}
	if in := m.Graph.Nodes[m.Graph.InputID].Shape; !m.Input.Shape.Equal(in) {
		return nil, nil, fmt.Errorf("certify: the input has shape %v, the graph's input %v", m.Input.Shape, in)
	}
	s = NewSuite()
	if err := exactAt(m); err != nil {
		if limits.IsLimit(err) {
			// The exact evaluation exceeds a budget (rat-work, rat-bits,
			// rat-bits-total): bad input, as eval says of the same model,
			// not a certificate to skip.
			return nil, nil, err
		}
		// The composition law cannot be certified exactly; the output's
		// interval enclosure can (interval_model.go).
		if f, ierr := producedModelInterval(m); ierr != nil {
			skipped = append(skipped, fmt.Sprintf("%s: not exact over rat: %v; %s: %v", KindModelComposition, err, KindModelInterval, ierr))
		} else {
			s.registerModelInterval(f)
			s.notes = append(s.notes, fmt.Sprintf("%s in place of %s: not exact over rat: %v", KindModelInterval, KindModelComposition, err))
		}
	} else {
		s.Register(KindModelComposition, func(w *Writer, o Options) error {
			f, err := ProduceModelComposition(m, o.Cases, o.Seed)
			if err != nil {
				return err
			}
			if err := w.Put(ModelCompositionName, KindModelComposition, f); err != nil {
				return err
			}
			if o.Progress != nil {
				o.Progress()
			}
			return nil
		})
		s.Expect(KindModelComposition, modelFile(ModelCompositionName))
		s.subjects = append(s.subjects, func(Options) int { return 1 })
	}
	rf, rerr := produceRangeOf(SafeName(m.Name), KindModelRange, m.Graph, PayloadOrEmpty(m.Payload), m.Input, seed)
	if rerr == nil {
		// A file the verifier would refuse to read is not written.
		if data, err := Encode(rf); err != nil {
			rerr = err
		} else if len(data) > MaxFileBytes {
			rerr = fmt.Errorf("the certificate would be %d bytes, over the %d a verifier reads (a trace of every node's every element)", len(data), MaxFileBytes)
		}
	}
	if rerr != nil {
		skipped = append(skipped, fmt.Sprintf("%s: %v", KindModelRange, rerr))
	} else {
		s.Register(KindModelRange, func(w *Writer, o Options) error {
			if o.Seed != seed {
				return fmt.Errorf("certify: the model suite was built for seed %d, not %d", seed, o.Seed)
			}
			if err := w.Put(ModelRangeName, KindModelRange, rf); err != nil {
				return err
			}
			if o.Progress != nil {
				o.Progress()
			}
			return nil
		})
		s.Expect(KindModelRange, modelFile(ModelRangeName))
		s.subjects = append(s.subjects, func(Options) int { return 1 })
	}
	if !slices.Contains(s.kinds, KindModelComposition) && !slices.Contains(s.kinds, KindModelInterval) && !slices.Contains(s.kinds, KindModelRange) {
		return nil, skipped, fmt.Errorf("certify: neither certificate applies to the model (%s)", strings.Join(skipped, "; "))
	}
	return s, skipped, nil
}

// exactAt reports why m is not exact over spec.Rat at its input, or nil:
// irgrad must lower it over Rat (every tag Exact) and the evaluation must
// keep every value rational (a batch norm's sqrt(var + ε) rarely does).
func exactAt(m *Model) error {
	p := PayloadOrEmpty(m.Payload)
	if _, err := irgrad.Lower[spec.Rat](nil, m.Graph, p); err != nil {
		return err
	}
	var de *spec.DomainError
	if _, err := irsem.DenoteAll(m.Graph, p, m.Input); errors.As(err, &de) && de.Scalar == "rat" && strings.HasPrefix(de.Reason, "no exact rational") || limits.IsLimit(err) {
		return err
	}
	return nil
}

func modelFile(name string) func(Options) ([]string, error) {
	return func(Options) ([]string, error) { return []string{name}, nil }
}

// acceptModelKinds makes s know model directories: the model kinds'
// file sets, without producers (s.Certify never writes
// them; ModelSuite does).
func (s *Suite) acceptModelKinds() {
	s.expect[KindModelComposition] = modelFile(ModelCompositionName)
	s.expect[KindModelRange] = modelFile(ModelRangeName)
	s.expect[KindModelInterval] = modelFile(ModelIntervalName)
}
