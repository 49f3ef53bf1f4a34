package spec

import (
	"fmt"
	"strings"
	"testing"
)

func ratVec(shape Shape, vs ...int64) Tensor[Rat] {
	t := zerosOf[Rat](shape)
	for i, v := range vs {
		t.Data[i] = NewRat(v, 1)
	}
	return t
}

func ratsOf(t *testing.T, s string) []Rat {
	t.Helper()
	var out []Rat
	for _, f := range strings.Fields(s) {
		var r Rat
		num, den := f, "1"
		if i := strings.IndexByte(f, '/'); i >= 0 {
			num, den = f[:i], f[i+1:]
		}
		var n, d int64
		if _, err := fmt.Sscan(num, &n); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscan(den, &d); err != nil {
			t.Fatal(err)
		}
		r = NewRat(n, d)
		out = append(out, r)
	}
	return out
}

func sameRats(a []Rat, b []Rat) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if c, _ := a[i].Compare(b[i]); c != 0 {
			return false
		}
	}
	return true
}

// TestWindowHandDerived checks forward, JVP and VJP values worked by hand
// (each case's comment has the arithmetic).
func TestWindowHandDerived(t *testing.T) {
	reg := Default[Rat]()
	cases := []struct {
		name  string
		op    string
		w     *Window
		xs    []Tensor[Rat]
		y     string // forward
		dy    []int64
		dx    string // VJP for parent 0
		dw    string // VJP for parent 1 ("" when not checked)
		db    string // VJP for parent 2
		tan   []int64
		jvp   string // JVP with tangent tan on parent 0, zero elsewhere
		shape Shape
	}{
		// x = [1,2,3], W = [1,−1], b = 10, pads 1/1: padded [0,1,2,3,0];
		// y_o = x_{o−1} − x_o + 10 = 9, 9, 9, 13. dy = [1,2,3,4]: dx_i =
		// dy_{i+1}·1 + dy_i·(−1) = 1, 1, 1; dW_0 = Σ_o dy_o x_{o−1} = 2·1 +
		// 3·2 + 4·3 = 20, dW_1 = Σ_o dy_o x_o = 1 + 4 + 9 = 14; db = 10.
		{name: "conv 1-D", op: "conv", w: &Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{1, 1}, Dilation: []int{1}, Groups: 1},
			xs: []Tensor[Rat]{ratVec(Shape{1, 3}, 1, 2, 3), ratVec(Shape{1, 1, 2}, 1, -1), ratVec(Shape{1}, 10)},
			y:  "9 9 9 13", dy: []int64{1, 2, 3, 4}, dx: "1 1 1", dw: "20 14", db: "10",
			tan: []int64{1, 0, 0}, jvp: "-1 1 0 0"},
		// Two groups, dilation 2, stride 2 over x0 = [1,0,2,0,3], x1 = 1s:
		// y0_o = x0_{2o} + x0_{2o+2} = 3, 5; y1_o = 2·x1_{2o} − x1_{2o+2} =
		// 1, 1. dy = [1,1,1,1]: dx0 = [1,0,2,0,1] (x0_2 is read by both
		// outputs: accumulated), dx1 = [2,0,1,0,−1].
		{name: "conv groups dilation", op: "conv", w: &Window{Kernel: []int{2}, Stride: []int{2}, Dilation: []int{2}, Groups: 2},
			xs: []Tensor[Rat]{ratVec(Shape{2, 5}, 1, 0, 2, 0, 3, 1, 1, 1, 1, 1), ratVec(Shape{2, 1, 2}, 1, 1, 2, -1)},
			y:  "3 5 1 1", dy: []int64{1, 1, 1, 1}, dx: "1 0 2 0 1 2 0 1 0 -1", dw: "3 5 2 2"},
		// conv_transpose: x = [1,2], W = [1,10,100], stride 2, pads 1/0,
		// output_padding 1: extent (2−1)·2 − 1 + 3 + 1 = 5, o = 2i − 1 + j:
		// i=0 writes o = 0, 1 (j = 1, 2), i=1 writes o = 1, 2, 3, and o = 4
		// is the output padding: y = [10, 100+2, 20, 200, 0] + b = 1.
		// dy = [1,0,0,0,1]: dx_i = Σ_j dy_{2i−1+j} W_j = 10, 0. The JVP
		// of a tangent 1 on x_1 is that input's footprint: W at o = 1, 2, 3.
		{name: "conv_transpose", op: "conv_transpose", w: &Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 0}, Dilation: []int{1}, OutputPadding: []int{1}, Groups: 1},
			xs: []Tensor[Rat]{ratVec(Shape{1, 2}, 1, 2), ratVec(Shape{1, 1, 3}, 1, 10, 100), ratVec(Shape{1}, 1)},
			y:  "11 103 21 201 1", dy: []int64{1, 0, 0, 0, 1}, dx: "10 0", dw: "0 1 0", db: "2",
			tan: []int64{0, 1}, jvp: "0 1 10 100 0"},
		// max_pool_nd over [3,1,3,2], kernel 2, stride 1: y = [3,3,3]; the
		// 3 at index 2 wins two overlapping windows: dy = [1,2,4] gives dx
		// = [1, 0, 2+4, 0].
		{name: "max_pool_nd overlap", op: "max_pool_nd", w: &Window{Kernel: []int{2}, Stride: []int{1}, Dilation: []int{1}},
			xs: []Tensor[Rat]{ratVec(Shape{1, 4}, 3, 1, 3, 2)}, y: "3 3 3", dy: []int64{1, 2, 4}, dx: "1 0 6 0",
			tan: []int64{5, 7, 11, 13}, jvp: "5 11 11"},
		// Ties: [2,2,1], kernel 2: window {0,1} ties, so its cotangent 1 is
		// split 1/2, 1/2 and window {1,2} gives 1 to index 1: dx = [1/2,
		// 3/2, 0]; the JVP of window {0,1} is the average (4 + 0)/2 = 2.
		{name: "max_pool ties", op: "max_pool", w: &Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{0, 0}},
			xs: []Tensor[Rat]{ratVec(Shape{3}, 2, 2, 1)}, y: "2 2", dy: []int64{1, 1}, dx: "1/2 3/2 0",
			tan: []int64{4, 0, 8}, jvp: "2 0"},
		// Ceil mode with dilation 2, stride 2 over [1,5,2,4,3,6]: floor
		// gives 2 windows, ceil 3 (the third starts at 4 < 6 and reaches
		// past the input): {0,2} → 2, {2,4} → 3, {4} → 3.
		{name: "max_pool_nd ceil dilation", op: "max_pool_nd", w: &Window{Kernel: []int{2}, Stride: []int{2}, Dilation: []int{2}, CeilMode: true},
			xs: []Tensor[Rat]{ratVec(Shape{6}, 1, 5, 2, 4, 3, 6)}, y: "2 3 3", dy: []int64{1, 1, 1}, dx: "0 0 1 0 2 0"},
		// avg_pool_nd, kernel 3, stride 2, pads 1/1, ceil mode, over
		// [1..6]: 4 windows starting at −1, 1, 3, 5. count_include_pad
		// divides by the positions inside [−1, 7): 3, 3, 3, 2 (the last
		// window's position 7 was added by ceil mode): y = [(0+1+2)/3,
		// 9/3, 15/3, 6/2] = [1, 3, 5, 3]. dy = 1s: dx_i = Σ 1/D over the
		// windows reading i = 1/3, 2/3, 1/3, 2/3, 1/3, 1/3+1/2. Tangent 6
		// at x_0 and x_5: 6/3, 0, 6/3, 6/2.
		{name: "avg_pool_nd ceil include pad", op: "avg_pool_nd", w: &Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 1}, Dilation: []int{1}, CeilMode: true, CountIncludePad: true},
			xs: []Tensor[Rat]{ratVec(Shape{6}, 1, 2, 3, 4, 5, 6)}, y: "1 3 5 3", dy: []int64{1, 1, 1, 1}, dx: "1/3 2/3 1/3 2/3 1/3 5/6",
			tan: []int64{6, 0, 0, 0, 0, 6}, jvp: "2 0 2 3"},
		// The same without count_include_pad divides by the elements: 2,
		// 3, 3, 1: y = [3/2, 3, 5, 6].
		{name: "avg_pool_nd ceil exclude pad", op: "avg_pool_nd", w: &Window{Kernel: []int{3}, Stride: []int{2}, Pads: []int{1, 1}, Dilation: []int{1}, CeilMode: true},
			xs: []Tensor[Rat]{ratVec(Shape{6}, 1, 2, 3, 4, 5, 6)}, y: "3/2 3 5 6", dy: []int64{2, 3, 3, 1}, dx: "1 2 1 2 1 2"},
		// TorchLean avg_pool, kernel 2, padding 1 over [1,2,3]: windows
		// {−1,0}, {0,1}, {1,2}, {2,3} over the kernel size 2: [1/2, 3/2,
		// 5/2, 3/2].
		{name: "avg_pool padding", op: "avg_pool", w: &Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{1, 1}},
			xs: []Tensor[Rat]{ratVec(Shape{3}, 1, 2, 3)}, y: "1/2 3/2 5/2 3/2", dy: []int64{2, 2, 2, 2}, dx: "2 2 2"},
		// 2-D max_pool of [[1,2],[3,4]] is 4, whose cotangent goes to 4.
		{name: "max_pool 2-D", op: "max_pool", w: &Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 0, 0, 0}},
			xs: []Tensor[Rat]{ratVec(Shape{1, 2, 2}, 1, 2, 3, 4)}, y: "4", dy: []int64{5}, dx: "0 0 0 5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := reg.Lookup(c.op)
			if err != nil {
				t.Fatal(err)
			}
			a := &Attrs{Window: c.w}
			y, err := p.Apply(a, c.xs)
			if err != nil {
				t.Fatal(err)
			}
			if !sameRats(y.Data, ratsOf(t, c.y)) {
				t.Errorf("forward %v, want %s", y.Data, c.y)
			}
			dy := ratVec(y.Shape, c.dy...)
			gs, err := p.VJP(a, c.xs, y, dy)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{c.dx, c.dw, c.db} {
				if want != "" && !sameRats(gs[i].Data, ratsOf(t, want)) {
					t.Errorf("vjp parent %d: %v, want %s", i, gs[i].Data, want)
				}
			}
			if c.jvp != "" {
				dxs := make([]Tensor[Rat], len(c.xs))
				for i := range c.xs {
					dxs[i] = zerosOf[Rat](c.xs[i].Shape)
				}
				dxs[0] = ratVec(c.xs[0].Shape, c.tan...)
				j, err := p.JVP(a, c.xs, y, dxs)
				if err != nil {
					t.Fatal(err)
				}
				if !sameRats(j.Data, ratsOf(t, c.jvp)) {
					t.Errorf("jvp %v, want %s", j.Data, c.jvp)
				}
			}
		})
	}
}

