package strictjson

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

type inner struct {
	SHA string `json:"sha256"`
	N   int    `json:"n,omitempty"`
}

type doc struct {
	Format string            `json:"format"` // required: no omitempty
	Files  []inner           `json:"files,omitempty"`
	Extra  map[string]int    `json:"extra,omitempty"`
	Raw    json.RawMessage   `json:"raw,omitempty"`
	Ptr    *inner            `json:"ptr,omitempty"`
	Any    any               `json:"any,omitempty"`
	Named  map[string]*inner `json:"named,omitempty"`
	Skip   int               `json:"-"`
	GoName int               `json:",omitempty"`
}

// TestDecode: every second spelling of a document is refused, naming the
// member; the one spelling decodes.
func TestDecode(t *testing.T) {
	cases := []struct {
		name, in, want string // want "" for success
	}{
		{"ok", `{"format":"f","files":[{"sha256":"a","n":1}],"extra":{"a":1},"raw":{"x":[1]},"ptr":{"sha256":"b"},"any":{"k":1},"named":{"m":{"sha256":"c"}},"GoName":2}`, ""},
		{"unknown", `{"format":"f","color":1}`, "color: unknown field"},
		{"missing required", `{"files":[]}`, "format: missing field"},
		{"missing required, nested in an array", `{"format":"f","files":[{"sha256":"a"},{"n":1}]}`, "files[1].sha256: missing field"},
		{"missing required, behind a pointer", `{"format":"f","ptr":{"n":1}}`, "ptr.sha256: missing field"},
		{"missing required, in a map of structs", `{"format":"f","named":{"m":{}}}`, "named.m.sha256: missing field"},
		{"case variant instead of the required key", `{"format":"f","files":[{"SHA256":"a"}]}`, "files[0].SHA256: unknown field"},
		{"required null", `{"format":null}`, "format: null where a value is required"},
		{"required null, nested", `{"format":"f","files":[{"sha256":null}]}`, "files[0].sha256: null where a value is required"},
		{"optional null", `{"format":"f","ptr":null,"files":null}`, ""},
		{"optional absent", `{"format":"f","files":[{"sha256":"a"}]}`, ""},
		{"case variant", `{"Format":"f"}`, "Format: unknown field"},
		{"case variant of a Go name", `{"goname":1}`, "goname: unknown field"},
		{"skipped field", `{"Skip":1}`, "Skip: unknown field"},
		{"duplicate", `{"format":"f","format":"g"}`, "format: duplicate field"},
		{"nested unknown", `{"format":"f","files":[{"sha256":"a"},{"sha":"b"}]}`, "files[1].sha: unknown field"},
		{"nested case variant", `{"ptr":{"SHA256":"b"}}`, "ptr.SHA256: unknown field"},
		{"map duplicate", `{"extra":{"a":1,"a":2}}`, "extra.a: duplicate field"},
		{"map of structs", `{"named":{"m":{"sha256":"c","x":1}}}`, "named.m.x: unknown field"},
		{"raw duplicate", `{"raw":{"x":1,"x":2}}`, "raw.x: duplicate field"},
		{"any duplicate", `{"any":[{"k":1,"k":1}]}`, "any[0].k: duplicate field"},
		{"wrong type", `{"format":1}`, "format: wrong JSON type: number where string was expected"},
		{"trailing", `{"format":"f"} {}`, "trailing data after the JSON value"},
		{"trailing garbage", `{"format":"f"}x`, "trailing data"},
		{"truncated", `{"format":"f"`, "malformed JSON"},
		{"deep", `{"any":` + strings.Repeat("[", MaxDepth+5) + strings.Repeat("]", MaxDepth+5) + `}`, "nested more than 1000 deep"},
	}
	for _, c := range cases {
		var d doc
		err := Decode([]byte(c.in), &d)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		case c.want != "":
			var se *Error
			if !errors.As(err, &se) {
				t.Errorf("%s: %T is not an *Error", c.name, err)
			}
		}
	}
	var d doc
	if err := Decode([]byte(cases[0].in), &d); err != nil || d.Files[0].SHA != "a" || d.Named["m"].SHA != "c" || d.GoName != 2 {
		t.Errorf("the one spelling decoded to %+v (%v)", d, err)
	}
	if err := Decode([]byte(`{}`), d); err == nil {
		t.Error("a non-pointer must be refused")
	}
}

// TestObject: members in document order; duplicates, excess members,
// non-objects and trailing data refused.
func TestObject(t *testing.T) {
	ms, err := Object([]byte(` {"b":1,"a":[2]} `), 2)
	if err != nil || len(ms) != 2 || ms[0].Key != "b" || ms[1].Key != "a" || string(ms[1].Value) != "[2]" {
		t.Fatalf("got %v, %v", ms, err)
	}
	var de *DuplicateError
	if _, err := Object([]byte(`{"a":1,"a":1}`), 4); !errors.As(err, &de) || de.Key != "a" {
		t.Errorf("duplicate: %v", err)
	}
	var tm *TooManyError
	if _, err := Object([]byte(`{"a":1,"b":1,"c":1}`), 2); !errors.As(err, &tm) || err.Error() != "an object of more than 2 members" {
		t.Errorf("too many: %v", err)
	}
	for _, in := range []string{`[1]`, `{"a":1}{}`, `{"a":1`, `{1:2}`} {
		if _, err := Object([]byte(in), 4); err == nil {
			t.Errorf("%s: accepted", in)
		}
	}
}

