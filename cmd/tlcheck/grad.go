package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

func runGrad(args []string, stdout, _ io.Writer) error {
	fs := newFlags("grad")
	mf := addModelFlags(fs.FlagSet, "grad", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	cotangent := listFlag{}
	fs.Var(&cotangent, "cotangent", "output cotangent tensor file (JSON or TensorProto .pb; for an ONNX model with several outputs, one per output in order): the gradient is that of ⟨cotangent, output⟩; none: all ones, the gradient of the sum of the outputs")
	scalar := fs.String("scalar", "auto", "auto (rat when the model is exact over the rationals at this input, else interval enclosures)|rat|interval|f32|f64")
	path := fs.String("path", "tape", "tape (recorded directly on an eager tape)|typed-graph (the lowered typed graph's reverse sweep)")
	asJSON := fs.Bool("json", false, `print a tlcheck.grad.v1 document: {…,"loss":T,"grad":{"input":T,"params":{NAME:T,…}}} (NAME: node<ID>.<field>, or the initializer's name for an ONNX model)`)
	stats := fs.Bool("stats", false, statsUsage)
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if *stats && !*asJSON {
		return cli.Usagef("grad: --stats needs --json")
	}
	if err := oneOf("scalar", *scalar, "auto", "rat", "interval", "f32", "f64"); err != nil {
		return err
	}
	if err := oneOf("path", *path, string(irgrad.PathTape), string(irgrad.PathTypedGraph)); err != nil {
		return err
	}
	files, err := mf.Load()
	if err != nil {
		return err
	}
	seed, err := model.ReadCotangents(files, cotangent)
	if err != nil {
		return err
	}
	sc, why, auto := *scalar, "", *scalar == scalarAuto
	if auto {
		sc, why = files.AutoScalar()
	}
	o := gradOpts{json: *asJSON, stats: *stats, showScalar: auto || files.ONNX != nil, why: why}
	p := irgrad.Path(*path)
	var out []byte
	switch sc {
	case "interval":
		out, err = gradAs[spec.Interval](files, seed, p, o)
	case "f32":
		out, err = gradAs[spec.F32](files, seed, p, o)
	case "f64":
		out, err = gradAs[spec.F64](files, seed, p, o)
	default:
		out, err = gradAs[spec.Rat](files, seed, p, o)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// gradOpts is how grad renders: JSON, or text that begins with the
// scalar line (scalarLine) when --scalar auto chose it or the model is
// an ONNX model.
type gradOpts struct {
	json, showScalar bool
	stats            bool // --stats: peak RSS in the JSON document
	why              string
}

// gradAs differentiates the model over T and renders the loss and every
// gradient.
func gradAs[T spec.Scalar[T]](fs *model.Model, seed *irsem.RatTensor, path irgrad.Path, o gradOpts) ([]byte, error) {
	res, err := model.Grad[T](fs, seed, path)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if !o.json {
		if o.showScalar {
			b.WriteString(scalarLine(spec.KindOf[T](), o.why))
		}
		if len(res.Loss.Data) == 1 && seed == nil {
			fmt.Fprintf(&b, "loss = %s\n", model.Text(res.Loss))
		} else {
			// Not one element, or a given cotangent: the gradient is that
			// of ⟨cotangent, output⟩.
			fmt.Fprintf(&b, "output = %s\n", model.Text(res.Loss))
			if seed == nil {
				fmt.Fprintf(&b, "cotangent = ones (the gradient of the sum of the outputs)\n")
			} else {
				fmt.Fprintf(&b, "cotangent = %s\n", model.Text(*seed))
			}
		}
		fmt.Fprintf(&b, "grad %s = %s\n", irgrad.InputName, model.Text(res.Input))
		for i, name := range res.Names {
			fmt.Fprintf(&b, "grad %s = %s\n", name, model.Text(res.Params[i]))
		}
		return b.Bytes(), nil
	}
	doc := res.JSON(fs, path)
	if doc.Stats, err = runStats(o.stats); err != nil {
		return nil, err
	}
	if err := jsonout.Write(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
