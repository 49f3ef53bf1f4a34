package onnx

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// mg builds an ONNX model in Go for the importer tests.
type mg struct {
	opset int64
	g     Graph
}

func newMG(opset int64) *mg { return &mg{opset: opset} }

func vinfo(name string, dt DataType, dims ...int64) *ValueInfo {
	v := &ValueInfo{Name: name, ElemType: dt, HasShape: true, Shape: []Dim{}}
	for _, d := range dims {
		v.Shape = append(v.Shape, Dim{Value: d})
	}
	return v
}

// in adds a float graph input.
func (m *mg) in(name string, dims ...int64) *mg {
	m.g.Inputs = append(m.g.Inputs, vinfo(name, Float, dims...))
	return m
}

// inT adds a graph input of another element type.
func (m *mg) inT(name string, dt DataType, dims ...int64) *mg {
	m.g.Inputs = append(m.g.Inputs, vinfo(name, dt, dims...))
	return m
}

// out adds a graph output of unknown shape (the importer infers it).
func (m *mg) out(names ...string) *mg {
	for _, n := range names {
		m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: n, ElemType: Float})
	}
	return m
}

// outS adds a graph output with a declared shape.
func (m *mg) outS(name string, dims ...int64) *mg {
	m.g.Outputs = append(m.g.Outputs, vinfo(name, Float, dims...))
	return m
}

func ftensor(name string, dims []int64, vs ...float32) *Tensor {
	return &Tensor{Name: name, Dims: dims, DataType: Float, Float32: vs}
}

func itensor(name string, dims []int64, vs ...int64) *Tensor {
	return &Tensor{Name: name, Dims: dims, DataType: Int64, Int64: vs}
}

// init adds a float initializer.
func (m *mg) init(name string, dims []int64, vs ...float32) *mg {
	m.g.Initializers = append(m.g.Initializers, ftensor(name, dims, vs...))
	return m
}

// initI adds an int64 initializer.
func (m *mg) initI(name string, dims []int64, vs ...int64) *mg {
	m.g.Initializers = append(m.g.Initializers, itensor(name, dims, vs...))
	return m
}

// op adds a node named after its first output.
func (m *mg) op(op string, ins, outs []string, attrs ...*Attribute) *mg {
	m.g.Nodes = append(m.g.Nodes, &Node{Index: len(m.g.Nodes), Name: outs[0], OpType: op, Inputs: ins, Outputs: outs, Attrs: attrs})
	return m
}

// opD adds a node of another domain.
func (m *mg) opD(domain, op string, ins, outs []string, attrs ...*Attribute) *mg {
	m.g.Nodes = append(m.g.Nodes, &Node{Index: len(m.g.Nodes), Name: outs[0], OpType: op, Domain: domain, Inputs: ins, Outputs: outs, Attrs: attrs})
	return m
}

func (m *mg) model() *Model {
	g := m.g
	return &Model{IRVersion: 8, Opsets: []OpsetID{{Domain: "", Version: m.opset}}, Graph: &g}
}

func aI(name string, v int64) *Attribute   { return &Attribute{Name: name, Type: AttrInt, I: v} }
func aF(name string, v float32) *Attribute { return &Attribute{Name: name, Type: AttrFloat, F: v} }
func aS(name, v string) *Attribute         { return &Attribute{Name: name, Type: AttrString, S: []byte(v)} }
func aT(name string, t *Tensor) *Attribute { return &Attribute{Name: name, Type: AttrTensor, T: t} }
func aIs(name string, vs ...int64) *Attribute {
	return &Attribute{Name: name, Type: AttrInts, Ints: vs}
}
func aFs(name string, vs ...float32) *Attribute {
	return &Attribute{Name: name, Type: AttrFloats, Floats: vs}
}
func aSs(name string, vs ...string) *Attribute {
	a := &Attribute{Name: name, Type: AttrStrings}
	for _, v := range vs {
		a.Strings = append(a.Strings, []byte(v))
	}
	return a
}

func ins(xs ...string) []string { return xs }

// rats parses "p/q" strings.
func rats(t testing.TB, xs ...string) []spec.Rat {
	t.Helper()
	out := make([]spec.Rat, len(xs))
	for i, x := range xs {
		r, err := spec.ParseRat(x)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = r
	}
	return out
}

// ratTensorF is a float32 test tensor's exact values.
func floatsTensor(dims []int64, vs ...float32) *Tensor { return ftensor("", dims, vs...) }

// evalRat imports m and evaluates it exactly on the float inputs.
func evalRat(t *testing.T, m *Model, o Options, inputs ...*Tensor) (*Imported, []spec.Tensor[spec.Rat]) {
	t.Helper()
	im, err := Import(m, o)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	x, err := im.PackInputs(inputs)
	if err != nil {
		t.Fatalf("PackInputs: %v", err)
	}
	y, err := irsem.Denote(im.Graph, im.Payload, x)
	if err != nil {
		t.Fatalf("Denote[Rat]: %v", err)
	}
	outs, err := UnpackOutputs(im, y)
	if err != nil {
		t.Fatalf("UnpackOutputs: %v", err)
	}
	return im, outs
}

// evalF64 imports m and evaluates it over float64.
func evalF64(t *testing.T, m *Model, o Options, inputs ...*Tensor) (*Imported, []spec.Tensor[spec.F64]) {
	t.Helper()
	im, err := Import(m, o)
	if err != nil {
		t.Fatalf("Import: %v", err)
	}
	x, err := im.PackInputs(inputs)
	if err != nil {
		t.Fatalf("PackInputs: %v", err)
	}
	y, err := irsem.Denote(im.Graph, im.Payload, irsem.ConvertTensor[spec.F64](x))
	if err != nil {
		t.Fatalf("Denote[F64]: %v", err)
	}
	outs, err := UnpackOutputs(im, y)
	if err != nil {
		t.Fatalf("UnpackOutputs: %v", err)
	}
	return im, outs
}

func ratStrings(xs []spec.Rat) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = x.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

func sameRats(a, b []spec.Rat) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Same(b[i]) {
			return false
		}
	}
	return true
}

func nearF64(a []spec.F64, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Abs(float64(a[i])-b[i]) > 1e-12*math.Max(1, math.Abs(b[i])) {
			return false
		}
	}
	return true
}

// f32r is the exact rational of a float32 (for expectations involving
// attributes such as α = 0.01, whose float32 is not 1/100).
func f32r(f float32) spec.Rat {
	r := new(big.Rat)
	r.SetFloat64(float64(f))
	return spec.RatFromBig(r)
}

func nanF() float64 { return math.NaN() }
