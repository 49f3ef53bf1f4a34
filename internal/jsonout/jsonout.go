// Package jsonout holds the machine-readable documents tlcheck's reporting
// commands print with --json, one Go type per document kind, and the
// encodings they share.
//
// Every document is one JSON object that begins with a Header:
//
//	"format":        "tlcheck.<kind>.vN" (Format), the document kind and its version (Version)
//	"tool_version":  the tlcheck version that wrote it (internal/version)
//	"registry_hash": spec.RegistryHash(), the primitive registry it ran against
//	"seed":          the generation seed, or null for a command that draws nothing
//	"inputs":        every file the command read, as {"role","path","sha256"}
//
// A published JSON Schema describes each kind's current version
// (schemas/<kind>.vN.json); a change to a document's fields is a new
// version of its format, never an edit of an older one.
//
// Values. Exact rationals are strings "p" or "p/q" in lowest terms (a JSON
// number cannot spell 1/3); binary32 and binary64 values are JSON numbers,
// the shortest decimal that reads back as the same value of their width
// (encoding/json's spelling), with the three non-finite values as the
// strings "NaN", "+Inf" and "-Inf", which no number can spell; an interval
// is an object {"lo": L, "hi": H} of two binary64 endpoints spelled the
// same way. Measurements (bit lengths, widths, ratios, counts, seconds) are
// numbers, never text.
package jsonout

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"math"

	"github.com/tlcheck/tlcheck/internal/version"
	"github.com/tlcheck/tlcheck/spec"
)

// The document kinds, one per reporting command.
const (
	KindCheck       = "check"
	KindGate        = "gate"
	KindDiff        = "diff"
	KindEval        = "eval"
	KindGrad        = "grad"
	KindVerify      = "verify"
	KindPlan        = "plan"
	KindCertify     = "certify"
	KindTapeExample = "tape-example"
	KindCompare     = "compare"
	KindCompareGrad = "compare-grad"
	KindImport      = "import"
	KindOnnxMap     = "onnx-map"
	KindAdapters    = "adapters"
)

// Kinds lists every document kind.
func Kinds() []string {
	return []string{KindCheck, KindGate, KindDiff, KindEval, KindGrad, KindVerify, KindPlan, KindCertify, KindTapeExample, KindCompare, KindCompareGrad, KindImport, KindOnnxMap, KindAdapters}
}

// versions holds the kinds whose format is past version 1: compare-grad
// v2 records, per gradient and per element, which sound bound decided;
// v3 names the combined first-order bound apart from the boxed one.
var versions = map[string]int{KindCompareGrad: 3}

// Version is the current version of a document kind's format (1 unless
// a change of its fields made a new one).
func Version(kind string) int {
	if v, ok := versions[kind]; ok {
		return v
	}
	return 1
}

// Format is the format string of a document kind: "tlcheck.KIND.vN", N
// its Version.
func Format(kind string) string { return fmt.Sprintf("tlcheck.%s.v%d", kind, Version(kind)) }

// Input is one file a command read: its role (the flag or argument that
// named it: "graph", "payload", "input", "cotangent", "manifest"), the path
// as given and the SHA-256 of the bytes read, lowercase hex.
type Input struct {
	Role   string `json:"role"`
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// Header is the part every document shares.
type Header struct {
	Format       string  `json:"format"`
	ToolVersion  string  `json:"tool_version"`
	RegistryHash string  `json:"registry_hash"`
	Seed         *uint64 `json:"seed"`
	Inputs       []Input `json:"inputs"`
}

// NewHeader returns the header of a document of kind, with seed (nil for
// a command that draws nothing) and the inputs read (never null).
func NewHeader(kind string, seed *uint64, inputs []Input) Header {
	if inputs == nil {
		inputs = []Input{}
	}
	return Header{Format: Format(kind), ToolVersion: version.Version, RegistryHash: spec.RegistryHash(), Seed: seed, Inputs: inputs}
}

// Seed returns a pointer to a copy of s, for Header.Seed.
func Seed(s uint64) *uint64 { return &s }

// Write prints doc as indented JSON followed by a newline. The encoding
// is deterministic: fields in declaration order, map keys sorted.
func Write(w io.Writer, doc any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

// HashingReader hashes what is read through it.
type HashingReader struct {
	r io.Reader
	h hash.Hash
}

// NewHashingReader returns a reader of r that hashes every byte read.
func NewHashingReader(r io.Reader) *HashingReader {
	return &HashingReader{r: r, h: sha256.New()}
}

func (h *HashingReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.h.Write(p[:n])
	return n, err
}

// Sum returns the SHA-256 of the bytes read so far, lowercase hex.
func (h *HashingReader) Sum() string { return hex.EncodeToString(h.h.Sum(nil)) }

// SHA256 returns the SHA-256 of data, lowercase hex.
func SHA256(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

// Number is a measurement that may be non-finite (an unbounded
// enclosure's width, a ratio over a zero bound): a JSON number when
// finite, else "NaN", "+Inf" or "-Inf", which encoding/json cannot write
// as numbers.
type Number float64

// MarshalJSON spells n as a number or one of the three strings.
func (n Number) MarshalJSON() ([]byte, error) {
	return json.Marshal(float(float64(n)))
}

// UnmarshalJSON reads either spelling back.
func (n *Number) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		switch s {
		case "NaN":
			*n = Number(math.NaN())
		case "+Inf":
			*n = Number(math.Inf(1))
		case "-Inf":
			*n = Number(math.Inf(-1))
		default:
			return fmt.Errorf("jsonout: %q is not a number", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}

// Interval is an interval value: two binary64 endpoints, each a JSON
// number or one of "NaN", "+Inf", "-Inf".
type Interval struct {
	Lo any `json:"lo"`
	Hi any `json:"hi"`
}

// Tensor is a tensor value: its shape and its elements in row-major
// order, each spelled as its scalar requires (see the package doc).
type Tensor struct {
	Shape  []int `json:"shape"`
	Values []any `json:"values"`
}

// float spells a finite float as itself (encoding/json writes the
// shortest decimal of its width) and a non-finite one as a string.
func float[F float32 | float64](f F) any {
	x := float64(f)
	switch {
	case math.IsNaN(x):
		return "NaN"
	case math.IsInf(x, 1):
		return "+Inf"
	case math.IsInf(x, -1):
		return "-Inf"
	}
	return f
}

// Value spells one scalar element (see the package doc).
func Value[T spec.Scalar[T]](v T) any {
	switch x := any(v).(type) {
	case spec.Rat:
		return x.String()
	case spec.F32:
		return float(float32(x))
	case spec.F64:
		return float(float64(x))
	case spec.Binary32:
		return float(x.Float32())
	case spec.Interval:
		return Interval{Lo: float(x.Lo), Hi: float(x.Hi)}
	}
	return v.String()
}

// TensorOf spells a tensor (see the package doc).
func TensorOf[T spec.Scalar[T]](t spec.Tensor[T]) Tensor {
	out := Tensor{Shape: make([]int, len(t.Shape)), Values: make([]any, len(t.Data))}
	copy(out.Shape, t.Shape)
	for i, v := range t.Data {
		out.Values[i] = Value(v)
	}
	return out
}
