package main

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// compare evaluates an ONNX model exactly on each recorded input set and
// checks every recorded output element against the a-priori float32
// error bound of the graph (fpbound.Compare; the argument is in
// `go doc ./fpbound`):
//
//   - holds: |recorded − exact| ≤ bound is proven, so some float32
//     evaluation order of the graph may have produced the value;
//   - fails: |recorded − exact| > bound is proven: no float32 evaluation
//     of this graph, in any order, produces it — the runtime computed
//     something else;
//   - inconclusive: the enclosures could not decide either.
//
// Exit 1 when any element fails. Inconclusive elements alone do not fail
// the comparison — nothing was shown wrong — but print a warning line
// (and the JSON verdict "inconclusive"); --strict makes them exit 1.
//
// The outputs of a training Gradient node are checked against tlcheck's
// exact gradients instead: a recorded gradient equal to the exact value
// holds (its error, 0, is below any bound); one that differs is
// inconclusive, since no a-priori bound of a float32 reverse pass is
// computed, and the difference is reported.
//
// Also reported, never decided on: the largest |f32 − exact| of
// tlcheck's own binary32 evaluation of the imported graph (irsem over
// spec.F32), which shows how far one particular float32 evaluation order
// lies from the exact values.

// verdict names, in JSON and text.
const (
	verdictHolds        = "holds"
	verdictFails        = "fails"
	verdictInconclusive = "inconclusive"
)

// outputReport is one recorded output's comparison.
type outputReport struct {
	name     string
	shape    spec.Shape
	gradient string // the Gradient node it comes from ("" for a model output)
	elements int
	maxErr   [2]float64 // an enclosure [lo, hi] of max |recorded − exact|
	bound    float64    // the largest per-element bound (NaN: none, a gradient)
	ours     [2]float64 // an enclosure of max |our f32 − exact| (NaN: not computed)
	estimate float64    // the largest probabilistic estimate (NaN: none; reported only)
	byFirst  int        // elements decided by the first-order bound
	holds    int
	fails    int
	inconc   int
	first    *jsonout.CompareElement
	close    closeness // the assert_close-style summary (mismatch.go)
}

// setReport is one data set's comparison.
type setReport struct {
	dir     string
	outputs []outputReport
}

func runCompare(args []string, stdout, _ io.Writer) error {
	fs := cli.NewFlags("compare")
	if err := addLimits(fs, "compare"); err != nil {
		return cli.BadInput(err)
	}
	model := fs.String("onnx", "", "ONNX model file (required)")
	data := fs.String("data", "", "a recorded data set directory (input_N.pb, output_N.pb), or a directory of test_data_set_* directories (required)")
	ulps := fs.Int("ulps", fpbound.DefaultULPs, "accuracy assumed of the runtime's elementary functions (exp, tanh, …), in binary32 ulps")
	strict := fs.Bool("strict", false, "exit 1 when an element is inconclusive (by default inconclusive elements only warn)")
	asJSON := fs.Bool("json", false, "print a tlcheck.compare.v1 document")
	stats := fs.Bool("stats", false, statsUsage)
	if err := cli.Parse(fs, args, 0); err != nil {
		return err
	}
	if *stats && !*asJSON {
		return cli.Usagef("compare: --stats needs --json")
	}
	if *model == "" {
		return cli.Usagef("compare: --onnx is required")
	}
	if *data == "" {
		return cli.Usagef("compare: --data is required")
	}
	if *ulps < 1 {
		return cli.Usagef("--ulps must be ≥ 1, got %d", *ulps)
	}
	sets, err := dataSets(*data)
	if err != nil {
		return err
	}
	var inputs []jsonout.Input
	var reps []setReport
	for _, dir := range sets {
		rep, err := compareSet(*model, dir, fpbound.Options{ULPs: *ulps}, &inputs)
		if err != nil {
			return err
		}
		reps = append(reps, *rep)
	}
	holds, fails, inconc := 0, 0, 0
	for _, r := range reps {
		for _, o := range r.outputs {
			holds, fails, inconc = holds+o.holds, fails+o.fails, inconc+o.inconc
		}
	}
	verdict := verdictHolds
	switch {
	case fails > 0:
		verdict = verdictFails
	case inconc > 0:
		verdict = verdictInconclusive
	}
	var b bytes.Buffer
	if *asJSON {
		doc := jsonout.CompareDoc{Header: jsonout.NewHeader(jsonout.KindCompare, nil, inputs), Model: *model, ULPs: *ulps, Strict: *strict,
			Sets: []jsonout.CompareSet{}, Holds: holds, Fails: fails, Inconclusive: inconc, Verdict: verdict}
		for _, r := range reps {
			s := jsonout.CompareSet{Directory: r.dir, Outputs: []jsonout.CompareOutput{}}
			for _, o := range r.outputs {
				s.Outputs = append(s.Outputs, jsonout.CompareOutput{Name: o.name, Shape: append([]int{}, o.shape...), Gradient: o.gradient,
					Elements: o.elements, MaxErr: jsonout.Interval{Lo: jsonout.Number(o.maxErr[0]), Hi: jsonout.Number(o.maxErr[1])},
					Bound: optNumber(o.bound), Ours: optInterval(o.ours), Holds: o.holds, Fails: o.fails, Inconclusive: o.inconc, First: o.first})
			}
			doc.Sets = append(doc.Sets, s)
		}
		var err error
		if doc.Stats, err = runStats(*stats); err != nil {
			return err
		}
		if err := jsonout.Write(&b, doc); err != nil {
			return err
		}
	} else {
		printCompare(&b, *model, reps, holds, fails, inconc)
	}
	if _, err := stdout.Write(b.Bytes()); err != nil {
		return err
	}
	switch {
	case fails > 0:
		return cli.Failf("compare: %s outside the a-priori float32 bound", cli.Count(fails, "element lies", "elements lie"))
	case inconc > 0 && *strict:
		return cli.Failf("compare: %s inconclusive (--strict)", cli.Count(inconc, "element", "elements"))
	}
	return nil
}

