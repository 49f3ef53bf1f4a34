package ranges

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

func TestTraceQuad(t *testing.T) {
	g := loadGraph(t, "../examples/quad.ir.json")
	box := mustBox(t, spec.Shape{2}, []float32{-1, 0.5}, []float32{2, 0.5})
	trace, err := Trace(g, nil, box, mustPlan(t, g, backend.CheckedCPU()))
	if err != nil {
		t.Fatal(err)
	}
	want := [][]Interval32{
		{{-1, 2}, {0.5, 0.5}},
		{{0, 4}, {0.25, 0.25}}, // x⊙x is a square: never below 0
		{{0, 4}, {0.25, 0.25}},
		{{0, 8}, {0.5, 0.5}},
		{{0.5, 8.5}},
	}
	if len(trace) != len(want) {
		t.Fatalf("trace has %d nodes", len(trace))
	}
	for i := range want {
		for j := range want[i] {
			if !trace[i][j].Same(want[i][j]) {
				t.Errorf("node %d element %d: %s, want %s", i, j, trace[i][j], want[i][j])
			}
		}
	}
}

func TestTraceMLPPointBoxIsTight(t *testing.T) {
	g := loadGraph(t, "../examples/mlp.ir.json")
	p := loadPayload(t, "../examples/mlp.payload.json")
	x := []float32{0.25, -0.75}
	box := mustBox(t, spec.Shape{2}, x, x)
	nodes, err := TraceNodes(g, p, box, mustPlan(t, g, backend.CheckedCPU()))
	if err != nil {
		t.Fatal(err)
	}
	wantRules := []string{RuleSource, "registry:linear", "registry:relu", "registry:linear"}
	for i, nt := range nodes {
		if nt.Rule != wantRules[i] {
			t.Errorf("node %d rule %s, want %s", i, nt.Rule, wantRules[i])
		}
	}
	if k := nodes[1].Kernels; len(k) != 1 || k[0].Op != "linear" || k[0].Capsule.Name != "reference.linear" || k[0].Capsule.Reduction != backend.ReductionFixedLeft {
		t.Errorf("node 1 kernels %+v", k)
	}
	if len(nodes[0].Kernels) != 0 {
		t.Errorf("the input has kernels %+v", nodes[0].Kernels)
	}
	in := spec.Tensor[spec.Binary32]{Shape: spec.Shape{2}, Data: []spec.Binary32{spec.Binary32FromFloat32(x[0]), spec.Binary32FromFloat32(x[1])}}
	vals, err := irsem.DenoteAll(g, p, in)
	if err != nil {
		t.Fatal(err)
	}
	out := nodes[3].Enclosures[0]
	v := vals[3].Data[0].Float32()
	if !out.Contains(v) {
		t.Fatalf("output %v outside %s", v, out)
	}
	// A point box leaves only rounding slack: a few ulps.
	ulps := 0
	for f := out.Lo; f < out.Hi && ulps < 1000; f = nextUp32(f) {
		ulps++
	}
	if ulps > 64 {
		t.Errorf("point-box output enclosure %s is %d ulps wide", out, ulps)
	}
}

