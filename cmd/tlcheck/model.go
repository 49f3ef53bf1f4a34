package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
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

// onnxModel is an imported ONNX model with what the commands need about it.
type onnxModel struct {
	path  string
	model *onnx.Model
	im    *onnx.Imported
	// specials are the IEEE statuses of the outputs on the inputs read
	// (onnx.Imported.Analyze; compare only, nil otherwise).
	specials *onnx.Specials
}

// where names the ONNX node IR node id came from ("" when none: an input
// or a packing node).
func (om *onnxModel) where(id int) string {
	if om == nil || id < 0 || id >= len(om.im.Origin) {
		return ""
	}
	return om.im.Origin[id]
}

// load reads the model and its input as the flags name them, checked
// against each other before anything runs (see loadIR and loadONNX).
func (mf *modelFlags) load() (*irFiles, error) {
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
		return loadONNX(mf.cmd, *mf.onnx, paths)
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
	return loadIR(mf.cmd, *mf.graph, *mf.payload, in)
}

// loadGraph reads the model alone, for a command that runs no input
// (plan, import): an IR graph and payload, or an ONNX model imported with
// its integer inputs bound to the --input/--data tensors when given
// (an Embedding's indices: without them such a model does not import).
func (mf *modelFlags) loadGraph() (*irFiles, error) {
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
		return loadONNX(mf.cmd, *mf.onnx, paths)
	case *mf.graph == "":
		return nil, cli.Usagef("%s: --graph or --onnx is required", mf.cmd)
	case len(mf.inputs) > 0 || *mf.data != "":
		return nil, cli.Usagef("%s: --input and --data bind an ONNX model's integer inputs: they go with --onnx", mf.cmd)
	}
	fs := &irFiles{graphPath: *mf.graph, payloadPath: *mf.payload}
	var err error
	if fs.g, err = readDoc("graph", *mf.graph, irsem.ReadGraph, &fs.inputs); err != nil {
		return nil, err
	}
	if *mf.payload != "" {
		if fs.p, err = readDoc("payload", *mf.payload, irsem.ReadPayload, &fs.inputs); err != nil {
			return nil, err
		}
		if err := irsem.CheckPayload(fs.g, fs.p); err != nil {
			return nil, cli.Usagef("--payload %s: %v", *mf.payload, err)
		}
	}
	return fs, nil
}

// inputPaths lists the input files: the --input flags, or --data's
// input_N.pb files.
func (mf *modelFlags) inputPaths() ([]string, error) {
	if *mf.data != "" {
		if len(mf.inputs) > 0 {
			return nil, cli.Usagef("%s: --input and --data both name the inputs; give one", mf.cmd)
		}
		return dataFiles("data", *mf.data, "input")
	}
	if len(mf.inputs) == 0 {
		return nil, cli.Usagef("%s: --input (or --data DIR) is required", mf.cmd)
	}
	return mf.inputs, nil
}

// dataFiles lists DIR/PREFIX_0.pb, PREFIX_1.pb, … up to the first index
// that does not exist; at least the first must.
func dataFiles(flagName, dir, prefix string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		why := "not a directory"
		if err != nil {
			why = statWhy(err)
		}
		return nil, cli.Usagef("--%s %s: %s", flagName, dir, why)
	}
	var out []string
	for i := 0; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("%s_%d.pb", prefix, i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		out = append(out, p)
	}
	if len(out) == 0 && prefix == "input" {
		return nil, cli.Usagef("--%s %s: no %s_0.pb in the directory", flagName, dir, prefix)
	}
	return out, nil
}

