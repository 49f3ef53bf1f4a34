package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCompareIdentityComputedInt: an Identity (here two in a row, as the
// expanded DynamicQuantizeLinear body writes y_zero_point = Identity(…)) of
// an integer computed from float data (branch q37) is an alias: its
// elements are the integer's, compared exactly. Model: i = Identity(
// Identity(QuantizeLinear(Mul(x, 3), 1/4, 128))) into UINT8. The recorded
// codes are computed here in Go's float32 arithmetic (the product, one
// binary32 division, math.RoundToEven, the zero point, the clamp to
// [0, 255]), not by the code under test. x = 1/8 − 2⁻²⁷ lies ¾ ulp of the
// product below the tie 3/2: inconclusive, never a FAIL. One code off
// (129 → 130) FAILS. A Neg of the alias is refused in one line naming
// the node (exit 2): Identity passes the integer on, other ops do not.
func TestCompareIdentityComputedInt(t *testing.T) {
	vi := typedValueInfoPB
	model := func(tail []byte, out string, yt uint64) pbuf {
		g := pbuf(nil).
			bytes(1, nodePB("m", "Mul", []string{"x", "a"}, "m")).
			bytes(1, nodePB("q", "QuantizeLinear", []string{"m", "s", "z"}, "q")).
			bytes(1, nodePB("i1", "Identity", []string{"q"}, "i1")).
			bytes(1, nodePB("i2", "Identity", []string{"i1"}, "i"))
		if tail != nil {
			g = g.bytes(1, tail)
		}
		g = g.str(2, "qid").
			bytes(5, tensorPB("a", nil, 3)).
			bytes(5, tensorPB("s", nil, 0.25)).bytes(5, rawTensorPB("z", 2, nil, 128)).
			bytes(11, vi("x", 1, 4)).bytes(12, vi(out, yt, 4))
		return pbuf(nil).varint(1, 10).bytes(7, g).bytes(8, pbuf(nil).varint(2, 13))
	}
	xs := []float32{0.1, 1.3, -2.2, math.Nextafter32(0.125, 0)}
	codes := make([]byte, len(xs))
	for i, x := range xs {
		m := x * 3
		codes[i] = byte(math.Min(255, math.Max(0, math.RoundToEven(float64(m/0.25))+128)))
	}
	if codes[0] != 129 || codes[3] != 129 {
		t.Fatalf("reference codes %v: want 129 first and last", codes)
	}
	in := tensorPB("x", []int64{4}, xs...)
	for j := range codes {
		if j == 3 {
			continue // the undecided element: no planted fault there
		}
		off := append([]byte(nil), codes...)
		off[j]++
		runCompareCases(t, []compareCase{
			{"one code off fails", model(nil, "i", 2), in, rawTensorPB("i", 2, []int64{4}, off...), 1, 2, 1, 1},
		})
	}
	runCompareCases(t, []compareCase{
		{"Identity of a computed integer holds", model(nil, "i", 2), in, rawTensorPB("i", 2, []int64{4}, codes...), 0, 3, 0, 1},
	})

	// The refusal: Neg of the alias.
	dir := t.TempDir()
	m := filepath.Join(dir, "model.onnx")
	d := filepath.Join(dir, "test_data_set_0")
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{m: model(nodePB("n", "Neg", []string{"i"}, "y"), "y", 2), filepath.Join(d, "input_0.pb"): in, filepath.Join(d, "output_0.pb"): rawTensorPB("y", 2, []int64{4}, codes...)} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, _, errs := runCmd("compare", "--json", "--onnx", m, "--data", d)
	if code != 2 || strings.Count(strings.TrimSpace(errs), "\n") != 0 || !strings.Contains(errs, "(Neg)") || !strings.Contains(errs, "integer computed from float data") {
		t.Fatalf("Neg of a computed integer: exit %d, stderr %q; want exit 2 and one line naming the Neg node", code, errs)
	}
}
