package compare

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/tlcheck/tlcheck/fpbound"
	"github.com/tlcheck/tlcheck/onnx"
	"github.com/tlcheck/tlcheck/spec"
)

// TestReadExactUint: recorded UINT32/UINT64 outputs judged exactly against
// the import's values. A UINT64 of 2⁶³ or more (the importer's values
// stay below) fails and is reported as the unsigned value it is, not the
// negative int64 of its bits; equal values hold; a UINT32 above 2³¹ is
// read unsigned (an int32 reading would make it negative and fail).
func TestReadExactUint(t *testing.T) {
	cases := []struct {
		name     string
		dt       onnx.DataType
		raw      []uint64
		want     []int64
		verdicts []fpbound.Verdict
		recorded []float32
	}{
		{"uint64", onnx.Uint64, []uint64{1 << 63, 5}, []int64{5, 5}, []fpbound.Verdict{fpbound.Fails, fpbound.Holds}, []float32{0x1p63, 5}},
		{"uint32", onnx.Uint32, []uint64{1<<32 - 1, 7}, []int64{1<<32 - 1, 7}, []fpbound.Verdict{fpbound.Holds, fpbound.Holds}, []float32{0x1p32, 7}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var raw []byte
			for _, u := range c.raw {
				if c.dt == onnx.Uint32 {
					raw = binary.LittleEndian.AppendUint32(raw, uint32(u))
				} else {
					raw = binary.LittleEndian.AppendUint64(raw, u)
				}
			}
			var pb []byte
			pb = protowire.AppendTag(pb, 1, protowire.VarintType)
			pb = protowire.AppendVarint(pb, uint64(len(c.raw)))
			pb = protowire.AppendTag(pb, 2, protowire.VarintType)
			pb = protowire.AppendVarint(pb, uint64(c.dt))
			pb = protowire.AppendTag(pb, 9, protowire.BytesType)
			pb = protowire.AppendBytes(pb, raw)
			path := filepath.Join(t.TempDir(), "output_0.pb")
			if err := os.WriteFile(path, pb, 0o600); err != nil {
				t.Fatal(err)
			}
			e := &onnx.ExactOutput{Name: "y", Shape: spec.Shape{len(c.raw)}, DataType: c.dt, Values: c.want}
			els, err := readExactFile(path, e, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, el := range els {
				if el.Verdict != c.verdicts[i] || el.Recorded != c.recorded[i] {
					t.Errorf("element %d: %v recorded %v, want %v %v", i, el.Verdict, el.Recorded, c.verdicts[i], c.recorded[i])
				}
			}
		})
	}
}
