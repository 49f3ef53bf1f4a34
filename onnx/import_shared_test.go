package onnx

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// sharedCase is one backend test directory: its model and the recorded
// inputs and outputs of test_data_set_0.
type sharedCase struct {
	name    string
	model   *Model
	inputs  []*Tensor
	outputs []*Tensor
}

func readSharedCase(t *testing.T, dir string) (*sharedCase, error) {
	m, err := ReadModel(filepath.Join(dir, "model.onnx"))
	if err != nil {
		return nil, err
	}
	c := &sharedCase{name: filepath.Base(dir), model: m}
	read := func(prefix string) ([]*Tensor, error) {
		var ts []*Tensor
		for i := 0; ; i++ {
			p := filepath.Join(dir, "test_data_set_0", fmt.Sprintf("%s_%d.pb", prefix, i))
			if _, err := os.Stat(p); err != nil {
				return ts, nil
			}
			tt, err := ReadTensor(p)
			if err != nil {
				return nil, err
			}
			ts = append(ts, tt)
		}
	}
	if c.inputs, err = read("input"); err != nil {
		return nil, err
	}
	if c.outputs, err = read("output"); err != nil {
		return nil, err
	}
	return c, nil
}

// f64s is a recorded tensor's values as float64s.
func f64s(t *Tensor) []float64 {
	var out []float64
	for _, f := range t.Float32 {
		out = append(out, float64(f))
	}
	out = append(out, t.Float64...)
	return out
}

// closeTo is the smoke test's loose tolerance: relative 1e-4, absolute
// 1e-4 near zero. It checks the mapping, not float32 accuracy (the sound
// verdict is tlcheck compare's).
func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-4*math.Max(1, math.Abs(want))
}

// TestImportSharedModels imports every model under ../shared/onnx
// (pytorch-converted and simple), evaluates the IR over float64 on the
// recorded inputs and compares with the recorded outputs; a Gradient
// model's recorded gradients are compared with central differences of the
// IR. Failing models are listed.
func TestImportSharedModels(t *testing.T) {
	root := sharedONNX(t)
	dirs, _ := filepath.Glob(filepath.Join(root, "pytorch-converted", "test_*"))
	simple, _ := filepath.Glob(filepath.Join(root, "simple", "test_*"))
	dirs = append(dirs, simple...)
	sort.Strings(dirs)
	if len(dirs) < 80 {
		t.Fatalf("found only %d test directories under %s", len(dirs), root)
	}
	// Two models (a 1000×1000 and a 220000-element max pool) declare more
	// than the default graph-elements; the limits are the CLI's flags.
	l := limits.Current()
	l.GraphElements, l.Work = 1<<24, 1<<28
	defer limits.Set(l)()
	var failed, missing []string
	for _, dir := range dirs {
		name := filepath.Base(dir)
		if testing.Short() && bigShared[name] {
			t.Logf("%s: skipped in -short mode (millions of window elements)", name)
			continue
		}
		err := checkSharedCase(t, dir)
		var tu *TagUnavailableError
		if errors.As(err, &tu) {
			missing = append(missing, name+" ("+string(tu.Tag)+")")
			continue
		}
		if err != nil {
			failed = append(failed, name)
			t.Errorf("%s: %v", name, err)
		}
	}
	t.Logf("%d of %d models import and match their recorded outputs", len(dirs)-len(failed)-len(missing), len(dirs))
	if len(failed) > 0 {
		t.Logf("failing: %s", strings.Join(failed, " "))
	}
	if len(missing) > 0 && len(failed) == 0 {
		t.Skipf("%d models need IR tags this build's registry lacks, so they were not checked: %s", len(missing), strings.Join(missing, " "))
	}
}

// bigShared are the models whose evaluation walks millions of window
// elements (about half a second each over float64).
var bigShared = map[string]bool{"test_MaxPool1d_stride_padding_dilation": true, "test_MaxPool2d_stride_padding_dilation": true}

