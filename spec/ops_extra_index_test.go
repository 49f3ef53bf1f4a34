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
