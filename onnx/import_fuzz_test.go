package onnx

import (
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// fuzzAttrs is the pool of attributes the structured fuzzer draws from:
// every attribute the importer reads, with values around the edges.
var fuzzAttrs = []*Attribute{
	aI("axis", 0), aI("axis", 1), aI("axis", -1), aI("axis", 7), aIs("axes", 0), aIs("axes", -1, 0), aIs("axes", 1, 1), aIs("axes", 9),
	aI("keepdims", 0), aI("keepdims", 2), aIs("perm", 1, 0), aIs("perm", 0, 0), aIs("pads", 1, 1), aIs("pads", 0, 1, 1, 0), aIs("pads", -1, 2),
	aIs("kernel_shape", 2), aIs("kernel_shape", 1, 1), aIs("kernel_shape", 0), aIs("strides", 2), aIs("strides", 0), aIs("dilations", 2),
	aS("auto_pad", "SAME_UPPER"), aS("auto_pad", "SAME_LOWER"), aS("auto_pad", "VALID"), aS("auto_pad", "x"), aI("group", 2), aI("group", 0),
	aI("ceil_mode", 1), aI("count_include_pad", 1), aI("storage_order", 1), aF("alpha", 0.5), aF("beta", 2), aF("gamma", -1), aF("epsilon", 0),
	aF("min", 1), aF("max", -1), aI("transA", 1), aI("transB", 1), aIs("split", 1, 1), aIs("split", 5), aIs("starts", 0), aIs("ends", -1),
	aI("size", 3), aF("bias", 1), aF("lambd", 0.5), aS("mode", "reflect"), aS("mode", "edge"), aF("value", 2), aT("value", itensor("", dims(1), 2)),
	aT("value", ftensor("", dims(2), 1, -1)), aFs("value_floats", 1), aI("value_int", 3), aI("allowzero", 1), aI("to", int64(Float)),
	aI("broadcast", 1), aIs("output_padding", 1), aIs("output_shape", 3), aI("start", 1), aI("end", -1), aI("noop_with_empty_axes", 1),
	aIs("shape", 2, -1), aI("num_outputs", 2), aF("ratio", 0.5), aI("is_test", 1), aI("spatial", 1), aI("training_mode", 0),
}

// FuzzImport builds models from the fuzz input — op types from
// SupportedOps, inputs among the values defined so far (float inputs,
// float and integer initializers, earlier outputs), attributes from
// fuzzAttrs — and requires that Import never panics, that every model it
// accepts passes irsem's checks, and that evaluating it over float64 on
// an input of ones returns a value or an error, never a panic.
func FuzzImport(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{13, 40, 3, 0, 17, 22, 1, 9, 200, 7, 31, 4})
	f.Add([]byte{9, 9, 9, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89})
	ops := SupportedOps()
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		pos := 0
		next := func() int {
			if pos >= len(data) {
				return 0
			}
			pos++
			return int(data[pos-1])
		}
		opsets := []int64{6, 9, 11, 13, 18}
		m := newMG(opsets[next()%len(opsets)]).in("x", 2, 3).in("z", 1, 2, 4, 4).
			init("w", dims(2, 2, 1, 1), 1, 2, 3, 4).init("v", dims(3), 1, 2, 3).init("c", dims(2), 0.5, 1).initI("i", dims(2), 1, 0).initI("s", dims(2), 3, 2)
		names := []string{"x", "z", "w", "v", "c", "i", "s"}
		nodes := 1 + next()%6
		for k := 0; k < nodes && pos < len(data); k++ {
			op := ops[next()%len(ops)]
			var in []string
			for j := next() % 4; j >= 0; j-- {
				in = append(in, names[next()%len(names)])
			}
			var attrs []*Attribute
			for j := next() % 3; j > 0; j-- {
				attrs = append(attrs, fuzzAttrs[next()%len(fuzzAttrs)])
			}
			out := []string{"n" + string(rune('a'+k))}
			if next()%4 == 0 {
				out = append(out, out[0]+"2")
			}
			m.op(op, in, out, attrs...)
			names = append(names, out...)
		}
		m.out(names[len(names)-1])
		im, err := Import(m.model(), Options{})
		if err != nil {
			return
		}
		if err := im.Graph.Check(); err != nil {
			t.Fatalf("accepted a graph that fails Check: %v", err)
		}
		if err := irsem.CheckPayload(im.Graph, im.Payload); err != nil {
			t.Fatalf("accepted a payload that fails CheckPayload: %v", err)
		}
		in := im.Graph.Nodes[im.Graph.InputID].Shape
		x, err := spec.Full[spec.F64](in, 1)
		if err != nil {
			return
		}
		_, _ = irsem.Denote(im.Graph, im.Payload, x)
	})
}
