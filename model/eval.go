package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// AutoScalar resolves --scalar auto for the model and its input: "rat"
// when the model is exact over spec.Rat at its input, else "interval"
// and why rat does not apply (a tag without exact rational semantics, or
// a value that leaves the rationals: a batch norm's sqrt(var + ε)).
// Both are exact in the sense tlcheck claims: a rational is the value
// itself, an interval encloses it (spec.Interval rounds outward).
func (m *Model) AutoScalar() (scalar, why string) {
	for i := range m.Graph.Nodes {
		op := m.Graph.Nodes[i].Kind.Op
		if info, ok := irsem.LookupTag(op); !ok || !info.Exact {
			return "interval", fmt.Sprintf("node %d (%s) has no exact rational semantics", i, op)
		}
	}
	_, err := irsem.DenoteAll(m.Graph, m.Payload, m.Input)
	var de *spec.DomainError
	if errors.As(err, &de) && de.Scalar == "rat" && strings.HasPrefix(de.Reason, "no exact rational") {
		return "interval", err.Error()
	}
	return "rat", ""
}

// RatApplies says whether --scalar auto picks rat for m (AutoScalar).
func (m *Model) RatApplies() bool {
	s, _ := m.AutoScalar()
	return s == "rat"
}

// RatBudget runs the IR semantics over Rat first when T is Rat, so that
// the rational bit budget of the evaluation (limits.RatBitsTotal, counted
// by irsem.DenoteAll) is enforced on every path: it returns the IR
// semantics' limits error, and nil otherwise (every other failure is left
// to the path itself, which reports it).
func RatBudget[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T]) error {
	r, ok := any(x).(spec.Tensor[spec.Rat])
	if !ok {
		return nil
	}
	if _, err := irsem.DenoteAll(g, p, r); limits.IsLimit(err) {
		return err
	}
	return nil
}

// EvalPaths are the execution paths of Values: the IR semantics
// (irsem.DenoteAll), the lowered forward graph, and irgrad's eager tape
// and typed graph (registry primitives only).
var EvalPaths = []string{"ir", "forward-graph", "tape", "typed-graph"}

// EvalJSON is the tlcheck.eval.v1 document of m's node values vals over T
// along path: the output's, and with all every node's. Its Stats are the
// caller's.
func EvalJSON[T spec.Scalar[T]](m *Model, vals []spec.Tensor[T], path string, all bool) jsonout.EvalDoc {
	node := func(id int) jsonout.EvalNode {
		return jsonout.EvalNode{ID: id, Kind: string(m.Graph.Nodes[id].Kind.Op), Value: jsonout.TensorOf(vals[id])}
	}
	doc := jsonout.EvalDoc{Header: jsonout.NewHeader(jsonout.KindEval, nil, m.Files), Scalar: spec.KindOf[T](), Path: path, Output: node(m.Graph.OutputID)}
	if all {
		doc.Nodes = make([]jsonout.EvalNode, len(vals))
		for i := range vals {
			doc.Nodes[i] = node(i)
		}
	}
	return doc
}

// Values computes every node's value along path (one of EvalPaths) over T.
func Values[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T], path string) ([]spec.Tensor[T], error) {
	if path != "ir" {
		if err := RatBudget(g, p, x); err != nil {
			return nil, err
		}
	}
	switch path {
	case "forward-graph":
		f, err := irsem.LowerForward[T](g, p)
		if err != nil {
			return nil, err
		}
		return f.Run(x)
	case "tape", "typed-graph":
		l, err := irgrad.Lower[T](nil, g, p)
		if errors.Is(err, irgrad.ErrNoPrimitive) {
			return nil, fmt.Errorf("%w; evaluate it with --path ir or --path forward-graph", err)
		}
		if err != nil {
			return nil, err
		}
		if path == "tape" {
			return l.TapeValues(x)
		}
		return l.Values(x)
	}
	return irsem.DenoteAll(g, p, x)
}

// ONNXOutputs splits the IR output of an imported model into its ONNX
// outputs, each at its declared shape.
func ONNXOutputs[T spec.Scalar[T]](m *Model, out spec.Tensor[T]) ([]spec.Tensor[T], error) {
	outs := m.ONNX.Imported.Outputs
	parts, err := Unpack(outs, out.Data)
	if err != nil {
		return nil, err
	}
	ts := make([]spec.Tensor[T], len(parts))
	for k, d := range parts {
		ts[k] = spec.Tensor[T]{Shape: outs[k].Shape.Clone(), Data: d}
	}
	return ts, nil
}

