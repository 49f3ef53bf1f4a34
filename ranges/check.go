package ranges

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// Certificate is a range certificate: the claim that, for every input in
// Box, every node of Graph (with Payload, executed by the kernels Profile
// selects) takes values within the claimed enclosures Trace — both its
// exact real value and its binary32 value. Everything a checker needs is
// in it; nothing in it is trusted (Check recomputes all of it).
type Certificate struct {
	// Graph and Payload are the computation.
	Graph   *irsem.Graph
	Payload *irsem.Payload
	// Box holds one enclosure per input element (row-major, the input
	// node's shape) as binary32 bit patterns.
	Box []Bits32
	// Profile names the backend profile whose kernel plan the trace
	// relies on (resolved by backend.ProfileNamed unless the checker is
	// given another resolver).
	Profile string
	// Capsules names, by node id, the capsules the kernel plan selects for
	// the node's kernels, in kernel order (none for a source).
	Capsules [][]string
	// Rules names each node's range rule, by id.
	Rules []string
	// Trace holds each node's enclosures as bit patterns, by id and flat
	// element index.
	Trace [][]Bits32
}

// Produce traces g over box under profile prof and returns the
// certificate that Check accepts.
func Produce(g *irsem.Graph, p *irsem.Payload, box Interval32Tensor, prof *backend.Profile) (*Certificate, error) {
	plan, err := PlanKernels(g, prof)
	if err != nil {
		return nil, err
	}
	nodes, err := TraceNodes(g, p, box, plan)
	if err != nil {
		return nil, err
	}
	c := &Certificate{Graph: g, Payload: p, Profile: prof.Name, Capsules: make([][]string, len(nodes)),
		Box: make([]Bits32, len(box.Data)), Rules: make([]string, len(nodes)), Trace: make([][]Bits32, len(nodes))}
	for i, x := range box.Data {
		c.Box[i] = x.Bits()
	}
	for i, nt := range nodes {
		c.Rules[i] = nt.Rule
		c.Capsules[i] = capsuleNames(&plan.Nodes[i])
		c.Trace[i] = make([]Bits32, len(nt.Enclosures))
		for j, e := range nt.Enclosures {
			c.Trace[i][j] = e.Bits()
		}
	}
	return c, nil
}

// Defaults of Options.
const (
	// DefaultSamples is the number of pseudo-random points replayed.
	DefaultSamples = 16
	// DefaultMaxCorners bounds the box corners replayed: all 2^d corners
	// when 2^d ≤ DefaultMaxCorners, else only the all-low and all-high
	// corners.
	DefaultMaxCorners = 64
)

// Options tune CheckWith. The zero value is Check's behaviour.
type Options struct {
	// Profiles resolves the certificate's profile name; nil means
	// backend.ProfileNamed (the maintained profiles).
	Profiles func(name string) (*backend.Profile, error)
	// Samples is the number of pseudo-random points replayed: 0 means
	// DefaultSamples, a negative value none.
	Samples int
	// Seed keys the pseudo-random points (spec.UniformBits).
	Seed uint64
	// MaxCorners bounds the corners replayed (0: DefaultMaxCorners).
	MaxCorners int
	// Providers, when set, also binds the re-planned kernels to these
	// providers (backend.Bind; an unbound capsule is an error) and runs
	// the bound plan at every sample point (BoundPlan.Execute, float32),
	// checking that every value the selected kernels compute lies in its
	// enclosure too.
	Providers *backend.Providers
	// Exact also replays each point over exact rationals (spec.Rat) when
	// every tag of the graph has exact semantics, and checks the exact
	// values against the enclosures; a point whose exact evaluation fails
	// (the square root of a non-square) is skipped.
	Exact bool
}

