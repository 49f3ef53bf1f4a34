package fastcpu

import (
	"errors"
	"fmt"
	"math"
	"unsafe"
)

// ErrInvalidArgument is wrapped by every error the checked entry points
// return: a negative size, a too-small stride, a too-short slice, an
// extent that overflows int, or an output that overlaps an input.
var ErrInvalidArgument = errors.New("fastcpu: invalid argument")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidArgument}, args...)...)
}

// extent is the number of elements a rows×cols row-major matrix with row
// stride ld spans: (rows−1)·ld + cols, or 0 when the matrix is empty. ok is
// false when that number overflows int.
func extent(rows, ld, cols int) (n int, ok bool) {
	if rows == 0 || cols == 0 {
		return 0, true
	}
	if ld > 0 && rows-1 > (math.MaxInt-cols)/ld {
		return 0, false
	}
	return (rows-1)*ld + cols, true
}

// checkMatrix checks one operand: stride at least max(1, cols) and a
// slice long enough. It returns the extent.
func checkMatrix(name string, s []float32, rows, cols, ld int) (int, error) {
	if ld < max(1, cols) {
		return 0, invalid("%s: stride %d is less than max(1, %d)", name, ld, cols)
	}
	need, ok := extent(rows, ld, cols)
	if !ok {
		return 0, invalid("%s: %d×%d with stride %d overflows int", name, rows, cols, ld)
	}
	if len(s) < need {
		return 0, invalid("%s: %d×%d with stride %d needs %d elements, slice has %d", name, rows, cols, ld, need, len(s))
	}
	return need, nil
}

// overlaps reports whether the first nx elements of x and the first ny
// elements of y share memory.
func overlaps(x []float32, nx int, y []float32, ny int) bool {
	if nx == 0 || ny == 0 {
		return false
	}
	x0 := uintptr(unsafe.Pointer(unsafe.SliceData(x)))
	y0 := uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	x1 := x0 + uintptr(nx)*4
	y1 := y0 + uintptr(ny)*4
	return x0 < y1 && y0 < x1
}

// checkGemm validates the arguments of Sgemm (transB false) or SgemmNT
// (transB true). The overlap test runs only when overlap is set, because
// the raw kernels document it as a precondition rather than check it.
func checkGemm(transB bool, m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, overlap bool) error {
	if m < 0 || n < 0 || k < 0 {
		return invalid("negative size m=%d n=%d k=%d", m, n, k)
	}
	na, err := checkMatrix("A", a, m, k, lda)
	if err != nil {
		return err
	}
	var nb int
	if transB {
		nb, err = checkMatrix("B", b, n, k, ldb)
	} else {
		nb, err = checkMatrix("B", b, k, n, ldb)
	}
	if err != nil {
		return err
	}
	nc, err := checkMatrix("C", c, m, n, ldc)
	if err != nil {
		return err
	}
	if overlap {
		if overlaps(c, nc, a, na) {
			return invalid("C overlaps A")
		}
		if overlaps(c, nc, b, nb) {
			return invalid("C overlaps B")
		}
	}
	return nil
}
