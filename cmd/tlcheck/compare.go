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
	exact    bool      // an integer or boolean output, compared exactly
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
	exactAt := map[int]*onnx.ExactOutput{}
	for i := range om.im.Exact {
		exactAt[om.im.Exact[i].Index] = &om.im.Exact[i]
	}
	exactEls := map[int][]fpbound.Element{}
	for n, p := range outs {
		if e := exactAt[n]; e != nil {
			if exactEls[n], err = readExactFile(p, e, inputs); err != nil {
				return nil, err
			}
			continue
		}
		if recorded[n], err = readOutputFile(p, inputs); err != nil {
			return nil, err
		}
	}
	rep := &setReport{dir: dir}
	// The model's own outputs through fpbound, over the packed IR output.
	packed := make([]float32, files.g.Nodes[files.g.OutputID].Shape.Size())
	// The outputs' format: FLOAT (binary32, the float32 path), or DOUBLE,
	// FLOAT16, BFLOAT16, judged on the recorded values as float64
	// (packed64; their formats' bounds), each only where the graph
	// computes in that format alone (onnx.Imported.Computed).
	format, err := outputFormat(model, om.im)
	if err != nil {
		return nil, err
	}
	var packed64 []float64
	if format != onnx.Float {
		packed64 = make([]float64, len(packed))
	}
	for _, iv := range om.im.Outputs {
		r := recorded[iv.Index]
		if r.dt != iv.DataType {
			return nil, cli.Usagef("--data %s: output %q: data type %v, the model's output is %v", outs[iv.Index], iv.Name, r.dt, iv.DataType)
		}
		if !r.shape.Equal(iv.Shape) {
			return nil, cli.Usagef("--data %s: output %q: shape mismatch: the model's output has shape %v, the recorded tensor %v", outs[iv.Index], iv.Name, iv.Shape, r.shape)
		}
		if iv.Offset < 0 || iv.Offset+r.shape.Size() > len(packed) {
			return nil, cli.Usagef("--onnx %s: output %q does not fit the IR output", model, iv.Name)
		}
		copy(packed[iv.Offset:], r.vals)
		if packed64 != nil {
			for j, v := range r.vals {
				packed64[iv.Offset+j] = float64(v)
			}
			copy(packed64[iv.Offset:], r.vals64)
		}
	}
	if len(om.im.Outputs) > 0 {
		var res *fpbound.Result
		if packed64 == nil {
			res, err = fpbound.Compare(files.g, files.p, files.x, packed, o)
		} else {
			res, err = compareFormat(files, format, packed64, o)
		}
		if err != nil {
			return nil, files.modelErr(err)
		}
		if len(res.Elements) != len(packed) {
			return nil, fmt.Errorf("internal error: fpbound returned %d elements for %d", len(res.Elements), len(packed))
		}
		applySpecials(om, res.Elements, packed64)
		// Ours: the IR evaluated over binary32 (spec.F32), reported only.
		var oursOut []spec.F32
		if packed64 == nil {
			if vals, err := irsem.DenoteAll(files.g, files.p, irsem.ConvertTensor[spec.F32](files.x)); err == nil {
				oursOut = vals[files.g.OutputID].Data
			}
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
				rec := float64(e.Recorded)
				if packed64 != nil {
					rec = packed64[iv.Offset+j]
				}
				if e.Verdict == fpbound.Fails {
					or.first = compareElement(j, rec, e.Exact, e.Bound, verdictFails)
					break
				}
				if e.Verdict == fpbound.Inconclusive && or.first == nil {
					or.first = compareElement(j, rec, e.Exact, e.Bound, verdictInconclusive)
				}
			}
			rep.outputs = append(rep.outputs, or)
		}
	}
	// The integer and boolean outputs the import decided, exactly.
	for _, e := range om.im.Exact {
		els := exactEls[e.Index]
		sum := fpbound.Summarize(els)
		or := outputReport{name: e.Name, shape: e.Shape.Clone(), elements: len(els), maxErr: [2]float64{sum.MaxErr.Lo, sum.MaxErr.Hi},
			bound: 0, ours: [2]float64{math.NaN(), math.NaN()}, estimate: math.NaN(), holds: sum.Holds, fails: sum.Fails, inconc: sum.Inconclusive, exact: true}
		or.close = closenessOf(e.Shape, els)
		for j, el := range els {
			if el.Verdict == fpbound.Fails {
				or.first = compareElement(j, float64(el.Recorded), el.Exact, 0, verdictFails)
				break
			}
		}
		rep.outputs = append(rep.outputs, or)
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
			if r.dt != onnx.Float {
				return nil, cli.Usagef("--data %s: output %q: data type %v: a Gradient output is compared as FLOAT", outs[gs.OutputIndex[k]], name, r.dt)
			}
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
					or.first = compareElement(j, float64(r.vals[j]), v, math.NaN(), verdictInconclusive)
				}
			}
			rep.outputs = append(rep.outputs, or)
		}
	}
	return rep, nil
}

