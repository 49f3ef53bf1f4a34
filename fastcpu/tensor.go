package fastcpu

import (
	"unsafe"

	"github.com/tlcheck/tlcheck/spec"
)

// f32s views a []spec.F32 as []float32 (same element type underneath);
// no copy.
func f32s(d []spec.F32) []float32 {
	return unsafe.Slice((*float32)(unsafe.SliceData(d)), len(d))
}

// checkTensor rejects a tensor whose data length disagrees with its shape
// (a hand-built tensor can break the spec.Tensor invariant).
func checkTensor(name string, t spec.Tensor[spec.F32], rank int) error {
	if t.Shape.Rank() != rank {
		return invalid("%s: want rank %d, got shape %v", name, rank, t.Shape)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return invalid("%s: negative extent in shape %v", name, t.Shape)
		}
	}
	if len(t.Data) != t.Shape.Size() {
		return invalid("%s: shape %v needs %d values, has %d", name, t.Shape, t.Shape.Size(), len(t.Data))
	}
	return nil
}

// MatMulTensor returns a·b for a of shape [m, k] and b of shape [k, n], as
// a new [m, n] tensor computed by Sgemm (same summation order: a left fold
// over k per element, at most k terms).
func MatMulTensor(a, b spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	if err := checkTensor("a", a, 2); err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	if err := checkTensor("b", b, 2); err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	m, k, n := a.Shape[0], a.Shape[1], b.Shape[1]
	if b.Shape[0] != k {
		return spec.Tensor[spec.F32]{}, invalid("matmul of %v and %v: inner extents differ", a.Shape, b.Shape)
	}
	c, err := spec.Zeros[spec.F32](spec.Shape{m, n})
	if err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	gemm(false, m, n, k, f32s(a.Data), max(k, 1), f32s(b.Data), max(n, 1), f32s(c.Data), max(n, 1))
	return c, nil
}

// LinearTensor returns x·Wᵀ + b for x of shape [rows, in], w of shape
// [out, in] and b of shape [out] (nil for no bias), as a new [rows, out]
// tensor computed by Linear (same summation order: a left fold over in,
// then the bias; at most in+1 terms).
func LinearTensor(x, w spec.Tensor[spec.F32], b *spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	if err := checkTensor("x", x, 2); err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	if err := checkTensor("w", w, 2); err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	rows, in, out := x.Shape[0], x.Shape[1], w.Shape[0]
	if w.Shape[1] != in {
		return spec.Tensor[spec.F32]{}, invalid("linear: x %v and w %v disagree on in", x.Shape, w.Shape)
	}
	var bias []float32
	if b != nil {
		if err := checkTensor("b", *b, 1); err != nil {
			return spec.Tensor[spec.F32]{}, err
		}
		if b.Shape[0] != out {
			return spec.Tensor[spec.F32]{}, invalid("linear: bias %v, want [%d]", b.Shape, out)
		}
		bias = f32s(b.Data)
	}
	y, err := spec.Zeros[spec.F32](spec.Shape{rows, out})
	if err != nil {
		return spec.Tensor[spec.F32]{}, err
	}
	linear(f32s(x.Data), rows, in, f32s(w.Data), out, bias, f32s(y.Data))
	return y, nil
}

// SumTensor returns the sum of all elements of t in Sum's order (t.Data
// in row-major order; at most t.Len() terms).
func SumTensor(t spec.Tensor[spec.F32]) spec.F32 {
	return spec.F32(Sum(f32s(t.Data)))
}

// DotTensor returns Σ x_i·y_i over two tensors of the same shape, in
// Dot's order (at most x.Len() terms).
func DotTensor(x, y spec.Tensor[spec.F32]) (spec.F32, error) {
	if !x.Shape.Equal(y.Shape) || len(x.Data) != len(y.Data) {
		return 0, invalid("dot of shapes %v and %v", x.Shape, y.Shape)
	}
	return spec.F32(reduce(f32s(x.Data), f32s(y.Data))), nil
}
