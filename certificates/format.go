package certificates

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/internal/strictjson"
	"github.com/tlcheck/tlcheck/refine"
)

// Format is the certificate format tag.
//
// v3 (this build) records in every certificate whose verdicts rest on an
// a-priori rounding bound which bound decided and its inputs
// (RoundingBound: the refinement files), which the verifier recomputes;
// v2 did not. v2 drew every case from spec.CaseSeed, as v3 does; v1
// seeded adjointness cases from SplitMix64(seed) and so disagreed with
// tlcheck check. v1 and v2 files are rejected, naming their version.
const Format = "tlcheck.cert.v3"

// PreviousFormat is the format tag before v3, named in the error that
// rejects it.
const PreviousFormat = "tlcheck.cert.v2"

// FirstFormat is the format tag before v2, named in the error that
// rejects it.
const FirstFormat = "tlcheck.cert.v1"

// ManifestFormat is the manifest format tag.
//
// v2 (this build) adds kinds, ops and providers — the resolved options of
// the run — from which a verifier derives the complete file set; a v1
// manifest did not state it and is rejected as a previous version.
const ManifestFormat = "tlcheck.manifest.v2"

// PreviousManifestFormat is the manifest format before v2.
const PreviousManifestFormat = "tlcheck.manifest.v1"

// ManifestName is the manifest's file name in a certificate directory.
const ManifestName = "manifest.json"

// Certificate kinds.
const (
	KindAdjointness = "adjointness"
	KindComposition = "composition"
	KindRefinement  = "refinement"
	KindRange       = "range"
)

// maxRatLen bounds the spelling of one rational.
const maxRatLen = 40000

// MaxFileBytes bounds a certificate file the verifier will read.
const MaxFileBytes = 64 << 20

var (
	nameRE = regexp.MustCompile(`^[A-Za-z0-9_.:\-]{1,128}$`)
	pathRE = regexp.MustCompile(`^[a-z0-9_]{1,32}(/[A-Za-z0-9_.:\-]{1,128})?\.json$`)
	ratRE  = regexp.MustCompile(`^-?[0-9]+(/[0-9]+)?$`)
	bitsRE = regexp.MustCompile(`^0x[0-9a-f]{8}$`)
	hexRE  = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// kindDirRE is a certificate path's directory (pathRE's first part).
	kindDirRE = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)
)

// FieldError is a verification failure located in a file and field.
type FieldError struct {
	File  string // path relative to the certificate directory
	Field string // JSON path, e.g. cases[3].lhs
	Msg   string
	// Err is the first error among the message's arguments, if any: a
	// *limits.Error stays visible through it (limits.IsLimit), so that a
	// budget exceeded while re-deriving a claim is bad input (exit 2),
	// not a failed claim.
	Err error
}

// Unwrap returns the error the message was formatted from, or nil.
func (e *FieldError) Unwrap() error { return e.Err }

// Error prints "file: field F: msg" on one line: every control or
// non-printable character is escaped (a key read from a certificate may
// hold a newline) and a field path is cut at 200 bytes (a key may be
// megabytes long).
func (e *FieldError) Error() string {
	field := e.Field
	if len(field) > 200 {
		field = field[:200] + "…"
	}
	if field == "" {
		return fmt.Sprintf("%s: %s", EscapeLine(e.File), EscapeLine(e.Msg))
	}
	return fmt.Sprintf("%s: field %s: %s", EscapeLine(e.File), EscapeLine(field), EscapeLine(e.Msg))
}

// FieldErr is the *FieldError of file and field with the formatted
// message; an error among args is kept for errors.As (a limits.Error
// stays one).
func FieldErr(file, field, format string, args ...any) error {
	e := &FieldError{File: file, Field: field, Msg: fmt.Sprintf(format, args...)}
	for _, a := range args {
		if err, ok := a.(error); ok {
			e.Err = err
			break
		}
	}
	return e
}

// SafePath reports whether p is a certificate path in the safe alphabet:
// a kind's directory, at most one safe name below it, ending in .json.
func SafePath(p string) bool { return pathRE.MatchString(p) }

// IsSHA256Hex reports whether s is a SHA-256 digest as certificates spell
// it: 64 lowercase hex digits.
func IsSHA256Hex(s string) bool { return hexRE.MatchString(s) }

// CheckName validates a name against the safe alphabet.
func CheckName(file, field, v string) error {
	if !nameRE.MatchString(v) {
		return FieldErr(file, field, "%q is not in the safe alphabet [A-Za-z0-9_.:-]{1,128}", Truncate(v))
	}
	return nil
}

// CheckRat validates an exact rational spelling: the safe alphabet and
// the one canonical spelling big.Rat.RatString gives — lowest terms, a
// positive denominator other than 1 written only when it is not 1, no
// leading zeros, no "-0" — so that "2/4", "-0", "01" and "1/1" are refused
// and every rational has exactly one spelling.
func CheckRat(file, field, v string) error {
	if len(v) > maxRatLen || !ratRE.MatchString(v) {
		return FieldErr(file, field, "%q is not an exact rational p or p/q", Truncate(v))
	}
	r, ok := new(big.Rat).SetString(v)
	if !ok {
		return FieldErr(file, field, "%q is not an exact rational p or p/q", Truncate(v))
	}
	if c := r.RatString(); c != v {
		return FieldErr(file, field, "%q is not the canonical spelling of its rational (%s)", Truncate(v), Truncate(c))
	}
	return nil
}

