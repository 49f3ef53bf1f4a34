package ranges

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func produce(t testing.TB, tg testGraph, box Interval32Tensor) *Certificate {
	t.Helper()
	c, err := Produce(tg.g, tg.p, box, backend.CheckedCPU())
	if err != nil {
		t.Fatalf("%s: %v", tg.name, err)
	}
	return c
}

func mlpGraph(t testing.TB) testGraph {
	return testGraphs(t)[1]
}

// clone deep-copies the certificate's mutable slices.
func clone(c *Certificate) *Certificate {
	d := *c
	d.Box = append([]Bits32(nil), c.Box...)
	d.Capsules = make([][]string, len(c.Capsules))
	for i := range c.Capsules {
		d.Capsules[i] = append([]string(nil), c.Capsules[i]...)
	}
	d.Rules = append([]string(nil), c.Rules...)
	d.Trace = make([][]Bits32, len(c.Trace))
	for i := range c.Trace {
		d.Trace[i] = append([]Bits32(nil), c.Trace[i]...)
	}
	return &d
}

func TestCheckAcceptsProducedCertificates(t *testing.T) {
	for _, tg := range testGraphs(t) {
		box := randomBox(tg.inShape, 99)
		c := produce(t, tg, box)
		rep, err := CheckWith(c, Options{Exact: true, Seed: 3})
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		corners := 1 << len(box.Data)
		if corners > DefaultMaxCorners {
			corners = 2
		}
		if rep.Points != corners+1+DefaultSamples || rep.Nodes != len(tg.g.Nodes) || rep.Profile != backend.ProfileCheckedCPU {
			t.Errorf("%s: report %+v", tg.name, rep)
		}
		if exactTags(tg.g) && rep.ExactPoints == 0 {
			t.Errorf("%s: no exact replay", tg.name)
		}
		if !exactTags(tg.g) && rep.ExactPoints != 0 {
			t.Errorf("%s: exact replay of a graph with inexact tags", tg.name)
		}
	}
	tg := mlpGraph(t)
	rep, err := Check(produce(t, tg, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1})))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"node 1 (linear): reference.linear", "node 3 (linear): reference.linear"}
	if fmt.Sprint(rep.FixedLeft) != fmt.Sprint(want) || rep.Elements != 2+8+8+1 {
		t.Errorf("report %+v", rep)
	}
}

// TestCheckRejectsEveryFlippedBit flips, one at a time, every bit of every
// endpoint of the MLP certificate's trace: each is rejected, naming the
// node, the element, the endpoint and both bit patterns.
func TestCheckRejectsEveryFlippedBit(t *testing.T) {
	tg := mlpGraph(t)
	c := produce(t, tg, mustBox(t, spec.Shape{2}, []float32{-0.5, 0.25}, []float32{1, 0.75}))
	flips := 0
	for id := range c.Trace {
		for j := range c.Trace[id] {
			for _, hi := range []bool{false, true} {
				for bit := 0; bit < 32; bit++ {
					d := clone(c)
					orig := d.Trace[id][j]
					e := &d.Trace[id][j]
					end, was, now := "lo", orig.Lo, orig.Lo^1<<bit
					if hi {
						end, was, now = "hi", orig.Hi, orig.Hi^1<<bit
						e.Hi = now
					} else {
						e.Lo = now
					}
					_, err := CheckWith(d, Options{Samples: -1})
					want := fmt.Sprintf("node %d (%s): element %d: %s claimed 0x%08x, rebuilt 0x%08x", id, tg.g.Nodes[id].Kind.Op, j, end, now, was)
					if err == nil || err.Error() != want {
						t.Fatalf("flip bit %d: got %v\nwant %s", bit, err, want)
					}
					var re *spec.NodeError
					if !errors.As(err, &re) || re.Node != id || re.Elem != j {
						t.Fatalf("flip bit %d: error %#v", bit, err)
					}
					flips++
				}
			}
		}
	}
	if flips != 19*2*32 {
		t.Errorf("%d flips", flips)
	}
}

