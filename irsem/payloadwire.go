package irsem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// FormatPayload is the value of the root "format" field of a payload
// document.
const FormatPayload = "tlcheck.payload.v1"

// The tlcheck.payload.v1 document (FORMAT.md has the full schema) holds a
// graph's parameters keyed by node id, every number an exact rational:
//
//	{"format":"tlcheck.payload.v1","entries":{
//	  "1":{"W":{"shape":[2,2],"values":["1/2","-1","3","0.25"]},"b":{"shape":[2],"values":["0","1"]}},
//	  "4":{"gamma":{"shape":[3],"values":["1","1","1"]},"eps":"1/100000"}
//	}}
//
// "entries" maps a node id (a decimal string without leading zeros) to an
// object whose members are parameter names (value, W, b, gamma, beta,
// mean, var: tensors; eps: a rational). A tensor is
// {"shape":[…],"values":[…]} with the values in row-major order. A
// rational is a JSON string "p/q", "p" or a decimal ("-1.5e-3"), or a plain
// JSON number, read as the exact decimal it spells (never through a
// float64). Which parameters a node needs is checked against its graph by
// CheckPayload.

// Decoding bounds beyond MaxDocumentBytes: the element count of a tensor is
// bounded by spec.DefaultMaxElements and of a whole document by
// MaxDocumentElements; a rational's text has at most 4096 bytes and a decimal
// exponent at most 4096 in magnitude; and the rationals of one document
// hold at most 2^20 + 64·(document bytes) bits in all, so that exponents
// cannot amplify a small document into a huge allocation.
const maxRatText = 4096

// MaxDocumentElements bounds the tensor elements of one payload or tensor
// document, all tensors together: exact rationals cost tens of bytes each.
const MaxDocumentElements = 1 << 24

// ratBudget tracks the bits the rationals of one document may still use.
type ratBudget struct{ left int }

func newRatBudget(docLen int) *ratBudget { return &ratBudget{left: 1<<20 + 64*docLen} }

// ParseRational reads an exact rational from its text: an integer ("-3"),
// a fraction ("-3/2", positive denominator, no sign after the slash) or a
// decimal ("1.5", "-2.5e-3"). Nothing else is accepted: no spaces, no "+",
// no hexadecimal, no "Inf" or "NaN". Integers and fractions must be in
// their one canonical spelling (big.Rat.RatString's): no leading zeros
// ("01", "1/02"), lowest terms ("2/4"), no denominator 1 ("1/1"); and no
// spelling may denote a negative zero ("-0", "-0/3", "-0.0"). A decimal
// is read as the exact value it spells (it is how float exporters write
// numbers), with no leading zeros in its integer part.
func ParseRational(s string) (spec.Rat, error) {
	if err := checkRatSyntax(s); err != nil {
		return spec.Rat{}, err
	}
	r, err := spec.ParseRat(s)
	if err != nil {
		return r, err
	}
	bad := func(why string) error {
		return fmt.Errorf("non-canonical rational %s: %s", strconv.Quote(snippet([]byte(s))), why)
	}
	if s[0] == '-' && r.Big().Sign() == 0 {
		return spec.Rat{}, bad("a negative zero; write 0")
	}
	if strings.IndexByte(s, '/') >= 0 {
		if c := r.String(); c != s {
			return spec.Rat{}, bad("write " + strconv.Quote(snippet([]byte(c))))
		}
	}
	return r, nil
}

func digitsAt(s string, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j
}

