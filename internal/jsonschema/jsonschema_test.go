package jsonschema

import (
	"strings"
	"testing"
)

// TestValidate runs each keyword on instances that satisfy it and on
// instances that break it; the verdicts follow JSON Schema 2020-12's
// definitions of the keywords, written down by hand.
func TestValidate(t *testing.T) {
	t.Parallel()
	schema := `{
	  "$schema": "https://json-schema.org/draft/2020-12/schema",
	  "type": "object", "additionalProperties": false, "required": ["format", "n"],
	  "properties": {
	    "format": {"const": "tlcheck.x.v1"},
	    "n": {"type": "integer", "minimum": 0, "maximum": 10},
	    "r": {"type": "number"},
	    "s": {"type": "string", "pattern": "^[a-z]+$", "minLength": 2, "maxLength": 3},
	    "e": {"enum": ["a", 1]},
	    "xs": {"type": "array", "items": {"$ref": "#/$defs/v"}, "minItems": 1, "maxItems": 2},
	    "o": {"type": ["object", "null"], "additionalProperties": {"type": "boolean"}},
	    "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
	    "any": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
	    "u": {"type": "array", "uniqueItems": true}
	  },
	  "$defs": {"v": {"anyOf": [{"type": "number"}, {"enum": ["NaN", "+Inf", "-Inf"]}]}}
	}`
	s, err := Compile([]byte(schema))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		doc  string
		want string // "" valid; else a substring of the error
	}{
		{`{"format":"tlcheck.x.v1","n":3}`, ""},
		{`{"format":"tlcheck.x.v1","n":3.0}`, ""}, // 3.0 is an integer in 2020-12
		{`{"format":"tlcheck.x.v2","n":3}`, "$.format"},
		{`{"format":"tlcheck.x.v1"}`, `missing required field "n"`},
		{`{"format":"tlcheck.x.v1","n":3,"z":1}`, "$.z: unknown field"},
		{`{"format":"tlcheck.x.v1","n":-1}`, "below the minimum"},
		{`{"format":"tlcheck.x.v1","n":11}`, "above the maximum"},
		{`{"format":"tlcheck.x.v1","n":2.5}`, "number, want integer"},
		{`{"format":"tlcheck.x.v1","n":"3"}`, "string, want integer"},
		{`{"format":"tlcheck.x.v1","n":1,"r":2}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"s":"ab"}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"s":"a"}`, "shorter"},
		{`{"format":"tlcheck.x.v1","n":1,"s":"abcd"}`, "longer"},
		{`{"format":"tlcheck.x.v1","n":1,"s":"AB"}`, "does not match"},
		{`{"format":"tlcheck.x.v1","n":1,"e":1}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"e":"b"}`, "not one of"},
		{`{"format":"tlcheck.x.v1","n":1,"xs":[1.5,"+Inf"]}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"xs":["inf"]}`, "$.xs[0]"},
		{`{"format":"tlcheck.x.v1","n":1,"xs":[]}`, "fewer than 1"},
		{`{"format":"tlcheck.x.v1","n":1,"xs":[1,2,3]}`, "more than 2"},
		{`{"format":"tlcheck.x.v1","n":1,"o":null}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"o":{"a":true}}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"o":{"a":1}}`, "$.o.a"},
		{`{"format":"tlcheck.x.v1","n":1,"one":7}`, "matches 2 of oneOf"},
		{`{"format":"tlcheck.x.v1","n":1,"one":7.5}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"one":4.5}`, "matches 0 of oneOf"},
		{`{"format":"tlcheck.x.v1","n":1,"any":true}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"any":1}`, "none of anyOf"},
		{`{"format":"tlcheck.x.v1","n":1,"u":["a","b",1,2.5,{"k":1},[1]]}`, ""},
		{`{"format":"tlcheck.x.v1","n":1,"u":["a","b","a"]}`, "items 0 and 2 are equal"},
		{`{"format":"tlcheck.x.v1","n":1,"u":[1,1.0]}`, "items 0 and 1 are equal"}, // equal numbers, two spellings
		{`{"format":"tlcheck.x.v1","n":1,"u":[{"a":1,"b":2},{"b":2,"a":1}]}`, "items 0 and 1 are equal"},
		{`{"format":"tlcheck.x.v1","n":1,"u":[1,"1"]}`, ""}, // a number and a string are never equal
		{`{"format":"tlcheck.x.v1","n":1} {}`, "trailing"},
		{`[]`, "array, want object"},
	}
	for _, c := range cases {
		err := s.Validate([]byte(c.doc))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.doc, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted, want an error containing %q", c.doc, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q does not contain %q", c.doc, err, c.want)
		}
	}
}

// TestCompileRejects checks that a schema promising what the validator
// does not check is refused rather than silently weakened.
func TestCompileRejects(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ schema, want string }{
		{`{"type":"object","patternProperties":{}}`, "unsupported keyword"},
		{`{"$ref":"#/$defs/missing"}`, "unresolvable $ref"},
		{`{"properties":{"a":{"pattern":"("}}}`, "pattern"},
		{`[1]`, "not an object"},
	} {
		if _, err := Compile([]byte(c.schema)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.schema, err, c.want)
		}
	}
}
