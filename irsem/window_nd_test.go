package irsem

import (
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// windowNDCases are conv_transpose, max_pool_nd and avg_pool_nd graphs
// whose exact outputs come from the naive references below, written from
// the ONNX operator definitions (ConvTranspose as a scatter of every input
// element through the kernel; the pools by enumerating every kernel
// position and classifying it as an element, padding, or past the padded
// input).
func windowNDCases(t testing.TB) []opCase {
	mkx := func(shape spec.Shape, seed int64) RatTensor {
		x := RatTensor{Shape: shape, Data: make([]spec.Rat, shape.Size())}
		for i := range x.Data {
			x.Data[i] = spec.NewRat((int64(i)*seed+3)%7-3, int64(1+i%2))
		}
		return x
	}
	type cc struct {
		name string
		in   spec.Shape
		w    spec.Window
		bias bool
		op   Op
	}
	cases := []cc{
		// ConvTranspose2d's geometry (strides 3,2, pads 1, output_padding 1) on a smaller input.
		{name: "conv_transpose-2d", in: spec.Shape{1, 3, 3, 2}, w: spec.Window{Kernel: []int{3, 3}, Stride: []int{3, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1, InChannels: 3, OutChannels: 4}, bias: true, op: OpConvTranspose},
		{name: "conv_transpose-groups-dilation", in: spec.Shape{2, 4, 3}, w: spec.Window{Kernel: []int{2}, Stride: []int{2}, Pads: []int{0, 1}, Dilation: []int{2}, OutputPadding: []int{1}, Groups: 2, InChannels: 4, OutChannels: 2}, op: OpConvTranspose},
		// MaxPool*_stride_padding_dilation's form (pads, dilation, stride) at small extents.
		{name: "max_pool_nd-dilation", in: spec.Shape{1, 1, 9}, w: spec.Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{2, 2}, Dilation: []int{2}}, op: OpMaxPoolND},
		// Ceil mode: axis 0 gains a window reaching past the input (3, not 2);
		// on axis 1 the rounded-up window would start in the end padding
		// and is dropped (3, not 4).
		{name: "max_pool_nd-ceil", in: spec.Shape{1, 2, 5, 5}, w: spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 1, 0, 1}, Dilation: []int{1, 1}, CeilMode: true}, op: OpMaxPoolND},
		{name: "avg_pool_nd-ceil-excl", in: spec.Shape{1, 5, 4}, w: spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 3}, Pads: []int{0, 0, 0, 1}, Dilation: []int{1, 1}, CeilMode: true}, op: OpAvgPoolND},
		// The last window holds one element, one padding position and one
		// position past the padded input: divisor 2.
		{name: "avg_pool_nd-ceil-incl", in: spec.Shape{2, 6}, w: spec.Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 1}, Dilation: []int{1}, CeilMode: true, CountIncludePad: true}, op: OpAvgPoolND},
		{name: "avg_pool_nd-dilation-3d", in: spec.Shape{1, 3, 3, 4}, w: spec.Window{Kernel: []int{2, 1, 2}, Stride: []int{1, 2, 1}, Pads: []int{0, 1, 1, 1, 0, 0}, Dilation: []int{2, 1, 2}, CountIncludePad: true}, op: OpAvgPoolND},
	}
	var out []opCase
	for k, c := range cases {
		x := mkx(c.in, int64(k+3))
		node := nd(c.op, []int{0}, nil, withWindow(c.w))
		info, _ := lookup(c.op)
		ys, err := inferShape(&node, info, []spec.Shape{c.in})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		node.Shape = ys
		oc := opCase{name: c.name, g: graphOf(nd(OpInput, nil, c.in), node), x: x}
		var want RatTensor
		if c.op == OpConvTranspose {
			ws, bs := paramShapes(c.op, &c.w)
			e := &Params{W: ptr(mkx(ws, int64(k+5)))}
			if c.bias {
				e.B = ptr(mkx(bs, 5))
			}
			oc.p = payloadOf(map[int]*Params{1: e})
			want = convTRef(x, c.w, *e.W, e.B, ys)
		} else {
			want = poolNDRef(x, c.w, c.op == OpMaxPoolND, ys)
		}
		oc.want = &want
		out = append(out, oc)
	}
	return out
}

