package onnx

import (
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// TestUintDecode: UINT32 and UINT64 tensors from raw_data (little-endian)
// and uint64_data, their exact values (derived here with math/big from the
// bytes, independently of the decoder), and the refusals: a UINT32 element
// of 32 bits or more in uint64_data, a UINT32 tensor in int32_data, STRING.
// A decoder reading UINT32 as int32 (0xFFFFFFFF → −1) or UINT64 as signed
// (2⁶⁴ − 1 → −1) is caught by the values.
func TestUintDecode(t *testing.T) {
	rawLE := func(dt DataType, dims []int64, raw ...byte) pb { return tensorDims("t", dt, dims...).bytes(9, raw) }
	ff := []byte{0xff, 0xff, 0xff, 0xff}
	cases := []struct {
		name string
		enc  pb
		dt   DataType
		want []string // decimal values
	}{
		{"uint32 raw", rawLE(Uint32, dims(2), append(ff, 7, 0, 0, 0)...), Uint32, []string{"4294967295", "7"}},
		{"uint32 uint64_data", tensorDims("t", Uint32, 3).packedInts(11, 0, 1<<31, math.MaxUint32), Uint32, []string{"0", "2147483648", "4294967295"}},
		{"uint64 raw", rawLE(Uint64, dims(2), append(append(ff, ff...), 5, 0, 0, 0, 0, 0, 0, 0x80)...), Uint64, []string{"18446744073709551615", "9223372036854775813"}},
		{"uint64 uint64_data", tensorDims("t", Uint64, 2).packedInts(11, 3, -1), Uint64, []string{"3", "18446744073709551615"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn, err := DecodeTensor(c.enc)
			if err != nil {
				t.Fatal(err)
			}
			if tn.DataType != c.dt || tn.Len() != len(c.want) || tn.Int32 != nil || tn.Float32 != nil {
				t.Fatalf("%+v", tn)
			}
			rs, err := tn.Rats()
			if err != nil {
				t.Fatal(err)
			}
			for i, w := range c.want {
				wb, _ := new(big.Int).SetString(w, 10)
				if got := rs[i].Big(); !got.IsInt() || got.Num().Cmp(wb) != 0 {
					t.Errorf("element %d: %s, want %s", i, got.RatString(), w)
				}
				if c.dt == Uint64 && tn.Uint64At(i) != wb.Uint64() {
					t.Errorf("Uint64At(%d) = %d, want %s", i, tn.Uint64At(i), w)
				}
			}
		})
	}
	bad := []struct {
		name string
		enc  pb
		want []string
	}{
		{"uint32 of 33 bits", tensorDims("t", Uint32, 2).packedInts(11, 1, 1<<32), []string{"element 1", "4294967296", "UINT32"}},
		{"uint32 in int32_data", tensorDims("t", Uint32, 1).packedInts(5, 1), []string{"int32_data", "UINT32", "uint64_data"}},
		{"uint64 raw short", rawLE(Uint64, dims(1), 1, 2, 3, 4), []string{"raw_data", "4 bytes", "UINT64"}},
		{"string", tensorDims("t", String, 1), []string{"data type STRING is not supported"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := DecodeTensor(c.enc)
			if err == nil {
				t.Fatal("decoded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
		})
	}
}

// TestUintImport: bound UINT32/UINT64 inputs folded through the node-test
// ops — Equal, Less, GreaterOrEqual, Mod, Max, Add, Sub, TopK — with the
// exact outputs compared against Go's own unsigned arithmetic on the same
// values (uint32/uint64, computed here). The result keeps the inputs' type
// (a fold that returned INT64 would not match the recorded UINT32 file);
// a difference below 0 is refused naming the element (ONNX defines no
// wraparound for Sub), and a UINT64 of 2⁶³ or more is refused at the bind.
func TestUintImport(t *testing.T) {
	xs := []uint64{7, 3000000000, 4294967295, 12}
	ys := []uint64{5, 3000000000, 2, 13}
	for _, dt := range []DataType{Uint32, Uint64} {
		x := &Tensor{Name: "x", Dims: dims(4), DataType: dt, Int64: u2i(xs)}
		y := &Tensor{Name: "y", Dims: dims(4), DataType: dt, Int64: u2i(ys)}
		m := newMG(13).inT("x", dt, 4).inT("y", dt, 4).
			op("Equal", ins("x", "y"), ins("eq")).op("Less", ins("x", "y"), ins("lt")).
			op("GreaterOrEqual", ins("x", "y"), ins("ge")).op("Mod", ins("x", "y"), ins("mod")).
			op("Max", ins("x", "y"), ins("max")).op("Min", ins("x", "y"), ins("min")).
			initI("k", dims(1), 2).op("TopK", ins("x", "k"), ins("tv", "ti"))
		for _, o := range []string{"eq", "lt", "ge", "mod", "max", "min", "tv", "ti"} {
			m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: o})
		}
		im, err := Import(m.model(), Options{Bind: map[string]*Tensor{"x": x, "y": y}})
		if err != nil {
			t.Fatalf("%v: %v", dt, err)
		}
		b := func(c bool) uint64 {
			if c {
				return 1
			}
			return 0
		}
		want := map[string][]uint64{}
		wantDT := map[string]DataType{"eq": Bool, "lt": Bool, "ge": Bool, "mod": dt, "max": dt, "min": dt, "tv": dt, "ti": Int64}
		for i := range xs {
			want["eq"] = append(want["eq"], b(xs[i] == ys[i]))
			want["lt"] = append(want["lt"], b(xs[i] < ys[i]))
			want["ge"] = append(want["ge"], b(xs[i] >= ys[i]))
			want["mod"] = append(want["mod"], xs[i]%ys[i])
			want["max"] = append(want["max"], max(xs[i], ys[i]))
			want["min"] = append(want["min"], min(xs[i], ys[i]))
		}
		want["tv"] = []uint64{4294967295, 3000000000} // the two largest of xs, descending
		want["ti"] = []uint64{2, 1}
		if len(im.Exact) != len(want) {
			t.Fatalf("%v: %d exact outputs, want %d", dt, len(im.Exact), len(want))
		}
		for _, e := range im.Exact {
			got := u2iBack(e.Values)
			if !slices.Equal(got, want[e.Name]) || e.DataType != wantDT[e.Name] {
				t.Errorf("%v: %s = %v %v, want %v %v", dt, e.Name, got, e.DataType, want[e.Name], wantDT[e.Name])
			}
		}
	}
	// Refused, naming the element: a result outside the type (no wraparound
	// is defined), a UINT64 beyond the importer's int64 values.
	bad := []struct {
		name string
		dt   DataType
		op   string
		x, y []uint64
		want []string
	}{
		{"uint32 sub below 0", Uint32, "Sub", []uint64{5, 12}, []uint64{5, 13}, []string{"Sub", "element 1", "-1", "UINT32"}},
		{"uint64 sub below 0", Uint64, "Sub", []uint64{0, 1}, []uint64{1, 1}, []string{"Sub", "element 0", "-1", "UINT64"}},
		{"uint32 add beyond 2^32-1", Uint32, "Add", []uint64{1, 4294967295}, []uint64{1, 2}, []string{"Add", "element 1", "4294967297", "UINT32"}},
		{"uint32 mul beyond 2^32-1", Uint32, "Mul", []uint64{65536, 1}, []uint64{65536, 1}, []string{"Mul", "element 0", "4294967296", "UINT32"}},
		{"uint64 of 2^63", Uint64, "Add", []uint64{1 << 63, 1}, []uint64{0, 0}, []string{`"x"`, "element 0", "9223372036854775808"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			x := &Tensor{Name: "x", Dims: dims(2), DataType: c.dt, Int64: u2i(c.x)}
			y := &Tensor{Name: "y", Dims: dims(2), DataType: c.dt, Int64: u2i(c.y)}
			m := newMG(13).inT("x", c.dt, 2).inT("y", c.dt, 2).op(c.op, ins("x", "y"), ins("z"))
			m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "z"})
			_, err := Import(m.model(), Options{Bind: map[string]*Tensor{"x": x, "y": y}})
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q", err, w)
				}
			}
		})
	}
}

// u2i holds unsigned values as the int64 bits Tensor.Int64 keeps.
func u2i(us []uint64) []int64 {
	out := make([]int64, len(us))
	for i, u := range us {
		out[i] = int64(u)
	}
	return out
}

func u2iBack(xs []int64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = uint64(x)
	}
	return out
}