func TestCheckSignedZeroCounts(t *testing.T) {
	tg := mlpGraph(t)
	c := produce(t, tg, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}))
	// relu's lower endpoints are +0; −0 has the same value but not the
	// same bits.
	d := clone(c)
	if d.Trace[2][0].Lo != 0 {
		t.Fatalf("relu lo is %s", d.Trace[2][0])
	}
	d.Trace[2][0].Lo = 0x80000000
	_, err := Check(d)
	if err == nil || err.Error() != "node 2 (relu): element 0: lo claimed 0x80000000, rebuilt 0x00000000" {
		t.Errorf("−0 accepted or misreported: %v", err)
	}
}

func TestCheckRejectsTamperedCertificates(t *testing.T) {
	tg := mlpGraph(t)
	c := produce(t, tg, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}))
	if _, err := Check(c); err != nil {
		t.Fatal(err)
	}
	quad := loadGraph(t, "../examples/quad.ir.json")
	cases := []struct {
		name   string
		edit   func(d *Certificate)
		opts   Options
		prefix string
	}{
		{"nil graph", func(d *Certificate) { d.Graph = nil }, Options{}, "ranges: certificate has no graph"},
		{"other graph", func(d *Certificate) { d.Graph = quad }, Options{}, "node 1 (mul_elem): "},
		{"missing payload", func(d *Certificate) { d.Payload = nil }, Options{}, "node 1 (linear): missing linear payload for node 1"},
		{"box wider", func(d *Certificate) { d.Box[0].Hi = math.Float32bits(2) }, Options{}, "node 0 (input): element 0: hi claimed 0x3f800000, rebuilt 0x40000000"},
		{"box NaN", func(d *Certificate) { d.Box[1].Lo = 0x7fc00000 }, Options{}, "node 0 (input): element 1: certificate box [0x7fc00000, 0x3f800000]: interval [NaN, 1] has a non-finite endpoint"},
		{"box crossed", func(d *Certificate) { d.Box[1].Lo = math.Float32bits(3) }, Options{}, "node 0 (input): element 1: certificate box [0x40400000, 0x3f800000]: interval [3, 1] has lo > hi"},
		{"box short", func(d *Certificate) { d.Box = d.Box[:1] }, Options{}, "node 0 (input): certificate box has 1 elements; the input has shape [2] (2 elements)"},
		{"unknown profile", func(d *Certificate) { d.Profile = "fastest" }, Options{}, `ranges: certificate profile "fastest": `},
		{"nil profile", func(d *Certificate) {}, Options{Profiles: func(string) (*backend.Profile, error) { return nil, nil }}, `ranges: certificate profile "checked_cpu" resolves to no profile`},
		{"capsule renamed", func(d *Certificate) { d.Capsules[2] = []string{"fast_cpu.relu"} }, Options{}, `node 2 (relu): certificate names capsules [fast_cpu.relu]; re-planned under profile checked_cpu: [reference.relu]`},
		{"capsule added", func(d *Certificate) { d.Capsules[0] = []string{"reference.relu"} }, Options{}, `node 0 (input): certificate names capsules [reference.relu]; re-planned under profile checked_cpu: []`},
		{"capsules short", func(d *Certificate) { d.Capsules = d.Capsules[:3] }, Options{}, "ranges: certificate lists capsules for 3 nodes, the graph has 4"},
		{"rule renamed", func(d *Certificate) { d.Rules[3] = RuleSoftmaxUnit }, Options{}, `node 3 (linear): certificate names range rule "softmaxUnit"; rebuilt: "registry:linear"`},
		{"rules missing", func(d *Certificate) { d.Rules = nil }, Options{}, "ranges: certificate lists 0 range rule names for 4 nodes"},
		{"trace truncated", func(d *Certificate) { d.Trace = d.Trace[:3] }, Options{}, "ranges: certificate trace has 3 nodes, the graph 4"},
		{"node truncated", func(d *Certificate) { d.Trace[1] = d.Trace[1][:7] }, Options{}, "node 1 (linear): certificate trace has 7 enclosures, the node 8 elements"},
		{"payload edited", func(d *Certificate) {
			p := loadPayload(t, "../examples/mlp.payload.json")
			p.Entries[3].B.Data[0] = spec.NewRat(1, 4)
			d.Payload = p
		}, Options{}, "node 3 (linear): element 0: lo claimed"},
		// The same certificate checked against a profile whose linear
		// capsule is implementation-defined: the re-plan differs.
		{"profile now implementation-defined", func(d *Certificate) {}, Options{Profiles: func(string) (*backend.Profile, error) {
			return implDefinedProfile(t, "linear"), nil
		}}, `node 1 (linear): certificate names capsules [reference.linear]; re-planned under profile test_impl_defined: [fast_cpu.linear]`},
		// ... and even when the certificate names those capsules, the
		// rebuilt trace refuses the reduction.
		{"implementation-defined capsules named", func(d *Certificate) {
			d.Capsules[1], d.Capsules[3] = []string{"fast_cpu.linear"}, []string{"fast_cpu.linear"}
		}, Options{Profiles: func(string) (*backend.Profile, error) {
			return implDefinedProfile(t, "linear"), nil
		}}, "node 1 (linear): range rule registry:linear requires a fixed-left capsule; selected fast_cpu.linear is implementation-defined"},
	}
	for _, tc := range cases {
		d := clone(c)
		tc.edit(d)
		_, err := CheckWith(d, tc.opts)
		if err == nil || !strings.HasPrefix(err.Error(), tc.prefix) {
			t.Errorf("%s: got %v\nwant prefix %q", tc.name, err, tc.prefix)
		}
	}
	if _, err := Check(nil); err == nil {
		t.Error("nil certificate accepted")
	}
	if _, err := Check(&Certificate{}); err == nil {
		t.Error("empty certificate accepted")
	}
}

