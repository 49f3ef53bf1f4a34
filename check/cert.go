package check

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/certificates/verify"
	"github.com/tlcheck/tlcheck/model"
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

// VerifyModel is Verify for the certificate directory of a user's model
// (tlcheck certify --onnx M or --graph G, certificates.CertifyModel), tied
// to the model files named by files — the Go form of
// tlcheck verify --onnx M --input X DIR (issue 26 point 4). Verify stays
// the function for a primitive's directory; this one takes the model.
//
// The files are read first (files.Load: the model and its input, checked
// against each other; an unreadable file is an error with a nil report).
// The directory then goes through the verifier tlcheck verify runs
// (verify.Dir): every claim re-derived, nothing
// recorded trusted. A directory that verifies is then tied to the files,
// in two halves (tieModel):
//
//   - digests: the SHA-256 of every file read must be the one the manifest
//     records for it, role for role and in order (verify.MatchSources;
//     a *verify.SourceMismatch otherwise). A manifest that records
//     none (certificates.ErrNoSources, written before digests were) is
//     tied by the second half alone.
//   - the sound half: every model certificate carries its graph and
//     payload inline and is bound to the manifest by its SHA-256, so its
//     graph_hash (irsem.GraphHash) must be the hash of the graph and
//     payload the given files import to, and its input (or range centre)
//     the given input exactly (verify.MatchModel; a
//     *verify.ModelMismatch otherwise). The manifest's digests bind
//     nothing inside the directory — a forger may rewrite them — but a
//     model that differs in one weight imports to another graph hash, so
//     a certificate about it fails here whatever its manifest says.
//
// The error is nil exactly when the directory verifies and is about these
// files; errors.As finds the *certificates.FieldError of a failing file,
// or the *SourceMismatch / *ModelMismatch of a directory about other files.
func VerifyModel(dir string, files model.Spec) (*verify.Report, error) {
	return verifyModel(dir, files, tieModel)
}

// verifyModel is VerifyModel with the tie given (a test plants one that
// skips a comparison).
func verifyModel(dir string, files model.Spec, tie func(dir string, man *certificates.Manifest, m *model.Model) error) (*verify.Report, error) {
	m, err := files.Load()
	if err != nil {
		return nil, fmt.Errorf("check: VerifyModel: %w", err)
	}
	rep, err := verify.Dir(certificates.FullSuite(), dir)
	if err != nil {
		return nil, fmt.Errorf("check: VerifyModel: %w", err)
	}
	if f := rep.Failures(); len(f) > 0 {
		return rep, fmt.Errorf("check: VerifyModel %s: %d of %d files fail; first: %w", dir, len(f), len(rep.Files), f[0].Err)
	}
	if err := tie(dir, rep.Manifest, m); err != nil {
		return rep, fmt.Errorf("check: VerifyModel %s: %w", dir, err)
	}
	return rep, nil
}

// tieModel ties a verified model directory to the loaded files m: the
// digests the manifest records (when it records any) and the graph hash
// and input of every model certificate (see VerifyModel).
func tieModel(dir string, man *certificates.Manifest, m *model.Model) error {
	given := make([]certificates.Source, len(m.Files))
	for i, in := range m.Files {
		given[i] = certificates.Source{Role: in.Role, Name: in.Path, SHA256: in.SHA256}
	}
	if err := verify.MatchSources(man, given); err != nil && !errors.Is(err, certificates.ErrNoSources) {
		return err
	}
	return verify.MatchModel(dir, man, &certificates.Model{Graph: m.Graph, Payload: m.Payload, Input: m.Input})
}
