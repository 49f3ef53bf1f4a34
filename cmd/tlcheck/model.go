package main

import (
	"flag"
	"strings"

	"github.com/tlcheck/tlcheck/model"
)

// listFlag is a flag that may be repeated (--input a.pb --input b.pb):
// its values in the order given.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

// addModelFlags defines on fs the flags that name a model and its input,
// on every command that reads one: --graph and --payload or --onnx, and,
// withInput, --input (repeatable) and --data (plan reads no input).
func addModelFlags(fs *flag.FlagSet, cmd, graphHelp string, withInput bool) *model.Spec {
	mf := &model.Spec{Cmd: cmd}
	fs.StringVar(&mf.Graph, "graph", "", graphHelp)
	fs.StringVar(&mf.Payload, "payload", "", "tlcheck.payload.v1 payload file (with --graph)")
	fs.StringVar(&mf.ONNX, "onnx", "", "ONNX model file (model.onnx), imported to the canonical IR in place of --graph/--payload")
	if withInput {
		fs.Var((*listFlag)(&mf.Inputs), "input", "input tensor file: JSON {\"shape\":[…],\"values\":[…]} or an ONNX TensorProto .pb; repeat it for a model with several inputs, in graph-input order (required unless --data)")
		fs.StringVar(&mf.Data, "data", "", "with --onnx: a recorded data set directory whose input_0.pb, input_1.pb, … are the inputs, in graph-input order")
	}
	return mf
}
