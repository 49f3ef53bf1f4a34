package spec

import (
	"strings"
	"testing"
)

// intRats spells exact rationals from integers.
func intRats(xs ...int64) []Rat {
	out := make([]Rat, len(xs))
	for i, x := range xs {
		out[i] = NewRat(x, 1)
	}
	return out
}

// TestTileByHand: forward and VJP of tile against results written out by
// hand (numpy.tile's layout: the whole parent repeated along each axis,
// not each element repeated in place, which is repeat_interleave).
func TestTileByHand(t *testing.T) {
	p, _ := Default[Rat]().Lookup("tile")
	cases := []struct {
		name    string
		in, out Shape
		x       []int64
		want    []int64 // y for x
		dy      []int64 // a cotangent
		wantG   []int64 // Σ of dy over each element's copies
	}{
		{name: "rows", in: Shape{1, 3}, out: Shape{2, 6}, x: []int64{1, 2, 3},
			want: []int64{1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3},
			dy:   []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, wantG: []int64{1 + 4 + 7 + 10, 2 + 5 + 8 + 11, 3 + 6 + 9 + 12}},
		{name: "column", in: Shape{2, 1}, out: Shape{4, 2}, x: []int64{5, -1},
			want: []int64{5, 5, -1, -1, 5, 5, -1, -1},
			dy:   []int64{1, 2, 3, 4, 5, 6, 7, 8}, wantG: []int64{1 + 2 + 5 + 6, 3 + 4 + 7 + 8}},
		{name: "identity", in: Shape{3}, out: Shape{3}, x: []int64{7, 8, 9},
			want: []int64{7, 8, 9}, dy: []int64{1, 0, -1}, wantG: []int64{1, 0, -1}},
		{name: "scalar", in: Shape{}, out: Shape{}, x: []int64{4}, want: []int64{4}, dy: []int64{3}, wantG: []int64{3}},
		{name: "zero repeats", in: Shape{2}, out: Shape{0}, x: []int64{1, 2}, want: []int64{}, dy: []int64{}, wantG: []int64{0, 0}},
	}
	for _, c := range cases {
		a := &Attrs{Shape: c.out}
		x := Tensor[Rat]{Shape: c.in, Data: intRats(c.x...)}
		y, err := p.Apply(a, []Tensor[Rat]{x})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !sameRats(y.Data, intRats(c.want...)) {
			t.Errorf("%s: y = %v, want %v", c.name, y.Data, c.want)
		}
		g, err := p.VJP(a, []Tensor[Rat]{x}, y, Tensor[Rat]{Shape: c.out, Data: intRats(c.dy...)})
		if err != nil {
			t.Fatalf("%s vjp: %v", c.name, err)
		}
		if !sameRats(g[0].Data, intRats(c.wantG...)) {
			t.Errorf("%s: vjp = %v, want %v", c.name, g[0].Data, c.wantG)
		}
		// The JVP is the forward rule on the tangent (tile is linear).
		jy, err := p.JVP(a, []Tensor[Rat]{x}, y, []Tensor[Rat]{x})
		if err != nil || !sameRats(jy.Data, y.Data) {
			t.Errorf("%s: jvp = %v, %v; want %v", c.name, jy.Data, err, y.Data)
		}
	}
}

// TestTileRefusesBadShapes: an output shape that does not tile the parent
// is a shape error naming the axis.
func TestTileRefusesBadShapes(t *testing.T) {
	info, _ := Info("tile")
	for _, c := range []struct {
		in, out Shape
		want    string
	}{
		{Shape{2, 3}, Shape{4}, "rank"},
		{Shape{2, 3}, Shape{4, 4}, "axis 1 is not a multiple"},
		{Shape{0, 3}, Shape{2, 3}, "repeats an empty axis"},
		{Shape{2}, Shape{-2}, "negative"},
	} {
		_, err := info.InferShape(&Attrs{Shape: c.out}, []Shape{c.in})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("tile %v → %v: %v, want an error with %q", c.in, c.out, err, c.want)
		}
	}
}

