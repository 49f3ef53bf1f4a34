package verify

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/ranges"
	"github.com/tlcheck/tlcheck/spec"
)

// decodeEnclosure32 checks and converts a range certificate's binary32
// enclosure.
func decodeEnclosure32(e certificates.Enclosure32, file, field string) (ranges.Bits32, error) {
	var out ranges.Bits32
	for k, v := range []string{e.Lo, e.Hi} {
		f := field + [2]string{".lo", ".hi"}[k]
		if err := certificates.CheckBits(file, f, v); err != nil {
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

func verifyRangeFile(file string, data []byte, m *certificates.Manifest) (int, error) {
	var f certificates.RangeFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
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
func verifyRange(file string, f *certificates.RangeFile, m *certificates.Manifest) (int, error) {
	for _, n := range []struct{ field, v string }{{"name", f.Name}, {"profile", f.Profile}} {
		if err := certificates.CheckName(file, n.field, n.v); err != nil {
			return 0, err
		}
	}
	var ex *certificates.RangeExample
	for i := range certificates.RangeExamples {
		if certificates.RangeExamples[i].Name() == f.Name {
			ex = &certificates.RangeExamples[i]
		}
	}
	if ex == nil {
		return 0, certificates.FieldErr(file, "name", "no shipped example %q", f.Name)
	}
	if want := certificates.KindRange + "/" + f.Name + ".json"; file != want {
		return 0, certificates.FieldErr(file, "name", "the certificate of %s must be stored as %s", f.Name, want)
	}
	g, p, err := hashedInlineGraph(file, f.GraphHash, f.Graph, f.Payload)
	if err != nil {
		return 0, err
	}
	eg, ep, ex0, err := certificates.LoadExample(*ex)
	if err != nil {
		return 0, certificates.FieldErr(file, "name", "embedded example: %v", err)
	}
	if !eg.Equal(g) {
		return 0, certificates.FieldErr(file, "graph", "differs from the shipped example %s", f.Name)
	}
	if !ep.Equal(p) {
		return 0, certificates.FieldErr(file, "payload", "differs from the shipped example %s", f.Name)
	}
	x, err := f.Centre.Decode(file, "centre")
	if err != nil {
		return 0, err
	}
	if err := sameTensors(file, "centre", []spec.Tensor[spec.Rat]{x}, []spec.Tensor[spec.Rat]{ex0}); err != nil {
		return 0, err
	}
	if f.SampleSeed != certificates.SampleSeed(m.Seed, f.Name) {
		return 0, seedErr(certificates.FieldErr(file, "sample_seed", "%d, the manifest's seed gives %d", f.SampleSeed, certificates.SampleSeed(m.Seed, f.Name)))
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
func rederiveRange(file string, f *certificates.RangeFile, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat]) (int, error) {
	if err := cmpRat(file, "radius", f.Radius, certificates.RangeRadius); err != nil {
		return 0, err
	}
	if err := cmpStr(file, "profile", f.Profile, certificates.RangeProfile); err != nil {
		return 0, err
	}
	box, err := certificates.RangeBox(x)
	if err != nil {
		return 0, certificates.FieldErr(file, "box", "%v", err)
	}
	cert := &ranges.Certificate{Graph: g, Payload: p, Profile: f.Profile}
	if cert.Box, err = checkRangeBox(file, f, box); err != nil {
		return 0, err
	}
	n, err := rebuildRangeTrace(file, f, cert, box)
	if err != nil {
		return 0, err
	}
	if _, err := ranges.CheckWith(cert, ranges.Options{Seed: f.SampleSeed, Providers: backend.DefaultProviders(), Exact: true}); err != nil {
		field := "trace"
		var re *spec.NodeError
		if errors.As(err, &re) && re.Node >= 0 {
			field = fmt.Sprintf("trace[%d]", re.Node)
			if re.Elem >= 0 {
				field = fmt.Sprintf("trace[%d][%d]", re.Node, re.Elem)
			}
		}
		return 0, certificates.FieldErr(file, field, "ranges.Check: %v", err)
	}
	if err := rangeContainsExact(file, cert, x); err != nil {
		return 0, err
	}
	return n, nil
}

// checkRangeBox decodes the recorded box and requires the binary32
// enclosure of [centre − radius, centre + radius], element by element.
func checkRangeBox(file string, f *certificates.RangeFile, box ranges.Interval32Tensor) ([]ranges.Bits32, error) {
	if len(f.Box) != len(box.Data) {
		return nil, certificates.FieldErr(file, "box", "%d enclosures for %d input elements", len(f.Box), len(box.Data))
	}
	out := make([]ranges.Bits32, len(f.Box))
	for i, e := range f.Box {
		field := fmt.Sprintf("box[%d]", i)
		b, err := decodeEnclosure32(e, file, field)
		if err != nil {
			return nil, err
		}
		if want := box.Data[i].Bits(); b != want {
			return nil, certificates.FieldErr(file, field, "recorded %s, [centre − radius, centre + radius] gives %s", b, want)
		}
		out[i] = b
	}
	return out, nil
}

// rebuildRangeTrace re-plans the graph under the range profile and
// rebuilds its trace over box, naming the first recorded capsule, rule
// or enclosure that differs; it fills cert's capsules, rules and trace
// and returns the number of nodes.
func rebuildRangeTrace(file string, f *certificates.RangeFile, cert *ranges.Certificate, box ranges.Interval32Tensor) (int, error) {
	prof, err := backend.ProfileNamed(certificates.RangeProfile)
	if err != nil {
		return 0, certificates.FieldErr(file, "profile", "%v", err)
	}
	plan, err := ranges.PlanKernels(cert.Graph, prof)
	if err != nil {
		return 0, certificates.FieldErr(file, "capsules", "re-planning failed: %v", err)
	}
	nodes, err := ranges.TraceNodes(cert.Graph, cert.Payload, box, plan)
	if err != nil {
		return 0, certificates.FieldErr(file, "trace", "rebuilding the trace failed: %v", err)
	}
	if len(f.Capsules) != len(nodes) || len(f.Rules) != len(nodes) || len(f.Trace) != len(nodes) {
		return 0, certificates.FieldErr(file, "trace", "%d capsule lists, %d rules and %d node traces for %d nodes", len(f.Capsules), len(f.Rules), len(f.Trace), len(nodes))
	}
	cert.Capsules, cert.Rules, cert.Trace = make([][]string, len(nodes)), make([]string, len(nodes)), make([][]ranges.Bits32, len(nodes))
	for i := range nodes {
		if err := checkRangeNode(file, f, cert, i, &nodes[i]); err != nil {
			return 0, err
		}
	}
	return len(nodes), nil
}

// checkRangeNode compares node i's recorded capsules, rule and
// enclosures with the rebuilt ones and copies them into cert.
func checkRangeNode(file string, f *certificates.RangeFile, cert *ranges.Certificate, i int, nt *ranges.NodeTrace) error {
	field := fmt.Sprintf("capsules[%d]", i)
	if len(f.Capsules[i]) != len(nt.Kernels) {
		return certificates.FieldErr(file, field, "%d capsules, the re-plan selects %d", len(f.Capsules[i]), len(nt.Kernels))
	}
	for k, name := range f.Capsules[i] {
		if err := certificates.CheckName(file, fmt.Sprintf("%s[%d]", field, k), name); err != nil {
			return err
		}
		if err := cmpStr(file, fmt.Sprintf("%s[%d]", field, k), name, nt.Kernels[k].Capsule.Name); err != nil {
			return err
		}
	}
	cert.Capsules[i] = f.Capsules[i]
	if err := certificates.CheckName(file, fmt.Sprintf("rules[%d]", i), f.Rules[i]); err != nil {
		return err
	}
	if err := cmpStr(file, fmt.Sprintf("rules[%d]", i), f.Rules[i], nt.Rule); err != nil {
		return err
	}
	cert.Rules[i] = f.Rules[i]
	if len(f.Trace[i]) != len(nt.Enclosures) {
		return certificates.FieldErr(file, fmt.Sprintf("trace[%d]", i), "%d enclosures, node %d has %d elements", len(f.Trace[i]), i, len(nt.Enclosures))
	}
	cert.Trace[i] = make([]ranges.Bits32, len(nt.Enclosures))
	for j, e := range f.Trace[i] {
		field := fmt.Sprintf("trace[%d][%d]", i, j)
		b, err := decodeEnclosure32(e, file, field)
		if err != nil {
			return err
		}
		want := nt.Enclosures[j].Bits()
		if b.Lo != want.Lo {
			return certificates.FieldErr(file, field+".lo", "recorded 0x%08x, rebuilt 0x%08x", b.Lo, want.Lo)
		}
		if b.Hi != want.Hi {
			return certificates.FieldErr(file, field+".hi", "recorded 0x%08x, rebuilt 0x%08x", b.Hi, want.Hi)
		}
		cert.Trace[i][j] = b
	}
	return nil
}

// rangeContainsExact is the verifier's own exact containment check: at
// the centre x and the box's extreme corners, every node's exact value
// (or, without one, its Interval enclosure) lies in the recorded trace.
func rangeContainsExact(file string, cert *ranges.Certificate, x spec.Tensor[spec.Rat]) error {
	lo := spec.Tensor[spec.Rat]{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	hi := spec.Tensor[spec.Rat]{Shape: x.Shape.Clone(), Data: make([]spec.Rat, len(x.Data))}
	for i, b := range cert.Box {
		l, okL := binary32Value(b.Lo)
		h, okH := binary32Value(b.Hi)
		if !okL || !okH {
			return certificates.FieldErr(file, fmt.Sprintf("box[%d]", i), "non-finite endpoint")
		}
		lo.Data[i], hi.Data[i] = spec.RatFromBig(l), spec.RatFromBig(h)
	}
	for _, pt := range []struct {
		name string
		x    spec.Tensor[spec.Rat]
	}{{"centre", x}, {"all-low corner", lo}, {"all-high corner", hi}} {
		if err := rangeContainsAt(file, cert, pt.name, pt.x); err != nil {
			return err
		}
	}
	return nil
}

// rangeContainsAt checks the exact values of every node at the point x
// (named name) against the enclosures of the trace.
func rangeContainsAt(file string, cert *ranges.Certificate, name string, x spec.Tensor[spec.Rat]) error {
	g, p := cert.Graph, cert.Payload
	var vals []spec.Tensor[spec.Rat]
	var err error
	if exactGraph(g) {
		vals, err = irsem.DenoteAll(g, p, x)
	}
	var de *spec.DomainError
	if !exactGraph(g) || errors.As(err, &de) && de.Scalar == "rat" && strings.HasPrefix(de.Reason, "no exact rational") {
		// No exact rational value (tanh, exp, a batch norm's
		// irrational sqrt, …): the exact real value is enclosed by the
		// Interval evaluation at the point, and that enclosure must lie
		// inside the recorded one — which proves the claim; anything
		// else refuses it.
		return intervalContained(file, g, p, name, x, cert.Trace)
	}
	if err != nil {
		return certificates.FieldErr(file, "graph", "exact evaluation at the %s: %v", name, err)
	}
	for i, v := range vals {
		for j, r := range v.Data {
			if j >= len(cert.Trace[i]) {
				return certificates.FieldErr(file, fmt.Sprintf("trace[%d]", i), "node %d has %d values, %d enclosures", i, len(v.Data), len(cert.Trace[i]))
			}
			b := cert.Trace[i][j]
			l, okL := binary32Value(b.Lo)
			h, okH := binary32Value(b.Hi)
			if !okL || !okH || r.Big().Cmp(l) < 0 || r.Big().Cmp(h) > 0 {
				return certificates.FieldErr(file, fmt.Sprintf("trace[%d][%d]", i, j), "the exact value %s at the %s lies outside [%g, %g]",
					certificates.Truncate(r.String()), name, math.Float32frombits(b.Lo), math.Float32frombits(b.Hi))
			}
		}
	}
	return nil
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
		return certificates.FieldErr(file, "graph", "interval evaluation at the %s: %v", name, err)
	}
	for i, v := range vals {
		for j, iv := range v.Data {
			if i >= len(trace) || j >= len(trace[i]) {
				return certificates.FieldErr(file, fmt.Sprintf("trace[%d]", i), "node %d has %d values, fewer enclosures", i, len(v.Data))
			}
			b := trace[i][j]
			l, h := float64(math.Float32frombits(b.Lo)), float64(math.Float32frombits(b.Hi))
			if !(iv.Lo >= l && iv.Hi <= h) {
				return certificates.FieldErr(file, fmt.Sprintf("trace[%d][%d]", i, j), "the exact value at the %s, enclosed by %s, is not shown inside [%g, %g]", name, iv, l, h)
			}
		}
	}
	return nil
}
