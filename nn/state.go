package nn

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tlcheck/tlcheck/spec"
)

// StateBits64Format and StateBits32Format are the "format" tags of the
// model-state JSON: float64 (binary64) bit patterns as unsigned 64-bit
// integers, and float32 (binary32) bit patterns as unsigned 32-bit
// integers.
const (
	StateBits64Format = "torchlean_state_bits_v1"
	StateBits32Format = "torchlean_state_float32_bits_v1"
)

// stateFormat names the model-state JSON in errors.
const stateFormat = "state JSON"

// StateFile is a decoded model-state JSON file of either tag: Format is the
// tag, and exactly one of F32 (StateBits32Format) and F64
// (StateBits64Format) holds the tensors, in file order.
type StateFile struct {
	Format string
	F32    []spec.SomeTensor[spec.F32]
	F64    []spec.SomeTensor[spec.F64]
}

// EncodeStateJSON writes state as model-state JSON: the tag is
// StateBits32Format for spec.F32 and StateBits64Format for spec.F64, and
// every value is its IEEE bit pattern as a decimal integer, so the round
// trip through DecodeStateJSON is bit-exact (signed zeros, subnormals,
// infinities). The bytes are deterministic:
//
//	{"format":"…","state":[{"shape":[2,3],"values":[…]},…]}
//
// with no insignificant whitespace and one trailing newline. A NaN other
// than the canonical one (CanonicalNaN32, CanonicalNaN64) is rejected
// before anything is written, because the decoder rejects it; see
// CanonicalizeStateNaNs.
func EncodeStateJSON[T ExchangeFloat](w io.Writer, state []spec.SomeTensor[T]) error {
	width := exWidth[T]()
	tag := StateBits64Format
	if width == 32 {
		tag = StateBits32Format
	}
	tensors, err := exCheckState(stateFormat, state, width, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	buf := make([]byte, 0, 64<<10)
	buf = append(buf, `{"format":"`...)
	buf = append(buf, tag...)
	buf = append(buf, `","state":[`...)
	for i, t := range tensors {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"shape":[`...)
		for a, d := range t.Shape {
			if a > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendInt(buf, int64(d), 10)
		}
		buf = append(buf, `],"values":[`...)
		for k, v := range t.Data {
			if k > 0 {
				buf = append(buf, ',')
			}
			buf = strconv.AppendUint(buf, exBits(v, width), 10)
			if len(buf) > 60<<10 {
				if _, err := bw.Write(buf); err != nil {
					return err
				}
				buf = buf[:0]
			}
		}
		buf = append(buf, "]}"...)
	}
	buf = append(buf, "]}\n"...)
	if _, err := bw.Write(buf); err != nil {
		return err
	}
	return bw.Flush()
}

// exCheckState recovers the tensors of a state list and rejects
// non-canonical NaNs, naming the tensor (numbered from base) and element
// index.
func exCheckState[T ExchangeFloat](format string, state []spec.SomeTensor[T], width, base int) ([]spec.Tensor[T], error) {
	tensors := make([]spec.Tensor[T], len(state))
	for i, s := range state {
		t, err := s.Cast(s.Shape())
		if err != nil {
			return nil, err
		}
		if _, err := t.Shape.Check(0); err != nil {
			return nil, &ExchangeError{Format: format, Where: fmt.Sprintf("tensor %d: shape", base+i), Msg: err.Error(), Offset: -1}
		}
		for k, v := range t.Data {
			if v != v && exBadNaN(exBits(v, width), width) {
				u := exBits(v, width)
				return nil, &ExchangeError{Format: format, Where: fmt.Sprintf("tensor %d: element %d", base+i, k),
					Msg: fmt.Sprintf("non-canonical NaN %s cannot be written (only %s is; see CanonicalizeStateNaNs)", exWord(u, width), exWord(exCanonical(width), width)), Offset: -1}
			}
		}
		tensors[i] = t
	}
	return tensors, nil
}

// exCanonical is the canonical NaN word of the width.
func exCanonical(width int) uint64 {
	if width == 32 {
		return uint64(CanonicalNaN32)
	}
	return CanonicalNaN64
}

// DecodeStateJSON reads model-state JSON whose tag matches T
// (StateBits32Format for spec.F32, StateBits64Format for spec.F64) and
// returns its tensors in file order. See DecodeStateFile for what is
// checked.
func DecodeStateJSON[T ExchangeFloat](r io.Reader) ([]spec.SomeTensor[T], error) {
	f, err := DecodeStateFile(r)
	if err != nil {
		return nil, err
	}
	var out any
	switch f.Format {
	case StateBits32Format:
		out = f.F32
	default:
		out = f.F64
	}
	if s, ok := out.([]spec.SomeTensor[T]); ok {
		return s, nil
	}
	return nil, &ExchangeError{Format: stateFormat, Where: "format",
		Msg: fmt.Sprintf("tag %q holds %s values, not the requested %s", f.Format, exWidthName(exWidthOfTag(f.Format)), exWidthName(exWidth[T]())), Offset: -1}
}

func exWidthOfTag(tag string) int {
	if tag == StateBits32Format {
		return 32
	}
	return 64
}

// stateEntry is one parsed "state" element before the tag is applied.
type stateEntry struct {
	shape     spec.Shape
	values    []uint64
	haveShape bool
	off       int64 // byte offset where the entry ended
}

// DecodeStateFile reads model-state JSON of either tag,
//
//	{"format": TAG, "state": [{"shape": [d0, …], "values": [w0, w1, …]}, …]}
//
// (fields in any order). It rejects, each with a one-line *ExchangeError
// naming the tensor index, field and element index: unknown tags, missing,
// duplicate or unknown fields, extents and words that are not plain
// non-negative decimal integers (no sign, fraction or exponent), words out
// of range for the tag (2^32 and above for float32, 2^64 and above for
// float64), NaN words other than the canonical one, shapes that
// spec.Shape.Check refuses, a value count different from the product of
// the shape, malformed JSON and anything after the top-level object.
func DecodeStateFile(r io.Reader) (StateFile, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	fail := func(where, msg string) error {
		return &ExchangeError{Format: stateFormat, Where: where, Msg: msg, Offset: dec.InputOffset()}
	}
	token := func(where string) (json.Token, error) {
		tok, err := dec.Token()
		if err != nil {
			return nil, exJSONError(stateFormat, where, dec, err)
		}
		return tok, nil
	}
	expect := func(where string, want json.Delim, what string) error {
		tok, err := token(where)
		if err != nil {
			return err
		}
		if tok != want {
			return fail(where, fmt.Sprintf("expected %s, got %s", what, exTokenKind(tok)))
		}
		return nil
	}
	// naturals reads an array of plain non-negative integers ≤ max, at
	// most limit of them.
	naturals := func(where string, max uint64, limit int, what string) ([]uint64, error) {
		if err := expect(where, '[', "an array"); err != nil {
			return nil, err
		}
		out := []uint64{}
		for dec.More() {
			ew := fmt.Sprintf("%s[%d]", where, len(out))
			if len(out) >= limit {
				return nil, fail(where, fmt.Sprintf("more than %d %s", limit, what))
			}
			tok, err := token(ew)
			if err != nil {
				return nil, err
			}
			v, msg := exNatural(tok, max)
			if msg != "" {
				return nil, fail(ew, msg)
			}
			out = append(out, v)
		}
		return out, expect(where, ']', "the end of the array")
	}

	var file StateFile
	var entries []*stateEntry
	var haveFormat, haveState bool
	if err := expect("", '{', "a JSON object at the top level"); err != nil {
		return StateFile{}, err
	}
	top := exObject{format: stateFormat, keys: []string{"format", "state"},
		dup:     func(key string) (string, string) { return key, "duplicate field" },
		unknown: func(key string) string { return fmt.Sprintf("unknown field %q (want \"format\" and \"state\")", key) }}
	err := exMembers(dec, top, func(key string) error {
		switch key {
		case "format":
			haveFormat = true
			tok, err := token("format")
			if err != nil {
				return err
			}
			s, ok := tok.(string)
			if !ok {
				return fail("format", "expected a string, got "+exTokenKind(tok))
			}
			if s != StateBits32Format && s != StateBits64Format {
				return fail("format", fmt.Sprintf("unknown tag %q (want %q or %q)", s, StateBits64Format, StateBits32Format))
			}
			file.Format = s
		case "state":
			haveState = true
			if err := expect("state", '[', "an array of tensors"); err != nil {
				return err
			}
			for dec.More() {
				i := len(entries)
				where := fmt.Sprintf("tensor %d", i)
				if err := expect(where, '{', `an object {"shape": [...], "values": [...]}`); err != nil {
					return err
				}
				e := &stateEntry{}
				var haveValues bool
				entry := exObject{format: stateFormat, where: where, keys: []string{"shape", "values"},
					dup: func(field string) (string, string) { return where + ": " + field, "duplicate field" },
					unknown: func(field string) string {
						return fmt.Sprintf("unknown field %q (want \"shape\" and \"values\")", field)
					}}
				err := exMembers(dec, entry, func(field string) error {
					fw := where + ": " + field
					switch field {
					case "shape":
						e.haveShape = true
						dims, err := naturals(fw, math.MaxInt64, spec.MaxRank, "extents (the maximum rank)")
						if err != nil {
							return err
						}
						e.shape = make(spec.Shape, len(dims))
						for a, d := range dims {
							e.shape[a] = int(d)
						}
						if _, err := e.shape.Check(0); err != nil {
							return fail(fw, err.Error())
						}
					case "values":
						haveValues = true
						// The bound is the product of the shape when it came
						// first, else the global element limit.
						limit := spec.DefaultMaxElements
						if e.haveShape {
							limit = e.shape.Size()
						}
						vals, err := naturals(fw, math.MaxUint64, limit, "values (the element count of the shape)")
						if err != nil {
							return err
						}
						e.values = vals
					}
					return nil
				})
				if err != nil {
					return err
				}
				if err := expect(where, '}', "the end of the tensor object"); err != nil {
					return err
				}
				if !e.haveShape {
					return fail(where, `missing field "shape"`)
				}
				if !haveValues {
					return fail(where, `missing field "values"`)
				}
				e.off = dec.InputOffset()
				entries = append(entries, e)
			}
			if err := expect("state", ']', "the end of the state array"); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return StateFile{}, err
	}
	if err := expect("", '}', "the end of the top-level object"); err != nil {
		return StateFile{}, err
	}
	if err := exExpectEOF(stateFormat, dec); err != nil {
		return StateFile{}, err
	}
	if !haveFormat {
		return StateFile{}, &ExchangeError{Format: stateFormat, Msg: `missing field "format"`, Offset: -1}
	}
	if !haveState {
		return StateFile{}, &ExchangeError{Format: stateFormat, Msg: `missing field "state"`, Offset: -1}
	}
	width := exWidthOfTag(file.Format)
	if width == 32 {
		file.F32, err = stateConvert[spec.F32](entries, width)
	} else {
		file.F64, err = stateConvert[spec.F64](entries, width)
	}
	if err != nil {
		return StateFile{}, err
	}
	return file, nil
}

// stateConvert checks the words of every entry against the tag's width
// and the shape, and builds the tensors.
func stateConvert[T ExchangeFloat](entries []*stateEntry, width int) ([]spec.SomeTensor[T], error) {
	out := make([]spec.SomeTensor[T], len(entries))
	for i, e := range entries {
		n := e.shape.Size() // checked when parsed
		if len(e.values) != n {
			return nil, &ExchangeError{Format: stateFormat, Where: fmt.Sprintf("tensor %d: values", i),
				Msg: fmt.Sprintf("%d values do not match shape %v (%d elements)", len(e.values), e.shape, n), Offset: e.off}
		}
		data := make([]T, n)
		for k, u := range e.values {
			if width == 32 && u > math.MaxUint32 {
				return nil, &ExchangeError{Format: stateFormat, Where: fmt.Sprintf("tensor %d: values: element %d", i, k),
					Msg: fmt.Sprintf("%d is out of range for a float32 bit pattern (at most %d)", u, uint64(math.MaxUint32)), Offset: e.off}
			}
			if exBadNaN(u, width) {
				return nil, &ExchangeError{Format: stateFormat, Where: fmt.Sprintf("tensor %d: values: element %d", i, k),
					Msg: fmt.Sprintf("non-canonical NaN %s (only %s is accepted)", exWord(u, width), exWord(exCanonical(width), width)), Offset: e.off}
			}
			data[k] = exFromBits[T](u, width)
		}
		t, err := spec.NewTensor(e.shape, data)
		if err != nil {
			return nil, &ExchangeError{Format: stateFormat, Where: fmt.Sprintf("tensor %d", i), Msg: err.Error(), Offset: e.off}
		}
		out[i] = spec.Erase(t)
	}
	return out, nil
}

// EraseState packs tensors into a shape-erased state list, in order.
func EraseState[T any](ts []spec.Tensor[T]) []spec.SomeTensor[T] {
	out := make([]spec.SomeTensor[T], len(ts))
	for i, t := range ts {
		out[i] = spec.Erase(t)
	}
	return out
}

// CastState recovers typed tensors from a state list, one expected shape
// per entry: the list lengths must agree and each stored shape must equal
// its expected shape (no reshaping). Errors name the tensor index.
func CastState[T any](state []spec.SomeTensor[T], want []spec.Shape) ([]spec.Tensor[T], error) {
	if len(state) != len(want) {
		return nil, fmt.Errorf("state: %d tensors, expected %d", len(state), len(want))
	}
	out := make([]spec.Tensor[T], len(state))
	for i, s := range state {
		t, err := s.Cast(want[i])
		if err != nil {
			return nil, fmt.Errorf("state: tensor %d: %v", i, err)
		}
		out[i] = t
	}
	return out, nil
}

// WidenState converts float32 state to float64 state. Every binary32 value
// is exactly representable in binary64, so the conversion is exact; every
// NaN becomes the canonical float64 NaN.
func WidenState(state []spec.SomeTensor[spec.F32]) []spec.SomeTensor[spec.F64] {
	out := make([]spec.SomeTensor[spec.F64], len(state))
	for i, s := range state {
		t, _ := s.Cast(s.Shape())
		data := make([]spec.F64, len(t.Data))
		for k, v := range t.Data {
			if v != v {
				data[k] = spec.F64(math.Float64frombits(CanonicalNaN64))
				continue
			}
			data[k] = spec.F64(v)
		}
		out[i] = spec.Erase(spec.Tensor[spec.F64]{Shape: t.Shape.Clone(), Data: data})
	}
	return out
}

// NarrowState converts float64 state to float32 state when that is exact:
// every value must be a binary32 value (or a NaN, which becomes the
// canonical float32 NaN). The first value that would round fails with its
// tensor and element index.
func NarrowState(state []spec.SomeTensor[spec.F64]) ([]spec.SomeTensor[spec.F32], error) {
	out := make([]spec.SomeTensor[spec.F32], len(state))
	for i, s := range state {
		t, _ := s.Cast(s.Shape())
		data := make([]spec.F32, len(t.Data))
		for k, v := range t.Data {
			if v != v {
				data[k] = spec.F32(math.Float32frombits(CanonicalNaN32))
				continue
			}
			f := float32(v)
			if float64(f) != float64(v) {
				return nil, fmt.Errorf("state: tensor %d: element %d: %v is not exactly representable as float32", i, k, float64(v))
			}
			data[k] = spec.F32(f)
		}
		out[i] = spec.Erase(spec.Tensor[spec.F32]{Shape: t.Shape.Clone(), Data: data})
	}
	return out, nil
}

// CanonicalizeStateNaNs returns a copy of state in which every NaN is
// replaced by the canonical NaN (CanonicalNaN32 or CanonicalNaN64), so
// that the encoders accept it. Hardware arithmetic may produce other NaN
// words (x86 produces 0xFFC00000 for 0/0); the formats store only one.
func CanonicalizeStateNaNs[T ExchangeFloat](state []spec.SomeTensor[T]) []spec.SomeTensor[T] {
	width := exWidth[T]()
	canon := exFromBits[T](exCanonical(width), width)
	out := make([]spec.SomeTensor[T], len(state))
	for i, s := range state {
		t, _ := s.Cast(s.Shape())
		c := t.Clone()
		for k, v := range c.Data {
			if v != v {
				c.Data[k] = canon
			}
		}
		out[i] = spec.Erase(c)
	}
	return out
}
