package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func runGrad(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("grad")
	if err := addLimits(fs, "grad"); err != nil {
		return cli.BadInput(err)
	}
	mf := addModelFlags(fs, "grad", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	cotangent := listFlag{}
	fs.Var(&cotangent, "cotangent", "output cotangent tensor file (JSON or TensorProto .pb; for an ONNX model with several outputs, one per output in order): the gradient is that of ⟨cotangent, output⟩; none: all ones, the gradient of the sum of the outputs")
	scalar := fs.String("scalar", "auto", "auto (rat when the model is exact over the rationals at this input, else interval enclosures)|rat|interval|f32|f64")
	path := fs.String("path", "tape", "tape (recorded directly on an eager tape)|typed-graph (the lowered typed graph's reverse sweep)")
	asJSON := fs.Bool("json", false, `print a tlcheck.grad.v1 document: {…,"loss":T,"grad":{"input":T,"params":{NAME:T,…}}} (NAME: node<ID>.<field>, or the initializer's name for an ONNX model)`)
	stats := fs.Bool("stats", false, statsUsage)
	if err := cli.Parse(fs, args, 0); err != nil {
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
	files, err := mf.load()
	if err != nil {
		return err
	}
	seed, err := readCotangents(files, cotangent)
	if err != nil {
		return err
	}
	sc, why, auto := *scalar, "", *scalar == scalarAuto
	if auto {
		sc, why = autoScalar(files)
	}
	o := gradOpts{json: *asJSON, stats: *stats, showScalar: auto || files.onnx != nil, why: why}
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

// readCotangents reads the --cotangent files (none: nil, all ones) and
// packs them into one IR output cotangent: for an IR graph one tensor of
// the output's shape; for an ONNX model one per output, each of the
// output's declared shape, packed as the outputs are.
func readCotangents(files *irFiles, paths []string) (*irsem.RatTensor, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	outShape := files.g.Nodes[files.g.OutputID].Shape
	if files.onnx == nil {
		if len(paths) > 1 {
			return nil, cli.Usagef("grad: --cotangent given %d times: a torchlean.ir.v1 graph has one output", len(paths))
		}
		tf, err := readTensorFile("cotangent", paths[0], &files.inputs)
		if err != nil {
			return nil, err
		}
		t, err := tf.rats("cotangent", fmt.Sprintf("node %d (output)", files.g.OutputID), outShape)
		if err != nil {
			return nil, err
		}
		return &t, nil
	}
	outs := files.onnx.im.Outputs
	if len(paths) != len(outs) {
		return nil, cli.Usagef("grad: --cotangent given %d times, the model has %d outputs (one each, in order)", len(paths), len(outs))
	}
	ts := make([]irsem.RatTensor, len(paths))
	for k, p := range paths {
		tf, err := readTensorFile("cotangent", p, &files.inputs)
		if err != nil {
			return nil, err
		}
		if ts[k], err = tf.rats("cotangent", fmt.Sprintf("output %q", outs[k].Name), outs[k].Shape); err != nil {
			return nil, err
		}
	}
	t, err := pack(outs, ts, outShape)
	if err != nil {
		return nil, cli.Usagef("--cotangent: %v", err)
	}
	return &t, nil
}

// gradResult is a gradient as grad reports it: the loss (the output), the
// input's gradient and the named parameter gradients in order.
type gradResult[T spec.Scalar[T]] struct {
	loss, input spec.Tensor[T]
	names       []string
	params      []spec.Tensor[T]
}

// modelGrad differentiates the model along path over T with the output
// cotangent seed (nil: ones). For an ONNX model the const nodes' values
// are differentiated too (irgrad.LowerOptions.ConstParams) and the
// parameters are reported per initializer, summed over its uses
// (Imported.Initializers); an initializer with no IR use (a shape
// consumed at import) has no gradient and is left out.
func modelGrad[T spec.Scalar[T]](fs *irFiles, seed *irsem.RatTensor, path irgrad.Path) (*gradResult[T], error) {
	if err := ratBudget(fs.g, fs.p, irsem.ConvertTensor[T](fs.x)); err != nil {
		return nil, fs.graphErr(err)
	}
	var s *spec.Tensor[T]
	if seed != nil {
		v := irsem.ConvertTensor[T](*seed)
		s = &v
	}
	opt := irgrad.LowerOptions{ConstParams: fs.onnx != nil}
	gr, params, err := irgrad.GradWith(fs.g, fs.p, irsem.ConvertTensor[T](fs.x), s, path, opt)
	if err != nil {
		return nil, fs.graphErr(err)
	}
	res := &gradResult[T]{loss: gr.Output, input: gr.Input}
	if fs.onnx == nil {
		for i, prm := range params {
			res.names = append(res.names, prm.Name)
			res.params = append(res.params, gr.Params[i])
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
	for _, init := range fs.onnx.im.Initializers {
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
				return nil, cli.Usagef("--onnx %s: initializer %q: its use node %d field %q is no differentiable parameter of the IR graph", fs.graphPath, init.Name, u.Node, u.Field)
			}
			g := gr.Params[i]
			if len(g.Data) != len(sum.Data) {
				return nil, cli.Usagef("--onnx %s: initializer %q has %d elements, its use at node %d field %q %d", fs.graphPath, init.Name, len(sum.Data), u.Node, u.Field, len(g.Data))
			}
			for j := range sum.Data {
				sum.Data[j] = sum.Data[j].Add(g.Data[j])
			}
		}
		res.names = append(res.names, init.Name)
		res.params = append(res.params, sum)
	}
	return res, nil
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
func gradAs[T spec.Scalar[T]](fs *irFiles, seed *irsem.RatTensor, path irgrad.Path, o gradOpts) ([]byte, error) {
	res, err := modelGrad[T](fs, seed, path)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if !o.json {
		if o.showScalar {
			b.WriteString(scalarLine(spec.KindOf[T](), o.why))
		}
		if len(res.loss.Data) == 1 && seed == nil {
			fmt.Fprintf(&b, "loss = %s\n", textTensor(res.loss))
		} else {
			// Not one element, or a given cotangent: the gradient is that
			// of ⟨cotangent, output⟩.
			fmt.Fprintf(&b, "output = %s\n", textTensor(res.loss))
			if seed == nil {
				fmt.Fprintf(&b, "cotangent = ones (the gradient of the sum of the outputs)\n")
			} else {
				fmt.Fprintf(&b, "cotangent = %s\n", textTensor(*seed))
			}
		}
		fmt.Fprintf(&b, "grad %s = %s\n", irgrad.InputName, textTensor(res.input))
		for i, name := range res.names {
			fmt.Fprintf(&b, "grad %s = %s\n", name, textTensor(res.params[i]))
		}
		return b.Bytes(), nil
	}
	doc := jsonout.GradDoc{Header: jsonout.NewHeader(jsonout.KindGrad, nil, fs.inputs), Scalar: spec.KindOf[T](), Path: string(path),
		Loss: jsonout.TensorOf(res.loss), Grad: jsonout.GradValues{Input: jsonout.TensorOf(res.input), Params: map[string]jsonout.Tensor{}}}
	for i, name := range res.names {
		doc.Grad.Params[name] = jsonout.TensorOf(res.params[i])
	}
	if doc.Stats, err = runStats(o.stats); err != nil {
		return nil, err
	}
	if err := jsonout.Write(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
