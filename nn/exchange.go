package nn

import (
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/tlcheck/tlcheck/spec"
)

// This file holds what the three exchange formats share: the element
// types they carry, the error type every decoder returns, the canonical
// NaN words and the ordered named parameter Pack. The formats themselves
// live in exchange_torch.go (PyTorch parameter JSON), state.go (state bit
// patterns in JSON) and state_tlsf32b.go (the TLSF32B stream); EXCHANGE.md
// describes them byte for byte.

// ExchangeFloat is the set of element types the exchange formats carry:
// IEEE binary32 (spec.F32) and binary64 (spec.F64).
type ExchangeFloat interface {
	spec.F32 | spec.F64
}

// CanonicalNaN32 is the only float32 NaN word the exchange formats accept:
// quiet, positive, zero payload (0x7FC00000).
const CanonicalNaN32 uint32 = 0x7FC00000

// CanonicalNaN64 is the only float64 NaN word the exchange formats accept:
// quiet, positive, zero payload (0x7FF8000000000000).
const CanonicalNaN64 uint64 = 0x7FF8000000000000

// ExchangeError is the error every exchange decoder and encoder returns for
// bad input. Its text is one line: the format, the file-level location
// (tensor index, field, element index or JSON path), what was wrong and,
// when the input is a byte stream, the byte offset of the offending field,
// e.g.
//
//	TLSF32B: tensor 2: dims: element count 6 does not match dims [2 4] (offset 88)
type ExchangeError struct {
	// Format names the format: "TLSF32B", "state JSON" or "torch params".
	Format string
	// Where is the location inside the file, such as "tensor 2: dims" or
	// `params["fc.weight"][1][0]`; empty for the file as a whole.
	Where string
	// Msg says what was wrong.
	Msg string
	// Offset is the byte offset of the offending field in the input, or -1
	// when the error is not tied to a byte position.
	Offset int64
	// Err is the underlying error, if any (io.ErrUnexpectedEOF for a
	// truncated stream, a *json.SyntaxError, ...).
	Err error
}