func checkSharedCase(t *testing.T, dir string) error {
	c, err := readSharedCase(t, dir)
	if err != nil {
		return err
	}
	o, floats, err := OptionsFor(c.model, c.inputs)
	if err != nil {
		return err
	}
	im, err := Import(c.model, o)
	if err != nil {
		return err
	}
	if len(im.Origin) != len(im.Graph.Nodes) {
		return fmt.Errorf("%d origins for %d nodes", len(im.Origin), len(im.Graph.Nodes))
	}
	in, err := im.PackInputs(floats)
	if err != nil {
		return err
	}
	x := irsem.ConvertTensor[spec.F64](in)
	y, err := irsem.Denote(im.Graph, im.Payload, x)
	if err != nil {
		return err
	}
	outs, err := UnpackOutputs(im, y)
	if err != nil {
		return err
	}
	for i, ov := range im.Outputs {
		if ov.Index >= len(c.outputs) {
			return fmt.Errorf("output %q: no recorded output_%d.pb", ov.Name, ov.Index)
		}
		want := f64s(c.outputs[ov.Index])
		if len(want) != len(outs[i].Data) {
			return fmt.Errorf("output %q: %d values, recorded %d", ov.Name, len(outs[i].Data), len(want))
		}
		for j, w := range want {
			if g := float64(outs[i].Data[j]); !closeTo(g, w) {
				return fmt.Errorf("output %q element %d: %v, recorded %v", ov.Name, j, g, w)
			}
		}
	}
	for _, gs := range im.Gradients {
		if err := checkGradient(im, x, gs, c.outputs); err != nil {
			return err
		}
	}
	if !allExact(im.Graph) || bigShared[c.name] {
		return nil
	}
	// Every tag exact: the exact value rounds to the float64 one within
	// the same tolerance (a batch norm's non-square √(σ²+ε) is the only
	// data-dependent refusal, and is not a failure of the mapping).
	ry, err := irsem.Denote(im.Graph, im.Payload, in)
	if err != nil {
		if strings.Contains(err.Error(), "sqrt") {
			return nil
		}
		return fmt.Errorf("exact evaluation: %v", err)
	}
	for j, r := range ry.Data {
		if g := float64(y.Data[j]); !closeTo(r.Float64(), g) {
			return fmt.Errorf("element %d: exact %v, float64 %v", j, r.Float64(), g)
		}
	}
	return nil
}

// allExact reports whether every tag of g has exact rational semantics.
func allExact(g *irsem.Graph) bool {
	for _, n := range g.Nodes {
		if info, ok := irsem.LookupTag(n.Kind.Op); !ok || !info.Exact {
			return false
		}
	}
	return true
}

// checkGradient compares a Gradient node's recorded outputs with central
// differences of the sum of output gs.OfOutput's elements (exact up to
// rounding for the polynomial models of the suite).
func checkGradient(im *Imported, x spec.Tensor[spec.F64], gs GradientSpec, recorded []*Tensor) error {
	sumOf := func(in spec.Tensor[spec.F64]) (float64, error) {
		y, err := irsem.Denote(im.Graph, im.Payload, in)
		if err != nil {
			return 0, err
		}
		outs, err := UnpackOutputs(im, y)
		if err != nil {
			return 0, err
		}
		s := 0.0
		for _, v := range outs[gs.OfOutput].Data {
			s += float64(v)
		}
		return s, nil
	}
	for k, inIdx := range gs.WRTInputs {
		if gs.OutputIndex[k] < 0 || gs.OutputIndex[k] >= len(recorded) {
			return fmt.Errorf("%s: gradient output %q is not recorded", gs.Node, gs.Outputs[k])
		}
		want := f64s(recorded[gs.OutputIndex[k]])
		in := im.Inputs[inIdx]
		if len(want) != in.Shape.Size() {
			return fmt.Errorf("%s: gradient %q has %d values for an input of %d", gs.Node, gs.Outputs[k], len(want), in.Shape.Size())
		}
		for j := range want {
			const h = 1.0 / 1024
			p, m := x.Clone(), x.Clone()
			p.Data[in.Offset+j] += h
			m.Data[in.Offset+j] -= h
			fp, err := sumOf(p)
			if err != nil {
				return err
			}
			fm, err := sumOf(m)
			if err != nil {
				return err
			}
			if g := (fp - fm) / (2 * h); !closeTo(g, want[j]) {
				return fmt.Errorf("%s: d%s/d%s element %d: central difference %v, recorded %v", gs.Node, gs.Of, gs.WRT[k], j, g, want[j])
			}
		}
	}
	return nil
}
