// Package strictjson is tlcheck's one strict JSON reader. Every document
// tlcheck reads has exactly one accepted spelling (ARCHITECTURE.md, "One
// reading"), so that every consumer — tlcheck, Lean, a script — reads the
// same claim; encoding/json alone does not give that: it matches keys
// case-insensitively, keeps the last of duplicate keys and, without
// DisallowUnknownFields, ignores unknown ones. The readers here reject
// each of those:
//
//   - Object reads one JSON object as its members in document order
//     (irsem's hand-written wire decoders build on it);
//   - Decode reads one JSON value into a Go value (the certificate
//     formats' structs), accepting a key only when it is exactly the name
//     of a field of the struct it lands in, and requiring every field
//     whose tag has no omitempty, at every depth.
//
// Both reject malformed JSON, duplicate keys and any data after the value.
// Errors are *Error values naming the path of the offending member
// ("files[2].sha256") when there is one.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/limits"
)

// Error is a strict-reading failure: Path is the member concerned, in the
// form a.b[3].c ("" for the document as a whole), Msg what is wrong.
type Error struct {
	Path string
	Msg  string
}

// Error prints "Path: Msg", or Msg alone.
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// Member is one member of a decoded JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// MaxDepth bounds the nesting of a document Decode walks.
const MaxDepth = 1000

// Snippet renders a raw JSON value for an error message: one line, at most
// 40 bytes.
func Snippet(raw []byte) string {
	s := strings.Join(strings.Fields(string(raw)), " ")
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return s
}

// SyntaxMessage turns an encoding/json error into a one-line message:
// "malformed JSON at byte N: …", "malformed JSON: unexpected end of input"
// or "malformed JSON: …".
func SyntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("malformed JSON at byte %d: %v", se.Offset, se)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "malformed JSON: unexpected end of input"
	}
	return "malformed JSON: " + err.Error()
}

// DuplicateError reports a key that occurs twice in one object.
type DuplicateError struct{ Key string }

// Error prints "duplicate field".
func (e *DuplicateError) Error() string { return "duplicate field" }

// TooManyError reports an object with more members than its bound.
type TooManyError struct{ Max int }

// Error prints "an object of more than N members".
func (e *TooManyError) Error() string { return fmt.Sprintf("an object of more than %d members", e.Max) }

// UnknownKeyError reports a key that is not one of an object's allowed
// keys.
type UnknownKeyError struct{ Key string }

// Error prints "unknown field "key"".
func (e *UnknownKeyError) Error() string { return "unknown field " + limits.Quote(e.Key) }

// Members is the streaming form of the strict object reader, for decoders
// that read a large document token by token: dec has just returned an
// object's '{', and Members reads its members in document order. For each
// key it checks that the key is one of keys (nil: any key) — else
// *UnknownKeyError — and not a repeat — else *DuplicateError — and then
// calls f with the key and dec positioned before the member's value, which
// f must read completely. It returns before the object's closing '}',
// which the caller reads. A decoder error is returned as dec reports it,
// f's error unchanged.
func Members(dec *json.Decoder, keys []string, f func(key string) error) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, ok := tok.(string)
		if !ok {
			return errors.New("expected an object key")
		}
		if keys != nil && !slices.Contains(keys, key) {
			return &UnknownKeyError{key}
		}
		if seen[key] {
			return &DuplicateError{key}
		}
		seen[key] = true
		if err := f(key); err != nil {
			return err
		}
	}
	return nil
}

// Object reads exactly one JSON object of at most max members from raw
// and returns its members in document order (Members, collecting each
// value). Malformed JSON, a value that is not an object, a duplicate key
// (*DuplicateError), more than max members (*TooManyError) and trailing
// data are errors.
func Object(raw []byte, max int) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New(SyntaxMessage(err))
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("expected a JSON object, got %s", Snippet(raw))
	}
	var ms []Member
	err = Members(dec, nil, func(key string) error {
		if len(ms) >= max {
			return &TooManyError{max}
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return &Error{Msg: SyntaxMessage(err)}
		}
		ms = append(ms, Member{key, v})
		return nil
	})
	var de *DuplicateError
	var tm *TooManyError
	var se *Error
	switch {
	case errors.As(err, &de) || errors.As(err, &tm) || errors.As(err, &se):
		return nil, err
	case err != nil:
		return nil, errors.New(SyntaxMessage(err))
	}
	if _, err := dec.Token(); err != nil {
		return nil, errors.New(SyntaxMessage(err))
	}
	if err := expectEOF(dec); err != nil {
		return nil, err
	}
	return ms, nil
}