func optNumber(v float64) *jsonout.Number {
	if math.IsNaN(v) {
		return nil
	}
	n := jsonout.Number(v)
	return &n
}

func optInterval(v [2]float64) *jsonout.Interval {
	if math.IsNaN(v[0]) {
		return nil
	}
	return &jsonout.Interval{Lo: jsonout.Number(v[0]), Hi: jsonout.Number(v[1])}
}

// dataSets lists the data set directories of --data: the directory itself
// when it holds input_0.pb or output_0.pb, else its test_data_set_*
// subdirectories, sorted.
func dataSets(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, cli.Usagef("--data %s: %s", dir, statWhy(err))
	}
	if !st.IsDir() {
		return nil, cli.Usagef("--data %s: not a directory", dir)
	}
	for _, f := range []string{"input_0.pb", "output_0.pb"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return []string{dir}, nil
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, cli.Usagef("--data %s: %s", dir, statWhy(err))
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && strings.HasPrefix(e.Name(), "test_data_set_") {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, cli.Usagef("--data %s: neither a data set (input_0.pb, output_0.pb) nor a directory of test_data_set_* directories", dir)
	}
	return out, nil
}

// compareSet compares one data set.
func compareSet(model, dir string, o fpbound.Options, inputs *[]jsonout.Input) (*setReport, error) {
	ins, err := dataFiles("data", dir, "input")
	if err != nil {
		return nil, err
	}
	outs, err := dataFiles("data", dir, "output")
	if err != nil {
		return nil, err
	}
	files, err := loadONNX("compare", model, ins)
	if err != nil {
		return nil, err
	}
	if len(*inputs) == 0 {
		*inputs = append(*inputs, files.inputs...)
	} else {
		*inputs = append(*inputs, files.inputs[1:]...) // the model once
	}
	om := files.onnx
	if len(outs) != len(om.model.Graph.Outputs) {
		return nil, cli.Usagef("--data %s: %d output_N.pb files, the model has %d outputs", dir, len(outs), len(om.model.Graph.Outputs))
	}
	// output_N.pb is the N-th graph output.
	recorded := make([]recordedTensor, len(outs))
	for n, p := range outs {
		if recorded[n], err = readOutputFile(p, inputs); err != nil {
			return nil, err
		}
	}
	rep := &setReport{dir: dir}
	// The model's own outputs through fpbound, over the packed IR output.
	packed := make([]float32, files.g.Nodes[files.g.OutputID].Shape.Size())
	for _, iv := range om.im.Outputs {
		r := recorded[iv.Index]
		if !r.shape.Equal(iv.Shape) {
			return nil, cli.Usagef("--data %s: output %q: shape mismatch: the model's output has shape %v, the recorded tensor %v", outs[iv.Index], iv.Name, iv.Shape, r.shape)
		}
		if iv.Offset < 0 || iv.Offset+len(r.vals) > len(packed) {
			return nil, cli.Usagef("--onnx %s: output %q does not fit the IR output", model, iv.Name)
		}
		copy(packed[iv.Offset:], r.vals)
	}
	if len(om.im.Outputs) > 0 {
		res, err := fpbound.Compare(files.g, files.p, files.x, packed, o)
		if err != nil {
			return nil, files.modelErr(err)
		}
		if len(res.Elements) != len(packed) {
			return nil, fmt.Errorf("internal error: fpbound returned %d elements for %d", len(res.Elements), len(packed))
		}
		// Ours: the IR evaluated over binary32 (spec.F32), reported only.
		var oursOut []spec.F32
		if vals, err := irsem.DenoteAll(files.g, files.p, irsem.ConvertTensor[spec.F32](files.x)); err == nil {
			oursOut = vals[files.g.OutputID].Data
		}
		for _, iv := range om.im.Outputs {
			n := iv.Shape.Size()
			els := res.Elements[iv.Offset : iv.Offset+n]
			sum := fpbound.Summarize(els)
			or := outputReport{name: iv.Name, shape: iv.Shape.Clone(), elements: n, maxErr: [2]float64{sum.MaxErr.Lo, sum.MaxErr.Hi},
				bound: sum.MaxBound, ours: [2]float64{math.NaN(), math.NaN()}, holds: sum.Holds, fails: sum.Fails, inconc: sum.Inconclusive,
				estimate: sum.MaxEstimate, byFirst: sum.ByFirstOrder}
			if n == 0 {
				or.maxErr, or.bound = [2]float64{0, 0}, 0
			}
			if oursOut != nil {
				or.ours = [2]float64{0, 0}
				for j, e := range els {
					d := fpbound.Judge(float32(oursOut[iv.Offset+j]), fpbound.Enclosure{Exact: e.Exact, Bound: e.Bound}).Dist
					or.ours[0], or.ours[1] = math.Max(or.ours[0], d.Lo), math.Max(or.ours[1], d.Hi)
				}
			}
			or.close = closenessOf(iv.Shape, els)
			for j, e := range els {
				if e.Verdict == fpbound.Fails {
					or.first = compareElement(j, e.Recorded, e.Exact, e.Bound, verdictFails)
					break
				}
				if e.Verdict == fpbound.Inconclusive && or.first == nil {
					or.first = compareElement(j, e.Recorded, e.Exact, e.Bound, verdictInconclusive)
				}
			}
			rep.outputs = append(rep.outputs, or)
		}
	}
	// The Gradient nodes' outputs against the exact gradients.
	for _, gs := range om.im.Gradients {
		grs, err := exactGradients(files, gs)
		if err != nil {
			return nil, err
		}
		for k, name := range gs.Outputs {
			if gs.OutputIndex[k] < 0 {
				continue // not a graph output: nothing recorded
			}
			r := recorded[gs.OutputIndex[k]]
			g := grs[k]
			if !r.shape.Equal(g.Shape) {
				return nil, cli.Usagef("--data %s: output %q: shape mismatch: the gradient w.r.t. %q has shape %v, the recorded tensor %v", outs[gs.OutputIndex[k]], name, gs.WRT[k], g.Shape, r.shape)
			}
			or := outputReport{name: name, shape: g.Shape.Clone(), gradient: gs.Node, elements: len(r.vals), bound: math.NaN(), ours: [2]float64{math.NaN(), math.NaN()}, estimate: math.NaN()}
			for j, v := range g.Data {
				d := fpbound.Judge(r.vals[j], fpbound.Enclosure{Exact: v, Bound: math.Inf(1)}).Dist
				or.maxErr[0], or.maxErr[1] = math.Max(or.maxErr[0], d.Lo), math.Max(or.maxErr[1], d.Hi)
				if d.Hi == 0 {
					or.holds++
					continue
				}
				or.inconc++
				if or.first == nil {
					or.first = compareElement(j, r.vals[j], v, math.NaN(), verdictInconclusive)
				}
			}
			rep.outputs = append(rep.outputs, or)
		}
	}
	return rep, nil
}

