package verify

import (
	"bytes"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// scaleRules are the rules of the test's user primitive y = c·x
// (elementwise) over T; the VJP multiplies by vc, which is c for the
// correct rule and anything else for a planted fault.
func scaleRules[T spec.Scalar[T]](info *spec.OpInfo, c, vc int64) *spec.Prim[T] {
	mul := func(x spec.Tensor[T], k int64) spec.Tensor[T] {
		y := x.Clone()
		for i := range y.Data {
			y.Data[i] = y.Data[i].Mul(spec.ConstRat[T](k, 1))
		}
		return y
	}
	return &spec.Prim[T]{OpInfo: info,
		Forward: func(_ *spec.Attrs, xs []spec.Tensor[T]) (spec.Tensor[T], error) { return mul(xs[0], c), nil },
		JVP: func(_ *spec.Attrs, _ []spec.Tensor[T], _ spec.Tensor[T], dxs []spec.Tensor[T]) (spec.Tensor[T], error) {
			return mul(dxs[0], c), nil
		},
		VJP: func(_ *spec.Attrs, _ []spec.Tensor[T], _ spec.Tensor[T], dy spec.Tensor[T]) ([]spec.Tensor[T], error) {
			return []spec.Tensor[T]{mul(dy, vc)}, nil
		},
	}
}

// userTwice is a user's primitive "twice" (y = 2x) in private registries,
// its VJP multiplying by vjp; case i is drawn from spec.CaseSeed(seed,
// "twice", i): x, dx and δ of shape [3].
func userTwice(t *testing.T, vjp int64) certificates.UserOp {
	t.Helper()
	info := func() *spec.OpInfo {
		return &spec.OpInfo{Name: "twice", MinArity: 1, MaxArity: 1, Exact: true, Linear: true, Smooth: true,
			Shape: func(_ *spec.Attrs, in []spec.Shape) (spec.Shape, error) { return in[0].Clone(), nil }}
	}
	regs := obligations.Registries{Rat: spec.New[spec.Rat](), Interval: spec.New[spec.Interval]()}
	if err := errors.Join(regs.Rat.Register(scaleRules[spec.Rat](info(), 2, vjp)), regs.Interval.Register(scaleRules[spec.Interval](info(), 2, vjp))); err != nil {
		t.Fatal(err)
	}
	return certificates.UserOp{Name: "twice", Regs: regs, Draw: func(seed uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
		src := casegen.NewRandSource(spec.CaseSeed(seed, "twice", i))
		s := spec.Shape{3}
		x := casegen.GenTensor(src, s, casegen.Any, "x")
		dx := casegen.GenTensor(src, s, casegen.Any, "dx")
		d := casegen.GenTensor(src, s, casegen.Any, "delta")
		return &casegen.Instance{Op: "twice", Xs: []spec.Tensor[spec.Rat]{x}, Domains: []spec.Domain{spec.DomainAny}}, []spec.Tensor[spec.Rat]{dx}, d, nil
	}}
}

func suiteWith(t *testing.T, ops ...certificates.UserOp) *certificates.Suite {
	t.Helper()
	s := certificates.NewSuite()
	if err := s.AddOps(ops...); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestUserOpCertifyVerify: a user's primitive beside a built-in one is
// certified and verified by the same producer and verifier; the claims
// are ⟨2dx, δ⟩ (computed here by hand); the registry hash is the
// extended one; the reference verifier refuses the directory with
// UnknownOpsError; a different VJP fails at the first rhs.
func TestUserOpCertifyVerify(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := suiteWith(t, userTwice(t, 2)).Certify(dir, certificates.Options{Seed: 5, Cases: 4, Ops: []string{"mul", "twice"}, Providers: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	info, _ := userTwice(t, 2).Regs.Rat.Lookup("twice")
	if m.RegistryHash != spec.RegistryHashWith(info.OpInfo) || m.RegistryHash == spec.RegistryHash() {
		t.Errorf("registry hash %s: not the reference registry extended by twice", m.RegistryHash)
	}
	rep, err := Dir(suiteWith(t, userTwice(t, 2)), dir)
	if err != nil || len(rep.Failures()) != 0 || rep.Cases()[certificates.KindAdjointness] != 8 {
		t.Fatalf("verify: %v %+v", err, rep)
	}
	var f certificates.AdjointnessFile
	b, _ := os.ReadFile(filepath.Join(dir, "adjointness/twice.json"))
	if err := certificates.DecodeStrict("twice.json", b, &f); err != nil {
		t.Fatal(err)
	}
	for i, c := range f.Cases {
		sum := new(big.Rat)
		for k, v := range c.Dx[0].Values {
			dx, _ := new(big.Rat).SetString(v)
			d, _ := new(big.Rat).SetString(c.Delta.Values[k])
			sum.Add(sum, new(big.Rat).Mul(big.NewRat(2, 1), new(big.Rat).Mul(dx, d)))
		}
		if c.Oracle != "rat" || c.LHS != sum.RatString() || c.RHS != sum.RatString() || f.Draw != "" {
			t.Errorf("case %d: %s %s = %s, by hand %s", i, c.Oracle, c.LHS, c.RHS, sum.RatString())
		}
	}

	_, err = Dir(certificates.NewSuite(), dir)
	var ue *certificates.UnknownOpsError
	if !errors.As(err, &ue) || len(ue.Ops) != 1 || ue.Ops[0] != "twice" || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "check.Verify") {
		t.Errorf("reference verifier: %v", err)
	}

	rep, err = Dir(suiteWith(t, userTwice(t, 3)), dir)
	if err != nil {
		t.Fatal(err)
	}
	var fe *certificates.FieldError
	if fs := rep.Failures(); len(fs) != 1 || !errors.As(fs[0].Err, &fe) || fe.File != "adjointness/twice.json" || fe.Field != "cases[0].rhs" {
		t.Errorf("a different VJP: %+v", rep.Failures())
	}
}

// TestUserOpRecorded: a Recorded user's primitive's file says draw
// "recorded" and verifies from its recorded inputs alone (the verifier's
// Draw, seeded otherwise, is not consulted); the same mark on a built-in
// primitive's file fails at field draw.
func TestUserOpRecorded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	rec := userTwice(t, 2)
	seeded := rec.Draw
	rec.Recorded = true
	rec.Draw = func(_ uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
		return seeded(1000, i) // not what the manifest's seed draws
	}
	if _, err := suiteWith(t, rec).Certify(dir, certificates.Options{Seed: 0, Cases: 3, Ops: []string{"twice"}, Providers: []string{}}); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "adjointness/twice.json"))
	if !bytes.Contains(b, []byte(`"draw": "recorded"`)) {
		t.Fatalf("no draw mark:\n%s", b)
	}
	if rep, err := Dir(suiteWith(t, userTwice(t, 2)), dir); err != nil || len(rep.Failures()) != 0 {
		t.Fatalf("recorded cases: %v %+v", err, rep.Failures())
	}

	bdir := t.TempDir()
	if _, err := certificates.NewSuite().Certify(bdir, certificates.Options{Seed: 1, Cases: 2, Ops: []string{"mul"}, Providers: []string{}}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(bdir, "adjointness/mul.json")
	old, _ := os.ReadFile(p)
	edited := bytes.Replace(old, []byte(`"op": "mul",`), []byte(`"op": "mul",`+"\n"+` "draw": "recorded",`), 1)
	mp := filepath.Join(bdir, certificates.ManifestName)
	mb, _ := os.ReadFile(mp)
	if err := errors.Join(os.WriteFile(p, edited, 0o644), os.WriteFile(mp, bytes.Replace(mb, []byte(certificates.Sum(old)), []byte(certificates.Sum(edited)), 1), 0o644)); err != nil {
		t.Fatal(err)
	}
	rep := verifyDir(t, bdir)
	var fe *certificates.FieldError
	if fs := rep.Failures(); len(fs) != 1 || !errors.As(fs[0].Err, &fe) || fe.Field != "draw" {
		t.Errorf("built-in file marked recorded: %+v", rep.Failures())
	}
}

// TestUnknownOpSameHash: a built-in directory whose manifest names an
// unknown op under the reference hash is reported per file as before
// (not refused as a user's directory).
func TestUnknownOpSameHash(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	certifyTo(t, dir)
	p := filepath.Join(dir, certificates.ManifestName)
	b, _ := os.ReadFile(p)
	// The first op (the list is sorted) becomes zzz: it is refused as
	// unknown before its place in the order is.
	head := []byte(`"ops": [` + "\n" + `  "`)
	at := bytes.Index(b, head) + len(head)
	end := at + bytes.IndexByte(b[at:], '"')
	b = append(append(append([]byte{}, b[:at]...), "zzz"...), b[end:]...)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Dir(certificates.NewSuite(), dir)
	if err != nil {
		t.Fatalf("refused: %v", err)
	}
	found := false
	for _, f := range rep.Failures() {
		found = found || strings.Contains(f.Err.Error(), `"zzz" is not known to this build`)
	}
	if !found {
		t.Errorf("no per-file failure for the unknown op: %+v", rep.Failures())
	}
}

// TestAddOpsRejects: malformed user primitives are errors naming the
// field.
func TestAddOpsRejects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		field string
		edit  func(*certificates.UserOp)
	}{
		{"Name", func(u *certificates.UserOp) { u.Name = "a b" }},
		{"Name", func(u *certificates.UserOp) { u.Name = "mul" }},
		{"Regs", func(u *certificates.UserOp) { u.Regs.Rat = spec.Default[spec.Rat]() }},
		{"Regs", func(u *certificates.UserOp) { u.Regs.Interval = nil }},
		{"Regs.Rat", func(u *certificates.UserOp) { u.Regs.Rat = spec.New[spec.Rat]() }},
		{"Draw", func(u *certificates.UserOp) { u.Draw = nil }},
	} {
		u := userTwice(t, 2)
		tc.edit(&u)
		if err := certificates.NewSuite().AddOps(u); err == nil || !strings.Contains(err.Error(), "field "+tc.field+":") {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	s := certificates.NewSuite()
	if err := s.AddOps(userTwice(t, 2), userTwice(t, 2)); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("added twice: %v", err)
	}
	if spec.RegistryHashWith() != spec.RegistryHash() {
		t.Errorf("RegistryHashWith() is not RegistryHash()")
	}
}