// TestWindowErrors: malformed geometries are shape errors naming the
// field, and an undecidable max-pool order is an error naming the output.
func TestWindowErrors(t *testing.T) {
	cases := []struct {
		op   string
		w    *Window
		in   []Shape
		want string
	}{
		{"max_pool_nd", &Window{Kernel: []int{1}, Stride: []int{1}, Pads: []int{1, 0}, Dilation: []int{1}}, []Shape{{2}}, "the window of output 0 on spatial axis 0 holds no element of the input"},
		{"max_pool", &Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{0, 0}, Dilation: []int{1}}, []Shape{{3}}, "max_pool takes no window Dilation"},
		{"max_pool", &Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{2, 2}}, []Shape{{3}}, "padding 2 on spatial axis 0 must be smaller than the kernel 2"},
		{"avg_pool", &Window{Kernel: []int{4}, Stride: []int{1}}, []Shape{{3}}, "window 4 on spatial axis 0 exceeds the padded extent 3"},
		{"conv", &Window{Kernel: []int{2}, Stride: []int{1}, Groups: 1}, []Shape{{2, 3}, {1, 1, 2}}, "weight has shape [1,1,2], expected [out_channels, 2, kernel…]"},
		{"conv", &Window{Kernel: []int{2}, Stride: []int{1}, Groups: 1}, []Shape{{1, 3}, {1, 1, 3}}, "weight has shape [1,1,3], but the kernel is [2]"},
		{"conv", &Window{Kernel: []int{2}, Stride: []int{1}, Groups: 1}, []Shape{{1, 3}, {2, 1, 2}, {3}}, "bias has shape [3], expected [2]"},
		{"conv", &Window{Kernel: []int{2}, Stride: []int{0}, Groups: 1}, []Shape{{1, 3}, {1, 1, 2}}, "window stride entry 0 is 0"},
		{"conv_transpose", &Window{Kernel: []int{2}, Stride: []int{2}, OutputPadding: []int{2}, Groups: 1}, []Shape{{1, 3}, {1, 1, 2}}, "output_padding 2 on spatial axis 0 must be smaller than the stride 2 or the dilation 1"},
		{"conv_transpose", &Window{Kernel: []int{1}, Stride: []int{1}, Pads: []int{1, 1}, Groups: 1}, []Shape{{1, 1}, {1, 1, 1}}, "conv_transpose output extent -1 on spatial axis 0 is not positive"},
		{"avg_pool", nil, []Shape{{3}}, "missing window geometry"},
	}
	for _, c := range cases {
		info, err := Info(c.op)
		if err != nil {
			t.Fatal(err)
		}
		_, err = info.InferShape(&Attrs{Window: c.w}, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %+v: %v, want %q", c.op, c.w, err, c.want)
		}
	}
	// Over Interval, [0,2] and [1,3] have no decided order: the tie rule
	// encloses every outcome (TestMaxPoolIntervalUndecidedHull) instead of
	// refusing. Both elements are candidates: each cotangent is hull(0, dy)
	// and the JVP the hull of the tangents.
	p, _ := Default[Interval]().Lookup("max_pool")
	x := Tensor[Interval]{Shape: Shape{2}, Data: []Interval{{Lo: 0, Hi: 2}, {Lo: 1, Hi: 3}}}
	a := &Attrs{Window: &Window{Kernel: []int{2}, Stride: []int{1}}}
	y, err := p.Apply(a, []Tensor[Interval]{x})
	if err != nil {
		t.Fatal(err)
	}
	gs, err := p.VJP(a, []Tensor[Interval]{x}, y, y)
	if err != nil || !gs[0].Data[0].Same(Interval{Lo: 0, Hi: 3}) || !gs[0].Data[1].Same(Interval{Lo: 0, Hi: 3}) {
		t.Errorf("undecidable interval order: %v %v, want [0,3] twice", gs, err)
	}
	j, err := p.JVP(a, []Tensor[Interval]{x}, y, []Tensor[Interval]{x})
	if err != nil || !j.Data[0].Same(Interval{Lo: 0, Hi: 3}) {
		t.Errorf("undecidable interval order (jvp): %v %v, want [0,3]", j, err)
	}
}

