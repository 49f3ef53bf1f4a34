package onnx

import (
	"encoding/binary"
	"math"
	"testing"
)

// TestFrom16 decodes FLOAT16 and BFLOAT16 bit patterns, from int32_data
// and from raw_data, against values worked by hand from the formats
// (binary16: bias 15, 10 fraction bits; bfloat16: the top half of a
// binary32).
func TestFrom16(t *testing.T) {
	cases := []struct {
		dt   DataType
		bits uint16
		want float64
	}{
		{Float16, 0x3c00, 1},
		{Float16, 0xc000, -2},
		{Float16, 0x3555, 1365.0 / 4096},
		{Float16, 0x7bff, 65504},
		{Float16, 0x0001, 0x1p-24},
		{Float16, 0x03ff, 1023 * 0x1p-24},
		{Float16, 0x0400, 0x1p-14},
		{Float16, 0x8000, 0},
		{Float16, 0x7c00, math.Inf(1)},
		{Float16, 0xfc00, math.Inf(-1)},
		{Float16, 0x7e00, math.NaN()},
		{BFloat16, 0x3f80, 1},
		{BFloat16, 0xc040, -3},
		{BFloat16, 0x7f7f, 0x1p128 - 0x1p120},
		{BFloat16, 0x0001, 0x1p-133},
		{BFloat16, 0xff80, math.Inf(-1)},
	}
	for _, c := range cases {
		got := float64(from16(c.dt, c.bits))
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("%s %#04x = %g, want %g", c.dt, c.bits, got, c.want)
		}
		if math.IsNaN(c.want) {
			continue
		}
		// The same element through raw_data and through int32_data.
		raw := binary.LittleEndian.AppendUint16(nil, c.bits)
		for _, enc := range [][]byte{tensorDims("w", c.dt, 1).bytes(9, raw), tensorDims("w", c.dt, 1).packedInts(5, int64(c.bits))} {
			tt, err := DecodeTensor(enc)
			if err != nil {
				t.Fatalf("%s %#04x: %v", c.dt, c.bits, err)
			}
			if len(tt.Float32) != 1 || float64(tt.Float32[0]) != c.want {
				t.Errorf("%s %#04x decoded %v, want %g", c.dt, c.bits, tt.Float32, c.want)
			}
		}
	}
}
