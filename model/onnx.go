package model

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/onnx"
)

// Options say how LoadONNX reads the inputs.
type Options struct {
	// Recorded: the inputs are one recorded data set that is judged
	// (compare): the order of a float input's elements is decided on its
	// recorded value (onnx.Options.Values), and NaN, ±∞ and out-of-domain
	// input elements are analysed (ONNX.Specials), the IR evaluated with
	// them replaced.
	Recorded bool
}

// LoadONNX imports an ONNX model and packs its float inputs into the IR
// input, each checked against the element type and shape the import
// reports for it: TensorProto inputs through the importer's own
// PackInputs; when a JSON tensor is among them, its exact values are
// placed at the input's offset as PackInputs places a tensor's.
//
// inputPaths holds one tensor file per runtime input (onnx.RuntimeInputs,
// the N of input_N.pb), or none: then the model is imported alone and
// Input is left empty. The integer inputs are bound at import (Embedding
// indices), the float ones fix the shapes of symbolic dimensions
// (onnx.OptionsFor); a model with integer inputs imported without them is
// refused by the importer, naming the input.
func LoadONNX(path string, inputPaths []string, o Options) (*Model, error) {
	m := &Model{GraphPath: path}
	h, err := HashFile(path)
	if err != nil {
		return nil, cli.Usagef("--onnx %s: cannot read: %s", path, statWhy(err))
	}
	m.Files = append(m.Files, jsonout.Input{Role: "onnx", Path: path, SHA256: h})
	var files []TensorFile
	for _, p := range inputPaths {
		tf, err := ReadTensorFile("input", p, &m.Files)
		if err != nil {
			return nil, err
		}
		files = append(files, tf)
	}
	om, err := importONNX(path, files, o)
	if err != nil {
		return nil, err
	}
	// The digest is of the bytes imported: the file is hashed again after
	// the import and must not have changed (a certificate records it).
	if h2, err := HashFile(path); err != nil || h2 != h {
		return nil, cli.Usagef("--onnx %s: the file changed while it was read (SHA-256 %s before the import, %s after)", path, h, h2)
	}
	m.ONNX = om
	m.Graph, m.Payload = om.Imported.Graph, om.Imported.Payload
	if len(inputPaths) > 0 {
		if m.Input, err = packInputs(m, files, o); err != nil {
			return nil, err
		}
	}
	if nr := om.Imported.NonReal(); nr != "" && om.Specials == nil {
		// The IR computes 0 there: only compare on recorded .pb inputs
		// judges such an element, by its special (onnx.Imported.Analyze).
		return nil, cli.Usagef("--onnx %s: %s: only compare with recorded TensorProto inputs judges it", path, nr)
	}
	if len(inputPaths) == 0 {
		return m, nil
	}
	m.InputPath = strings.Join(inputPaths, ",")
	return m, nil
}

// packInputs packs the input files into the IR input of m (LoadONNX).
func packInputs(m *Model, files []TensorFile, o Options) (irsem.RatTensor, error) {
	om, path := m.ONNX, m.GraphPath
	in := &m.Graph.Nodes[m.Graph.InputID]
	allPB := true
	for _, iv := range om.Imported.Inputs {
		if iv.Index < 0 || iv.Index >= len(files) {
			return irsem.RatTensor{}, cli.Usagef("--onnx %s: graph input %q: runtime input index %d out of range", path, iv.Name, iv.Index)
		}
		allPB = allPB && files[iv.Index].PB != nil
	}
	var x irsem.RatTensor
	var err error
	if allPB {
		ts := make([]*onnx.Tensor, len(om.Imported.Inputs))
		for k, iv := range om.Imported.Inputs {
			ts[k] = files[iv.Index].PB
		}
		if o.Recorded {
			// NaN, ±∞ and out-of-domain input elements: judged by their
			// IEEE results, the IR evaluated with them replaced.
			if om.Specials, ts, err = om.Imported.Analyze(om.Model, ts); err != nil {
				return irsem.RatTensor{}, cli.Usagef("--onnx %s: %v", path, err)
			}
		}
		if x, err = om.Imported.PackInputs(ts); err != nil {
			return irsem.RatTensor{}, cli.Usagef("--input %s: %v", files[om.Imported.Inputs[0].Index].Path, err)
		}
	} else {
		floats := make([]irsem.RatTensor, len(om.Imported.Inputs))
		for k, iv := range om.Imported.Inputs {
			if floats[k], err = files[iv.Index].Rats("input", fmt.Sprintf("graph input %q", iv.Name), iv.Shape); err != nil {
				return irsem.RatTensor{}, err
			}
		}
		if x, err = pack(om.Imported.Inputs, floats, in.Shape); err != nil {
			return irsem.RatTensor{}, cli.Usagef("--onnx %s: packing the inputs: %v", path, err)
		}
	}
	if !x.Shape.Equal(in.Shape) {
		return irsem.RatTensor{}, cli.Usagef("--onnx %s: the packed input has shape %v, the IR input %v", path, x.Shape, in.Shape)
	}
	return x, nil
}