func statWhy(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// hashFile is the SHA-256 of a file's bytes (for the --json inputs list).
func hashFile(path string) (string, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// tensorFile is one tensor file as read: an ONNX TensorProto (pb) or a
// JSON tensor (js).
type tensorFile struct {
	path string
	pb   *onnx.Tensor
	js   *irsem.RatTensor
}

// isJSON says whether a file holds a JSON tensor rather than a
// TensorProto: its first non-space byte is '{' (a TensorProto's first
// byte is a field key, never '{' = field 15 wire type 3, which
// TensorProto does not use).
func isJSON(path string) (bool, error) {
	f, err := safeio.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	for {
		b, err := r.ReadByte()
		if err != nil {
			return false, nil
		}
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return b == '{', nil
	}
}

// readTensorFile reads one tensor file named by flag role, appending it
// with its hash to *inputs.
func readTensorFile(role, path string, inputs *[]jsonout.Input) (tensorFile, error) {
	js, err := isJSON(path)
	if err != nil {
		return tensorFile{}, cli.Usagef("%s %s: cannot read: %s", argRef(role), path, statWhy(err))
	}
	if js {
		t, err := readDoc(role, path, irsem.ReadTensor, inputs)
		if err != nil {
			return tensorFile{}, err
		}
		return tensorFile{path: path, js: &t}, nil
	}
	// Read once: the digest recorded is of the very bytes decoded.
	data, err := safeio.ReadFile(path, limits.Current().ONNXBytes)
	if err != nil {
		// onnx.ReadTensor words the refusal (a size over onnx-bytes, a
		// special file) as every other TensorProto reader does.
		if _, rerr := onnx.ReadTensor(path); rerr != nil {
			return tensorFile{}, cli.Usagef("%s: %v", argRef(role), rerr)
		}
		return tensorFile{}, cli.Usagef("%s %s: cannot read: %s", argRef(role), path, statWhy(err))
	}
	t, err := onnx.DecodeTensor(data)
	if err != nil {
		var oe *onnx.Error
		if errors.As(err, &oe) && oe.Path == "" {
			oe.Path = path // as ReadTensor names it
		}
		return tensorFile{}, cli.Usagef("%s: %v", argRef(role), err)
	}
	h := jsonout.SHA256(data)
	if inputs != nil {
		*inputs = append(*inputs, jsonout.Input{Role: role, Path: path, SHA256: h})
	}
	return tensorFile{path: path, pb: t}, nil
}

// rats returns the exact value of a tensor file, checked against the
// shape and element type the model declares for it (what names it: the
// graph input or output).
func (tf tensorFile) rats(role, what string, shape spec.Shape) (irsem.RatTensor, error) {
	if tf.js != nil {
		if !tf.js.Shape.Equal(shape) {
			return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: shape mismatch: the model declares %v, the tensor has %v", role, tf.path, what, shape, tf.js.Shape)
		}
		return *tf.js, nil
	}
	if !tf.pb.DataType.IsFloat() {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: data type %v is not FLOAT or DOUBLE", role, tf.path, what, tf.pb.DataType)
	}
	got, err := tf.pb.Shape()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.path, what, err)
	}
	if !got.Equal(shape) {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: shape mismatch: the model declares %v, the tensor has %v", role, tf.path, what, shape, got)
	}
	vs, err := tf.pb.Rats()
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.path, what, err)
	}
	t, err := spec.NewTensor(shape.Clone(), vs)
	if err != nil {
		return irsem.RatTensor{}, cli.Usagef("--%s %s: %s: %v", role, tf.path, what, err)
	}
	return t, nil
}

// pack places the tensors of the model's values vals (the float inputs,
// or the outputs) into the one IR tensor of shape ir, as the importer
// packs them (contract: one value is the IR tensor itself; several are
// the rank-1 concatenation of their flattened values, value k from
// vals[k].Offset on).
func pack(vals []onnx.IOValue, ts []irsem.RatTensor, ir spec.Shape) (irsem.RatTensor, error) {
	if len(vals) == 1 {
		t := ts[0]
		t.Shape = ir.Clone()
		if t.Shape.Size() != len(t.Data) {
			return irsem.RatTensor{}, fmt.Errorf("%s: %d values for the IR shape %v", vals[0].Name, len(t.Data), ir)
		}
		return t, nil
	}
	out, err := spec.Zeros[spec.Rat](ir.Clone())
	if err != nil {
		return irsem.RatTensor{}, err
	}
	for k, v := range vals {
		if v.Offset < 0 || v.Offset+len(ts[k].Data) > len(out.Data) {
			return irsem.RatTensor{}, fmt.Errorf("%s: offset %d and %d values do not fit the IR shape %v", v.Name, v.Offset, len(ts[k].Data), ir)
		}
		copy(out.Data[v.Offset:], ts[k].Data)
	}
	return out, nil
}

