package certificates

import (
	"fmt"
	"math"
	"math/big"
	"regexp"

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

// decodeRat parses a safe-alphabet rational.
func decodeRat(file, field, v string) (spec.Rat, error) {
	if err := checkRat(file, field, v); err != nil {
		return spec.Rat{}, err
	}
	r, ok := new(big.Rat).SetString(v)
	if !ok {
		return spec.Rat{}, fieldErr(file, field, "malformed rational %q", truncate(v))
	}
	return spec.RatFromBig(r), nil
}

// decode checks and converts a certificate tensor.
func (t Tensor) decode(file, field string) (spec.Tensor[spec.Rat], error) {
	s := spec.Shape(t.Shape)
	n, err := s.Check(0)
	if err != nil {
		return spec.Tensor[spec.Rat]{}, fieldErr(file, field+".shape", "%v", err)
	}
	if len(t.Values) != n {
		return spec.Tensor[spec.Rat]{}, fieldErr(file, field+".values", "%d values for shape %v (want %d)", len(t.Values), s, n)
	}
	out, _ := spec.Zeros[spec.Rat](s)
	for i, v := range t.Values {
		r, err := decodeRat(file, fmt.Sprintf("%s.values[%d]", field, i), v)
		if err != nil {
			return out, err
		}
		out.Data[i] = r
	}
	return out, nil
}

func decodeTensors(file, field string, ts []Tensor) ([]spec.Tensor[spec.Rat], error) {
	out := make([]spec.Tensor[spec.Rat], len(ts))
	for i, t := range ts {
		v, err := t.decode(file, fmt.Sprintf("%s[%d]", field, i))
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

func (e Enclosure) decode(file, field string) (spec.Interval, error) {
	var out [2]float64
	for i, v := range []string{e.Lo, e.Hi} {
		f := field + [2]string{".lo", ".hi"}[i]
		if !bits64RE.MatchString(v) {
			return spec.Interval{}, fieldErr(file, f, "%q is not a float64 bit pattern 0x%%016x", truncate(v))
		}
		var u uint64
		fmt.Sscanf(v[2:], "%x", &u)
		out[i] = math.Float64frombits(u)
	}
	return spec.Interval{Lo: out[0], Hi: out[1]}, nil
}

// Attrs are a primitive application's attributes in a certificate.
// Constants are exact rationals.
type Attrs struct {
	Axis   int          `json:"axis,omitempty"`
	Axis2  int          `json:"axis2,omitempty"`
	Shape  []int        `json:"shape,omitempty"`
	Perm   []int        `json:"perm,omitempty"`
	Start  int          `json:"start,omitempty"`
	End    int          `json:"end,omitempty"`
	C      string       `json:"c,omitempty"`
	Lo     string       `json:"lo,omitempty"`
	Hi     string       `json:"hi,omitempty"`
	Eps    string       `json:"eps,omitempty"`
	P      string       `json:"p,omitempty"`
	Seed   uint64       `json:"seed,omitempty"`
	Values []string     `json:"values,omitempty"`
	Window *spec.Window `json:"window,omitempty"`
	// The attributes of pad, gather, lrn, shrink and hard_masked_softmax.
	Widths       []int  `json:"widths,omitempty"`
	Mode         string `json:"mode,omitempty"`
	Value        string `json:"value,omitempty"`
	Indices      []int  `json:"indices,omitempty"`
	IndicesShape []int  `json:"indices_shape,omitempty"`
	Size         int    `json:"size,omitempty"`
	Alpha        string `json:"alpha,omitempty"`
	Beta         string `json:"beta,omitempty"`
	Bias         string `json:"bias,omitempty"`
	Lambd        string `json:"lambd,omitempty"`
	Mask         []bool `json:"mask,omitempty"`
}

// EncodeAttrs converts registry attributes.
func EncodeAttrs(a *spec.Attrs) Attrs {
	if a == nil {
		return Attrs{}
	}
	r := func(x *big.Rat) string {
		if x == nil {
			return ""
		}
		return x.RatString()
	}
	out := Attrs{Axis: a.Axis, Axis2: a.Axis2, Perm: append([]int(nil), a.Perm...), Start: a.Start, End: a.End,
		C: r(a.C), Lo: r(a.Lo), Hi: r(a.Hi), Eps: r(a.Eps), P: r(a.P), Seed: a.Seed}
	if a.Shape != nil {
		out.Shape = append([]int{}, a.Shape...)
	}
	for _, v := range a.Values {
		out.Values = append(out.Values, r(v))
	}
	out.Window = a.Window.Clone()
	out.Widths, out.Mode, out.Value = append([]int(nil), a.Widths...), a.Mode, r(a.Value)
	out.Indices, out.IndicesShape = append([]int(nil), a.Indices...), append([]int(nil), a.IndicesShape...)
	out.Size, out.Alpha, out.Beta, out.Bias, out.Lambd = a.Size, r(a.Alpha), r(a.Beta), r(a.Bias), r(a.Lambd)
	out.Mask = append([]bool(nil), a.Mask...)
	return out
}

func (a Attrs) decode(file, field string) (*spec.Attrs, error) {
	out := &spec.Attrs{Axis: a.Axis, Axis2: a.Axis2, Perm: a.Perm, Start: a.Start, End: a.End, Seed: a.Seed,
		Widths: append([]int(nil), a.Widths...), Mode: a.Mode, Indices: append([]int(nil), a.Indices...),
		Size: a.Size, Mask: append([]bool(nil), a.Mask...)}
	if a.IndicesShape != nil || a.Indices != nil {
		out.IndicesShape = spec.Shape(append([]int{}, a.IndicesShape...))
	}
	if a.Shape != nil {
		out.Shape = spec.Shape(append([]int{}, a.Shape...))
	}
	for _, kv := range []struct {
		name string
		v    string
		dst  **big.Rat
	}{{"c", a.C, &out.C}, {"lo", a.Lo, &out.Lo}, {"hi", a.Hi, &out.Hi}, {"eps", a.Eps, &out.Eps}, {"p", a.P, &out.P},
		{"value", a.Value, &out.Value}, {"alpha", a.Alpha, &out.Alpha}, {"beta", a.Beta, &out.Beta}, {"bias", a.Bias, &out.Bias}, {"lambd", a.Lambd, &out.Lambd}} {
		if kv.v == "" {
			continue
		}
		r, err := decodeRat(file, field+"."+kv.name, kv.v)
		if err != nil {
			return nil, err
		}
		*kv.dst = r.Big()
	}
	for i, v := range a.Values {
		r, err := decodeRat(file, fmt.Sprintf("%s.values[%d]", field, i), v)
		if err != nil {
			return nil, err
		}
		out.Values = append(out.Values, r.Big())
	}
	out.Window = a.Window.Clone()
	return out, nil
}