func checkRatSyntax(s string) error {
	bad := func(why string) error {
		return fmt.Errorf("malformed rational %s: %s", strconv.Quote(snippet([]byte(s))), why)
	}
	if len(s) == 0 {
		return bad("empty")
	}
	if len(s) > maxRatText {
		return bad(fmt.Sprintf("longer than %d bytes", maxRatText))
	}
	i := 0
	if s[0] == '-' {
		i = 1
	}
	j := digitsAt(s, i)
	if j == i {
		return bad(`expected "p/q", an integer or a decimal`)
	}
	if j-i > 1 && s[i] == '0' {
		return bad("a leading zero")
	}
	i = j
	if i == len(s) {
		return nil
	}
	if s[i] == '/' {
		j = digitsAt(s, i+1)
		if j == i+1 || j != len(s) {
			return bad("the denominator must be a positive integer")
		}
		if j-(i+1) > 1 && s[i+1] == '0' {
			return bad("a leading zero in the denominator")
		}
		for k := i + 1; k < j; k++ {
			if s[k] != '0' {
				return nil
			}
		}
		return bad("zero denominator")
	}
	if s[i] == '.' {
		j = digitsAt(s, i+1)
		if j == i+1 {
			return bad("expected digits after the decimal point")
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j = digitsAt(s, i)
		if j == i {
			return bad("expected digits in the exponent")
		}
		if e, err := strconv.Atoi(s[i:j]); err != nil || e > 4096 {
			return bad("exponent beyond ±4096")
		}
		i = j
	}
	if i != len(s) {
		return bad(`expected "p/q", an integer or a decimal`)
	}
	return nil
}

// decodeRational reads a rational member: a JSON string or number.
func decodeRational(raw []byte, budget *ratBudget) (spec.Rat, error) {
	t := bytes.TrimSpace(raw)
	switch {
	case len(t) > 0 && t[0] == '"':
		s, err := decodeString(t)
		if err != nil {
			return spec.Rat{}, err
		}
		return ratFromToken(s, budget)
	case len(t) > 0 && (t[0] == '-' || (t[0] >= '0' && t[0] <= '9')):
		return ratFromToken(json.Number(t), budget)
	}
	return spec.Rat{}, fmt.Errorf("expected a rational (a string \"p/q\" or a number), got %s", snippet(raw))
}

// ratFromToken reads a rational from a decoded JSON scalar: a string or a
// json.Number.
func ratFromToken(tok any, budget *ratBudget) (spec.Rat, error) {
	var s string
	switch v := tok.(type) {
	case string:
		s = v
	case json.Number:
		s = string(v)
	default:
		return spec.Rat{}, fmt.Errorf("expected a rational (a string \"p/q\" or a number), got %s", tokenString(tok))
	}
	r, err := ParseRational(s)
	if err != nil {
		return spec.Rat{}, err
	}
	if budget != nil {
		budget.left -= r.BitLen()
		if budget.left < 0 {
			return spec.Rat{}, errors.New("the document's rationals exceed their bit budget (2^20 + 64 bits per document byte)")
		}
	}
	return r, nil
}

// decodeTensor reads {"shape":[…],"values":[…]}; elems tracks the
// document's remaining element allowance. The shape is read first, so
// that the values are streamed against their known count.
func decodeTensor(raw []byte, budget *ratBudget, elems *int) (RatTensor, error) {
	fs, err := decodeObject(raw)
	if err != nil {
		return RatTensor{}, err
	}
	var shape spec.Shape
	var values json.RawMessage
	for _, f := range fs {
		switch f.key {
		case "shape":
			if shape, err = decodeShape(f.raw); err != nil {
				return RatTensor{}, inField(f.key, err)
			}
		case "values":
			values = f.raw
		default:
			return RatTensor{}, docErrf(f.key, "unknown field (a tensor has shape and values)")
		}
	}
	if shape == nil {
		return RatTensor{}, docErrf("shape", "missing")
	}
	if values == nil {
		return RatTensor{}, docErrf("values", "missing")
	}
	n, err := shape.Check(0)
	if err != nil {
		return RatTensor{}, inField("shape", err)
	}
	if elems != nil {
		if *elems -= n; *elems < 0 {
			return RatTensor{}, docErrf("shape", "the document holds more than %d elements in all", MaxDocumentElements)
		}
	}
	t := RatTensor{Shape: shape.Clone(), Data: make([]spec.Rat, 0, min(n, 1<<16))}
	count, err := streamArray(values, n, func(i int, dec *json.Decoder) error {
		tok, err := scalarToken(dec)
		var r spec.Rat
		if err == nil {
			r, err = ratFromToken(tok, budget)
		} else {
			err = fmt.Errorf("expected a rational (a string \"p/q\" or a number), %w", err)
		}
		if err != nil {
			return inField(fmt.Sprintf("values[%d]", i), err)
		}
		t.Data = append(t.Data, r)
		return nil
	})
	if isTooMany(err) {
		return RatTensor{}, docErrf("values", "a tensor of shape %v needs %d values, got more", shape, n)
	}
	if err != nil {
		return RatTensor{}, err
	}
	if count != n {
		return RatTensor{}, docErrf("values", "a tensor of shape %v needs %d values, got %d", shape, n, count)
	}
	return t, nil
}

// ReadTensor reads a tensor document such as
// {"shape":[2],"values":["3","-3/2"]} from r (the command line's input
// format) and decodes it with DecodeTensor.
func ReadTensor(r io.Reader) (RatTensor, error) {
	data, err := readAll(r)
	if err != nil {
		return RatTensor{}, err
	}
	return DecodeTensor(data)
}

// DecodeTensor decodes one exact tensor {"shape":[…],"values":[…]}
// strictly: exactly those two members, row-major values, each a rational
// string or a JSON number read as the exact decimal it spells.
func DecodeTensor(data []byte) (RatTensor, error) {
	if len(data) > MaxDocumentBytes {
		return RatTensor{}, docErrf("", "document is larger than %d bytes", MaxDocumentBytes)
	}
	elems := MaxDocumentElements
	t, err := decodeTensor(data, newRatBudget(len(data)), &elems)
	if err != nil {
		return RatTensor{}, inField("", err)
	}
	return t, nil
}

// EncodeTensor writes t as {"shape":[…],"values":[…]} and a newline, each
// value the JSON string of its String method: "p/q" for spec.Rat (which
// DecodeTensor reads back exactly), the shortest round-tripping decimal
// for float scalars.
func EncodeTensor[T spec.Scalar[T]](t spec.Tensor[T]) ([]byte, error) {
	if _, err := t.Shape.Check(0); err != nil {
		return nil, err
	}
	if len(t.Data) != t.Shape.Size() {
		return nil, fmt.Errorf("tensor of shape %v holds %d values", t.Shape, len(t.Data))
	}
	b := appendTensor(nil, t.Shape, len(t.Data), func(b []byte, i int) []byte {
		return strconv.AppendQuote(b, t.Data[i].String())
	})
	return append(b, '\n'), nil
}

func appendTensor(b []byte, shape spec.Shape, n int, elem func([]byte, int) []byte) []byte {
	b = append(b, `{"shape":`...)
	b = appendInts(b, shape)
	b = append(b, `,"values":[`...)
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = elem(b, i)
	}
	return append(b, "]}"...)
}