// TestReplayCatchesValuesOutsideTheTrace checks the replay step on its
// own: a trace narrowed below what binary32 computes is rejected, naming
// the sample, the node, the element and the value.
func TestReplayCatchesValuesOutsideTheTrace(t *testing.T) {
	tg := mlpGraph(t)
	box := mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1})
	nodes, err := TraceNodes(tg.g, tg.p, box, mustPlan(t, tg.g, backend.CheckedCPU()))
	if err != nil {
		t.Fatal(err)
	}
	// Node 3's enclosure shrunk to its lower endpoint.
	out := nodes[3].Enclosures[0]
	nodes[3].Enclosures = []Interval32{{out.Lo, out.Lo}}
	err = replay(tg.g, tg.p, box, nodes, Options{}, &Report{})
	if err == nil || !strings.HasPrefix(err.Error(), "node 3 (linear): element 0: sample corner 0: binary32 value ") ||
		!strings.Contains(err.Error(), "outside enclosure") {
		t.Errorf("got %v", err)
	}
	// A value that is NaN in binary32 is outside every enclosure: inv of
	// a box containing 0 cannot be traced, but replaying such a graph
	// against a hand-made trace must still fail rather than accept NaN or
	// an infinity.
	g := mustGraph(t, `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1]},
  {"id":1,"kind":"inv","parents":[0],"shape":[1]}]}`)
	zbox := mustBox(t, spec.Shape{1}, []float32{0}, []float32{0})
	fake := []NodeTrace{{ID: 0, Tag: irsem.OpInput, Enclosures: []Interval32{{0, 0}}},
		{ID: 1, Tag: irsem.OpInv, Enclosures: []Interval32{{-math.MaxFloat32, math.MaxFloat32}}}}
	err = replay(g, nil, zbox, fake, Options{}, &Report{})
	if err == nil || !strings.Contains(err.Error(), "binary32 value +Inf (0x7f800000) outside enclosure") {
		t.Errorf("infinite value: %v", err)
	}
}

