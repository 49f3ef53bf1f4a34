// Package compare judges values another runtime computed against
// tlcheck's exact values and the a-priori rounding bounds of fpbound:
// the recorded outputs of an ONNX model on its recorded inputs (Recorded,
// behind `tlcheck compare`) and foreign gradients, dumped by a PyTorch or
// JAX job (Grads, behind `tlcheck compare-grad`).
//
// # The decision rule
//
// Each element is judged by fpbound (Judge, Compare; the argument is in
// `go doc ./fpbound`):
//
//   - holds: |recorded − exact| ≤ bound is proven, so some float32
//     evaluation order of the graph may have produced the value;
//   - fails: |recorded − exact| > bound is proven: no float32 evaluation
//     of this graph, in any order, produces it — the runtime computed
//     something else;
//   - inconclusive: the enclosures could not decide either.
//
// The bound of a model output is fpbound.Compare's a-priori binary32
// bound of the graph (for a graph that computes in binary64, binary16 or
// bfloat16 alone, that format's: fpbound.SharpBounds64, SharpBounds16,
// SharpBoundsBF16; for one that computes in FLOAT and DOUBLE,
// fpbound.SharpBoundsMixed, each IR node's roundings charged in its own
// format, fpbound's doc "Mixed binary32 and binary64 graphs", the report
// naming the mix); the bound of a gradient is fpbound.GradErr's, for
// binary32 reverse-mode evaluation in any summation order.
//
// The outputs of an ONNX training Gradient node are checked against
// tlcheck's exact gradients instead: a recorded gradient equal to the
// exact value holds (its error, 0, is below any bound); one that differs
// is inconclusive, since no a-priori bound of a float32 reverse pass is
// computed there, and the difference is reported. Integer and boolean
// outputs the import decides are compared exactly: equal holds, different
// fails. An output element whose ONNX value is an IEEE special (NaN, ±∞)
// holds iff the recorded value is it.
//
// Also reported, never decided on: the largest |f32 − exact| of
// tlcheck's own binary32 evaluation of the imported graph (irsem over
// spec.F32), which shows how far one particular float32 evaluation order
// lies from the exact values, and the summary in the manner of
// torch.testing.assert_close (Closeness).
//
// The commands' reports are built here too: RecordedDir loads and judges one
// recorded data set directory; WriteText and Doc are `tlcheck compare`'s text
// and JSON, GradsText and GradsJSON `tlcheck compare-grad`'s.
package compare

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// The verdicts, as the --json documents and the reports spell them.
const (
	Holds        = "holds"
	Fails        = "fails"
	Inconclusive = "inconclusive"
)

// Verdict is the verdict of a whole comparison from its counts: fails
// when an element fails, else inconclusive when one is, else holds.
func Verdict(fails, inconclusive int) string {
	switch {
	case fails > 0:
		return Fails
	case inconclusive > 0:
		return Inconclusive
	}
	return Holds
}

// Output is one recorded output's comparison.
type Output struct {
	Name     string
	Shape    spec.Shape
	Gradient string // the Gradient node it comes from ("" for a model output)
	Elements int
	MaxErr   [2]float64 // an enclosure [lo, hi] of max |recorded − exact|
	Bound    float64    // the largest per-element bound (NaN: none, a gradient)
	Ours     [2]float64 // an enclosure of max |our f32 − exact| (NaN: not computed)
	Estimate float64    // the largest probabilistic estimate (NaN: none; reported only)
	ByFirst  int        // elements decided by the first-order bound
	Holds    int
	Fails    int
	Inconc   int
	// First is the first failing element, else the first inconclusive
	// one (nil when every element holds).
	First *jsonout.CompareElement
	Close Closeness // the assert_close-style summary
	Exact bool      // an integer or boolean output, compared exactly
	// Centre names the evaluation that encloses the exact values of a
	// model output (fpbound.CentreExact, CentreBall, CentreFloat64,
	// CentreInterval; ""
	// for an exact or Gradient output), CentreFallback the
	// exact-arithmetic budget (--max-rat-work, --max-rat-bits,
	// --max-rat-bits-total) that made a graph exact over the rationals
	// fall back from the exact centre ("" when none did).
	Centre, CentreFallback string
	// Format names the formats the bound was computed for where that is
	// not the output's own (MixedFormat; "" otherwise).
	Format string
}