// convTRef scatters every input element x[l, ci, i] through the kernel:
// y[l, q·Cog+co', i·s − pb + j·d] += x[l, ci, i]·W[ci, co', j] where that
// position lies in the output, then adds the bias.
func convTRef(x RatTensor, w spec.Window, wt RatTensor, b *RatTensor, out spec.Shape) RatTensor {
	y := RatTensor{Shape: out, Data: make([]spec.Rat, out.Size())}
	r := len(w.Kernel)
	cg, cog := w.InChannels/w.Groups, w.OutChannels/w.Groups
	wst, yst := wt.Shape.Strides(), out.Strides()
	xi := 0
	forEach(x.Shape, func(ix []int) {
		v := x.Data[xi]
		xi++
		lead, ci, is := ix[:len(ix)-r-1], ix[len(ix)-r-1], ix[len(ix)-r:]
		q := ci / cg
		for cp := 0; cp < cog; cp++ {
			forEach(w.Kernel, func(j []int) {
				off := 0
				for d, l := range lead {
					off += l * yst[d]
				}
				off += (q*cog + cp) * yst[len(lead)]
				for d := 0; d < r; d++ {
					o := is[d]*w.Stride[d] - w.Pads[d] + j[d]*w.Dilation[d]
					if o < 0 || o >= out[len(lead)+1+d] {
						return
					}
					off += o * yst[len(lead)+1+d]
				}
				wi := ci*wst[0] + cp*wst[1]
				for d := 0; d < r; d++ {
					wi += j[d] * wst[2+d]
				}
				y.Data[off] = y.Data[off].Add(v.Mul(wt.Data[wi]))
			})
		}
	})
	if b != nil {
		i := 0
		forEach(out, func(o []int) {
			y.Data[i] = y.Data[i].Add(b.Data[o[len(o)-r-1]])
			i++
		})
	}
	return y
}

// poolNDRef is ONNX MaxPool / AveragePool: every kernel position of an
// output window is an element (inside the input), padding (inside
// [−pb, n+pe)) or beyond (added by ceil_mode); max over the elements, or
// the elements' sum divided by the elements (count_include_pad false) or
// by the elements and padding (true).
func poolNDRef(x RatTensor, w spec.Window, isMax bool, out spec.Shape) RatTensor {
	y := RatTensor{Shape: out, Data: make([]spec.Rat, out.Size())}
	r := len(w.Kernel)
	i := 0
	forEach(out, func(o []int) {
		lead, os := o[:len(o)-r], o[len(o)-r:]
		var acc spec.Rat
		elems, padded := 0, 0
		forEach(w.Kernel, func(j []int) {
			idx := append(append([]int{}, lead...), make([]int, r)...)
			inPadded := true
			for d := 0; d < r; d++ {
				p := os[d]*w.Stride[d] - w.Pads[d] + j[d]*w.Dilation[d]
				idx[len(lead)+d] = p
				if p < -w.Pads[d] || p >= x.Shape[len(lead)+d]+w.Pads[r+d] {
					inPadded = false
				}
			}
			if inPadded {
				padded++
			}
			v, ok := readPadded(x, idx)
			if !ok {
				return
			}
			switch {
			case isMax && elems == 0:
				acc = v
			case isMax:
				acc = acc.Max(v)
			default:
				acc = acc.Add(v)
			}
			elems++
		})
		if !isMax {
			div := elems
			if w.CountIncludePad {
				div = padded
			}
			acc, _ = acc.Div(spec.NewRat(int64(div), 1))
		}
		y.Data[i] = acc
		i++
	})
	return y
}