// CheckBits validates a binary32 bit pattern spelling.
func CheckBits(file, field, v string) error {
	if !bitsRE.MatchString(v) {
		return FieldErr(file, field, "%q is not a binary32 bit pattern 0x%%08x", Truncate(v))
	}
	return nil
}

// Truncate shortens s to 40 bytes (and an ellipsis) for messages.
func Truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Encode renders v as indented JSON with a trailing newline. encoding/json
// writes struct fields in declaration order and map keys sorted, so the
// bytes are a pure function of v.
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// DecodeStrict decodes exactly one JSON value into v with the one strict
// reader (strictjson.Decode): unknown fields, case variants of field
// names, duplicate keys, missing required fields, wrong JSON types and
// trailing data are errors naming the file and JSON field. It then
// re-encodes v with the writer's encode and requires the very bytes it
// read (strictjson.Spelling): the writer's output is the only accepted
// spelling, so whitespace padding, reordered members, an optional member
// written with its zero value and numbers in another notation are refused
// too. (Canonical rationals inside strings are CheckRat's part.)
func DecodeStrict(file string, data []byte, v any) error {
	if err := strictjson.Decode(data, v); err != nil {
		return strictErr(file, err)
	}
	canon, err := Encode(v)
	if err != nil {
		return FieldErr(file, "", "cannot re-encode: %v", err)
	}
	if err := strictjson.Spelling(data, canon); err != nil {
		return strictErr(file, err)
	}
	return nil
}

// strictErr turns a strictjson error into a FieldError of file.
func strictErr(file string, err error) error {
	var se *strictjson.Error
	if errors.As(err, &se) {
		return FieldErr(file, se.Path, "%s", se.Msg)
	}
	return FieldErr(file, "", "%v", err)
}

// UnmarshalLoose decodes exactly one JSON value into v with
// encoding/json's rules (unknown fields allowed); only decodeHeader's
// probe uses it, and the strict decode of the whole file follows it.
func UnmarshalLoose(file string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &te):
			return FieldErr(file, te.Field, "wrong JSON type: %s where %s was expected", te.Value, te.Type)
		case errors.As(err, &se):
			return FieldErr(file, "", "malformed JSON at byte %d: %v", se.Offset, err)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			return FieldErr(file, "", "truncated JSON")
		}
		return FieldErr(file, "", "malformed: %v", err)
	}
	if dec.More() {
		return FieldErr(file, "", "trailing data after the certificate")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return FieldErr(file, "", "trailing data after the certificate")
	}
	return nil
}

// Sum is the lowercase hex SHA-256 of data.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// Header is the common head of every certificate file.
type Header struct {
	Format string `json:"format"`
	Kind   string `json:"kind"`
}

// FileEntry is one manifest row.
type FileEntry struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Kind   string `json:"kind"`
}

// Manifest lists the certificate files with their hashes, and states
// what a complete directory holds: the files each of Kinds calls for with
// Seed, Cases, Ops and Providers (resolved: the explicit lists, defaults
// filled in), and no other.
type Manifest struct {
	Format       string   `json:"format"`
	ToolVersion  string   `json:"tool_version"`
	RegistryHash string   `json:"registry_hash"`
	Seed         uint64   `json:"seed"`
	Cases        int      `json:"cases"`
	Kinds        []string `json:"kinds"`
	Ops          []string `json:"ops"`
	Providers    []string `json:"providers"`
	// Sources, in a model directory, are the files certify read the
	// model and its input from, with their SHA-256 (sources.go); absent
	// elsewhere, and in model directories written before they were
	// recorded.
	Sources []Source    `json:"sources,omitempty"`
	Files   []FileEntry `json:"files"`
}

// CheckSafeJSON checks that every string of an inline JSON document (keys
// and values) is a safe-alphabet name or an exact rational.
func CheckSafeJSON(file, field string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return FieldErr(file, field, "missing")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return FieldErr(file, field, "malformed inline document: %v", err)
		}
		if s, ok := tok.(string); ok && !nameRE.MatchString(s) && (len(s) > maxRatLen || !ratRE.MatchString(s)) {
			return FieldErr(file, field, "string %q is neither a safe-alphabet name nor an exact rational", Truncate(s))
		}
	}
}

// classNames spell refine's element classes in a refinement certificate.
var classNames = map[refine.Class]string{
	refine.ClassFinite: "finite", refine.ClassPosInf: "pos_inf", refine.ClassNegInf: "neg_inf", refine.ClassNaN: "nan",
}

// ClassName is a class as a certificate spells it ("finite", "pos_inf",
// "neg_inf", "nan").
func ClassName(c refine.Class) string {
	if s, ok := classNames[c]; ok {
		return s
	}
	return string(c)
}

// ClassOfName is the class a certificate spells s (ClassName's inverse).
func ClassOfName(s string) (refine.Class, bool) {
	for c, n := range classNames {
		if n == s {
			return c, true
		}
	}
	return "", false
}

// DisplayFloat renders an exact ratio for display: six significant
// digits, the exponent without '+' so that it stays in the safe alphabet.
func DisplayFloat(r *big.Rat) string {
	f, _ := r.Float64()
	return strings.Replace(strconv.FormatFloat(f, 'g', 6, 64), "e+", "e", 1)
}