// expectEOF requires the decoder to be at the end of its input.
func expectEOF(dec *json.Decoder) error {
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			return errors.New("trailing data after the JSON value")
		}
		return fmt.Errorf("trailing data after the JSON value (%s)", SyntaxMessage(err))
	}
	return nil
}

// Decode reads exactly one JSON value from data into v (a non-nil
// pointer), strictly: besides malformed JSON and trailing data it rejects
// a duplicate key in any object, and a key of an object decoded into a
// struct that is not exactly (case included) the JSON name of one of the
// struct's fields — an unknown field or a case variant — and an object
// decoded into a struct that lacks a field whose tag has no omitempty (a
// required field: "missing field", at the struct's path) or gives it the
// value null. Objects decoded
// into maps, interfaces, json.RawMessage or a type with its own
// UnmarshalJSON are checked for duplicate keys only. A value of the wrong
// JSON type is an error naming its path.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return &Error{Msg: fmt.Sprintf("strictjson: Decode needs a non-nil pointer, got %T", v)}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := walk(dec, rv.Type().Elem(), "", 0, false); err != nil {
		return err
	}
	if err := expectEOF(dec); err != nil {
		return &Error{Msg: err.Error()}
	}
	dec = json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &Error{Path: te.Field, Msg: fmt.Sprintf("wrong JSON type: %s where %s was expected", te.Value, te.Type)}
		}
		return &Error{Msg: SyntaxMessage(err)}
	}
	return nil
}

var (
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	rawType         = reflect.TypeFor[json.RawMessage]()
)

// field is one JSON member a struct accepts: its Go type, and whether it
// is required (its tag has no omitempty).
type field struct {
	typ      reflect.Type
	required bool
}

// fieldNames returns the JSON names of struct type t's fields, as
// encoding/json names them (the tag's name, else the Go name; "-" and
// unexported fields have none), embedded structs' fields included.
func fieldNames(t reflect.Type) map[string]field {
	return fieldNamesOf(t, map[reflect.Type]bool{})
}

// fieldNamesOf is fieldNames, with the embedded structs already visited
// (a struct may embed a pointer to itself).
func fieldNamesOf(t reflect.Type, visited map[reflect.Type]bool) map[string]field {
	names := map[string]field{}
	if visited[t] {
		return names
	}
	visited[t] = true
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for k, v := range fieldNamesOf(et, visited) {
					if _, ok := names[k]; !ok {
						names[k] = v
					}
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = field{typ: f.Type, required: !slices.Contains(strings.Split(opts, ","), "omitempty")}
	}
	return names
}

