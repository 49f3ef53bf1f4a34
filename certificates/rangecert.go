package certificates

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

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

// rangeExample is one graph certified by a range certificate: the example
// graph, its payload (empty when it has none) and its example input, the
// centre of the box.
type rangeExample struct {
	name                  string
	graph, payload, input string // paths in exampleFS ("" for no payload)
}

// rangeExamples lists the range certificates, one file each.
var rangeExamples = []rangeExample{
	{name: "mlp", graph: "examples/mlp.ir.json", payload: "examples/mlp.payload.json", input: "examples/mlp.input.json"},
	{name: "quad", graph: "examples/quad.ir.json", input: "examples/quad.input.json"},
}

// RangeProfile is the backend profile range certificates are planned
// against: checked_cpu, whose reference capsules promise fixed-left
// reductions.
const RangeProfile = "checked_cpu"

// rangeRadius is the half-width of the input box around the example
// input: each element ranges over [x − 1/8, x + 1/8].
var rangeRadius = big.NewRat(1, 8)

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
	// GraphHash is obligations.GraphHash of the graph and payload.
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

// loadExample decodes an embedded example.
func loadExample(ex rangeExample) (*irsem.Graph, *irsem.Payload, spec.Tensor[spec.Rat], error) {
	var z spec.Tensor[spec.Rat]
	gdoc, err := exampleFS.ReadFile(ex.graph)
	if err != nil {
		return nil, nil, z, err
	}
	g, err := irsem.DecodeGraph(gdoc)
	if err != nil {
		return nil, nil, z, fmt.Errorf("%s: %w", ex.graph, err)
	}
	p := payloadOrEmpty(nil)
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

// rangeBox encloses [x − r, x + r] element by element on the binary32
// grid (outward).
func rangeBox(x spec.Tensor[spec.Rat]) (ranges.Interval32Tensor, error) {
	box := ranges.Interval32Tensor{Shape: x.Shape.Clone(), Data: make([]ranges.Interval32, len(x.Data))}
	for i, v := range x.Data {
		lo, err := ranges.EncloseRat(new(big.Rat).Sub(v.Big(), rangeRadius))
		if err != nil {
			return box, fmt.Errorf("element %d: %w", i, err)
		}
		hi, err := ranges.EncloseRat(new(big.Rat).Add(v.Big(), rangeRadius))
		if err != nil {
			return box, fmt.Errorf("element %d: %w", i, err)
		}
		box.Data[i] = ranges.Interval32{Lo: lo.Lo, Hi: hi.Hi}
	}
	return box, nil
}

func sampleSeed(seed uint64, name string) uint64 { return spec.CaseSeed(seed, KindRange+"."+name, 0) }

func enc32(b ranges.Bits32) Enclosure32 {
	return Enclosure32{Lo: fmt.Sprintf("0x%08x", b.Lo), Hi: fmt.Sprintf("0x%08x", b.Hi)}
}

func (e Enclosure32) decode(file, field string) (ranges.Bits32, error) {
	var out ranges.Bits32
	for k, v := range []string{e.Lo, e.Hi} {
		f := field + [2]string{".lo", ".hi"}[k]
		if err := checkBits(file, f, v); err != nil {
			return out, err
		}
		u, _ := strconv.ParseUint(v[2:], 16, 32)
		if k == 0 {
			out.Lo = uint32(u)
		} else {
			out.Hi = uint32(u)
		}
	}
	return out, nil
}

// ProduceRange traces the named example over its box under checked_cpu
// with ranges.Produce and returns the certificate.
func ProduceRange(name string, seed uint64) (*RangeFile, error) {
	for _, ex := range rangeExamples {
		if ex.name == name {
			return produceRange(ex, seed)
		}
	}
	return nil, fmt.Errorf("range: no example %q", name)
}

func produceRange(ex rangeExample, seed uint64) (*RangeFile, error) {
	g, p, x, err := loadExample(ex)
	if err != nil {
		return nil, fmt.Errorf("range %s: %w", ex.name, err)
	}
	return produceRangeOf(ex.name, KindRange, g, p, x, seed)
}

// produceRangeOf traces g with payload p over the box around x under
// checked_cpu (ranges.Produce) and returns the certificate of the given
// kind and name; its sample seed is sampleSeed(seed, name).
func produceRangeOf(name, kind string, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat], seed uint64) (*RangeFile, error) {
	ex := rangeExample{name: name}
	box, err := rangeBox(x)
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
		Graph: gdoc, Payload: pdoc, Centre: RatTensor(x), Radius: rangeRadius.RatString(),
		Profile: cert.Profile, Rules: cert.Rules, SampleSeed: sampleSeed(seed, ex.name),
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
	return putEach(w, o, KindRange, len(rangeExamples), func(k int) string { return rangePath(rangeExamples[k].name) }, func(k int) (any, error) {
		return produceRange(rangeExamples[k], o.Seed)
	})
}

