package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
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
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// GradsFormat is the format tag of a gradient dump.
const GradsFormat = "tlcheck.grads.v1"

// Dump is a gradient dump (tools/export_grads.py writes it):
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
type Dump struct {
	Format    string                `json:"format"`
	Cotangent map[string]DumpTensor `json:"cotangent,omitempty"`
	Grads     map[string]DumpTensor `json:"grads"`
}

// DumpTensor is one tensor of a dump: its values in row-major order,
// each as written (a gradient's read by float32s, a cotangent's by rats).
type DumpTensor struct {
	Shape  []int             `json:"shape"`
	Values []json.RawMessage `json:"values"`
}

// ReadDump decodes a gradient dump with the one strict reader
// (strictjson.Decode: known members spelled exactly, no duplicate key, no
// data after the document — a second document or trailing garbage is
// refused), the format tag, shapes that are valid and hold as many values
// as given, and at least one gradient: a dump with nothing to compare is
// bad input, never a pass.
func ReadDump(r io.Reader) (*Dump, error) {
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
	var d Dump
	if err := strictjson.Decode(data, &d); err != nil {
		return nil, err
	}
	if d.Format != GradsFormat {
		return nil, fmt.Errorf("field format: %q, expected %q", d.Format, GradsFormat)
	}
	if len(d.Grads) == 0 {
		return nil, errors.New("field grads: no gradient given: nothing to compare")
	}
	for _, m := range []map[string]DumpTensor{d.Cotangent, d.Grads} {
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

// ReadDumpFiles reads the gradients in paths: ONNX TensorProto files
// (ReadDumpPB) when the first ends in .pb, else the one tlcheck.grads.v1
// JSON dump paths[0] (ReadDump), opened as safeio.Open does.
func ReadDumpFiles(paths []string) (*Dump, error) {
	if strings.HasSuffix(paths[0], ".pb") {
		return ReadDumpPB(paths)
	}
	f, err := safeio.Open(paths[0])
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadDump(f)
}

// ReadDumpPB reads gradients as ONNX TensorProto files, each float32
// and named (its name field) as the gradient it holds; the cotangent is
// the default (ones).
func ReadDumpPB(paths []string) (*Dump, error) {
	d := &Dump{Format: GradsFormat, Grads: map[string]DumpTensor{}}
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
		dt := DumpTensor{Shape: append([]int{}, s...), Values: make([]json.RawMessage, len(t.Float32))}
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
func (t DumpTensor) float32s(name string) ([]float32, error) {
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
func (t DumpTensor) rats(name string) ([]spec.Rat, error) {
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

// Target is one named gradient: the IR gradient pieces whose sum it is
// (an initializer read by several nodes), each a slice of the input
// gradient (Param −1) or a whole parameter gradient. No parts: an
// initializer the IR reads only as a constant, which has no gradient
// there (an IR graph's const node; an ONNX initializer's const node is a
// parameter, GradModel.ConstParams).
type Target struct {
	Name  string
	Shape spec.Shape
	Parts []Part
}

// Part is one piece of a Target.
type Part struct {
	Param  int // index into the lowered graph's parameters, −1 for the IR input
	Offset int // into the IR input gradient
}

// GradModel is a model whose gradients are compared: the IR graph, its
// payload and input, and the gradients it names.
type GradModel struct {
	Graph   *irsem.Graph
	Payload *irsem.Payload
	Input   irsem.RatTensor
	Targets []Target
	Outputs []onnx.IOValue // the outputs (one "output" for an IR graph)
	What    string         // the flag naming the model file: "--onnx PATH"
	// ConstParams: every const node's value is a parameter too
	// (irgrad.LowerOptions.ConstParams, fpbound.Options.ConstParams), so
	// that an ONNX initializer read as data — LayerNormalization's scale
	// and bias, PRelu's slope, MatMul's and Add's weights — has its
	// gradient judged, as the weights of Gemm and Conv are.
	ConstParams bool
}

// GradModelONNX names the gradients of an imported ONNX model (path, im)
// at its packed input x: every float input (a slice of the IR input
// gradient) and every initializer that some node reads as data (the sum
// of its uses: payload parameters such as Gemm's W, and the initializer's
// own const node, a parameter under ConstParams).
func GradModelONNX(path string, im *onnx.Imported, x irsem.RatTensor) (*GradModel, error) {
	// The parameter list only (float64 lowers every tag, exact or not).
	l, err := irgrad.LowerWith[spec.F64](nil, im.Graph, im.Payload, irgrad.LowerOptions{ConstParams: true})
	if err != nil {
		return nil, cli.Usagef("--onnx %s: %v", path, err)
	}
	index := map[[2]any]int{}
	for i, prm := range l.Params {
		index[[2]any{prm.Node, prm.Field}] = i
	}
	m := &GradModel{Graph: im.Graph, Payload: im.Payload, Input: x, Outputs: im.Outputs, What: "--onnx " + path, ConstParams: true}
	for _, in := range im.Inputs {
		m.Targets = append(m.Targets, Target{Name: in.Name, Shape: in.Shape, Parts: []Part{{Param: -1, Offset: in.Offset}}})
	}
	for _, ini := range im.Initializers {
		t := Target{Name: ini.Name, Shape: ini.Shape}
		for _, u := range ini.Uses {
			i, ok := index[[2]any{u.Node, u.Field}]
			if !ok {
				continue // a use without a gradient (none today: defensive)
			}
			t.Parts = append(t.Parts, Part{Param: i})
		}
		if len(ini.Uses) > 0 {
			m.Targets = append(m.Targets, t)
		}
	}
	return m, nil
}

// GradModelIR names the gradients of an IR graph: "input" and irgrad's
// parameter names.
func GradModelIR(fs *model.Model) (*GradModel, error) {
	l, err := irgrad.Lower[spec.F64](nil, fs.Graph, fs.Payload)
	if err != nil {
		return nil, fs.Err(err)
	}
	out := fs.Graph.Nodes[fs.Graph.OutputID]
	m := &GradModel{Graph: fs.Graph, Payload: fs.Payload, Input: fs.Input, What: "--graph " + fs.GraphPath,
		Outputs: []onnx.IOValue{{Name: "output", Shape: out.Shape.Clone()}}}
	m.Targets = append(m.Targets, Target{Name: irgrad.InputName, Shape: fs.Input.Shape.Clone(), Parts: []Part{{Param: -1}}})
	for i, prm := range l.Params {
		m.Targets = append(m.Targets, Target{Name: prm.Name, Shape: prm.Shape.Clone(), Parts: []Part{{Param: i}}})
	}
	return m, nil
}

// LoadGradModel loads compare-grad's model: the ONNX model at onnxPath
// with its runtime inputs (the files inputs, or the input_*.pb of the
// recorded data set directory data), or the torchlean.ir.v1 graph with
// its payload and its one input. It returns the model and the input files
// read; a misuse of the inputs is a usage error.
func LoadGradModel(onnxPath, graph, payload, data string, inputs []string) (*GradModel, []string, error) {
	if onnxPath != "" {
		in := inputs
		if data != "" {
			if len(inputs) > 0 {
				return nil, nil, cli.Usagef("compare-grad: --input and --data both name the inputs; give one")
			}
			var err error
			if in, err = model.DataFiles("data", data, "input"); err != nil {
				return nil, nil, err
			}
		}
		im, x, err := model.ImportPB(onnxPath, in)
		if err != nil {
			return nil, nil, err
		}
		m, err := GradModelONNX(onnxPath, im, x)
		return m, in, err
	}
	switch {
	case data != "":
		return nil, nil, cli.Usagef("compare-grad: --data is a recorded ONNX data set: it goes with --onnx")
	case len(inputs) > 1:
		return nil, nil, cli.Usagef("compare-grad: --input given %d times: a torchlean.ir.v1 graph has one input", len(inputs))
	case len(inputs) == 0:
		return nil, nil, cli.Usagef("compare-grad: --input is required")
	}
	files, err := model.LoadIR("compare-grad", graph, payload, inputs[0])
	if err != nil {
		return nil, nil, err
	}
	m, err := GradModelIR(files)
	return m, inputs, err
}

// Seed packs the dump's cotangent (default: ones) into the IR output's
// shape.
func (m *GradModel) Seed(doc *Dump) (irsem.RatTensor, error) {
	outShape := m.Graph.Nodes[m.Graph.OutputID].Shape.Clone()
	seed, err := spec.Full(outShape, spec.NewRat(1, 1))
	if err != nil {
		return seed, err
	}
	for i := range seed.Data {
		seed.Data[i] = spec.NewRat(1, 1) // one Rat per element
	}
	for name := range doc.Cotangent {
		found := false
		for _, o := range m.Outputs {
			found = found || o.Name == name
		}
		if !found {
			return seed, fmt.Errorf("cotangent %q: no such output", name)
		}
	}
	for _, o := range m.Outputs {
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

// The status of one gradient (Grad.Status), as the
// tlcheck.compare-grad document spells it.
const (
	Checked  = "checked"
	NotGiven = "not_given"
	Constant = "constant"
)

// Grad is one named gradient's comparison: its status and, when
// Checked, every element judged in row-major order, and per element the
// bound that decided it (DecidedBy: decidedBy's name).
type Grad struct {
	Name      string
	Shape     spec.Shape
	Status    string
	Elements  []fpbound.Element
	DecidedBy []string
}

// Grads judges every gradient of the dump against the model's exact
// gradient and, per element, the least of fpbound's three sound
// reverse-mode bounds (fpbound.GradErrSharpParams: the classic bound, the
// boxed one and the combined first-order bound of the input and the
// parameter gradients), in the model's target order. A gradient the dump names that the model has
// not, a shape that differs, or a value that is no number, is an error.
func Grads(m *GradModel, doc *Dump, o fpbound.Options) ([]Grad, error) {
	return GradsWith(m, doc, o, false)
}

// GradsWith is Grads; classicOnly judges with the classic bound alone
// (fpbound.GradErr), the path before the boxed bound, kept for
// comparison. The combined bound of a parameter gradient costs one
// SharpBounds output element per parameter element (fpbound.
// GradErrSharpParams; its sweeps stay within the sweep budget).
func GradsWith(m *GradModel, doc *Dump, o fpbound.Options, classicOnly bool) ([]Grad, error) {
	known := map[string]bool{}
	for _, t := range m.Targets {
		known[t.Name] = true
	}
	var unknown []string
	for name := range doc.Grads {
		if !known[name] {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("gradient %q: the model has no float input or differentiable initializer of that name", unknown[0])
	}
	seed, err := m.Seed(doc)
	if err != nil {
		return nil, err
	}
	o.ConstParams = m.ConstParams
	var gb *fpbound.GradBounds
	if classicOnly {
		gb, err = fpbound.GradErrSharp(m.Graph, m.Payload, m.Input, seed, o, true)
	} else {
		gb, err = fpbound.GradErrSharpParams(m.Graph, m.Payload, m.Input, seed, o)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %v", m.What, err)
	}
	cast := castConvention(m.Graph)
	var out []Grad
	for _, t := range m.Targets {
		d, ok := doc.Grads[t.Name]
		g := Grad{Name: t.Name, Shape: t.Shape, Status: Checked}
		switch {
		case len(t.Parts) == 0:
			g.Status = Constant
		case !ok:
			g.Status = NotGiven
		default:
			if !spec.Shape(d.Shape).Equal(t.Shape) {
				return nil, fmt.Errorf("gradient %q: shape %v, expected %v", t.Name, d.Shape, t.Shape)
			}
			rec, err := d.float32s(t.Name)
			if err != nil {
				return nil, err
			}
			g.Elements = make([]fpbound.Element, t.Shape.Size())
			g.DecidedBy = make([]string, t.Shape.Size())
			for k := range g.Elements {
				var boxed fpbound.Err
				if gb.Boxed != nil {
					boxed = t.err(gb.Boxed, k)
				}
				sh := fpbound.GradEnclosure(t.err(gb.Classic, k), gb.ClassicUndecided, boxed, gb.BoxedUndecided, gb.Boxed != nil, gb.Reason, t.combined(gb, k))
				el := fpbound.Judge(rec[k], sh.Enclosure)
				el.Classic, el.FirstOrder, el.Estimate = sh.Classic, sh.FirstOrder, sh.Estimate
				if el.Verdict == fpbound.Fails && cast != "" {
					el.Verdict, el.Reason = fpbound.Inconclusive, cast
				}
				g.Elements[k] = el
				g.DecidedBy[k] = decidedBy(el, sh)
			}
		}
		out = append(out, g)
	}
	return out, nil
}

// combined is the combined first-order enclosure of element k of the
// target, for a target that is one piece: of the input gradient
// (fpbound.GradBounds.Combined) or one parameter's whole gradient
// (GradBounds.CombinedParams); nil for a sum of parts (the runtime's
// accumulation of the parts is a rounding no part's bound covers) or
// where the bound was not built.
func (t Target) combined(gb *fpbound.GradBounds, k int) *fpbound.Enclosure {
	if len(t.Parts) != 1 {
		return nil
	}
	part := t.Parts[0]
	if part.Param >= 0 {
		if part.Param >= len(gb.CombinedParams) || k >= len(gb.CombinedParams[part.Param]) {
			return nil
		}
		return &gb.CombinedParams[part.Param][k]
	}
	i := part.Offset + k
	if i >= len(gb.Combined) {
		return nil
	}
	return &gb.Combined[i]
}

// err is the error-algebra value of element k of the target: the sum of
// its parts.
func (t Target) err(gr *irgrad.Gradients[fpbound.Err], k int) fpbound.Err {
	var v fpbound.Err
	for j, part := range t.Parts {
		var e fpbound.Err
		if part.Param < 0 {
			e = gr.Input.Data[part.Offset+k]
		} else {
			e = gr.Params[part.Param].Data[k]
		}
		if j == 0 {
			v = e
		} else {
			v = v.Add(e)
		}
	}
	return v
}

// JSON is the gradient's entry in a tlcheck.compare-grad.v3 document: its
// verdict counts, how many elements each sound bound decided
// (decidedBy), the first failing (else inconclusive) element
// and the greatest absolute and relative differences with their indices
// (Summarize) when checked; with all, every element, each naming the
// bound that decided it.
func (g Grad) JSON(all bool) jsonout.CompareGradTensor {
	out := jsonout.CompareGradTensor{Name: g.Name, Shape: append([]int{}, g.Shape...), Status: g.Status}
	if g.Status != Checked {
		return out
	}
	els := g.Elements
	c := Summarize(g.Shape, els)
	out.Holds, out.Fails, out.Inconclusive = c.Total-c.Fails-c.Inconclusive, c.Fails, c.Inconclusive
	if c.Total > 0 {
		abs, rel := jsonout.Number(c.AbsMax), jsonout.Number(c.RelMax)
		out.MaxAbs, out.MaxAbsIndex = &abs, unravel(g.Shape, c.AbsAt)
		out.MaxRel, out.MaxRelIndex = &rel, unravel(g.Shape, c.RelAt)
	}
	first, verdict := c.FirstFail, Fails
	if first < 0 {
		first, verdict = c.FirstInconclusive, Inconclusive
	}
	for _, d := range g.DecidedBy {
		switch d {
		case fpbound.GradByClassic:
			out.ByClassic++
		case fpbound.GradByBoxed:
			out.ByBoxed++
		case fpbound.GradByCombined:
			out.ByCombined++
		}
	}
	if first >= 0 {
		out.First = gradElement(first, els[first], g.DecidedBy[first], verdict)
	}
	if all {
		out.Elements = make([]jsonout.CompareGradElement, len(els))
		for k, el := range els {
			out.Elements[k] = *gradElement(k, el, g.DecidedBy[k], el.Verdict.String())
		}
	}
	return out
}

// gradElement is element k of a gradient in the document: compare's
// element and the bound that decided it (decidedBy).
func gradElement(k int, el fpbound.Element, by, verdict string) *jsonout.CompareGradElement {
	e := element(k, float64(el.Recorded), el.Exact, el.Bound, verdict)
	return &jsonout.CompareGradElement{Index: e.Index, Recorded: e.Recorded, Exact: e.Exact, Bound: e.Bound, Verdict: e.Verdict, DecidedBy: by}
}

// decidedBy is the bound that decided el, judged against sh
// (fpbound.GradSharp.Decider: classic, boxed or combined), and
// fpbound.GradByNone for an inconclusive element: one whose bounds are
// +∞, or one withheld across a cast's gradient convention
// (castConvention) although its bound is finite, which no bound decided.
func decidedBy(el fpbound.Element, sh fpbound.GradSharp) string {
	if el.Verdict == fpbound.Inconclusive {
		return fpbound.GradByNone
	}
	return sh.Decider()
}

// castConvention names the first narrowing float cast of g (round_f16,
// round_bf16, round_f32), "" when there is none. The registry's
// derivative of a cast is 0 (the rounding is piecewise constant), while
// PyTorch and JAX pass the cotangent through a dtype cast unchanged (the
// straight-through convention): a recorded gradient that differs from the
// registry's VJP in a graph with a cast may differ by that convention, not
// by an error of the runtime, so compare-grad reports it inconclusive,
// with this reason, never FAILS (docs/onnx.md, "Gradients through a
// cast"). trunc_int is not among them: an integer tensor carries no
// gradient in those runtimes either.
func castConvention(g *irsem.Graph) string {
	for _, nd := range g.Nodes {
		if op := nd.Kind.Op; spec.IsFloatCast(string(op)) {
			return fmt.Sprintf("node %d (%s): the registry's derivative of a cast is 0, a straight-through runtime's (PyTorch, JAX) is 1; the gradient is not judged across that convention", nd.ID, op)
		}
	}
	return ""
}
