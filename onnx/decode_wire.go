package onnx

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

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

// at prefixes err with where ("node \"c1\" (Conv): …"), keeping it
// unwrappable.
func at(where string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%s: %w", where, err)
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
}

// fieldNames maps a message's known field numbers to their schema names.
type fieldNames map[protowire.Number]string

// wireErr renders a protowire error code.
func wireErr(n int) error {
	if n >= 0 {
		return nil
	}
	err := protowire.ParseError(n)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("truncated")
	}
	return err
}

// scan calls fn on every field of the message b in order. A field the
// table names is reported by name; an unknown one is skipped by its wire
// type (after fn has seen it; fn ignores numbers it does not know).
func scan(b []byte, names fieldNames, fn func(f *field) error) error {
	for off := 0; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("byte %d: field tag: %v", off, wireErr(n))
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
		case protowire.StartGroupType:
			m = protowire.ConsumeFieldValue(num, typ, rest)
		case protowire.EndGroupType:
			return fmt.Errorf("byte %d: %s: end of a group that was not started", off, label())
		default:
			return fmt.Errorf("byte %d: %s: unknown wire type %d", off, label(), typ)
		}
		if m < 0 {
			return fmt.Errorf("byte %d: %s: %v", off, label(), wireErr(m))
		}
		if f.name != "" {
			if err := fn(&f); err != nil {
				return fmt.Errorf("%s: %w", label(), err)
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
		return 0, errors.New("packed varints: truncated")
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
			return fmt.Errorf("packed varints: %v", wireErr(n))
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
