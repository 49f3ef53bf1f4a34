// Package jsonschema validates JSON documents against the subset of JSON
// Schema (draft 2020-12) that tlcheck's published schemas use:
// type (one name or a list), const, enum, properties, required,
// additionalProperties (false or a schema), items, minItems, maxItems,
// minimum, maximum, pattern, minLength, maxLength, oneOf, anyOf, and
// $ref to "#/$defs/NAME". Annotations ($schema, $id, title, description,
// $comment) are ignored. A keyword outside the subset is an error, not
// silently accepted, so a schema cannot promise what is not checked.
//
// Numbers are compared exactly: the instance is decoded with UseNumber
// and compared through math/big, so an integer bound is never rounded.
package jsonschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Schema is a compiled schema document.
type Schema struct {
	root map[string]any
	defs map[string]any
	res  map[string]*regexp.Regexp
}

// Compile parses a schema document.
func Compile(data []byte) (*Schema, error) {
	v, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	root, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schema: not an object")
	}
	s := &Schema{root: root, res: map[string]*regexp.Regexp{}}
	if d, ok := root["$defs"].(map[string]any); ok {
		s.defs = d
	}
	// Check every keyword and pattern once, up front.
	if err := s.lint(root, "#"); err != nil {
		return nil, err
	}
	return s, nil
}

var known = map[string]bool{
	"type": true, "const": true, "enum": true, "properties": true, "required": true,
	"additionalProperties": true, "items": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minimum": true, "maximum": true, "pattern": true, "minLength": true, "maxLength": true,
	"oneOf": true, "anyOf": true, "$ref": true, "$defs": true,
	"$schema": true, "$id": true, "title": true, "description": true, "$comment": true,
}

