package nn_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/iotest"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// xcStream builds TLSF32B bytes field by field.
type xcStream struct{ b []byte }

func xcHeader(count uint64) *xcStream {
	s := &xcStream{b: []byte(nn.TLSF32BMagic)}
	return s.u64(nn.TLSF32BVersion, count)
}

func (s *xcStream) u64(vs ...uint64) *xcStream {
	for _, v := range vs {
		s.b = binary.LittleEndian.AppendUint64(s.b, v)
	}
	return s
}

func (s *xcStream) f32(ws ...uint32) *xcStream {
	for _, w := range ws {
		s.b = binary.LittleEndian.AppendUint32(s.b, w)
	}
	return s
}

func (s *xcStream) raw(p ...byte) *xcStream { s.b = append(s.b, p...); return s }

// xcPlain hides Len so the reader takes the unknown-length path.
type xcPlain struct{ r io.Reader }

func (p xcPlain) Read(b []byte) (int, error) { return p.r.Read(b) }

func TestTLSF32BGolden(t *testing.T) {
	state := []spec.SomeTensor[spec.F32]{
		spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{2}, Data: []spec.F32{1, -2}}),
		spec.Erase(spec.Scalar0(spec.F32(math.Float32frombits(nn.CanonicalNaN32)))),
	}
	var out bytes.Buffer
	if err := nn.WriteTLSF32B(&out, state); err != nil {
		t.Fatal(err)
	}
	want := "544c5346333242" + // "TLSF32B", no padding
		"0100000000000000" + // version 1
		"0200000000000000" + // 2 tensors
		"0100000000000000" + "0200000000000000" + "0200000000000000" + // rank 1, dim 2, count 2
		"0000803f" + "000000c0" + // 1, -2
		"0000000000000000" + "0100000000000000" + // rank 0, count 1
		"0000c07f" // canonical NaN
	if got := hex.EncodeToString(out.Bytes()); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestTLSF32BRoundTrip: random tensors with every special value survive
// write then read bit for bit, through a length-reporting source, a plain
// stream and a one-byte-at-a-time stream, and the bytes are deterministic.
func TestTLSF32BRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	for iter := 0; iter < 100; iter++ {
		state := xcState32(r, r.IntN(6), xcOpts{})
		var out bytes.Buffer
		if err := nn.WriteTLSF32B(&out, state); err != nil {
			t.Fatal(err)
		}
		sources := map[string]io.Reader{
			"bytes":    bytes.NewReader(out.Bytes()),
			"plain":    xcPlain{bytes.NewReader(out.Bytes())},
			"one byte": iotest.OneByteReader(bytes.NewReader(out.Bytes())),
			"half":     iotest.HalfReader(xcPlain{bytes.NewReader(out.Bytes())}),
		}
		for name, src := range sources {
			got, err := nn.ReadTLSF32B(src)
			if err != nil {
				t.Fatalf("iter %d, %s: %v", iter, name, err)
			}
			if d := xcSameState(state, got); d != "" {
				t.Fatalf("iter %d, %s: %s", iter, name, d)
			}
		}
		var again bytes.Buffer
		got, _ := nn.ReadTLSF32B(bytes.NewReader(out.Bytes()))
		if err := nn.WriteTLSF32B(&again, got); err != nil || !bytes.Equal(out.Bytes(), again.Bytes()) {
			t.Fatalf("iter %d: re-encoding differs (%v)", iter, err)
		}
	}
}

// TestTLSF32BLargeTensor crosses the reader's payload chunk boundary.
func TestTLSF32BLargeTensor(t *testing.T) {
	n := 3*16384 + 5
	data := make([]spec.F32, n)
	for i := range data {
		data[i] = spec.F32(i) - 7
	}
	state := []spec.SomeTensor[spec.F32]{spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{n}, Data: data})}
	var out bytes.Buffer
	if err := nn.WriteTLSF32B(&out, state); err != nil {
		t.Fatal(err)
	}
	for _, src := range []io.Reader{bytes.NewReader(out.Bytes()), xcPlain{bytes.NewReader(out.Bytes())}} {
		got, err := nn.ReadTLSF32B(src)
		if err != nil {
			t.Fatal(err)
		}
		if d := xcSameState(state, got); d != "" {
			t.Fatal(d)
		}
	}
}