func rangePath(name string) string { return KindRange + "/" + name + ".json" }

// expectedRangeFiles is the range kind's complete file set: one per
// shipped example, whatever the options.
func expectedRangeFiles(Options) ([]string, error) {
	var out []string
	for _, ex := range rangeExamples {
		out = append(out, rangePath(ex.name))
	}
	return out, nil
}

func verifyRangeFile(file string, data []byte, m *Manifest) (int, error) {
	var f RangeFile
	if err := decodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	return verifyRange(file, &f, m)
}

// verifyRange re-derives a range certificate.
//
// It binds the certificate to the shipped example it names (graph,
// payload and centre equal to the embedded example, graph_hash to the
// inline documents, the box recomputed from centre and radius), then
// re-plans the kernels against checked_cpu and compares the capsule
// names, rebuilds the trace (ranges.TraceNodes) and compares rules and
// enclosures bit for bit, runs ranges.CheckWith (which re-plans, rebuilds
// and replays the binary32 execution, the bound reference kernels and the
// exact semantics at the box's corners, centre and seeded points), and
// finally checks, with this package's own arithmetic, that the exact value
// of every node at the centre and at the all-low and all-high corners
// (irsem.DenoteAll over spec.Rat) lies in its recorded enclosure. It
// counts one case per node.
func verifyRange(file string, f *RangeFile, m *Manifest) (int, error) {
	for _, n := range []struct{ field, v string }{{"name", f.Name}, {"profile", f.Profile}} {
		if err := checkName(file, n.field, n.v); err != nil {
			return 0, err
		}
	}
	var ex *rangeExample
	for i := range rangeExamples {
		if rangeExamples[i].name == f.Name {
			ex = &rangeExamples[i]
		}
	}
	if ex == nil {
		return 0, fieldErr(file, "name", "no shipped example %q", f.Name)
	}
	if want := KindRange + "/" + f.Name + ".json"; file != want {
		return 0, fieldErr(file, "name", "the certificate of %s must be stored as %s", f.Name, want)
	}
	g, p, err := hashedInlineGraph(file, f.GraphHash, f.Graph, f.Payload)
	if err != nil {
		return 0, err
	}
	eg, ep, ex0, err := loadExample(*ex)
	if err != nil {
		return 0, fieldErr(file, "name", "embedded example: %v", err)
	}
	if !eg.Equal(g) {
		return 0, fieldErr(file, "graph", "differs from the shipped example %s", f.Name)
	}
	if !ep.Equal(p) {
		return 0, fieldErr(file, "payload", "differs from the shipped example %s", f.Name)
	}
	x, err := f.Centre.decode(file, "centre")
	if err != nil {
		return 0, err
	}
	if err := sameTensors(file, "centre", []spec.Tensor[spec.Rat]{x}, []spec.Tensor[spec.Rat]{ex0}); err != nil {
		return 0, err
	}
	if f.SampleSeed != sampleSeed(m.Seed, f.Name) {
		return 0, seedErr(fieldErr(file, "sample_seed", "%d, the manifest's seed gives %d", f.SampleSeed, sampleSeed(m.Seed, f.Name)))
	}
	return rederiveRange(file, f, g, p, x)
}

