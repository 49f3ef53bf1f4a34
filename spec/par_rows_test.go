package spec

import (
	"math"
	"math/rand"
	"runtime"
	"testing"
)

// parConvCase is a grouped conv or conv_transpose (2 groups, stride 2 on one axis, padding)
// over T with pseudo-random dyadic values; interval, when set, makes one
// input element an interval with an infinite end, so that Interval's
// dense kernels decline and the element fold runs.
func parConvCase[T Scalar[T]](op string, seed int64, inf bool) (*Prim[T], *Attrs, []Tensor[T]) {
	p, _ := Default[T]().Lookup(op)
	a := &Attrs{Window: &Window{Kernel: []int{3, 2}, Stride: []int{1, 2}, Pads: []int{1, 0, 1, 1}, Dilation: []int{1, 1}, Groups: 2}}
	r := rand.New(rand.NewSource(seed))
	var z T
	mk := func(s Shape) Tensor[T] {
		t := zerosOf[T](s)
		for i := range t.Data {
			v, _ := z.FromInt(int64(r.Intn(2001) - 1000)).Div(z.FromInt(256))
			t.Data[i] = v
		}
		return t
	}
	w := Shape{6, 2, 3, 2} // conv: cout × cin/groups × kernel
	if op == "conv_transpose" {
		w = Shape{4, 3, 3, 2} // cin × cout/groups × kernel
	}
	xs := []Tensor[T]{mk(Shape{2, 4, 9, 8}), mk(w), mk(Shape{6})}
	if inf {
		if d, ok := any(xs[0].Data).([]Interval); ok {
			d[5] = Interval{Lo: math.Inf(-1), Hi: 1}
		}
	}
	return p, a, xs
}

// TestParRowsDeterministic: the window kernels' rows on par's pool give
// the serial loop's bits (over Rat its values) at GOMAXPROCS 1, 2 and 8,
// forward and VJP, for every elemParallel scalar, each element's
// arithmetic being the serial loop's (parRows' determinism argument).
func TestParRowsDeterministic(t *testing.T) {
	t.Run("F32", func(t *testing.T) { parRowsCase[F32](t, false) })
	t.Run("F64", func(t *testing.T) { parRowsCase[F64](t, false) })
	t.Run("Binary32", func(t *testing.T) { parRowsCase[Binary32](t, false) })
	t.Run("Rat", func(t *testing.T) { parRowsCase[Rat](t, false) })
	t.Run("IntervalFold", func(t *testing.T) { parRowsCase[Interval](t, true) })
	t.Run("IntervalDense", func(t *testing.T) { parRowsCase[Interval](t, false) })
}

func parRowsCase[T Scalar[T]](t *testing.T, inf bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	minW, grainW := parMinWork, parGrainWork
	defer func() { parMinWork, parGrainWork = minW, grainW }()
	run := func() []Tensor[T] {
		var out []Tensor[T]
		for _, op := range []string{"conv", "conv_transpose"} {
			out = append(out, runOp[T](t, op, inf)...)
		}
		return out
	}
	runtime.GOMAXPROCS(1)
	parMinWork = math.MaxInt
	want := run()
	for _, procs := range []int{1, 2, 8} {
		// Every row its own chunk, then chunks of several rows (2¹² / ≈ 430
		// multiply-adds a row: 9 rows, so 12 rows make two unequal chunks).
		for _, grain := range []int{1, 1 << 12} {
			runtime.GOMAXPROCS(procs)
			parMinWork, parGrainWork = 1, grain
			got := run()
			for k := range want {
				if i, ok := FirstDiff(want[k], got[k], nil); !ok {
					t.Fatalf("GOMAXPROCS %d, grain %d: result %d differs from the serial loop's at element %d", procs, grain, k, i)
				}
			}
		}
	}
}

// runOp is op's forward and VJP on parConvCase's operands.
func runOp[T Scalar[T]](t *testing.T, op string, inf bool) []Tensor[T] {
	p, a, xs := parConvCase[T](op, 7, inf)
	y, err := p.Forward(a, xs)
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	gs, err := p.VJP(a, xs, y, parConvCase2(y))
	if err != nil {
		t.Fatalf("%s VJP: %v", op, err)
	}
	return append([]Tensor[T]{y}, gs...)
}

// parConvCase2 is a cotangent of y's shape with distinct elements.
func parConvCase2[T Scalar[T]](y Tensor[T]) Tensor[T] {
	var z T
	dy := zerosOf[T](y.Shape)
	for i := range dy.Data {
		v, _ := z.FromInt(int64(i%13 - 6)).Div(z.FromInt(4))
		dy.Data[i] = v
	}
	return dy
}

// A planted fault in the scheduling — a chunk that skips its last row —
// is caught by the same comparison: parRows' output then differs from the
// serial loop's.
func TestParRowsCatchesLostRow(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(2)
	minW := parMinWork
	defer func() { parMinWork = minW }()
	parMinWork = 1
	out := make([]int, 40)
	parRows[F64](len(out), 1<<12, func(r0, r1 int) {
		for r := r0; r < r1-1; r++ { // the planted fault: r1−1 is skipped
			out[r] = r + 1
		}
	})
	lost := 0
	for r, v := range out {
		if v != r+1 {
			lost++
		}
	}
	if lost == 0 {
		t.Fatal("a chunk that drops its last row went unnoticed")
	}
}
