package nn_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// TestStateJSONRoundTrip: random tensors with every special value
// (±0, subnormals, ±inf, the canonical NaN, extremes) survive encode then
// decode bit for bit, for both tags, and encoding is deterministic.
func TestStateJSONRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for iter := 0; iter < 100; iter++ {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			if iter%2 == 0 {
				xcStateRoundTrip(t, xcState32(r, r.IntN(5), xcOpts{}), nn.StateBits32Format)
			} else {
				xcStateRoundTrip(t, xcState64(r, r.IntN(5), xcOpts{}), nn.StateBits64Format)
			}
		})
	}
}

func xcStateRoundTrip[T nn.ExchangeFloat](t *testing.T, state []spec.SomeTensor[T], tag string) {
	t.Helper()
	var out bytes.Buffer
	if err := nn.EncodeStateJSON(&out, state); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), `{"format":"`+tag+`","state":[`) {
		t.Fatalf("unexpected header: %.80s", out.String())
	}
	got, err := nn.DecodeStateJSON[T](bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := xcSameState(state, got); d != "" {
		t.Fatal(d)
	}
	var again bytes.Buffer
	if err := nn.EncodeStateJSON(&again, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Fatal("re-encoding differs")
	}
	f, err := nn.DecodeStateFile(bytes.NewReader(out.Bytes()))
	if err != nil || f.Format != tag {
		t.Fatalf("DecodeStateFile: %q, %v", f.Format, err)
	}
}

func TestStateJSONGolden(t *testing.T) {
	state := []spec.SomeTensor[spec.F32]{
		spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{2}, Data: []spec.F32{1, spec.F32(math.Float32frombits(0x80000000))}}),
		spec.Erase(spec.Scalar0(spec.F32(math.Float32frombits(nn.CanonicalNaN32)))),
		spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{0, 3}, Data: []spec.F32{}}),
	}
	var out bytes.Buffer
	if err := nn.EncodeStateJSON(&out, state); err != nil {
		t.Fatal(err)
	}
	want := `{"format":"torchlean_state_float32_bits_v1","state":[{"shape":[2],"values":[1065353216,2147483648]},{"shape":[],"values":[2143289344]},{"shape":[0,3],"values":[]}]}` + "\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	if err := nn.EncodeStateJSON[spec.F64](&out, nil); err != nil {
		t.Fatal(err)
	}
	if want := `{"format":"torchlean_state_bits_v1","state":[]}` + "\n"; out.String() != want {
		t.Fatalf("empty state = %q", out.String())
	}
}

