package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlcheck/tlcheck/limits"
)

// Error is an error of the reader: what is wrong (Err, whose text names
// where in the model) in the file Path ("" for Decode and DecodeTensor).
// Its text is "onnx: PATH: …", or "onnx: …" without a path.
type Error struct {
	Path string
	Err  error
}

func (e *Error) Error() string {
	if e.Path == "" {
		return "onnx: " + e.Err.Error()
	}
	return "onnx: " + e.Path + ": " + e.Err.Error()
}

// Unwrap returns the underlying error (a limits.Error when a limit was
// exceeded).
func (e *Error) Unwrap() error { return e.Err }

// quote renders a name taken from the file for an error line.
func quote(s string) string { return limits.Quote(s) }

// located is an error whose text already names where it is (a node, an
// attribute, a tensor, a value): scan does not prefix it with the field
// that holds the message, so that a line reads `node "c1" (Conv):
// attribute "pads": …` and not `graph: field node (1): node …`.
type located struct{ err error }

func (e *located) Error() string { return e.err.Error() }
func (e *located) Unwrap() error { return e.err }

// at prefixes err with where ("node \"c1\" (Conv): …"), keeping it
// unwrappable, and marks it located.
func at(where string, err error) error {
	if err == nil {
		return nil
	}
	return &located{fmt.Errorf("%s: %w", where, err)}
}

// isLocated reports whether err already names where it is.
func isLocated(err error) bool {
	_, ok := err.(*located)
	return ok
}

// field is one decoded protobuf field: its number, wire type, and value
// (v for varint and fixed types, b for length-delimited ones; groups are
// skipped and leave both zero).
type field struct {
	num  protowire.Number
	typ  protowire.Type
	v    uint64
	b    []byte
	name string // the schema's name, for errors; set by the caller's table
	cut  bool   // b is what remains of a truncated field (probing, dec.clip)
}

// fieldNames maps a message's known field numbers to their schema names.
type fieldNames map[protowire.Number]string

// errTruncated is the error of an input that ends inside a field.
var errTruncated = errors.New("truncated")

// wireErr renders a protowire error code.
func wireErr(n int) error {
	if n >= 0 {
		return nil
	}
	err := protowire.ParseError(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errTruncated
	}
	return err
}

// scan calls fn on every field of the message b (a sub-slice of the
// decoded input) that the table names, in order; an unknown field is
// skipped by its wire type. An error names the byte offset in the input
// (from the capacities of the input and of b, which share one array) and
// the field, unless fn's error is already located.
func (d *dec) scan(b []byte, names fieldNames, fn func(f *field) error) error {
	for off := d.total - cap(b); len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("byte %d: field tag: %w", off, wireErr(n))
		}
		f := field{num: num, typ: typ, name: names[num]}
		label := func() string {
			if f.name == "" {
				return fmt.Sprintf("field %d", num)
			}
			return fmt.Sprintf("field %s (%d)", f.name, num)
		}
		rest := b[n:]
		var m int
		switch typ {
		case protowire.VarintType:
			f.v, m = protowire.ConsumeVarint(rest)
		case protowire.Fixed32Type:
			var v uint32
			v, m = protowire.ConsumeFixed32(rest)
			f.v = uint64(v)
		case protowire.Fixed64Type:
			f.v, m = protowire.ConsumeFixed64(rest)
		case protowire.BytesType:
			f.b, m = protowire.ConsumeBytes(rest)
			if m < 0 && d.clip && f.name != "" {
				// Probing a truncated input: decode what there is of this
				// field, to find the innermost place the input ends in.
				if l, k := protowire.ConsumeVarint(rest); k > 0 && l > uint64(len(rest)-k) {
					f.b, f.cut = rest[k:], true
					if err := fn(&f); err != nil && isLocated(err) && errors.Is(err, errTruncated) {
						return err // a message inside names where it ends
					}
					return fmt.Errorf("byte %d: %s: %w", off, label(), errTruncated)
				}
			}
		case protowire.StartGroupType:
			m = protowire.ConsumeFieldValue(num, typ, rest)
		case protowire.EndGroupType:
			return fmt.Errorf("byte %d: %s: end of a group that was not started", off, label())
		default:
			return fmt.Errorf("byte %d: %s: unknown wire type %d", off, label(), typ)
		}
		if m < 0 {
			return fmt.Errorf("byte %d: %s: %w", off, label(), wireErr(m))
		}
		if f.name != "" {
			if err := fn(&f); err != nil {
				if isLocated(err) {
					return err
				}
				return fmt.Errorf("byte %d: %s: %w", off, label(), err)
			}
		}
		b = rest[m:]
		off += n + m
	}
	return nil
}

