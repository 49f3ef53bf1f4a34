package spec

import (
	"math/big"
	"strings"
	"testing"
)

// TestMaxPoolDualKWayTie: the forward rule of max_pool and max_pool_nd
// over Dual[Rat] at a k-way tie gives as tangent the average of the k tied
// tangents, (Σ dx_i)/k — the registry's convention, which the JVP rule
// implements — not the pairwise average of a fold of Dual.Max (¼, ¼, ½
// for k = 3). Expected values are worked by hand in each case.
func TestMaxPoolDualKWayTie(t *testing.T) {
	type D = Dual[Rat]
	cases := []struct {
		name   string
		op     string
		w      *Window
		shape  Shape
		x, dx  []int64
		wantDu string // the forward rule's tangent, by hand
	}{
		// [1,1,1], kernel 3: (4 + 0 + 8)/3 = 4; the fold gives (4+0)/4 + 8/2 = 5.
		{"kernel 3 over [1,1,1]", "max_pool", &Window{Kernel: []int{3}, Stride: []int{3}, Pads: []int{0, 0}}, Shape{1, 3}, []int64{1, 1, 1}, []int64{4, 0, 8}, "4"},
		// max_pool_nd: the same window: (1 + 2 + 6)/3 = 3.
		{"max_pool_nd kernel 3", "max_pool_nd", &Window{Kernel: []int{3}, Stride: []int{1}, Dilation: []int{1}}, Shape{1, 3}, []int64{0, 0, 0}, []int64{1, 2, 6}, "3"},
		// 2×2 window over a flat zero region: (1+2+3+6)/4 = 3.
		{"2x2 over zeros", "max_pool", &Window{Kernel: []int{2, 2}, Stride: []int{2, 2}, Pads: []int{0, 0, 0, 0}}, Shape{1, 2, 2}, []int64{0, 0, 0, 0}, []int64{1, 2, 3, 6}, "3"},
		// A tie of two below a strict maximum: the maximum's tangent, 7.
		{"no tie at the max", "max_pool", &Window{Kernel: []int{3}, Stride: []int{3}, Pads: []int{0, 0}}, Shape{3}, []int64{1, 1, 2}, []int64{5, 5, 7}, "7"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &Attrs{Window: c.w}
			xd := zerosOf[D](c.shape)
			for i := range xd.Data {
				xd.Data[i] = MakeDual(NewRat(c.x[i], 1), NewRat(c.dx[i], 1))
			}
			pd, _ := Default[D]().Lookup(c.op)
			yd, err := pd.Apply(a, []Tensor[D]{xd})
			if err != nil {
				t.Fatal(err)
			}
			if got := yd.Data[0].Du.String(); got != c.wantDu {
				t.Fatalf("forward tangent over duals %s, want %s", got, c.wantDu)
			}
			// The JVP rule over Rat agrees exactly.
			pr, _ := Default[Rat]().Lookup(c.op)
			x, dx := ratVec(c.shape, c.x...), ratVec(c.shape, c.dx...)
			y, err := pr.Apply(a, []Tensor[Rat]{x})
			if err != nil {
				t.Fatal(err)
			}
			j, err := pr.JVP(a, []Tensor[Rat]{x}, y, []Tensor[Rat]{dx})
			if err != nil {
				t.Fatal(err)
			}
			if !j.Data[0].Same(yd.Data[0].Du) {
				t.Fatalf("JVP rule %s, forward over duals %s", j.Data[0], yd.Data[0].Du)
			}
		})
	}
}

// TestMaxOfFoldUnchanged: for scalars without tangents MaxOf is the left
// fold of Max, bit for bit (a NaN and signed zeros included).
func TestMaxOfFoldUnchanged(t *testing.T) {
	nan := F64(nanF64())
	for _, xs := range [][]F64{{1, 2, 3}, {-0.0, 0}, {0, -0.0}, {1, nan, 2}, {nan, 1}, {5}} {
		want := xs[0]
		for _, x := range xs[1:] {
			want = want.Max(x)
		}
		if got := MaxOf(xs); !got.Same(want) {
			t.Errorf("MaxOf(%v) = %v, fold %v", xs, got, want)
		}
	}
}

func nanF64() float64 { z := 0.0; return z / z }