// Report summarises an accepted certificate.
type Report struct {
	// Profile is the profile re-planned against.
	Profile string
	// Nodes and Elements count the enclosures compared bit for bit.
	Nodes, Elements int
	// FixedLeft lists the nodes whose rule relied on a fixed-left capsule,
	// as "node N (tag): CAPSULE".
	FixedLeft []string
	// Points is the number of input points replayed in binary32,
	// ExactPoints the number also replayed over exact rationals, and
	// KernelPoints the number also run through the bound kernel plan.
	Points, ExactPoints, KernelPoints int
}

// Check verifies a range certificate with the default Options; see
// CheckWith.
func Check(c *Certificate) (*Report, error) { return CheckWith(c, Options{}) }

// CheckWith verifies a range certificate without trusting its producer:
//
//  1. it checks the graph, the payload and the box (valid enclosures of
//     the input node's shape);
//  2. it re-plans the kernels against the named profile and compares the
//     certificate's capsule names with the re-plan;
//  3. it rebuilds the trace independently (TraceNodes over the re-plan,
//     which fails where a reduction rule meets a capsule that is not
//     fixed-left) and compares rules and enclosures bit for bit — signed
//     zeros count — reporting the first mismatch by node, element, endpoint
//     and both bit patterns;
//  4. it replays the binary32 execution (irsem.DenoteAll over
//     spec.Binary32) at sample points of the box — its corners (all of
//     them when there are at most MaxCorners), its centre and Samples
//     pseudo-random points from Seed, each a binary32 point inside the
//     box — and confirms that every node's every value lies in its
//     enclosure (compared exactly; a NaN or an infinity fails);
//  5. with Options.Providers, it binds the plan and runs the selected
//     kernels at the same points, checking their float32 values the same
//     way.
//
// Every error names the place: the field, the node and element, the
// sample point.
func CheckWith(c *Certificate, o Options) (*Report, error) {
	if c == nil {
		return nil, unplaced("no certificate", nil)
	}
	g := c.Graph
	if g == nil {
		return nil, unplaced("certificate has no graph", nil)
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	if err := irsem.CheckPayload(g, c.Payload); err != nil {
		return nil, err
	}
	box, err := decodeBox(g, c.Box)
	if err != nil {
		return nil, err
	}
	resolve := o.Profiles
	if resolve == nil {
		resolve = backend.ProfileNamed
	}
	prof, err := resolve(c.Profile)
	if err != nil {
		return nil, unplaced(fmt.Sprintf("certificate profile %q", c.Profile), err)
	}
	if prof == nil {
		return nil, unplaced(fmt.Sprintf("certificate profile %q resolves to no profile", c.Profile), nil)
	}
	plan, err := PlanKernels(g, prof)
	if err != nil {
		return nil, err
	}
	if err := compareCapsules(g, c.Capsules, plan); err != nil {
		return nil, err
	}
	nodes, err := TraceNodes(g, c.Payload, box, plan)
	if err != nil {
		return nil, err
	}
	rules := make([]string, len(nodes))
	for i := range nodes {
		rules[i] = nodes[i].Rule
	}
	if err := compareNames(g, "range rule", c.Rules, rules, "rebuilt"); err != nil {
		return nil, err
	}
	rep := &Report{Profile: prof.Name, Nodes: len(nodes)}
	if err := compareTrace(g, c.Trace, nodes, rep); err != nil {
		return nil, err
	}
	for _, nt := range nodes {
		if r, _ := RuleFor(nt.Tag); r.FixedLeft {
			var names []string
			for _, k := range nt.Kernels {
				if backend.Accumulates(k.Op) {
					names = append(names, k.Capsule.Name)
				}
			}
			rep.FixedLeft = append(rep.FixedLeft, fmt.Sprintf("node %d (%s): %s", nt.ID, nt.Tag, strings.Join(names, ", ")))
		}
	}
	var bound *backend.BoundPlan
	if o.Providers != nil {
		if bound, err = backend.Bind(plan, o.Providers); err != nil {
			return nil, unplaced("binding the kernel plan", err)
		}
	}
	if err := replay(g, c.Payload, box, nodes, o, rep); err != nil {
		return nil, err
	}
	if bound != nil {
		if err := replayKernels(g, c.Payload, box, nodes, bound, o, rep); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// decodeBox turns the certificate's box into enclosures of the input
// node's shape.
func decodeBox(g *irsem.Graph, bits []Bits32) (Interval32Tensor, error) {
	in := &g.Nodes[g.InputID]
	s := shapeOrScalar(in.Shape)
	if len(bits) != s.Size() {
		return Interval32Tensor{}, &spec.NodeError{Node: in.ID, Op: string(in.Kind.Op), Elem: -1,
			Msg: fmt.Sprintf("certificate box has %d elements; the input has shape %v (%d elements)", len(bits), s, s.Size())}
	}
	box := Interval32Tensor{Shape: s.Clone(), Data: make([]Interval32, len(bits))}
	for i, b := range bits {
		x, err := b.Interval()
		if err != nil {
			return Interval32Tensor{}, &spec.NodeError{Node: in.ID, Op: string(in.Kind.Op), Elem: i, Msg: "certificate box " + b.String(), Err: err}
		}
		box.Data[i] = x
	}
	return box, nil
}

// compareNames compares a certificate's per-node names with the rebuilt
// ones.
func compareNames(g *irsem.Graph, what string, claimed, rebuilt []string, how string) error {
	if len(claimed) != len(rebuilt) {
		return unplaced(fmt.Sprintf("certificate lists %d %s names for %d nodes", len(claimed), what, len(rebuilt)), nil)
	}
	for i := range claimed {
		if claimed[i] != rebuilt[i] {
			return &spec.NodeError{Node: i, Op: string(g.Nodes[i].Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("certificate names %s %q; %s: %q", what, claimed[i], how, rebuilt[i])}
		}
	}
	return nil
}

// compareCapsules compares the certificate's capsule names with the
// re-plan's, node by node.
func compareCapsules(g *irsem.Graph, claimed [][]string, plan *backend.GraphKernelPlan) error {
	if len(claimed) != len(plan.Nodes) {
		return unplaced(fmt.Sprintf("certificate lists capsules for %d nodes, the graph has %d", len(claimed), len(plan.Nodes)), nil)
	}
	for i := range plan.Nodes {
		want := capsuleNames(&plan.Nodes[i])
		if strings.Join(claimed[i], ",") != strings.Join(want, ",") || len(claimed[i]) != len(want) {
			return &spec.NodeError{Node: i, Op: string(g.Nodes[i].Kind.Op), Elem: -1,
				Msg: fmt.Sprintf("certificate names capsules [%s]; re-planned under profile %s: [%s]", strings.Join(claimed[i], " "), plan.Profile, strings.Join(want, " "))}
		}
	}
	return nil
}

// compareTrace compares the claimed trace with the rebuilt one bit for bit.
func compareTrace(g *irsem.Graph, claimed [][]Bits32, nodes []NodeTrace, rep *Report) error {
	if len(claimed) != len(nodes) {
		return unplaced(fmt.Sprintf("certificate trace has %d nodes, the graph %d", len(claimed), len(nodes)), nil)
	}
	for i, nt := range nodes {
		tag := g.Nodes[i].Kind.Op
		if len(claimed[i]) != len(nt.Enclosures) {
			return &spec.NodeError{Node: i, Op: string(tag), Elem: -1,
				Msg: fmt.Sprintf("certificate trace has %d enclosures, the node %d elements", len(claimed[i]), len(nt.Enclosures))}
		}
		for j, e := range nt.Enclosures {
			want, got := e.Bits(), claimed[i][j]
			if got.Lo != want.Lo {
				return &spec.NodeError{Node: i, Op: string(tag), Elem: j, Msg: fmt.Sprintf("lo claimed 0x%08x, rebuilt 0x%08x", got.Lo, want.Lo)}
			}
			if got.Hi != want.Hi {
				return &spec.NodeError{Node: i, Op: string(tag), Elem: j, Msg: fmt.Sprintf("hi claimed 0x%08x, rebuilt 0x%08x", got.Hi, want.Hi)}
			}
		}
		rep.Elements += len(nt.Enclosures)
	}
	return nil
}

// samplePoint is one input point of the replay and how it was chosen.
type samplePoint struct {
	what string // "corner 3", "centre", "random 5"
	x    []float32
}

// SamplePoints returns the input points the checker replays for box: its
// corners (all 2^d of them when 2^d ≤ maxCorners, else the all-low and
// all-high corners; maxCorners 0 means DefaultMaxCorners), its centre, and
// n pseudo-random points keyed by seed. Each point is a binary32 vector
// inside the box. The points are deterministic.
func SamplePoints(box Interval32Tensor, n int, seed uint64, maxCorners int) [][]float32 {
	ps := samplePoints(box, n, seed, maxCorners)
	out := make([][]float32, len(ps))
	for i := range ps {
		out[i] = ps[i].x
	}
	return out
}

func samplePoints(box Interval32Tensor, n int, seed uint64, maxCorners int) []samplePoint {
	if maxCorners <= 0 {
		maxCorners = DefaultMaxCorners
	}
	d := len(box.Data)
	var ps []samplePoint
	corner := func(k uint64, all bool) {
		x := make([]float32, d)
		for i, b := range box.Data {
			x[i] = b.Lo
			if (all && k == 1) || (!all && i < 64 && k>>uint(i)&1 == 1) {
				x[i] = b.Hi
			}
		}
		ps = append(ps, samplePoint{what: fmt.Sprintf("corner %d", len(ps)), x: x})
	}
	if d < 63 && uint64(1)<<uint(d) <= uint64(maxCorners) {
		for k := uint64(0); k < uint64(1)<<uint(d); k++ {
			corner(k, false)
		}
	} else {
		corner(0, true)
		corner(1, true)
	}
	mid := make([]float32, d)
	for i, b := range box.Data {
		mid[i] = clamp32(float32(float64(b.Lo)/2+float64(b.Hi)/2), b)
	}
	ps = append(ps, samplePoint{what: "centre", x: mid})
	for k := 0; k < n; k++ {
		x := make([]float32, d)
		for i, b := range box.Data {
			u := float64(spec.UniformBits(seed, k*d+i)) / (1 << 32)
			v := float64(b.Lo) + u*(float64(b.Hi)-float64(b.Lo))
			x[i] = clamp32(float32(v), b)
		}
		ps = append(ps, samplePoint{what: fmt.Sprintf("random %d", k), x: x})
	}
	return ps
}

func clamp32(v float32, b Interval32) float32 {
	if !(v >= b.Lo) {
		return b.Lo
	}
	if v > b.Hi {
		return b.Hi
	}
	return v
}

// replayKernels runs the bound plan at the sample points and checks every
// value against its enclosure.
func replayKernels(g *irsem.Graph, p *irsem.Payload, box Interval32Tensor, nodes []NodeTrace, bound *backend.BoundPlan, o Options, rep *Report) error {
	for _, sp := range samplePoints(box, sampleCount(o), o.Seed, o.MaxCorners) {
		in := spec.Tensor[spec.F32]{Shape: box.Shape.Clone(), Data: make([]spec.F32, len(sp.x))}
		for i, f := range sp.x {
			in.Data[i] = spec.F32(f)
		}
		vals, err := bound.Execute(g, p, in)
		if err != nil {
			return unplaced(fmt.Sprintf("sample %s: kernel plan execution failed", sp.what), err)
		}
		for i, nt := range nodes {
			if len(vals[i].Data) != len(nt.Enclosures) {
				return &spec.NodeError{Node: i, Op: string(nt.Tag), Elem: -1,
					Msg: fmt.Sprintf("sample %s: kernel value has %d elements, the trace %d", sp.what, len(vals[i].Data), len(nt.Enclosures))}
			}
			for j, v := range vals[i].Data {
				if e := nt.Enclosures[j]; !e.Contains(float32(v)) {
					return &spec.NodeError{Node: i, Op: string(nt.Tag), Elem: j,
						Msg: fmt.Sprintf("sample %s: kernel value %s (0x%08x) of %s outside enclosure %s %s",
							sp.what, v, math.Float32bits(float32(v)), strings.Join(kernelNames(nt.Kernels), ", "), e, e.Bits())}
				}
			}
		}
		rep.KernelPoints++
	}
	return nil
}

func kernelNames(ks []backend.PlannedKernel) []string {
	out := make([]string, len(ks))
	for i, k := range ks {
		out[i] = k.Capsule.Name
	}
	if len(out) == 0 {
		return []string{"the source"}
	}
	return out
}

// sampleCount is the number of pseudo-random points Options asks for.
func sampleCount(o Options) int {
	if o.Samples == 0 {
		return DefaultSamples
	}
	return max(o.Samples, 0)
}

// replay evaluates the graph in binary32 (and, when asked and possible,
// exactly) at the sample points and checks every value against its
// enclosure.
func replay(g *irsem.Graph, p *irsem.Payload, box Interval32Tensor, nodes []NodeTrace, o Options, rep *Report) error {
	n := sampleCount(o)
	exact := o.Exact
	for i := range g.Nodes {
		if info, ok := irsem.LookupTag(g.Nodes[i].Kind.Op); !ok || !info.Exact {
			exact = false
		}
	}
	for _, sp := range samplePoints(box, n, o.Seed, o.MaxCorners) {
		in := spec.Tensor[spec.Binary32]{Shape: box.Shape.Clone(), Data: make([]spec.Binary32, len(sp.x))}
		for i, f := range sp.x {
			in.Data[i] = spec.Binary32FromFloat32(f)
		}
		vals, err := irsem.DenoteAll(g, p, in)
		if err != nil {
			return unplaced(fmt.Sprintf("sample %s: binary32 replay failed", sp.what), err)
		}
		for i, nt := range nodes {
			if len(vals[i].Data) != len(nt.Enclosures) {
				return &spec.NodeError{Node: i, Op: string(nt.Tag), Elem: -1,
					Msg: fmt.Sprintf("sample %s: binary32 value has %d elements, the trace %d", sp.what, len(vals[i].Data), len(nt.Enclosures))}
			}
			for j, v := range vals[i].Data {
				e := nt.Enclosures[j]
				if f := v.Float32(); !e.Contains(f) {
					return &spec.NodeError{Node: i, Op: string(nt.Tag), Elem: j,
						Msg: fmt.Sprintf("sample %s: binary32 value %s (0x%08x) outside enclosure %s %s", sp.what, v, v.Bits(), e, e.Bits())}
				}
			}
		}
		rep.Points++
		if !exact {
			continue
		}
		rin := spec.Tensor[spec.Rat]{Shape: box.Shape.Clone(), Data: make([]spec.Rat, len(sp.x))}
		for i, f := range sp.x {
			r, err := spec.RatFromFloat64(float64(f))
			if err != nil {
				return unplaced(fmt.Sprintf("sample %s element %d", sp.what, i), err)
			}
			rin.Data[i] = r
		}
		rvals, err := irsem.DenoteAll(g, p, rin)
		if err != nil {
			continue // e.g. the square root of a non-square: no exact value here
		}
		for i, nt := range nodes {
			for j, v := range rvals[i].Data {
				if j >= len(nt.Enclosures) || !nt.Enclosures[j].ContainsRat(v.Big()) {
					return &spec.NodeError{Node: i, Op: string(nt.Tag), Elem: j,
						Msg: fmt.Sprintf("sample %s: exact value %s outside enclosure", sp.what, ratShort(v.Big()))}
				}
			}
		}
		rep.ExactPoints++
	}
	return nil
}

// ratShort prints a rational, abbreviated when it is long.
func ratShort(r *big.Rat) string {
	s := r.RatString()
	if len(s) > 60 {
		f, _ := r.Float64()
		return fmt.Sprintf("≈%g", f)
	}
	return s
}
