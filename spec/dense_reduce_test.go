package spec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// ivEndpointTensors draws a random Interval tensor (about half points,
// magnitudes over 2⁻³⁰…2³⁰, some exact zeros) and returns it with the Rat
// tensors of its lower and upper endpoints.
func ivEndpointTensors(t *testing.T, r *rand.Rand, s Shape) (x Tensor[Interval], lo, hi Tensor[Rat]) {
	t.Helper()
	x = zerosOf[Interval](s)
	lo, hi = zerosOf[Rat](s), zerosOf[Rat](s)
	for i := range x.Data {
		c := r.NormFloat64() * math.Ldexp(1, r.IntN(61)-30)
		if r.IntN(8) == 0 {
			c = 0
		}
		l, h := c, c
		if r.IntN(2) == 0 {
			w := math.Abs(c) * math.Ldexp(r.Float64(), -r.IntN(30))
			l, h = c-w, c+w
		}
		x.Data[i] = Interval{l, h}
		var err1, err2 error
		lo.Data[i], err1 = RatFromFloat64(l)
		hi.Data[i], err2 = RatFromFloat64(h)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
	}
	return x, lo, hi
}

// enclosedBy counts the elements of y not enclosing [lo, hi] exactly.
func enclosedBy(y Tensor[Interval], lo, hi Tensor[Rat]) int {
	bad := 0
	for i, v := range y.Data {
		if new(big.Rat).SetFloat64(v.Lo).Cmp(lo.Data[i].Big()) > 0 || new(big.Rat).SetFloat64(v.Hi).Cmp(hi.Data[i].Big()) < 0 {
			bad++
		}
	}
	return bad
}

// TestIntervalReduceDense: reduce_sum, reduce_mean (every axis) and sum
// over Interval run on the dense kernel (reduceDense, sumAllDense and
// spreadDense accept them), and their forward values and VJP broadcasts
// enclose the exact Rat results on the endpoints (sums and the division by
// n are monotone, so the endpoint results bound every point result); a
// result narrowed by one ulp at an exact endpoint is reported (the check
// is not vacuous).
func TestIntervalReduceDense(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 9))
	s := Shape{5, 30, 3}
	x, xlo, xhi := ivEndpointTensors(t, r, s)
	regI, regR := Default[Interval](), Default[Rat]()
	for _, c := range []struct {
		op   string
		axis int
	}{{"reduce_sum", 0}, {"reduce_sum", 1}, {"reduce_sum", -1}, {"reduce_mean", 0}, {"reduce_mean", 1}, {"reduce_mean", 2}, {"sum", 0}} {
		a := &Attrs{Axis: c.axis}
		pi, _ := regI.Lookup(c.op)
		pr, _ := regR.Lookup(c.op)
		if c.op != "sum" {
			ax, _ := normAxis(c.axis, 3)
			if _, ok := reduceDense(x, ax, c.op == "reduce_mean"); !ok {
				t.Fatalf("%s axis %d: the dense kernel declined", c.op, c.axis)
			}
		} else if _, ok := sumAllDense(x); !ok {
			t.Fatal("sum: the dense kernel declined")
		}
		y, err := pi.Forward(a, []Tensor[Interval]{x})
		ylo, err1 := pr.Forward(a, []Tensor[Rat]{xlo})
		yhi, err2 := pr.Forward(a, []Tensor[Rat]{xhi})
		if err != nil || err1 != nil || err2 != nil {
			t.Fatal(err, err1, err2)
		}
		if bad := enclosedBy(y, ylo, yhi); bad != 0 {
			t.Errorf("%s axis %d: %d outputs do not enclose the exact sums", c.op, c.axis, bad)
		}
		// VJP: the cotangent's broadcast (÷n for the mean).
		dy, dlo, dhi := ivEndpointTensors(t, r, y.Shape)
		gi, err := pi.VJP(a, []Tensor[Interval]{x}, y, dy)
		glo, err1 := pr.VJP(a, []Tensor[Rat]{xlo}, ylo, dlo)
		ghi, err2 := pr.VJP(a, []Tensor[Rat]{xlo}, ylo, dhi)
		if err != nil || err1 != nil || err2 != nil {
			t.Fatal(err, err1, err2)
		}
		if bad := enclosedBy(gi[0], glo[0], ghi[0]); bad != 0 {
			t.Errorf("%s axis %d VJP: %d elements do not enclose the exact cotangent", c.op, c.axis, bad)
		}
		// Vacuity: narrow an output to an exact endpoint's inner neighbour.
		narrowed := zerosOf[Interval](y.Shape)
		copy(narrowed.Data, y.Data)
		f, _ := ylo.Data[0].Big().Float64()
		if new(big.Rat).SetFloat64(f).Cmp(ylo.Data[0].Big()) <= 0 {
			f = math.Nextafter(f, math.Inf(1))
		}
		narrowed.Data[0].Lo = f
		if enclosedBy(narrowed, ylo, yhi) == 0 {
			t.Errorf("%s axis %d: a narrowed lower endpoint was not reported", c.op, c.axis)
		}
	}
}

// BenchmarkIntervalSum compares, on 2¹⁶ intervals, the generic left fold
// of Interval.Add (SumAll, what sum ran before the dense hook) with the
// dense kernel (sumAllDense).
func BenchmarkIntervalSum(b *testing.B) {
	r := rand.New(rand.NewPCG(24, 10))
	x := zerosOf[Interval](Shape{1 << 16})
	for i := range x.Data {
		c := r.NormFloat64()
		x.Data[i] = Interval{c - 0x1p-30, c + 0x1p-30}
	}
	b.Run("generic", func(b *testing.B) {
		for b.Loop() {
			SumAll(x)
		}
	})
	b.Run("dense", func(b *testing.B) {
		for b.Loop() {
			if _, ok := sumAllDense(x); !ok {
				b.Fatal("declined")
			}
		}
	})
}
