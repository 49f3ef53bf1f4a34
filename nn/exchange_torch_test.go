package nn_test

import (
	"bytes"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// xcTorchDoc is a small valid PyTorch parameter file.
const xcTorchDoc = `{
  "params": {
    "layer.weight": [[1, -2.5, 0.1], [3e-3, -0, 1e-45]],
    "layer.bias": [0.5, -1]
  },
  "meta": {
    "layer.weight": {"shape": [2, 3], "dtype": "torch.float32"},
    "layer.bias": {"shape": [2], "dtype": "torch.float32"}
  }
}`

var xcTorchWant = []nn.ParamSpec{
	{Name: "layer.weight", Shape: spec.Shape{2, 3}},
	{Name: "layer.bias", Shape: spec.Shape{2}},
}

func TestImportTorchParams(t *testing.T) {
	p, err := nn.ImportTorchParams[spec.F32](strings.NewReader(xcTorchDoc), xcTorchWant)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Names(); got[0] != "layer.weight" || got[1] != "layer.bias" {
		t.Fatalf("order = %v, want the expected list's order", got)
	}
	w, err := p.Tensor("layer.weight", spec.Shape{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	want := []uint32{
		math.Float32bits(1), math.Float32bits(-2.5), math.Float32bits(0.1),
		math.Float32bits(3e-3), 0x80000000, 0x00000001,
	}
	for k, u := range want {
		if got := math.Float32bits(float32(w.Data[k])); got != u {
			t.Errorf("weight[%d] = %#08x, want %#08x", k, got, u)
		}
	}
	sorted, err := nn.ImportTorchParamsSorted[spec.F32](strings.NewReader(xcTorchDoc))
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted.Names(); got[0] != "layer.bias" || got[1] != "layer.weight" {
		t.Fatalf("sorted order = %v", got)
	}
}

func TestImportTorchParamsFloat64(t *testing.T) {
	doc := `{"params":{"w":[0.1,1e-320]},"meta":{"w":{"shape":[2],"dtype":"torch.float64"}}}`
	p, err := nn.ImportTorchParams[spec.F64](strings.NewReader(doc), []nn.ParamSpec{{Name: "w", Shape: spec.Shape{2}}})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := p.Tensor("w", spec.Shape{2})
	if float64(w.Data[0]) != 0.1 || float64(w.Data[1]) != 1e-320 {
		t.Fatalf("w = %v", w.Data)
	}
	if _, err := nn.ImportTorchParamsSorted[spec.F32](strings.NewReader(doc)); err == nil {
		t.Fatal("a float64 file imported as a float32 pack")
	}
}

// TestImportTorchZeroExtent: a zero extent hides the deeper axes, as
// PyTorch's tolist() does.
func TestImportTorchZeroExtent(t *testing.T) {
	tests := []struct {
		data  string
		shape string
		ok    bool
	}{
		{`[]`, `[0]`, true},
		{`[]`, `[0,3]`, true},
		{`[[],[]]`, `[2,0,3]`, true},
		{`[[],[]]`, `[2,0]`, true},
		{`[[]]`, `[0,3]`, false},
		{`[]`, `[3,0]`, false},
		{`[]`, `[]`, false},
		{`7`, `[]`, true},
		{`[7]`, `[]`, false},
		{`7`, `[1]`, false},
	}
	for _, tc := range tests {
		doc := fmt.Sprintf(`{"params":{"x":%s},"meta":{"x":{"shape":%s,"dtype":"torch.float32"}}}`, tc.data, tc.shape)
		p, err := nn.ImportTorchParamsSorted[spec.F32](strings.NewReader(doc))
		if (err == nil) != tc.ok {
			t.Errorf("%s as %s: err = %v, want ok=%v", tc.data, tc.shape, err, tc.ok)
			continue
		}
		if err != nil {
			xcCheckErr(t, err, "nested arrays have shape")
			continue
		}
		var out bytes.Buffer
		if err := nn.ExportTorchParams(&out, p); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), `"x":`+tc.data) {
			t.Errorf("export of %s as %s = %s", tc.data, tc.shape, out.String())
		}
	}
}

func TestExportTorchParamsGolden(t *testing.T) {
	w := spec.Tensor[spec.F32]{Shape: spec.Shape{2, 2}, Data: []spec.F32{1, -0.0, 0.1, 1e-7}}
	w.Data[1] = spec.F32(math.Float32frombits(0x80000000))
	b := spec.Vector[spec.F32](3e21, -1.5)
	p, err := nn.NewPack([]string{"z.w", "a<b"}, []spec.SomeTensor[spec.F32]{spec.Erase(w), spec.Erase(b)})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := nn.ExportTorchParams(&out, p); err != nil {
		t.Fatal(err)
	}
	want := `{"params":{"a\u003cb":[3e+21,-1.5],"z.w":[[1,-0],[0.1,1e-7]]},"meta":{"a\u003cb":{"shape":[2],"dtype":"torch.float32"},"z.w":{"shape":[2,2],"dtype":"torch.float32"}}}` + "\n"
	if out.String() != want {
		t.Fatalf("export =\n%s\nwant\n%s", out.String(), want)
	}
}

func TestExportTorchParamsRejectsNonFinite(t *testing.T) {
	for _, v := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())} {
		p, _ := nn.NewPack([]string{"w"}, []spec.SomeTensor[spec.F32]{xcVec32(1, v)})
		var out bytes.Buffer
		err := nn.ExportTorchParams(&out, p)
		xcCheckErr(t, err, `params["w"]: element 1`)
		if out.Len() != 0 {
			t.Errorf("export of %v wrote %d bytes before failing", v, out.Len())
		}
	}
}

