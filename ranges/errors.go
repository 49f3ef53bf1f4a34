package ranges

import (
	"errors"
	"fmt"
)

// A problem this package can place at a node is a *spec.NodeError (the
// tree's one node-located error) naming the node, its tag as Op, the
// element of the node's value where there is one, and the range rule
// concerned (Rule, named in the message too); its text is one line, for
// example
//
//	node 4 (sum): range rule sumLeft requires a fixed-left capsule; selected fast_cpu.sum is implementation-defined
//	node 2 (inv): element 1: range rule inv: operand [-1, 2] of 1/x contains 0
//	node 3 (linear): element 0: hi claimed 0x3f800001, rebuilt 0x3f800000
//
// A problem no node is concerned with reads "ranges: what went wrong".

// unplaced returns the error "ranges: msg" (": err" appended, and
// wrapped, when err is not nil) of a problem no single node is concerned
// with.
func unplaced(msg string, err error) error {
	if err != nil {
		return fmt.Errorf("ranges: %s: %w", msg, err)
	}
	return errors.New("ranges: " + msg)
}

// elemError carries the element index of a failure inside a rule up to the
// trace loop, which adds the node. It is not spec.ElemError: that one
// also comes out of the registry's kernels that a composite rule runs
// step by step, where the element is one of an intermediate step's
// result, not of the node's value; only this package's own rules say
// which element of the node's value failed.
type elemError struct {
	elem int
	err  error
}

func (e *elemError) Error() string { return fmt.Sprintf("element %d: %v", e.elem, e.err) }

func (e *elemError) Unwrap() error { return e.err }

func atElem(i int, err error) error {
	if err == nil {
		return nil
	}
	return &elemError{elem: i, err: err}
}
