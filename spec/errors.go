package spec

import (
	"errors"
	"strconv"

	"github.com/tlcheck/tlcheck/limits"
)

// NodeError is the one error type of a failure located at a node of a
// user's graph, in the manner of go/types.Error: every execution path
// (IR semantics, forward graph, typed graph, tape, the command line)
// reports a node-located failure with it, so the place reads the same
// whichever path found it. Its text is one line,
//
//	node 3 (safe_log): field "eps": element 2: what went wrong: cause
//
// where each part is present only when known: the node and its op, the
// field (a wire, payload or attribute field), the element index (row-major
// into the tensor concerned), the message, and the wrapped cause. Node is
// the id in the graph the user wrote: a path that lowers a graph to
// another one (a tape, a typed graph with extra nodes) maps its own ids
// back before it reports (Relocate).
//
// A NodeError with Node < 0 is a not-yet-located failure: a primitive's
// kernel reports "element 2: …" that way, and the caller that knows the
// node locates it with AtNode. Build values with NewNodeError or the
// helpers, or set Elem to −1 explicitly in a literal: the zero Elem is
// element 0.
//
// Three error types locate something else and stay their own, by
// decision: onnx.ImportError names an ONNX node by its name in the .onnx
// file (an IR node id does not exist before the import has built the
// graph); typedgraph's ShapeError and IDError report a Go caller's misuse
// of the typed-graph builder by the builder's entry ids (the caller's own
// program, not a user's graph file), with the expected and found shapes
// as typed fields. Every failure at a node of an IR graph — whichever
// path found it — is a NodeError.
type NodeError struct {
	// Node is the node id in the user's graph, or −1 when the error is not
	// (yet) located at a node.
	Node int
	// Op is the node's op or tag ("" when unknown).
	Op string
	// Field names the field concerned ("" when none).
	Field string
	// Elem is the element index concerned, or −1 when none.
	Elem int
	// Rule is the rule concerned where a path derives a node's value by
	// a named rule (the range rule of package ranges), "" otherwise; the
	// message names it too, so the text does not print it again.
	Rule string
	// Msg says what went wrong ("" when Err says it all).
	Msg string
	// Err is the wrapped cause, or nil.
	Err error
}

// NewNodeError returns the error "node id (op): msg: err" (Field "", Elem
// −1). A node < 0 leaves the place out.
func NewNodeError(node int, op, msg string, err error) *NodeError {
	return &NodeError{Node: node, Op: op, Elem: -1, Msg: msg, Err: err}
}

// ElemError returns the not-yet-located error "element i: err": a
// kernel's failure at element i of its result.
func ElemError(i int, err error) *NodeError {
	return &NodeError{Node: -1, Elem: i, Err: err}
}

// Error renders the one line "node N (op): field "f": element i: msg: err",
// leaving out the parts that are absent. An error not located at a node
// but naming an op prints "op: …" instead of the node part.
func (e *NodeError) Error() string {
	var b []byte
	sep := func() {
		if len(b) > 0 {
			b = append(b, ": "...)
		}
	}
	switch {
	case e.Node >= 0:
		b = append(b, "node "...)
		b = strconv.AppendInt(b, int64(e.Node), 10)
		if e.Op != "" {
			b = append(b, " ("...)
			b = append(b, limits.Short(e.Op)...)
			b = append(b, ')')
		}
	case e.Op != "":
		b = append(b, limits.Short(e.Op)...)
	}
	if e.Field != "" {
		sep()
		b = append(b, "field "...)
		b = append(b, limits.Quote(e.Field)...)
	}
	if e.Elem >= 0 {
		sep()
		b = append(b, "element "...)
		b = strconv.AppendInt(b, int64(e.Elem), 10)
	}
	if e.Msg != "" {
		sep()
		b = append(b, e.Msg...)
	}
	if e.Err != nil {
		sep()
		b = append(b, e.Err.Error()...)
	}
	return string(b)
}

// Unwrap returns the wrapped cause.
func (e *NodeError) Unwrap() error { return e.Err }

// AtNode locates err at node (with op): a NodeError not yet located
// (Node < 0) takes the node, keeping its field, element and message (an
// op it already names that differs from op — a primitive inside a
// composite tag — stays in the message); a NodeError already located at a
// node is returned unchanged, since it is more specific; any other error
// becomes the cause of "node N (op): err". nil stays nil. Values passed
// in are never modified.
func AtNode(node int, op string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*NodeError); ok {
		if e.Node >= 0 {
			if e.Node == node && e.Op == "" {
				c := *e
				c.Op = op
				return &c
			}
			return e
		}
		return locate(e, node, op)
	}
	return NewNodeError(node, op, "", err)
}

// Relocate reports err at node (with op) whatever node it names: where a
// path runs a lowered copy of the user's graph, the lowered graph's node
// ids are internal, and the caller that knows which user node an internal
// one belongs to moves the error there. The outermost NodeError in err's
// chain (errors.As) is the report: it loses its node and keeps its field,
// element, message and cause (and its op, in the message, when it differs
// from op: the primitive of a composite tag); words that wrap it are
// dropped, since they may name internal ids too. Any other error becomes the cause of
// "node N (op): err". nil stays nil. Values passed in are never modified.
func Relocate(node int, op string, err error) error {
	if err == nil {
		return nil
	}
	var e *NodeError
	if !errors.As(err, &e) {
		return NewNodeError(node, op, "", err)
	}
	c := *e
	c.Err = unlocate(c.Op, c.Msg, c.Err)
	return locate(&c, node, op)
}

// unlocate drops the place of NodeErrors nested directly in err's chain
// (below a NodeError of op and message msg that Relocate moves): they name
// internal ids too. A nested error that repeats the op and message and
// adds no field or element is folded away ("vjp: vjp: …" reads "vjp: …").
func unlocate(op, msg string, err error) error {
	e, ok := err.(*NodeError)
	if !ok || e.Node < 0 {
		return err
	}
	c := *e
	c.Node = -1
	if c.Op == op {
		c.Op = ""
	}
	c.Err = unlocate(op, c.Msg, c.Err)
	if c.Op == "" && c.Field == "" && c.Elem < 0 && (c.Msg == msg || c.Msg == "") {
		return c.Err
	}
	return &c
}

// locate returns a copy of the unlocated e placed at node.
func locate(e *NodeError, node int, op string) *NodeError {
	c := *e
	if c.Op != "" && c.Op != op {
		if c.Msg == "" {
			c.Msg = c.Op
		} else {
			c.Msg = c.Op + ": " + c.Msg
		}
	}
	c.Node, c.Op = node, op
	return &c
}

// NodeOf returns the node that err names (the outermost located NodeError
// in its chain), or −1.
func NodeOf(err error) int {
	var e *NodeError
	if errors.As(err, &e) {
		return e.Node
	}
	return -1
}
