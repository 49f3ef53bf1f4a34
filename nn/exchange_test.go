package nn_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// Shared helpers of the exchange tests; the xc prefix keeps them apart
// from other test files of package nn_test.

// xcSpecial32 are float32 words every round-trip test includes: signed
// zeros, the subnormal extremes, the normal extremes, infinities and the
// canonical NaN.
var xcSpecial32 = []uint32{
	0x00000000, 0x80000000, // ±0
	0x00000001, 0x80000001, // ±smallest subnormal
	0x007FFFFF, 0x807FFFFF, // ±largest subnormal
	0x00800000, 0x80800000, // ±smallest normal
	0x7F7FFFFF, 0xFF7FFFFF, // ±max finite
	0x3F800000, 0xBF800000, // ±1
	0x7F800000, 0xFF800000, // ±inf
	nn.CanonicalNaN32,
}

// xcSpecial64 is the float64 analogue of xcSpecial32.
var xcSpecial64 = []uint64{
	0, 1 << 63,
	1, 1<<63 | 1,
	0x000FFFFFFFFFFFFF, 0x800FFFFFFFFFFFFF,
	0x0010000000000000, 0x8010000000000000,
	0x7FEFFFFFFFFFFFFF, 0xFFEFFFFFFFFFFFFF,
	0x3FF0000000000000, 0xBFF0000000000000,
	0x7FF0000000000000, 0xFFF0000000000000,
	nn.CanonicalNaN64,
}

// xcOpts selects which values a random tensor may hold.
type xcOpts struct {
	finite bool // no infinities or NaN (PyTorch JSON cannot spell them)
}

// xcWord32 draws a float32 word: a special value or random bits, never a
// non-canonical NaN.
func xcWord32(r *rand.Rand, o xcOpts) uint32 {
	for {
		var u uint32
		if r.IntN(3) == 0 {
			u = xcSpecial32[r.IntN(len(xcSpecial32))]
		} else {
			u = r.Uint32()
		}
		f := math.Float32frombits(u)
		if f != f && u != nn.CanonicalNaN32 {
			continue
		}
		if o.finite && (math.IsInf(float64(f), 0) || f != f) {
			continue
		}
		return u
	}
}

// xcWord64 is the float64 analogue of xcWord32.
func xcWord64(r *rand.Rand, o xcOpts) uint64 {
	for {
		var u uint64
		if r.IntN(3) == 0 {
			u = xcSpecial64[r.IntN(len(xcSpecial64))]
		} else {
			u = r.Uint64()
		}
		f := math.Float64frombits(u)
		if f != f && u != nn.CanonicalNaN64 {
			continue
		}
		if o.finite && (math.IsInf(f, 0) || f != f) {
			continue
		}
		return u
	}
}

// xcShape draws a small shape of rank 0..4 (zero extents included).
func xcShape(r *rand.Rand) spec.Shape {
	s := make(spec.Shape, r.IntN(5))
	for i := range s {
		s[i] = r.IntN(4)
		if r.IntN(8) != 0 && s[i] == 0 {
			s[i] = 1 + r.IntN(3)
		}
	}
	return s
}

// xcState32 draws n random float32 tensors.
func xcState32(r *rand.Rand, n int, o xcOpts) []spec.SomeTensor[spec.F32] {
	out := make([]spec.SomeTensor[spec.F32], n)
	for i := range out {
		s := xcShape(r)
		data := make([]spec.F32, s.Size())
		for k := range data {
			data[k] = spec.F32(math.Float32frombits(xcWord32(r, o)))
		}
		out[i] = spec.Erase(spec.Tensor[spec.F32]{Shape: s, Data: data})
	}
	return out
}

// xcState64 draws n random float64 tensors.
func xcState64(r *rand.Rand, n int, o xcOpts) []spec.SomeTensor[spec.F64] {
	out := make([]spec.SomeTensor[spec.F64], n)
	for i := range out {
		s := xcShape(r)
		data := make([]spec.F64, s.Size())
		for k := range data {
			data[k] = spec.F64(math.Float64frombits(xcWord64(r, o)))
		}
		out[i] = spec.Erase(spec.Tensor[spec.F64]{Shape: s, Data: data})
	}
	return out
}

