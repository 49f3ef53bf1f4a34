package check_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/check"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

// certFile is the part of adjointness/mymax.json the tests read on their
// own, with encoding/json and math/big only.
type certFile struct {
	Op    string `json:"op"`
	Draw  string `json:"draw"`
	Cases []struct {
		Inputs []struct {
			Values []string `json:"values"`
		} `json:"inputs"`
		Dx []struct {
			Values []string `json:"values"`
		} `json:"dx"`
		Delta struct {
			Values []string `json:"values"`
		} `json:"delta"`
		Oracle string `json:"oracle"`
		LHS    string `json:"lhs"`
		RHS    string `json:"rhs"`
	} `json:"cases"`
}

func rat(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a rational: %q", s)
	}
	return r
}

func readCert(t *testing.T, dir string) (certFile, []byte) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "adjointness", "mymax.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f certFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return f, b
}

// maxSides computes, by hand from the definition of max with the
// 1/2-1/2 tie split, ⟨jvp(x,dx), δ⟩ = Σₖ (wa·da + wb·db)·δ for the
// recorded inputs; with wrongTie the VJP's weights at a tie are 1 and 0
// (the planted fault), which changes ⟨dx, vjp(x,δ)⟩ = Σₖ (da·wa + db·wb)·δ.
func maxSides(t *testing.T, a, b, da, db, d []string, wrongTie bool) (lhs, rhs *big.Rat) {
	t.Helper()
	lhs, rhs = new(big.Rat), new(big.Rat)
	half := big.NewRat(1, 2)
	for k := range a {
		x, y := rat(t, a[k]), rat(t, b[k])
		wa, wb := new(big.Rat), new(big.Rat)
		switch x.Cmp(y) {
		case 1:
			wa.SetInt64(1)
		case -1:
			wb.SetInt64(1)
		default:
			wa.Set(half)
			wb.Set(half)
		}
		dk := rat(t, d[k])
		jv := new(big.Rat).Add(new(big.Rat).Mul(wa, rat(t, da[k])), new(big.Rat).Mul(wb, rat(t, db[k])))
		lhs.Add(lhs, jv.Mul(jv, dk))
		if wrongTie && x.Cmp(y) == 0 {
			wa.SetInt64(1)
			wb.SetInt64(0)
		}
		vj := new(big.Rat).Add(new(big.Rat).Mul(rat(t, da[k]), wa), new(big.Rat).Mul(rat(t, db[k]), wb))
		rhs.Add(rhs, vj.Mul(vj, dk))
	}
	return lhs, rhs
}

// certOf runs Find (seeded) or Op (rapid) on mymax with a CertDir and
// returns the certificate directory.
func certOf(t *testing.T, rapid bool) string {
	t.Helper()
	dir := t.TempDir()
	p := mymax(false)
	if rapid {
		check.Op(t, p, check.Options{CertDir: dir})
	} else {
		rep, err := check.Find(p, check.Options{CertDir: dir})
		if err != nil || rep.Failure != nil {
			t.Fatalf("Find: %v %v", err, rep.Failure)
		}
		if rep.Certificate != check.CertPath(dir, p) {
			t.Fatalf("Report.Certificate %q, want %q", rep.Certificate, check.CertPath(dir, p))
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "mymax.check.json")); err != nil {
		t.Errorf("the record beside the certificate: %v", err)
	}
	return check.CertPath(dir, p)
}