// peek returns the last value of the length-delimited field num of the
// message b that can be read before any malformed field (used to name a
// node or a tensor in the error of a field that comes before its name).
func peek(b []byte, num protowire.Number) string {
	var s string
	for len(b) > 0 {
		n2, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			break
		}
		m := protowire.ConsumeFieldValue(n2, typ, b[n:])
		if m < 0 {
			break
		}
		if n2 == num && typ == protowire.BytesType {
			if v, k := protowire.ConsumeBytes(b[n:]); k > 0 {
				s = string(v)
			}
		}
		b = b[n+m:]
	}
	return s
}

func wrongType(f *field, want string) error {
	names := map[protowire.Type]string{
		protowire.VarintType: "varint", protowire.Fixed32Type: "fixed32", protowire.Fixed64Type: "fixed64",
		protowire.BytesType: "length-delimited", protowire.StartGroupType: "group",
	}
	return fmt.Errorf("wire type %s, want %s", names[f.typ], want)
}

// bytes is the value of a length-delimited field (string, bytes, message).
func (f *field) bytes() ([]byte, error) {
	if f.typ != protowire.BytesType {
		return nil, wrongType(f, "length-delimited")
	}
	return f.b, nil
}

// text is the value of a string field the reader keeps (a name, an op
// type, a domain): it must be UTF-8, as protobuf's string type requires
// and every ONNX writer produces. Kept as bytes, a name that is not would
// be written by import as JSON with U+FFFD in place of each bad byte, so
// that two distinct names could become one.
func (f *field) text() (string, error) {
	b, err := f.bytes()
	if err != nil {
		return "", err
	}
	if !utf8.Valid(b) {
		return "", fmt.Errorf("not UTF-8 (%s): a name must be text", limits.Quote(string(b)))
	}
	return string(b), nil
}

// varint is the value of a varint field.
func (f *field) varint() (uint64, error) {
	if f.typ != protowire.VarintType {
		return 0, wrongType(f, "varint")
	}
	return f.v, nil
}

// int32v is the value of an int32 or enum field: protobuf encodes it as
// the sign-extended int64 and a reader truncates it to 32 bits.
func (f *field) int32v() (int32, error) {
	v, err := f.varint()
	return int32(v), err
}

// fixed32 is the value of a float field.
func (f *field) fixed32() (float32, error) {
	if f.typ != protowire.Fixed32Type {
		return 0, wrongType(f, "fixed32")
	}
	return math.Float32frombits(uint32(f.v)), nil
}

// countVarints returns the number of varints in the packed field value b
// (the bytes without the continuation bit), or an error when the last one
// is cut off.
func countVarints(b []byte) (int, error) {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	if len(b) > 0 && b[len(b)-1] >= 0x80 {
		return 0, fmt.Errorf("packed varints: %w", errTruncated)
	}
	return n, nil
}

// count is the number of elements a repeated scalar field's occurrence
// holds: packed (length-delimited) or one unpacked value of wire type
// want; size is the fixed element size (0 for varints).
func (f *field) count(want protowire.Type, size int) (int, error) {
	if f.typ == protowire.BytesType {
		if size == 0 {
			return countVarints(f.b)
		}
		if len(f.b)%size != 0 {
			return 0, fmt.Errorf("packed length %d is not a multiple of %d", len(f.b), size)
		}
		return len(f.b) / size, nil
	}
	if f.typ != want {
		names := map[protowire.Type]string{protowire.VarintType: "varint", protowire.Fixed32Type: "fixed32", protowire.Fixed64Type: "fixed64"}
		return 0, wrongType(f, "packed or "+names[want])
	}
	return 1, nil
}

// eachVarint calls fn on each value of an occurrence of a repeated
// varint field (packed or not); the caller has counted them (count).
func (f *field) eachVarint(fn func(uint64) error) error {
	if f.typ == protowire.VarintType {
		return fn(f.v)
	}
	for b := f.b; len(b) > 0; {
		v, n := protowire.ConsumeVarint(b)
		if n < 0 {
			return fmt.Errorf("packed varints: %w", wireErr(n))
		}
		if err := fn(v); err != nil {
			return err
		}
		b = b[n:]
	}
	return nil
}

// eachFixed32 calls fn on each value of an occurrence of a repeated
// fixed32 field (packed or not; a packed length was checked by count).
func (f *field) eachFixed32(fn func(uint32)) {
	if f.typ == protowire.Fixed32Type {
		fn(uint32(f.v))
		return
	}
	for b := f.b; len(b) >= 4; b = b[4:] {
		fn(binary.LittleEndian.Uint32(b))
	}
}

// eachFixed64 calls fn on each value of an occurrence of a repeated
// fixed64 field (packed or not).
func (f *field) eachFixed64(fn func(uint64)) {
	if f.typ == protowire.Fixed64Type {
		fn(f.v)
		return
	}
	for b := f.b; len(b) >= 8; b = b[8:] {
		fn(binary.LittleEndian.Uint64(b))
	}
}
