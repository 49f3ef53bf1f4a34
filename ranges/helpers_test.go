package ranges

import (
	"math"
	"os"
	"testing"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// loadGraph decodes a graph document from examples/ or from text.
func loadGraph(t testing.TB, path string) *irsem.Graph {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustGraph(t, string(b))
}

func loadPayload(t testing.TB, path string) *irsem.Payload {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return mustPayload(t, string(b))
}

func mustGraph(t testing.TB, doc string) *irsem.Graph {
	t.Helper()
	g, err := irsem.DecodeGraph([]byte(doc))
	if err != nil {
		t.Fatalf("graph: %v", err)
	}
	return g
}

func mustPayload(t testing.TB, doc string) *irsem.Payload {
	t.Helper()
	if doc == "" {
		return nil
	}
	p, err := irsem.DecodePayload([]byte(doc))
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	return p
}

func mustBox(t testing.TB, shape spec.Shape, lo, hi []float32) Interval32Tensor {
	t.Helper()
	b, err := BoxFromFloat32(shape, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustPlan(t testing.TB, g *irsem.Graph, prof *backend.Profile) *backend.GraphKernelPlan {
	t.Helper()
	p, err := PlanKernels(g, prof)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// implDefinedProfile is checked_cpu over a catalog whose first capsule for
// each op in ops is a copy of the reference capsule named fast_cpu.OP with
// an implementation-defined reduction policy.
func implDefinedProfile(t testing.TB, ops ...string) *backend.Profile {
	t.Helper()
	var caps []backend.Capsule
	for _, op := range ops {
		c, err := backend.ReferenceCapsule(op)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = backend.ProviderFastCPU + "." + op
		c.Provider = backend.ProviderFastCPU
		c.Reduction = backend.ReductionImplementationDefined
		caps = append(caps, c)
	}
	cat, err := backend.NewCatalog(caps...)
	if err != nil {
		t.Fatal(err)
	}
	if cat, err = cat.Append(backend.ReferenceCatalog().Capsules()...); err != nil {
		t.Fatal(err)
	}
	p := backend.CheckedCPU()
	p.Name = "test_impl_defined"
	p.Catalog = cat
	return p
}

// ---- graphs covering every supported tag ----

// elementwiseGraph uses every elementwise rule on an input of shape [3].
const elementwiseGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":22,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[3]},
  {"id":1,"kind":"const","parents":[],"shape":[3],"value_shape":[3]},
  {"id":2,"kind":"add","parents":[0,1],"shape":[3]},
  {"id":3,"kind":"sub","parents":[0,1],"shape":[3]},
  {"id":4,"kind":"mul_elem","parents":[2,3],"shape":[3]},
  {"id":5,"kind":"mul_elem","parents":[3,3],"shape":[3]},
  {"id":6,"kind":"max_elem","parents":[0,1],"shape":[3]},
  {"id":7,"kind":"min_elem","parents":[4,5],"shape":[3]},
  {"id":8,"kind":"abs","parents":[7],"shape":[3]},
  {"id":9,"kind":"relu","parents":[3],"shape":[3]},
  {"id":10,"kind":"sqrt","parents":[3],"shape":[3]},
  {"id":11,"kind":"exp","parents":[0],"shape":[3]},
  {"id":12,"kind":"inv","parents":[11],"shape":[3]},
  {"id":13,"kind":"log","parents":[11],"shape":[3]},
  {"id":14,"kind":"tanh","parents":[4],"shape":[3]},
  {"id":15,"kind":"sigmoid","parents":[3],"shape":[3]},
  {"id":16,"kind":"sin","parents":[2],"shape":[3]},
  {"id":17,"kind":"cos","parents":[2],"shape":[3]},
  {"id":18,"kind":"detach","parents":[17],"shape":[3]},
  {"id":19,"kind":"rand_uniform","parents":[],"shape":[3],"seed":7},
  {"id":20,"kind":"mul_elem","parents":[18,19],"shape":[3]},
  {"id":21,"kind":"add","parents":[20,15],"shape":[3]},
  {"id":22,"kind":"sub","parents":[21,21],"shape":[3]}
]}`

const elementwisePayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"value":{"shape":[3],"values":["1/3","-1/2","1/10"]}}
}}`

// softplusGraph exercises softplus and safe_log, whose registry rules
// branch on the sign of x: safe_log with a const ε (the registry's
// safe_log) and with a computed ε (softplus, broadcast_to, add, log).
const softplusGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":7,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[3]},
  {"id":1,"kind":"const","parents":[],"shape":[],"value_shape":[]},
  {"id":2,"kind":"softplus","parents":[0],"shape":[3]},
  {"id":3,"kind":"safe_log","parents":[0,1],"shape":[3]},
  {"id":4,"kind":"abs","parents":[1],"shape":[]},
  {"id":5,"kind":"safe_log","parents":[0,4],"shape":[3]},
  {"id":6,"kind":"add","parents":[3,5],"shape":[3]},
  {"id":7,"kind":"add","parents":[6,2],"shape":[3]}
]}`

const softplusPayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"value":{"shape":[],"values":["1/1000"]}}
}}`

