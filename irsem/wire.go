package irsem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// FormatIR is the value of the root "format" field of a graph document
// that uses TorchLean's tags only.
const FormatIR = "torchlean.ir.v1"

// FormatIRSuperset is the value of the root "format" field of a graph
// document that may use every tag, including tlcheck's own superset tags
// (TagInfo.Superset: pad, gather, conv_transpose, …). Its grammar is
// torchlean.ir.v1's; only the tag set is larger.
const FormatIRSuperset = "tlcheck.ir.v1"

// FirstSuperset returns the first node of g (in id order) whose tag is a
// tlcheck.ir.v1 superset tag, or -1 when g uses TorchLean's tags only.
func (g *Graph) FirstSuperset() int {
	for i := range g.Nodes {
		if o, ok := lookup(g.Nodes[i].Kind.Op); ok && o.Superset {
			return i
		}
	}
	return -1
}

// Format returns the document format g is written in: FormatIR when
// every tag is TorchLean's, FormatIRSuperset otherwise.
func (g *Graph) Format() string {
	if g.FirstSuperset() >= 0 {
		return FormatIRSuperset
	}
	return FormatIR
}

// supersetErr is the refusal of superset node i in a torchlean.ir.v1
// document.
func supersetErr(i int, op Op) *Error {
	return nodeErrf(i, op, "kind", "%s is a tlcheck.ir.v1 tag that torchlean.ir.v1 does not have (write the document as %q)", op, FormatIRSuperset)
}

// The torchlean.ir.v1 graph document (FORMAT.md has the full schema):
//
//	{"format":"torchlean.ir.v1","input_id":0,"output_id":1,"nodes":[
//	  {"id":0,"kind":"input","parents":[],"shape":[1,4]},
//	  {"id":1,"kind":"relu","parents":[0],"shape":[1,4]}
//	]}
//
// Every node has exactly the members id, kind, parents, shape and the
// attributes its tag lists in TagInfo.Attrs (all of them required, none
// other allowed), each declared in spec.AttrSpecs and spelled as its
// declared type says (attrs.go): integers are plain JSON naturals (no
// sign, fraction or exponent) within the declared limit; a uint64 (seed)
// is a natural below 2^64; a rational attribute is a JSON string in the
// payload's rational grammar; a mask is {"shape":[…],"allowed":[bools]}.

// ReadGraph reads a torchlean.ir.v1 or tlcheck.ir.v1 document from r (at most
// MaxDocumentBytes) and decodes it with DecodeGraph.
func ReadGraph(r io.Reader) (*Graph, error) {
	data, err := readGraphBytes(r)
	if err != nil {
		return nil, err
	}
	return DecodeGraph(data)
}

// DecodeGraph decodes a torchlean.ir.v1 or tlcheck.ir.v1 document
// strictly (unknown, duplicate and missing fields, trailing data,
// malformed numbers, unknown tags and oversized shapes are errors; a
// superset tag in a torchlean.ir.v1 document is an error naming the node
// and tag) and then checks the graph with Graph.Check. Every error is an
// *Error naming the node and field.
func DecodeGraph(data []byte) (*Graph, error) {
	if len(data) > MaxDocumentBytes {
		return nil, docErrf("", "document is larger than %d bytes", MaxDocumentBytes)
	}
	if err := prescanNodes(bytes.NewReader(data), nodeLimit()); err != nil {
		return nil, err
	}
	fs, err := decodeObject(data)
	if err != nil {
		return nil, inField("", err)
	}
	g := &Graph{}
	got := map[string]bool{}
	var nodes []json.RawMessage
	torchlean := false
	for _, f := range fs {
		got[f.key] = true
		switch f.key {
		case "format":
			s, err := decodeString(f.raw)
			if err != nil {
				return nil, inField(f.key, err)
			}
			if s != FormatIR && s != FormatIRSuperset {
				return nil, docErrf(f.key, "expected %q or %q, got %s", FormatIR, FormatIRSuperset, limits.Quote(s))
			}
			torchlean = s == FormatIR
		case "input_id":
			if g.InputID, err = decodeInt(f.raw, MaxNodes); err != nil {
				return nil, inField(f.key, err)
			}
		case "output_id":
			if g.OutputID, err = decodeInt(f.raw, MaxNodes); err != nil {
				return nil, inField(f.key, err)
			}
		case "nodes":
			nodes = nodes[:0]
			max := nodeLimit()
			_, err := streamArray(f.raw, max, func(_ int, dec *json.Decoder) error {
				var r json.RawMessage
				if err := dec.Decode(&r); err != nil {
					return errors.New(syntaxMsg(err))
				}
				nodes = append(nodes, r)
				return nil
			})
			if isTooMany(err) {
				// Raised at the first node past the limit, before it is read.
				return nil, &Error{Node: -1, Field: f.key, Elem: -1, Err: limits.Exceeded("nodes", int64(max), "the graph has %d or more nodes", max+1)}
			}
			if err != nil {
				return nil, inField(f.key, err)
			}
		default:
			return nil, docErrf(f.key, "unknown field (a graph has format, input_id, output_id and nodes)")
		}
	}
	for _, k := range []string{"format", "input_id", "output_id", "nodes"} {
		if !got[k] {
			return nil, docErrf(k, "missing")
		}
	}
	g.Nodes = make([]Node, len(nodes))
	budget := newRatBudget(len(data))
	for i, raw := range nodes {
		if err := decodeNode(i, raw, &g.Nodes[i], budget); err != nil {
			return nil, err
		}
		if o, _ := lookup(g.Nodes[i].Kind.Op); torchlean && o.Superset {
			return nil, supersetErr(i, o.Op)
		}
	}
	if err := g.Check(); err != nil {
		return nil, err
	}
	return g, nil
}