// TestWindowFloatPathsMatchRat: the rules are the same left folds over
// every scalar. At small integers every product and sum is exact in
// binary64, so over F64 a conv, a max pool and an average pool's forward
// (whose one inexact step is the final division, correctly rounded) give
// the Rat value correctly rounded; so do the VJPs of the convs and max
// pools (ties divide an integer by 2). An average pool's VJP sums rounded
// quotients and is not compared.
func TestWindowFloatPathsMatchRat(t *testing.T) {
	for _, c := range sampleCases() {
		info, _ := Info(c.op)
		if len(info.Attrs) != 1 || info.Attrs[0] != "Window" {
			continue
		}
		xr := make([]Tensor[Rat], len(c.shapes))
		xf := make([]Tensor[F64], len(c.shapes))
		for i, s := range c.shapes {
			xr[i], xf[i] = zerosOf[Rat](s), zerosOf[F64](s)
			for k := range xr[i].Data {
				v := int64((k*7+i*3)%9) - 4
				xr[i].Data[k], xf[i].Data[k] = NewRat(v, 1), F64(v)
			}
		}
		pr, _ := Default[Rat]().Lookup(c.op)
		pf, _ := Default[F64]().Lookup(c.op)
		yr, err1 := pr.Apply(c.attrs, xr)
		yf, err2 := pf.Apply(c.attrs, xf)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", c.op, err1, err2)
		}
		gr, err1 := pr.VJP(c.attrs, xr, yr, yr)
		gf, err2 := pf.VJP(c.attrs, xf, yf, yf)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s vjp: %v %v", c.op, err1, err2)
		}
		check := func(what string, r Tensor[Rat], f Tensor[F64]) {
			for k := range r.Data {
				if want := r.Data[k].Float64(); float64(f.Data[k]) != want {
					t.Errorf("%s %s[%d]: f64 %v, rat %v", c.op, what, k, f.Data[k], r.Data[k])
				}
			}
		}
		check("forward", yr, yf)
		if strings.HasPrefix(c.op, "avg_pool") {
			continue
		}
		for i := range gr {
			check("vjp", gr[i], gf[i])
		}
	}
}

