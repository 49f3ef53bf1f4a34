package typedgraph

import (
	"errors"
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// ShapeError reports that an entry does not have the shape the graph
// declares for it. Its message is "shape mismatch at id=N: expected S, got
// T", followed by the operation or role that noticed it.
type ShapeError struct {
	ID       int        // the entry (context input or node) whose shape is wrong
	Op       string     // the operation or role that checked it ("input", "seed", "tangent", a primitive name)
	Expected spec.Shape // the declared shape
	Got      spec.Shape // the shape found
}

// Error prints "shape mismatch at id=N: expected S, got T (role)".
func (e *ShapeError) Error() string {
	s := fmt.Sprintf("shape mismatch at id=%d: expected %v, got %v", e.ID, e.Expected, e.Got)
	if e.Op != "" {
		s += " (" + e.Op + ")"
	}
	return s
}

// IDError reports a read of an entry that does not exist before the
// reading node. Its message is "invalid id=N for ctxLen=L": L is the
// number of entries the node may read (the context and every earlier node).
type IDError struct {
	ID     int    // the entry id that was requested
	CtxLen int    // the number of entries available
	Node   int    // the id the new node would have had; −1 for a lookup that is not a read
	Op     string // the node's primitive, or the lookup's role ("result", "shape", …)
	Arg    int    // the argument position of the bad read
}

// Error prints "invalid id=N for ctxLen=L" and the node, op and argument
// (or only the role, for a lookup that is not a node's read).
func (e *IDError) Error() string {
	s := fmt.Sprintf("invalid id=%d for ctxLen=%d", e.ID, e.CtxLen)
	switch {
	case e.Node >= 0:
		s += fmt.Sprintf(" (node %d (%s), argument %d)", e.Node, e.Op, e.Arg)
	case e.Op != "":
		s += " (" + e.Op + ")"
	}
	return s
}

// ErrInputIndex is the sentinel of IndexError: errors.Is(err,
// ErrInputIndex) reports an out-of-bounds context index.
var ErrInputIndex = errors.New("input index out of bounds")

// IndexError reports an index into a context (a list of entry values or
// of context inputs) that is out of range. Its message starts with "input
// index out of bounds".
type IndexError struct {
	Index int    // the index that was requested
	Len   int    // the length of the list it indexes
	Where string // what was being indexed
}

// Error prints "input index out of bounds: …" with the index and length.
func (e *IndexError) Error() string {
	return fmt.Sprintf("input index out of bounds: %s: index %d, length %d", e.Where, e.Index, e.Len)
}

// Is makes errors.Is(err, ErrInputIndex) hold.
func (e *IndexError) Is(target error) bool { return target == ErrInputIndex }

// checkTensor verifies that v is a well-formed tensor of shape want; id
// and role name the entry in the error.
func checkTensor[T any](v spec.Tensor[T], want spec.Shape, id int, role string) error {
	if !v.Shape.Equal(want) {
		return &ShapeError{ID: id, Op: role, Expected: want.Clone(), Got: v.Shape.Clone()}
	}
	if len(v.Data) != want.Size() {
		return fmt.Errorf("%s at id=%d: tensor of shape %v holds %d elements, expected %d", role, id, v.Shape, len(v.Data), want.Size())
	}
	return nil
}