// isAttrName reports whether name is an attribute of some IR tag, as the
// registry declares it (spec.AttrSpecs), for telling a misplaced
// attribute from an unknown field.
func isAttrName(name string) bool {
	a, ok := spec.LookupAttr(name)
	return ok && a.IR
}

func decodeShape(raw []byte) (spec.Shape, error) {
	xs, err := decodeInts(raw, maxExtent, spec.MaxRank)
	if err != nil {
		return nil, err
	}
	return spec.Shape(xs), nil
}

// decodeNode decodes nodes[i] into n.
func decodeNode(i int, raw json.RawMessage, n *Node, budget *ratBudget) error {
	fs, err := decodeObject(raw)
	if err != nil {
		return wrapNode(i, "", "", err)
	}
	// The tag first, so that every later error can name it.
	var info *TagInfo
	for _, f := range fs {
		if f.key == "kind" {
			s, err := decodeString(f.raw)
			if err != nil {
				return wrapNode(i, "", "kind", err)
			}
			o, ok := lookup(Op(s))
			if !ok {
				return nodeErrf(i, "", "kind", "unknown op tag %s", limits.Quote(s))
			}
			info = o
			break
		}
	}
	if info == nil {
		return nodeErrf(i, "", "kind", "missing")
	}
	op := info.Op
	n.Kind.Op = op
	got := map[string]bool{}
	for _, f := range fs {
		got[f.key] = true
		if err := decodeNodeField(n, info, f, budget); err != nil {
			return wrapNode(i, op, f.key, err)
		}
		if f.key == "id" && n.ID != i {
			return nodeErrf(i, op, "id", "nodes[%d] has id %d (each id must equal its index)", i, n.ID)
		}
	}
	for _, k := range append([]string{"id", "parents", "shape"}, info.Attrs...) {
		if !got[k] {
			return nodeErrf(i, op, k, "missing")
		}
	}
	if n.Parents == nil {
		n.Parents = []int{}
	}
	return nil
}

func decodeNodeField(n *Node, info *TagInfo, f jfield, budget *ratBudget) error {
	k := &n.Kind
	var err error
	switch f.key {
	case "kind":
		return nil
	case "id":
		n.ID, err = decodeInt(f.raw, MaxNodes)
		return err
	case "parents":
		lim := limits.Current().Parents
		n.Parents, err = decodeInts(f.raw, MaxNodes, lim)
		if isTooMany(err) {
			err = limits.Exceeded("parents", int64(lim), "%d or more parents", lim+1)
		}
		return err
	case "shape":
		n.Shape, err = decodeShape(f.raw)
		return err
	}
	if !info.hasAttr(f.key) {
		if isAttrName(f.key) {
			return fmt.Errorf("%s takes no %q attribute", info.Op, f.key)
		}
		return errors.New("unknown field")
	}
	return slotByName(f.key).decode(k, f.raw, budget)
}

