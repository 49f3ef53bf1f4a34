package main

import (
	"bytes"
	"fmt"
	"io"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/spec"
)

func runEval(args []string, stdout, _ io.Writer) error {
	fs := newFlags("eval")
	mf := addModelFlags(fs.FlagSet, "eval", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	scalar := fs.String("scalar", scalarAuto, "auto (rat when the model is exact over the rationals at this input, else interval enclosures; the text output's first line says which)|rat|interval|binary32|f32|f64")
	path := fs.String("path", "ir", "ir (DenoteAll)|forward-graph|tape|typed-graph (tape and typed-graph record registry primitives only: a conv or pool node needs ir or forward-graph)")
	all := fs.Bool("all", false, "print every node's value, not only the output's")
	asJSON := fs.Bool("json", false, "print JSON")
	stats := fs.Bool("stats", false, statsUsage)
	if err := fs.parse(args, 0); err != nil {
		return err
	}
	if *stats && !*asJSON {
		return cli.Usagef("eval: --stats needs --json")
	}
	if err := oneOf("scalar", *scalar, scalarAuto, "rat", "interval", "binary32", "f32", "f64"); err != nil {
		return err
	}
	if err := oneOf("path", *path, model.EvalPaths...); err != nil {
		return err
	}
	files, err := mf.Load()
	if err != nil {
		return err
	}
	o := evalOpts{path: *path, all: *all, json: *asJSON, stats: *stats}
	sc := *scalar
	if sc == scalarAuto {
		sc, o.why = files.AutoScalar()
		o.showScalar = true
	}
	var out []byte
	switch sc {
	case "interval":
		out, err = evalAs[spec.Interval](files, o)
	case "binary32":
		out, err = evalAs[spec.Binary32](files, o)
	case "f32":
		out, err = evalAs[spec.F32](files, o)
	case "f64":
		out, err = evalAs[spec.F64](files, o)
	default:
		out, err = evalAs[spec.Rat](files, o)
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// evalOpts is how eval renders; showScalar begins the text with the
// scalar line (scalarLine) that --scalar auto chose, why being its reason
// for interval.
type evalOpts struct {
	path                  string
	all, json, showScalar bool
	stats                 bool // --stats: peak RSS in the JSON document
	why                   string
}

// evalAs evaluates the graph over T and renders the result.
func evalAs[T spec.Scalar[T]](fs *model.Model, o evalOpts) ([]byte, error) {
	vals, err := model.Values(fs.Graph, fs.Payload, irsem.ConvertTensor[T](fs.Input), o.path)
	if err != nil {
		return nil, fs.Err(err)
	}
	var b bytes.Buffer
	out := fs.Graph.OutputID
	if o.json {
		doc := model.EvalJSON(fs, vals, o.path, o.all)
		if doc.Stats, err = runStats(o.stats); err != nil {
			return nil, err
		}
		if err := jsonout.Write(&b, doc); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	if o.showScalar {
		b.WriteString(scalarLine(spec.KindOf[T](), o.why))
	}
	if o.all {
		for i, v := range vals {
			fmt.Fprintf(&b, "node %d (%s) %v = %s\n", i, fs.Graph.Nodes[i].Kind.Op, fs.Graph.Nodes[i].Shape, model.Text(v))
		}
	}
	fmt.Fprintf(&b, "output node %d (%s) %v = %s\n", out, fs.Graph.Nodes[out].Kind.Op, fs.Graph.Nodes[out].Shape, model.Text(vals[out]))
	if fs.ONNX != nil && len(fs.ONNX.Imported.Outputs) > 1 {
		// The IR output packs several ONNX outputs: show each.
		parts, err := model.ONNXOutputs(fs, vals[out])
		if err != nil {
			return nil, fs.Err(err)
		}
		for k, v := range parts {
			fmt.Fprintf(&b, "onnx output %q %v = %s\n", fs.ONNX.Imported.Outputs[k].Name, v.Shape, model.Text(v))
		}
	}
	return b.Bytes(), nil
}