// applySpecials judges the output elements whose ONNX value is an IEEE
// special (onnx.Imported.Analyze): a Known element holds iff the recorded
// value is it (NaN matching NaN), an Unknown one is inconclusive; and
// where the graph applies a partial op (Sqrt, Log, Div, …) to a computed
// value, a recorded NaN or ±∞ is not a proven failure: inconclusive.
func applySpecials(om *onnxModel, els []fpbound.Element, rec64 []float64) {
	sp := om.specials
	if sp == nil {
		return
	}
	for i, iv := range om.im.Outputs {
		var st []onnx.Special
		if i < len(sp.Outputs) {
			st = sp.Outputs[i]
		}
		for j := 0; j < iv.Shape.Size() && iv.Offset+j < len(els); j++ {
			e := &els[iv.Offset+j]
			rec := float64(e.Recorded)
			if rec64 != nil {
				rec = rec64[iv.Offset+j]
			}
			if st == nil || st[j].Status == onnx.Real {
				if sp.Partial != "" && e.Verdict == fpbound.Fails && (math.IsNaN(rec) || math.IsInf(rec, 0)) {
					e.Verdict = fpbound.Inconclusive
					e.Reason = sp.Partial + " applies a partial op to a computed value: the runtime may meet its domain boundary"
				}
				continue
			}
			s := st[j]
			e.Bound, e.Classic, e.FirstOrder, e.Estimate = 0, 0, 0, 0
			e.Exact = spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
			e.Dist = spec.Interval{Lo: 0, Hi: math.Inf(1)}
			holds, ok := s.Judge(rec)
			switch {
			case !ok:
				e.Verdict, e.Bound = fpbound.Inconclusive, math.Inf(1)
				e.Reason = "an IEEE special value meets a value the runtime computes"
			case holds:
				e.Verdict, e.Exact, e.Dist = fpbound.Holds, spec.Point(s.Value), spec.Point(0)
			default:
				e.Verdict, e.Exact = fpbound.Fails, spec.Point(s.Value)
				e.Dist = spec.Point(math.Inf(1))
				if !math.IsNaN(s.Value) && !math.IsInf(s.Value, 0) && !math.IsNaN(rec) && !math.IsInf(rec, 0) {
					e.Dist = spec.Point(math.Abs(rec - s.Value))
				}
			}
		}
	}
}

func ioByName(vs []onnx.IOValue, name string) *onnx.IOValue {
	for i := range vs {
		if vs[i].Name == name {
			return &vs[i]
		}
	}
	return nil
}

func compareElement(i int, rec float64, exact spec.Interval, bound float64, verdict string) *jsonout.CompareElement {
	return &jsonout.CompareElement{Index: i, Recorded: jsonout.Number(rec), Exact: jsonout.Interval{Lo: jsonout.Number(exact.Lo), Hi: jsonout.Number(exact.Hi)},
		Bound: optNumber(bound), Verdict: verdict}
}

// recordedTensor is a recorded float32 output, or a float64 one (vals64
// set, vals nil).
type recordedTensor struct {
	shape  spec.Shape
	dt     onnx.DataType
	vals   []float32
	vals64 []float64
}

// outputFormat is the one float type of im's outputs, refused (naming the
// output) when the outputs have several or the graph computes in another
// format than the output's (see onnx.Imported.Computed).
func outputFormat(model string, im *onnx.Imported) (onnx.DataType, error) {
	format := onnx.DataType(0)
	for _, iv := range im.Outputs {
		if format == 0 {
			format = iv.DataType
		}
		if iv.DataType != format {
			return 0, cli.Usagef("--onnx %s: output %q is %v, another output %v: compare judges the outputs of one float type", model, iv.Name, iv.DataType, format)
		}
		for _, c := range im.Computed {
			mixed := c != iv.DataType
			if iv.DataType == onnx.Float {
				mixed = c.Is16() // DOUBLE values cannot reach a FLOAT output
			}
			if mixed {
				return 0, cli.Usagef("--onnx %s: output %q is %v but the graph also computes %v values: the a-priori bound is for one format, not a mix", model, iv.Name, iv.DataType, c)
			}
		}
	}
	if format == 0 {
		format = onnx.Float
	}
	return format, nil
}

