package irsem

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// pinnedWindowOutputs are digests of the outputs of windowCases computed by
// irsem's own forward-only conv/max_pool/avg_pool kernels (irsem/kernels.go
// at commit 989556a, before those tags became registry primitives):
// SHA-256 of the output elements' exact spellings over Rat, their bit
// patterns over F32 and F64, and the endpoints over Interval. The registry
// rules must reproduce them bit for bit: existing graphs keep their values.
// Exception, on purpose: the three conv cases over Interval that are large
// enough for the dense midpoint-radius kernels (package enclose, issue 24)
// are re-pinned to those kernels' enclosures, which contain the same exact
// values (TestIntervalEnclosesRat) but are not the element-by-element
// interval fold's endpoints; conv-1d-chw stays below the dense threshold.
var pinnedWindowOutputs = map[string]string{
	"conv-plain/rat":                  "f1199f7d45b00993",
	"conv-plain/f32":                  "5be11f26f04fe2b7",
	"conv-plain/f64":                  "9a25d02635b95807",
	"conv-plain/interval":             "b254f0616c048169",
	"conv-groups-stride-pad/rat":      "be38ecbeb4e2d127",
	"conv-groups-stride-pad/f32":      "a41a3b60c6f2afd0",
	"conv-groups-stride-pad/f64":      "3489e12ecccec156",
	"conv-groups-stride-pad/interval": "bb73e1952b1c3bea",
	"conv-dilation-nobias/rat":        "625a45880881e712",
	"conv-dilation-nobias/f32":        "ee4074385e9da54b",
	"conv-dilation-nobias/f64":        "e0e3c4a8ee1a2d48",
	"conv-dilation-nobias/interval":   "279b00878cea9e3d",
	"conv-1d-chw/rat":                 "af1b9796c5a39dbb",
	"conv-1d-chw/f32":                 "6643bdeea73bba09",
	"conv-1d-chw/f64":                 "8a7b62c143700f46",
	"conv-1d-chw/interval":            "cb6c3ea3b118dd62",
	"max_pool/rat":                    "587a283d1551335c",
	"max_pool/f32":                    "d054519371d649d7",
	"max_pool/f64":                    "4b5eea9abe7829f4",
	"max_pool/interval":               "dc670aa024689db2",
	"max_pool-pad/rat":                "f1551c7ae4d41568",
	"max_pool-pad/f32":                "4c9d75d098a736c8",
	"max_pool-pad/f64":                "91c8d1e8dcc17e5d",
	"max_pool-pad/interval":           "560d44e7f4583518",
	"avg_pool/rat":                    "d8f88eab1a465290",
	"avg_pool/f32":                    "f6e221d09878d3c4",
	"avg_pool/f64":                    "7a1a8ebd4dd44548",
	"avg_pool/interval":               "caed0e935bb883da",
	"avg_pool-pad/rat":                "86eb2ee5bae4984d",
	"avg_pool-pad/f32":                "819ae1d3c8deeae4",
	"avg_pool-pad/f64":                "7b5fb69a83c09724",
	"avg_pool-pad/interval":           "c97d3c1c7763ba7c",
}

func windowDigest[T spec.Scalar[T]](t *testing.T, c opCase) string {
	t.Helper()
	y, err := Denote(c.g, c.p, ConvertTensor[T](c.x))
	if err != nil {
		t.Fatalf("%s over %s: %v", c.name, spec.KindOf[T](), err)
	}
	var b strings.Builder
	for _, v := range y.Data {
		switch x := any(v).(type) {
		case spec.F32:
			fmt.Fprintf(&b, "%08x,", math.Float32bits(float32(x)))
		case spec.F64:
			fmt.Fprintf(&b, "%016x,", math.Float64bits(float64(x)))
		default:
			fmt.Fprintf(&b, "%v,", v)
		}
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:8])
}

// TestWindowOutputsPinned checks the registry's window rules against the
// pinned outputs of the former irsem kernels.
func TestWindowOutputsPinned(t *testing.T) {
	print := os.Getenv("TLCHECK_PRINT_WINDOW_PINS") != ""
	for _, c := range windowCases(t) {
		got := map[string]string{
			"rat":      windowDigest[spec.Rat](t, c),
			"f32":      windowDigest[spec.F32](t, c),
			"f64":      windowDigest[spec.F64](t, c),
			"interval": windowDigest[spec.Interval](t, c),
		}
		for _, k := range []string{"rat", "f32", "f64", "interval"} {
			key := c.name + "/" + k
			if print {
				fmt.Printf("\t%q: %q,\n", key, got[k])
				continue
			}
			if want, ok := pinnedWindowOutputs[key]; !ok || want != got[k] {
				t.Errorf("%s: digest %s, pinned %s", key, got[k], want)
			}
		}
	}
}
