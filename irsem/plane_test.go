package irsem

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestPlaneRatExact: the rational a plane derives for each element
// (Plane.Rat, Rats, Weight) is exactly big.Rat.SetFloat64 of its float —
// binary32 planes (FLOAT, and the FLOAT16 and BFLOAT16 values the ONNX
// decoder widens into binary32) and binary64 planes (DOUBLE), with ±0,
// subnormals and the extremes of each format — and that NaN and ±∞ are
// refused (the importer keeps such tensors on its former path).
func TestPlaneRatExact(t *testing.T) {
	f16 := func(bits uint16) float32 { // IEEE binary16 → float32, exactly
		s, e, m := bits>>15, int(bits>>10&31), float64(bits&1023)
		v := math.Ldexp(m, -24) // subnormal
		if e > 0 {
			v = math.Ldexp(1024+m, e-25)
		}
		if s == 1 {
			v = -v
		}
		return float32(v)
	}
	bf16 := func(bits uint16) float32 { return math.Float32frombits(uint32(bits) << 16) }
	f32 := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.1, -3.75,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, math.Float32frombits(0x007fffff), // subnormals
		math.Float32frombits(0x00800000), math.MaxFloat32, -math.MaxFloat32, math.Nextafter32(1, 2), math.Nextafter32(1, 0),
		f16(0x0001), f16(0x03ff), f16(0x0400), f16(0x7bff), f16(0xfbff), f16(0x3c01), f16(0x8000),
		bf16(0x0001), bf16(0x007f), bf16(0x0080), bf16(0x7f7f), bf16(0xff7f), bf16(0x3f81), bf16(0x8000)}
	f64 := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, math.Pi, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64,
		math.Float64frombits(0x000fffffffffffff), math.Float64frombits(0x0010000000000000), math.MaxFloat64, -math.MaxFloat64,
		math.Nextafter(1, 2), float64(math.MaxFloat32), 1e-300}
	p32, err := NewPlane32(spec.Shape{len(f32)}, f32)
	if err != nil {
		t.Fatal(err)
	}
	p64, err := NewPlane64(spec.Shape{len(f64)}, f64)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		p    *Plane
		at   func(i int) float64
	}{{"binary32", p32, func(i int) float64 { return float64(f32[i]) }}, {"binary64", p64, func(i int) float64 { return f64[i] }}} {
		e := &Params{}
		e.SetWeightPlane(c.p)
		w := e.Weight()
		rs := c.p.Rats()
		for i := 0; i < c.p.Len(); i++ {
			want := new(big.Rat).SetFloat64(c.at(i))
			for _, got := range []spec.Rat{c.p.Rat(i), w.Data[i], rs.Data[i]} {
				if got.Big().Cmp(want) != 0 {
					t.Errorf("%s element %d (%v): derived %v, want %v", c.name, i, c.at(i), got, want.RatString())
				}
			}
			if c.p.Float64At(i) != c.at(i) || math.Signbit(c.p.Float64At(i)) != math.Signbit(c.at(i)) {
				t.Errorf("%s element %d: Float64At %v, want %v", c.name, i, c.p.Float64At(i), c.at(i))
			}
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := NewPlane32(spec.Shape{2}, []float32{1, float32(bad)}); err == nil {
			t.Errorf("NewPlane32 accepted %v", bad)
		}
		if _, err := NewPlane64(spec.Shape{2}, []float64{1, bad}); err == nil {
			t.Errorf("NewPlane64 accepted %v", bad)
		}
	}
	if _, err := NewPlane32(spec.Shape{3}, []float32{1, 2}); err == nil {
		t.Error("NewPlane32 accepted 2 values for shape [3]")
	}
}

// TestPlanePayloadIdentical: a payload holding W as a plane is Equal to
// the one holding its rationals, encodes to the same bytes, passes
// CheckPayload alike and evaluates (F32, Interval, Rat) to the same
// values; one element one binary32 ulp off makes it unequal and changes
// the exact output.
func TestPlanePayloadIdentical(t *testing.T) {
	g := &Graph{Nodes: []Node{
		{ID: 0, Parents: []int{}, Kind: Kind{Op: OpInput}, Shape: spec.Shape{1, 3}},
		{ID: 1, Parents: []int{0}, Kind: Kind{Op: OpLinear}, Shape: spec.Shape{1, 2}},
	}, InputID: 0, OutputID: 1}
	ws := []float32{0.5, -1.25, 3, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32, 7.0 / 8}
	wr := RatTensor{Shape: spec.Shape{2, 3}, Data: make([]spec.Rat, len(ws))}
	for i, f := range ws {
		wr.Data[i], _ = spec.RatFromFloat64(float64(f))
	}
	bias := RatTensor{Shape: spec.Shape{2}, Data: []spec.Rat{spec.NewRat(1, 4), spec.NewRat(-1, 3)}}
	rat := &Payload{Entries: map[int]*Params{1: {W: &wr, B: &bias}}}
	mk := func(ws []float32) *Payload {
		pl, err := NewPlane32(spec.Shape{2, 3}, ws)
		if err != nil {
			t.Fatal(err)
		}
		e := &Params{B: &bias}
		e.SetWeightPlane(pl)
		return &Payload{Entries: map[int]*Params{1: e}}
	}
	pla := mk(ws)
	if !rat.Equal(pla) || !pla.Equal(rat) || !pla.Equal(mk(ws)) {
		t.Fatal("plane and rational payloads not Equal")
	}
	if err := CheckPayload(g, pla); err != nil {
		t.Fatal(err)
	}
	a, err := EncodePayload(rat)
	if err != nil {
		t.Fatal(err)
	}
	b, err := EncodePayload(pla)
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != string(b) {
		t.Fatalf("encodings differ:\n%s\n%s", a, b)
	}
	x := RatTensor{Shape: spec.Shape{1, 3}, Data: []spec.Rat{spec.NewRat(1, 3), spec.NewRat(-2, 1), spec.NewRat(5, 7)}}
	yr, err := DenoteAll(g, rat, x)
	if err != nil {
		t.Fatal(err)
	}
	yp, err := DenoteAll(g, pla, x)
	if err != nil {
		t.Fatal(err)
	}
	if !spec.SameTensor(yr[1], yp[1]) {
		t.Fatalf("exact outputs differ: %v, %v", yr[1].Data, yp[1].Data)
	}
	fr, _ := DenoteAll(g, rat, ConvertTensor[spec.F32](x))
	fp, _ := DenoteAll(g, pla, ConvertTensor[spec.F32](x))
	if !spec.SameTensor(fr[1], fp[1]) {
		t.Fatalf("f32 outputs differ")
	}
	ir, _ := DenoteAll(g, rat, ConvertTensor[spec.Interval](x))
	ip, _ := DenoteAll(g, pla, ConvertTensor[spec.Interval](x))
	if !spec.SameTensor(ir[1], ip[1]) {
		t.Fatalf("interval outputs differ")
	}
	off := append([]float32(nil), ws...)
	off[0] = math.Nextafter32(off[0], 1)
	po := mk(off)
	if po.Equal(rat) || rat.Equal(po) || po.Equal(pla) {
		t.Fatal("a weight one ulp off is Equal")
	}
	yo, err := DenoteAll(g, po, x)
	if err != nil {
		t.Fatal(err)
	}
	if spec.SameTensor(yr[1], yo[1]) {
		t.Fatal("a weight one ulp off left the exact output unchanged")
	}
}