// Error prints the one-line message.
func (e *ExchangeError) Error() string {
	var b strings.Builder
	b.WriteString(e.Format)
	b.WriteString(": ")
	if e.Where != "" {
		b.WriteString(e.Where)
		b.WriteString(": ")
	}
	// Keep the message on one line whatever an underlying error says.
	b.WriteString(strings.ReplaceAll(e.Msg, "\n", " "))
	if e.Offset >= 0 {
		fmt.Fprintf(&b, " (offset %d)", e.Offset)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ExchangeError) Unwrap() error { return e.Err }

// exWidth is the bit width of the exchange element type T.
func exWidth[T ExchangeFloat]() int {
	var z T
	if _, ok := any(z).(spec.F32); ok {
		return 32
	}
	return 64
}

// exWidthName names the element type of width w as the error messages do.
func exWidthName(w int) string {
	if w == 32 {
		return "float32"
	}
	return "float64"
}

// exBits returns the IEEE word of v (zero-extended for float32).
func exBits[T ExchangeFloat](v T, width int) uint64 {
	if width == 32 {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(float64(v))
}

// exFromBits returns the element of type T whose IEEE word is u; u must
// fit the width.
func exFromBits[T ExchangeFloat](u uint64, width int) T {
	if width == 32 {
		return T(math.Float32frombits(uint32(u)))
	}
	return T(math.Float64frombits(u))
}

// exBadNaN reports that the word u of the given width is a NaN other than
// the canonical one.
func exBadNaN(u uint64, width int) bool {
	if width == 32 {
		w := uint32(u)
		return w&0x7F800000 == 0x7F800000 && w&0x007FFFFF != 0 && w != CanonicalNaN32
	}
	return u&0x7FF0000000000000 == 0x7FF0000000000000 && u&0x000FFFFFFFFFFFFF != 0 && u != CanonicalNaN64
}

// exWord formats a word of the given width in hexadecimal.
func exWord(u uint64, width int) string {
	if width == 32 {
		return fmt.Sprintf("0x%08X", u)
	}
	return fmt.Sprintf("0x%016X", u)
}

// ParamSpec names one expected parameter and its shape.
type ParamSpec struct {
	Name  string
	Shape spec.Shape
}

// Pack is an ordered, named parameter pack: the runtime form of the
// chapter's dependent list [weight1 : Tensor α [8,2], bias1 : Tensor α [8],
// …]. Every entry keeps its own shape as a shape-erased spec.SomeTensor, so
// recovering a typed tensor needs a checked Cast (or Tensor, which does it
// by name). Names are non-empty, valid UTF-8 and unique. The zero Pack is
// empty and usable.
type Pack[T ExchangeFloat] struct {
	names  []string
	values []spec.SomeTensor[T]
	index  map[string]int
}

// NewPack builds a pack from parallel lists of names and values, in that
// order. It rejects length mismatches, empty, non-UTF-8 or duplicate names
// and shapes that spec.Shape.Check refuses. The pack shares the tensors'
// data with the caller.
func NewPack[T ExchangeFloat](names []string, values []spec.SomeTensor[T]) (Pack[T], error) {
	if len(names) != len(values) {
		return Pack[T]{}, fmt.Errorf("pack: %d names but %d values", len(names), len(values))
	}
	p := Pack[T]{
		names:  append([]string(nil), names...),
		values: append([]spec.SomeTensor[T](nil), values...),
		index:  make(map[string]int, len(names)),
	}
	for i, name := range names {
		if err := exCheckName(name); err != nil {
			return Pack[T]{}, fmt.Errorf("pack: entry %d: %v", i, err)
		}
		if j, dup := p.index[name]; dup {
			return Pack[T]{}, fmt.Errorf("pack: entry %d: name %q already used by entry %d", i, name, j)
		}
		p.index[name] = i
		if _, err := values[i].Shape().Check(0); err != nil {
			return Pack[T]{}, fmt.Errorf("pack: entry %d (%q): %v", i, name, err)
		}
	}
	return p, nil
}

// exCheckName validates a parameter name.
func exCheckName(name string) error {
	if name == "" {
		return fmt.Errorf("empty parameter name")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("parameter name %q is not valid UTF-8", name)
	}
	return nil
}

// Len is the number of entries.
func (p Pack[T]) Len() int { return len(p.names) }

// Names returns the entry names in pack order (a copy).
func (p Pack[T]) Names() []string { return append([]string(nil), p.names...) }

// At returns the name and value of entry i (0 ≤ i < Len).
func (p Pack[T]) At(i int) (string, spec.SomeTensor[T]) { return p.names[i], p.values[i] }

// Lookup returns the entry called name.
func (p Pack[T]) Lookup(name string) (spec.SomeTensor[T], bool) {
	i, ok := p.index[name]
	if !ok {
		return spec.SomeTensor[T]{}, false
	}
	return p.values[i], true
}

// Tensor recovers the entry called name as a tensor of shape want: the
// runtime analogue of SomeTensor.cast with its `value.shape = shape`
// evidence. It fails when the name is absent or the stored shape differs.
func (p Pack[T]) Tensor(name string, want spec.Shape) (spec.Tensor[T], error) {
	v, ok := p.Lookup(name)
	if !ok {
		return spec.Tensor[T]{}, fmt.Errorf("pack: no parameter %q", name)
	}
	t, err := v.Cast(want)
	if err != nil {
		return spec.Tensor[T]{}, fmt.Errorf("pack: parameter %q: %v", name, err)
	}
	return t, nil
}

// Specs lists the names and shapes in pack order.
func (p Pack[T]) Specs() []ParamSpec {
	out := make([]ParamSpec, len(p.names))
	for i, name := range p.names {
		out[i] = ParamSpec{Name: name, Shape: p.values[i].Shape()}
	}
	return out
}

// State returns the values in pack order: the model-state list that
// EncodeStateJSON and WriteTLSF32B write. Together with Names it rebuilds
// the pack through NewPack.
func (p Pack[T]) State() []spec.SomeTensor[T] {
	return append([]spec.SomeTensor[T](nil), p.values...)
}
