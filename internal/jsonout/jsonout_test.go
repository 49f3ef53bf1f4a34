package jsonout

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestValueSpelling pins each scalar's spelling, derived from the package
// doc's rules (exact "p/q" strings; shortest round-trip decimals of the
// scalar's width, as ECMA-262 spells numbers; the three non-finite
// strings; intervals as {lo, hi}), not from running the code.
func TestValueSpelling(t *testing.T) {
	t.Parallel()
	inf, nan := math.Inf(1), math.NaN()
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"rat third", Value(spec.NewRat(1, 3)), `"1/3"`},
		{"rat negative integer", Value(spec.NewRat(-7, 1)), `"-7"`},
		{"rat reduced", Value(spec.NewRat(6, 4)), `"3/2"`},
		{"f32 tenth", Value(spec.F32(0.1)), `0.1`},
		{"f32 third", Value(spec.F32(float32(1) / 3)), `0.33333334`},
		{"f64 third", Value(spec.F64(1.0 / 3)), `0.3333333333333333`},
		{"f64 tiny", Value(spec.F64(1e-7)), `1e-7`},
		{"f64 negative zero", Value(spec.F64(math.Copysign(0, -1))), `-0`},
		{"f32 nan", Value(spec.F32(float32(nan))), `"NaN"`},
		{"f64 +inf", Value(spec.F64(inf)), `"+Inf"`},
		{"f64 -inf", Value(spec.F64(-inf)), `"-Inf"`},
		{"binary32 inf", Value(spec.Binary32(0x7f800000)), `"+Inf"`},
		{"binary32 1.5", Value(spec.Binary32(0x3fc00000)), `1.5`},
		{"interval", Value(spec.Interval{Lo: -0.5, Hi: 2}), `{"lo":-0.5,"hi":2}`},
		{"interval whole line", Value(spec.Interval{Lo: -inf, Hi: inf}), `{"lo":"-Inf","hi":"+Inf"}`},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.v)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if string(b) != c.want {
			t.Errorf("%s: %s, want %s", c.name, b, c.want)
		}
	}
	tn := TensorOf(spec.Tensor[spec.F64]{Shape: spec.Shape{2, 1}, Data: []spec.F64{1, spec.F64(inf)}})
	if b, _ := json.Marshal(tn); string(b) != `{"shape":[2,1],"values":[1,"+Inf"]}` {
		t.Errorf("tensor: %s", b)
	}
	if b, _ := json.Marshal(TensorOf(spec.Tensor[spec.Rat]{Shape: spec.Shape{0}})); string(b) != `{"shape":[0],"values":[]}` {
		t.Errorf("empty tensor: %s", b)
	}
}

// TestHeader checks the header's fixed parts and that a nil input list
// is written as [] (the schema requires an array).
func TestHeader(t *testing.T) {
	t.Parallel()
	h := NewHeader(KindGate, Seed(3), nil)
	var b bytes.Buffer
	if err := Write(&b, h); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"format": "tlcheck.gate.v1"`, `"seed": 3`, `"inputs": []`, `"registry_hash": "` + spec.RegistryHash() + `"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("header lacks %s:\n%s", want, b.String())
		}
	}
	b.Reset()
	Write(&b, NewHeader(KindEval, nil, nil))
	if !strings.Contains(b.String(), `"seed": null`) {
		t.Errorf("no null seed:\n%s", b.String())
	}
	// SHA-256 of "abc" (FIPS 180-2, appendix B.1).
	r := NewHashingReader(strings.NewReader("abc"))
	var sink bytes.Buffer
	sink.ReadFrom(r)
	if got := r.Sum(); got != "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" || SHA256([]byte("abc")) != got {
		t.Errorf("sha256(abc) = %s", got)
	}
}

// TestNumberRoundTrip: a measurement marshals as a number when finite and
// as the non-finite strings otherwise, and reads back either way.
func TestNumberRoundTrip(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		n    Number
		want string
	}{{0.25, `0.25`}, {Number(math.Inf(1)), `"+Inf"`}, {Number(math.NaN()), `"NaN"`}, {Number(math.Inf(-1)), `"-Inf"`}} {
		b, err := json.Marshal(c.n)
		if err != nil || string(b) != c.want {
			t.Errorf("%v: %s %v, want %s", c.n, b, err, c.want)
			continue
		}
		var back Number
		if err := json.Unmarshal(b, &back); err != nil || !(back == c.n || (math.IsNaN(float64(back)) && math.IsNaN(float64(c.n)))) {
			t.Errorf("%s reads back as %v (%v)", b, back, err)
		}
	}
	var n Number
	if err := json.Unmarshal([]byte(`"inf"`), &n); err == nil {
		t.Error(`"inf" accepted`)
	}
}