// MixedFormat is Output.Format for a graph that computes in FLOAT and
// DOUBLE: each IR node's roundings charged with its own format's
// constants, binary32's wherever the importer does not show the node to
// compute in DOUBLE (fpbound's doc, "Mixed binary32 and binary64 graphs").
const MixedFormat = "binary32 and binary64 mixed, each node's roundings charged in its own format"

// JSON is the output's entry in a tlcheck.compare.v1 document.
func (o Output) JSON() jsonout.CompareOutput {
	return jsonout.CompareOutput{Name: o.Name, Shape: append([]int{}, o.Shape...), Gradient: o.Gradient,
		Elements: o.Elements, MaxErr: jsonout.Interval{Lo: jsonout.Number(o.MaxErr[0]), Hi: jsonout.Number(o.MaxErr[1])},
		Bound: optNumber(o.Bound), Ours: optInterval(o.Ours), Holds: o.Holds, Fails: o.Fails, Inconclusive: o.Inconc, First: o.First,
		Centre: o.Centre, CentreFallback: o.CentreFallback}
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

func element(i int, rec float64, exact spec.Interval, bound float64, verdict string) *jsonout.CompareElement {
	return &jsonout.CompareElement{Index: i, Recorded: jsonout.Number(rec), Exact: jsonout.Interval{Lo: jsonout.Number(exact.Lo), Hi: jsonout.Number(exact.Hi)},
		Bound: optNumber(bound), Verdict: verdict}
}

// Set is one data set's comparison.
type Set struct {
	Dir     string
	Outputs []Output
}

// JSON is the set's entry in a tlcheck.compare.v1 document.
func (s Set) JSON() jsonout.CompareSet {
	out := jsonout.CompareSet{Directory: s.Dir, Outputs: []jsonout.CompareOutput{}}
	for _, o := range s.Outputs {
		out.Outputs = append(out.Outputs, o.JSON())
	}
	return out
}

// Counts sums the verdict counts of every output of the sets.
func Counts(sets []Set) (holds, fails, inconclusive int) {
	for _, s := range sets {
		for _, o := range s.Outputs {
			holds, fails, inconclusive = holds+o.Holds, fails+o.Fails, inconclusive+o.Inconc
		}
	}
	return holds, fails, inconclusive
}

// recordedTensor is a recorded float32 output, or a float64 one (vals64
// set, vals nil).
type recordedTensor struct {
	shape  spec.Shape
	dt     onnx.DataType
	vals   []float32
	vals64 []float64
}

// recorded are the files of one data set, read: output_N.pb is the N-th
// graph output, a float one in floats[N], an integer or boolean one the
// import decided, judged, in exact[N].
type recorded struct {
	paths  []string
	floats []recordedTensor
	exact  map[int][]fpbound.Element
}

// Recorded compares one data set: m is the ONNX model loaded with the
// set's inputs (model.LoadONNX with Options.Recorded), dir the set's
// directory and outputs its output_N.pb files, which are read here and
// appended, with their digests, to *files.
func Recorded(m *model.Model, dir string, outputs []string, o fpbound.Options, files *[]jsonout.Input) (*Set, error) {
	om := m.ONNX
	if len(outputs) != len(om.Model.Graph.Outputs) {
		return nil, cli.Usagef("--data %s: %d output_N.pb files, the model has %d outputs", dir, len(outputs), len(om.Model.Graph.Outputs))
	}
	rec, err := readRecorded(om.Imported, outputs, files)
	if err != nil {
		return nil, err
	}
	set := &Set{Dir: dir}
	if len(om.Imported.Outputs) > 0 {
		outs, err := floatOutputs(m, rec, o)
		if err != nil {
			return nil, err
		}
		set.Outputs = append(set.Outputs, outs...)
	}
	set.Outputs = append(set.Outputs, exactOutputs(om.Imported, rec)...)
	outs, err := gradientOutputs(m, rec)
	if err != nil {
		return nil, err
	}
	set.Outputs = append(set.Outputs, outs...)
	return set, nil
}

// readRecorded reads a data set's output files.
func readRecorded(im *onnx.Imported, paths []string, files *[]jsonout.Input) (*recorded, error) {
	r := &recorded{paths: paths, floats: make([]recordedTensor, len(paths)), exact: map[int][]fpbound.Element{}}
	exactAt := map[int]*onnx.ExactOutput{}
	for i := range im.Exact {
		exactAt[im.Exact[i].Index] = &im.Exact[i]
	}
	var err error
	for n, p := range paths {
		if e := exactAt[n]; e != nil {
			if r.exact[n], err = readExactFile(p, e, files); err != nil {
				return nil, err
			}
			continue
		}
		if r.floats[n], err = readOutputFile(p, files); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// floatOutputs judges the model's own outputs through fpbound, over the
// packed IR output.
func floatOutputs(m *model.Model, rec *recorded, o fpbound.Options) ([]Output, error) {
	im := m.ONNX.Imported
	packed := make([]float32, m.Graph.Nodes[m.Graph.OutputID].Shape.Size())
	// The outputs' format: FLOAT (binary32, the float32 path), or DOUBLE,
	// FLOAT16, BFLOAT16, judged on the recorded values as float64
	// (packed64; their formats' bounds), each only where the graph
	// computes in that format alone (onnx.Imported.Computed); or a mix of
	// FLOAT and DOUBLE, judged as float64 against the binary32 bound.
	format, mixed, err := outputFormat(m.GraphPath, im)
	if err != nil {
		return nil, err
	}
	var packed64 []float64
	if format != onnx.Float || mixed || hasIntOutput(im) {
		packed64 = make([]float64, len(packed))
	}
	for _, iv := range im.Outputs {
		r := rec.floats[iv.Index]
		if r.dt != iv.DataType {
			return nil, cli.Usagef("--data %s: output %q: data type %v, the model's output is %v", rec.paths[iv.Index], iv.Name, r.dt, iv.DataType)
		}
		if !r.shape.Equal(iv.Shape) {
			return nil, cli.Usagef("--data %s: output %q: shape mismatch: the model's output has shape %v, the recorded tensor %v", rec.paths[iv.Index], iv.Name, iv.Shape, r.shape)
		}
		if iv.Offset < 0 || iv.Offset+r.shape.Size() > len(packed) {
			return nil, cli.Usagef("--onnx %s: output %q does not fit the IR output", m.GraphPath, iv.Name)
		}
		copy(packed[iv.Offset:], r.vals)
		if packed64 != nil {
			for j, v := range r.vals {
				packed64[iv.Offset+j] = float64(v)
			}
			copy(packed64[iv.Offset:], r.vals64)
		}
	}
	var res *fpbound.Result
	if packed64 == nil {
		res, err = fpbound.Compare(m.Graph, m.Payload, m.Input, packed, o)
	} else {
		res, err = compareFormat(m, format, mixed, packed64, o)
	}
	if err != nil {
		return nil, m.Err(err)
	}
	if len(res.Elements) != len(packed) {
		return nil, fmt.Errorf("internal error: fpbound returned %d elements for %d", len(res.Elements), len(packed))
	}
	applySpecials(m.ONNX, res.Elements, packed64)
	// Ours: the IR evaluated over binary32 (spec.F32), reported only; its
	// output alone is read, so irsem.Denote, which frees each value after
	// its last reader (DenoteAll kept every node's value to the end).
	var oursOut []spec.F32
	if packed64 == nil {
		if out, err := irsem.Denote(m.Graph, m.Payload, irsem.ConvertTensor[spec.F32](m.Input)); err == nil {
			oursOut = out.Data
		}
	}
	var out []Output
	for _, iv := range im.Outputs {
		fo := floatOutput(iv, res.Elements[iv.Offset:iv.Offset+iv.Shape.Size()], oursOut, packed64)
		fo.Centre, fo.CentreFallback = res.Centre, res.CentreFallback
		if mixed {
			fo.Format = MixedFormat
		}
		out = append(out, fo)
	}
	return out, nil
}

// floatOutput summarises the judged elements els of output iv; oursOut
// is tlcheck's own binary32 evaluation of the IR output (nil: none),
// packed64 the recorded values of a non-FLOAT format (nil for FLOAT).
func floatOutput(iv onnx.IOValue, els []fpbound.Element, oursOut []spec.F32, packed64 []float64) Output {
	n := iv.Shape.Size()
	sum := fpbound.Summarize(els)
	or := Output{Name: iv.Name, Shape: iv.Shape.Clone(), Elements: n, MaxErr: [2]float64{sum.MaxErr.Lo, sum.MaxErr.Hi},
		Bound: sum.MaxBound, Ours: [2]float64{math.NaN(), math.NaN()}, Holds: sum.Holds, Fails: sum.Fails, Inconc: sum.Inconclusive,
		Estimate: sum.MaxEstimate, ByFirst: sum.ByFirstOrder}
	if n == 0 {
		or.MaxErr, or.Bound = [2]float64{0, 0}, 0
	}
	if oursOut != nil {
		or.Ours = [2]float64{0, 0}
		for j, e := range els {
			d := fpbound.Judge(float32(oursOut[iv.Offset+j]), fpbound.Enclosure{Exact: e.Exact, Bound: e.Bound}).Dist
			or.Ours[0], or.Ours[1] = math.Max(or.Ours[0], d.Lo), math.Max(or.Ours[1], d.Hi)
		}
	}
	or.Close = Summarize(iv.Shape, els)
	for j, e := range els {
		rec := float64(e.Recorded)
		if packed64 != nil {
			rec = packed64[iv.Offset+j]
		}
		if e.Verdict == fpbound.Fails {
			or.First = element(j, rec, e.Exact, e.Bound, Fails)
			break
		}
		if e.Verdict == fpbound.Inconclusive && or.First == nil {
			or.First = element(j, rec, e.Exact, e.Bound, Inconclusive)
		}
	}
	return or
}

// exactOutputs are the integer and boolean outputs the import decided,
// compared exactly.
func exactOutputs(im *onnx.Imported, rec *recorded) []Output {
	var out []Output
	for _, e := range im.Exact {
		els := rec.exact[e.Index]
		sum := fpbound.Summarize(els)
		or := Output{Name: e.Name, Shape: e.Shape.Clone(), Elements: len(els), MaxErr: [2]float64{sum.MaxErr.Lo, sum.MaxErr.Hi},
			Bound: 0, Ours: [2]float64{math.NaN(), math.NaN()}, Estimate: math.NaN(), Holds: sum.Holds, Fails: sum.Fails, Inconc: sum.Inconclusive, Exact: true}
		or.Close = Summarize(e.Shape, els)
		for j, el := range els {
			if el.Verdict == fpbound.Fails {
				or.First = element(j, float64(el.Recorded), el.Exact, 0, Fails)
				break
			}
		}
		out = append(out, or)
	}
	return out
}

// gradientOutputs are the Gradient nodes' outputs against the exact
// gradients.
func gradientOutputs(m *model.Model, rec *recorded) ([]Output, error) {
	var out []Output
	for _, gs := range m.ONNX.Imported.Gradients {
		grs, err := exactGradients(m, gs)
		if err != nil {
			return nil, err
		}
		for k, name := range gs.Outputs {
			if gs.OutputIndex[k] < 0 {
				continue // not a graph output: nothing recorded
			}
			r := rec.floats[gs.OutputIndex[k]]
			if r.dt != onnx.Float {
				return nil, cli.Usagef("--data %s: output %q: data type %v: a Gradient output is compared as FLOAT", rec.paths[gs.OutputIndex[k]], name, r.dt)
			}
			g := grs[k]
			if !r.shape.Equal(g.Shape) {
				return nil, cli.Usagef("--data %s: output %q: shape mismatch: the gradient w.r.t. %q has shape %v, the recorded tensor %v", rec.paths[gs.OutputIndex[k]], name, gs.WRT[k], g.Shape, r.shape)
			}
			or := Output{Name: name, Shape: g.Shape.Clone(), Gradient: gs.Node, Elements: len(r.vals), Bound: math.NaN(), Ours: [2]float64{math.NaN(), math.NaN()}, Estimate: math.NaN()}
			for j, v := range g.Data {
				d := fpbound.Judge(r.vals[j], fpbound.Enclosure{Exact: v, Bound: math.Inf(1)}).Dist
				or.MaxErr[0], or.MaxErr[1] = math.Max(or.MaxErr[0], d.Lo), math.Max(or.MaxErr[1], d.Hi)
				if d.Hi == 0 {
					or.Holds++
					continue
				}
				or.Inconc++
				if or.First == nil {
					or.First = element(j, float64(r.vals[j]), v, math.NaN(), Inconclusive)
				}
			}
			out = append(out, or)
		}
	}
	return out, nil
}

// hasIntOutput reports that some output the IR computes is an integer
// (a Cast of float data to an integer type), whose recorded values are
// judged as float64 (packed64), never rounded to float32.
func hasIntOutput(im *onnx.Imported) bool {
	for _, iv := range im.Outputs {
		if !iv.DataType.IsFloat() {
			return true
		}
	}
	return false
}
