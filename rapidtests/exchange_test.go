package rapidtests

import (
	"bytes"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// genState draws a model state: up to 4 tensors of rank ≤ 3, whose
// elements are arbitrary binary32 encodings (signed zeros, subnormals,
// infinities) except that every NaN is the canonical one.
func genState(t *rapid.T) []spec.SomeTensor[spec.F32] {
	n := rapid.IntRange(0, 4).Draw(t, "tensors")
	out := make([]spec.SomeTensor[spec.F32], n)
	for i := range out {
		shape := spec.Shape(rapid.SliceOfN(rapid.IntRange(0, 3), 0, 3).Draw(t, "shape"))
		x, _ := spec.Zeros[spec.F32](shape)
		for k := range x.Data {
			b := rapid.Uint32().Draw(t, "bits")
			if v := math.Float32frombits(b); v != v {
				b = nn.CanonicalNaN32
			}
			x.Data[k] = spec.F32(math.Float32frombits(b))
		}
		out[i] = spec.Erase(x)
	}
	return out
}

// stateBits is a state as shapes and bit patterns, the form go-cmp
// compares (NaN != NaN as floats, so floats are compared by encoding).
type stateBits struct {
	Shape []int
	Bits  []uint32
}

func asBits(state []spec.SomeTensor[spec.F32]) []stateBits {
	out := make([]stateBits, len(state))
	for i, s := range state {
		t, _ := s.Cast(s.Shape())
		out[i].Shape = append([]int{}, s.Shape()...)
		for _, v := range t.Data {
			out[i].Bits = append(out[i].Bits, math.Float32bits(float32(v)))
		}
	}
	return out
}

// TestExchangeRoundTrips discharges the exchange-format obligation of
// issue 4: model state written as the TLSF32B stream and as state JSON
// reads back bit for bit, and the writers are deterministic.
func TestExchangeRoundTrips(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		state := genState(t)
		var bin, bin2, js bytes.Buffer
		if err := nn.WriteTLSF32B(&bin, state); err != nil {
			t.Fatal(err)
		}
		if err := nn.WriteTLSF32B(&bin2, state); err != nil || !bytes.Equal(bin.Bytes(), bin2.Bytes()) {
			t.Fatalf("TLSF32B writer is not deterministic (%v)", err)
		}
		back, err := nn.ReadTLSF32B(bytes.NewReader(bin.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(asBits(state), asBits(back)); d != "" {
			t.Fatalf("TLSF32B round trip differs (-want +got):\n%s", d)
		}
		if err := nn.EncodeStateJSON(&js, state); err != nil {
			t.Fatal(err)
		}
		back, err = nn.DecodeStateJSON[spec.F32](bytes.NewReader(js.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(asBits(state), asBits(back)); d != "" {
			t.Fatalf("state JSON round trip differs (-want +got):\n%s", d)
		}
		// A truncated stream is rejected, never misread.
		if bin.Len() > 0 {
			cut := rapid.IntRange(0, bin.Len()-1).Draw(t, "cut")
			if _, err := nn.ReadTLSF32B(bytes.NewReader(bin.Bytes()[:cut])); err == nil {
				t.Fatalf("a stream truncated to %d of %d bytes was accepted", cut, bin.Len())
			}
		}
	})
}
