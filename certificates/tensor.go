package certificates

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// Tensor is an exact tensor in a certificate: its shape and its values as
// "p/q" strings.
type Tensor struct {
	Shape  []int    `json:"shape"`
	Values []string `json:"values"`
}

// RatTensor encodes an exact tensor.
func RatTensor(t spec.Tensor[spec.Rat]) Tensor {
	out := Tensor{Shape: append([]int{}, t.Shape...), Values: make([]string, len(t.Data))}
	for i, v := range t.Data {
		out.Values[i] = v.String()
	}
	return out
}

// DecodeRat parses a safe-alphabet rational.
func DecodeRat(file, field, v string) (spec.Rat, error) {
	if err := CheckRat(file, field, v); err != nil {
		return spec.Rat{}, err
	}
	r, ok := new(big.Rat).SetString(v)
	if !ok {
		return spec.Rat{}, FieldErr(file, field, "malformed rational %q", Truncate(v))
	}
	return spec.RatFromBig(r), nil
}

// Decode checks and converts a certificate tensor.
func (t Tensor) Decode(file, field string) (spec.Tensor[spec.Rat], error) {
	s := spec.Shape(t.Shape)
	n, err := s.Check(0)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, FieldErr(file, field+".shape", "%v", err)
	}
	if len(t.Values) != n {
		return spec.Tensor[spec.Rat]{}, FieldErr(file, field+".values", "%d values for shape %v (want %d)", len(t.Values), s, n)
	}
	out, _ := spec.Zeros[spec.Rat](s)
	for i, v := range t.Values {
		r, err := DecodeRat(file, fmt.Sprintf("%s.values[%d]", field, i), v)
		if err != nil {
			return out, err
		}
		out.Data[i] = r
	}
	return out, nil
}

