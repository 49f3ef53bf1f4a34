package certificates

import (
	"embed"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/ranges"
	"github.com/tlcheck/tlcheck/spec"
)

// The shipped examples, embedded so that certify and verify run from any
// directory. They are byte-identical copies of ../examples (a test checks
// it).
//
//go:embed examples/*.json
var exampleFS embed.FS

// RangeExample is one graph certified by a range certificate: the example
// graph, its payload (empty when it has none) and its example input, the
// centre of the box.
type RangeExample struct {
	name                  string
	graph, payload, input string // paths in exampleFS ("" for no payload)
}

// Name is the example's name: the range certificate's name and file stem.
func (e RangeExample) Name() string { return e.name }

// RangeExamples lists the range certificates, one file each.
var RangeExamples = []RangeExample{
	{name: "mlp", graph: "examples/mlp.ir.json", payload: "examples/mlp.payload.json", input: "examples/mlp.input.json"},
	{name: "quad", graph: "examples/quad.ir.json", input: "examples/quad.input.json"},
}

// RangeProfile is the backend profile range certificates are planned
// against: checked_cpu, whose reference capsules promise fixed-left
// reductions.
const RangeProfile = "checked_cpu"

// RangeRadius is the half-width of the input box around the example
// input: each element ranges over [x − 1/8, x + 1/8].
var RangeRadius = big.NewRat(1, 8)

// Enclosure32 is an Interval32 as the bit patterns of its binary32
// endpoints, "0x%08x".
type Enclosure32 struct {
	Lo string `json:"lo"`
	Hi string `json:"hi"`
}

// RangeFile is a range certificate: for every input in Box, every node of
// the graph (with its payload, executed by the kernels the profile
// selects) takes values — exact real and binary32 — within its enclosure
// in Trace.
type RangeFile struct {
	Header
	// Name is the example's name.
	Name string `json:"name"`
	// GraphHash is irsem.GraphHash of the graph and payload.
	GraphHash string `json:"graph_hash"`
	// Graph and Payload are the canonical documents, inline.
	Graph   json.RawMessage `json:"graph"`
	Payload json.RawMessage `json:"payload"`
	// Centre is the example input and Radius the box half-width: Box is
	// the binary32 enclosure of [centre − radius, centre + radius],
	// element by element.
	Centre Tensor        `json:"centre"`
	Radius string        `json:"radius"`
	Box    []Enclosure32 `json:"box"`
	// Profile names the backend profile; Capsules the capsules its plan
	// selects for each node's kernels, Rules each node's range rule.
	Profile  string     `json:"profile"`
	Capsules [][]string `json:"capsules"`
	Rules    []string   `json:"rules"`
	// Trace holds each node's enclosures, by node id and flat element.
	Trace [][]Enclosure32 `json:"trace"`
	// SampleSeed keys the pseudo-random points the checker replays.
	SampleSeed uint64 `json:"sample_seed"`
}

// LoadExample decodes an embedded example.
func LoadExample(ex RangeExample) (*irsem.Graph, *irsem.Payload, spec.Tensor[spec.Rat], error) {
	var z spec.Tensor[spec.Rat]
	gdoc, err := exampleFS.ReadFile(ex.graph)
	if err != nil {
		return nil, nil, z, err
	}
	g, err := irsem.DecodeGraph(gdoc)
	if err != nil {
		return nil, nil, z, fmt.Errorf("%s: %w", ex.graph, err)
	}
	p := PayloadOrEmpty(nil)
	if ex.payload != "" {
		pdoc, err := exampleFS.ReadFile(ex.payload)
		if err != nil {
			return nil, nil, z, err
		}
		if p, err = irsem.DecodePayload(pdoc); err != nil {
			return nil, nil, z, fmt.Errorf("%s: %w", ex.payload, err)
		}
	}
	idoc, err := exampleFS.ReadFile(ex.input)
	if err != nil {
		return nil, nil, z, err
	}
	x, err := irsem.DecodeTensor(idoc)
	if err != nil {
		return nil, nil, z, fmt.Errorf("%s: %w", ex.input, err)
	}
	return g, p, x, nil
}