// TestTorchRoundTrip: random finite tensors (signed zeros, subnormals,
// extremes, random bit patterns) survive export then import bit for bit,
// and a second export is byte-identical.
func TestTorchRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for iter := 0; iter < 200; iter++ {
		t.Run(fmt.Sprint(iter), func(t *testing.T) {
			if iter%2 == 0 {
				xcTorchRoundTrip(t, xcState32(r, 1+r.IntN(4), xcOpts{finite: true}))
			} else {
				xcTorchRoundTrip(t, xcState64(r, 1+r.IntN(4), xcOpts{finite: true}))
			}
		})
	}
}

func xcTorchRoundTrip[T nn.ExchangeFloat](t *testing.T, state []spec.SomeTensor[T]) {
	t.Helper()
	names := make([]string, len(state))
	want := make([]nn.ParamSpec, len(state))
	for i := range state {
		names[i] = fmt.Sprintf("layer%d.p", len(state)-i) // not sorted
		want[i] = nn.ParamSpec{Name: names[i], Shape: state[i].Shape()}
	}
	p, err := nn.NewPack(names, state)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := nn.ExportTorchParams(&out, p); err != nil {
		t.Fatal(err)
	}
	q, err := nn.ImportTorchParams[T](bytes.NewReader(out.Bytes()), want)
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if d := xcSameState(p.State(), q.State()); d != "" {
		t.Fatalf("round trip: %s\n%s", d, out.String())
	}
	var again bytes.Buffer
	if err := nn.ExportTorchParams(&again, q); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Fatal("second export differs")
	}
}

// xcExactDecimal prints the dyadic rational r exactly as a decimal.
func xcExactDecimal(r *big.Rat) string {
	// r = num / 2^k; multiply by 5^k / 5^k to get num·5^k / 10^k.
	den := new(big.Int).Set(r.Denom())
	k := den.BitLen() - 1
	num := new(big.Int).Mul(r.Num(), new(big.Int).Exp(big.NewInt(5), big.NewInt(int64(k)), nil))
	s := new(big.Int).Abs(num).String()
	sign := ""
	if num.Sign() < 0 {
		sign = "-"
	}
	if k == 0 {
		return sign + s
	}
	for len(s) <= k {
		s = "0" + s
	}
	return sign + s[:len(s)-k] + "." + s[len(s)-k:]
}