// TestScatterByHand: forward and VJP of scatter against ScatterElements'
// examples worked by hand (the ONNX operator page's two examples, and a
// partial write along axis 0).
func TestScatterByHand(t *testing.T) {
	p, _ := Default[Rat]().Lookup("scatter")
	cases := []struct {
		name        string
		a           *Attrs
		xs, us      Shape
		x, u        []int64
		want        []int64
		dy          []int64
		wantGx, wgu []int64
	}{
		// ONNX example 1: data 3×3 zeros, indices [[1,0,2],[0,2,1]], updates
		// [[1.0,1.1,1.2],[2.0,2.1,2.2]] (here 1…6) along axis 0 → [[4,2,0],[1,0,6],[0,5,3]].
		{name: "onnx example 1", a: &Attrs{Axis: 0, IndicesShape: Shape{2, 3}, Indices: []int{1, 0, 2, 0, 2, 1}},
			xs: Shape{3, 3}, us: Shape{2, 3}, x: []int64{0, 0, 0, 0, 0, 0, 0, 0, 0}, u: []int64{1, 2, 3, 4, 5, 6},
			want: []int64{4, 2, 0, 1, 0, 6, 0, 5, 3},
			dy:   []int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, wantGx: []int64{0, 0, 3, 0, 5, 0, 7, 0, 0}, wgu: []int64{4, 2, 9, 1, 8, 6}},
		// ONNX example 2: data [[1,2,3,4,5]], indices [[1,3]], updates [[11,21]], axis 1.
		{name: "onnx example 2", a: &Attrs{Axis: 1, IndicesShape: Shape{1, 2}, Indices: []int{1, 3}},
			xs: Shape{1, 5}, us: Shape{1, 2}, x: []int64{1, 2, 3, 4, 5}, u: []int64{11, 21},
			want: []int64{1, 11, 3, 21, 5},
			dy:   []int64{1, 2, 3, 4, 5}, wantGx: []int64{1, 0, 3, 0, 5}, wgu: []int64{2, 4}},
		// index_fill of column 0 with a constant, a negative axis.
		{name: "index_fill", a: &Attrs{Axis: -1, IndicesShape: Shape{2, 1}, Indices: []int{0, 0}},
			xs: Shape{2, 2}, us: Shape{2, 1}, x: []int64{1, 2, 3, 4}, u: []int64{-7, -7},
			want: []int64{-7, 2, -7, 4},
			dy:   []int64{1, 2, 3, 4}, wantGx: []int64{0, 2, 0, 4}, wgu: []int64{1, 3}},
	}
	for _, c := range cases {
		xs := []Tensor[Rat]{{Shape: c.xs, Data: intRats(c.x...)}, {Shape: c.us, Data: intRats(c.u...)}}
		y, err := p.Apply(c.a, xs)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !sameRats(y.Data, intRats(c.want...)) {
			t.Errorf("%s: y = %v, want %v", c.name, y.Data, c.want)
		}
		g, err := p.VJP(c.a, xs, y, Tensor[Rat]{Shape: c.xs, Data: intRats(c.dy...)})
		if err != nil {
			t.Fatalf("%s vjp: %v", c.name, err)
		}
		if !sameRats(g[0].Data, intRats(c.wantGx...)) || !sameRats(g[1].Data, intRats(c.wgu...)) {
			t.Errorf("%s: vjp = %v, %v; want %v, %v", c.name, g[0].Data, g[1].Data, c.wantGx, c.wgu)
		}
	}
}

// TestScatterRefuses: duplicate targets, indices out of range and shapes
// that do not fit are shape errors naming what is wrong.
func TestScatterRefuses(t *testing.T) {
	info, _ := Info("scatter")
	for _, c := range []struct {
		a    *Attrs
		in   []Shape
		want string
	}{
		{&Attrs{Axis: 0, IndicesShape: Shape{2}, Indices: []int{1, 1}}, []Shape{{3}, {2}}, "written by entries 0 and 1"},
		{&Attrs{Axis: 0, IndicesShape: Shape{2, 1}, Indices: []int{0, 0}}, []Shape{{3, 2}, {2, 1}}, "written by entries 0 and 1"},
		{&Attrs{Axis: 0, IndicesShape: Shape{1}, Indices: []int{3}}, []Shape{{3}, {1}}, "outside [0, 3)"},
		{&Attrs{Axis: 1, IndicesShape: Shape{3, 1}, Indices: []int{0, 0, 0}}, []Shape{{2, 2}, {3, 1}}, "exceeds the data"},
		{&Attrs{Axis: 0, IndicesShape: Shape{2}, Indices: []int{0, 1}}, []Shape{{3}, {3}}, "updates of shape [3]"},
		{&Attrs{Axis: 0, IndicesShape: Shape{1, 1}, Indices: []int{0}}, []Shape{{3}, {1, 1}}, "rank"},
	} {
		_, err := info.InferShape(c.a, c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("scatter %+v %v: %v, want an error with %q", c.a, c.in, err, c.want)
		}
	}
}
