package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

func runGrad(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("grad")
	if err := limits.AddFlags(fs); err != nil {
		return cli.BadInput(err)
	}
	graph := fs.String("graph", "", "torchlean.ir.v1 graph file with a single-element output (required)")
	payload := fs.String("payload", "", "tlcheck.payload.v1 payload file")
	input := fs.String("input", "", "input tensor file {\"shape\":[…],\"values\":[…]} (required)")
	scalar := fs.String("scalar", "rat", "rat|f32|f64")
	path := fs.String("path", "tape", "tape (recorded directly on an eager tape)|typed-graph (the lowered typed graph's reverse sweep)")
	asJSON := fs.Bool("json", false, `print a tlcheck.grad.v1 document: {…,"loss":T,"grad":{"input":T,"params":{NAME:T,…}}}`)
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if err := oneOf("scalar", *scalar, "rat", "f32", "f64"); err != nil {
		return err
	}
	if err := oneOf("path", *path, string(irgrad.PathTape), string(irgrad.PathTypedGraph)); err != nil {
		return err
	}
	files, err := loadIR("grad", *graph, *payload, *input)
	if err != nil {
		return err
	}
	p := irgrad.Path(*path)
	var out []byte
	switch *scalar {
	case "f32":
		out, err = gradAs[spec.F32](files, p, *asJSON)
	case "f64":
		out, err = gradAs[spec.F64](files, p, *asJSON)
	default:
		out, err = gradAs[spec.Rat](files, p, *asJSON)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// gradAs lowers the graph over T, differentiates its single-element
// output along path and renders the loss and every gradient.
func gradAs[T spec.Scalar[T]](fs *irFiles, path irgrad.Path, asJSON bool) ([]byte, error) {
	if err := ratBudget(fs.g, fs.p, irsem.ConvertTensor[T](fs.x)); err != nil {
		return nil, fs.graphErr(err)
	}
	gr, params, err := irgrad.Grad(fs.g, fs.p, irsem.ConvertTensor[T](fs.x), path)
	if err != nil {
		return nil, fs.graphErr(err)
	}
	var b bytes.Buffer
	if !asJSON {
		fmt.Fprintf(&b, "loss = %s\n", gr.Output)
		fmt.Fprintf(&b, "grad %s = %s\n", irgrad.InputName, gr.Input)
		for i, prm := range params {
			fmt.Fprintf(&b, "grad %s = %s\n", prm.Name, gr.Params[i])
		}
		return b.Bytes(), nil
	}
	doc := jsonout.GradDoc{Header: jsonout.NewHeader(jsonout.KindGrad, nil, fs.inputs), Scalar: spec.KindOf[T](), Path: string(path),
		Loss: jsonout.TensorOf(gr.Output), Grad: jsonout.GradValues{Input: jsonout.TensorOf(gr.Input), Params: map[string]jsonout.Tensor{}}}
	for i, prm := range params {
		doc.Grad.Params[prm.Name] = jsonout.TensorOf(gr.Params[i])
	}
	if err := jsonout.Write(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
