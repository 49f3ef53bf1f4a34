package fastcpu

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// ChunkLen is the fixed chunk length of Sum and Dot: the input is cut
// into chunks of ChunkLen elements (the last one shorter), whatever
// GOMAXPROCS is, and the summation order is defined chunk by chunk.
const ChunkLen = 1 << 14

// parallelLen is the length from which Sum and Dot spread their chunks
// over goroutines. It changes only the speed, never the result.
const parallelLen = 1 << 17

// Sum returns the float32 sum of x (+0 for an empty x).
//
// Summation order: x is cut into chunks of ChunkLen elements. Within a
// chunk, lane r (r = 0…7) is the left fold from +0 of the chunk's elements
// whose index within the chunk is ≡ r (mod 8), in increasing index; the
// chunk's value is ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)). The result is the
// left fold of the chunk values, starting from the first chunk's value.
// Every addition is one float32 rounding. The order depends only on
// len(x), never on GOMAXPROCS or scheduling, so results are bit-for-bit
// reproducible. At most len(x) terms contribute to the result, so
// |Sum(x) − Σx| ≤ γ_{n−1}·Σ|x_i| (n = len(x)) in the absence of underflow
// (the sum of float32 values has no underflow error: float32 addition is
// exact whenever its result is subnormal).
func Sum(x []float32) float32 {
	return reduce(x, nil)
}

// Dot returns the float32 dot product Σ x_i·y_i. It panics if
// len(x) ≠ len(y); DotChecked returns an error instead.
//
// Summation order: each term is x_i·y_i rounded to float32 (never fused
// with the addition); the terms are then summed in exactly the order of
// Sum. At most n = len(x) terms contribute, so for n·u < 1
// |Dot(x, y) − Σx_i·y_i| ≤ γ_n·Σ|x_i·y_i| + n·2⁻¹⁴⁹ (the last term covers
// products that underflow), with γ_n = n·u/(1−n·u), u = 2⁻²⁴.
func Dot(x, y []float32) float32 {
	if len(x) != len(y) {
		panic(invalid("Dot of lengths %d and %d", len(x), len(y)))
	}
	return reduce(x, y)
}

// DotChecked is Dot returning an error wrapping ErrInvalidArgument when
// the lengths differ.
func DotChecked(x, y []float32) (float32, error) {
	if len(x) != len(y) {
		return 0, invalid("Dot of lengths %d and %d", len(x), len(y))
	}
	return reduce(x, y), nil
}

// reduce computes Sum(x) (y == nil) or Dot(x, y) in the documented order.
func reduce(x, y []float32) float32 {
	n := len(x)
	if n <= ChunkLen {
		return chunkValue(x, y)
	}
	chunks := (n + ChunkLen - 1) / ChunkLen
	workers := 1
	if n >= parallelLen {
		workers = min(runtime.GOMAXPROCS(0), chunks)
	}
	if workers == 1 {
		total := chunkValue(x[:ChunkLen], sub(y, 0, ChunkLen))
		for lo := ChunkLen; lo < n; lo += ChunkLen {
			hi := min(lo+ChunkLen, n)
			total += chunkValue(x[lo:hi], sub(y, lo, hi))
		}
		return total
	}
	r := reducePool.Get().(*reduceJob)
	r.x, r.y, r.chunks = x, y, chunks
	r.next.Store(0)
	if cap(r.partial) < chunks {
		r.partial = make([]float32, chunks)
	}
	r.partial = r.partial[:chunks]
	dispatch(&r.offer, workers-1)
	r.work()
	finish(&r.offer)
	total := r.partial[0]
	for _, v := range r.partial[1:] {
		total += v
	}
	r.x, r.y = nil, nil
	reducePool.Put(r)
	return total
}

// sub returns y[lo:hi], or nil for a nil y.
func sub(y []float32, lo, hi int) []float32 {
	if y == nil {
		return nil
	}
	return y[lo:hi]
}

// reduceJob computes the chunk values of one call in parallel; chunks are
// claimed through an atomic counter and each value lands in its own slot.
type reduceJob struct {
	x, y    []float32
	chunks  int
	partial []float32
	next    atomic.Int64
	offer   offer
}

var reducePool = sync.Pool{New: func() any {
	r := new(reduceJob)
	r.offer.task = r
	return r
}}

func (r *reduceJob) work() {
	for {
		c := int(r.next.Add(1) - 1)
		if c >= r.chunks {
			return
		}
		lo := c * ChunkLen
		hi := min(lo+ChunkLen, len(r.x))
		r.partial[c] = chunkValue(r.x[lo:hi], sub(r.y, lo, hi))
	}
}

func (r *reduceJob) runHelper() {
	r.work()
	r.offer.done()
}

// chunkValue is one chunk's value: eight interleaved lanes, combined
// pairwise. y == nil sums x; otherwise it sums the rounded products
// x_i·y_i (len(y) ≥ len(x)).
func chunkValue(x, y []float32) float32 {
	if y == nil {
		return chunkSum(x)
	}
	return chunkDot(x, y[:len(x)])
}

func chunkSum(x []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 {
		v := x[:8:8]
		s0 += v[0]
		s1 += v[1]
		s2 += v[2]
		s3 += v[3]
		s4 += v[4]
		s5 += v[5]
		s6 += v[6]
		s7 += v[7]
		x = x[8:]
	}
	// The tail gives each of the first len(x) lanes one more term.
	switch len(x) {
	case 7:
		s6 += x[6]
		fallthrough
	case 6:
		s5 += x[5]
		fallthrough
	case 5:
		s4 += x[4]
		fallthrough
	case 4:
		s3 += x[3]
		fallthrough
	case 3:
		s2 += x[2]
		fallthrough
	case 2:
		s1 += x[1]
		fallthrough
	case 1:
		s0 += x[0]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// chunkDot is chunkSum over the terms float32(x_i·y_i); len(y) = len(x).
func chunkDot(x, y []float32) float32 {
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	for len(x) >= 8 && len(y) >= 8 {
		v, w := x[:8:8], y[:8:8]
		s0 += float32(v[0] * w[0])
		s1 += float32(v[1] * w[1])
		s2 += float32(v[2] * w[2])
		s3 += float32(v[3] * w[3])
		s4 += float32(v[4] * w[4])
		s5 += float32(v[5] * w[5])
		s6 += float32(v[6] * w[6])
		s7 += float32(v[7] * w[7])
		x, y = x[8:], y[8:]
	}
	y = y[:len(x)]
	switch len(x) {
	case 7:
		s6 += float32(x[6] * y[6])
		fallthrough
	case 6:
		s5 += float32(x[5] * y[5])
		fallthrough
	case 5:
		s4 += float32(x[4] * y[4])
		fallthrough
	case 4:
		s3 += float32(x[3] * y[3])
		fallthrough
	case 3:
		s2 += float32(x[2] * y[2])
		fallthrough
	case 2:
		s1 += float32(x[1] * y[1])
		fallthrough
	case 1:
		s0 += float32(x[0] * y[0])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}