// xcBits returns the IEEE word of an exchange element.
func xcBits[T nn.ExchangeFloat](v T) uint64 {
	switch x := any(v).(type) {
	case spec.F32:
		return uint64(math.Float32bits(float32(x)))
	case spec.F64:
		return math.Float64bits(float64(x))
	}
	return 0
}

// xcSameState reports the first difference between two state lists
// (shapes and bit patterns), or "".
func xcSameState[T nn.ExchangeFloat](a, b []spec.SomeTensor[T]) string {
	if len(a) != len(b) {
		return "lengths differ"
	}
	for i := range a {
		ta, _ := a[i].Cast(a[i].Shape())
		tb, err := b[i].Cast(ta.Shape)
		if err != nil {
			return "tensor " + strconv.Itoa(i) + ": " + err.Error()
		}
		for k := range ta.Data {
			if xcBits(ta.Data[k]) != xcBits(tb.Data[k]) {
				return "tensor " + strconv.Itoa(i) + ": element " + strconv.Itoa(k) + " differs"
			}
		}
	}
	return ""
}

// xcCheckErr asserts err is a one-line *nn.ExchangeError containing want.
func xcCheckErr(t *testing.T, err error, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one containing %q", want)
	}
	var xe *nn.ExchangeError
	if !errors.As(err, &xe) {
		t.Errorf("error %q is %T, not *nn.ExchangeError", err, err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Errorf("error is not one line: %q", err)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}

func xcVec32(vs ...float32) spec.SomeTensor[spec.F32] {
	d := make([]spec.F32, len(vs))
	for i, v := range vs {
		d[i] = spec.F32(v)
	}
	return spec.Erase(spec.Vector(d...))
}

func TestNewPack(t *testing.T) {
	v := xcVec32(1, 2)
	tests := []struct {
		name   string
		names  []string
		values []spec.SomeTensor[spec.F32]
		err    string
	}{
		{"ok", []string{"a", "b"}, []spec.SomeTensor[spec.F32]{v, v}, ""},
		{"empty pack", nil, nil, ""},
		{"length mismatch", []string{"a"}, nil, "1 names but 0 values"},
		{"empty name", []string{""}, []spec.SomeTensor[spec.F32]{v}, "empty parameter name"},
		{"bad utf8", []string{"\xff"}, []spec.SomeTensor[spec.F32]{v}, "not valid UTF-8"},
		{"duplicate", []string{"a", "a"}, []spec.SomeTensor[spec.F32]{v, v}, `name "a" already used by entry 0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := nn.NewPack(tc.names, tc.values)
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p.Len() != len(tc.names) {
					t.Fatalf("Len = %d", p.Len())
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
		})
	}
}

func TestPackAccess(t *testing.T) {
	w := spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{2, 1}, Data: []spec.F32{3, 4}})
	b := xcVec32(5)
	p, err := nn.NewPack([]string{"w", "b"}, []spec.SomeTensor[spec.F32]{w, b})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Names(); len(got) != 2 || got[0] != "w" || got[1] != "b" {
		t.Fatalf("Names = %v", got)
	}
	if name, v := p.At(1); name != "b" || !v.Shape().Equal(spec.Shape{1}) {
		t.Fatalf("At(1) = %q %v", name, v.Shape())
	}
	if _, ok := p.Lookup("nope"); ok {
		t.Fatal("Lookup found a missing name")
	}
	tw, err := p.Tensor("w", spec.Shape{2, 1})
	if err != nil || tw.Data[1] != 4 {
		t.Fatalf("Tensor(w) = %v, %v", tw, err)
	}
	if _, err := p.Tensor("w", spec.Shape{1, 2}); err == nil || !strings.Contains(err.Error(), "stored shape [2,1] is not the requested shape [1,2]") {
		t.Fatalf("Tensor with the wrong shape: %v", err)
	}
	if _, err := p.Tensor("x", spec.Shape{}); err == nil {
		t.Fatal("Tensor of a missing name succeeded")
	}
	specs := p.Specs()
	if len(specs) != 2 || specs[0].Name != "w" || !specs[0].Shape.Equal(spec.Shape{2, 1}) {
		t.Fatalf("Specs = %v", specs)
	}
	q, err := nn.NewPack(p.Names(), p.State())
	if err != nil || q.Len() != 2 {
		t.Fatalf("rebuild from State: %v", err)
	}
	var zero nn.Pack[spec.F64]
	if zero.Len() != 0 || len(zero.State()) != 0 {
		t.Fatal("zero pack is not empty")
	}
	if _, ok := zero.Lookup("a"); ok {
		t.Fatal("zero pack found a name")
	}
}

func TestExchangeErrorFormat(t *testing.T) {
	tests := []struct {
		err  nn.ExchangeError
		want string
	}{
		{nn.ExchangeError{Format: "TLSF32B", Where: "tensor 2: dims", Msg: "element count 6 does not match dims [2 4]", Offset: 88},
			"TLSF32B: tensor 2: dims: element count 6 does not match dims [2 4] (offset 88)"},
		{nn.ExchangeError{Format: "state JSON", Msg: `missing field "format"`, Offset: -1}, `state JSON: missing field "format"`},
		{nn.ExchangeError{Format: "x", Where: "w", Msg: "a\nb", Offset: 0}, "x: w: a b (offset 0)"},
	}
	for _, tc := range tests {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("got %q, want %q", got, tc.want)
		}
	}
}

func TestStateConversions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	s32 := xcState32(r, 20, xcOpts{})
	wide := nn.WidenState(s32)
	back, err := nn.NarrowState(wide)
	if err != nil {
		t.Fatal(err)
	}
	if d := xcSameState(s32, back); d != "" {
		t.Fatalf("narrow(widen(x)) != x: %s", d)
	}
	// NaNs widen to the canonical float64 NaN.
	w := nn.WidenState([]spec.SomeTensor[spec.F32]{xcVec32(math.Float32frombits(nn.CanonicalNaN32))})
	wt, _ := w[0].Cast(spec.Shape{1})
	if math.Float64bits(float64(wt.Data[0])) != nn.CanonicalNaN64 {
		t.Fatalf("widened NaN = %#x", math.Float64bits(float64(wt.Data[0])))
	}
	// Narrowing an inexact value fails with its location.
	inexact := []spec.SomeTensor[spec.F64]{spec.Erase(spec.Vector[spec.F64](1, 0.1))}
	if _, err := nn.NarrowState(inexact); err == nil || !strings.Contains(err.Error(), "tensor 0: element 1") {
		t.Fatalf("NarrowState(0.1) = %v", err)
	}

	ts := []spec.Tensor[spec.F32]{spec.Vector[spec.F32](1, 2), spec.Scalar0[spec.F32](3)}
	erased := nn.EraseState(ts)
	got, err := nn.CastState(erased, []spec.Shape{{2}, {}})
	if err != nil || got[1].Data[0] != 3 {
		t.Fatalf("CastState = %v, %v", got, err)
	}
	if _, err := nn.CastState(erased, []spec.Shape{{2}, {1}}); err == nil || !strings.Contains(err.Error(), "tensor 1") {
		t.Fatalf("CastState with a wrong shape: %v", err)
	}
	if _, err := nn.CastState(erased, []spec.Shape{{2}}); err == nil {
		t.Fatal("CastState with a wrong count succeeded")
	}

	// CanonicalizeStateNaNs replaces every NaN and leaves the input alone.
	odd := []spec.SomeTensor[spec.F32]{xcVec32(1, math.Float32frombits(0xFFC00000), math.Float32frombits(0x7F800001))}
	canon := nn.CanonicalizeStateNaNs(odd)
	ct, _ := canon[0].Cast(spec.Shape{3})
	for k, want := range []uint32{0x3F800000, nn.CanonicalNaN32, nn.CanonicalNaN32} {
		if got := math.Float32bits(float32(ct.Data[k])); got != want {
			t.Errorf("element %d = %#x, want %#x", k, got, want)
		}
	}
	ot, _ := odd[0].Cast(spec.Shape{3})
	if math.Float32bits(float32(ot.Data[1])) != 0xFFC00000 {
		t.Error("CanonicalizeStateNaNs modified its input")
	}
}
