package spec_test

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestDefaultNormEps: the default is 1/100000, each call a fresh value,
// and the registry's layer_norm without an ε is layer_norm with it.
func TestDefaultNormEps(t *testing.T) {
	e := spec.DefaultNormEps()
	if e.Cmp(big.NewRat(1, 100000)) != 0 {
		t.Fatalf("DefaultNormEps = %v, want 1/100000", e)
	}
	e.SetInt64(7)
	if spec.DefaultNormEps().Cmp(big.NewRat(1, 100000)) != 0 {
		t.Fatal("DefaultNormEps shares its value between calls")
	}
	// Over F64, layer_norm of [0, 1] is ±(1/2)/√(1/4 + ε) (mean 1/2,
	// variance 1/4, by hand): with no ε given it must be that value for
	// ε = 1/100000 and the same bits as with ε given explicitly.
	ln, err := spec.Default[spec.F64]().Lookup("layer_norm")
	if err != nil {
		t.Fatal(err)
	}
	x, _ := spec.NewTensor(spec.Shape{1, 2}, []spec.F64{0, 1})
	a, err := ln.Apply(&spec.Attrs{Axis: 1}, []spec.Tensor[spec.F64]{x})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ln.Apply(&spec.Attrs{Axis: 1, Eps: big.NewRat(1, 100000)}, []spec.Tensor[spec.F64]{x})
	if err != nil {
		t.Fatal(err)
	}
	if !spec.SameTensor(a, b) {
		t.Errorf("layer_norm with no ε %v differs from ε = 1/100000 %v", a, b)
	}
	want := 0.5 / math.Sqrt(0.25+1e-5)
	if got := float64(a.Data[1]); math.Abs(got-want) > 1e-12 || math.Abs(float64(a.Data[0])+want) > 1e-12 {
		t.Errorf("layer_norm of [0, 1] = %v, want ±%v", a, want)
	}
}