// TestCertVerifies: a correct user op's certificate — from Find's seeded
// sweep and from Op's rapid run — verifies, every case is decided over
// Rat, and each recorded claim is the value computed here by hand from
// the recorded inputs (not by the rules under test).
func TestCertVerifies(t *testing.T) {
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		_ = f.Value.Set("true")
		defer f.Value.Set(old)
	}
	for _, tc := range []struct {
		name  string
		rapid bool
		draw  string
		seed  uint64
	}{{"find", false, "", 1}, {"op", true, certificates.DrawRecorded, 0}} {
		t.Run(tc.name, func(t *testing.T) {
			// Find sweeps its default 100 cases; Op records every case rapid
			// ran: -rapid.checks of them (100 by default), a fifth of that
			// under -short (rapid's checkTB divides by 5 in short mode).
			want := 100
			if f := flag.Lookup("rapid.checks"); tc.rapid && f != nil {
				n, err := strconv.Atoi(f.Value.String())
				if err != nil {
					t.Fatal(err)
				}
				want = n
				if testing.Short() {
					want /= 5
				}
			}
			dir := certOf(t, tc.rapid)
			rep, err := check.Verify(dir, mymax(false))
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Files) != 1 || rep.Files[0].Path != "adjointness/mymax.json" || rep.Files[0].Cases != want {
				t.Fatalf("report %+v", rep.Files)
			}
			m := rep.Manifest
			if m.Seed != tc.seed || m.Cases != want || len(m.Ops) != 1 || m.Ops[0] != "mymax" || len(m.Kinds) != 1 || m.Kinds[0] != "adjointness" {
				t.Errorf("manifest %+v", m)
			}
			if m.RegistryHash == spec.RegistryHash() {
				t.Errorf("the registry hash does not include the user's op")
			}
			f, _ := readCert(t, dir)
			if f.Op != "mymax" || f.Draw != tc.draw || len(f.Cases) != want {
				t.Fatalf("file op %q draw %q, %d cases", f.Op, f.Draw, len(f.Cases))
			}
			ties := 0
			for i, c := range f.Cases {
				if c.Oracle != "rat" {
					t.Fatalf("case %d: oracle %q, want rat (mymax is exact)", i, c.Oracle)
				}
				lhs, rhs := maxSides(t, c.Inputs[0].Values, c.Inputs[1].Values, c.Dx[0].Values, c.Dx[1].Values, c.Delta.Values, false)
				if lhs.RatString() != c.LHS || rhs.RatString() != c.RHS {
					t.Fatalf("case %d: recorded %s, %s; by hand %s, %s", i, c.LHS, c.RHS, lhs.RatString(), rhs.RatString())
				}
				for k := range c.Inputs[0].Values {
					if rat(t, c.Inputs[0].Values[k]).Cmp(rat(t, c.Inputs[1].Values[k])) == 0 {
						ties++
						break
					}
				}
			}
			if ties == 0 {
				t.Errorf("no certified case has a tie")
			}
		})
	}
}

// TestCertDeterministic: the same op and options give byte-identical
// certificate directories.
func TestCertDeterministic(t *testing.T) {
	var dirs [2]string
	for i := range dirs {
		dirs[i] = certOf(t, false)
	}
	for _, rel := range []string{"manifest.json", "adjointness/mymax.json"} {
		a, err1 := os.ReadFile(filepath.Join(dirs[0], rel))
		b, err2 := os.ReadFile(filepath.Join(dirs[1], rel))
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between runs (%v %v)", rel, err1, err2)
		}
	}
}

// oneCharEdit changes one character of the rational v so that it stays
// a canonical rational spelling and names another value.
func oneCharEdit(v string) (string, bool) {
	for i := len(v) - 1; i >= 0; i-- {
		if v[i] < '0' || v[i] > '9' {
			continue
		}
		for c := byte('0'); c <= '9'; c++ {
			w := v[:i] + string(c) + v[i+1:]
			if r, ok := new(big.Rat).SetString(w); ok && r.RatString() == w && w != v {
				return w, true
			}
		}
	}
	return "", false
}

// editNth edits the value of the n-th occurrence of `"key": "V"` (or,
// for key "values", the first string of the n-th values array) by one
// character and returns the new bytes.
func editNth(t *testing.T, b []byte, key string, n int) []byte {
	t.Helper()
	pat := []byte(`"` + key + `": `)
	at := 0
	for i := 0; ; i++ {
		j := bytes.Index(b[at:], pat)
		if j < 0 {
			t.Fatalf("no occurrence %d of %s", n, key)
		}
		at += j + len(pat)
		if i == n {
			break
		}
	}
	q := at + bytes.IndexByte(b[at:], '"')
	end := q + 1 + bytes.IndexByte(b[q+1:], '"')
	v := string(b[q+1 : end])
	w, ok := oneCharEdit(v)
	if !ok {
		t.Fatalf("no one-character edit of %q", v)
	}
	return append(append(append([]byte{}, b[:q+1]...), w...), b[end:]...)
}