func TestTraceFixedLeftRequired(t *testing.T) {
	quad := loadGraph(t, "../examples/quad.ir.json")
	mlp := loadGraph(t, "../examples/mlp.ir.json")
	mlpP := loadPayload(t, "../examples/mlp.payload.json")
	norm := mustGraph(t, normGraph)
	normP := mustPayload(t, normPayload)
	exact := mustGraph(t, exactGraph)
	exactP := mustPayload(t, exactPayload)
	box2 := mustBox(t, spec.Shape{2}, []float32{-1, -1}, []float32{1, 1})
	box23 := randomBox(spec.Shape{2, 3}, 5)
	cases := []struct {
		g    *irsem.Graph
		p    *irsem.Payload
		box  Interval32Tensor
		ops  []string
		want string
	}{
		{quad, nil, box2, []string{"sum"}, "node 4 (sum): range rule registry:sum requires a fixed-left capsule; selected fast_cpu.sum is implementation-defined"},
		{mlp, mlpP, box2, []string{"linear"}, "node 1 (linear): range rule registry:linear requires a fixed-left capsule; selected fast_cpu.linear is implementation-defined"},
		{norm, normP, box23, []string{"softmax"}, "node 1 (softmax): range rule softmaxUnit requires a fixed-left capsule; selected fast_cpu.softmax is implementation-defined"},
		{norm, normP, box23, []string{"layer_norm"}, "node 2 (layernorm): range rule layerNormLeft requires a fixed-left capsule; selected fast_cpu.layer_norm is implementation-defined"},
		{exact, exactP, box23, []string{"reduce_sum"}, "node 1 (reduce_sum): range rule registry:reduce_sum requires"},
		{exact, exactP, box23, []string{"reduce_mean"}, "node 2 (reduce_mean): range rule registry:reduce_mean requires"},
		{exact, exactP, box23, []string{"matmul"}, "node 6 (matmul): range rule registry:matmul requires"},
		{exact, exactP, box23, []string{"mse_loss"}, "node 14 (mse_loss): range rule mseLeft requires"},
	}
	for _, c := range cases {
		prof := implDefinedProfile(t, c.ops...)
		_, err := Trace(c.g, c.p, c.box, mustPlan(t, c.g, prof))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.ops, err, c.want)
		}
		// The same graph traces under checked_cpu, and elementwise ops
		// under a fast capsule do not matter.
		if _, err := Trace(c.g, c.p, c.box, mustPlan(t, c.g, backend.CheckedCPU())); err != nil {
			t.Errorf("checked_cpu: %v", err)
		}
	}
	if _, err := Trace(mlp, mlpP, box2, mustPlan(t, mlp, implDefinedProfile(t, "relu", "add"))); err != nil {
		t.Errorf("elementwise capsules need no reduction policy: %v", err)
	}
}

