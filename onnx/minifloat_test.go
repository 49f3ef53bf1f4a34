package onnx

import (
	"math"
	"testing"
)

// TestDecodePacked: the float 8, 4-bit and 2-bit types from raw_data and
// from int32_data, packed as onnx.proto says (two 4-bit or four 2-bit
// elements to a byte or an int32_data entry, the first in the least
// significant bits; INT4 and INT2 two's complement), the values written by
// hand: E4M3FN 0x2A = 0.3125, 0xFF = NaN; E5M2 0x7C = +∞; FNUZ 0x80 = NaN;
// E2M1 0x7 = 6, 0x9 = −0.5; E8M0 0x7F = 1. A wrong length (an element
// more than the bytes hold) is refused naming raw_data, and an
// int32_data entry above 0xFF naming the entry.
func TestDecodePacked(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name  string
		dt    DataType
		dims  []int64
		raw   []byte
		int32 []int64
		f     []float64
		i     []int32
	}{
		{"E4M3FN raw", Float8E4M3FN, []int64{3}, []byte{0x2A, 0xFF, 0x80}, nil, []float64{0.3125, nan, math.Copysign(0, -1)}, nil},
		{"E4M3FN int32_data", Float8E4M3FN, []int64{2}, nil, []int64{0x2A, 0x7E}, []float64{0.3125, 448}, nil},
		{"E5M2 raw", Float8E5M2, []int64{2}, []byte{0x7C, 0xFC}, nil, []float64{math.Inf(1), math.Inf(-1)}, nil},
		{"E5M2FNUZ raw", Float8E5M2FNUZ, []int64{2}, []byte{0x80, 0x7F}, nil, []float64{nan, 57344}, nil},
		{"E2M1 raw, odd count", Float4E2M1, []int64{3}, []byte{0x97, 0x02}, nil, []float64{6, -0.5, 1}, nil},
		{"E2M1 int32_data", Float4E2M1, []int64{2}, nil, []int64{0x97}, []float64{6, -0.5}, nil},
		{"E8M0 raw", Float8E8M0, []int64{2}, []byte{0x7F, 0xFF}, nil, []float64{1, nan}, nil},
		{"INT4 raw", Int4, []int64{3}, []byte{0x8F, 0x07}, nil, nil, []int32{-1, -8, 7}},
		{"UINT4 int32_data", Uint4, []int64{2}, nil, []int64{0x8F}, nil, []int32{15, 8}},
		{"INT2 raw", Int2, []int64{5}, []byte{0b10_01_00_11, 0x01}, nil, nil, []int32{-1, 0, 1, -2, 1}},
		{"UINT2 raw", Uint2, []int64{4}, []byte{0b11_10_01_00}, nil, nil, []int32{0, 1, 2, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := tensorDims("x", c.dt, c.dims...)
			if c.raw != nil {
				m = m.bytes(9, c.raw)
			} else {
				m = m.packedInts(5, c.int32...)
			}
			tt, err := DecodeTensor(m)
			if err != nil {
				t.Fatal(err)
			}
			for k, want := range c.f {
				got := float64(tt.Float32[k])
				if !(got == want && math.Signbit(got) == math.Signbit(want) || math.IsNaN(got) && math.IsNaN(want)) {
					t.Errorf("element %d = %v, want %v", k, got, want)
				}
			}
			for k, want := range c.i {
				if tt.Int32[k] != want {
					t.Errorf("element %d = %d, want %d", k, tt.Int32[k], want)
				}
			}
			if tt.Len() != len(c.f)+len(c.i) {
				t.Errorf("Len %d", tt.Len())
			}
		})
	}
	if _, err := DecodeTensor(tensorDims("x", Int4, 3).bytes(9, []byte{0})); err == nil {
		t.Error("3 INT4 elements in 1 byte accepted")
	} else {
		t.Log(err)
	}
	if _, err := DecodeTensor(tensorDims("x", Float8E4M3FN, 1).packedInts(5, 0x100)); err == nil {
		t.Error("an int32_data entry of 9 bits accepted")
	} else {
		t.Log(err)
	}
}
