package onnx

import (
	"fmt"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The emitters below write one mathematical operation as IR nodes of the
// ONNX node being imported. Each takes parent ids and shapes, and returns
// the new node's id; the shapes are the importer's own inference, which
// Graph.Check re-derives from the tags (a mismatch is a mapping bug, and
// is reported naming the ONNX node).

func (b *imp) unary(op irsem.Op, x int, s spec.Shape) int {
	return b.emit(irsem.Kind{Op: op}, s, x)
}

func (b *imp) binary(op irsem.Op, x, y int, s spec.Shape) int {
	return b.emit(irsem.Kind{Op: op}, s, x, y)
}

// neg is −x.
func (b *imp) neg(x int, s spec.Shape) int { return b.unary(irsem.OpNeg, x, s) }

// scale is c·x (x itself when c = 1).
func (b *imp) scale(x int, s spec.Shape, c spec.Rat) int {
	if c.Same(spec.NewRat(1, 1)) {
		return x
	}
	return b.emit(irsem.Kind{Op: irsem.OpScale, C: c}, s, x)
}

// addConst is x + c (x itself when c = 0).
func (b *imp) addConst(x int, s spec.Shape, c spec.Rat) int {
	if c.IsZero() {
		return x
	}
	return b.binary(irsem.OpAdd, x, b.constScalar(c, s), s)
}

// div is x / y elementwise.
func (b *imp) div(x, y int, s spec.Shape) int { return b.binary(irsem.OpDiv, x, y, s) }

// clamp is min(max(x, lo), hi), a nil bound absent: the registry's clamp
// when both are given (derivative 1 strictly inside), max_elem / min_elem
// with a constant otherwise.
func (b *imp) clamp(x int, s spec.Shape, lo, hi *spec.Rat) int {
	if lo != nil && hi != nil && cmpRat(*lo, *hi) <= 0 {
		return b.emit(irsem.Kind{Op: irsem.OpClamp, Lo: *lo, Hi: *hi}, s, x)
	}
	if lo != nil {
		x = b.binary(irsem.OpMaxElem, x, b.constScalar(*lo, s), s)
	}
	if hi != nil {
		x = b.binary(irsem.OpMinElem, x, b.constScalar(*hi, s), s)
	}
	return x
}

func cmpRat(a, b spec.Rat) int { c, _ := a.Compare(b); return c }

// minZero is min(x, 0).
func (b *imp) minZero(x int, s spec.Shape) int {
	return b.binary(irsem.OpMinElem, x, b.constScalar(spec.Rat{}, s), s)
}

// logSoftmax is log softmax along axis.
func (b *imp) logSoftmax(x int, s spec.Shape, axis int) int {
	return b.emit(irsem.Kind{Op: irsem.OpLogSoftmax, Axis: axis}, s, x)
}

// permute emits a permutation unless it is the identity.
func (b *imp) permute(x int, s spec.Shape, perm []int) (int, spec.Shape) {
	out := make(spec.Shape, len(perm))
	id := true
	for i, p := range perm {
		out[i] = s[p]
		id = id && p == i
	}
	if id {
		return x, s
	}
	return b.emit(irsem.Kind{Op: irsem.OpPermute, Perm: append([]int(nil), perm...)}, out, x), out
}

// concat joins parts along axis (the one part itself when there is one).
func (b *imp) concat(ids []int, shapes []spec.Shape, axis int) (int, spec.Shape) {
	out := shapes[0].Clone()
	out[axis] = 0
	for _, s := range shapes {
		out[axis] += s[axis]
	}
	if len(ids) == 1 {
		return ids[0], out
	}
	return b.emit(irsem.Kind{Op: irsem.OpConcat, Axis: axis}, out, ids...), out
}

// slice keeps [start, end) of axis (x itself when that is all of it).
func (b *imp) slice(x int, s spec.Shape, axis, start, end int) (int, error) {
	if start == 0 && end == s[axis] {
		return x, nil
	}
	out := s.Clone()
	out[axis] = end - start
	return b.emit(irsem.Kind{Op: irsem.OpSlice, Axis: axis, Start: start, End: end}, out, x), nil
}

// gather picks indices (naturals < s[axis], shaped ishape) along axis.
func (b *imp) gather(x int, s spec.Shape, axis int, indices []int, ishape spec.Shape) (int, spec.Shape, error) {
	out := append(append(s[:axis:axis].Clone(), ishape...), s[axis+1:]...)
	if err := available(irsem.OpGather, "regops"); err != nil {
		return 0, nil, err
	}
	k := irsem.Kind{Op: irsem.OpGather, Axis: axis, IndicesShape: ishape.Clone(), Indices: append([]int(nil), indices...)}
	return b.emit(k, out, x), out, nil
}

// pad pads with widths (2·rank: begins then ends) in mode ("constant",
// "reflect", "edge"), value for constant mode.
func (b *imp) pad(x int, s spec.Shape, widths []int, mode string, value spec.Rat) (int, spec.Shape, error) {
	out := s.Clone()
	zero := true
	for i := range s {
		out[i] += widths[i] + widths[len(s)+i]
		zero = zero && widths[i] == 0 && widths[len(s)+i] == 0
	}
	if zero {
		return x, out, nil
	}
	if err := available(irsem.OpPad, "regops"); err != nil {
		return 0, nil, err
	}
	if mode != "constant" {
		value = spec.Rat{}
	}
	k := irsem.Kind{Op: irsem.OpPad, Widths: append([]int(nil), widths...), Mode: mode, Value: value}
	return b.emit(k, out, x), out, nil
}

// available reports a tag the registry does not (yet) have.
func available(op irsem.Op, branch string) error {
	if _, ok := irsem.LookupTag(op); !ok {
		return &TagUnavailableError{Tag: op, Branch: branch}
	}
	return nil
}

// TagUnavailableError is an import that needs an IR tag the registry of
// this build lacks (a superset tag added by another part of the code
// base): the mapping exists, the tag's semantics do not.
type TagUnavailableError struct {
	Tag    irsem.Op
	Branch string // where the tag is defined
}

func (e *TagUnavailableError) Error() string {
	return fmt.Sprintf("IR tag %q is not in the registry of this build (it comes with branch %s)", e.Tag, e.Branch)
}