func appendRatTensor(b []byte, t *RatTensor) []byte {
	return appendTensor(b, t.Shape, len(t.Data), func(b []byte, i int) []byte {
		return strconv.AppendQuote(b, t.Data[i].String())
	})
}

// ReadPayload reads a tlcheck.payload.v1 document from r and decodes it
// with DecodePayload.
func ReadPayload(r io.Reader) (*Payload, error) {
	data, err := readAll(r)
	if err != nil {
		return nil, err
	}
	return DecodePayload(data)
}

// DecodePayload decodes a tlcheck.payload.v1 document strictly. It knows no
// graph: CheckPayload then checks the entries against one (DenoteAll and
// LowerForward do so themselves). Errors name the node id and field, e.g.
// `node 1: field "W.values[3]": malformed rational "1/0": zero denominator`.
func DecodePayload(data []byte) (*Payload, error) {
	if len(data) > MaxDocumentBytes {
		return nil, docErrf("", "document is larger than %d bytes", MaxDocumentBytes)
	}
	fs, err := decodeObject(data)
	if err != nil {
		return nil, inField("", err)
	}
	p := &Payload{Entries: map[int]*Params{}}
	budget, elems := newRatBudget(len(data)), MaxDocumentElements
	got := map[string]bool{}
	for _, f := range fs {
		got[f.key] = true
		switch f.key {
		case "format":
			s, err := decodeString(f.raw)
			if err != nil {
				return nil, inField(f.key, err)
			}
			if s != FormatPayload {
				return nil, docErrf(f.key, "expected %q, got %s", FormatPayload, limits.Quote(s))
			}
		case "entries":
			es, err := decodeObjectN(f.raw, MaxNodes)
			if err != nil {
				return nil, inField(f.key, err)
			}
			for _, e := range es {
				if !isNat(e.key) || len(e.key) > 7 {
					return nil, docErrf(f.key, "key %q is not a node id", snippet([]byte(e.key)))
				}
				id, _ := strconv.Atoi(e.key)
				if id >= MaxNodes {
					return nil, docErrf(f.key, "key %s is not a node id", limits.Quote(e.key))
				}
				params, err := decodeParams(e.raw, budget, &elems)
				if err != nil {
					return nil, wrapNode(id, "", "", err)
				}
				p.Entries[id] = params
			}
		default:
			return nil, docErrf(f.key, "unknown field (a payload has format and entries)")
		}
	}
	for _, k := range []string{"format", "entries"} {
		if !got[k] {
			return nil, docErrf(k, "missing")
		}
	}
	return p, nil
}

