package irsem

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/tlcheck/tlcheck/internal/strictjson"
)

// MaxDocumentBytes bounds the size of any document the decoders accept
// (graph, payload or tensor).
const MaxDocumentBytes = 1 << 28

// jfield is one member of a decoded JSON object.
type jfield struct {
	key string
	raw json.RawMessage
}

// snippet renders a raw JSON value for an error message (strictjson).
func snippet(raw []byte) string { return strictjson.Snippet(raw) }

// syntaxMsg turns an encoding/json error into a one-line message
// (strictjson).
func syntaxMsg(err error) string { return strictjson.SyntaxMessage(err) }

// decodeObject reads exactly one JSON object of at most 64 members.
func decodeObject(raw []byte) ([]jfield, error) { return decodeObjectN(raw, 64) }

// decodeObjectN reads exactly one JSON object from raw with the strict
// reader (strictjson.Object) and returns its members in document order.
// Duplicate keys, more than max members and trailing data are errors; a
// duplicate key is an *Error naming it.
func decodeObjectN(raw []byte, max int) ([]jfield, error) {
	ms, err := strictjson.Object(raw, max)
	if err != nil {
		var de *strictjson.DuplicateError
		if errors.As(err, &de) {
			return nil, &Error{Node: -1, Field: de.Key, Elem: -1, Msg: de.Error()}
		}
		return nil, err
	}
	fs := make([]jfield, len(ms))
	for i, m := range ms {
		fs[i] = jfield{m.Key, m.Value}
	}
	return fs, nil
}

// streamArray decodes the JSON array raw one element at a time, calling f
// with each element's index and the decoder positioned before it. More
// than max elements is an error raised before the excess is read, so a
// long array costs nothing beyond its bound. It returns the element count.
func streamArray(raw []byte, max int, f func(i int, dec *json.Decoder) error) (int, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '[' {
		return 0, fmt.Errorf("expected a JSON array, got %s", snippet(raw))
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil {
		return 0, errors.New(syntaxMsg(err))
	}
	i := 0
	for dec.More() {
		if i >= max {
			return i, &tooManyError{max}
		}
		if err := f(i, dec); err != nil {
			return i, err
		}
		i++
	}
	if _, err := dec.Token(); err != nil {
		return i, errors.New(syntaxMsg(err))
	}
	return i, nil
}

// tooManyError reports an array longer than its bound.
type tooManyError struct{ max int }

func (e *tooManyError) Error() string { return fmt.Sprintf("more than %d entries", e.max) }

// isTooMany reports whether err is a tooManyError.
func isTooMany(err error) bool {
	var t *tooManyError
	return errors.As(err, &t)
}

// scalarToken reads one array element that must be a JSON scalar: a
// json.Number, string, bool or nil (null).
func scalarToken(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New(syntaxMsg(err))
	}
	if d, ok := tok.(json.Delim); ok {
		if d == '[' {
			return nil, errors.New("got an array")
		}
		return nil, errors.New("got an object")
	}
	return tok, nil
}

// tokenString renders a scalar token for an error message.
func tokenString(tok any) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return strconv.Quote(snippet([]byte(v)))
	case json.Number:
		return snippet([]byte(v))
	}
	return "?"
}

// decodeString reads one JSON string.
func decodeString(raw []byte) (string, error) {
	t := bytes.TrimLeft(raw, " \t\r\n")
	if len(t) == 0 || t[0] != '"' {
		return "", fmt.Errorf("expected a JSON string, got %s", snippet(raw))
	}
	var s string
	if err := json.Unmarshal(t, &s); err != nil {
		return "", errors.New(syntaxMsg(err))
	}
	return s, nil
}

// isNat reports whether s is a canonical natural number: 0 or a digit
// string without a leading zero.
func isNat(s string) bool {
	if s == "" || (len(s) > 1 && s[0] == '0') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// decodeUint reads a JSON number that is an integer in [0, max].
func decodeUint(raw []byte, max uint64) (uint64, error) {
	s := string(bytes.TrimSpace(raw))
	if !isNat(s) {
		return 0, fmt.Errorf("expected an integer in [0, %d], got %s", max, snippet(raw))
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || v > max {
		return 0, fmt.Errorf("expected an integer in [0, %d], got %s", max, snippet(raw))
	}
	return v, nil
}

// decodeInt reads a JSON number that is an integer in [0, max].
func decodeInt(raw []byte, max int) (int, error) {
	v, err := decodeUint(raw, uint64(max))
	return int(v), err
}

// decodeInts reads an array of at most maxLen integers in [0, max].
func decodeInts(raw []byte, max, maxLen int) ([]int, error) {
	out := []int{}
	_, err := streamArray(raw, maxLen, func(i int, dec *json.Decoder) error {
		tok, err := scalarToken(dec)
		if err != nil {
			return fmt.Errorf("entry %d: expected an integer in [0, %d], %w", i, max, err)
		}
		num, ok := tok.(json.Number)
		if !ok {
			return fmt.Errorf("entry %d: expected an integer in [0, %d], got %s", i, max, tokenString(tok))
		}
		v, err := decodeInt([]byte(num), max)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		out = append(out, v)
		return nil
	})
	return out, err
}

// maxExtent bounds one axis extent on the wire (a shape with a zero extent
// may have others this large; Shape.Check bounds the element count).
const maxExtent = math.MaxInt32

// appendInts writes [a,b,c].
func appendInts(b []byte, xs []int) []byte {
	b = append(b, '[')
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return append(b, ']')
}

// readAll reads a whole document from r, at most MaxDocumentBytes.
func readAll(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxDocumentBytes {
		return nil, docErrf("", "document is larger than %d bytes", MaxDocumentBytes)
	}
	return data, nil
}