// unpack splits an IR tensor into the model's values (see pack).
func unpack[T any](vals []onnx.IOValue, data []T) ([][]T, error) {
	out := make([][]T, len(vals))
	for k, v := range vals {
		n := v.Shape.Size()
		off := v.Offset
		if len(vals) == 1 {
			off = 0
		}
		if off < 0 || off+n > len(data) {
			return nil, fmt.Errorf("output %s: offset %d and %d values do not fit %d values", v.Name, off, n, len(data))
		}
		out[k] = data[off : off+n]
	}
	return out, nil
}

// importONNX reads and imports an ONNX model. files holds one tensor per
// runtime input (onnx.RuntimeInputs, the N of input_N.pb), or none: the
// integer ones are bound at import (Embedding indices), the float ones fix
// the shapes of symbolic dimensions (onnx.OptionsFor); a model with
// integer inputs imported without them is refused by the importer, naming
// the input.
func importONNX(cmd, path string, files []tensorFile) (*onnxModel, error) {
	m, err := onnx.ReadModel(path)
	if err != nil {
		return nil, cli.Usagef("--onnx: %v", err)
	}
	var opts onnx.Options
	if len(files) > 0 {
		rin := onnx.RuntimeInputs(m)
		if len(files) != len(rin) {
			names := make([]string, len(rin))
			for i, v := range rin {
				names[i] = strconvQuote(v.Name)
			}
			return nil, cli.Usagef("--onnx %s: the model has %d runtime inputs (%s), %d input files given", path, len(rin), strings.Join(names, ", "), len(files))
		}
		ts := make([]*onnx.Tensor, len(files))
		for k, v := range rin {
			switch {
			case files[k].pb != nil:
				ts[k] = files[k].pb
			case v.ElemType.IsFloat():
				// A JSON tensor: only its shape matters here.
				dims := make([]int64, len(files[k].js.Shape))
				for i, d := range files[k].js.Shape {
					dims[i] = int64(d)
				}
				ts[k] = &onnx.Tensor{Name: v.Name, Dims: dims, DataType: v.ElemType}
			default:
				return nil, cli.Usagef("--input %s: graph input %q is of type %v: give it as a TensorProto .pb", files[k].path, v.Name, v.ElemType)
			}
		}
		if opts, _, err = onnx.OptionsFor(m, ts); err != nil {
			return nil, cli.Usagef("--onnx %s: %v", path, withPath(err, path))
		}
		if cmd == "compare" {
			// compare judges one recorded data set: the order of a float
			// input's elements is decided on its recorded value
			// (onnx.Options.Values).
			opts.Values = map[string]*onnx.Tensor{}
			for k, v := range rin {
				if v.ElemType.IsFloat() && files[k].pb != nil {
					opts.Values[v.Name] = files[k].pb
				}
			}
		}
	}
	im, err := onnx.Import(m, opts)
	if err != nil {
		return nil, cli.Usagef("--onnx: %v", withPath(err, path))
	}
	return &onnxModel{path: path, model: m, im: im}, nil
}

// withPath puts the model's path into an importer error that lacks it.
func withPath(err error, path string) error {
	var ie *onnx.ImportError
	if errors.As(err, &ie) && ie.Path == "" {
		c := *ie
		c.Path = path
		return &c
	}
	return err
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }

// loadONNX imports an ONNX model and packs its float inputs into the IR
// input, each checked against the element type and shape the import
// reports for it: TensorProto inputs through the importer's own
// PackInputs; when a JSON tensor is among them, its exact values are
// placed at the input's offset as PackInputs places a tensor's.
func loadONNX(cmd, path string, inputPaths []string) (*irFiles, error) {
	fs := &irFiles{graphPath: path}
	h, err := hashFile(path)
	if err != nil {
		return nil, cli.Usagef("--onnx %s: cannot read: %s", path, statWhy(err))
	}
	fs.inputs = append(fs.inputs, jsonout.Input{Role: "onnx", Path: path, SHA256: h})
	var files []tensorFile
	for _, p := range inputPaths {
		tf, err := readTensorFile("input", p, &fs.inputs)
		if err != nil {
			return nil, err
		}
		files = append(files, tf)
	}
	om, err := importONNX(cmd, path, files)
	if err != nil {
		return nil, err
	}
	// The digest is of the bytes imported: the file is hashed again after
	// the import and must not have changed (a certificate records it).
	if h2, err := hashFile(path); err != nil || h2 != h {
		return nil, cli.Usagef("--onnx %s: the file changed while it was read (SHA-256 %s before the import, %s after)", path, h, h2)
	}
	fs.onnx = om
	fs.g, fs.p = om.im.Graph, om.im.Payload
	if len(inputPaths) == 0 {
		return fs, nil
	}
	in := &fs.g.Nodes[fs.g.InputID]
	allPB := true
	for _, iv := range om.im.Inputs {
		if iv.Index < 0 || iv.Index >= len(files) {
			return nil, cli.Usagef("--onnx %s: graph input %q: runtime input index %d out of range", path, iv.Name, iv.Index)
		}
		allPB = allPB && files[iv.Index].pb != nil
	}
	if allPB {
		ts := make([]*onnx.Tensor, len(om.im.Inputs))
		for k, iv := range om.im.Inputs {
			ts[k] = files[iv.Index].pb
		}
		if cmd == "compare" {
			// NaN, ±∞ and out-of-domain input elements: judged by their
			// IEEE results, the IR evaluated with them replaced.
			if om.specials, ts, err = om.im.Analyze(om.model, ts); err != nil {
				return nil, cli.Usagef("--onnx %s: %v", path, err)
			}
		}
		if fs.x, err = om.im.PackInputs(ts); err != nil {
			return nil, cli.Usagef("--input %s: %v", files[om.im.Inputs[0].Index].path, err)
		}
	} else {
		floats := make([]irsem.RatTensor, len(om.im.Inputs))
		for k, iv := range om.im.Inputs {
			if floats[k], err = files[iv.Index].rats("input", fmt.Sprintf("graph input %q", iv.Name), iv.Shape); err != nil {
				return nil, err
			}
		}
		if fs.x, err = pack(om.im.Inputs, floats, in.Shape); err != nil {
			return nil, cli.Usagef("--onnx %s: packing the inputs: %v", path, err)
		}
	}
	if !fs.x.Shape.Equal(in.Shape) {
		return nil, cli.Usagef("--onnx %s: the packed input has shape %v, the IR input %v", path, fs.x.Shape, in.Shape)
	}
	fs.inputPath = strings.Join(inputPaths, ",")
	return fs, nil
}

// modelErr attributes an evaluation error (which names the IR node) to
// the model file: for an ONNX model, the ONNX node the IR node came from
// is named first. It is bad input, exit 2.
func (fs *irFiles) modelErr(err error) error {
	if fs.onnx == nil {
		return cli.Usagef("--graph %s: %v", fs.graphPath, err)
	}
	var ne *spec.NodeError
	if errors.As(err, &ne) && ne.Node >= 0 {
		if w := fs.onnx.where(ne.Node); w != "" {
			return cli.Usagef("--onnx %s: %s: IR %v", fs.graphPath, w, err)
		}
	}
	return cli.Usagef("--onnx %s: %v", fs.graphPath, err)
}

// gradInits lists the initializers grad reports a gradient for: those
// with at least one use as IR data.
func (om *onnxModel) gradInits() []string {
	var out []string
	for _, in := range om.im.Initializers {
		if len(in.Uses) > 0 {
			out = append(out, in.Name)
		}
	}
	return out
}