// exactGraph uses only tags with exact rational semantics (so the exact
// replay over spec.Rat applies), on an input of shape [2,3].
const exactGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":22,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3]},
  {"id":1,"kind":"reduce_sum","parents":[0],"shape":[2],"axis":1},
  {"id":2,"kind":"reduce_mean","parents":[0],"shape":[3],"axis":0},
  {"id":3,"kind":"sum","parents":[0],"shape":[]},
  {"id":4,"kind":"transpose","parents":[0],"shape":[3,2],"axis1":0,"axis2":1},
  {"id":5,"kind":"permute","parents":[0],"shape":[3,2],"perm":[1,0]},
  {"id":6,"kind":"matmul","parents":[0,4],"shape":[2,2]},
  {"id":7,"kind":"const","parents":[],"shape":[3,2],"value_shape":[3,2]},
  {"id":8,"kind":"matmul","parents":[0,7],"shape":[2,2]},
  {"id":9,"kind":"reshape","parents":[8],"shape":[4],"in_shape":[2,2],"out_shape":[4]},
  {"id":10,"kind":"flatten","parents":[0],"shape":[6],"in_shape":[2,3]},
  {"id":11,"kind":"broadcast_to","parents":[2],"shape":[2,3],"from_shape":[3],"to_shape":[2,3]},
  {"id":12,"kind":"sub","parents":[0,11],"shape":[2,3]},
  {"id":13,"kind":"concat","parents":[0,12,0],"shape":[6,3],"axis":0},
  {"id":14,"kind":"mse_loss","parents":[0,12],"shape":[]},
  {"id":15,"kind":"linear","parents":[0],"shape":[2,2]},
  {"id":16,"kind":"relu","parents":[15],"shape":[2,2]},
  {"id":17,"kind":"matmul","parents":[10,10],"shape":[]},
  {"id":18,"kind":"matmul","parents":[1,6],"shape":[2]},
  {"id":19,"kind":"max_elem","parents":[9,9],"shape":[4]},
  {"id":20,"kind":"abs","parents":[12],"shape":[2,3]},
  {"id":21,"kind":"reduce_sum","parents":[13],"shape":[3],"axis":0},
  {"id":22,"kind":"add","parents":[3,14],"shape":[]}
]}`

const exactPayload = `{"format":"tlcheck.payload.v1","entries":{
  "7":{"value":{"shape":[3,2],"values":["1/2","-1","3/7","2","-5/3","1/8"]}},
  "15":{"W":{"shape":[2,3],"values":["1","-1/3","1/4","2/5","0","-3/2"]},"b":{"shape":[2],"values":["1/10","-2"]}}
}}`

// normGraph uses softmax and layernorm (with and without a payload), on an
// input of shape [2,3].
const normGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":5,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2,3]},
  {"id":1,"kind":"softmax","parents":[0],"shape":[2,3],"axis":1},
  {"id":2,"kind":"layernorm","parents":[0],"shape":[2,3],"axis":1},
  {"id":3,"kind":"layernorm","parents":[0],"shape":[2,3],"axis":0},
  {"id":4,"kind":"softmax","parents":[2],"shape":[2,3],"axis":0},
  {"id":5,"kind":"add","parents":[3,4],"shape":[2,3]}
]}`

const normPayload = `{"format":"tlcheck.payload.v1","entries":{
  "2":{"gamma":{"shape":[3],"values":["1","2","1/2"]},"beta":{"shape":[3],"values":["0","-1/3","1"]},"eps":"1/1000"}
}}`

