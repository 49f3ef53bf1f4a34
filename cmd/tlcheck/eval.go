package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// irFiles is what eval and grad read: a graph, its optional payload and an
// input tensor, each checked against the others before anything runs, so
// that an error names the file at fault.
type irFiles struct {
	graphPath, payloadPath, inputPath string
	g                                 *irsem.Graph
	p                                 *irsem.Payload
	x                                 irsem.RatTensor
	// onnx is the imported ONNX model (--onnx), nil for an IR graph.
	onnx *onnxModel
	// inputs are the files read, in order, with the SHA-256 of their bytes.
	inputs []jsonout.Input
}

// openDoc opens a document named by a flag, or explains why it cannot.
func openDoc(flagName, path string) (*os.File, error) {
	f, err := safeio.Open(path) // only a regular file: a FIFO or device is refused unopened
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, cli.Usagef("%s %s: cannot read: %v", argRef(flagName), path, err)
	}
	return f, nil
}

// argTensor is the role of the tensor command's positional file: its
// errors start "tensor PATH:", since no flag names it.
const argTensor = "tensor"

// argRef is how an error names the argument of a role: "--role", or
// "tensor" for the tensor command's file.
func argRef(role string) string {
	if role == argTensor {
		return argTensor
	}
	return "--" + role
}

// readDoc reads and decodes one document named by a flag, and appends
// the file, with the SHA-256 of its bytes, to *inputs (when not nil). The
// decoders are strict (trailing data is an error), so a document that
// decodes was read to its end and the hash covers the whole file.
func readDoc[V any](flagName, path string, read func(io.Reader) (V, error), inputs *[]jsonout.Input) (V, error) {
	var zero V
	f, err := openDoc(flagName, path)
	if err != nil {
		return zero, err
	}
	defer f.Close()
	h := jsonout.NewHashingReader(f)
	v, err := read(h)
	if err != nil {
		return zero, cli.Usagef("%s %s: %v", argRef(flagName), path, err)
	}
	if inputs != nil {
		*inputs = append(*inputs, jsonout.Input{Role: flagName, Path: path, SHA256: h.Sum()})
	}
	return v, nil
}

// loadIR reads --graph, --payload (optional) and --input and checks them
// against each other: the payload against the graph, the input's shape
// against the input node's. The input is a JSON tensor or an ONNX
// TensorProto .pb (readTensorFile): a .pb's FLOAT or DOUBLE elements are
// dyadic rationals, taken exactly.
func loadIR(cmd, graphPath, payloadPath, inputPath string) (*irFiles, error) {
	if graphPath == "" {
		return nil, cli.Usagef("%s: --graph is required", cmd)
	}
	if inputPath == "" {
		return nil, cli.Usagef("%s: --input is required", cmd)
	}
	fs := &irFiles{graphPath: graphPath, payloadPath: payloadPath, inputPath: inputPath}
	var err error
	if fs.g, err = readDoc("graph", graphPath, irsem.ReadGraph, &fs.inputs); err != nil {
		return nil, err
	}
	if payloadPath != "" {
		if fs.p, err = readDoc("payload", payloadPath, irsem.ReadPayload, &fs.inputs); err != nil {
			return nil, err
		}
	}
	if err := irsem.CheckPayload(fs.g, fs.p); err != nil {
		if payloadPath == "" {
			return nil, cli.Usagef("--graph %s: %v (no --payload given)", graphPath, err)
		}
		return nil, cli.Usagef("--payload %s: %v", payloadPath, err)
	}
	tf, err := readTensorFile("input", inputPath, &fs.inputs)
	if err != nil {
		return nil, err
	}
	in := &fs.g.Nodes[fs.g.InputID]
	if tf.js != nil && !tf.js.Shape.Equal(in.Shape) {
		return nil, cli.Usagef("--input %s: node %d (input): shape mismatch: the graph's input has shape %v, the tensor %v", inputPath, in.ID, in.Shape, tf.js.Shape)
	}
	if fs.x, err = tf.rats("input", fmt.Sprintf("node %d (input)", in.ID), in.Shape); err != nil {
		return nil, err
	}
	return fs, nil
}

// graphErr attributes an evaluation error (which names the node) to the
// model file (modelErr); it is bad input, exit 2.
func (fs *irFiles) graphErr(err error) error { return fs.modelErr(err) }

// evalPaths are the execution paths of eval.
var evalPaths = []string{"ir", "forward-graph", "tape", "typed-graph"}

