package fastcpu

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

var reduceLens = []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 1000, ChunkLen - 1, ChunkLen, ChunkLen + 1,
	3*ChunkLen + 5, parallelLen - 1, parallelLen + 123}

func randVec(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = randVal(r)
	}
	return v
}

// modelOrder evaluates the documented order of Sum/Dot literally, with
// explicit lane arrays: a model of the doc comment, not of the code.
func modelOrder(x, y []float32) float32 {
	term := func(i int) float32 {
		if y == nil {
			return x[i]
		}
		return float32(x[i] * y[i])
	}
	var total float32
	for c, lo := 0, 0; lo < len(x) || c == 0; c, lo = c+1, lo+ChunkLen {
		hi := min(lo+ChunkLen, len(x))
		var lane [8]float32
		for i := lo; i < hi; i++ {
			lane[(i-lo)%8] = lane[(i-lo)%8] + term(i)
		}
		v := ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]))
		if c == 0 {
			total = v
		} else {
			total = total + v
		}
	}
	return total
}

func TestSumAndDot(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for _, n := range reduceLens {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			x, y := randVec(r, n), randVec(r, n)
			// Sum: bits of the documented order, and γ_{n−1}·Σ|x| (no
			// underflow term: a subnormal float32 sum is exact).
			got := Sum(x)
			if want := modelOrder(x, nil); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("Sum = %g, documented order gives %g", got, want)
			}
			s, abs := 0.0, 0.0
			for _, v := range x {
				s += float64(v)
				abs += math.Abs(float64(v))
			}
			bound := gamma(max(n-1, 0), u32)*abs + gamma(n, u64)*abs*(1+gamma(n, u32))
			if e := math.Abs(float64(got) - s); !(e <= bound) {
				t.Fatalf("Sum error %g exceeds bound %g", e, bound)
			}
			// Dot: bits and γ_n·Σ|x_i·y_i| + underflow.
			got = Dot(x, y)
			if want := modelOrder(x, y); math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("Dot = %g, documented order gives %g", got, want)
			}
			s, abs = 0, 0
			for i := range x {
				p := float64(x[i]) * float64(y[i])
				s += p
				abs += math.Abs(p)
			}
			if e := math.Abs(float64(got) - s); !(e <= dotBound(n, abs)) {
				t.Fatalf("Dot error %g exceeds bound %g", e, dotBound(n, abs))
			}
		})
	}
}

// TestDotRoundsEachProduct: every term of Dot, tail included, is a rounded
// product; (1+2⁻¹²)² needs 25 bits, so a fused product would differ.
func TestDotRoundsEachProduct(t *testing.T) {
	v := float32(1 + 1.0/(1<<12))
	for n := 1; n <= 17; n++ {
		x := make([]float32, n)
		y := make([]float32, n)
		for i := range x {
			x[i], y[i] = v, v
		}
		x[n-1], y[n-1] = v, -v
		if got, want := Dot(x, y), modelOrder(x, y); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("n=%d: Dot = %g, documented order gives %g", n, got, want)
		}
	}
}

func TestReduceDeterministicAcrossGOMAXPROCS(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	n := 3*parallelLen + 7
	x, y := randVec(r, n), randVec(r, n)
	run := func(procs int) (float32, float32) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		return Sum(x), Dot(x, y)
	}
	s1, d1 := run(1)
	for _, procs := range []int{2, 8, 1, 8, 2} {
		s, d := run(procs)
		if math.Float32bits(s) != math.Float32bits(s1) || math.Float32bits(d) != math.Float32bits(d1) {
			t.Fatalf("GOMAXPROCS=%d: Sum %g / Dot %g, GOMAXPROCS=1: %g / %g", procs, s, d, s1, d1)
		}
	}
}

func TestReduceSpecialValues(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for _, n := range []int{5, 8, ChunkLen + 3, parallelLen + 9} {
		for _, pos := range []int{0, n / 2, n - 1} {
			x := make([]float32, n)
			y := make([]float32, n)
			for i := range x {
				x[i], y[i] = 1, 1
			}
			x[pos] = nan
			if s := Sum(x); !math.IsNaN(float64(s)) {
				t.Fatalf("n=%d NaN at %d: Sum = %g", n, pos, s)
			}
			if d := Dot(x, y); !math.IsNaN(float64(d)) {
				t.Fatalf("n=%d NaN at %d: Dot = %g", n, pos, d)
			}
			x[pos] = inf
			if s := Sum(x); !math.IsInf(float64(s), 1) {
				t.Fatalf("n=%d +Inf at %d: Sum = %g", n, pos, s)
			}
			y[pos] = 0
			if d := Dot(x, y); !math.IsNaN(float64(d)) {
				t.Fatalf("n=%d Inf·0 at %d: Dot = %g", n, pos, d)
			}
			y[pos] = 1
			x[(pos+1)%n] = -inf
			if s := Sum(x); !math.IsNaN(float64(s)) {
				t.Fatalf("n=%d +Inf and −Inf: Sum = %g", n, s)
			}
		}
	}
	if s := Sum(nil); math.Float32bits(s) != 0 {
		t.Fatalf("empty Sum = %g, want +0", s)
	}
	negZero := float32(math.Copysign(0, -1))
	if s := Sum([]float32{negZero, negZero}); math.Float32bits(s) != 0 {
		t.Fatalf("Sum(−0, −0) = %g, want +0 (the lanes start at +0)", s)
	}
}

func TestDotLengthMismatch(t *testing.T) {
	if _, err := DotChecked(make([]float32, 3), make([]float32, 4)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("got %v, want ErrInvalidArgument", err)
	}
	if v, err := DotChecked([]float32{2}, []float32{3}); err != nil || v != 6 {
		t.Fatalf("DotChecked = %v, %v", v, err)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Dot of mismatched lengths did not panic")
		}
	}()
	Dot(make([]float32, 3), make([]float32, 4))
}

func TestReduceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's sync.Pool drops Puts at random, so pooled scratch is reallocated by design")
	}
	r := rand.New(rand.NewPCG(25, 26))
	x, y := randVec(r, 4*ChunkLen), randVec(r, 4*ChunkLen) // serial
	if a := testing.AllocsPerRun(20, func() { Sum(x); Dot(x, y) }); a != 0 {
		t.Fatalf("%v allocations per serial Sum+Dot, want 0", a)
	}
}