// DecodeTensors decodes each tensor of ts (Tensor.Decode), naming
// field[i] on failure.
func DecodeTensors(file, field string, ts []Tensor) ([]spec.Tensor[spec.Rat], error) {
	out := make([]spec.Tensor[spec.Rat], len(ts))
	for i, t := range ts {
		v, err := t.Decode(file, fmt.Sprintf("%s[%d]", field, i))
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

var bits64RE = regexp.MustCompile(`^0x[0-9a-f]{16}$`)

// Enclosure is an interval as the bit patterns of its float64 endpoints.
type Enclosure struct {
	Lo string `json:"lo"`
	Hi string `json:"hi"`
}

// IntervalEnclosure encodes an interval.
func IntervalEnclosure(iv spec.Interval) Enclosure {
	return Enclosure{Lo: fmt.Sprintf("0x%016x", math.Float64bits(iv.Lo)), Hi: fmt.Sprintf("0x%016x", math.Float64bits(iv.Hi))}
}

// Decode checks and converts a certificate enclosure: two binary64 bit
// patterns, lo ≤ hi.
func (e Enclosure) Decode(file, field string) (spec.Interval, error) {
	var out [2]float64
	for i, v := range []string{e.Lo, e.Hi} {
		f := field + [2]string{".lo", ".hi"}[i]
		if !bits64RE.MatchString(v) {
			return spec.Interval{}, FieldErr(file, f, "%q is not a float64 bit pattern 0x%%016x", Truncate(v))
		}
		var u uint64
		fmt.Sscanf(v[2:], "%x", &u)
		out[i] = math.Float64frombits(u)
	}
	return spec.Interval{Lo: out[0], Hi: out[1]}, nil
}

// Attrs, a primitive application's attributes in a certificate, is
// generated from the registry's declaration (spec.AttrSpecs) into
// attrs_gen.go: one field per attribute that spec.Attrs holds, in
// declaration order, under its declared name, of the Go type its declared
// type is spelled with in JSON. Generated, not encoded generically, for
// two reasons: readers of certificates (the Lean emitter) read the
// attributes as typed fields, and encoding/json writes a struct's members
// in field order, omitting the unset, so the certificate bytes are those
// of the hand-written struct the file replaced, by construction.
// TestAttrsGenerated fails when the file is not what the declaration
// generates; regenerate it with go generate.
//
//go:generate go test -run ^TestAttrsGenerated$ -update-attrs

// attrFields lists the declared attributes that spec.Attrs holds in a
// field of its own, in declaration order.
func attrFields() []spec.AttrSpec {
	var out []spec.AttrSpec
	for _, a := range spec.AttrSpecs() {
		if a.Field != "" && !strings.Contains(a.Field, ".") {
			out = append(out, a)
		}
	}
	return out
}

// EncodeAttrs converts registry attributes.
func EncodeAttrs(a *spec.Attrs) Attrs {
	var out Attrs
	if a == nil {
		return out
	}
	src, dst := reflect.ValueOf(a).Elem(), reflect.ValueOf(&out).Elem()
	for _, at := range attrFields() {
		s, d := src.FieldByName(at.Field), dst.FieldByName(at.Field)
		switch at.Type {
		case spec.AttrRat:
			d.SetString(ratString(s.Interface().(*big.Rat)))
		case spec.AttrRats:
			for _, v := range s.Interface().([]*big.Rat) {
				d.Set(reflect.Append(d, reflect.ValueOf(ratString(v))))
			}
		case spec.AttrWindow:
			out.Window = a.Window.Clone()
		default:
			d.Set(copyValue(s, d.Type()))
		}
	}
	return out
}

// ratString is a rational attribute's certificate spelling: "p/q" or
// "p", "" when unset.
func ratString(x *big.Rat) string {
	if x == nil {
		return ""
	}
	return x.RatString()
}

// copyValue converts an attribute value of a scalar, slice or Shape type
// to type t, copying a slice (nil stays nil) so that nothing is shared.
func copyValue(v reflect.Value, t reflect.Type) reflect.Value {
	if v.Kind() != reflect.Slice {
		return v.Convert(t)
	}
	if v.IsNil() {
		return reflect.Zero(t)
	}
	c := reflect.MakeSlice(t, v.Len(), v.Len())
	reflect.Copy(c, v.Convert(t))
	return c
}

// Decode checks and converts a certificate's attributes into the
// registry's spec.Attrs.
func (a Attrs) Decode(file, field string) (*spec.Attrs, error) {
	out := &spec.Attrs{}
	src, dst := reflect.ValueOf(a), reflect.ValueOf(out).Elem()
	decl := attrFields()
	// The rationals first, then the rational lists, then the rest: the
	// order the first malformed one is reported in.
	for _, at := range decl {
		if at.Type != spec.AttrRat {
			continue
		}
		v := src.FieldByName(at.Field).String()
		if v == "" {
			continue
		}
		r, err := DecodeRat(file, field+"."+at.Name, v)
		if err != nil {
			return nil, err
		}
		dst.FieldByName(at.Field).Set(reflect.ValueOf(r.Big()))
	}
	for _, at := range decl {
		if at.Type != spec.AttrRats {
			continue
		}
		d := dst.FieldByName(at.Field)
		for i, v := range src.FieldByName(at.Field).Interface().([]string) {
			r, err := DecodeRat(file, fmt.Sprintf("%s.%s[%d]", field, at.Name, i), v)
			if err != nil {
				return nil, err
			}
			d.Set(reflect.Append(d, reflect.ValueOf(r.Big())))
		}
	}
	for _, at := range decl {
		switch at.Type {
		case spec.AttrRat, spec.AttrRats:
		case spec.AttrWindow:
			out.Window = a.Window.Clone()
		default:
			d := dst.FieldByName(at.Field)
			d.Set(copyValue(src.FieldByName(at.Field), d.Type()))
		}
	}
	// gather's scalar indices: an indices_shape of [] is omitted, and
	// read back as [] (not nil) when there are indices.
	if out.IndicesShape == nil && a.Indices != nil {
		out.IndicesShape = spec.Shape{}
	}
	return out, nil
}