// TestCertTamper: a certificate edited by one character in a claimed
// value (or a seeded input) fails Verify, naming the file and the JSON
// path of the field; so does an edited manifest seed.
func TestCertTamper(t *testing.T) {
	if f := flag.Lookup("rapid.nofailfile"); f != nil {
		old := f.Value.String()
		_ = f.Value.Set("true")
		defer f.Value.Set(old)
	}
	const file = "adjointness/mymax.json"
	for _, tc := range []struct {
		name  string
		rapid bool
		key   string
		n     int
		field string
	}{
		{"lhs of case 0", false, "lhs", 0, "cases[0].lhs"},
		{"rhs of case 7", false, "rhs", 7, "cases[7].rhs"},
		{"lhs of a recorded case", true, "lhs", 3, "cases[3].lhs"},
		{"seeded input", false, "values", 0, "cases[0].inputs[0].values[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := certOf(t, tc.rapid)
			_, b := readCert(t, dir)
			edited := editNth(t, b, tc.key, tc.n)
			if err := os.WriteFile(filepath.Join(dir, file), edited, 0o644); err != nil {
				t.Fatal(err)
			}
			// A careful forger also fixes the manifest's hash, so only
			// the recomputation (or the seed) can catch the edit.
			mp := filepath.Join(dir, certificates.ManifestName)
			m, _ := os.ReadFile(mp)
			m = bytes.Replace(m, []byte(certificates.Sum(b)), []byte(certificates.Sum(edited)), 1)
			if err := os.WriteFile(mp, m, 0o644); err != nil {
				t.Fatal(err)
			}
			rep, err := check.Verify(dir, mymax(false))
			if err == nil || rep == nil {
				t.Fatalf("Verify after the edit: %v", err)
			}
			// The report names the file and field (a lone file whose
			// inputs all disagree with the seed is also reported against
			// the manifest's seed, the one edit that would explain it).
			found := false
			for _, f := range rep.Failures() {
				var fe *certificates.FieldError
				found = found || errors.As(f.Err, &fe) && fe.File == file && fe.Field == tc.field
			}
			if !found {
				t.Fatalf("Verify: %v; no failure names %s field %s: %+v", err, file, tc.field, rep.Failures())
			}
		})
	}
	t.Run("manifest seed", func(t *testing.T) {
		dir := certOf(t, false)
		p := filepath.Join(dir, certificates.ManifestName)
		b, _ := os.ReadFile(p)
		if err := os.WriteFile(p, bytes.Replace(b, []byte(`"seed": 1,`), []byte(`"seed": 2,`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := check.Verify(dir, mymax(false))
		if err == nil || !strings.Contains(err.Error(), "manifest.json: field seed") {
			t.Fatalf("Verify after a seed edit: %v", err)
		}
	})
}

// TestCertRecomputes: Verify with a different (wrong) VJP than the one
// that produced the certificate fails at the first case whose
// ⟨dx, vjp(x,δ)⟩ the wrong VJP changes — found here by hand from the
// recorded inputs — so the verifier recomputes and never trusts. Changed
// facts fail at the registry hash; a missing primitive is an
// UnknownOpsError.
func TestCertRecomputes(t *testing.T) {
	dir := certOf(t, false)
	f, _ := readCert(t, dir)
	first := -1
	for i, c := range f.Cases {
		_, wrong := maxSides(t, c.Inputs[0].Values, c.Inputs[1].Values, c.Dx[0].Values, c.Dx[1].Values, c.Delta.Values, true)
		if wrong.RatString() != c.RHS {
			first = i
			break
		}
	}
	if first < 0 {
		t.Fatal("no certified case tells the wrong VJP from the right one")
	}
	_, err := check.Verify(dir, mymax(true))
	var fe *certificates.FieldError
	if err == nil || !errors.As(err, &fe) || fe.Field != fmt.Sprintf("cases[%d].rhs", first) || !strings.Contains(fe.Msg, "recomputed") {
		t.Fatalf("Verify with the wrong VJP: %v, want a failure at cases[%d].rhs", err, first)
	}

	facts := mymax(false)
	facts.Ties = "another convention"
	if _, err := check.Verify(dir, facts); err == nil || !strings.Contains(err.Error(), "registry_hash") {
		t.Errorf("changed facts: %v", err)
	}
	var ue *certificates.UnknownOpsError
	if _, err := check.Verify(dir); !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0] != "mymax" {
		t.Errorf("no primitive: %v", err)
	}
	other := mymax(false)
	other.Name = "othermax"
	if _, err := check.Verify(dir, other, mymax(false)); err != nil {
		t.Errorf("an extra primitive changed the verdict: %v", err)
	}
}

// TestCertOnlyWhatHolds: a failing check writes no certificate and
// removes the one a previous passing run left (keeping the record); a
// non-empty directory that is no certificate directory is refused and
// left as it is; a certificate needs the adjointness obligation.
func TestCertOnlyWhatHolds(t *testing.T) {
	dir := t.TempDir()
	if rep, err := check.Find(mymax(false), check.Options{CertDir: dir}); err != nil || rep.Certificate == "" {
		t.Fatalf("passing run: %v", err)
	}
	rep, err := check.Find(mymax(true), check.Options{CertDir: dir})
	if err != nil || rep.Failure == nil || rep.Certificate != "" {
		t.Fatalf("failing run: %v %v %q", err, rep.Failure, rep.Certificate)
	}
	if _, err := os.Stat(check.CertPath(dir, mymax(false))); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the stale certificate survived a failing check: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "mymax.check.json")); err != nil || !strings.Contains(string(b), "adjointness fails") {
		t.Errorf("record: %v %s", err, b)
	}

	other := t.TempDir()
	keep := filepath.Join(other, "mymax", "notes.txt")
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := check.Find(mymax(false), check.Options{CertDir: other}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a foreign directory was accepted: %v", err)
	}
	if _, err := check.Find(mymax(true), check.Options{CertDir: other}); err != nil {
		t.Errorf("failing run beside a foreign directory: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a foreign file was removed: %v", err)
	}

	_, err = check.Find(mymax(false), check.Options{CertDir: t.TempDir(), Obligations: []obligations.Obligation{obligations.Derivative}})
	if err == nil || !strings.Contains(err.Error(), "CertDir") {
		t.Errorf("a certificate without adjointness: %v", err)
	}
}