func TestTraceFailures(t *testing.T) {
	one := func(tag string) string {
		return `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"` + tag + `","parents":[0],"shape":[2]}]}`
	}
	cases := []struct {
		name   string
		graph  string
		p      string
		lo, hi []float32
		want   string
	}{
		{"inv through 0", one("inv"), "", []float32{1, -1}, []float32{2, 1},
			"node 1 (inv): element 1: range rule registry:inv: divisor [-1, 1] contains 0"},
		{"inv touching 0", one("inv"), "", []float32{0, 1}, []float32{1, 1},
			"node 1 (inv): element 0: range rule registry:inv: divisor [0, 1] contains 0"},
		{"exp overflow", one("exp"), "", []float32{0, 0}, []float32{1, 100},
			"node 1 (exp): element 1: range rule registry:exp: enclosure"},
		{"log of 0", one("log"), "", []float32{1, 0}, []float32{2, 3},
			"node 1 (log): element 1: range rule registry:log: on [0, 0]: log of [0, 0]: raw log requires x > 0"},
		{"add overflow", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"add","parents":[0,0],"shape":[2]}]}`, "", []float32{0, 0}, []float32{1, math.MaxFloat32},
			"node 1 (add): element 1: range rule registry:add: enclosure"},
		{"layernorm with eps 0 on a point", `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"layernorm","parents":[0],"shape":[2],"axis":0}]}`,
			`{"format":"tlcheck.payload.v1","entries":{"1":{"eps":"0"}}}`, []float32{1, 1}, []float32{1, 1},
			"node 1 (layernorm): range rule layerNormLeft: row 0: 1/sqrt(σ²+ε): divisor [0, 0] contains 0"},
	}
	for _, c := range cases {
		g := mustGraph(t, c.graph)
		p := mustPayload(t, c.p)
		box := mustBox(t, spec.Shape{2}, c.lo, c.hi)
		_, err := Trace(g, p, box, mustPlan(t, g, backend.CheckedCPU()))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant prefix %q", c.name, err, c.want)
		}
	}
}

func TestTraceBadArguments(t *testing.T) {
	quad := loadGraph(t, "../examples/quad.ir.json")
	mlp := loadGraph(t, "../examples/mlp.ir.json")
	plan := mustPlan(t, quad, backend.CheckedCPU())
	good := mustBox(t, spec.Shape{2}, []float32{0, 0}, []float32{1, 1})
	nan := float32(math.NaN())
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"nil graph", func() error { _, err := Trace(nil, nil, good, plan); return err }, "ranges: no graph"},
		{"nil plan", func() error { _, err := Trace(quad, nil, good, nil); return err }, "ranges: no kernel plan"},
		{"plan of another graph", func() error { _, err := Trace(quad, nil, good, mustPlan(t, mlp, backend.CheckedCPU())); return err }, "ranges: kernel plan has 4 entries for 5 nodes"},
		{"wrong box shape", func() error {
			_, err := Trace(quad, nil, mustBox(t, spec.Shape{3}, []float32{0, 0, 0}, []float32{1, 1, 1}), plan)
			return err
		}, "node 0 (input): range rule source: input box has shape [3] with 3 elements, expected [2]"},
		{"NaN box", func() error {
			_, err := Trace(quad, nil, Interval32Tensor{Shape: spec.Shape{2}, Data: []Interval32{{0, 1}, {nan, 1}}}, plan)
			return err
		}, "node 0 (input): element 1: range rule source: input box: interval [NaN, 1] has a non-finite endpoint"},
		{"crossed box", func() error {
			_, err := Trace(quad, nil, Interval32Tensor{Shape: spec.Shape{2}, Data: []Interval32{{1, 0}, {0, 1}}}, plan)
			return err
		}, "node 0 (input): element 0: range rule source: input box: interval [1, 0] has lo > hi"},
		{"missing payload", func() error {
			_, err := Trace(mlp, nil, good, mustPlan(t, mlp, backend.CheckedCPU()))
			return err
		}, "node 1 (linear): missing linear payload for node 1"},
	}
	for _, c := range cases {
		err := c.run()
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v\nwant %q", c.name, err, c.want)
		}
	}
	// A tampered plan entry is caught.
	bad := mustPlan(t, quad, backend.CheckedCPU())
	bad.Nodes[4].Kernels[0].Capsule, _ = backend.ReferenceCapsule("relu")
	if _, err := Trace(quad, nil, good, bad); err == nil || !strings.Contains(err.Error(), `node 4 (sum): kernel plan selects capsule "reference.relu" for op "sum"`) {
		t.Errorf("tampered plan: %v", err)
	}
	if _, err := PlanKernels(quad, nil); err == nil {
		t.Error("nil profile accepted")
	}
	bad = mustPlan(t, quad, backend.CheckedCPU())
	bad.Nodes[3].Kernels[0].Op = "sub"
	if _, err := Trace(quad, nil, good, bad); err == nil || err.Error() != "node 3 (add): kernel plan selects capsule \"reference.add\" for op \"sub\", which implements \"add\"" {
		t.Errorf("tampered kernel op: %v", err)
	}
	bad = mustPlan(t, quad, backend.CheckedCPU())
	bad.Nodes[3].Kernels = append(bad.Nodes[3].Kernels, bad.Nodes[3].Kernels[0])
	if _, err := Trace(quad, nil, good, bad); err == nil || err.Error() != "node 3 (add): kernel plan runs [add,add], the node needs [add]" {
		t.Errorf("extra kernel: %v", err)
	}
	// A profile whose catalog lacks relu rejects node 2 of the MLP.
	var caps []backend.Capsule
	for _, c := range backend.ReferenceCatalog().Capsules() {
		if c.Op != "relu" {
			caps = append(caps, c)
		}
	}
	cat, err := backend.NewCatalog(caps...)
	if err != nil {
		t.Fatal(err)
	}
	norelu := backend.CheckedCPU()
	norelu.Catalog = cat
	mlpP := loadPayload(t, "../examples/mlp.payload.json")
	if _, err := Trace(mlp, mlpP, good, mustPlan(t, mlp, norelu)); err == nil || !strings.HasPrefix(err.Error(), "node 2 (relu): the kernel plan rejects it: ") {
		t.Errorf("rejected node: %v", err)
	}
	if _, err := BoxFromFloat32(spec.Shape{2}, []float32{0}, []float32{1, 1}); err == nil {
		t.Error("short bounds accepted")
	}
	if _, err := BoxFromFloat32(spec.Shape{1}, []float32{float32(math.Inf(-1))}, []float32{1}); err == nil {
		t.Error("infinite bound accepted")
	}
}

// TestRulesTable checks the rule table against the IR and the backend:
// every tag has a rule or is one of the documented unsupported tags, and a
// rule needs a fixed-left capsule exactly when the backend says its
// primitive accumulates.
func TestRulesTable(t *testing.T) {
	unsupported := map[irsem.Op]bool{}
	for _, info := range irsem.Ops() {
		r, ok := RuleFor(info.Op)
		if ok == unsupported[info.Op] {
			t.Errorf("tag %s: has rule %v, documented unsupported %v", info.Op, ok, unsupported[info.Op])
		}
		if !ok {
			continue
		}
		if acc := info.Prim != "" && backend.Accumulates(info.Prim); acc != r.FixedLeft {
			t.Errorf("tag %s (rule %s): FixedLeft %v, backend.Accumulates(%q) %v", info.Op, r.Rule, r.FixedLeft, info.Prim, acc)
		}
		if r.Doc == "" {
			t.Errorf("tag %s: rule without doc", info.Op)
		}
	}
	if len(Rules()) != len(irsem.Ops())-len(unsupported) {
		t.Errorf("%d rules for %d tags", len(Rules()), len(irsem.Ops()))
	}
}

func TestTraceLimits(t *testing.T) {
	// Raise the decoder's limits (package limits) so that the trace's own
	// limits are the ones these graphs reach.
	defer limits.Set(limits.Limits{GraphElements: 1 << 24, Work: 1 << 40})()
	big := `{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[]},
  {"id":1,"kind":"broadcast_to","parents":[0],"shape":[2048,1024],"from_shape":[],"to_shape":[2048,1024]}]}`
	g := mustGraph(t, big)
	box := Interval32Tensor{Shape: spec.Shape{}, Data: []Interval32{{0, 1}}}
	_, err := Trace(g, nil, box, mustPlan(t, g, backend.CheckedCPU()))
	if err == nil || err.Error() != "node 1 (broadcast_to): the graph's values exceed 1048576 elements in all" {
		t.Errorf("elements: %v", err)
	}
	work := `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[]},
  {"id":1,"kind":"broadcast_to","parents":[0],"shape":[512,512],"from_shape":[],"to_shape":[512,512]},
  {"id":2,"kind":"matmul","parents":[1,1],"shape":[512,512]}]}`
	g = mustGraph(t, work)
	_, err = Trace(g, nil, box, mustPlan(t, g, backend.CheckedCPU()))
	if err == nil || err.Error() != "node 2 (matmul): the graph's products exceed 16777216 multiply-adds in all" {
		t.Errorf("work: %v", err)
	}
}

// TestTraceErrorPlacesTheRule: a rule that cannot enclose one element
// (log over [-1, 1] ∌ only positive values) is reported as the tree's
// node-located error at the node, its tag, the element and the rule,
// in NodeError's one-line layout.
func TestTraceErrorPlacesTheRule(t *testing.T) {
	g := &irsem.Graph{InputID: 0, OutputID: 1, Nodes: []irsem.Node{
		{ID: 0, Kind: irsem.Kind{Op: irsem.OpInput}, Parents: []int{}, Shape: spec.Shape{2}},
		{ID: 1, Kind: irsem.Kind{Op: irsem.OpLog}, Parents: []int{0}, Shape: spec.Shape{2}},
	}}
	box := mustBox(t, spec.Shape{2}, []float32{1, -1}, []float32{2, 1})
	_, err := Trace(g, nil, box, mustPlan(t, g, backend.CheckedCPU()))
	var e *spec.NodeError
	if !errors.As(err, &e) {
		t.Fatalf("err %v, want a *spec.NodeError", err)
	}
	if e.Node != 1 || e.Op != "log" || e.Elem != 1 || e.Rule == "" || e.Msg != "range rule "+e.Rule {
		t.Fatalf("error %#v", e)
	}
	if want := "node 1 (log): element 1: range rule " + e.Rule + ": "; !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("text %q, want prefix %q", err, want)
	}
}
