package irsem

import (
	"fmt"

	"github.com/tlcheck/tlcheck/spec"
)

// Error is the error every irsem function returns for a problem it can
// attribute to a place: a node (by id, with its tag when known), a field of
// a wire document, an element, or several of these. It is spec.NodeError,
// the one node-located error of every execution path, so that an error
// reads the same whichever path found it. Its text is one line, for
// example
//
//	node 3 (matmul): field "shape": declared [2,3], inferred [2,4]
//	node 4 (linear): payload entry missing "W"
//	node 3 (inv): element 0: div over rat: division by zero
//	field "output_id": 9 is not a node id (the graph has 5 nodes)
//
// Err is the underlying cause when there is one (a spec.DomainError from a
// scalar, say), reachable with errors.As through Unwrap.
type Error = spec.NodeError

// nodeErrf builds an error about node id (tag op, possibly "") and field.
func nodeErrf(id int, op Op, field, format string, args ...any) *Error {
	return &Error{Node: id, Op: string(op), Field: field, Elem: -1, Msg: fmt.Sprintf(format, args...)}
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
				c := *e
				c.Op = string(op)
				return &c
			}
			return e
		}
		if e.Node < 0 {
			c := *spec.AtNode(id, string(op), e).(*Error)
			if c.Field == "" {
				c.Field = field
			} else if field != "" {
				c.Field = field + "." + c.Field
			}
			return &c
		}
	}
	return &Error{Node: id, Op: string(op), Field: field, Elem: -1, Err: err}
}

// docErrf builds an error about the document as a whole.
func docErrf(field, format string, args ...any) *Error {
	return &Error{Node: -1, Field: field, Elem: -1, Msg: fmt.Sprintf(format, args...)}
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
		return &Error{Node: -1, Elem: -1, Err: err}
	}
	return &Error{Node: -1, Field: field, Elem: -1, Err: err}
}