func (s *Schema) lint(node any, at string) error {
	m, ok := node.(map[string]any)
	if !ok {
		if b, ok := node.(bool); ok && b {
			return nil
		}
		return fmt.Errorf("schema %s: not a schema object", at)
	}
	keys := sortedKeys(m)
	for _, k := range keys {
		if !known[k] {
			return fmt.Errorf("schema %s: unsupported keyword %q", at, k)
		}
	}
	if p, ok := m["pattern"].(string); ok {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("schema %s: pattern: %v", at, err)
		}
		s.res[p] = re
	}
	if r, ok := m["$ref"].(string); ok {
		name, found := strings.CutPrefix(r, "#/$defs/")
		if !found || s.defs[name] == nil {
			return fmt.Errorf("schema %s: unresolvable $ref %q", at, r)
		}
	}
	for _, k := range []string{"$defs", "properties"} {
		if sub, ok := m[k].(map[string]any); ok {
			for _, n := range sortedKeys(sub) {
				if err := s.lint(sub[n], at+"/"+k+"/"+n); err != nil {
					return err
				}
			}
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := m[k]; ok {
			if b, isBool := sub.(bool); isBool && !b && k == "additionalProperties" {
				continue
			}
			if err := s.lint(sub, at+"/"+k); err != nil {
				return err
			}
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if list, ok := m[k].([]any); ok {
			for i, sub := range list {
				if err := s.lint(sub, fmt.Sprintf("%s/%s/%d", at, k, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Validate checks one JSON document and returns the first violation,
// naming its JSON path.
func (s *Schema) Validate(doc []byte) error {
	v, err := decode(doc)
	if err != nil {
		return err
	}
	return s.check(s.root, v, "$")
}

func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func typeOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if r, ok := new(big.Rat).SetString(x.String()); ok && r.IsInt() {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

func num(v any) (*big.Rat, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	return new(big.Rat).SetString(n.String())
}

// equal compares two decoded JSON values, numbers by exact value.
func equal(a, b any) bool {
	if x, ok := num(a); ok {
		y, ok := num(b)
		return ok && x.Cmp(y) == 0
	}
	return reflect.DeepEqual(a, b)
}

// check checks the instance v (at the path at) against the schema node:
// a boolean schema, or the keywords of a schema object in a fixed order —
// $ref, type, const and enum, the keywords of v's kind, anyOf, oneOf —
// returning the first violation.
func (s *Schema) check(node, v any, at string) error {
	if b, ok := node.(bool); ok {
		if !b {
			return fmt.Errorf("%s: not allowed", at)
		}
		return nil
	}
	m := node.(map[string]any)
	if r, ok := m["$ref"].(string); ok {
		if err := s.check(s.defs[strings.TrimPrefix(r, "#/$defs/")], v, at); err != nil {
			return err
		}
	}
	if err := checkValue(m, v, at); err != nil {
		return err
	}
	var err error
	switch x := v.(type) {
	case string:
		err = s.checkString(m, x, at)
	case json.Number:
		err = checkNumber(m, x, at)
	case []any:
		err = s.checkArray(m, x, at)
	case map[string]any:
		err = s.checkObject(m, x, at)
	}
	if err != nil {
		return err
	}
	return s.checkCombinators(m, v, at)
}

// checkValue checks v against the keywords type, const and enum of m.
func checkValue(m map[string]any, v any, at string) error {
	if t, ok := m["type"]; ok {
		var names []string
		switch tt := t.(type) {
		case string:
			names = []string{tt}
		case []any:
			for _, n := range tt {
				s, _ := n.(string)
				names = append(names, s)
			}
		}
		got, match := typeOf(v), false
		for _, n := range names {
			match = match || typeMatches(n, got)
		}
		if !match {
			return fmt.Errorf("%s: %s, want %s", at, got, strings.Join(names, " or "))
		}
	}
	if c, ok := m["const"]; ok && !equal(c, v) {
		return fmt.Errorf("%s: %v, want the constant %v", at, v, c)
	}
	if e, ok := m["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || equal(x, v)
		}
		if !found {
			return fmt.Errorf("%s: %v is not one of %v", at, v, e)
		}
	}
	return nil
}

// checkString checks the string x against minLength, maxLength (in
// characters) and pattern.
func (s *Schema) checkString(m map[string]any, x string, at string) error {
	n := utf8.RuneCountInString(x)
	if lim, ok := num(m["minLength"]); ok && big.NewRat(int64(n), 1).Cmp(lim) < 0 {
		return fmt.Errorf("%s: shorter than %v characters", at, lim.RatString())
	}
	if lim, ok := num(m["maxLength"]); ok && big.NewRat(int64(n), 1).Cmp(lim) > 0 {
		return fmt.Errorf("%s: longer than %v characters", at, lim.RatString())
	}
	if p, ok := m["pattern"].(string); ok && !s.res[p].MatchString(x) {
		return fmt.Errorf("%s: %q does not match %s", at, x, p)
	}
	return nil
}

// checkNumber checks the number x against minimum and maximum.
func checkNumber(m map[string]any, x json.Number, at string) error {
	r, _ := num(x)
	if lim, ok := num(m["minimum"]); ok && r.Cmp(lim) < 0 {
		return fmt.Errorf("%s: %v is below the minimum %v", at, x, lim.RatString())
	}
	if lim, ok := num(m["maximum"]); ok && r.Cmp(lim) > 0 {
		return fmt.Errorf("%s: %v is above the maximum %v", at, x, lim.RatString())
	}
	return nil
}

// checkArray checks the array x against minItems, maxItems, uniqueItems
// and items.
func (s *Schema) checkArray(m map[string]any, x []any, at string) error {
	if lim, ok := num(m["minItems"]); ok && big.NewRat(int64(len(x)), 1).Cmp(lim) < 0 {
		return fmt.Errorf("%s: fewer than %v items", at, lim.RatString())
	}
	if lim, ok := num(m["maxItems"]); ok && big.NewRat(int64(len(x)), 1).Cmp(lim) > 0 {
		return fmt.Errorf("%s: more than %v items", at, lim.RatString())
	}
	if u, _ := m["uniqueItems"].(bool); u {
		seen := make(map[string]int, len(x))
		for i, e := range x {
			k := instanceKey(e)
			if j, dup := seen[k]; dup {
				return fmt.Errorf("%s: items %d and %d are equal (uniqueItems)", at, j, i)
			}
			seen[k] = i
		}
	}
	if it, ok := m["items"]; ok {
		for i, e := range x {
			if err := s.check(it, e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkObject checks the object x against required, properties and
// additionalProperties, its fields in sorted order.
func (s *Schema) checkObject(m map[string]any, x map[string]any, at string) error {
	if req, ok := m["required"].([]any); ok {
		for _, r := range req {
			name, _ := r.(string)
			if _, ok := x[name]; !ok {
				return fmt.Errorf("%s: missing required field %q", at, name)
			}
		}
	}
	props, _ := m["properties"].(map[string]any)
	for _, k := range sortedKeys(x) {
		sub := at + "." + k
		if p, ok := props[k]; ok {
			if err := s.check(p, x[k], sub); err != nil {
				return err
			}
			continue
		}
		if ap, ok := m["additionalProperties"]; ok {
			if b, isBool := ap.(bool); isBool && !b {
				return fmt.Errorf("%s: unknown field", sub)
			}
			if err := s.check(ap, x[k], sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkCombinators checks v against anyOf (at least one subschema) and
// oneOf (exactly one).
func (s *Schema) checkCombinators(m map[string]any, v any, at string) error {
	if list, ok := m["anyOf"].([]any); ok {
		var first error
		matched := false
		for _, sub := range list {
			if err := s.check(sub, v, at); err == nil {
				matched = true
				break
			} else if first == nil {
				first = err
			}
		}
		if !matched {
			return fmt.Errorf("%s: matches none of anyOf (first: %v)", at, first)
		}
	}
	if list, ok := m["oneOf"].([]any); ok {
		n := 0
		var errs []string
		for _, sub := range list {
			if err := s.check(sub, v, at); err == nil {
				n++
			} else {
				errs = append(errs, err.Error())
			}
		}
		if n != 1 {
			return fmt.Errorf("%s: matches %d of oneOf's %d schemas, want exactly 1 (%s)", at, n, len(list), strings.Join(errs, "; "))
		}
	}
	return nil
}

// instanceKey is a canonical spelling of a JSON instance under JSON
// Schema's equality: numbers by exact value (1 and 1.0 are equal),
// objects independent of member order, arrays and strings as they are.
func instanceKey(v any) string {
	switch x := v.(type) {
	case json.Number:
		r, ok := num(x)
		if !ok {
			return "n:" + string(x)
		}
		return "n:" + r.RatString()
	case string:
		return "s:" + strconv.Quote(x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = instanceKey(e)
		}
		return "a:[" + strings.Join(parts, ",") + "]"
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + ":" + instanceKey(x[k])
		}
		return "o:{" + strings.Join(parts, ",") + "}"
	default:
		return fmt.Sprintf("%T:%v", v, v)
	}
}

// StructFields lists, sorted, the JSON member names that encoding/json
// writes for the struct type t: each field's json tag name (the field is
// skipped for "-" or an empty name), with embedded structs flattened. A
// schema test compares it with a schema's properties so that the two
// cannot drift apart.
func StructFields(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous {
			out = append(out, StructFields(f.Type)...)
			continue
		}
		name := strings.Split(f.Tag.Get("json"), ",")[0]
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