// compareFormat is fpbound.Compare for a graph that computes in binary64,
// binary16 or bfloat16: each recorded value (as a float64) against that
// format's bound (fpbound.SharpBounds64, SharpBounds16, SharpBoundsBF16).
func compareFormat(files *irFiles, format onnx.DataType, rec []float64, o fpbound.Options) (*fpbound.Result, error) {
	sharp := fpbound.SharpBounds64
	switch format {
	case onnx.Float16:
		sharp = fpbound.SharpBounds16
	case onnx.BFloat16:
		sharp = fpbound.SharpBoundsBF16
	}
	sh, err := sharp(files.g, files.p, files.x, o)
	if err != nil {
		return nil, err
	}
	if len(sh) != len(rec) {
		return nil, fmt.Errorf("internal error: fpbound returned %d elements for %d", len(sh), len(rec))
	}
	r := &fpbound.Result{Elements: make([]fpbound.Element, len(sh))}
	for i, s := range sh {
		el := fpbound.JudgeFloat64(rec[i], s.Enclosure)
		el.Classic, el.FirstOrder, el.Estimate = s.Classic, s.FirstOrder, s.Estimate
		r.Elements[i] = el
	}
	r.Summary = fpbound.Summarize(r.Elements)
	return r, nil
}

// readOutputFile reads a recorded output_N.pb: a FLOAT or DOUBLE
// TensorProto.
func readOutputFile(path string, inputs *[]jsonout.Input) (recordedTensor, error) {
	tf, err := readTensorFile("data", path, inputs)
	if err != nil {
		return recordedTensor{}, err
	}
	if tf.pb == nil {
		return recordedTensor{}, cli.Usagef("--data %s: a recorded output is a TensorProto, not JSON", path)
	}
	if !tf.pb.DataType.IsFloat() {
		return recordedTensor{}, cli.Usagef("--data %s: data type %v: compare checks FLOAT, DOUBLE, FLOAT16 and BFLOAT16 outputs (and integer or boolean ones the import decides)", path, tf.pb.DataType)
	}
	s, err := tf.pb.Shape()
	if err != nil {
		return recordedTensor{}, cli.Usagef("--data %s: %v", path, err)
	}
	if tf.pb.Len() != s.Size() {
		return recordedTensor{}, cli.Usagef("--data %s: %d values for dims %v", path, tf.pb.Len(), s)
	}
	if tf.pb.DataType == onnx.Double {
		return recordedTensor{shape: s, dt: onnx.Double, vals64: tf.pb.Float64}, nil
	}
	return recordedTensor{shape: s, dt: tf.pb.DataType, vals: tf.pb.Float32}, nil
}

// readExactFile reads a recorded integer or boolean output_N.pb and
// judges it against the import's exact value e, element by element: equal
// holds, different fails (integers compared as integers).
func readExactFile(path string, e *onnx.ExactOutput, inputs *[]jsonout.Input) ([]fpbound.Element, error) {
	tf, err := readTensorFile("data", path, inputs)
	if err != nil {
		return nil, err
	}
	if tf.pb == nil {
		return nil, cli.Usagef("--data %s: a recorded output is a TensorProto, not JSON", path)
	}
	if tf.pb.DataType != e.DataType {
		return nil, cli.Usagef("--data %s: data type %v: the model's output %q is %v", path, tf.pb.DataType, e.Name, e.DataType)
	}
	s, err := tf.pb.Shape()
	if err != nil {
		return nil, cli.Usagef("--data %s: %v", path, err)
	}
	if !s.Equal(e.Shape) {
		return nil, cli.Usagef("--data %s: output %q: shape mismatch: the model's output has shape %v, the recorded tensor %v", path, e.Name, e.Shape, s)
	}
	if tf.pb.Len() != len(e.Values) {
		return nil, cli.Usagef("--data %s: %d values for dims %v", path, tf.pb.Len(), s)
	}
	els := make([]fpbound.Element, len(e.Values))
	for j, want := range e.Values {
		var got int64
		if tf.pb.DataType == onnx.Int64 {
			got = tf.pb.Int64[j]
		} else {
			got = int64(tf.pb.Int32[j])
		}
		d := math.Abs(float64(got) - float64(want))
		el := fpbound.Element{Recorded: float32(got), Exact: spec.Point(float64(want)), Dist: spec.Point(d), Verdict: fpbound.Holds, Estimate: math.NaN()}
		if got != want {
			el.Verdict = fpbound.Fails
			if d == 0 {
				el.Dist = spec.Interval{Lo: 0, Hi: math.Inf(1)} // beyond float64's integers: still different
			}
		}
		els[j] = el
	}
	return els, nil
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
			if o.exact {
				fmt.Fprintln(w, "    (an integer or boolean output decided at import: compared exactly)")
			} else if !math.IsNaN(o.bound) && o.elements > 0 {
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