// TestWindowNDShapes pins the output shapes of the window tags on the
// geometries of the shared ONNX models (their recorded output shapes,
// read from test_data_set_0/output_0.pb) and of the ceil-mode cases above
// (derived by hand in their comments).
func TestWindowNDShapes(t *testing.T) {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	cases := []struct {
		name string
		op   Op
		in   spec.Shape
		w    spec.Window
		want spec.Shape
	}{
		{"test_MaxPool1d_stride_padding_dilation", OpMaxPoolND, s(1, 1, 220000), spec.Window{Kernel: []int{200}, Stride: []int{10}, Pads: []int{100, 100}, Dilation: []int{10}}, s(1, 1, 21821)},
		{"test_MaxPool2d_stride_padding_dilation", OpMaxPoolND, s(1, 1, 1000, 1000), spec.Window{Kernel: []int{60, 80}, Stride: []int{10, 10}, Pads: []int{10, 20, 10, 20}, Dilation: []int{10, 10}}, s(1, 1, 43, 25)},
		{"test_MaxPool2d", OpMaxPoolND, s(1, 3, 7, 7), spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}}, s(1, 3, 4, 4)},
		{"test_MaxPool3d_stride_padding", OpMaxPoolND, s(2, 3, 5, 5, 5), spec.Window{Kernel: []int{2, 2, 2}, Stride: []int{2, 2, 2}, Pads: []int{1, 1, 1, 1, 1, 1}, Dilation: []int{1, 1, 1}}, s(2, 3, 3, 3, 3)},
		{"test_AvgPool3d_stride1_pad0", OpAvgPoolND, s(2, 3, 4, 4, 4), spec.Window{Kernel: []int{3, 3, 3}, Stride: []int{1, 1, 1}, Pads: make([]int, 6), Dilation: []int{1, 1, 1}, CountIncludePad: true}, s(2, 3, 2, 2, 2)},
		{"test_ConvTranspose2d", OpConvTranspose, s(1, 3, 7, 6), spec.Window{Kernel: []int{3, 3}, Stride: []int{3, 2}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1, InChannels: 3, OutChannels: 4}, s(1, 4, 20, 12)},
		{"test_ConvTranspose2d_no_bias", OpConvTranspose, s(1, 3, 6, 7), spec.Window{Kernel: []int{3, 3}, Stride: []int{2, 3}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, OutputPadding: []int{1, 1}, Groups: 1, InChannels: 3, OutChannels: 4}, s(1, 4, 12, 20)},
		{"max_pool_nd-ceil", OpMaxPoolND, s(1, 2, 5, 5), spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 1, 0, 1}, Dilation: []int{1, 1}, CeilMode: true}, s(1, 2, 3, 3)},
		{"max_pool_nd-floor", OpMaxPoolND, s(1, 2, 5, 5), spec.Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 1, 0, 1}, Dilation: []int{1, 1}}, s(1, 2, 2, 3)},
		{"avg_pool_nd-ceil-incl", OpAvgPoolND, s(2, 6), spec.Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 1}, Dilation: []int{1}, CeilMode: true, CountIncludePad: true}, s(2, 4)},
	}
	for _, c := range cases {
		node := nd(c.op, []int{0}, nil, withWindow(c.w))
		info, _ := lookup(c.op)
		got, err := inferShape(&node, info, []spec.Shape{c.in})
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}