func ioByName(vs []onnx.IOValue, name string) *onnx.IOValue {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

func compareElement(i int, rec float32, exact spec.Interval, bound float64, verdict string) *jsonout.CompareElement {
	return &jsonout.CompareElement{Index: i, Recorded: jsonout.Number(rec), Exact: jsonout.Interval{Lo: jsonout.Number(exact.Lo), Hi: jsonout.Number(exact.Hi)},
		Bound: optNumber(bound), Verdict: verdict}
}

// recordedTensor is a recorded float32 output.
type recordedTensor struct {
	shape spec.Shape
	vals  []float32
}

// readOutputFile reads a recorded output_N.pb: a FLOAT TensorProto.
func readOutputFile(path string, inputs *[]jsonout.Input) (recordedTensor, error) {
	tf, err := readTensorFile("data", path, inputs)
	if err != nil {
		return recordedTensor{}, err
	}
	if tf.pb == nil {
		return recordedTensor{}, cli.Usagef("--data %s: a recorded output is a TensorProto, not JSON", path)
	}
	if tf.pb.DataType.String() != "FLOAT" {
		return recordedTensor{}, cli.Usagef("--data %s: data type %v: compare checks float32 (FLOAT) outputs", path, tf.pb.DataType)
	}
	s, err := tf.pb.Shape()
	if err != nil {
		return recordedTensor{}, cli.Usagef("--data %s: %v", path, err)
	}
	if len(tf.pb.Float32) != s.Size() {
		return recordedTensor{}, cli.Usagef("--data %s: %d values for dims %v", path, len(tf.pb.Float32), s)
	}
	return recordedTensor{shape: s, vals: tf.pb.Float32}, nil
}

// short spells a float as its shortest decimal.
func short(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// outward spells v with at most 4 significant digits, rounded down
// (up = false) or up, so that a printed enclosure [outward(lo, false),
// outward(hi, true)] still contains [lo, hi]; a value that needs no more
// digits is printed as it is (its shortest decimal).
func outward(v float64, up bool) string {
	if v == 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return short(v)
	}
	if m, _, _ := strings.Cut(strconv.FormatFloat(math.Abs(v), 'e', -1, 64), "e"); len(strings.Replace(m, ".", "", 1)) <= 4 {
		return short(v)
	}
	s := strconv.FormatFloat(v, 'e', 3, 64)
	r, _ := strconv.ParseFloat(s, 64)
	if (up && r >= v) || (!up && r <= v) {
		return short(r)
	}
	// One unit in the last place of the mantissa further out.
	mant, exp, _ := strings.Cut(s, "e")
	neg := strings.HasPrefix(mant, "-")
	digits := strings.Replace(strings.TrimPrefix(mant, "-"), ".", "", 1)
	n, _ := strconv.Atoi(digits)
	if up != neg {
		n++
	} else {
		n--
	}
	e, _ := strconv.Atoi(exp)
	out := strconv.FormatFloat(float64(n), 'f', 0, 64) + "e" + strconv.Itoa(e-3)
	if neg {
		out = "-" + out
	}
	f, _ := strconv.ParseFloat(out, 64)
	return short(f)
}

// exactGradients computes a Gradient node's outputs (onnx.GradientSpec):
// the gradient of IR output OfOutput w.r.t. each float input WRTInputs[k],
// by a VJP with cotangent 1 on that output's elements and 0 on every other
// output — over Rat when the graph is exact, else as Interval enclosures;
// the result is an enclosure either way (a point for Rat).
func exactGradients(files *irFiles, gs onnx.GradientSpec) ([]spec.Tensor[spec.Interval], error) {
	om := files.onnx
	outShape := files.g.Nodes[files.g.OutputID].Shape
	seed, err := spec.Zeros[spec.Rat](outShape.Clone())
	if err != nil {
		return nil, err
	}
	if gs.OfOutput < 0 || gs.OfOutput >= len(om.im.Outputs) {
		return nil, cli.Usagef("--onnx %s: %s: attribute \"y\": %q is no output of the imported graph", files.graphPath, gs.Node, gs.Of)
	}
	iv := om.im.Outputs[gs.OfOutput]
	for j := 0; j < iv.Shape.Size(); j++ {
		seed.Data[iv.Offset+j] = spec.NewRat(1, 1)
	}
	var input spec.Tensor[spec.Interval]
	if ratApplies(files) {
		gr, _, err := irgrad.GradWith(files.g, files.p, files.x, &seed, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return nil, files.modelErr(err)
		}
		input = irsem.ConvertTensor[spec.Interval](gr.Input)
	} else {
		s := irsem.ConvertTensor[spec.Interval](seed)
		gr, _, err := irgrad.GradWith(files.g, files.p, irsem.ConvertTensor[spec.Interval](files.x), &s, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return nil, files.modelErr(err)
		}
		input = gr.Input
	}
	parts, err := unpack(om.im.Inputs, input.Data)
	if err != nil {
		return nil, err
	}
	out := make([]spec.Tensor[spec.Interval], len(gs.WRT))
	for k := range gs.WRT {
		i := gs.WRTInputs[k]
		if i < 0 || i >= len(parts) {
			return nil, cli.Usagef("--onnx %s: %s: attribute \"xs\": %q is not a float graph input", files.graphPath, gs.Node, gs.WRT[k])
		}
		out[k] = spec.Tensor[spec.Interval]{Shape: om.im.Inputs[i].Shape.Clone(), Data: parts[i]}
	}
	return out, nil
}

func printCompare(w io.Writer, model string, reps []setReport, holds, fails, inconc int) {
	fmt.Fprintf(w, "model %s: %s\n", model, cli.Count(len(reps), "data set", "data sets"))
	for _, r := range reps {
		fmt.Fprintf(w, "data set %s:\n", r.dir)
		for _, o := range r.outputs {
			what := "output"
			if o.gradient != "" {
				what = "gradient output"
			}
			fmt.Fprintf(w, "  %s %q %v: %s; max |recorded − exact| ∈ [%s, %s]", what, o.name, o.shape, cli.Count(o.elements, "element", "elements"), outward(o.maxErr[0], false), outward(o.maxErr[1], true))
			if !math.IsNaN(o.bound) {
				fmt.Fprintf(w, "; bound ≤ %s", outward(o.bound, true))
			} else {
				fmt.Fprintf(w, "; against the exact gradient of %s", o.gradient)
			}
			fmt.Fprintf(w, "; %d hold, %d fail, %d inconclusive\n", o.holds, o.fails, o.inconc)
			if !math.IsNaN(o.bound) && o.elements > 0 {
				fmt.Fprintf(w, "    (bound: the first-order bound decides %d of %d elements, the classic one the rest", o.byFirst, o.elements)
				if !math.IsNaN(o.estimate) && !math.IsInf(o.estimate, 1) {
					fmt.Fprintf(w, "; reported, not decided: probabilistic estimate ≤ %s", outward(o.estimate, true))
				}
				fmt.Fprintln(w, ")")
			}
			if !math.IsNaN(o.ours[0]) {
				fmt.Fprintf(w, "    (reported, not decided: tlcheck's own f32 evaluation: max |f32 − exact| ∈ [%s, %s])\n", outward(o.ours[0], false), outward(o.ours[1], true))
			}
			if f := o.first; f != nil && f.Verdict != verdictHolds {
				fmt.Fprintf(w, "    first %s element %d: recorded %s, exact ∈ [%s, %s]", f.Verdict, f.Index, short(float64(f.Recorded)), short(float64(f.Exact.Lo.(jsonout.Number))), short(float64(f.Exact.Hi.(jsonout.Number))))
				if f.Bound != nil {
					fmt.Fprintf(w, ", bound %s", short(float64(*f.Bound)))
				}
				fmt.Fprintf(w, " (index %s)\n", indexText(o.shape, f.Index))
				io.WriteString(w, o.close.lines("    "))
			}
		}
	}
	switch {
	case fails > 0:
		fmt.Fprintf(w, "\ncompare: FAILS: %s outside the bound (%d hold, %d inconclusive)\n", cli.Count(fails, "element lies", "elements lie"), holds, inconc)
	case inconc > 0:
		fmt.Fprintf(w, "\nwarning: %s inconclusive: neither shown within the bound nor outside it (%d hold); --strict makes this exit 1\n", cli.Count(inconc, "element is", "elements are"), holds)
	default:
		fmt.Fprintf(w, "\ncompare: all %s hold\n", cli.Count(holds, "element", "elements"))
	}
}