// windowGraph uses every window tag: conv, max_pool and avg_pool
// (TorchLean forms) and conv_transpose, max_pool_nd and avg_pool_nd (the
// tlcheck.ir.v1 superset, ceil mode on).
const windowGraph = `{"format":"tlcheck.ir.v1","input_id":0,"output_id":9,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,4]},
  {"id":1,"kind":"conv","parents":[0],"shape":[1,2,5],"kernel":[2],"stride":[1],"padding":[1],"dilation":[1],"groups":1,"in_channels":2,"out_channels":2},
  {"id":2,"kind":"max_pool","parents":[1],"shape":[1,2,4],"kernel":[2],"stride":[1],"padding":[0]},
  {"id":3,"kind":"avg_pool","parents":[1],"shape":[1,2,3],"kernel":[3],"stride":[2],"padding":[1]},
  {"id":4,"kind":"conv_transpose","parents":[0],"shape":[1,2,8],"kernel":[2],"stride":[2],"pads":[0,1],"dilation":[1],"output_padding":[1],"groups":2,"in_channels":2,"out_channels":2},
  {"id":5,"kind":"max_pool_nd","parents":[4],"shape":[1,2,5],"kernel":[2],"stride":[2],"pads":[1,0],"dilation":[1],"ceil_mode":true},
  {"id":6,"kind":"avg_pool_nd","parents":[4],"shape":[1,2,5],"kernel":[3],"stride":[2],"pads":[1,1],"dilation":[1],"ceil_mode":true,"count_include_pad":false},
  {"id":7,"kind":"add","parents":[5,6],"shape":[1,2,5]},
  {"id":8,"kind":"add","parents":[7,1],"shape":[1,2,5]},
  {"id":9,"kind":"concat","parents":[8,2,3],"shape":[1,2,12],"axis":2}
]}`

const windowPayload = `{"format":"tlcheck.payload.v1","entries":{
  "1":{"W":{"shape":[2,2,2],"values":["1","-1/2","2","1/4","-1","3/2","0","1/3"]},"b":{"shape":[2],"values":["1/2","-1"]}},
  "4":{"W":{"shape":[2,1,2],"values":["2","-1","1/2","3"]}}
}}`

// testGraph is a graph with its payload and input shape.
type testGraph struct {
	name    string
	g       *irsem.Graph
	p       *irsem.Payload
	inShape spec.Shape
}

func testGraphs(t testing.TB) []testGraph {
	return []testGraph{
		{"quad", loadGraph(t, "../examples/quad.ir.json"), nil, spec.Shape{2}},
		{"mlp", loadGraph(t, "../examples/mlp.ir.json"), loadPayload(t, "../examples/mlp.payload.json"), spec.Shape{2}},
		{"elementwise", mustGraph(t, elementwiseGraph), mustPayload(t, elementwisePayload), spec.Shape{3}},
		{"exact", mustGraph(t, exactGraph), mustPayload(t, exactPayload), spec.Shape{2, 3}},
		{"norm", mustGraph(t, normGraph), mustPayload(t, normPayload), spec.Shape{2, 3}},
		{"softplus", mustGraph(t, softplusGraph), mustPayload(t, softplusPayload), spec.Shape{3}},
		{"window", mustGraph(t, windowGraph), mustPayload(t, windowPayload), spec.Shape{1, 2, 4}},
		{"superset", mustGraph(t, supersetGraph), mustPayload(t, supersetPayload), spec.Shape{2, 3}},
	}
}

// randomBox draws a box of the given shape from seed: per element a centre
// and a width from several scales, some straddling 0, some degenerate.
func randomBox(shape spec.Shape, seed uint64) Interval32Tensor {
	n := shape.Size()
	box := Interval32Tensor{Shape: shape.Clone(), Data: make([]Interval32, n)}
	u := func(k int) float64 { return float64(spec.UniformBits(seed, k)) / (1 << 32) }
	scales := []float64{1e-6, 1e-3, 0.1, 1, 2, 4}
	for i := range box.Data {
		c := (u(4*i)*2 - 1) * scales[int(u(4*i+1)*float64(len(scales)))]
		w := u(4*i+2) * scales[int(u(4*i+3)*float64(len(scales)))]
		if seed%7 == 0 {
			w = 0
		}
		lo, hi := float32(c-w/2), float32(c+w/2)
		if lo > hi {
			lo, hi = hi, lo
		}
		box.Data[i], _ = NewInterval32(lo, hi)
	}
	return box
}

// nextUp32 is the binary32 successor (test helper).
func nextUp32(f float32) float32 { return math.Nextafter32(f, float32(math.Inf(1))) }