func runEval(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("eval")
	if err := addLimits(fs, "eval"); err != nil {
		return cli.BadInput(err)
	}
	mf := addModelFlags(fs, "eval", "torchlean.ir.v1 or tlcheck.ir.v1 graph file (this or --onnx is required)", true)
	scalar := fs.String("scalar", scalarAuto, "auto (rat when the model is exact over the rationals at this input, else interval enclosures; the text output's first line says which)|rat|interval|binary32|f32|f64")
	path := fs.String("path", "ir", "ir (DenoteAll)|forward-graph|tape|typed-graph (tape and typed-graph record registry primitives only: a conv or pool node needs ir or forward-graph)")
	all := fs.Bool("all", false, "print every node's value, not only the output's")
	asJSON := fs.Bool("json", false, "print JSON")
	stats := fs.Bool("stats", false, statsUsage)
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *stats && !*asJSON {
		return cli.Usagef("eval: --stats needs --json")
	}
	if err := oneOf("scalar", *scalar, scalarAuto, "rat", "interval", "binary32", "f32", "f64"); err != nil {
		return err
	}
	if err := oneOf("path", *path, evalPaths...); err != nil {
		return err
	}
	files, err := mf.load()
	if err != nil {
		return err
	}
	o := evalOpts{path: *path, all: *all, json: *asJSON, stats: *stats}
	sc := *scalar
	if sc == scalarAuto {
		sc, o.why = autoScalar(files)
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

// ratBudget runs the IR semantics over Rat first when T is Rat and path
// is another one, so that the rational bit budget of the evaluation
// (limits.RatBitsTotal, counted by irsem.DenoteAll) is enforced on every
// path: it returns the IR semantics' limits error, and nil otherwise
// (every other failure is left to the path itself, which reports it).
func ratBudget[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T]) error {
	r, ok := any(x).(spec.Tensor[spec.Rat])
	if !ok {
		return nil
	}
	if _, err := irsem.DenoteAll(g, p, r); limits.IsLimit(err) {
		return err
	}
	return nil
}

// evalValues computes every node's value along path over T.
func evalValues[T spec.Scalar[T]](g *irsem.Graph, p *irsem.Payload, x spec.Tensor[T], path string) ([]spec.Tensor[T], error) {
	if path != "ir" {
		if err := ratBudget(g, p, x); err != nil {
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

// evalAs evaluates the graph over T and renders the result.
func evalAs[T spec.Scalar[T]](fs *irFiles, o evalOpts) ([]byte, error) {
	vals, err := evalValues(fs.g, fs.p, irsem.ConvertTensor[T](fs.x), o.path)
	if err != nil {
		return nil, fs.graphErr(err)
	}
	var b bytes.Buffer
	out := fs.g.OutputID
	if o.json {
		node := func(id int) jsonout.EvalNode {
			return jsonout.EvalNode{ID: id, Kind: string(fs.g.Nodes[id].Kind.Op), Value: jsonout.TensorOf(vals[id])}
		}
		doc := jsonout.EvalDoc{Header: jsonout.NewHeader(jsonout.KindEval, nil, fs.inputs), Scalar: spec.KindOf[T](), Path: o.path, Output: node(out)}
		if o.all {
			doc.Nodes = make([]jsonout.EvalNode, len(vals))
			for i := range vals {
				doc.Nodes[i] = node(i)
			}
		}
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
			fmt.Fprintf(&b, "node %d (%s) %v = %s\n", i, fs.g.Nodes[i].Kind.Op, fs.g.Nodes[i].Shape, textTensor(v))
		}
	}
	fmt.Fprintf(&b, "output node %d (%s) %v = %s\n", out, fs.g.Nodes[out].Kind.Op, fs.g.Nodes[out].Shape, textTensor(vals[out]))
	if fs.onnx != nil && len(fs.onnx.im.Outputs) > 1 {
		// The IR output packs several ONNX outputs: show each.
		parts, err := onnxOutputs(fs, vals[out])
		if err != nil {
			return nil, fs.graphErr(err)
		}
		for k, v := range parts {
			fmt.Fprintf(&b, "onnx output %q %v = %s\n", fs.onnx.im.Outputs[k].Name, v.Shape, textTensor(v))
		}
	}
	return b.Bytes(), nil
}

// onnxOutputs splits the IR output of an imported model into its ONNX
// outputs, each at its declared shape.
func onnxOutputs[T spec.Scalar[T]](fs *irFiles, out spec.Tensor[T]) ([]spec.Tensor[T], error) {
	parts, err := unpack(fs.onnx.im.Outputs, out.Data)
	if err != nil {
		return nil, err
	}
	ts := make([]spec.Tensor[T], len(parts))
	for k, d := range parts {
		ts[k] = spec.Tensor[T]{Shape: fs.onnx.im.Outputs[k].Shape.Clone(), Data: d}
	}
	return ts, nil
}
