package irsem

import (
	"fmt"
	"strconv"
)

// Error is the error every irsem function returns for a problem it can
// attribute to a place: a node (by id, with its tag when known), a field of
// a wire document, or both. Its text is one line, for example
//
//	node 3 (matmul): field "shape": declared [2,3], inferred [2,4]
//	node 4 (linear): payload entry missing "W"
//	field "output_id": 9 is not a node id (the graph has 5 nodes)
//
// Err is the underlying cause when there is one (a spec.DomainError from a
// scalar, say), reachable with errors.As through Unwrap.
type Error struct {
	// Node is the node id, or -1 when the error concerns the whole
	// document.
	Node int
	// Op is the node's tag when it is known ("" otherwise).
	Op Op
	// Field names the wire field concerned ("" when none).
	Field string
	// Msg says what went wrong.
	Msg string
	// Err is the wrapped cause, or nil.
	Err error
}

// Error renders the one-line message.
func (e *Error) Error() string {
	var b []byte
	if e.Node >= 0 {
		b = append(b, "node "...)
		b = strconv.AppendInt(b, int64(e.Node), 10)
		if e.Op != "" {
			b = append(b, " ("...)
			b = append(b, e.Op...)
			b = append(b, ')')
		}
		b = append(b, ": "...)
	}
	if e.Field != "" {
		b = append(b, "field "...)
		b = strconv.AppendQuote(b, e.Field)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	if e.Err != nil {
		if e.Msg != "" {
			b = append(b, ": "...)
		}
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the wrapped cause.
func (e *Error) Unwrap() error { return e.Err }

// nodeErrf builds an error about node id (tag op, possibly "") and field.
func nodeErrf(id int, op Op, field, format string, args ...any) *Error {
	return &Error{Node: id, Op: op, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// wrapNode attributes err to node id: an *Error that already names the
// node is returned unchanged; otherwise err becomes the cause.
func wrapNode(id int, op Op, field string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		if e.Node == id {
			if e.Op == "" {
				e.Op = op
			}
			return e
		}
		if e.Node < 0 {
			c := *e
			c.Node, c.Op = id, op
			if c.Field == "" {
				c.Field = field
			} else if field != "" {
				c.Field = field + "." + c.Field
			}
			return &c
		}
	}
	return &Error{Node: id, Op: op, Field: field, Err: err}
}

// docErrf builds an error about the document as a whole.
func docErrf(field, format string, args ...any) *Error {
	return &Error{Node: -1, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// inField prefixes the field path of an *Error (or wraps another error)
// so that nested decoders can report "values[3]" inside "W".
func inField(field string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok && e.Node < 0 {
		c := *e
		if field == "" {
			return &c
		}
		if c.Field == "" {
			c.Field = field
		} else {
			c.Field = field + "." + c.Field
		}
		return &c
	}
	if field == "" {
		return &Error{Node: -1, Err: err}
	}
	return &Error{Node: -1, Field: field, Err: err}
}