// importONNX reads and imports an ONNX model with its runtime input
// files (LoadONNX).
func importONNX(path string, files []TensorFile, o Options) (*ONNX, error) {
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
				names[i] = fmt.Sprintf("%q", v.Name)
			}
			return nil, cli.Usagef("--onnx %s: the model has %d runtime inputs (%s), %d input files given", path, len(rin), strings.Join(names, ", "), len(files))
		}
		ts := make([]*onnx.Tensor, len(files))
		for k, v := range rin {
			switch {
			case files[k].PB != nil:
				ts[k] = files[k].PB
			case v.ElemType.IsFloat():
				// A JSON tensor: only its shape matters here.
				dims := make([]int64, len(files[k].JSON.Shape))
				for i, d := range files[k].JSON.Shape {
					dims[i] = int64(d)
				}
				ts[k] = &onnx.Tensor{Name: v.Name, Dims: dims, DataType: v.ElemType}
			default:
				return nil, cli.Usagef("--input %s: graph input %q is of type %v: give it as a TensorProto .pb", files[k].Path, v.Name, v.ElemType)
			}
		}
		if opts, _, err = onnx.OptionsFor(m, ts); err != nil {
			return nil, cli.Usagef("--onnx %s: %v", path, withPath(err, path))
		}
		if o.Recorded {
			// One recorded data set is judged: the order of a float
			// input's elements is decided on its recorded value
			// (onnx.Options.Values).
			opts.Values = map[string]*onnx.Tensor{}
			for k, v := range rin {
				if v.ElemType.IsFloat() && files[k].PB != nil {
					opts.Values[v.Name] = files[k].PB
				}
			}
		}
	}
	im, err := onnx.Import(m, opts)
	if err != nil {
		return nil, cli.Usagef("--onnx: %v", withPath(err, path))
	}
	return &ONNX{Path: path, Model: m, Imported: im}, nil
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

// ImportPB imports an ONNX model with its runtime inputs given as
// TensorProto files (onnx.ReadTensor), one per runtime input in order:
// they fix the shapes of symbolic dimensions and bind the integer inputs
// (onnx.OptionsFor), and the float ones are packed by the importer
// (onnx.Imported.PackInputs) into the IR input returned.
func ImportPB(path string, inputs []string) (*onnx.Imported, irsem.RatTensor, error) {
	model, err := onnx.ReadModel(path)
	if err != nil {
		return nil, irsem.RatTensor{}, cli.Usagef("--onnx %s: %v", path, err)
	}
	var ts []*onnx.Tensor
	for _, p := range inputs {
		t, err := onnx.ReadTensor(p)
		if err != nil {
			return nil, irsem.RatTensor{}, cli.Usagef("--input %s: %v", p, err)
		}
		ts = append(ts, t)
	}
	o, fl, err := onnx.OptionsFor(model, ts)
	if err != nil {
		return nil, irsem.RatTensor{}, cli.Usagef("--input: %v", err)
	}
	im, err := onnx.Import(model, o)
	if err != nil {
		return nil, irsem.RatTensor{}, cli.Usagef("--onnx %s: %v", path, err)
	}
	x, err := im.PackInputs(fl)
	if err != nil {
		return nil, irsem.RatTensor{}, cli.Usagef("--input: %v", err)
	}
	return im, x, nil
}
