package nn_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// The fuzz targets feed arbitrary bytes to the three decoders. Each must
// return either a value or a one-line *nn.ExchangeError, never panic, and
// whatever it accepts must survive re-encoding bit for bit. Crashers found
// by `go test -fuzz` live under testdata/fuzz/<target>/ and run as
// regression cases with every `go test`.

// xcFuzzErr fails unless err is a one-line *nn.ExchangeError.
func xcFuzzErr(t *testing.T, err error) {
	t.Helper()
	var xe *nn.ExchangeError
	if !errors.As(err, &xe) {
		t.Fatalf("error %q is %T, not *nn.ExchangeError", err, err)
	}
	if strings.ContainsAny(err.Error(), "\n\r") {
		t.Fatalf("error is not one line: %q", err)
	}
}

func FuzzReadTLSF32B(f *testing.F) {
	r := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 8; i++ {
		var out bytes.Buffer
		if err := nn.WriteTLSF32B(&out, xcState32(r, i%4, xcOpts{})); err != nil {
			f.Fatal(err)
		}
		f.Add(out.Bytes())
	}
	f.Add(xcHeader(0).b)
	f.Add(xcHeader(1).u64(2, 2, 4, 6).b)
	f.Add(xcHeader(1).u64(0, 1).f32(0x7FC00001).b)
	f.Add(xcHeader(1).u64(1, 1<<26, 1<<26).f32(1).b)
	f.Fuzz(func(t *testing.T, in []byte) {
		got, err := nn.ReadTLSF32B(bytes.NewReader(in))
		streamed, serr := nn.ReadTLSF32B(xcPlain{bytes.NewReader(in)})
		if (err == nil) != (serr == nil) {
			t.Fatalf("bytes.Reader: %v; stream: %v", err, serr)
		}
		if err != nil {
			xcFuzzErr(t, err)
			xcFuzzErr(t, serr)
			return
		}
		if d := xcSameState(got, streamed); d != "" {
			t.Fatalf("bytes.Reader and stream disagree: %s", d)
		}
		// The format has exactly one spelling of each state, so the writer
		// must reproduce the input byte for byte.
		var out bytes.Buffer
		if err := nn.WriteTLSF32B(&out, got); err != nil {
			t.Fatalf("re-encoding an accepted stream: %v", err)
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("re-encoding differs from the accepted input:\n% x\n% x", in, out.Bytes())
		}
	})
}

func FuzzDecodeStateJSON(f *testing.F) {
	r := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 6; i++ {
		var out bytes.Buffer
		var err error
		if i%2 == 0 {
			err = nn.EncodeStateJSON(&out, xcState32(r, i%3+1, xcOpts{}))
		} else {
			err = nn.EncodeStateJSON(&out, xcState64(r, i%3+1, xcOpts{}))
		}
		if err != nil {
			f.Fatal(err)
		}
		f.Add(out.String())
	}
	f.Add(`{"state":[{"values":[0],"shape":[]}],"format":"torchlean_state_bits_v1"}`)
	f.Add(`{"format":"torchlean_state_float32_bits_v1","state":[{"shape":[2],"values":[2143289345,0]}]}`)
	f.Add(`{"format":"torchlean_state_float32_bits_v1","state":[{"shape":[0,5],"values":[]}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		file, err := nn.DecodeStateFile(strings.NewReader(in))
		if err != nil {
			xcFuzzErr(t, err)
			return
		}
		var out bytes.Buffer
		switch file.Format {
		case nn.StateBits32Format:
			err = nn.EncodeStateJSON(&out, file.F32)
		case nn.StateBits64Format:
			err = nn.EncodeStateJSON(&out, file.F64)
		default:
			t.Fatalf("accepted unknown tag %q", file.Format)
		}
		if err != nil {
			t.Fatalf("re-encoding accepted state: %v", err)
		}
		again, err := nn.DecodeStateFile(bytes.NewReader(out.Bytes()))
		if err != nil {
			t.Fatalf("decoding the re-encoding: %v", err)
		}
		if again.Format != file.Format {
			t.Fatalf("tag changed from %q to %q", file.Format, again.Format)
		}
		if d := xcSameState(file.F32, again.F32); d != "" {
			t.Fatal(d)
		}
		if d := xcSameState(file.F64, again.F64); d != "" {
			t.Fatal(d)
		}
	})
}

func FuzzImportTorchParams(f *testing.F) {
	f.Add(xcTorchDoc)
	f.Add(`{"params":{"x":[[],[]]},"meta":{"x":{"shape":[2,0,3],"dtype":"torch.float32"}}}`)
	f.Add(`{"meta":{"s":{"dtype":"torch.float64","shape":[]}},"params":{"s":-0}}`)
	f.Add(`{"params":{"w":[[1,2],[3]]},"meta":{"w":{"shape":[2,2],"dtype":"torch.float32"}}}`)
	f.Add(`{"params":{"w":[1e39, NaN]},"meta":{"w":{"shape":[2],"dtype":"torch.float32"}}}`)
	r := rand.New(rand.NewPCG(3, 3))
	for i := 0; i < 4; i++ {
		state := xcState32(r, 1+i, xcOpts{finite: true})
		names := make([]string, len(state))
		for k := range names {
			names[k] = "p" + strings.Repeat("x", k)
		}
		p, err := nn.NewPack(names, state)
		if err != nil {
			f.Fatal(err)
		}
		var out bytes.Buffer
		if err := nn.ExportTorchParams(&out, p); err != nil {
			f.Fatal(err)
		}
		f.Add(out.String())
	}
	f.Fuzz(func(t *testing.T, in string) {
		xcFuzzTorch[spec.F32](t, in)
		xcFuzzTorch[spec.F64](t, in)
	})
}

func xcFuzzTorch[T nn.ExchangeFloat](t *testing.T, in string) {
	p, err := nn.ImportTorchParamsSorted[T](strings.NewReader(in))
	if err != nil {
		xcFuzzErr(t, err)
		return
	}
	// The file's names in sorted order are also a valid expected list.
	if _, err := nn.ImportTorchParams[T](strings.NewReader(in), p.Specs()); err != nil {
		t.Fatalf("import with the file's own specs: %v", err)
	}
	var out bytes.Buffer
	if err := nn.ExportTorchParams(&out, p); err != nil {
		t.Fatalf("exporting accepted params: %v", err)
	}
	q, err := nn.ImportTorchParams[T](bytes.NewReader(out.Bytes()), p.Specs())
	if err != nil {
		t.Fatalf("re-importing the export: %v\n%s", err, out.String())
	}
	if d := xcSameState(p.State(), q.State()); d != "" {
		t.Fatalf("round trip: %s", d)
	}
	var again bytes.Buffer
	if err := nn.ExportTorchParams(&again, q); err != nil || !bytes.Equal(out.Bytes(), again.Bytes()) {
		t.Fatalf("export is not idempotent (%v)", err)
	}
}