// TestWindowWire: the superset window tags round-trip through the
// canonical encoding (attributes in the IR form's order, booleans as
// true/false), and their attributes are strict.
func TestWindowWire(t *testing.T) {
	doc := `{"format":"tlcheck.ir.v1","input_id":0,"output_id":3,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[1,2,6]},
  {"id":1,"kind":"conv_transpose","parents":[0],"shape":[1,2,13],"kernel":[3],"stride":[2],"pads":[1,0],"dilation":[1],"output_padding":[1],"groups":2,"in_channels":2,"out_channels":2},
  {"id":2,"kind":"max_pool_nd","parents":[1],"shape":[1,2,7],"kernel":[2],"stride":[2],"pads":[0,1],"dilation":[1],"ceil_mode":true},
  {"id":3,"kind":"avg_pool_nd","parents":[2],"shape":[1,2,4],"kernel":[3],"stride":[2],"pads":[1,1],"dilation":[1],"ceil_mode":false,"count_include_pad":true}
]}
`
	g, err := DecodeGraph([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	out, err := EncodeGraph(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != doc {
		t.Errorf("canonical form:\n%s\nwant\n%s", out, doc)
	}
	w := g.Nodes[3].Kind.Window
	if w.CeilMode || !w.CountIncludePad || !intsEqual(w.Pads, []int{1, 1}) {
		t.Errorf("decoded window %+v", w)
	}
	in := `{"id":0,"kind":"input","parents":[],"shape":[1,1,4]}`
	bad := []struct{ node, want string }{
		{`{"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,2],"kernel":[2],"stride":[2],"pads":[0,0],"dilation":[1],"ceil_mode":1}`, `node 1 (max_pool_nd): field "ceil_mode": expected true or false, got "1"`},
		{`{"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,2],"kernel":[2],"stride":[2],"pads":[0,0],"dilation":[1]}`, `node 1 (max_pool_nd): field "ceil_mode": missing`},
		{`{"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,2],"kernel":[2],"stride":[2],"pads":[0],"dilation":[1],"ceil_mode":false}`, `node 1 (max_pool_nd): field "pads": 1 entries, expected two per spatial axis (2)`},
		{`{"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,2],"kernel":[2],"stride":[2],"pads":[0,0],"dilation":[1],"ceil_mode":false,"count_include_pad":true}`, `node 1 (max_pool_nd): field "count_include_pad": max_pool_nd takes no "count_include_pad" attribute`},
		{`{"id":1,"kind":"max_pool","parents":[0],"shape":[1,1,2],"kernel":[2],"stride":[2],"padding":[0],"pads":[0,0]}`, `node 1 (max_pool): field "pads": max_pool takes no "pads" attribute`},
		{`{"id":1,"kind":"max_pool_nd","parents":[0],"shape":[1,1,3],"kernel":[1],"stride":[1],"pads":[1,0],"dilation":[1],"ceil_mode":false}`, `node 1 (max_pool_nd): field "pads": max_pool_nd: the window of output 0 on spatial axis 0 holds no element of the input (only padding)`},
		{`{"id":1,"kind":"conv_transpose","parents":[0],"shape":[1,1,8],"kernel":[2],"stride":[2],"pads":[0,0],"dilation":[1],"output_padding":[2],"groups":1,"in_channels":1,"out_channels":1}`, `node 1 (conv_transpose): field "pads": conv_transpose: output_padding 2 on spatial axis 0 must be smaller than the stride 2 or the dilation 1`},
		{`{"id":1,"kind":"avg_pool_nd","parents":[0],"shape":[1,1,3],"kernel":[2],"stride":[2],"pads":[0,0],"dilation":[1],"ceil_mode":true,"count_include_pad":false}`, `node 1 (avg_pool_nd): field "shape": declared [1,1,3], inferred [1,1,2]`},
	}
	for _, c := range bad {
		d := `{"format":"tlcheck.ir.v1","input_id":0,"output_id":1,"nodes":[` + in + `,` + c.node + `]}`
		if _, err := DecodeGraph([]byte(d)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %s", c.node, err, c.want)
		}
	}
	// A Kind that sets a Window field its tag does not read is rejected.
	k := Kind{Op: OpMaxPool, Window: &spec.Window{Kernel: []int{2}, Stride: []int{2}, Padding: []int{0}, CeilMode: true}}
	info, _ := lookup(OpMaxPool)
	if got := k.strayAttr(info); got != "ceil_mode" {
		t.Errorf("stray attribute %q, want ceil_mode", got)
	}
}