// rederiveRange re-derives the claims of a range certificate about the
// graph g with payload p over the box around the centre x, once the
// caller has bound g, p, x and the sample seed to what the certificate
// is about (a shipped example, or a user's model by its inline documents
// and hash): radius and profile, the box, the capsules, rules and trace
// rebuilt and compared, ranges.CheckWith, and exact containment at the
// centre and the extreme corners (see verifyRange).
func rederiveRange(file string, f *RangeFile, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat]) (int, error) {
	if err := cmpRat(file, "radius", f.Radius, rangeRadius); err != nil {
		return 0, err
	}
	if err := cmpStr(file, "profile", f.Profile, RangeProfile); err != nil {
		return 0, err
	}
	box, err := rangeBox(x)
	if err != nil {
		return 0, fieldErr(file, "box", "%v", err)
	}
	if len(f.Box) != len(box.Data) {
		return 0, fieldErr(file, "box", "%d enclosures for %d input elements", len(f.Box), len(box.Data))
	}
	cert := &ranges.Certificate{Graph: g, Payload: p, Profile: f.Profile, Box: make([]ranges.Bits32, len(f.Box))}
	for i, e := range f.Box {
		field := fmt.Sprintf("box[%d]", i)
		b, err := e.decode(file, field)
		if err != nil {
			return 0, err
		}
		if want := box.Data[i].Bits(); b != want {
			return 0, fieldErr(file, field, "recorded %s, [centre − radius, centre + radius] gives %s", b, want)
		}
		cert.Box[i] = b
	}

	// Re-plan and rebuild, naming the first differing field.
	prof, err := backend.ProfileNamed(RangeProfile)
	if err != nil {
		return 0, fieldErr(file, "profile", "%v", err)
	}
	plan, err := ranges.PlanKernels(g, prof)
	if err != nil {
		return 0, fieldErr(file, "capsules", "re-planning failed: %v", err)
	}
	nodes, err := ranges.TraceNodes(g, p, box, plan)
	if err != nil {
		return 0, fieldErr(file, "trace", "rebuilding the trace failed: %v", err)
	}
	if len(f.Capsules) != len(nodes) || len(f.Rules) != len(nodes) || len(f.Trace) != len(nodes) {
		return 0, fieldErr(file, "trace", "%d capsule lists, %d rules and %d node traces for %d nodes", len(f.Capsules), len(f.Rules), len(f.Trace), len(nodes))
	}
	cert.Capsules, cert.Rules, cert.Trace = make([][]string, len(nodes)), make([]string, len(nodes)), make([][]ranges.Bits32, len(nodes))
	for i, nt := range nodes {
		field := fmt.Sprintf("capsules[%d]", i)
		if len(f.Capsules[i]) != len(nt.Kernels) {
			return 0, fieldErr(file, field, "%d capsules, the re-plan selects %d", len(f.Capsules[i]), len(nt.Kernels))
		}
		for k, name := range f.Capsules[i] {
			if err := checkName(file, fmt.Sprintf("%s[%d]", field, k), name); err != nil {
				return 0, err
			}
			if err := cmpStr(file, fmt.Sprintf("%s[%d]", field, k), name, nt.Kernels[k].Capsule.Name); err != nil {
				return 0, err
			}
		}
		cert.Capsules[i] = f.Capsules[i]
		if err := checkName(file, fmt.Sprintf("rules[%d]", i), f.Rules[i]); err != nil {
			return 0, err
		}
		if err := cmpStr(file, fmt.Sprintf("rules[%d]", i), f.Rules[i], nt.Rule); err != nil {
			return 0, err
		}
		cert.Rules[i] = f.Rules[i]
		if len(f.Trace[i]) != len(nt.Enclosures) {
			return 0, fieldErr(file, fmt.Sprintf("trace[%d]", i), "%d enclosures, node %d has %d elements", len(f.Trace[i]), i, len(nt.Enclosures))
		}
		cert.Trace[i] = make([]ranges.Bits32, len(nt.Enclosures))
		for j, e := range f.Trace[i] {
			field := fmt.Sprintf("trace[%d][%d]", i, j)
			b, err := e.decode(file, field)
			if err != nil {
				return 0, err
			}
			want := nt.Enclosures[j].Bits()
			if b.Lo != want.Lo {
				return 0, fieldErr(file, field+".lo", "recorded 0x%08x, rebuilt 0x%08x", b.Lo, want.Lo)
			}
			if b.Hi != want.Hi {
				return 0, fieldErr(file, field+".hi", "recorded 0x%08x, rebuilt 0x%08x", b.Hi, want.Hi)
			}
			cert.Trace[i][j] = b
		}
	}
	if _, err := ranges.CheckWith(cert, ranges.Options{Seed: f.SampleSeed, Providers: backend.DefaultProviders(), Exact: true}); err != nil {
		field := "trace"
		var re *ranges.Error
		if errors.As(err, &re) && re.Node >= 0 {
			field = fmt.Sprintf("trace[%d]", re.Node)
			if re.Elem >= 0 {
				field = fmt.Sprintf("trace[%d][%d]", re.Node, re.Elem)
			}
		}
		return 0, fieldErr(file, field, "ranges.Check: %v", err)
	}
	// Our own exact containment at the centre and the extreme corners.
	lo := spec.Tensor[spec.Rat]{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	hi := spec.Tensor[spec.Rat]{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	for i, b := range cert.Box {
		l, okL := binary32Value(b.Lo)
		h, okH := binary32Value(b.Hi)
		if !okL || !okH {
			return 0, fieldErr(file, fmt.Sprintf("box[%d]", i), "non-finite endpoint")
		}
		lo.Data[i], hi.Data[i] = spec.RatFromBig(l), spec.RatFromBig(h)
	}
	for _, pt := range []struct {
		name string
		x    spec.Tensor[spec.Rat]
	}{{"centre", x}, {"all-low corner", lo}, {"all-high corner", hi}} {
		var vals []spec.Tensor[spec.Rat]
		var err error
		if exactGraph(g) {
			vals, err = irsem.DenoteAll(g, p, pt.x)
		}
		var de *spec.DomainError
		if !exactGraph(g) || errors.As(err, &de) && de.Scalar == "rat" && strings.HasPrefix(de.Reason, "no exact rational") {
			// No exact rational value (tanh, exp, a batch norm's
			// irrational sqrt, …): the exact real value is enclosed by the
			// Interval evaluation at the point, and that enclosure must lie
			// inside the recorded one — which proves the claim; anything
			// else refuses it.
			if err := intervalContained(file, g, p, pt.name, pt.x, cert.Trace); err != nil {
				return 0, err
			}
			continue
		}
		if err != nil {
			return 0, fieldErr(file, "graph", "exact evaluation at the %s: %v", pt.name, err)
		}
		for i, v := range vals {
			for j, r := range v.Data {
				if j >= len(cert.Trace[i]) {
					return 0, fieldErr(file, fmt.Sprintf("trace[%d]", i), "node %d has %d values, %d enclosures", i, len(v.Data), len(cert.Trace[i]))
				}
				b := cert.Trace[i][j]
				l, okL := binary32Value(b.Lo)
				h, okH := binary32Value(b.Hi)
				if !okL || !okH || r.Big().Cmp(l) < 0 || r.Big().Cmp(h) > 0 {
					return 0, fieldErr(file, fmt.Sprintf("trace[%d][%d]", i, j), "the exact value %s at the %s lies outside [%g, %g]",
						truncate(r.String()), pt.name, math.Float32frombits(b.Lo), math.Float32frombits(b.Hi))
				}
			}
		}
	}
	return len(nodes), nil
}

// exactGraph reports whether every tag of g has exact rational semantics,
// so that irsem.DenoteAll over spec.Rat evaluates it.
func exactGraph(g *irsem.Graph) bool {
	for i := range g.Nodes {
		if info, ok := irsem.LookupTag(g.Nodes[i].Kind.Op); !ok || !info.Exact {
			return false
		}
	}
	return true
}

// intervalContained checks, for a graph without exact rational semantics,
// that the outward-rounded Interval evaluation at the point x (which
// encloses every node's exact real value) lies inside each node's
// recorded binary32 enclosure: then the exact value does too.
func intervalContained(file string, g *irsem.Graph, p *irsem.Payload, name string, x spec.Tensor[spec.Rat], trace [][]ranges.Bits32) error {
	vals, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Interval](x))
	if err != nil {
		return fieldErr(file, "graph", "interval evaluation at the %s: %v", name, err)
	}
	for i, v := range vals {
		for j, iv := range v.Data {
			if i >= len(trace) || j >= len(trace[i]) {
				return fieldErr(file, fmt.Sprintf("trace[%d]", i), "node %d has %d values, fewer enclosures", i, len(v.Data))
			}
			b := trace[i][j]
			l, h := float64(math.Float32frombits(b.Lo)), float64(math.Float32frombits(b.Hi))
			if !(iv.Lo >= l && iv.Hi <= h) {
				return fieldErr(file, fmt.Sprintf("trace[%d][%d]", i, j), "the exact value at the %s, enclosed by %s, is not shown inside [%g, %g]", name, iv, l, h)
			}
		}
	}
	return nil
}