// convBench is a 1×3×16×16 input, 8 output channels, 3×3 kernel, padding
// 1: the first layer of a small CNN. Values are dyadic (k/8), as float32
// weights and inputs are.
func convBench[T Scalar[T]]() (*Prim[T], *Attrs, []Tensor[T]) {
	p, _ := Default[T]().Lookup("conv")
	a := &Attrs{Window: &Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Pads: []int{1, 1, 1, 1}, Dilation: []int{1, 1}, Groups: 1}}
	var z T
	mk := func(s Shape, seed int) Tensor[T] {
		t := zerosOf[T](s)
		for i := range t.Data {
			v, _ := z.FromInt(int64((i*seed+5)%17 - 8)).Div(z.FromInt(8))
			t.Data[i] = v
		}
		return t
	}
	return p, a, []Tensor[T]{mk(Shape{1, 3, 16, 16}, 7), mk(Shape{8, 3, 3, 3}, 11), mk(Shape{8}, 3)}
}

func benchConvForward[T Scalar[T]](b *testing.B) {
	p, a, xs := convBench[T]()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Forward(a, xs); err != nil {
			b.Fatal(err)
		}
	}
}

func benchConvVJP[T Scalar[T]](b *testing.B) {
	p, a, xs := convBench[T]()
	y, err := p.Forward(a, xs)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.VJP(a, xs, y, y); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConv2dForward and BenchmarkConv2dVJP time the registry's conv
// rules over Rat (exact) and F64.
func BenchmarkConv2dForward(b *testing.B) {
	b.Run("Rat", benchConvForward[Rat])
	b.Run("F64", benchConvForward[F64])
}

func BenchmarkConv2dVJP(b *testing.B) {
	b.Run("Rat", benchConvVJP[Rat])
	b.Run("F64", benchConvVJP[F64])
}

// TestWindowWorkBounded: a geometry whose relation tables would be huge is
// rejected by the work limit before any table is built.
func TestWindowWorkBounded(t *testing.T) {
	info, _ := Info("avg_pool_nd")
	a := &Attrs{Window: &Window{Kernel: []int{1 << 25}, Stride: []int{1}, Pads: []int{1 << 25, 1 << 25}, Dilation: []int{1}, CountIncludePad: true}}
	if _, err := info.InferShape(a, []Shape{{2}}); err == nil || !strings.Contains(err.Error(), "exceeds the work limit") {
		t.Errorf("huge window: %v", err)
	}
}
