package verify

import (
	"fmt"
	"math"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

// verifyModelComposition re-derives a model composition certificate: the
// inline graph and payload (canonical documents only) against graph_hash,
// the input against the graph's input shape, every tangent and cotangent
// regenerated from the manifest's seed, then both sides recomputed as
// verifyComposition does — the JVP side by forward evaluation over dual
// numbers, the VJP side along irgrad's tape path — and compared with the
// recorded ones and with each other, exactly.
func verifyModelComposition(file string, f *certificates.ModelCompositionFile, m *certificates.Manifest) (int, error) {
	if err := certificates.CheckName(file, "model", f.Model); err != nil {
		return 0, err
	}
	if len(f.Cases) == 0 || len(f.Cases) != m.Cases {
		return 0, certificates.FieldErr(file, "cases", "%d cases, the manifest promises %d", len(f.Cases), m.Cases)
	}
	g, p, err := hashedInlineGraph(file, f.GraphHash, f.Graph, f.Payload)
	if err != nil {
		return 0, err
	}
	x, err := inputOf(file, "input", f.Input, g)
	if err != nil {
		return 0, err
	}
	out := g.Nodes[g.OutputID].Shape
	for i, c := range f.Cases {
		at := fmt.Sprintf("cases[%d]", i)
		dx, err := c.Dx.Decode(file, at+".dx")
		if err != nil {
			return 0, err
		}
		cot, err := c.Cotangent.Decode(file, at+".cotangent")
		if err != nil {
			return 0, err
		}
		gdx, gcot := certificates.ModelTangents(m.Seed, i, x.Shape, out)
		if err := sameTensors(file, at+".dx", []spec.Tensor[spec.Rat]{dx}, []spec.Tensor[spec.Rat]{gdx}); err != nil {
			return 0, seedErr(err)
		}
		if err := sameTensors(file, at+".cotangent", []spec.Tensor[spec.Rat]{cot}, []spec.Tensor[spec.Rat]{gcot}); err != nil {
			return 0, seedErr(err)
		}
		if err := rederiveCompositionSides(file, at, g, p, x, dx, cot, c.LHS, c.RHS); err != nil {
			return 0, err
		}
	}
	return len(f.Cases), nil
}

// verifyModelRange re-derives a model range certificate: it binds the
// certificate to its own inline graph and payload (canonical, hashed
// against graph_hash), the centre to the graph's input shape and the
// sample seed to the manifest's seed and the model's name, then re-derives
// every claim as for a shipped example (rederiveRange).
func verifyModelRange(file string, f *certificates.RangeFile, m *certificates.Manifest) (int, error) {
	for _, n := range []struct{ field, v string }{{"name", f.Name}, {"profile", f.Profile}} {
		if err := certificates.CheckName(file, n.field, n.v); err != nil {
			return 0, err
		}
	}
	g, p, err := hashedInlineGraph(file, f.GraphHash, f.Graph, f.Payload)
	if err != nil {
		return 0, err
	}
	x, err := inputOf(file, "centre", f.Centre, g)
	if err != nil {
		return 0, err
	}
	if want := certificates.SampleSeed(m.Seed, f.Name); f.SampleSeed != want {
		return 0, seedErr(certificates.FieldErr(file, "sample_seed", "%d, the manifest's seed gives %d", f.SampleSeed, want))
	}
	return rederiveRange(file, f, g, p, x)
}

func verifyModelCompositionFile(file string, data []byte, m *certificates.Manifest) (int, error) {
	var f certificates.ModelCompositionFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	return verifyModelComposition(file, &f, m)
}

func verifyModelRangeFile(file string, data []byte, m *certificates.Manifest) (int, error) {
	var f certificates.RangeFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	if f.Kind != certificates.KindModelRange {
		return 0, certificates.FieldErr(file, "kind", "%q, want %q", certificates.Truncate(f.Kind), certificates.KindModelRange)
	}
	return verifyModelRange(file, &f, m)
}

// verifyModelInterval re-derives an interval model certificate (see
// KindModelInterval): the inline documents against graph_hash, the input
// against the graph's input shape, the output's shape against the
// graph's, then every element's recorded enclosure against the recomputed
// one: containment first, then equality. It counts one case per output
// element.
func verifyModelInterval(file string, f *certificates.ModelIntervalFile) (int, error) {
	if err := certificates.CheckName(file, "model", f.Model); err != nil {
		return 0, err
	}
	g, p, err := hashedInlineGraph(file, f.GraphHash, f.Graph, f.Payload)
	if err != nil {
		return 0, err
	}
	x, err := inputOf(file, "input", f.Input, g)
	if err != nil {
		return 0, err
	}
	out := g.Nodes[g.OutputID].Shape
	if !spec.Shape(f.Output.Shape).Equal(out) {
		return 0, certificates.FieldErr(file, "output.shape", "%v, the graph's output has shape %v", spec.Shape(f.Output.Shape), out)
	}
	n, err := out.Check(0)
	if err != nil {
		return 0, certificates.FieldErr(file, "output.shape", "%v", err)
	}
	if len(f.Output.Values) != n {
		return 0, certificates.FieldErr(file, "output.values", "%d values for shape %v (want %d)", len(f.Output.Values), out, n)
	}
	rec := make([]spec.Interval, n)
	for i, e := range f.Output.Values {
		at := fmt.Sprintf("output.values[%d]", i)
		iv, err := e.Decode(file, at)
		if err != nil {
			return 0, err
		}
		if math.IsNaN(iv.Lo) || math.IsNaN(iv.Hi) || !(iv.Lo <= iv.Hi) || math.IsInf(iv.Lo, 1) || math.IsInf(iv.Hi, -1) {
			return 0, certificates.FieldErr(file, at, "[%v, %v] is not an interval (lo ≤ hi, no NaN, lo ≠ +Inf, hi ≠ −Inf)", iv.Lo, iv.Hi)
		}
		rec[i] = iv
	}
	y, err := certificates.IntervalOutput(g, p, x)
	if err != nil {
		return 0, certificates.FieldErr(file, "output", "the interval evaluation failed: %v", err)
	}
	idx := func(i int) string { return multiIndex(out, i) }
	for i, r := range rec {
		got := y.Data[i]
		at := fmt.Sprintf("output.values[%d]", i)
		if !(r.Lo <= got.Lo && got.Hi <= r.Hi) {
			return 0, certificates.FieldErr(file, at, "element %s: the recorded [%v, %v] does not contain the interval evaluation's [%v, %v]: the claim is not proved", idx(i), r.Lo, r.Hi, got.Lo, got.Hi)
		}
		if math.Float64bits(r.Lo) != math.Float64bits(got.Lo) || math.Float64bits(r.Hi) != math.Float64bits(got.Hi) {
			return 0, certificates.FieldErr(file, at, "element %s: the recorded [%v, %v] is wider than the interval evaluation's [%v, %v]: not this build's evaluation (edited, or another math library: certify again here)", idx(i), r.Lo, r.Hi, got.Lo, got.Hi)
		}
	}
	return n, nil
}

// multiIndex spells flat element i of shape s as "(i0, i1, …)".
func multiIndex(s spec.Shape, i int) string {
	if len(s) == 0 {
		return "()"
	}
	ix := make([]int, len(s))
	for d := len(s) - 1; d >= 0; d-- {
		if s[d] > 0 {
			ix[d] = i % s[d]
			i /= s[d]
		}
	}
	out := "("
	for d, v := range ix {
		if d > 0 {
			out += ", "
		}
		out += fmt.Sprint(v)
	}
	return out + ")"
}

func verifyModelIntervalFile(file string, data []byte, _ *certificates.Manifest) (int, error) {
	var f certificates.ModelIntervalFile
	if err := certificates.DecodeStrict(file, data, &f); err != nil {
		return 0, err
	}
	return verifyModelInterval(file, &f)
}