// TestTorchNumbersRoundOnce: every JSON number is its exact decimal value
// rounded once to float32 (ties to even), checked against big.Rat's
// correctly rounded conversion on random decimals and on exact midpoints
// between neighbouring float32s, written out in full.
func TestTorchNumbersRoundOnce(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var lits []string
	for i := 0; i < 300; i++ {
		// random decimals with many digits and a wide exponent range
		digits := make([]byte, 1+r.IntN(40))
		for k := range digits {
			digits[k] = byte('0' + r.IntN(10))
		}
		lits = append(lits, fmt.Sprintf("%s0.%se%d", []string{"", "-"}[r.IntN(2)], digits, r.IntN(97)-60))
	}
	for i := 0; i < 300; i++ {
		// the midpoint between a finite float32 and its successor
		u := r.Uint32() & 0x7F7FFFFE
		if i < 4 {
			u = []uint32{0, 1, 0x007FFFFF, 0x7F7FFFFE}[i]
		}
		a, _ := new(big.Float).SetFloat64(float64(math.Float32frombits(u))).Rat(nil)
		b, _ := new(big.Float).SetFloat64(float64(math.Float32frombits(u + 1))).Rat(nil)
		mid := new(big.Rat).Add(a, b)
		mid.Quo(mid, big.NewRat(2, 1))
		lits = append(lits, xcExactDecimal(mid))
	}
	// Ties decided by a digit beyond the 800 that strconv keeps exactly:
	// the midpoint between 1 and its successor rounds to even (1), and
	// the same midpoint plus 10^-1100 rounds up.
	one, _ := new(big.Float).SetFloat64(1).Rat(nil)
	next, _ := new(big.Float).SetFloat64(float64(math.Nextafter32(1, 2))).Rat(nil)
	mid := new(big.Rat).Add(one, next)
	mid.Quo(mid, big.NewRat(2, 1))
	lits = append(lits, xcExactDecimal(mid)+strings.Repeat("0", 1100), xcExactDecimal(mid)+strings.Repeat("0", 1100)+"1")
	for _, lit := range lits {
		doc := `{"params":{"x":[` + lit + `]},"meta":{"x":{"shape":[1],"dtype":"torch.float32"}}}`
		p, err := nn.ImportTorchParamsSorted[spec.F32](strings.NewReader(doc))
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		x, _ := p.Tensor("x", spec.Shape{1})
		exact, ok := new(big.Rat).SetString(lit)
		if !ok {
			t.Fatalf("big.Rat cannot read %s", lit)
		}
		want, _ := exact.Float32()
		if exact.Sign() < 0 && want == 0 {
			want = float32(math.Copysign(0, -1))
		}
		if got := float32(x.Data[0]); math.Float32bits(got) != math.Float32bits(want) {
			t.Errorf("%s: got %v (%#08x), want %v (%#08x)", lit, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
}

func TestImportTorchParamsErrors(t *testing.T) {
	meta := func(entries ...string) string { return `"meta":{` + strings.Join(entries, ",") + `}` }
	m := func(name, shape string) string {
		return fmt.Sprintf(`%q:{"shape":%s,"dtype":"torch.float32"}`, name, shape)
	}
	doc := func(params, meta string) string { return `{"params":{` + params + `},` + meta + `}` }
	ab := []nn.ParamSpec{{Name: "a", Shape: spec.Shape{2}}, {Name: "b", Shape: spec.Shape{1}}}
	a := []nn.ParamSpec{{Name: "a", Shape: spec.Shape{2}}}
	deep := strings.Repeat("[", 17) + "1" + strings.Repeat("]", 17)
	tests := []struct {
		name string
		doc  string
		want []nn.ParamSpec // nil: sorted mode
		err  string
	}{
		{"missing name", doc(`"a":[1,2]`, meta(m("a", "[2]"))), ab, `missing parameter "b" (expected shape [1])`},
		{"extra name", doc(`"a":[1,2],"c":[1]`, meta(m("a", "[2]"), m("c", "[1]"))), a, `params["c"]: unexpected parameter`},
		{"params without meta", doc(`"a":[1,2],"b":[1]`, meta(m("a", "[2]"))), ab, `params["b"]: no meta entry`},
		{"meta without params", doc(`"a":[1,2]`, meta(m("a", "[2]"), m("b", "[1]"))), ab, `meta["b"]: no params entry`},
		{"meta shape vs want", doc(`"a":[1,2,3]`, meta(m("a", "[3]"))), a, `meta["a"].shape: shape [3] does not match the expected shape [2]`},
		{"wrong dims", doc(`"a":[[1,2],[3,4]]`, meta(m("a", "[4]"))), nil, `params["a"]: nested arrays have shape [2,2] but meta says [4]`},
		{"wrong length", doc(`"a":[1,2,3]`, meta(m("a", "[2]"))), nil, `nested arrays have shape [3] but meta says [2]`},
		{"ragged short", doc(`"a":[[1,2],[3]]`, meta(m("a", "[2,2]"))), nil, `params["a"][1]: ragged array: 1 elements, but the first array at this depth has 2`},
		{"ragged long", doc(`"a":[[1],[2,3]]`, meta(m("a", "[2,1]"))), nil, `params["a"][1]: ragged array: more than 1 elements`},
		{"number where array", doc(`"a":[[1,2],3]`, meta(m("a", "[2,2]"))), nil, `params["a"][1]: expected an array, got the number 3`},
		{"array where number", doc(`"a":[1,[2]]`, meta(m("a", "[2]"))), nil, `params["a"][1]: expected a number, got an array`},
		{"string", doc(`"a":[1,"2"]`, meta(m("a", "[2]"))), nil, `params["a"][1]: expected a number, got a string`},
		{"bool", doc(`"a":[true]`, meta(m("a", "[1]"))), nil, `params["a"][0]: expected a number, got a boolean`},
		{"null", doc(`"a":[null]`, meta(m("a", "[1]"))), nil, `params["a"][0]: expected a number, got null`},
		{"object", doc(`"a":{}`, meta(m("a", "[1]"))), nil, `params["a"]: expected a number or an array, got an object`},
		{"NaN", doc(`"a":[1,NaN]`, meta(m("a", "[2]"))), nil, `NaN and Infinity are not JSON numbers`},
		{"Infinity", doc(`"a":[Infinity]`, meta(m("a", "[1]"))), nil, `NaN and Infinity are not JSON numbers`},
		{"-Infinity", doc(`"a":[-Infinity]`, meta(m("a", "[1]"))), nil, `NaN and Infinity are not JSON numbers`},
		{"overflow", doc(`"a":[1e39]`, meta(m("a", "[1]"))), nil, `params["a"][0]: 1e39 is beyond the finite float32 range`},
		{"huge exponent", doc(`"a":[-1e999999999]`, meta(m("a", "[1]"))), nil, `beyond the finite float32 range`},
		{"too deep", doc(`"a":`+deep, meta(m("a", "[1]"))), nil, `arrays nested more than 16 deep`},
		{"unknown dtype", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"dtype":"torch.float16"}}`), nil, `meta["a"].dtype: unknown dtype "torch.float16"`},
		{"bare dtype", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"dtype":"float32"}}`), nil, `unknown dtype "float32"`},
		{"dtype mismatch", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"dtype":"torch.float64"}}`), nil, `dtype torch.float64 does not match the requested float32 pack`},
		{"dtype not string", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"dtype":32}}`), nil, `meta["a"].dtype: expected a string`},
		{"missing dtype", doc(`"a":[1]`, `"meta":{"a":{"shape":[1]}}`), nil, `meta["a"]: missing field "dtype"`},
		{"missing shape", doc(`"a":[1]`, `"meta":{"a":{"dtype":"torch.float32"}}`), nil, `meta["a"]: missing field "shape"`},
		{"unknown meta field", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"dtype":"torch.float32","requires_grad":true}}`), nil, `meta["a"]: unknown field "requires_grad"`},
		{"negative dim", doc(`"a":[1]`, meta(m("a", "[-1]"))), nil, `meta["a"].shape[0]: expected a non-negative integer written with digits only, got -1`},
		{"fractional dim", doc(`"a":[1]`, meta(m("a", "[1.0]"))), nil, `got 1.0`},
		{"huge dim", doc(`"a":[1]`, meta(m("a", "[99999999999999999999]"))), nil, `is out of range`},
		{"too many elements", doc(`"a":[1]`, meta(m("a", "[100000,100000]"))), nil, `meta["a"].shape: shape [100000,100000] has more than 134217728 elements`},
		{"rank too high", doc(`"a":[1]`, meta(m("a", "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]"))), nil, `more than 16 extents`},
		{"unknown top field", `{"params":{},"meta":{},"version":1}`, nil, `unknown field "version"`},
		{"duplicate params field", `{"params":{},"params":{},"meta":{}}`, nil, `params: duplicate field`},
		{"duplicate parameter", doc(`"a":[1],"a":[2]`, meta(m("a", "[1]"))), nil, `params["a"]: duplicate parameter`},
		{"duplicate meta", doc(`"a":[1]`, meta(m("a", "[1]"), m("a", "[1]"))), nil, `meta["a"]: duplicate parameter`},
		{"duplicate meta field", doc(`"a":[1]`, `"meta":{"a":{"shape":[1],"shape":[1],"dtype":"torch.float32"}}`), nil, `meta["a"].shape: duplicate field`},
		{"missing params", `{"meta":{}}`, nil, `missing field "params"`},
		{"missing meta", `{"params":{}}`, nil, `missing field "meta"`},
		{"empty name", doc(`"":[1]`, meta(m("", "[1]"))), nil, `params[""]: empty parameter name`},
		{"trailing object", `{"params":{},"meta":{}} {}`, nil, `trailing data after the top-level object (offset 23)`},
		{"trailing garbage", `{"params":{},"meta":{}}x`, nil, `trailing data`},
		{"top-level array", `[]`, nil, `expected a JSON object at the top level, got an array`},
		{"empty input", ``, nil, `unexpected end of input`},
		{"truncated", `{"params":{"a":[1,2`, nil, `unexpected end of input`},
		{"syntax", `{"params":{"a":[1,,2]},"meta":{}}`, nil, `params["a"][1]: invalid JSON`},
		{"leading plus", doc(`"a":[+1]`, meta(m("a", "[1]"))), nil, `invalid JSON`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.want == nil {
				_, err = nn.ImportTorchParamsSorted[spec.F32](strings.NewReader(tc.doc))
			} else {
				_, err = nn.ImportTorchParams[spec.F32](strings.NewReader(tc.doc), tc.want)
			}
			xcCheckErr(t, err, tc.err)
		})
	}
}

func TestImportTorchParamsBadWantList(t *testing.T) {
	tests := []struct {
		want []nn.ParamSpec
		err  string
	}{
		{[]nn.ParamSpec{{Name: "a", Shape: spec.Shape{1}}, {Name: "a", Shape: spec.Shape{1}}}, `name "a" already listed`},
		{[]nn.ParamSpec{{Name: "", Shape: spec.Shape{1}}}, "empty parameter name"},
		{[]nn.ParamSpec{{Name: "a", Shape: spec.Shape{-1}}}, "negative extent"},
	}
	for _, tc := range tests {
		_, err := nn.ImportTorchParams[spec.F32](strings.NewReader(xcTorchDoc), tc.want)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("want %v: err = %v, want %q", tc.want, err, tc.err)
		}
	}
	// An empty expected list accepts only an empty file.
	if _, err := nn.ImportTorchParams[spec.F32](strings.NewReader(`{"params":{},"meta":{}}`), nil); err != nil {
		t.Fatal(err)
	}
	_, err := nn.ImportTorchParams[spec.F32](strings.NewReader(xcTorchDoc), nil)
	xcCheckErr(t, err, "unexpected parameter")
}

// TestExportTorchParamsNumberSpelling pins the ECMAScript Number-to-string
// spelling (ECMA-262 Number::toString: shortest round-trip digits, plain
// notation for 1e-6 ≤ |x| < 1e21, otherwise d.ddde±n) at the notation
// boundaries of each width, derived from the standard, not from the code.
func TestExportTorchParamsNumberSpelling(t *testing.T) {
	f64 := []struct {
		v    float64
		want string
	}{
		{1e-6, "0.000001"},
		{9.9e-7, "9.9e-7"},
		{1e21, "1e+21"},
		{999999999999999900000, "999999999999999900000"},
		{5e-324, "5e-324"},
		{-2.5, "-2.5"},
		{0.1, "0.1"},
	}
	for _, c := range f64 {
		p, err := nn.NewPack([]string{"x"}, []spec.SomeTensor[spec.F64]{spec.Erase(spec.Vector[spec.F64](spec.F64(c.v)))})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := nn.ExportTorchParams(&out, p); err != nil {
			t.Fatal(err)
		}
		if want := `"x":[` + c.want + `]`; !strings.Contains(out.String(), want) {
			t.Errorf("float64 %v: export %s, want %s", c.v, out.String(), want)
		}
	}
	f32 := []struct {
		v    float32
		want string
	}{
		{1e-6, "0.000001"},
		{0.1, "0.1"}, // shortest for binary32, not 0.10000000149011612
		{16777217, "16777216"},
		{1e21, "1e+21"},
	}
	for _, c := range f32 {
		p, err := nn.NewPack([]string{"x"}, []spec.SomeTensor[spec.F32]{spec.Erase(spec.Scalar0[spec.F32](spec.F32(c.v)))})
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := nn.ExportTorchParams(&out, p); err != nil {
			t.Fatal(err)
		}
		if want := `"x":` + c.want + `,`; !strings.Contains(out.String(), want) && !strings.Contains(out.String(), `"x":`+c.want+`}`) {
			t.Errorf("float32 %v: export %s, want %s", c.v, out.String(), want)
		}
	}
}