// RangeBox encloses [x − r, x + r] element by element on the binary32
// grid (outward).
func RangeBox(x spec.Tensor[spec.Rat]) (ranges.Interval32Tensor, error) {
	box := ranges.Interval32Tensor{Shape: x.Shape.Clone(), Data: make([]ranges.Interval32, len(x.Data))}
	for i, v := range x.Data {
		lo, err := ranges.EncloseRat(new(big.Rat).Sub(v.Big(), RangeRadius))
		if err != nil {
			return box, fmt.Errorf("element %d: %w", i, err)
		}
		hi, err := ranges.EncloseRat(new(big.Rat).Add(v.Big(), RangeRadius))
		if err != nil {
			return box, fmt.Errorf("element %d: %w", i, err)
		}
		box.Data[i] = ranges.Interval32{Lo: lo.Lo, Hi: hi.Hi}
	}
	return box, nil
}

// SampleSeed is the seed of a range certificate's sample points:
// spec.CaseSeed(seed, "range.NAME", 0).
func SampleSeed(seed uint64, name string) uint64 { return spec.CaseSeed(seed, KindRange+"."+name, 0) }

func enc32(b ranges.Bits32) Enclosure32 {
	return Enclosure32{Lo: fmt.Sprintf("0x%08x", b.Lo), Hi: fmt.Sprintf("0x%08x", b.Hi)}
}

// ProduceRange traces the named example over its box under checked_cpu
// with ranges.Produce and returns the certificate.
func ProduceRange(name string, seed uint64) (*RangeFile, error) {
	for _, ex := range RangeExamples {
		if ex.name == name {
			return produceRange(ex, seed)
		}
	}
	return nil, fmt.Errorf("range: no example %q", name)
}

func produceRange(ex RangeExample, seed uint64) (*RangeFile, error) {
	g, p, x, err := LoadExample(ex)
	if err != nil {
		return nil, fmt.Errorf("range %s: %w", ex.name, err)
	}
	return produceRangeOf(ex.name, KindRange, g, p, x, seed)
}

// produceRangeOf traces g with payload p over the box around x under
// checked_cpu (ranges.Produce) and returns the certificate of the given
// kind and name; its sample seed is SampleSeed(seed, name).
func produceRangeOf(name, kind string, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat], seed uint64) (*RangeFile, error) {
	ex := RangeExample{name: name}
	box, err := RangeBox(x)
	if err != nil {
		return nil, fmt.Errorf("range %s: box: %w", ex.name, err)
	}
	prof, err := backend.ProfileNamed(RangeProfile)
	if err != nil {
		return nil, err
	}
	cert, err := ranges.Produce(g, p, box, prof)
	if err != nil {
		return nil, fmt.Errorf("range %s: %w", ex.name, err)
	}
	hash, gdoc, pdoc, err := inlineGraph(g, p)
	if err != nil {
		return nil, err
	}
	f := &RangeFile{
		Header: Header{Format: Format, Kind: kind}, Name: ex.name, GraphHash: hash,
		Graph: gdoc, Payload: pdoc, Centre: RatTensor(x), Radius: RangeRadius.RatString(),
		Profile: cert.Profile, Rules: cert.Rules, SampleSeed: SampleSeed(seed, ex.name),
		Capsules: make([][]string, len(cert.Capsules)), Trace: make([][]Enclosure32, len(cert.Trace)),
	}
	f.Box = []Enclosure32{} // never null, even for an input of no elements
	for _, b := range cert.Box {
		f.Box = append(f.Box, enc32(b))
	}
	for i, cs := range cert.Capsules {
		f.Capsules[i] = append([]string{}, cs...)
	}
	for i, nt := range cert.Trace {
		f.Trace[i] = make([]Enclosure32, len(nt))
		for j, b := range nt {
			f.Trace[i][j] = enc32(b)
		}
	}
	return f, nil
}

func produceRangeFiles(w *Writer, o Options) error {
	return putEach(w, o, KindRange, len(RangeExamples), func(k int) string { return rangePath(RangeExamples[k].name) }, func(k int) (any, error) {
		return produceRange(RangeExamples[k], o.Seed)
	})
}

func rangePath(name string) string { return KindRange + "/" + name + ".json" }

// expectedRangeFiles is the range kind's complete file set: one per
// shipped example, whatever the options.
func expectedRangeFiles(Options) ([]string, error) {
	var out []string
	for _, ex := range RangeExamples {
		out = append(out, rangePath(ex.name))
	}
	return out, nil
}
