package onnx

// TEMPORARY: the reader API of contracts11.md, written here only so that
// the importer compiles before branch onnxread is merged. Deleted on
// merging onnxread (whose files are the truth).

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/spec"
)

type DataType int32

const (
	Float   DataType = 1
	Uint8   DataType = 2
	Int8    DataType = 3
	Uint16  DataType = 4
	Int16   DataType = 5
	Int32   DataType = 6
	Int64   DataType = 7
	Bool    DataType = 9
	Float16 DataType = 10
	Double  DataType = 11
)

type Model struct {
	IRVersion    int64
	ProducerName string
	Opsets       []OpsetID
	Graph        *Graph
}

func (m *Model) Opset(domain string) (int64, bool) {
	for _, o := range m.Opsets {
		if o.Domain == domain || (o.Domain == "" && domain == "ai.onnx") || (o.Domain == "ai.onnx" && domain == "") {
			return o.Version, true
		}
	}
	return 0, false
}

type OpsetID struct {
	Domain  string
	Version int64
}

type Graph struct {
	Name                       string
	Nodes                      []*Node
	Initializers               []*Tensor
	Inputs, Outputs, ValueInfo []*ValueInfo
}

type Node struct {
	Index                int
	Name, OpType, Domain string
	Inputs, Outputs      []string
	Attrs                []*Attribute
}

func (n *Node) Attr(name string) *Attribute {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a
		}
	}
	return nil
}

func (n *Node) Where() string {
	if n.Name != "" {
		return fmt.Sprintf("node %q (%s)", n.Name, n.OpType)
	}
	return fmt.Sprintf("node #%d (%s)", n.Index, n.OpType)
}

type AttrType int32

const (
	AttrFloat   AttrType = 1
	AttrInt     AttrType = 2
	AttrString  AttrType = 3
	AttrTensor  AttrType = 4
	AttrGraph   AttrType = 5
	AttrFloats  AttrType = 6
	AttrInts    AttrType = 7
	AttrStrings AttrType = 8
)

type Attribute struct {
	Name    string
	Type    AttrType
	F       float32
	I       int64
	S       []byte
	T       *Tensor
	Floats  []float32
	Ints    []int64
	Strings [][]byte
}

type Tensor struct {
	Name     string
	Dims     []int64
	DataType DataType
	Float32  []float32
	Float64  []float64
	Int64    []int64
	Int32    []int32
}

func (t *Tensor) NumElements() (int, error) {
	n := 1
	for _, d := range t.Dims {
		if d < 0 {
			return 0, fmt.Errorf("negative dim")
		}
		n *= int(d)
	}
	return n, nil
}

func (t *Tensor) Rats() ([]spec.Rat, error) {
	var out []spec.Rat
	switch {
	case t.Float32 != nil:
		for i, f := range t.Float32 {
			if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
				return nil, fmt.Errorf("element %d is %v", i, f)
			}
			r, _ := spec.RatFromFloat64(float64(f))
			out = append(out, r)
		}
	case t.Float64 != nil:
		for i, f := range t.Float64 {
			r, err := spec.RatFromFloat64(f)
			if err != nil {
				return nil, fmt.Errorf("element %d: %v", i, err)
			}
			out = append(out, r)
		}
	case t.Int64 != nil:
		for _, v := range t.Int64 {
			out = append(out, spec.NewRat(v, 1))
		}
	case t.Int32 != nil:
		for _, v := range t.Int32 {
			out = append(out, spec.NewRat(int64(v), 1))
		}
	}
	return out, nil
}

type ValueInfo struct {
	Name     string
	ElemType DataType
	HasShape bool
	Shape    []Dim
}

type Dim struct {
	Value int64
	Param string
}

func Decode(data []byte) (*Model, error)      { return nil, fmt.Errorf("reader not merged") }
func ReadModel(path string) (*Model, error)   { return nil, fmt.Errorf("reader not merged") }
func ReadTensor(path string) (*Tensor, error) { return nil, fmt.Errorf("reader not merged") }