// missingFields returns the first (by name) required field of fields not
// in seen, or "".
func missingFields(fields map[string]field, seen map[string]bool) string {
	var missing []string
	for name, f := range fields {
		if f.required && !seen[name] {
			missing = append(missing, name)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	slices.Sort(missing)
	return missing[0]
}

// walk reads one JSON value from dec, checking it against type t (nil:
// any value) at path; required refuses null (a required member's null
// would be a second spelling of its zero value, or no value at all).
func walk(dec *json.Decoder, t reflect.Type, path string, depth int, required bool) error {
	if depth > MaxDepth {
		return &Error{Path: path, Msg: fmt.Sprintf("nested more than %d deep", MaxDepth)}
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && (t == rawType || t.Kind() == reflect.Interface || reflect.PointerTo(t).Implements(unmarshalerType) || t.Implements(unmarshalerType)) {
		t = nil // no field names to hold it to
	}
	tok, err := dec.Token()
	if err != nil {
		return &Error{Path: path, Msg: SyntaxMessage(err)}
	}
	if tok == nil && required {
		return &Error{Path: path, Msg: "null where a value is required"}
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := walk(dec, elem, fmt.Sprintf("%s[%d]", path, i), depth+1, false); err != nil {
				return err
			}
		}
	case '{':
		var fields map[string]field
		var elem reflect.Type
		switch {
		case t != nil && t.Kind() == reflect.Struct:
			fields = fieldNames(t)
		case t != nil && t.Kind() == reflect.Map:
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return &Error{Path: path, Msg: SyntaxMessage(err)}
			}
			key, _ := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return &Error{Path: at, Msg: "duplicate field"}
			}
			seen[key] = true
			vt, req := elem, false
			if fields != nil {
				ft, ok := fields[key]
				if !ok {
					return &Error{Path: at, Msg: "unknown field"}
				}
				vt, req = ft.typ, ft.required
			}
			if err := walk(dec, vt, at, depth+1, req); err != nil {
				return err
			}
		}
		if missing := missingFields(fields, seen); missing != "" {
			at := missing
			if path != "" {
				at = path + "." + missing
			}
			return &Error{Path: at, Msg: "missing field"}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return &Error{Path: path, Msg: SyntaxMessage(err)}
	}
	return nil
}

// Spelling compares a document with the one spelling its writer gives it
// (want: the writer's bytes for the value decoded from got) and returns
// nil when they are byte-identical. Otherwise the *Error names the JSON
// path of the member at the first differing byte and quotes both
// spellings there, escaped, so whitespace padding, reordered or spelled-
// out-again members and numbers in another notation each fail at a place
// a reader can find.
func Spelling(got, want []byte) error {
	if bytes.Equal(got, want) {
		return nil
	}
	off := 0
	for off < len(got) && off < len(want) && got[off] == want[off] {
		off++
	}
	line := 1 + bytes.Count(got[:off], []byte{'\n'})
	return &Error{Path: PathAt(got, off), Msg: fmt.Sprintf("not the writer's spelling at byte %d (line %d): found %s, the writer writes %s",
		off, line, quoteAround(got, off), quoteAround(want, off))}
}

// quoteAround quotes (Go syntax, control characters escaped) at most 16
// bytes of b from off; "end of file" when off is past the end.
func quoteAround(b []byte, off int) string {
	if off >= len(b) {
		return "end of file"
	}
	end := min(off+16, len(b))
	return strconv.Quote(string(b[off:end]))
}

// PathAt returns the JSON path (a.b[3].c) of the innermost member whose
// token spans or follows byte offset off of data ("" for the document
// itself, or where data stops parsing before off).
func PathAt(data []byte, off int) string {
	type frame struct {
		obj     bool
		key     string
		haveKey bool
		idx     int
	}
	var stack []frame
	path := func(n int) string {
		var b strings.Builder
		for _, f := range stack[:n] {
			switch {
			case f.obj && f.haveKey:
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(f.key)
			case !f.obj:
				fmt.Fprintf(&b, "[%d]", f.idx)
			}
		}
		return b.String()
	}
	done := func() { // the current member of the top frame is complete
		if n := len(stack); n > 0 {
			if stack[n-1].obj {
				stack[n-1].haveKey = false
			} else {
				stack[n-1].idx++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return path(len(stack))
		}
		past := dec.InputOffset() > int64(off)
		n := len(stack)
		if n > 0 && stack[n-1].obj && !stack[n-1].haveKey {
			if key, ok := tok.(string); ok {
				stack[n-1].key, stack[n-1].haveKey = key, true
				if past {
					return path(n)
				}
				continue
			}
		}
		switch tok {
		case json.Delim('}'), json.Delim(']'):
			if n > 0 && stack[n-1].obj {
				stack[n-1].haveKey = false
			}
			p := path(n - 1)
			if n > 0 {
				stack = stack[:n-1]
			}
			if past {
				return p
			}
			done()
		case json.Delim('{'), json.Delim('['):
			p := path(n)
			if past {
				return p
			}
			stack = append(stack, frame{obj: tok == json.Delim('{')})
		default:
			if past {
				return path(n)
			}
			done()
		}
	}
}