// decodeBool reads a JSON boolean (true or false, nothing else).
func decodeBool(raw []byte) (bool, error) {
	switch string(bytes.TrimSpace(raw)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("expected true or false, got %s", strconv.Quote(snippet(bytes.TrimSpace(raw))))
}

// decodeAttrRational reads a rational attribute: a JSON string in the
// payload's rational grammar (a bare JSON number is refused, so that the
// graph's canonical form has one spelling of each attribute).
func decodeAttrRational(raw []byte, budget *ratBudget) (spec.Rat, error) {
	s, err := decodeString(raw)
	if err != nil {
		return spec.Rat{}, fmt.Errorf("expected a rational as a JSON string (\"1/2\", \"-3\"), got %s", snippet(raw))
	}
	return ratFromToken(s, budget)
}

// decodeMask reads {"shape":[…],"allowed":[true,false,…]}.
func decodeMask(raw []byte) (*HardMask, error) {
	fs, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	m := &HardMask{}
	var allowed json.RawMessage
	for _, f := range fs {
		switch f.key {
		case "shape":
			if m.Shape, err = decodeShape(f.raw); err != nil {
				return nil, inField(f.key, err)
			}
		case "allowed":
			allowed = f.raw
		default:
			return nil, docErrf(f.key, "unknown field (a mask has shape and allowed)")
		}
	}
	if m.Shape == nil {
		return nil, docErrf("shape", "missing")
	}
	if allowed == nil {
		return nil, docErrf("allowed", "missing")
	}
	size, err := m.Shape.Check(0)
	if err != nil {
		return nil, inField("shape", err)
	}
	m.Allowed = make([]bool, 0, size)
	count, err := streamArray(allowed, size, func(j int, dec *json.Decoder) error {
		tok, err := scalarToken(dec)
		if err != nil {
			return docErrf(fmt.Sprintf("allowed[%d]", j), "expected true or false, %v", err)
		}
		v, ok := tok.(bool)
		if !ok {
			return docErrf(fmt.Sprintf("allowed[%d]", j), "expected true or false, got %s", tokenString(tok))
		}
		m.Allowed = append(m.Allowed, v)
		return nil
	})
	if isTooMany(err) {
		return nil, docErrf("allowed", "mask of shape %v needs %d entries, got more", m.Shape, size)
	}
	if err != nil {
		return nil, err
	}
	if count != size {
		return nil, docErrf("allowed", "mask of shape %v needs %d entries, got %d", m.Shape, size, count)
	}
	return m, nil
}

// EncodeGraph writes g (which must pass Check) as a canonical document:
// torchlean.ir.v1 when every tag is TorchLean's (so existing documents
// are written byte for byte as before), tlcheck.ir.v1 otherwise
// (Graph.Format); the root members in the order format,
// input_id, output_id, nodes; one node per line, indented two spaces, with
// its members in the order id, kind, parents, shape and then its tag's
// attributes in TagInfo.Attrs order; no other whitespace; a final newline.
// DecodeGraph(EncodeGraph(g)) equals g, and EncodeGraph(DecodeGraph(x))
// is x for every canonical document x.
func EncodeGraph(g *Graph) ([]byte, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	return encodeGraph(g, g.Format()), nil
}

// EncodeTorchLean writes g as a canonical torchlean.ir.v1 document (what
// EncodeGraph writes for such a graph), for a consumer that reads only
// TorchLean's tags: a graph with a tlcheck.ir.v1 superset tag is refused
// with an error naming its first such node and tag.
func EncodeTorchLean(g *Graph) ([]byte, error) {
	if err := g.Check(); err != nil {
		return nil, err
	}
	if i := g.FirstSuperset(); i >= 0 {
		return nil, supersetErr(i, g.Nodes[i].Kind.Op)
	}
	return encodeGraph(g, FormatIR), nil
}

func encodeGraph(g *Graph, format string) []byte {
	b := make([]byte, 0, 64+64*len(g.Nodes))
	b = append(b, `{"format":`...)
	b = strconv.AppendQuote(b, format)
	b = append(b, `,"input_id":`...)
	b = strconv.AppendInt(b, int64(g.InputID), 10)
	b = append(b, `,"output_id":`...)
	b = strconv.AppendInt(b, int64(g.OutputID), 10)
	b = append(b, `,"nodes":[`...)
	for i := range g.Nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  "...)
		b = appendNode(b, &g.Nodes[i])
	}
	b = append(b, "\n]}\n"...)
	return b
}

func appendNode(b []byte, n *Node) []byte {
	k := &n.Kind
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(n.ID), 10)
	b = append(b, `,"kind":`...)
	b = strconv.AppendQuote(b, string(k.Op))
	b = append(b, `,"parents":`...)
	b = appendInts(b, n.Parents)
	b = append(b, `,"shape":`...)
	b = appendInts(b, n.Shape)
	return append(k.AppendAttrs(b), '}')
}

// AppendAttrs appends to b the canonical wire spelling of k's attributes:
// for each attribute its tag declares, in declaration order,
// `,"name":value` exactly as a graph file writes it. Two kinds that are
// Equal append the same bytes, so the spelling serves as a hash key (the
// CSE pass's); a new attribute declared in spec.AttrSpecs is spelled with
// no edit here or there.
func (k *Kind) AppendAttrs(b []byte) []byte {
	info, ok := lookup(k.Op)
	if !ok { // not a tag: no attribute is declared for it
		return b
	}
	for _, a := range info.Attrs {
		b = append(b, ',')
		b = strconv.AppendQuote(b, a)
		b = append(b, ':')
		b = slotByName(a).appendValue(b, k)
	}
	return b
}