func TestTLSF32BErrors(t *testing.T) {
	one := func(s *xcStream) *xcStream { return s.u64(1, 1, 1).f32(0) } // rank 1, dim 1, count 1, 0.0
	tests := []struct {
		name string
		in   []byte
		err  string
	}{
		{"empty", nil, "TLSF32B: magic: truncated: 0 of 7 bytes present (offset 0)"},
		{"short magic", []byte("TLSF"), "TLSF32B: magic: truncated: 4 of 7 bytes present (offset 0)"},
		{"bad magic", []byte("TLSF64B........"), `TLSF32B: magic: not a TLSF32B stream: starts with "TLSF64B" (offset 0)`},
		{"NUL-padded magic", append([]byte("TLSF32B\x00"), make([]byte, 16)...), "TLSF32B: version: unsupported version 0 (this reader knows 1) (offset 7)"},
		{"version 2", (&xcStream{b: []byte("TLSF32B")}).u64(2, 0).b, "TLSF32B: version: unsupported version 2 (this reader knows 1) (offset 7)"},
		{"truncated version", []byte("TLSF32B\x01\x00"), "TLSF32B: version: truncated: 2 of 8 bytes present (offset 7)"},
		{"truncated count", (&xcStream{b: []byte("TLSF32B")}).u64(1).b, "TLSF32B: tensor count: truncated: 0 of 8 bytes present (offset 15)"},
		{"missing tensor", one(xcHeader(2)).b, "TLSF32B: tensor 1: rank: truncated: 0 of 8 bytes present (offset 51)"},
		{"rank 17", xcHeader(1).u64(17).b, "TLSF32B: tensor 0: rank: rank 17 exceeds the maximum 16 (offset 23)"},
		{"rank 2^64-1", xcHeader(1).u64(math.MaxUint64).b, "rank 18446744073709551615 exceeds the maximum 16"},
		{"truncated dims", xcHeader(1).u64(3, 1, 1).b, "TLSF32B: tensor 0: dims: truncated: 0 of 8 bytes present (offset 47)"},
		{"huge extent", xcHeader(1).u64(2, 0, 1<<63).b, "TLSF32B: tensor 0: dims: axis 1: extent 9223372036854775808 out of range (offset 39)"},
		{"too many elements", xcHeader(1).u64(2, 1<<20, 1<<20, 1<<40).b, "TLSF32B: tensor 0: dims: shape [1048576,1048576] has more than 134217728 elements: over the elements limit 134217728 (raise it with --max-elements or TLCHECK_MAX_ELEMENTS) (offset 31)"},
		{"overflowing product", xcHeader(1).u64(2, 1<<62, 1<<62).b, "axis 0 has extent 4611686018427387904: over the axis limit 134217728 (raise it with --max-axis or TLCHECK_MAX_AXIS) (offset 31)"},
		{"count mismatch", one(one(xcHeader(3))).u64(2, 2, 4, 6).b, "TLSF32B: tensor 2: dims: element count 6 does not match dims [2 4] (offset 103)"},
		{"truncated count field", xcHeader(1).u64(1, 2).raw(2, 0).b, "TLSF32B: tensor 0: count: truncated: 2 of 8 bytes present (offset 39)"},
		{"truncated payload", xcHeader(1).u64(1, 3, 3).f32(0, 0).raw(1).b, "TLSF32B: tensor 0: payload: truncated: 3 elements need 12 bytes, only 9 remain (offset 47)"},
		{"hostile payload", xcHeader(1).u64(1, 1<<26, 1<<26).f32(1).b, "TLSF32B: tensor 0: payload: truncated: 67108864 elements need 268435456 bytes, only 4 remain (offset 47)"},
		{"non-canonical NaN", xcHeader(1).u64(1, 3, 3).f32(0, 0x3F800000, 0x7FC00001).b, "TLSF32B: tensor 0: payload: element 2: non-canonical NaN 0x7FC00001 (only 0x7FC00000 is accepted) (offset 55)"},
		{"negative NaN", xcHeader(1).u64(0, 1).f32(0xFFC00000).b, "element 0: non-canonical NaN 0xFFC00000"},
		{"signalling NaN", xcHeader(1).u64(0, 1).f32(0x7F800001).b, "element 0: non-canonical NaN 0x7F800001"},
		{"trailing byte", one(xcHeader(1)).raw(0).b, "TLSF32B: trailing bytes after the last of 1 tensors (offset 51)"},
		{"trailing after empty", xcHeader(0).raw(0, 0, 0).b, "TLSF32B: trailing bytes after the last of 0 tensors (offset 23)"},
		{"hostile tensor count", xcHeader(math.MaxUint64).b, "TLSF32B: tensor 0: rank: truncated: 0 of 8 bytes present (offset 23)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := nn.ReadTLSF32B(bytes.NewReader(tc.in))
			xcCheckErr(t, err, tc.err)
		})
	}
}

