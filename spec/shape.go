package spec

import (
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/limits"
)

// DefaultMaxElements bounds the element count of any shape that tlcheck
// accepts unless a caller passes its own limit: 2^26 elements, so that a
// hostile shape in an input file cannot make the engine allocate gigabytes.
// It is limits.DefaultElements; the limit in force is
// limits.Current().Elements (raised with --max-elements or
// TLCHECK_MAX_ELEMENTS, see package limits).
const DefaultMaxElements = limits.DefaultElements

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

// Check validates s against the element limit max (max <= 0 means the
// limit in force, limits.Current().Elements) and returns its element count.
// It rejects negative extents, ranks above MaxRank, an extent above the
// per-axis limit limits.Current().Axis, and shapes whose Span — the
// product of the non-zero extents — overflows or exceeds max. Bounding the
// span and not only the element count matters for shapes with a zero
// extent: [0, 2147483647] has no elements, but a lane of its second axis,
// or a layer norm's γ over it, would have 2^31 − 1; any array sized from
// a sub-product of the extents of a checked shape has at most max entries.
func (s Shape) Check(max int) (int, error) {
	lim := limits.Current()
	if max <= 0 {
		max = lim.Elements
	}
	if len(s) > MaxRank {
		return 0, fmt.Errorf("shape %v has rank %d, more than the maximum %d", s, len(s), MaxRank)
	}
	span := uint64(1)
	zero := false
	for i, d := range s {
		if d < 0 {
			return 0, fmt.Errorf("shape %v: axis %d has negative extent %d", s, i, d)
		}
		if d > lim.Axis {
			return 0, limits.Exceeded("axis", int64(lim.Axis), "shape %v: axis %d has extent %d", s, i, d)
		}
		if d == 0 {
			zero = true
			continue
		}
		hi, lo := bits.Mul64(span, uint64(d))
		if hi != 0 || lo > uint64(max) {
			if zero || slices.Contains(s[i:], 0) {
				return 0, limits.Exceeded("elements", int64(max), "shape %v has no elements, but its non-zero extents multiply to more than %d", s, max)
			}
			return 0, limits.Exceeded("elements", int64(max), "shape %v has more than %d elements", s, max)
		}
		span = lo
	}
	if zero {
		return 0, nil
	}
	return int(span), nil
}

// Span is the product of the non-zero extents of a shape already known to
// be valid: its element count if it has no zero extent, and otherwise the
// largest element count of a shape derived from it by dropping or
// shrinking its empty axes (see Check). It does not check limits.
func (s Shape) Span() int {
	n := 1
	for _, d := range s {
		if d != 0 {
			n *= d
		}
	}
	return n
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
