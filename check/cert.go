package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// CertPath is the certificate directory Op and Find write for p under
// certDir (Options.CertDir): certDir/<p.Name>.
func CertPath(certDir string, p Primitive) string { return filepath.Join(certDir, p.Name) }

// userOp is the checker's primitive as the certificates package takes it:
// its private registries and its draws — Find's seeded ones, or, with rec
// set, the cases rapid drew (Recorded: no seed regenerates them).
func (c *checker) userOp(rec []drawn) certificates.UserOp {
	u := certificates.UserOp{Name: c.p.Name, Regs: c.regs, Draw: c.draw}
	if rec != nil {
		u.Recorded = true
		u.Draw = func(_ uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
			if i < 0 || i >= len(rec) {
				return nil, nil, spec.Tensor[spec.Rat]{}, fmt.Errorf("check: %s: no recorded case %d (%d recorded)", c.p.Name, i, len(rec))
			}
			return rec[i].inst, rec[i].dxs, rec[i].d, nil
		}
	}
	return u
}

// writeCert writes the certificate directory of a check that held: cases
// cases of the checker's primitive, from Find's sweep with seed (rec nil)
// or rapid's recorded cases rec (seed 0: nothing is seeded), through
// certificates.Suite.Certify with the primitive added (AddOps) — the
// producer every built-in primitive's adjointness certificate goes
// through. A previous certificate directory there is replaced; any other
// non-empty directory is refused.
func (c *checker) writeCert(certDir string, seed uint64, cases int, rec []drawn) (string, error) {
	dir := CertPath(certDir, c.p)
	s := certificates.NewSuite()
	if err := s.AddOps(c.userOp(rec)); err != nil {
		return "", fmt.Errorf("check: %w", err)
	}
	_, err := s.Certify(dir, certificates.Options{Seed: seed, Cases: cases, Ops: []string{c.p.Name}, Providers: []string{},
		Overwrite: certificates.OverwriteCertificates})
	if err != nil {
		return "", fmt.Errorf("check: %s: certificate %s: %w", c.p.Name, dir, err)
	}
	return dir, nil
}

// dropCert removes the certificate directory a previous run left for a
// check that now fails (a certificate directory or an empty one; anything
// else is left alone), so that no certificate outlives the verdict.
func dropCert(certDir string, p Primitive) error {
	dir := CertPath(certDir, p)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err := certificates.CheckOutputDir(dir, certificates.OverwriteCertificates); err != nil {
		return nil // not a certificate directory: not ours to remove
	}
	return os.RemoveAll(dir)
}

// Verify re-derives every claim of the certificate directory dir that Op
// or Find wrote (CertPath), from the user's go test: the primitives ops
// are added to the certificates verifier's table of rules
// (certificates.Suite.AddOps) and the directory goes through that
// verifier's own code path, as a built-in directory does under tlcheck
// verify. Every inner product ⟨jvp(x,dx), δ⟩ and ⟨dx, vjp(x,δ)⟩ is
// recomputed from the recorded inputs with ops' rules (exactly over Rat
// for oracle "rat", as outward-rounded enclosures for "interval") and
// compared with the recorded one; the inputs of a Find certificate are
// regenerated from the manifest's seed (spec.CaseSeed(seed, Name, i), the
// sweep's draw) and compared too; an Op certificate (draw "recorded") is
// recomputed from its recorded inputs only. The manifest's registry hash
// must be spec.RegistryHashWith over the facts of the certified
// primitives: a declaration whose facts changed fails there, one whose
// rules changed fails at the first claim they no longer give, and —
// for a Find certificate — one whose generator changed (Shapes, Domains,
// Kinks) fails at the first input the seed no longer draws. Nothing
// recorded is trusted.
//
// The error is nil exactly when every file verified; otherwise it names
// the first failure (a *certificates.FieldError with the file and the JSON
// path of the field, which errors.As finds) and the report lists all. A
// malformed primitive, an unreadable directory and a directory of
// primitives not among ops (certificates.UnknownOpsError) are errors with
// a nil report.
func Verify(dir string, ops ...Primitive) (*verify.Report, error) {
	s := certificates.NewSuite()
	for _, p := range ops {
		c, err := newChecker(p, Options{})
		if err != nil {
			return nil, err
		}
		if err := s.AddOps(c.userOp(nil)); err != nil {
			return nil, fmt.Errorf("check: Verify: %w", err)
		}
	}
	rep, err := verify.Dir(s, dir)
	if err != nil {
		return nil, fmt.Errorf("check: Verify: %w", err)
	}
	if f := rep.Failures(); len(f) > 0 {
		return rep, fmt.Errorf("check: Verify %s: %d of %d files fail; first: %w", dir, len(f), len(rep.Files), f[0].Err)
	}
	return rep, nil
}