// ReadCotangents reads output cotangent files (none: nil, all ones) and
// packs them into one IR output cotangent: for an IR graph one tensor of
// the output's shape; for an ONNX model one per output, each of the
// output's declared shape, packed as the outputs are. The files are
// appended to m.Files.
func ReadCotangents(m *Model, paths []string) (*irsem.RatTensor, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	outShape := m.Graph.Nodes[m.Graph.OutputID].Shape
	if m.ONNX == nil {
		if len(paths) > 1 {
			return nil, cli.Usagef("grad: --cotangent given %d times: a torchlean.ir.v1 graph has one output", len(paths))
		}
		tf, err := ReadTensorFile("cotangent", paths[0], &m.Files)
		if err != nil {
			return nil, err
		}
		t, err := tf.Rats("cotangent", fmt.Sprintf("node %d (output)", m.Graph.OutputID), outShape)
		if err != nil {
			return nil, err
		}
		return &t, nil
	}
	outs := m.ONNX.Imported.Outputs
	if len(paths) != len(outs) {
		return nil, cli.Usagef("grad: --cotangent given %d times, the model has %d outputs (one each, in order)", len(paths), len(outs))
	}
	ts := make([]irsem.RatTensor, len(paths))
	for k, p := range paths {
		tf, err := ReadTensorFile("cotangent", p, &m.Files)
		if err != nil {
			return nil, err
		}
		if ts[k], err = tf.Rats("cotangent", fmt.Sprintf("output %q", outs[k].Name), outs[k].Shape); err != nil {
			return nil, err
		}
	}
	t, err := pack(outs, ts, outShape)
	if err != nil {
		return nil, cli.Usagef("--cotangent: %v", err)
	}
	return &t, nil
}

// GradResult is a model's gradient: the loss (the output), the input's
// gradient and the named parameter gradients in order.
type GradResult[T spec.Scalar[T]] struct {
	Loss, Input spec.Tensor[T]
	Names       []string
	Params      []spec.Tensor[T]
}

// JSON is the gradient as a tlcheck.grad.v1 document of model m along
// path; its Stats are the caller's.
func (r *GradResult[T]) JSON(m *Model, path irgrad.Path) jsonout.GradDoc {
	doc := jsonout.GradDoc{Header: jsonout.NewHeader(jsonout.KindGrad, nil, m.Files), Scalar: spec.KindOf[T](), Path: string(path),
		Loss: jsonout.TensorOf(r.Loss), Grad: jsonout.GradValues{Input: jsonout.TensorOf(r.Input), Params: map[string]jsonout.Tensor{}}}
	for i, name := range r.Names {
		doc.Grad.Params[name] = jsonout.TensorOf(r.Params[i])
	}
	return doc
}

// Grad differentiates the model along path over T with the output
// cotangent seed (nil: ones). For an ONNX model the const nodes' values
// are differentiated too (irgrad.LowerOptions.ConstParams) and the
// parameters are reported per initializer, summed over its uses
// (onnx.Imported.Initializers); an initializer with no IR use (a shape
// consumed at import) has no gradient and is left out.
func Grad[T spec.Scalar[T]](m *Model, seed *irsem.RatTensor, path irgrad.Path) (*GradResult[T], error) {
	if err := RatBudget(m.Graph, m.Payload, irsem.ConvertTensor[T](m.Input)); err != nil {
		return nil, m.Err(err)
	}
	var s *spec.Tensor[T]
	if seed != nil {
		v := irsem.ConvertTensor[T](*seed)
		s = &v
	}
	opt := irgrad.LowerOptions{ConstParams: m.ONNX != nil}
	gr, params, err := irgrad.GradWith(m.Graph, m.Payload, irsem.ConvertTensor[T](m.Input), s, path, opt)
	if err != nil {
		return nil, m.Err(err)
	}
	res := &GradResult[T]{Loss: gr.Output, Input: gr.Input}
	if m.ONNX == nil {
		for i, prm := range params {
			res.Names = append(res.Names, prm.Name)
			res.Params = append(res.Params, gr.Params[i])
		}
		return res, nil
	}
	type key struct {
		node  int
		field string
	}
	idx := map[key]int{}
	for i, prm := range params {
		idx[key{prm.Node, prm.Field}] = i
	}
	for _, init := range m.ONNX.Imported.Initializers {
		if len(init.Uses) == 0 {
			continue
		}
		sum, err := spec.Zeros[T](init.Shape.Clone())
		if err != nil {
			return nil, err
		}
		for _, u := range init.Uses {
			i, ok := idx[key{u.Node, u.Field}]
			if !ok {
				return nil, cli.Usagef("--onnx %s: initializer %q: its use node %d field %q is no differentiable parameter of the IR graph", m.GraphPath, init.Name, u.Node, u.Field)
			}
			g := gr.Params[i]
			if len(g.Data) != len(sum.Data) {
				return nil, cli.Usagef("--onnx %s: initializer %q has %d elements, its use at node %d field %q %d", m.GraphPath, init.Name, len(sum.Data), u.Node, u.Field, len(g.Data))
			}
			for j := range sum.Data {
				sum.Data[j] = sum.Data[j].Add(g.Data[j])
			}
		}
		res.Names = append(res.Names, init.Name)
		res.Params = append(res.Params, sum)
	}
	return res, nil
}
