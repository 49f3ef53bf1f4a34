package spec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestIntervalLinearPlane: Interval's plane kernels (LinearPlane on a
// float64 plane, LinearPlane32 on a binary32 plane read in place, each
// tile by tile) give, bit for bit, linear's rule on the converted weights
// (linearFwdIv, one product), with interval and point inputs, a bias and
// exact zeros (and -0) among the weights; a weight 2⁻⁴⁰⁰ (not tame) is
// declined, as is a gathered (conv) product; a weight one binary32 ulp off
// changes the result.
func TestIntervalLinearPlane(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	lin, err := Default[Interval]().Lookup("linear")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ rows, out, in int }{{1, 37, 64}, {5, 23, 33}, {3, 8, 9}} {
		x := Tensor[Interval]{Shape: Shape{c.rows, c.in}, Data: make([]Interval, c.rows*c.in)}
		for i := range x.Data {
			v := float64(float32(r.NormFloat64()))
			x.Data[i] = Interval{Lo: v, Hi: v}
			if r.IntN(3) == 0 {
				x.Data[i].Hi = v + 0x1p-12
			}
		}
		b := Tensor[Interval]{Shape: Shape{c.out}, Data: make([]Interval, c.out)}
		for i := range b.Data {
			v := float64(float32(r.NormFloat64()))
			b.Data[i] = Interval{Lo: v, Hi: v}
		}
		wf := make([]float32, c.out*c.in)
		w64 := make([]float64, len(wf))
		W := Tensor[Interval]{Shape: Shape{c.out, c.in}, Data: make([]Interval, len(wf))}
		for i := range wf {
			switch r.IntN(8) {
			case 0:
			case 1:
				wf[i] = float32(math.Copysign(0, -1))
			default:
				wf[i] = float32(r.NormFloat64())
			}
			w64[i] = float64(wf[i])
			W.Data[i] = Interval{}.FromRat(new(big.Rat).SetFloat64(w64[i]))
		}
		want, err := lin.Apply(nil, []Tensor[Interval]{x, W, b})
		if err != nil {
			t.Fatal(err)
		}
		for _, tile := range []int{1 << 40, 1, c.in, 3*c.in + 1} {
			func() {
				defer func(v int) { planeTileElems = v }(planeTileElems)
				planeTileElems = tile
				g64, ok64 := LinearPlane(x, W.Shape, w64, b)
				g32, ok32 := LinearPlane32(x, W.Shape, wf, b)
				if !ok64 || !ok32 {
					t.Fatalf("%+v tile %d: declined (%v, %v)", c, tile, ok64, ok32)
				}
				if !reflect.DeepEqual(want, g64) || !reflect.DeepEqual(want, g32) {
					t.Fatalf("%+v tile %d: the plane kernels differ from linear's rule", c, tile)
				}
				pl := append([]float32(nil), wf...)
				k := len(pl) - 1 // the last tile's last non-zero weight, one ulp up
				for pl[k] == 0 {
					k--
				}
				pl[k] = math.Nextafter32(pl[k], float32(math.Inf(1)))
				if gp, _ := LinearPlane32(x, W.Shape, pl, b); reflect.DeepEqual(gp, g32) {
					t.Errorf("%+v tile %d: a weight one binary32 ulp off changed nothing", c, tile)
				}
			}()
		}
		w64[len(w64)/2] = math.Ldexp(1, -400)
		if _, ok := LinearPlane(x, W.Shape, w64, b); ok {
			t.Errorf("%+v: a weight 2⁻⁴⁰⁰ was accepted", c)
		}
		y := make([]Interval, c.rows*c.out)
		if (Interval{}).LinearDensePlane32(x.Data, make([]int32, c.rows*c.in), wf, b.Data, y, c.rows, c.out, c.in, true) {
			t.Errorf("%+v: a gathered product was accepted", c)
		}
	}
}