// TestStateJSONFieldOrder: JSON objects are unordered, so fields may come
// in any order and white space is free.
func TestStateJSONFieldOrder(t *testing.T) {
	doc := ` { "state" : [ { "values" : [ 1065353216 , 0 ] , "shape" : [ 2 ] } ] , "format" : "torchlean_state_float32_bits_v1" } ` + "\n\t"
	s, err := nn.DecodeStateJSON[spec.F32](strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	x, err := s[0].Cast(spec.Shape{2})
	if err != nil || x.Data[0] != 1 || x.Data[1] != 0 {
		t.Fatalf("got %v, %v", x, err)
	}
}

func TestStateJSONErrors(t *testing.T) {
	f32 := func(entries ...string) string {
		return `{"format":"torchlean_state_float32_bits_v1","state":[` + strings.Join(entries, ",") + `]}`
	}
	f64 := func(entries ...string) string {
		return `{"format":"torchlean_state_bits_v1","state":[` + strings.Join(entries, ",") + `]}`
	}
	ok := `{"shape":[1],"values":[0]}`
	tests := []struct {
		name string
		doc  string
		err  string
	}{
		{"unknown tag", `{"format":"torchlean_state_bits_v2","state":[]}`, `format: unknown tag "torchlean_state_bits_v2"`},
		{"tag not string", `{"format":1,"state":[]}`, `format: expected a string, got the number 1`},
		{"missing format", `{"state":[]}`, `missing field "format"`},
		{"missing state", `{"format":"torchlean_state_bits_v1"}`, `missing field "state"`},
		{"unknown top field", `{"format":"torchlean_state_bits_v1","state":[],"extra":0}`, `unknown field "extra"`},
		{"duplicate format", `{"format":"torchlean_state_bits_v1","format":"torchlean_state_bits_v1","state":[]}`, `format: duplicate field`},
		{"duplicate state", `{"format":"torchlean_state_bits_v1","state":[],"state":[]}`, `state: duplicate field`},
		{"nan payload f32", f32(ok, `{"shape":[3],"values":[0,0,2143289345]}`), `tensor 1: values: element 2: non-canonical NaN 0x7FC00001 (only 0x7FC00000 is accepted)`},
		{"negative nan f32", f32(`{"shape":[1],"values":[4290772992]}`), `tensor 0: values: element 0: non-canonical NaN 0xFFC00000`},
		{"signalling nan f32", f32(`{"shape":[1],"values":[2139095041]}`), `non-canonical NaN 0x7F800001`},
		{"nan payload f64", f64(`{"shape":[1],"values":[9221120237041090561]}`), `tensor 0: values: element 0: non-canonical NaN 0x7FF8000000000001`},
		{"negative nan f64", f64(`{"shape":[1],"values":[18444492273895866368]}`), `non-canonical NaN 0xFFF8000000000000`},
		{"f32 word too big", f32(`{"shape":[2],"values":[0,4294967296]}`), `tensor 0: values: element 1: 4294967296 is out of range for a float32 bit pattern`},
		{"f64 word too big", f64(`{"shape":[1],"values":[18446744073709551616]}`), `tensor 0: values[0]: 18446744073709551616 is out of range`},
		{"negative word", f64(`{"shape":[1],"values":[-1]}`), `tensor 0: values[0]: expected a non-negative integer written with digits only, got -1`},
		{"fractional word", f64(`{"shape":[1],"values":[1.5]}`), `got 1.5`},
		{"exponent word", f64(`{"shape":[1],"values":[1e3]}`), `got 1e3`},
		{"string word", f64(`{"shape":[1],"values":["1"]}`), `values[0]: expected a non-negative integer, got a string`},
		{"too few values", f64(`{"shape":[2,2],"values":[0,0,0]}`), `tensor 0: values: 3 values do not match shape [2,2] (4 elements)`},
		{"too many values", f64(`{"shape":[2],"values":[0,0,0]}`), `tensor 0: values: more than 2 values`},
		{"too many values, shape last", f64(`{"values":[0,0,0],"shape":[2]}`), `tensor 0: values: 3 values do not match shape [2]`},
		{"negative extent", f64(`{"shape":[-2],"values":[]}`), `tensor 0: shape[0]: expected a non-negative integer`},
		{"fractional extent", f64(`{"shape":[2.0],"values":[0,0]}`), `got 2.0`},
		{"rank too high", f64(`{"shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"values":[0]}`), `tensor 0: shape: more than 16 extents`},
		{"too many elements", f64(`{"shape":[65536,65536],"values":[]}`), `tensor 0: shape: shape [65536,65536] has more than 134217728 elements`},
		{"overflowing extents", f64(`{"shape":[4294967296,4294967296],"values":[]}`), `axis 0 has extent 4294967296: over the axis limit 134217728`},
		{"missing shape", f64(`{"values":[]}`), `tensor 0: missing field "shape"`},
		{"missing values", f64(`{"shape":[]}`), `tensor 0: missing field "values"`},
		{"unknown entry field", f64(`{"shape":[],"values":[0],"dtype":"f"}`), `tensor 0: unknown field "dtype"`},
		{"duplicate values", f64(`{"shape":[1],"values":[0],"values":[0]}`), `tensor 0: values: duplicate field`},
		{"entry not object", f64(`[1]`), `tensor 0: expected an object`},
		{"state not array", `{"format":"torchlean_state_bits_v1","state":{}}`, `state: expected an array of tensors, got an object`},
		{"trailing", f64() + ` []`, `trailing data after the top-level object`},
		{"truncated", `{"format":"torchlean_state_bits_v1","state":[{"shape":[1],"values":[0`, `unexpected end of input`},
		{"NaN text", f64(`{"shape":[1],"values":[NaN]}`), `NaN and Infinity are not JSON numbers`},
		{"empty", ``, `unexpected end of input`},
		{"not object", `"x"`, `expected a JSON object at the top level, got a string`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nn.DecodeStateFile(strings.NewReader(tc.doc))
			xcCheckErr(t, err, tc.err)
		})
	}
}

func TestDecodeStateJSONTagMismatch(t *testing.T) {
	doc := `{"format":"torchlean_state_bits_v1","state":[]}`
	_, err := nn.DecodeStateJSON[spec.F32](strings.NewReader(doc))
	xcCheckErr(t, err, `format: tag "torchlean_state_bits_v1" holds float64 values, not the requested float32`)
	doc = `{"format":"torchlean_state_float32_bits_v1","state":[]}`
	_, err = nn.DecodeStateJSON[spec.F64](strings.NewReader(doc))
	xcCheckErr(t, err, `holds float32 values, not the requested float64`)
	s, err := nn.DecodeStateJSON[spec.F32](strings.NewReader(doc))
	if err != nil || len(s) != 0 {
		t.Fatalf("empty float32 state: %v, %v", s, err)
	}
}

func TestEncodeStateJSONRejectsNonCanonicalNaN(t *testing.T) {
	bad32 := []spec.SomeTensor[spec.F32]{xcVec32(1), xcVec32(0, math.Float32frombits(0xFFC00000))}
	var out bytes.Buffer
	err := nn.EncodeStateJSON(&out, bad32)
	xcCheckErr(t, err, "tensor 1: element 1: non-canonical NaN 0xFFC00000 cannot be written")
	if out.Len() != 0 {
		t.Fatalf("wrote %d bytes before failing", out.Len())
	}
	if err := nn.EncodeStateJSON(&out, nn.CanonicalizeStateNaNs(bad32)); err != nil {
		t.Fatal(err)
	}
	bad64 := []spec.SomeTensor[spec.F64]{spec.Erase(spec.Vector(spec.F64(math.Float64frombits(0x7FF0000000000001))))}
	xcCheckErr(t, nn.EncodeStateJSON(&out, bad64), "tensor 0: element 0: non-canonical NaN 0x7FF0000000000001")
}