func TestSamplePoints(t *testing.T) {
	box := mustBox(t, spec.Shape{3}, []float32{-1, 0, 5}, []float32{1, 0, 5.5})
	ps := SamplePoints(box, 10, 42, 0)
	if len(ps) != 8+1+10 {
		t.Fatalf("%d points", len(ps))
	}
	again := SamplePoints(box, 10, 42, 0)
	other := SamplePoints(box, 10, 43, 0)
	differs := false
	for k, p := range ps {
		for i, v := range p {
			if !box.Data[i].Contains(v) {
				t.Errorf("point %d element %d: %v outside %s", k, i, v, box.Data[i])
			}
			if math.Float32bits(v) != math.Float32bits(again[k][i]) {
				t.Errorf("point %d not deterministic", k)
			}
			if v != other[k][i] {
				differs = true
			}
		}
	}
	if !differs {
		t.Error("the seed does not change the random points")
	}
	if got := ps[8]; got[0] != 0 || got[1] != 0 || got[2] != 5.25 {
		t.Errorf("centre %v", got)
	}
	// Too many corners: only the two extreme ones.
	if n := len(SamplePoints(box, 0, 1, 4)); n != 2+1 {
		t.Errorf("%d points with maxCorners 4", n)
	}
	big := randomBox(spec.Shape{100}, 1)
	if n := len(SamplePoints(big, 5, 1, 0)); n != 2+1+5 {
		t.Errorf("%d points for 100 inputs", n)
	}
}

func TestCheckRunsBoundKernels(t *testing.T) {
	for _, tg := range testGraphs(t) {
		c := produce(t, tg, randomBox(tg.inShape, 5))
		rep, err := CheckWith(c, Options{Providers: backend.DefaultProviders(), Samples: 4})
		if err != nil {
			t.Fatalf("%s: %v", tg.name, err)
		}
		if rep.KernelPoints != rep.Points || rep.KernelPoints == 0 {
			t.Errorf("%s: report %+v", tg.name, rep)
		}
	}
	// A planted kernel fault: the reference provider's relu adds 1/4.
	reg := spec.New[spec.F32]()
	relu, err := reg.Lookup("relu")
	if err != nil {
		t.Fatal(err)
	}
	bad := *relu
	bad.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
		y, err := relu.Forward(a, xs)
		if err != nil {
			return y, err
		}
		y = y.Clone()
		y.Data = append([]spec.F32(nil), y.Data...)
		y.Data[3] += 0.25
		return y, nil
	}
	reg.Override(&bad)
	faulty, err := backend.NewProviders(backend.NewReferenceProvider(reg))
	if err != nil {
		t.Fatal(err)
	}
	tg := mlpGraph(t)
	c := produce(t, tg, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}))
	_, err = CheckWith(c, Options{Providers: faulty})
	if err == nil ||
		!strings.HasPrefix(err.Error(), "node 2 (relu): element 3: sample corner 0: kernel value ") ||
		!strings.Contains(err.Error(), "of reference.relu outside enclosure") {
		t.Errorf("planted relu fault: %v", err)
	}
	// Without providers the certificate is fine: it is about the
	// semantics the plan promises, and the faulty kernel is not run.
	if _, err := Check(c); err != nil {
		t.Error(err)
	}
	// An elementwise graph certified under checked_cuda: its capsules are
	// admissible, but no native-cuda provider is registered to bind them.
	g := mustGraph(t, `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"relu","parents":[0],"shape":[2]}]}`)
	cc, err := Produce(g, nil, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}), backend.CheckedCUDA())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Check(cc); err != nil {
		t.Errorf("checked_cuda relu: %v", err)
	}
	if _, err := CheckWith(cc, Options{Providers: backend.DefaultProviders()}); err == nil ||
		!strings.HasPrefix(err.Error(), "ranges: binding the kernel plan: ") {
		t.Errorf("unbound cuda plan: %v", err)
	}
	// ... and a reduction under checked_cuda is refused outright.
	if _, err := Produce(loadGraph(t, "../examples/quad.ir.json"), nil, mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1}), backend.CheckedCUDA()); err == nil ||
		err.Error() != "node 4 (sum): range rule registry:sum requires a fixed-left capsule; selected native-cuda.sum is implementation-defined" {
		t.Errorf("quad under checked_cuda: %v", err)
	}
}
