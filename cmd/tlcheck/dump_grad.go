package main

// compare-grad: gradients computed by another runtime (a PyTorch or JAX
// job, dumped as JSON) against tlcheck's exact gradient, within the
// a-priori bound of fpbound for binary32 reverse-mode evaluation in any
// summation order.

import (
	"encoding/json"

	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/internal/safeio"
	"github.com/tlcheck/tlcheck/internal/strictjson"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// GradsFormat is the format tag of a gradient dump.
const GradsFormat = "tlcheck.grads.v1"

// gradsDoc is a gradient dump (tools/export_grads.py writes it):
//
//	{"format": "tlcheck.grads.v1",
//	 "cotangent": {OUTPUT: TENSOR, …},   optional: default ones on every output element
//	 "grads": {NAME: TENSOR, …}}
//
// NAME is an ONNX float graph input or initializer name (--onnx), or
// "input" and irgrad's "node<ID>.<field>" (--graph). TENSOR is
// {"shape": [...], "values": [...]} in row-major order; a gradient value
// is a JSON number read as the binary32 nearest its decimal (exact for
// the float64 repr of a float32 and for its shortest float32 repr), or
// "NaN", "+Inf", "-Inf" (the spelling of every tlcheck JSON document);
// a cotangent value is an exact decimal.
// OUTPUT is an ONNX graph output name, or "output" (--graph).
type gradsDoc struct {
	Format    string                `json:"format"`
	Cotangent map[string]dumpTensor `json:"cotangent,omitempty"`
	Grads     map[string]dumpTensor `json:"grads"`
}

type dumpTensor struct {
	Shape  []int             `json:"shape"`
	Values []json.RawMessage `json:"values"`
}

// readGrads decodes a gradient dump with the one strict reader
// (strictjson.Decode: known members spelled exactly, no duplicate key, no
// data after the document — a second document or trailing garbage is
// refused), the format tag, shapes that are valid and hold as many values
// as given, and at least one gradient: a dump with nothing to compare is
// bad input, never a pass.
func readGrads(r io.Reader) (*gradsDoc, error) {
	// A dump holds about as many numbers as the model: the ONNX file
	// limit bounds it.
	lim := limits.Current().ONNXBytes
	data, err := io.ReadAll(io.LimitReader(r, lim+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > lim {
		return nil, fmt.Errorf("file larger than the %d-byte limit", lim)
	}
	var d gradsDoc
	if err := strictjson.Decode(data, &d); err != nil {
		return nil, err
	}
	if d.Format != GradsFormat {
		return nil, fmt.Errorf("field format: %q, expected %q", d.Format, GradsFormat)
	}
	if len(d.Grads) == 0 {
		return nil, errors.New("field grads: no gradient given: nothing to compare")
	}
	for _, m := range []map[string]dumpTensor{d.Cotangent, d.Grads} {
		for name, t := range m {
			s := spec.Shape(t.Shape)
			if _, err := s.Check(0); err != nil {
				return nil, fmt.Errorf("tensor %q: %w", name, err)
			}
			if s.Size() != len(t.Values) {
				return nil, fmt.Errorf("tensor %q: shape %v holds %d values, %d given", name, s, s.Size(), len(t.Values))
			}
		}
	}
	return &d, nil
}

// readGradsPB reads gradients as ONNX TensorProto files, each float32
// and named (its name field) as the gradient it holds; the cotangent is
// the default (ones).
func readGradsPB(paths []string) (*gradsDoc, error) {
	d := &gradsDoc{Format: GradsFormat, Grads: map[string]dumpTensor{}}
	for _, p := range paths {
		t, err := onnx.ReadTensor(p)
		if err != nil {
			return nil, err
		}
		s, err := t.Shape()
		if err != nil {
			return nil, fmt.Errorf("%s: %v", p, err)
		}
		switch {
		case t.Name == "":
			return nil, fmt.Errorf("%s: the tensor has no name (it must name its gradient)", p)
		case t.DataType != onnx.Float:
			return nil, fmt.Errorf("%s: tensor %q of element type %s, expected float", p, t.Name, t.DataType.String())
		case len(t.Float32) != s.Size():
			return nil, fmt.Errorf("%s: tensor %q of shape %v holds %d values", p, t.Name, s, len(t.Float32))
		}
		if _, dup := d.Grads[t.Name]; dup {
			return nil, fmt.Errorf("%s: a second tensor named %q", p, t.Name)
		}
		dt := dumpTensor{Shape: append([]int{}, s...), Values: make([]json.RawMessage, len(t.Float32))}
		for i, f := range t.Float32 {
			dt.Values[i] = f32JSON(f)
		}
		d.Grads[t.Name] = dt
	}
	return d, nil
}

// f32JSON writes a float32 as the dump does: the float64 repr of the
// value, or "NaN", "+Inf", "-Inf" (every tlcheck JSON's spelling).
func f32JSON(f float32) json.RawMessage {
	switch {
	case math.IsNaN(float64(f)):
		return json.RawMessage(`"NaN"`)
	case math.IsInf(float64(f), 1):
		return json.RawMessage(`"+Inf"`)
	case math.IsInf(float64(f), -1):
		return json.RawMessage(`"-Inf"`)
	}
	return json.RawMessage(strconv.FormatFloat(float64(f), 'g', -1, 64))
}

// float32s reads a gradient tensor's values.
func (t dumpTensor) float32s(name string) ([]float32, error) {
	out := make([]float32, len(t.Values))
	for i, raw := range t.Values {
		s := string(raw)
		switch s {
		case `"NaN"`:
			out[i] = float32(math.NaN())
			continue
		case `"+Inf"`:
			out[i] = float32(math.Inf(1))
			continue
		case `"-Inf"`:
			out[i] = float32(math.Inf(-1))
			continue
		}
		f, err := strconv.ParseFloat(s, 32)
		if err != nil || strings.HasPrefix(s, `"`) {
			return nil, fmt.Errorf("tensor %q: element %d: %s is not a number, \"NaN\", \"+Inf\" or \"-Inf\"", name, i, s)
		}
		out[i] = float32(f)
	}
	return out, nil
}

// rats reads a cotangent tensor's values exactly.
func (t dumpTensor) rats(name string) ([]spec.Rat, error) {
	out := make([]spec.Rat, len(t.Values))
	for i, raw := range t.Values {
		r, err := spec.ParseRat(string(raw))
		if err != nil {
			return nil, fmt.Errorf("cotangent %q: element %d: %v", name, i, err)
		}
		out[i] = r
	}
	return out, nil
}

// gradTarget is one named gradient: the IR gradient pieces whose sum it
// is (an initializer read by several nodes), each a slice of the input
// gradient (param −1) or a whole parameter gradient. No parts: an
// initializer the IR reads only as a constant (an embedding table
// gathered by a const node), which has no gradient there.
type gradTarget struct {
	name  string
	shape spec.Shape
	parts []gradPart
}

type gradPart struct {
	param  int // index into the Lowered params, −1 for the IR input
	offset int // into the IR input gradient
}

// gradModel is what compare-grad differentiates.
type gradModel struct {
	g       *irsem.Graph
	p       *irsem.Payload
	x       irsem.RatTensor
	targets []gradTarget
	outputs []onnx.IOValue // the outputs (one "output" for --graph)
	what    string         // the flag naming the model file
}

func runCompareGrad(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("compare-grad")
	if err := addLimits(fs, "compare-grad"); err != nil {
		return cli.BadInput(err)
	}
	onnxPath := fs.String("onnx", "", "ONNX model file (or use --graph)")
	graph := fs.String("graph", "", "torchlean.ir.v1 graph file (instead of --onnx)")
	payload := fs.String("payload", "", "tlcheck.payload.v1 payload file (with --graph)")
	var inputs, grads listFlag
	fs.Var(&inputs, "input", "input tensor file (TensorProto .pb, or JSON with --graph); with --onnx repeat it for each runtime input, in graph order (required with --graph; with --onnx this or --data)")
	data := fs.String("data", "", "with --onnx: a recorded data set directory whose input_0.pb, input_1.pb, … are the runtime inputs")
	fs.Var(&grads, "grads", "the gradient dump: a tlcheck.grads.v1 JSON file, or float32 .pb TensorProtos each named as its gradient, --grads repeated for each (required)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare-grad.v1 document instead of the report")
	elements := fs.Bool("elements", false, "with --json: list every checked element (index, recorded value, exact enclosure, bound, verdict)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's exp, log, tanh, …, in binary32 ulps")
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if (*onnxPath == "") == (*graph == "") {
		return cli.Usagef("compare-grad: give exactly one of --onnx and --graph")
	}
	if len(grads) == 0 {
		return cli.Usagef("compare-grad: --grads is required")
	}
	if *elements && !*asJSON {
		return cli.Usagef("compare-grad: --elements lists elements in the --json document: give --json too")
	}
	if *ulps < 1 || *ulps > fpbound.MaxULPs {
		return cli.Usagef("--ulps: %d is not between 1 and %d", *ulps, fpbound.MaxULPs)
	}
	var m *gradModel
	var err error
	in := []string(inputs)
	if *onnxPath != "" {
		if *data != "" {
			if len(inputs) > 0 {
				return cli.Usagef("compare-grad: --input and --data both name the inputs; give one")
			}
			if in, err = dataFiles("data", *data, "input"); err != nil {
				return err
			}
		}
		m, err = loadONNXGrad(*onnxPath, in)
	} else {
		switch {
		case *data != "":
			return cli.Usagef("compare-grad: --data is a recorded ONNX data set: it goes with --onnx")
		case len(inputs) > 1:
			return cli.Usagef("compare-grad: --input given %d times: a torchlean.ir.v1 graph has one input", len(inputs))
		case len(inputs) == 0:
			return cli.Usagef("compare-grad: --input is required")
		}
		m, err = loadIRGrad(*graph, *payload, inputs[0])
	}
	if err != nil {
		return err
	}
	var doc *gradsDoc
	gradsArg := strings.Join(grads, " ")
	if strings.HasSuffix(grads[0], ".pb") {
		doc, err = readGradsPB(grads)
	} else if len(grads) > 1 {
		return cli.Usagef("compare-grad: --grads given %d times: a tlcheck.grads.v1 JSON dump is one file (repeat --grads for .pb tensors only)", len(grads))
	} else {
		var f *os.File
		if f, err = safeio.Open(grads[0]); err == nil {
			doc, err = readGrads(f)
			f.Close()
		}
	}
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	var tensors []jsonout.CompareGradTensor
	rep, failed, err := compareGrads(m, doc, fpbound.Options{ULPs: *ulps}, &tensors, *elements)
	if err != nil {
		return cli.Usagef("--grads %s: %v", gradsArg, err)
	}
	if *asJSON {
		read := []namedFile{{"onnx", *onnxPath}, {"graph", *graph}, {"payload", *payload}}
		for _, p := range in {
			read = append(read, namedFile{"input", p})
		}
		for _, p := range grads {
			read = append(read, namedFile{"grads", p})
		}
		rep, err = compareGradJSON(*onnxPath+*graph, *ulps, tensors, read)
		if err != nil {
			return err
		}
	}
	if _, err := io.WriteString(stdout, rep); err != nil {
		return err
	}
	if failed > 0 {
		return cli.Failf("compare-grad: %s outside the bound", cli.Count(failed, "gradient tensor", "gradient tensors"))
	}
	return nil
}

// loadONNXGrad imports the model with its runtime inputs and names the
// gradients: every float input (a slice of the IR input gradient) and
// every initializer that some node reads as data (the sum of its uses).
func loadONNXGrad(path string, inputs []string) (*gradModel, error) {
	model, err := onnx.ReadModel(path)
	if err != nil {
		return nil, cli.Usagef("--onnx %s: %v", path, err)
	}
	var ts []*onnx.Tensor
	for _, p := range inputs {
		t, err := onnx.ReadTensor(p)
		if err != nil {
			return nil, cli.Usagef("--input %s: %v", p, err)
		}
		ts = append(ts, t)
	}
	o, fl, err := onnx.OptionsFor(model, ts)
	if err != nil {
		return nil, cli.Usagef("--input: %v", err)
	}
	im, err := onnx.Import(model, o)
	if err != nil {
		return nil, cli.Usagef("--onnx %s: %v", path, err)
	}
	x, err := im.PackInputs(fl)
	if err != nil {
		return nil, cli.Usagef("--input: %v", err)
	}
	// The parameter list only (float64 lowers every tag, exact or not).
	l, err := irgrad.Lower[spec.F64](nil, im.Graph, im.Payload)
	if err != nil {
		return nil, cli.Usagef("--onnx %s: %v", path, err)
	}
	index := map[[2]any]int{}
	for i, prm := range l.Params {
		index[[2]any{prm.Node, prm.Field}] = i
	}
	m := &gradModel{g: im.Graph, p: im.Payload, x: x, outputs: im.Outputs, what: "--onnx " + path}
	for _, in := range im.Inputs {
		m.targets = append(m.targets, gradTarget{name: in.Name, shape: in.Shape, parts: []gradPart{{param: -1, offset: in.Offset}}})
	}
	for _, ini := range im.Initializers {
		t := gradTarget{name: ini.Name, shape: ini.Shape}
		for _, u := range ini.Uses {
			i, ok := index[[2]any{u.Node, u.Field}]
			if !ok {
				continue // a use without a gradient (a const node's value)
			}
			t.parts = append(t.parts, gradPart{param: i})
		}
		if len(ini.Uses) > 0 {
			// No parts: every use is a constant of the IR (a const
			// node's value), which irgrad gives no gradient.
			m.targets = append(m.targets, t)
		}
	}
	return m, nil
}

// loadIRGrad reads an IR graph, payload and input; the gradients are
// named "input" and irgrad's parameter names.
func loadIRGrad(graph, payload, input string) (*gradModel, error) {
	fs, err := loadIR("compare-grad", graph, payload, input)
	if err != nil {
		return nil, err
	}
	l, err := irgrad.Lower[spec.F64](nil, fs.g, fs.p)
	if err != nil {
		return nil, fs.graphErr(err)
	}
	out := fs.g.Nodes[fs.g.OutputID]
	m := &gradModel{g: fs.g, p: fs.p, x: fs.x, what: "--graph " + graph,
		outputs: []onnx.IOValue{{Name: "output", Shape: out.Shape.Clone()}}}
	m.targets = append(m.targets, gradTarget{name: irgrad.InputName, shape: fs.x.Shape.Clone(), parts: []gradPart{{param: -1}}})
	for i, prm := range l.Params {
		m.targets = append(m.targets, gradTarget{name: prm.Name, shape: prm.Shape.Clone(), parts: []gradPart{{param: i}}})
	}
	return m, nil
}

// seedOf packs the dump's cotangent (default: ones) into the IR output's
// shape.
func (m *gradModel) seedOf(doc *gradsDoc) (irsem.RatTensor, error) {
	outShape := m.g.Nodes[m.g.OutputID].Shape.Clone()
	seed, err := spec.Full(outShape, spec.NewRat(1, 1))
	if err != nil {
		return seed, err
	}
	for i := range seed.Data {
		seed.Data[i] = spec.NewRat(1, 1) // one Rat per element
	}
	for name := range doc.Cotangent {
		found := false
		for _, o := range m.outputs {
			found = found || o.Name == name
		}
		if !found {
			return seed, fmt.Errorf("cotangent %q: no such output", name)
		}
	}
	for _, o := range m.outputs {
		t, ok := doc.Cotangent[o.Name]
		if !ok {
			continue
		}
		if !spec.Shape(t.Shape).Equal(o.Shape) {
			return seed, fmt.Errorf("cotangent %q: shape %v, the output has %v", o.Name, t.Shape, o.Shape)
		}
		rs, err := t.rats(o.Name)
		if err != nil {
			return seed, err
		}
		copy(seed.Data[o.Offset:], rs)
	}
	return seed, nil
}

// compareGrads judges every given gradient and renders the report; it
// returns the number of tensors with an element outside the bound.
// Each tensor's verdicts are also appended to *js, for --json, with every
// element when all is set (--elements).
func compareGrads(m *gradModel, doc *gradsDoc, o fpbound.Options, js *[]jsonout.CompareGradTensor, all bool) (string, int, error) {
	known := map[string]bool{}
	for _, t := range m.targets {
		known[t.name] = true
	}
	var unknown []string
	for name := range doc.Grads {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return "", 0, fmt.Errorf("gradient %q: the model has no float input or differentiable initializer of that name", unknown[0])
	}
	seed, err := m.seedOf(doc)
	if err != nil {
		return "", 0, err
	}
	gr, _, und, err := fpbound.GradErr(m.g, m.p, m.x, seed, o)
	if err != nil {
		return "", 0, fmt.Errorf("%s: %v", m.what, err)
	}
	var b strings.Builder
	failed := 0
	for _, t := range m.targets {
		d, ok := doc.Grads[t.name]
		if len(t.parts) == 0 {
			fmt.Fprintf(&b, "%s %v: not checked: the IR reads it as a constant, which has no gradient there\n", t.name, t.shape)
			*js = append(*js, gradTensorJSON(t.name, t.shape, gradConstant, nil))
			continue
		}
		if !ok {
			fmt.Fprintf(&b, "%s %v: not given\n", t.name, t.shape)
			*js = append(*js, gradTensorJSON(t.name, t.shape, gradNotGiven, nil))
			continue
		}
		if !spec.Shape(d.Shape).Equal(t.shape) {
			return "", 0, fmt.Errorf("gradient %q: shape %v, expected %v", t.name, d.Shape, t.shape)
		}
		rec, err := d.float32s(t.name)
		if err != nil {
			return "", 0, err
		}
		n := t.shape.Size()
		els := make([]fpbound.Element, n)
		for k := range n {
			var v fpbound.Err
			for j, part := range t.parts {
				var e fpbound.Err
				if part.param < 0 {
					e = gr.Input.Data[part.offset+k]
				} else {
					e = gr.Params[part.param].Data[k]
				}
				if j == 0 {
					v = e
				} else {
					v = v.Add(e)
				}
			}
			els[k] = fpbound.Judge(rec[k], fpbound.EncloseErr(v, und))
		}
		s := fpbound.Summarize(els)
		jt := gradTensorJSON(t.name, t.shape, gradChecked, els)
		if all {
			jt.Elements = make([]jsonout.CompareElement, len(els))
			for k, el := range els {
				jt.Elements[k] = *compareElement(k, float64(el.Recorded), el.Exact, el.Bound, el.Verdict.String())
			}
		}
		*js = append(*js, jt)
		worst := 0.0
		for _, el := range els {
			if el.Bound > 0 && !math.IsInf(el.Bound, 1) {
				worst = max(worst, el.Dist.Hi/el.Bound)
			}
		}
		fmt.Fprintf(&b, "%s %v: %d holds, %d fails, %d inconclusive; worst error/bound %.3g", t.name, t.shape, s.Holds, s.Fails, s.Inconclusive, worst)
		if s.FirstFail >= 0 {
			failed++
			el := els[s.FirstFail]
			fmt.Fprintf(&b, "; first outside: element %d at index %s: recorded %v (0x%08x), exact in %v, bound %.6g",
				s.FirstFail, indexText(t.shape, s.FirstFail), el.Recorded, math.Float32bits(el.Recorded), el.Exact, el.Bound)
		} else if s.Inconclusive > 0 {
			for _, el := range els {
				if el.Verdict == fpbound.Inconclusive && el.Reason != "" {
					fmt.Fprintf(&b, "; inconclusive: %s", el.Reason)
					break
				}
			}
		}
		b.WriteByte('\n')
		b.WriteString(closenessOf(t.shape, els).lines("  "))
	}
	return b.String(), failed, nil
}
