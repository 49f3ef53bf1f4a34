package ranges

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
)

// Error is the error every function of this package returns for a problem
// it can place: a node (with its tag), an element of the node's value, or
// neither. Its text is one line, for example
//
//	node 4 (sum): range rule sumLeft requires a fixed-left capsule; selected fast_cpu.sum is implementation-defined
//	node 2 (inv) element 1: range rule inv: operand [-1, 2] of 1/x contains 0
//	node 3 (linear) element 0: hi claimed 0x3f800001, rebuilt 0x3f800000
type Error struct {
	// Node is the node id, or -1 when the error concerns no single node.
	Node int
	// Tag is the node's tag ("" when unknown).
	Tag irsem.Op
	// Elem is the flat element index within the node's value, or -1.
	Elem int
	// Rule is the range rule concerned ("" when none).
	Rule string
	// Msg says what went wrong.
	Msg string
	// Err is the underlying cause, or nil.
	Err error
}

// Error renders the one-line message.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Node >= 0 {
		fmt.Fprintf(&b, "node %d", e.Node)
		if e.Tag != "" {
			fmt.Fprintf(&b, " (%s)", e.Tag)
		}
		if e.Elem >= 0 {
			fmt.Fprintf(&b, " element %d", e.Elem)
		}
		b.WriteString(": ")
	} else {
		b.WriteString("ranges: ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// elemError carries the element index of a failure inside a rule up to the
// trace loop, which adds the node.
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