// TestMaxPoolIntervalUndecidedHull: over intervals a window whose order
// cannot be decided (three enclosures of 1/3, which overlap) no longer
// refuses: the JVP is the hull of the candidates' tangents and each
// candidate's cotangent is hull(0, dy). Both contain the real values at
// x = (1/3, 1/3, 1/3): JVP (4+0+8)/3 = 4, cotangent 6/3 = 2 each. An
// element decidedly below another is no candidate: its cotangent stays 0.
func TestMaxPoolIntervalUndecidedHull(t *testing.T) {
	third := Interval{}.FromRat(big.NewRat(1, 3))
	if _, ok := third.Compare(third); ok {
		t.Skip("1/3's enclosure is a point; the test needs an undecidable order")
	}
	low := Interval{}.FromInt(-5)
	a := &Attrs{Window: &Window{Kernel: []int{4}, Stride: []int{4}, Pads: []int{0, 0}}}
	x := Tensor[Interval]{Shape: Shape{4}, Data: []Interval{third, third, low, third}}
	dx := Tensor[Interval]{Shape: Shape{4}, Data: []Interval{Interval{}.FromInt(4), {}, Interval{}.FromInt(100), Interval{}.FromInt(8)}}
	p, _ := Default[Interval]().Lookup("max_pool")
	y, err := p.Apply(a, []Tensor[Interval]{x})
	if err != nil {
		t.Fatal(err)
	}
	j, err := p.JVP(a, []Tensor[Interval]{x}, y, []Tensor[Interval]{dx})
	if err != nil {
		t.Fatalf("JVP refuses an undecidable window: %v", err)
	}
	if !j.Data[0].Contains(big.NewRat(4, 1)) || j.Data[0].Contains(big.NewRat(100, 1)) {
		t.Fatalf("JVP %v must contain the real 4 and not the non-candidate's tangent 100", j.Data[0])
	}
	dy := Tensor[Interval]{Shape: y.Shape, Data: []Interval{Interval{}.FromInt(6)}}
	gs, err := p.VJP(a, []Tensor[Interval]{x}, y, dy)
	if err != nil {
		t.Fatalf("VJP refuses an undecidable window: %v", err)
	}
	for i, v := range gs[0].Data {
		want := big.NewRat(2, 1)
		if i == 2 {
			want = new(big.Rat)
			if !v.IsZero() {
				t.Errorf("cotangent %d of a non-candidate is %v, want exactly 0", i, v)
			}
		}
		if !v.Contains(want) {
			t.Errorf("cotangent %d = %v does not contain the real %s", i, v, want.RatString())
		}
	}
	// Over a scalar that cannot enclose (F64 with a NaN) the refusal stays.
	pf, _ := Default[F64]().Lookup("max_pool")
	xf := Tensor[F64]{Shape: Shape{4}, Data: []F64{1, F64(nanF64()), 0, 0}}
	yf, err := pf.Apply(a, []Tensor[F64]{xf})
	if err == nil {
		_, err = pf.VJP(a, []Tensor[F64]{xf}, yf, Tensor[F64]{Shape: yf.Shape, Data: []F64{1}})
	}
	if err == nil || !strings.Contains(err.Error(), "cannot be decided") {
		t.Fatalf("F64 with a NaN: %v, want the undecidable-order error", err)
	}
}

// TestReduceMeanEmptyAxisEmptyOutput: reduce_mean over an empty axis
// whose output has no elements returns the empty tensor (as PyTorch
// does), with empty JVP and VJP; over an empty axis whose output has
// elements it still refuses, naming the axis.
func TestReduceMeanEmptyAxisEmptyOutput(t *testing.T) {
	p, _ := Default[Rat]().Lookup("reduce_mean")
	for _, c := range []struct {
		in   Shape
		axis int
		out  Shape
	}{{Shape{0, 0}, 0, Shape{0}}, {Shape{0, 0}, 1, Shape{0}}, {Shape{2, 0, 0}, 1, Shape{2, 0}}, {Shape{0, 3}, 1, Shape{0}}} {
		a := &Attrs{Axis: c.axis}
		x := zerosOf[Rat](c.in)
		y, err := p.Apply(a, []Tensor[Rat]{x})
		if err != nil || !y.Shape.Equal(c.out) || len(y.Data) != 0 {
			t.Fatalf("reduce_mean %v axis %d: %v %v, want the empty %v", c.in, c.axis, y.Shape, err, c.out)
		}
		j, err := p.JVP(a, []Tensor[Rat]{x}, y, []Tensor[Rat]{x})
		if err != nil || len(j.Data) != 0 {
			t.Fatalf("jvp: %v %v", j, err)
		}
		g, err := p.VJP(a, []Tensor[Rat]{x}, y, y)
		if err != nil || !g[0].Shape.Equal(c.in) {
			t.Fatalf("vjp: %v %v", g, err)
		}
	}
	if _, err := p.Apply(&Attrs{Axis: 0}, []Tensor[Rat]{zerosOf[Rat](Shape{0, 3})}); err == nil || !strings.Contains(err.Error(), "the axis is empty") {
		t.Fatalf("an empty axis with a non-empty output: %v, want the refusal", err)
	}
}
