package compare

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/internal/cli"
	"github.com/tlcheck/tlcheck/internal/jsonout"
	"github.com/tlcheck/tlcheck/irgrad"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/model"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// applySpecials judges the output elements whose ONNX value is an IEEE
// special (onnx.Imported.Analyze): a Known element holds iff the recorded
// value is it (NaN matching NaN), an Unknown one is inconclusive, a
// Masked one (−∞ = a finite part plus an additive −∞ mask) is judged so
// only where fpbound's bound on its finite part, the IR's value there, is
// finite (then every evaluation's finite part is finite and the sum is
// −∞), inconclusive otherwise; and
// where the graph applies a partial op (Sqrt, Log, Div, …) to a computed
// value, a recorded NaN or ±∞ is not a proven failure: inconclusive.
func applySpecials(om *model.ONNX, els []fpbound.Element, rec64 []float64) {
	sp := om.Specials
	if sp == nil {
		return
	}
	for i, iv := range om.Imported.Outputs {
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
			finitePart := !math.IsInf(e.Bound, 0) && !math.IsNaN(e.Bound)
			e.Bound, e.Classic, e.FirstOrder, e.Estimate = 0, 0, 0, 0
			e.Exact = spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
			e.Dist = spec.Interval{Lo: 0, Hi: math.Inf(1)}
			holds, ok := s.Judge(rec)
			switch {
			case s.Masked && !finitePart:
				// −∞ only if the runtime's finite part did not overflow,
				// which no finite bound proves here.
				e.Verdict, e.Bound = fpbound.Inconclusive, math.Inf(1)
				e.Reason = "a masked element whose finite part may overflow (then NaN, not −∞)"
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

// outputFormat is the one float type of im's outputs whose format's
// bound judges them, refused (naming the output) when the outputs have
// several or the graph computes in another format than the output's (see
// onnx.Imported.Computed) — except a mix of FLOAT and DOUBLE alone
// (outputs and computed values together), which is judged with binary32's
// constants (fpbound's doc, "Mixed binary32 and binary64 graphs"): then
// mixed is true and the format FLOAT.
func outputFormat(model string, im *onnx.Imported) (format onnx.DataType, mixed bool, err error) {
	if mixedFloatDouble(im) {
		return onnx.Float, true, nil
	}
	for _, iv := range im.Outputs {
		if !iv.DataType.IsFloat() {
			// An integer cast from float data (onnx's trunc_int): judged
			// in the format of the computation that feeds it (below).
			continue
		}
		if format == 0 {
			format = iv.DataType
		}
		if iv.DataType != format {
			return 0, false, cli.Usagef("--onnx %s: output %q is %v, another output %v: compare judges the outputs of one float type (or of FLOAT and DOUBLE together)", model, iv.Name, iv.DataType, format)
		}
		for _, c := range im.Computed {
			if c != iv.DataType {
				return 0, false, cli.Usagef("--onnx %s: output %q is %v but the graph also computes %v values: the a-priori bound is for one format, or for FLOAT and DOUBLE together, not this mix", model, iv.Name, iv.DataType, c)
			}
		}
	}
	if format == 0 {
		format = onnx.Float
		switch {
		case len(im.Computed) == 1:
			format = im.Computed[0]
		case len(im.Computed) > 1:
			return 0, false, cli.Usagef("--onnx %s: the integer outputs are cast from values computed in %v: the a-priori bound is for one format, or for FLOAT and DOUBLE together, not this mix", model, im.Computed)
		}
	}
	return format, false, nil
}

// binary32Nodes is, per IR node of m's graph, whether it rounds to
// binary32 in a graph that mixes FLOAT and DOUBLE: every node that the
// importer's types (onnx.Imported.Types, the one source) do not show to
// compute in DOUBLE alone. nil when m has no such types for its graph.
func binary32Nodes(m *model.Model) []bool {
	if m.ONNX == nil || m.ONNX.Imported == nil || len(m.ONNX.Imported.Types) != len(m.Graph.Nodes) {
		return nil
	}
	narrow := make([]bool, len(m.Graph.Nodes))
	for j, t := range m.ONNX.Imported.Types {
		narrow[j] = t != onnx.Double
	}
	return narrow
}

// mixedFloatDouble reports that the float types of im's outputs and of the
// values its nodes compute are FLOAT and DOUBLE, both occurring and no
// other: the graph computes in binary32 and binary64 (or its data moves
// between them through exact widening casts), and fpbound's binary32
// algebra bounds every such evaluation (fpbound's doc, "Mixed binary32 and
// binary64 graphs"). The importer's dtypes are the one source of this fact.
func mixedFloatDouble(im *onnx.Imported) bool {
	seen := map[onnx.DataType]bool{}
	for _, iv := range im.Outputs {
		if iv.DataType.IsFloat() {
			seen[iv.DataType] = true
		}
	}
	for _, c := range im.Computed {
		seen[c] = true
	}
	return len(seen) == 2 && seen[onnx.Float] && seen[onnx.Double]
}

// compareFormat is fpbound.Compare for a graph that computes in binary64,
// binary16 or bfloat16: each recorded value (as a float64) against that
// format's bound (fpbound.SharpBounds64, SharpBounds16, SharpBoundsBF16);
// format FLOAT (integer outputs of a FLOAT computation) against the
// binary32 bound, fpbound.SharpBounds. A graph that mixes FLOAT and DOUBLE
// (mixed) is judged against fpbound.SharpBoundsMixed, each IR node in its
// own format (binary64 where onnx.Imported.Types says DOUBLE, binary32
// elsewhere); without the per-node types (a graph not imported from ONNX)
// against the coarse bound, binary32's constants for every rounding.
func compareFormat(m *model.Model, format onnx.DataType, mixed bool, rec []float64, o fpbound.Options) (*fpbound.Result, error) {
	sharp := fpbound.SharpBounds64
	switch format {
	case onnx.Float:
		sharp = fpbound.SharpBounds // integer outputs of a FLOAT computation, or the coarse FLOAT/DOUBLE mix, judged as float64
	case onnx.Float16:
		sharp = fpbound.SharpBounds16
	case onnx.BFloat16:
		sharp = fpbound.SharpBoundsBF16
	}
	if narrow := binary32Nodes(m); mixed && narrow != nil {
		sharp = func(g *irsem.Graph, p *irsem.Payload, in irsem.RatTensor, o fpbound.Options) ([]fpbound.Sharp, error) {
			return fpbound.SharpBoundsMixed(g, p, in, narrow, o)
		}
	}
	sh, err := sharp(m.Graph, m.Payload, m.Input, o)
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
	if len(sh) > 0 {
		r.Centre, r.CentreFallback = sh[0].Centre, sh[0].CentreFallback
	}
	return r, nil
}

// readOutputFile reads a recorded output_N.pb: a FLOAT or DOUBLE
// TensorProto.
func readOutputFile(path string, files *[]jsonout.Input) (recordedTensor, error) {
	tf, err := model.ReadTensorFile("data", path, files)
	if err != nil {
		return recordedTensor{}, err
	}
	if tf.PB == nil {
		return recordedTensor{}, cli.Usagef("--data %s: a recorded output is a TensorProto, not JSON", path)
	}
	if dt := tf.PB.DataType; dt == onnx.Int64 || dt == onnx.Int32 || dt == onnx.Int16 || dt == onnx.Int8 || dt == onnx.Uint16 || dt == onnx.Uint8 {
		return readIntOutput(path, tf.PB)
	}
	if !tf.PB.DataType.IsFloat() {
		return recordedTensor{}, cli.Usagef("--data %s: data type %v: compare checks FLOAT, DOUBLE, FLOAT16 and BFLOAT16 outputs (and integer or boolean ones the import decides)", path, tf.PB.DataType)
	}
	s, err := tf.PB.Shape()
	if err != nil {
		return recordedTensor{}, cli.Usagef("--data %s: %v", path, err)
	}
	if tf.PB.Len() != s.Size() {
		return recordedTensor{}, cli.Usagef("--data %s: %d values for dims %v", path, tf.PB.Len(), s)
	}
	if tf.PB.DataType == onnx.Double {
		return recordedTensor{shape: s, dt: onnx.Double, vals64: tf.PB.Float64}, nil
	}
	return recordedTensor{shape: s, dt: tf.PB.DataType, vals: tf.PB.Float32}, nil
}

// readExactFile reads a recorded integer or boolean output_N.pb and
// judges it against the import's exact value e, element by element: equal
// holds, different fails (integers compared as integers).
func readExactFile(path string, e *onnx.ExactOutput, files *[]jsonout.Input) ([]fpbound.Element, error) {
	tf, err := model.ReadTensorFile("data", path, files)
	if err != nil {
		return nil, err
	}
	if tf.PB == nil {
		return nil, cli.Usagef("--data %s: a recorded output is a TensorProto, not JSON", path)
	}
	if tf.PB.DataType != e.DataType {
		return nil, cli.Usagef("--data %s: data type %v: the model's output %q is %v", path, tf.PB.DataType, e.Name, e.DataType)
	}
	s, err := tf.PB.Shape()
	if err != nil {
		return nil, cli.Usagef("--data %s: %v", path, err)
	}
	if !s.Equal(e.Shape) {
		return nil, cli.Usagef("--data %s: output %q: shape mismatch: the model's output has shape %v, the recorded tensor %v", path, e.Name, e.Shape, s)
	}
	if e.Floats != nil {
		return judgeExactFloats(path, tf.PB, e)
	}
	if tf.PB.Len() != len(e.Values) {
		return nil, cli.Usagef("--data %s: %d values for dims %v", path, tf.PB.Len(), s)
	}
	els := make([]fpbound.Element, len(e.Values))
	for j, want := range e.Values {
		var got int64
		if tf.PB.Int64 != nil { // INT64, UINT32 and UINT64 (its bits: one of 2⁶³ or more reads negative)
			got = tf.PB.Int64[j]
		} else {
			got = int64(tf.PB.Int32[j])
		}
		rec := float64(got)
		if tf.PB.DataType == onnx.Uint64 {
			rec = float64(tf.PB.Uint64At(j)) // want is below 2⁶³ (the import refuses more): a negative got differs
		}
		d := math.Abs(rec - float64(want))
		el := fpbound.Element{Recorded: float32(rec), Exact: spec.Point(float64(want)), Dist: spec.Point(d), Verdict: fpbound.Holds, Estimate: math.NaN()}
		if got != want {
			el.Verdict = fpbound.Fails
			if d == 0 {
				el.Dist = spec.Interval{Lo: 0, Hi: math.Inf(1)} // beyond float64's integers: still different
			}
		}
		if e.Undefined != nil && e.Undefined[j] {
			el = undefinedElement(rec)
		}
		els[j] = el
	}
	return els, nil
}

// exactGradients computes a Gradient node's outputs (onnx.GradientSpec):
// the gradient of IR output OfOutput w.r.t. each float input WRTInputs[k],
// by a VJP with cotangent 1 on that output's elements and 0 on every other
// output — over Rat when the graph is exact, else as Interval enclosures;
// the result is an enclosure either way (a point for Rat).
func exactGradients(m *model.Model, gs onnx.GradientSpec) ([]spec.Tensor[spec.Interval], error) {
	om := m.ONNX
	outShape := m.Graph.Nodes[m.Graph.OutputID].Shape
	seed, err := spec.Zeros[spec.Rat](outShape.Clone())
	if err != nil {
		return nil, err
	}
	if gs.OfOutput < 0 || gs.OfOutput >= len(om.Imported.Outputs) {
		return nil, cli.Usagef("--onnx %s: %s: attribute \"y\": %q is no output of the imported graph", m.GraphPath, gs.Node, gs.Of)
	}
	iv := om.Imported.Outputs[gs.OfOutput]
	for j := 0; j < iv.Shape.Size(); j++ {
		seed.Data[iv.Offset+j] = spec.NewRat(1, 1)
	}
	var input spec.Tensor[spec.Interval]
	if m.RatApplies() {
		gr, _, err := irgrad.GradWith(m.Graph, m.Payload, m.Input, &seed, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return nil, m.Err(err)
		}
		input = irsem.ConvertTensor[spec.Interval](gr.Input)
	} else {
		s := irsem.ConvertTensor[spec.Interval](seed)
		gr, _, err := irgrad.GradWith(m.Graph, m.Payload, irsem.ConvertTensor[spec.Interval](m.Input), &s, irgrad.PathTape, irgrad.LowerOptions{})
		if err != nil {
			return nil, m.Err(err)
		}
		input = gr.Input
	}
	parts, err := model.Unpack(om.Imported.Inputs, input.Data)
	if err != nil {
		return nil, err
	}
	out := make([]spec.Tensor[spec.Interval], len(gs.WRT))
	for k := range gs.WRT {
		i := gs.WRTInputs[k]
		if i < 0 || i >= len(parts) {
			return nil, cli.Usagef("--onnx %s: %s: attribute \"xs\": %q is not a float graph input", m.GraphPath, gs.Node, gs.WRT[k])
		}
		out[k] = spec.Tensor[spec.Interval]{Shape: om.Imported.Inputs[i].Shape.Clone(), Data: parts[i]}
	}
	return out, nil
}

// readIntOutput reads a recorded integer output that the model computes
// from float data (a Cast to an integer type, onnx's trunc_int) as float64
// values, each exact: an element beyond 2^53 in magnitude, which no
// float64 holds exactly, is refused naming it (an inexact conversion could
// make a wrong integer equal the exact one).
func readIntOutput(path string, pb *onnx.Tensor) (recordedTensor, error) {
	s, err := pb.Shape()
	if err != nil {
		return recordedTensor{}, cli.Usagef("--data %s: %v", path, err)
	}
	if pb.Len() != s.Size() {
		return recordedTensor{}, cli.Usagef("--data %s: %d values for dims %v", path, pb.Len(), s)
	}
	vals := make([]float64, pb.Len())
	for j := range vals {
		var x int64
		if pb.DataType == onnx.Int64 {
			x = pb.Int64[j]
		} else {
			x = int64(pb.Int32[j])
		}
		if x > 1<<53 || x < -(1<<53) {
			return recordedTensor{}, cli.Usagef("--data %s: element %d (%d) is beyond 2^53: compare judges a computed integer output as float64 values", path, j, x)
		}
		vals[j] = float64(x)
	}
	return recordedTensor{shape: s, dt: pb.DataType, vals64: vals}, nil
}

// undefinedElement is the verdict on a recorded value where ONNX leaves
// the cast undefined (onnx.ExactOutput.Undefined): no exact value, so
// neither holds nor fails.
func undefinedElement(rec float64) fpbound.Element {
	return fpbound.Element{Recorded: float32(rec), Exact: spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)},
		Dist: spec.Interval{Lo: 0, Hi: math.Inf(1)}, Verdict: fpbound.Inconclusive, Estimate: math.NaN()}
}

// judgeExactFloats judges a recorded float output against the exact
// values of a cast decided at import (onnx.ExactOutput.Floats): equal
// reals hold (+0 and −0 are the same real), NaN holds only against NaN
// and ±∞ only against the same infinity; every value is a float64, so
// the comparison is exact.
func judgeExactFloats(path string, pb *onnx.Tensor, e *onnx.ExactOutput) ([]fpbound.Element, error) {
	if pb.Len() != len(e.Floats) {
		return nil, cli.Usagef("--data %s: %d values for %d elements", path, pb.Len(), len(e.Floats))
	}
	els := make([]fpbound.Element, len(e.Floats))
	for j, want := range e.Floats {
		var got float64
		if pb.DataType == onnx.Double {
			got = pb.Float64[j]
		} else {
			got = float64(pb.Float32[j])
		}
		if e.Undefined != nil && e.Undefined[j] {
			els[j] = undefinedElement(got)
			continue
		}
		same := got == want || (math.IsNaN(got) && math.IsNaN(want))
		el := fpbound.Element{Recorded: float32(got), Exact: spec.Point(want), Dist: spec.Point(0), Verdict: fpbound.Holds, Estimate: math.NaN()}
		if math.IsNaN(want) || math.IsInf(want, 0) {
			el.Exact = spec.Interval{Lo: math.Inf(-1), Hi: math.Inf(1)}
		}
		if !same {
			el.Verdict = fpbound.Fails
			d := math.Abs(got - want)
			if math.IsNaN(d) || math.IsInf(d, 0) {
				el.Dist = spec.Interval{Lo: 0, Hi: math.Inf(1)}
			} else {
				el.Dist = spec.Point(d)
			}
		}
		els[j] = el
	}
	return els, nil
}
