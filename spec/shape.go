package spec

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// DefaultMaxElements bounds the element count of any shape that tlcheck
// accepts unless a caller passes its own limit: 2^26 elements, so that a
// hostile shape in an input file cannot make the engine allocate gigabytes.
const DefaultMaxElements = 1 << 26

// MaxRank bounds the number of axes a shape may have.
const MaxRank = 16

// Shape is a tensor shape: one non-negative extent per axis, row-major.
// The empty shape is a scalar with one element.
type Shape []int

// Clone returns a copy of s that shares no memory with it.
func (s Shape) Clone() Shape {
	if s == nil {
		return Shape{}
	}
	return append(Shape{}, s...)
}

// Rank is the number of axes.
func (s Shape) Rank() int { return len(s) }

// Equal reports whether two shapes have the same extents.
func (s Shape) Equal(t Shape) bool {
	if len(s) != len(t) {
		return false
	}
	for i := range s {
		if s[i] != t[i] {
			return false
		}
	}
	return true
}

// String prints a shape as [d0,d1,...].
func (s Shape) String() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(d))
	}
	b.WriteByte(']')
	return b.String()
}

// Check validates s against the element limit max (max <= 0 means
// DefaultMaxElements) and returns its element count. It rejects negative
// extents, ranks above MaxRank, and counts that overflow or exceed max.
func (s Shape) Check(max int) (int, error) {
	if max <= 0 {
		max = DefaultMaxElements
	}
	if len(s) > MaxRank {
		return 0, fmt.Errorf("shape %v has rank %d, more than the maximum %d", s, len(s), MaxRank)
	}
	n := uint64(1)
	for i, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("shape %v: axis %d has negative extent %d", s, i, d)
		}
		hi, lo := bits.Mul64(n, uint64(d))
		if hi != 0 || lo > uint64(max) {
			return 0, fmt.Errorf("shape %v has more than %d elements", s, max)
		}
		n = lo
	}
	return int(n), nil
}

// Size returns the element count of a shape already known to be valid
// (for example, the shape of an existing tensor). It does not check limits.
func (s Shape) Size() int {
	n := 1
	for _, d := range s {
		n *= d
	}
	return n
}

// Strides returns the row-major strides of s.
func (s Shape) Strides() []int {
	st := make([]int, len(s))
	acc := 1
	for i := len(s) - 1; i >= 0; i-- {
		st[i] = acc
		acc *= s[i]
	}
	return st
}

// NormAxis resolves a possibly negative axis against rank r, or explains
// why it is out of range.
func NormAxis(axis, r int) (int, error) { return normAxis(axis, r) }

// normAxis resolves a possibly negative axis against rank r.
func normAxis(axis, r int) (int, error) {
	if axis < 0 {
		axis += r
	}
	if axis < 0 || axis >= r {
		return 0, fmt.Errorf("axis %d out of range for rank %d", axis, r)
	}
	return axis, nil
}