// expRules are the rules of an inexact user primitive y = exp(x); with
// bad, the VJP forgets the factor exp(x).
func expRules[T spec.Scalar[T]](bad bool) check.Rules[T] {
	each := func(x, by spec.Tensor[T], mul bool) (spec.Tensor[T], error) {
		y := x.Clone()
		for i := range y.Data {
			e, err := x.Data[i].Exp()
			if err != nil {
				return spec.Tensor[T]{}, err
			}
			if mul {
				e = e.Mul(by.Data[i])
			}
			y.Data[i] = e
		}
		return y, nil
	}
	return check.Rules[T]{
		Forward: func(xs []spec.Tensor[T]) (spec.Tensor[T], error) { return each(xs[0], xs[0], false) },
		JVP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return each(xs[0], dxs[0], true)
		},
		VJP: func(xs []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			if bad {
				return []spec.Tensor[T]{dy.Clone()}, nil
			}
			g, err := each(xs[0], dy, true)
			return []spec.Tensor[T]{g}, err
		},
	}
}

// TestCertInexact: an inexact user op's certificate records interval
// enclosures (oracle "interval"), verifies, and fails Verify under a
// VJP without the factor exp(x) at an enclosure field.
func TestCertInexact(t *testing.T) {
	op := func(bad bool) check.Primitive {
		return check.Primitive{Name: "myexp", Arity: 1, Doc: "exp",
			Interval: expRules[spec.Interval](bad), Dual: expRules[check.Dual](bad)}
	}
	dir := t.TempDir()
	rep, err := check.Find(op(false), check.Options{Cases: 20, CertDir: dir})
	if err != nil || rep.Failure != nil {
		t.Fatalf("Find: %v %v", err, rep.Failure)
	}
	b, err := os.ReadFile(filepath.Join(rep.Certificate, "adjointness", "myexp.json"))
	if err != nil || !bytes.Contains(b, []byte(`"oracle": "interval"`)) || bytes.Contains(b, []byte(`"oracle": "rat"`)) {
		t.Fatalf("oracles: %v", err)
	}
	if _, err := check.Verify(rep.Certificate, op(false)); err != nil {
		t.Fatal(err)
	}
	_, err = check.Verify(rep.Certificate, op(true))
	var fe *certificates.FieldError
	if !errors.As(err, &fe) || !strings.HasSuffix(fe.Field, ".rhs_enclosure") {
		t.Errorf("a VJP without exp(x): %v", err)
	}
}
