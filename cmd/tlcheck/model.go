package main

import (
	"flag"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/model"
)

// listFlag is a flag that may be repeated (--input a.pb --input b.pb):
// its values in the order given.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// modelFlags name a model and its input, on every command that reads one:
// an IR graph (--graph, --payload) or an ONNX model (--onnx), and the
// input as one or more tensor files (--input, repeatable) or a recorded
// data set directory (--data, ONNX only).
type modelFlags struct {
	cmd                  string
	graph, payload, onnx *string
	inputs               listFlag
	data                 *string
}

// addModelFlags defines the model flags on fs; withInput adds --input and
// --data (plan reads no input).
func addModelFlags(fs *flag.FlagSet, cmd, graphHelp string, withInput bool) *modelFlags {
	mf := &modelFlags{cmd: cmd}
	mf.graph = fs.String("graph", "", graphHelp)
	mf.payload = fs.String("payload", "", "tlcheck.payload.v1 payload file (with --graph)")
	mf.onnx = fs.String("onnx", "", "ONNX model file (model.onnx), imported to the canonical IR in place of --graph/--payload")
	if withInput {
		fs.Var(&mf.inputs, "input", "input tensor file: JSON {\"shape\":[…],\"values\":[…]} or an ONNX TensorProto .pb; repeat it for a model with several inputs, in graph-input order (required unless --data)")
		mf.data = fs.String("data", "", "with --onnx: a recorded data set directory whose input_0.pb, input_1.pb, … are the inputs, in graph-input order")
	} else {
		empty := ""
		mf.data = &empty
	}
	return mf
}

// load reads the model and its input as the flags name them, checked
// against each other before anything runs (model.LoadIR, model.LoadONNX).
func (mf *modelFlags) load() (*model.Model, error) {
	switch {
	case *mf.graph != "" && *mf.onnx != "":
		return nil, cli.Usagef("%s: --graph and --onnx name two models; give one", mf.cmd)
	case *mf.onnx != "":
		if *mf.payload != "" {
			return nil, cli.Usagef("%s: --payload goes with --graph: an ONNX model carries its parameters as initializers", mf.cmd)
		}
		paths, err := mf.inputPaths()
		if err != nil {
			return nil, err
		}
		return model.LoadONNX(*mf.onnx, paths, model.Options{})
	}
	if *mf.data != "" {
		return nil, cli.Usagef("%s: --data is a recorded ONNX data set: it goes with --onnx", mf.cmd)
	}
	if *mf.graph == "" {
		return nil, cli.Usagef("%s: --graph or --onnx is required", mf.cmd)
	}
	if len(mf.inputs) > 1 {
		return nil, cli.Usagef("%s: --input given %d times: a torchlean.ir.v1 graph has one input", mf.cmd, len(mf.inputs))
	}
	in := ""
	if len(mf.inputs) == 1 {
		in = mf.inputs[0]
	}
	return model.LoadIR(mf.cmd, *mf.graph, *mf.payload, in)
}

// loadGraph reads the model alone, for a command that runs no input
// (plan, import): an IR graph and payload, or an ONNX model imported with
// its integer inputs bound to the --input/--data tensors when given
// (an Embedding's indices: without them such a model does not import).
func (mf *modelFlags) loadGraph() (*model.Model, error) {
	switch {
	case *mf.graph != "" && *mf.onnx != "":
		return nil, cli.Usagef("%s: --graph and --onnx name two models; give one", mf.cmd)
	case *mf.onnx != "":
		if *mf.payload != "" {
			return nil, cli.Usagef("%s: --payload goes with --graph: an ONNX model carries its parameters as initializers", mf.cmd)
		}
		var paths []string
		if *mf.data != "" || len(mf.inputs) > 0 {
			var err error
			if paths, err = mf.inputPaths(); err != nil {
				return nil, err
			}
		}
		return model.LoadONNX(*mf.onnx, paths, model.Options{})
	case *mf.graph == "":
		return nil, cli.Usagef("%s: --graph or --onnx is required", mf.cmd)
	case len(mf.inputs) > 0 || *mf.data != "":
		return nil, cli.Usagef("%s: --input and --data bind an ONNX model's integer inputs: they go with --onnx", mf.cmd)
	}
	return model.ReadGraph(*mf.graph, *mf.payload)
}

// inputPaths lists the input files: the --input flags, or --data's
// input_N.pb files.
func (mf *modelFlags) inputPaths() ([]string, error) {
	if *mf.data != "" {
		if len(mf.inputs) > 0 {
			return nil, cli.Usagef("%s: --input and --data both name the inputs; give one", mf.cmd)
		}
		return model.DataFiles("data", *mf.data, "input")
	}
	if len(mf.inputs) == 0 {
		return nil, cli.Usagef("%s: --input (or --data DIR) is required", mf.cmd)
	}
	return mf.inputs, nil
}