func decodeParams(raw []byte, budget *ratBudget, elems *int) (*Params, error) {
	fs, err := decodeObject(raw)
	if err != nil {
		return nil, err
	}
	e := &Params{}
	for _, f := range fs {
		if f.key == ParamEps {
			r, err := decodeRational(f.raw, budget)
			if err != nil {
				return nil, inField(f.key, err)
			}
			e.Eps = &r
			continue
		}
		var slot **RatTensor
		for _, tp := range tensorParams {
			if tp.name == f.key {
				slot = tp.get(e)
			}
		}
		if slot == nil {
			return nil, docErrf(f.key, "unknown payload parameter (known: value, W, b, gamma, beta, mean, var, eps)")
		}
		t, err := decodeTensor(f.raw, budget, elems)
		if err != nil {
			return nil, inField(f.key, err)
		}
		*slot = &t
	}
	return e, nil
}

// EncodePayload writes p as a canonical tlcheck.payload.v1 document:
// entries in ascending id order, one per line indented two spaces, each
// entry's parameters in the order value, W, b, gamma, beta, mean, var,
// eps, every number a "p/q" (or "p") string, a final newline.
// DecodePayload(EncodePayload(p)) equals p, and EncodePayload is the
// identity on canonical documents.
func EncodePayload(p *Payload) ([]byte, error) {
	b := []byte(`{"format":"` + FormatPayload + `","entries":{`)
	for k, id := range p.IDs() {
		if id < 0 || id >= MaxNodes {
			return nil, nodeErrf(id, "", "", "payload entry id outside [0, %d)", MaxNodes)
		}
		e := p.Entries[id]
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  \""...)
		b = strconv.AppendInt(b, int64(id), 10)
		b = append(b, `":{`...)
		first := true
		sep := func() {
			if !first {
				b = append(b, ',')
			}
			first = false
		}
		if e != nil {
			for _, tp := range tensorParams {
				t := *tp.get(e)
				if tp.name == ParamW {
					// Either storage; a plane's rationals are derived for
					// this tensor's text only.
					t = e.Weight()
				}
				if t == nil {
					continue
				}
				if _, err := t.Shape.Check(0); err != nil || len(t.Data) != t.Shape.Size() {
					return nil, nodeErrf(id, "", tp.name, "malformed tensor of shape %v with %d values", t.Shape, len(t.Data))
				}
				sep()
				b = strconv.AppendQuote(b, tp.name)
				b = append(b, ':')
				b = appendRatTensor(b, t)
			}
			if e.Eps != nil {
				sep()
				b = append(b, `"eps":`...)
				b = strconv.AppendQuote(b, e.Eps.String())
			}
		}
		b = append(b, '}')
	}
	if len(p.IDs()) > 0 {
		b = append(b, '\n')
	}
	b = append(b, "}}\n"...)
	return b, nil
}
