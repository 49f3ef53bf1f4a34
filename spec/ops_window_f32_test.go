package spec

import (
	"math"
	"math/rand/v2"
	"testing"
)

// f32Cases are conv geometries that exercise convFwdF32's paths: 1-D, 2-D
// and 3-D windows, strides, dilations, asymmetric padding (absent terms),
// groups (including depthwise), channel counts that are and are not
// multiples of the kernel's four-channel blocks, a leading batch of 2,
// with and without a bias.
var f32Cases = []struct {
	x, w  Shape
	win   Window
	nbias bool
}{
	{Shape{1, 3, 9}, Shape{5, 3, 3}, Window{Kernel: []int{3}, Stride: []int{1}, Pads: []int{1, 1}, Groups: 1}, false},
	{Shape{2, 4, 7, 6}, Shape{8, 4, 3, 2}, Window{Kernel: []int{3, 2}, Stride: []int{2, 1}, Pads: []int{1, 0, 2, 1}, Dilation: []int{1, 2}, Groups: 1}, false},
	{Shape{1, 6, 8, 8}, Shape{9, 2, 3, 3}, Window{Kernel: []int{3, 3}, Stride: []int{1, 1}, Pads: []int{1, 1, 1, 1}, Groups: 3}, true},
	{Shape{1, 5, 6, 5}, Shape{5, 1, 3, 3}, Window{Kernel: []int{3, 3}, Stride: []int{2, 2}, Pads: []int{0, 1, 1, 0}, Groups: 5}, false},
	{Shape{1, 3, 4, 5, 4}, Shape{6, 3, 2, 3, 2}, Window{Kernel: []int{2, 3, 2}, Stride: []int{1, 2, 1}, Pads: []int{0, 1, 1, 1, 0, 0}, Groups: 1}, false},
	{Shape{1, 16, 5, 5}, Shape{12, 16, 1, 1}, Window{Kernel: []int{1, 1}, Stride: []int{1, 1}, Pads: []int{0, 0, 0, 0}, Groups: 1}, false},
}

// f32Draw is a binary32 value of one of several kinds: ordinary, of wide
// exponent (overflow to ±∞ in the sums), subnormal, ±0, ±∞ and NaN, so that
// every IEEE case of the recurrence occurs somewhere.
func f32Draw(r *rand.Rand, special bool) F32 {
	if special {
		switch r.IntN(12) {
		case 0:
			return F32(float32(math.Copysign(0, -1)))
		case 1:
			return 0
		case 2:
			return F32(float32(math.Inf(1)))
		case 3:
			return F32(float32(math.Inf(-1)))
		case 4:
			return F32(float32(math.NaN()))
		case 5:
			return F32(math.Float32frombits(uint32(r.IntN(1 << 23))))
		case 6:
			return F32(float32(r.NormFloat64()) * 1e37)
		}
	}
	return F32(float32(r.NormFloat64()))
}

// TestConvFwdF32MatchesFold checks convFwdF32 against the generic element
// fold (convFwdFold, FoldDot over F32) bit for bit on every geometry of
// f32Cases, with ordinary values and with values that include ±0, ±∞,
// NaN, subnormals and overflowing sums. The comparison is of the bit
// patterns (a NaN matches any NaN), so a difference of one ulp in one
// element fails it — the planted fault below checks that the comparison
// does catch it.
func TestConvFwdF32MatchesFold(t *testing.T) {
	r := rand.New(rand.NewPCG(37, 1))
	same := func(a, b F32) bool {
		if a != a || b != b {
			return a != a && b != b
		}
		return math.Float32bits(float32(a)) == math.Float32bits(float32(b))
	}
	for ci, c := range f32Cases {
		for _, special := range []bool{false, true} {
			win := c.win
			in := []Shape{c.x, c.w}
			if !c.nbias {
				in = append(in, Shape{c.w[0]})
			}
			g, err := planWin(winConv, &Attrs{Window: &win}, in)
			if err != nil {
				t.Fatalf("case %d: %v", ci, err)
			}
			mk := func(s Shape) Tensor[F32] {
				v := zerosOf[F32](s)
				for i := range v.Data {
					v.Data[i] = f32Draw(r, special && r.IntN(8) == 0)
				}
				return v
			}
			x, w := mk(c.x), mk(c.w)
			var b []F32
			if !c.nbias {
				b = mk(Shape{c.w[0]}).Data
			}
			want := zerosOf[F32](g.out)
			convFwdFold(g, x, w, b, want)
			got := convFwd(g, x, w, b)
			for i := range want.Data {
				if !same(got.Data[i], want.Data[i]) {
					t.Fatalf("case %d special %v: y[%d] = %v, the fold gives %v", ci, special, i, got.Data[i], want.Data[i])
				}
			}
			// Planted fault: one element one ulp off must not compare equal.
			k := r.IntN(len(want.Data))
			if v := float32(want.Data[k]); v == v && !math.IsInf(float64(v), 0) {
				if same(F32(math.Nextafter32(v, float32(math.Inf(1)))), want.Data[k]) {
					t.Fatalf("case %d: a one-ulp planted difference is not caught", ci)
				}
			}
		}
	}
}