// TestMembers: the streaming reader refuses unknown and repeated keys
// before the callback sees them, and passes the callback's error.
func TestMembers(t *testing.T) {
	stop := errors.New("stop")
	cases := []struct {
		name, in string
		keys     []string
		check    func(error) bool
		want     []string // keys the callback saw
	}{
		{"ok", `{"a":1,"b":[2]}`, []string{"a", "b"}, func(err error) bool { return err == nil }, []string{"a", "b"}},
		{"any key", `{"x":1}`, nil, func(err error) bool { return err == nil }, []string{"x"}},
		{"unknown", `{"a":1,"A":2}`, []string{"a"}, func(err error) bool {
			var ue *UnknownKeyError
			return errors.As(err, &ue) && ue.Key == "A" && err.Error() == `unknown field "A"`
		}, []string{"a"}},
		{"duplicate", `{"a":1,"a":2}`, nil, func(err error) bool {
			var de *DuplicateError
			return errors.As(err, &de) && de.Key == "a"
		}, []string{"a"}},
		{"callback error", `{"b":1}`, nil, func(err error) bool { return errors.Is(err, stop) }, []string{"b"}},
	}
	for _, c := range cases {
		dec := json.NewDecoder(strings.NewReader(c.in))
		if _, err := dec.Token(); err != nil {
			t.Fatal(err)
		}
		var saw []string
		err := Members(dec, c.keys, func(key string) error {
			saw = append(saw, key)
			if c.name == "callback error" {
				return stop
			}
			var v json.RawMessage
			return dec.Decode(&v)
		})
		if !c.check(err) || strings.Join(saw, ",") != strings.Join(c.want, ",") {
			t.Errorf("%s: err %v, saw %v, want %v", c.name, err, saw, c.want)
		}
	}
}

type selfEmbed struct {
	*selfEmbed
	Name string `json:"name"`
}

type Base struct {
	ID int `json:"id"`
}

type withBase struct {
	Base
	Name string `json:"name"`
}

// TestDecodeEmbedded: an embedded struct's fields are the outer object's
// keys (as encoding/json reads them), and a struct that embeds itself
// terminates.
func TestDecodeEmbedded(t *testing.T) {
	var w withBase
	if err := Decode([]byte(`{"id":3,"name":"n"}`), &w); err != nil || w.ID != 3 {
		t.Errorf("embedded: %+v, %v", w, err)
	}
	if err := Decode([]byte(`{"ID":3}`), &w); err == nil {
		t.Error("a case variant of an embedded field was accepted")
	}
	var s selfEmbed
	if err := Decode([]byte(`{"name":"n"}`), &s); err != nil || s.Name != "n" {
		t.Errorf("self-embedding: %+v, %v", s, err)
	}
}

// FuzzDecode: no input makes the strict reader panic, and what it accepts
// encoding/json accepts too.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"format":"f","files":[{"sha256":"a"}]}`, `{"raw":{"x":[1,{"y":null}]}}`, `[`, `{"a":1,"a":2}`, `{"any":[[[]]]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var d doc
		if Decode(data, &d) == nil {
			var e doc
			if err := json.Unmarshal(data, &e); err != nil {
				t.Fatalf("strict accepted what encoding/json refuses: %v", err)
			}
		}
		_, _ = Object(data, 8)
	})
}

// TestSpelling: the first byte where a document leaves its writer's
// spelling is named by its JSON path; the identical bytes pass.
func TestSpelling(t *testing.T) {
	want := "{\n \"format\": \"f\",\n \"files\": [\n  {\n   \"sha256\": \"a\",\n   \"n\": 1\n  }\n ]\n}\n"
	cases := []struct {
		name, got, path, msg string // path "-" for success
	}{
		{"identical", want, "-", ""},
		{"padding after a value", strings.Replace(want, `"f",`, `"f" ,`, 1), "files", `found " ,`},
		{"number spelled otherwise", strings.Replace(want, `"n": 1`, `"n": 1.0`, 1), "files[0].n", `found ".0`},
		{"reordered members", strings.Replace(want, "\"sha256\": \"a\",\n   \"n\": 1", "\"n\": 1,\n   \"sha256\": \"a\"", 1), "files[0].n", `found "n\": 1`},
		{"trailing whitespace", want + "  ", "", "the writer writes end of file"},
		{"truncated", want[:len(want)-2], "", "found end of file"},
		{"control character in padding", strings.Replace(want, "\n \"files\"", "\n\r \"files\"", 1), "files", `\r`},
	}
	for _, c := range cases {
		err := Spelling([]byte(c.got), []byte(want))
		if c.path == "-" {
			if err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
			continue
		}
		var se *Error
		if !errors.As(err, &se) || se.Path != c.path || !strings.Contains(se.Msg, c.msg) || strings.ContainsAny(se.Msg, "\n\r") {
			t.Errorf("%s: got %#v, want path %q and %q in a one-line message", c.name, err, c.path, c.msg)
		}
	}
}
