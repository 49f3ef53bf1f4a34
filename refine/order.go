package refine

import (
	"fmt"
	"math"
	"runtime"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/fastcpu"
	"github.com/tlcheck/tlcheck/spec"
)

// The declared-order obligation. Refinement (Check) admits any order
// within γ_{n−1}·Σ|x|: an implementation-defined reduction. fast_cpu's
// sum and reduce_sum document more — a fixed order that depends only on
// the shape, never on GOMAXPROCS (backend's FastCPU provider doc, fastcpu.Sum):
//
//   - sum, and reduce_sum along the last axis (each lane): chunks of
//     fastcpu.ChunkLen elements; within a chunk lane r (r = 0…7) is the
//     left fold from +0 of the elements whose index in the chunk is ≡ r
//     (mod 8); the chunk's value is ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7));
//     the result is the left fold of the chunk values from the first;
//   - reduce_sum along another axis: element j of the lane goes to
//     accumulator j mod 8, each a left fold from +0, combined as
//     ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)).
//
// A sequential fold, or per-thread partials merged in an order that
// depends on GOMAXPROCS, is within the bound and so passes refinement;
// CheckDeclaredOrder compares the provider bit for bit with an
// independent evaluation of the documented order (written here from the
// documentation, not calling fastcpu), on lengths that cross a chunk and
// the parallel threshold, so it catches both. Each float32 addition is
// one rounding: Go evaluates float32(a + b) in float32.

// DeclaredOrderOps lists the fast_cpu ops whose order is documented.
func DeclaredOrderOps() []string { return []string{"sum", "reduce_sum"} }

// chunked8 is the documented order of fastcpu.Sum.
func chunked8(x []float32) float32 {
	if len(x) == 0 {
		return 0
	}
	var total float32
	for lo := 0; lo < len(x); lo += fastcpu.ChunkLen {
		hi := min(lo+fastcpu.ChunkLen, len(x))
		var l [8]float32
		for i := lo; i < hi; i++ {
			r := (i - lo) % 8
			l[r] = l[r] + x[i]
		}
		c := ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]))
		if lo == 0 {
			total = c
		} else {
			total = total + c
		}
	}
	return total
}

// declaredReduceSum is the documented order of fast_cpu's reduce_sum.
func declaredReduceSum(x []float32, shape spec.Shape, axis int) []float32 {
	outer, n, inner := shape[:axis].Size(), shape[axis], shape[axis+1:].Size()
	out := make([]float32, outer*inner)
	for o := 0; o < outer; o++ {
		for c := 0; c < inner; c++ {
			if inner == 1 {
				out[o] = chunked8(x[o*n : (o+1)*n])
				continue
			}
			var a [8]float32
			for j := 0; j < n; j++ {
				a[j%8] = a[j%8] + x[(o*n+j)*inner+c]
			}
			out[o*inner+c] = ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
		}
	}
	return out
}

// orderCase is one input of the declared-order check.
type orderCase struct {
	shape spec.Shape
	axis  int
}

// orderCases are the shapes the check runs: short lanes, lanes that cross
// a chunk boundary, and one sum past the parallel threshold (1<<17), where
// the provider spreads chunks over goroutines.
func orderCases(op string) []orderCase {
	if op == "sum" {
		return []orderCase{{spec.Shape{7}, 0}, {spec.Shape{37}, 0}, {spec.Shape{fastcpu.ChunkLen + 101}, 0}, {spec.Shape{1<<17 + 3*fastcpu.ChunkLen + 5}, 0}}
	}
	return []orderCase{{spec.Shape{3, 37}, 1}, {spec.Shape{2, fastcpu.ChunkLen + 9}, 1}, {spec.Shape{29, 5}, 0}, {spec.Shape{2, 19, 3}, 1}}
}

// CheckDeclaredOrder runs the bound fast_cpu capsule of op (sum or
// reduce_sum) on inputs drawn from seed and requires its result to equal,
// bit for bit, the documented order — evaluated independently — first at
// the current GOMAXPROCS and then with GOMAXPROCS = 1 (restored after), so
// a result that depends on the number of threads is caught too. It returns
// a one-line error naming the op, the shape, the element and both values.
func CheckDeclaredOrder(b *backend.Binding, op string, seed uint64) error {
	cases := orderCases(op)
	if op != "sum" && op != "reduce_sum" {
		return fmt.Errorf("refine: %s has no documented order", op)
	}
	procs := runtime.GOMAXPROCS(0)
	for k, c := range cases {
		r := newRNG(seed, "order."+op, k)
		x := spec.Tensor[spec.F32]{Shape: c.shape, Data: make([]spec.F32, c.shape.Size())}
		xf := make([]float32, len(x.Data))
		for i := range xf {
			// Mixed magnitudes and signs, so that orders round differently.
			v := float32(int64(r.next()%2001)-1000) * float32(math.Ldexp(1, r.intn(40)-20))
			xf[i], x.Data[i] = v, spec.F32(v)
		}
		var want []float32
		a := &spec.Attrs{}
		if op == "sum" {
			want = []float32{chunked8(xf)}
		} else {
			a.Axis = c.axis
			want = declaredReduceSum(xf, c.shape, c.axis)
		}
		for _, p := range []int{procs, 1} {
			if p != procs {
				runtime.GOMAXPROCS(p)
			}
			y, err := b.Execute(a, []spec.Tensor[spec.F32]{x})
			if p != procs {
				runtime.GOMAXPROCS(procs)
			}
			if err != nil {
				return fmt.Errorf("declared order of %s on shape %v: %w", b.Capsule.Name, c.shape, err)
			}
			if len(y.Data) != len(want) {
				return fmt.Errorf("declared order of %s on shape %v: %d elements, want %d", b.Capsule.Name, c.shape, len(y.Data), len(want))
			}
			for i, w := range want {
				if math.Float32bits(float32(y.Data[i])) != math.Float32bits(w) {
					return fmt.Errorf("declared order of %s on shape %v (GOMAXPROCS %d): element %d is %v, the documented 8-lane chunked order gives %v",
						b.Capsule.Name, c.shape, p, i, float32(y.Data[i]), w)
				}
			}
		}
	}
	return nil
}
