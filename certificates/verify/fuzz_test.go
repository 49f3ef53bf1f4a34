package verify

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
)

// fuzzKinds are the kinds the fuzz targets feed, in FuzzVerifyFile's
// selector order.
var fuzzKinds = []string{certificates.KindAdjointness, certificates.KindComposition, certificates.KindRefinement, certificates.KindRange}

// fuzzSetup certifies a small full suite and adds its files of the given
// kinds to the corpus; it returns the suite and the manifest the fuzzed
// files are verified against.
func fuzzSetup(f *testing.F, kinds []string, withSelector bool) (*certificates.Suite, *certificates.Manifest) {
	dir := f.TempDir()
	s := certificates.FullSuite()
	m, err := s.Certify(dir, certificates.Options{Seed: 2, Cases: 2, Ops: []string{"mul", "relu", "sum"}})
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range m.Files {
		for k, kind := range fuzzKinds {
			if e.Kind != kind || !slices.Contains(kinds, kind) {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Path))
			if err != nil {
				f.Fatal(err)
			}
			if withSelector {
				f.Add(uint8(k), data)
			} else {
				f.Add(data)
			}
		}
	}
	return s, m
}

// fuzzPath names the file a fuzzed certificate of kind claims to be, from
// its own (safe) name fields when it has them, so that mutations get past
// the verifiers' path checks.
func fuzzPath(kind string, data []byte) string {
	var probe struct {
		Op, Provider, Name string
	}
	_ = json.Unmarshal(data, &probe)
	safe := func(s, def string) string {
		if certificates.CheckName("", "", s) == nil {
			return s
		}
		return def
	}
	switch kind {
	case certificates.KindAdjointness:
		return "adjointness/" + safe(probe.Op, "mul") + ".json"
	case certificates.KindRefinement:
		return certificates.RefinementPath(safe(probe.Provider, "fast_cpu"), safe(probe.Op, "sum"))
	case certificates.KindRange:
		return "range/" + safe(probe.Name, "quad") + ".json"
	}
	return certificates.CompositionName
}

// fuzzVerify runs kind's verifier on data: it must not panic, and every
// rejection must be a FieldError naming the file.
func fuzzVerify(t *testing.T, s *certificates.Suite, m *certificates.Manifest, kind string, data []byte) {
	path := fuzzPath(kind, data)
	n, err := verifyData(newChecker(s).verifiers[kind], path, kind, data, m)
	if err == nil {
		if n < 1 {
			t.Fatalf("%s accepted with %d cases", path, n)
		}
		return
	}
	var fe *certificates.FieldError
	if !errors.As(err, &fe) || fe.File != path {
		t.Fatalf("%s: rejection is not a FieldError naming the file: %v", path, err)
	}
}

// FuzzVerifyFile feeds arbitrary bytes to each kind's verifier (the first
// argument selects the kind): no input may panic, and every rejection
// names the file and field.
func FuzzVerifyFile(f *testing.F) {
	s, m := fuzzSetup(f, fuzzKinds, true)
	f.Add(uint8(0), []byte(`{"format":"tlcheck.cert.v3","kind":"adjointness","op":"mul","cases":[]}`))
	f.Add(uint8(1), []byte(`{"format":"tlcheck.cert.v3","kind":"composition","cases":[{"graph":{},"payload":null}]}`))
	f.Add(uint8(2), []byte(`{"format":"tlcheck.cert.v3","kind":"refinement","op":"sum","provider":"fast_cpu"}`))
	f.Add(uint8(3), []byte(`{"format":"tlcheck.cert.v3","kind":"range","name":"quad","trace":[[{"lo":"0x00000000"}]]}`))
	f.Fuzz(func(t *testing.T, k uint8, data []byte) {
		fuzzVerify(t, s, m, fuzzKinds[int(k)%len(fuzzKinds)], data)
	})
}

func fuzzOneKind(f *testing.F, kind string) {
	s, m := fuzzSetup(f, []string{kind}, false)
	f.Add([]byte(`{"format":"tlcheck.cert.v3","kind":"` + kind + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzVerify(t, s, m, kind, data)
	})
}

// FuzzVerifyAdjointness is FuzzVerifyFile for adjointness certificates.
func FuzzVerifyAdjointness(f *testing.F) { fuzzOneKind(f, certificates.KindAdjointness) }

// FuzzVerifyComposition is FuzzVerifyFile for composition certificates.
func FuzzVerifyComposition(f *testing.F) { fuzzOneKind(f, certificates.KindComposition) }

// FuzzVerifyRefinement is FuzzVerifyFile for refinement certificates.
func FuzzVerifyRefinement(f *testing.F) { fuzzOneKind(f, certificates.KindRefinement) }

// FuzzVerifyRange is FuzzVerifyFile for range certificates.
func FuzzVerifyRange(f *testing.F) { fuzzOneKind(f, certificates.KindRange) }
