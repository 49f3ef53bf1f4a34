package nn_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/tlcheck/tlcheck/nn"
	"github.com/tlcheck/tlcheck/spec"
)

// A PyTorch parameter file is imported against the expected layout, its
// state is written as a TLSF32B stream and read back bit for bit, and the
// pack is exported again with sorted names and shortest decimals.
func ExampleImportTorchParams() {
	doc := `{"params": {"fc.weight": [[0.1, -2], [3, 4]], "fc.bias": [0, -0]},
	         "meta": {"fc.weight": {"shape": [2, 2], "dtype": "torch.float32"},
	                  "fc.bias": {"shape": [2], "dtype": "torch.float32"}}}`
	want := []nn.ParamSpec{{Name: "fc.weight", Shape: spec.Shape{2, 2}}, {Name: "fc.bias", Shape: spec.Shape{2}}}
	pack, err := nn.ImportTorchParams[spec.F32](strings.NewReader(doc), want)
	if err != nil {
		fmt.Println(err)
		return
	}
	var stream bytes.Buffer
	if err := nn.WriteTLSF32B(&stream, pack.State()); err != nil {
		fmt.Println(err)
		return
	}
	state, err := nn.ReadTLSF32B(&stream)
	if err != nil {
		fmt.Println(err)
		return
	}
	back, _ := nn.NewPack(pack.Names(), state)
	w, _ := back.Tensor("fc.weight", spec.Shape{2, 2})
	fmt.Println(w)
	_ = nn.ExportTorchParams(os.Stdout, back)

	// A shape that disagrees with the expected layout is refused.
	want[1].Shape = spec.Shape{3}
	_, err = nn.ImportTorchParams[spec.F32](strings.NewReader(doc), want)
	fmt.Println(err)
	// Output:
	// [[0.1, -2], [3, 4]]
	// {"params":{"fc.bias":[0,-0],"fc.weight":[[0.1,-2],[3,4]]},"meta":{"fc.bias":{"shape":[2],"dtype":"torch.float32"},"fc.weight":{"shape":[2,2],"dtype":"torch.float32"}}}
	// torch params: meta["fc.bias"].shape: shape [2] does not match the expected shape [3] (offset 214)
}

// Reading a TLSF32B stream whose element count disagrees with its dims.
func ExampleReadTLSF32B() {
	var s bytes.Buffer
	s.WriteString(nn.TLSF32BMagic)
	for _, v := range []uint64{1, 1, 2, 2, 4, 6} { // version, 1 tensor, rank 2, dims 2 4, count 6
		s.Write([]byte{byte(v), 0, 0, 0, 0, 0, 0, 0})
	}
	_, err := nn.ReadTLSF32B(&s)
	fmt.Println(err)
	// Output:
	// TLSF32B: tensor 0: dims: element count 6 does not match dims [2 4] (offset 47)
}
