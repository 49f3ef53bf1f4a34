package backend_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// planCase is one graph to plan and execute.
type planCase struct {
	name    string
	graph   string // a torchlean.ir.v1 document, or "file:NAME" under examples/
	payload string // a tlcheck.payload.v1 document, "file:NAME", or ""
	input   string // a tensor document, or "file:NAME"
}

func planDoc(t *testing.T, s string) []byte {
	t.Helper()
	if name, ok := strings.CutPrefix(s, "file:"); ok {
		data, err := os.ReadFile(filepath.Join("..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	return []byte(s)
}

func (c planCase) load(t *testing.T) (*irsem.Graph, *irsem.Payload, spec.Tensor[spec.F32]) {
	t.Helper()
	g, err := irsem.DecodeGraph(planDoc(t, c.graph))
	if err != nil {
		t.Fatalf("%s: graph: %v", c.name, err)
	}
	var p *irsem.Payload
	if c.payload != "" {
		if p, err = irsem.DecodePayload(planDoc(t, c.payload)); err != nil {
			t.Fatalf("%s: payload: %v", c.name, err)
		}
	}
	x, err := irsem.DecodeTensor(planDoc(t, c.input))
	if err != nil {
		t.Fatalf("%s: input: %v", c.name, err)
	}
	return g, p, irsem.ConvertTensor[spec.F32](x)
}

func planCases() []planCase {
	return []planCase{
		{name: "quad", graph: "file:quad.ir.json", input: "file:quad.input.json"},
		{name: "quad-detach", graph: "file:quad-detach.ir.json", input: "file:quad.input.json"},
		{name: "mlp", graph: "file:mlp.ir.json", payload: "file:mlp.payload.json", input: "file:mlp.input.json"},
		{name: "layernorm-softmax-safe_log",
			graph: `{"format":"torchlean.ir.v1","input_id":0,"output_id":9,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3,2]},
  {"id":1,"kind":"layernorm","parents":[0],"shape":[2,3,2],"axis":1},
  {"id":2,"kind":"softmax","parents":[1],"shape":[2,3,2],"axis":2},
  {"id":3,"kind":"const","parents":[],"shape":[],"value_shape":[]},
  {"id":4,"kind":"safe_log","parents":[2,3],"shape":[2,3,2]},
  {"id":5,"kind":"sum","parents":[0],"shape":[]},
  {"id":6,"kind":"abs","parents":[5],"shape":[]},
  {"id":7,"kind":"safe_log","parents":[4,6],"shape":[2,3,2]},
  {"id":8,"kind":"rand_uniform","parents":[],"shape":[2,3,2],"seed":9},
  {"id":9,"kind":"mse_loss","parents":[7,8],"shape":[]}
]}`,
			payload: `{"format":"tlcheck.payload.v1","entries":{
  "1":{"gamma":{"shape":[3,2],"values":["1","2","-1","1/2","3","1/3"]},"eps":"1/1000"},
  "3":{"value":{"shape":[],"values":["1/100"]}}
}}`,
			input: `{"shape":[2,3,2],"values":["1","-2","1/2","3","0","-1","2","2","-3/4","1/8","5","-5"]}`},
		{name: "shapes",
			graph: `{"format":"torchlean.ir.v1","input_id":0,"output_id":9,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3]},
  {"id":1,"kind":"const","parents":[],"shape":[3,2],"value_shape":[3,2]},
  {"id":2,"kind":"matmul","parents":[0,1],"shape":[2,2]},
  {"id":3,"kind":"transpose","parents":[2],"shape":[2,2],"axis1":0,"axis2":1},
  {"id":4,"kind":"reduce_mean","parents":[3],"shape":[2],"axis":1},
  {"id":5,"kind":"broadcast_to","parents":[4],"shape":[3,2],"from_shape":[2],"to_shape":[3,2]},
  {"id":6,"kind":"permute","parents":[5],"shape":[2,3],"perm":[1,0]},
  {"id":7,"kind":"concat","parents":[6,0],"shape":[4,3],"axis":0},
  {"id":8,"kind":"flatten","parents":[7],"shape":[12],"in_shape":[4,3]},
  {"id":9,"kind":"tanh","parents":[8],"shape":[12]}
]}`,
			payload: `{"format":"tlcheck.payload.v1","entries":{
  "1":{"value":{"shape":[3,2],"values":["1/3","-2","0.1","3","-1","2/7"]}}
}}`,
			input: `{"shape":[2,3],"values":["1","-2","3/2","2","1/2","-1"]}`},
	}
}

// TestPlanExecuteMatchesDenote: an accepted checked_cpu plan, bound to the
// reference provider, computes DenoteAll's float32 value at every node,
// bit for bit.
func TestPlanExecuteMatchesDenote(t *testing.T) {
	for _, c := range planCases() {
		g, p, x := c.load(t)
		res := backend.Plan(g, backend.CheckedCPU())
		if res.Err != nil || !res.Accepted {
			t.Fatalf("%s: plan not accepted: %v %v", c.name, res.Err, res.Rejected())
		}
		bp, err := backend.Bind(res.Plan, nil)
		if err != nil {
			t.Fatalf("%s: bind: %v", c.name, err)
		}
		got, err := bp.Execute(g, p, x)
		if err != nil {
			t.Fatalf("%s: execute: %v", c.name, err)
		}
		want, err := irsem.DenoteAll(g, p, x)
		if err != nil {
			t.Fatal(err)
		}
		cmp, err := irsem.CompareTables(g, got, want)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmp.Err(); err != nil || cmp.Compared != len(g.Nodes) {
			t.Errorf("%s: %v (%d of %d compared)", c.name, err, cmp.Compared, len(g.Nodes))
		}
	}
}

func TestPlanReport(t *testing.T) {
	g, _, _ := planCases()[2].load(t)
	var b strings.Builder
	if err := backend.WritePlanReport(&b, backend.Plan(g, backend.CheckedCPU())); err != nil {
		t.Fatal(err)
	}
	want := `kernel plan on profile checked_cpu (device=cpu provider=auto assurance=checked vjp=torchlean-tape): 4 nodes
node 0 (input): source, no kernel (the caller's input)
node 1 (linear): linear -> reference.linear provider=reference reduction=fixed-left
node 2 (relu): relu -> reference.relu provider=reference reduction=n/a
node 3 (linear): linear -> reference.linear provider=reference reduction=fixed-left
verdict: accepted: 3 kernels for 4 nodes (1 source) on profile checked_cpu
`
	if b.String() != want {
		t.Errorf("report:\n%s\nwant\n%s", b.String(), want)
	}
	g, _, _ = planCases()[3].load(t)
	res := backend.Plan(g, backend.CheckedCPU())
	b.Reset()
	if err := backend.WritePlanReport(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"node 1 (layernorm): reshape -> reference.reshape provider=reference reduction=n/a; layer_norm -> reference.layer_norm provider=reference reduction=fixed-left; reshape -> reference.reshape provider=reference reduction=n/a\n",
		"node 3 (const): source, no kernel (the payload's value)\n",
		"node 4 (safe_log): safe_log -> reference.safe_log provider=reference reduction=n/a\n",
		"node 7 (safe_log): softplus -> reference.softplus provider=reference reduction=n/a; broadcast_to -> reference.broadcast_to",
		"node 8 (rand_uniform): rand_uniform -> reference.rand_uniform",
		"verdict: accepted: 13 kernels for 10 nodes (2 sources) on profile checked_cpu\n",
	} {
		if !strings.Contains(b.String(), line) {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
	if n := len(res.Plan.Capsules()); n != 12 {
		t.Errorf("%d distinct capsules: %v", n, res.Plan.Capsules())
	}
}

// TestPlanCUDABindFails: checked_cuda admits its declared capsules, so the
// plan is accepted, but no native-cuda provider is registered: binding
// fails and names the node and the capsule.
func TestPlanCUDABindFails(t *testing.T) {
	g, _, _ := planCases()[2].load(t)
	res := backend.Plan(g, backend.CheckedCUDA())
	if res.Err != nil || !res.Accepted {
		t.Fatalf("plan: %v %v", res.Err, res.Rejected())
	}
	if k := res.Plan.Nodes[1].Kernels[0]; k.Capsule.Provider != backend.ProviderNativeCUDA || k.Capsule.Reduction != backend.ReductionImplementationDefined {
		t.Errorf("cuda linear capsule %+v", k.Capsule)
	}
	_, err := backend.Bind(res.Plan, nil)
	var mp *backend.MissingProviderError
	if err == nil || !errors.As(err, &mp) || !strings.Contains(err.Error(), "node 1 (linear): capsule native-cuda.linear is unbound") {
		t.Fatalf("bind: %v", err)
	}
	// A provider set that has the provider name but the wrong device.
	wrong, err := backend.NewFuncProvider(backend.ProviderNativeCUDA, backend.DeviceCPU, []string{"linear", "relu"},
		func(string, *spec.Attrs, []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
			return spec.Tensor[spec.F32]{}, nil
		})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := backend.NewProviders(wrong)
	if err != nil {
		t.Fatal(err)
	}
	var mh *backend.MissingHandlerError
	if _, err := backend.Bind(res.Plan, ps); err == nil || !errors.As(err, &mh) || !strings.Contains(err.Error(), "node 1 (linear)") {
		t.Fatalf("bind to a cpu provider: %v", err)
	}
}

// TestPlanRejections: unsupported tags and inadmissible ops reject the
// node, with its id and reason, and the plan cannot be bound.
func TestPlanRejections(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(`{"format":"torchlean.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,4,4]},
  {"id":1,"kind":"relu","parents":[0],"shape":[1,4,4]},
  {"id":2,"kind":"hard_masked_softmax","parents":[1],"shape":[1,4,4],"mask":{"shape":[1,4,4],"allowed":[true,true,true,true,true,true,true,true,true,true,true,true,true,true,true,false]}},
  {"id":3,"kind":"sum","parents":[2],"shape":[]}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	// Every IR tag has a registry primitive, so hard_masked_softmax plans
	// (it was forward-only once).
	if res := backend.Plan(g, backend.CheckedCPU()); res.Err != nil || !res.Accepted {
		t.Fatalf("plan with hard_masked_softmax not accepted: %v %+v", res.Err, res.Rejected())
	}

	// A profile whose catalog lacks relu rejects node 1 with the
	// selection's reason.
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
	prof := backend.CheckedCPU()
	prof.Catalog = cat
	res := backend.Plan(g, prof)
	if res.Err != nil || res.Accepted {
		t.Fatalf("plan without a relu capsule accepted: %v", res.Err)
	}
	if rej := res.Rejected(); len(rej) != 1 || rej[0].Node != 1 || !strings.Contains(rej[0].Reasons[0], "declares no capsule for relu") {
		t.Fatalf("rejections %+v", rej)
	}
	var b strings.Builder
	_ = backend.WritePlanReport(&b, res)
	if s := "verdict: rejected: 1 of 4 nodes cannot be planned on profile checked_cpu (node 1)"; !strings.Contains(b.String(), s) {
		t.Errorf("report lacks %q:\n%s", s, b.String())
	}
	if _, err := backend.Bind(res.Plan, nil); err == nil || !strings.Contains(err.Error(), "node 1 (relu)") {
		t.Errorf("bind of a rejected plan: %v", err)
	}
}

func TestPlanErrors(t *testing.T) {
	g, p, x := planCases()[0].load(t)
	if res := backend.Plan(g, nil); res.Err == nil {
		t.Error("nil profile planned")
	}
	bad := g.Clone()
	bad.Nodes[1].Parents = []int{0, 3}
	if res := backend.Plan(bad, backend.CheckedCPU()); res.Err == nil || !strings.Contains(res.Err.Error(), "node 1 (mul_elem)") {
		t.Errorf("bad graph: %v", res.Err)
	}
	var b strings.Builder
	_ = backend.WritePlanReport(&b, backend.Plan(nil, backend.CheckedCPU()))
	if !strings.HasPrefix(b.String(), "plan: ") {
		t.Errorf("report of a failed plan: %q", b.String())
	}
	res := backend.Plan(g, backend.CheckedCPU())
	bp, err := backend.Bind(res.Plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bp.Execute(g, p, irsem.ConvertTensor[spec.F32](irsem.RatTensor{Shape: spec.Shape{3}, Data: make([]spec.Rat, 3)})); err == nil || !strings.Contains(err.Error(), "node 0 (input): shape mismatch") {
		t.Errorf("wrong input: %v", err)
	}
	other, _, _ := planCases()[2].load(t)
	if _, err := bp.Execute(other, nil, x); err == nil {
		t.Error("executed a plan on another graph")
	}
	det, _, _ := planCases()[1].load(t)
	if _, err := bp.Execute(det, nil, x); err == nil || !strings.Contains(err.Error(), "another graph") {
		t.Errorf("plan on a graph with another node count: %v", err)
	}
	var nilPlan *backend.BoundPlan
	if _, err := nilPlan.Execute(g, p, x); err == nil {
		t.Error("nil bound plan executed")
	}
	if _, err := backend.Bind(nil, nil); err == nil {
		t.Error("nil plan bound")
	}
}

// TestVerdictGrammar: the verdict's counts agree with their nouns — one
// kernel, one node, one source are singular (the wording written out by
// hand for each count).
func TestVerdictGrammar(t *testing.T) {
	k := backend.PlannedKernel{}
	for _, c := range []struct {
		nodes []backend.NodePlan
		want  string
	}{
		{[]backend.NodePlan{{Node: 0, Source: true}}, "verdict: accepted: 0 kernels for 1 node (1 source) on profile p"},
		{[]backend.NodePlan{{Node: 0, Source: true}, {Node: 1, Kernels: []backend.PlannedKernel{k}}}, "verdict: accepted: 1 kernel for 2 nodes (1 source) on profile p"},
		{[]backend.NodePlan{{Node: 0, Kernels: []backend.PlannedKernel{k, k}}}, "verdict: accepted: 2 kernels for 1 node (0 sources) on profile p"},
	} {
		p := &backend.GraphKernelPlan{Profile: "p", Nodes: c.nodes}
		if got := p.Verdict(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