// TestTLSF32BTruncatedStream: without a known length the payload is read
// until it runs out; the error says how much arrived.
func TestTLSF32BTruncatedStream(t *testing.T) {
	in := xcHeader(1).u64(1, 3, 3).f32(0, 0).raw(1).b
	_, err := nn.ReadTLSF32B(xcPlain{bytes.NewReader(in)})
	xcCheckErr(t, err, "TLSF32B: tensor 0: payload: truncated: 9 of 12 bytes present (offset 47)")
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("%v does not wrap io.ErrUnexpectedEOF", err)
	}
	// a NaN check happens per element, so its offset is exact on streams too
	in = xcHeader(1).u64(1, 3, 3).f32(0, 0x7FC00001, 0).b
	_, err = nn.ReadTLSF32B(xcPlain{bytes.NewReader(in)})
	xcCheckErr(t, err, "element 1: non-canonical NaN 0x7FC00001 (only 0x7FC00000 is accepted) (offset 51)")
}

func TestTLSF32BReadError(t *testing.T) {
	boom := errors.New("disk on fire")
	in := xcHeader(1).u64(1, 2, 2).b
	_, err := nn.ReadTLSF32B(io.MultiReader(bytes.NewReader(in), iotest.ErrReader(boom)))
	xcCheckErr(t, err, "TLSF32B: tensor 0: payload: read error: disk on fire")
	if !errors.Is(err, boom) {
		t.Errorf("%v does not wrap the read error", err)
	}
}

// TestTLSF32BHostileAllocation: a header that announces 2^26 elements and
// a 2^64−1 tensor count, followed by a few bytes, must not make the reader
// allocate anywhere near 256 MiB, with or without a known length.
func TestTLSF32BHostileAllocation(t *testing.T) {
	inputs := [][]byte{
		xcHeader(1).u64(1, 1<<26, 1<<26).f32(1, 2, 3).b,
		xcHeader(1).u64(2, 1<<13, 1<<13, 1<<26).b,
		xcHeader(math.MaxUint64).u64(0, 1).f32(0).b,
	}
	for i, in := range inputs {
		for _, plain := range []bool{false, true} {
			var src io.Reader = bytes.NewReader(in)
			if plain {
				src = xcPlain{src}
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := nn.ReadTLSF32B(src)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatalf("input %d accepted", i)
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
				t.Errorf("input %d (plain=%v): allocated %d bytes for a %d-byte input", i, plain, got, len(in))
			}
		}
	}
}

func TestTLSF32BReaderStreaming(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	state := xcState32(r, 3, xcOpts{})
	var out bytes.Buffer
	if err := nn.WriteTLSF32B(&out, state); err != nil {
		t.Fatal(err)
	}
	d, err := nn.NewTLSF32BReader(xcPlain{bytes.NewReader(out.Bytes())})
	if err != nil {
		t.Fatal(err)
	}
	if d.Count() != 3 || d.Offset() != 23 {
		t.Fatalf("Count = %d, Offset = %d", d.Count(), d.Offset())
	}
	var got []spec.SomeTensor[spec.F32]
	for {
		x, err := d.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, x)
	}
	if d.Offset() != int64(out.Len()) {
		t.Fatalf("Offset = %d after %d bytes", d.Offset(), out.Len())
	}
	if dd := xcSameState(state, got); dd != "" {
		t.Fatal(dd)
	}
	if _, err := d.Next(); err != io.EOF {
		t.Fatalf("Next after the end = %v", err)
	}
	// a failed reader stays failed
	d, err = nn.NewTLSF32BReader(bytes.NewReader(xcHeader(2).u64(17).b))
	if err != nil {
		t.Fatal(err)
	}
	_, err1 := d.Next()
	_, err2 := d.Next()
	if err1 == nil || err1 != err2 {
		t.Fatalf("errors %v then %v", err1, err2)
	}
}

func TestTLSF32BWriter(t *testing.T) {
	v := xcVec32(1, 2)
	var out bytes.Buffer
	w, err := nn.NewTLSF32BWriter(&out, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(v); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err == nil || err.Error() != "TLSF32B: 1 tensors written, but the header announced 2" {
		t.Fatalf("Close after 1 of 2 = %v", err)
	}

	out.Reset()
	w, _ = nn.NewTLSF32BWriter(&out, 1)
	if err := w.Write(v); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(v); err == nil {
		t.Fatal("Write beyond the announced count succeeded")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var direct bytes.Buffer
	if err := nn.WriteTLSF32B(&direct, []spec.SomeTensor[spec.F32]{v}); err != nil || !bytes.Equal(out.Bytes(), direct.Bytes()) {
		t.Fatalf("streamed and one-shot writes differ (%v)", err)
	}

	w, _ = nn.NewTLSF32BWriter(io.Discard, 2)
	_ = w.Write(v)
	err = w.Write(xcVec32(0, 0, math.Float32frombits(0x7FA00000)))
	xcCheckErr(t, err, "TLSF32B: tensor 1: element 2: non-canonical NaN 0x7FA00000 cannot be written")

	out.Reset()
	err = nn.WriteTLSF32B(&out, []spec.SomeTensor[spec.F32]{v, xcVec32(math.Float32frombits(0xFFC00000))})
	xcCheckErr(t, err, "TLSF32B: tensor 1: element 0: non-canonical NaN 0xFFC00000")
	if out.Len() != 0 {
		t.Fatalf("WriteTLSF32B wrote %d bytes before failing", out.Len())
	}
	if _, err := nn.NewTLSF32BWriter(io.Discard, -1); err == nil {
		t.Fatal("negative count accepted")
	}
}

// xcMillion is a one-tensor state of 2^20 elements and its TLSF32B bytes.
func xcMillion() ([]spec.SomeTensor[spec.F32], []byte) {
	r := rand.New(rand.NewPCG(9, 9))
	data := make([]spec.F32, 1<<20)
	for i := range data {
		data[i] = spec.F32(math.Float32frombits(xcWord32(r, xcOpts{})))
	}
	state := []spec.SomeTensor[spec.F32]{spec.Erase(spec.Tensor[spec.F32]{Shape: spec.Shape{1024, 1024}, Data: data})}
	var out bytes.Buffer
	if err := nn.WriteTLSF32B(&out, state); err != nil {
		panic(fmt.Sprint("benchmark setup: ", err))
	}
	return state, out.Bytes()
}

func BenchmarkReadTLSF32B1M(b *testing.B) {
	_, in := xcMillion()
	b.Run("bytes.Reader", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if _, err := nn.ReadTLSF32B(bytes.NewReader(in)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stream", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(in)))
		for b.Loop() {
			if _, err := nn.ReadTLSF32B(xcPlain{bytes.NewReader(in)}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkWriteTLSF32B1M(b *testing.B) {
	state, in := xcMillion()
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if err := nn.WriteTLSF32B(io.Discard, state); err != nil {
			b.Fatal(err)
		}
	}
}
