package certificates

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// DrawRecorded is the AdjointnessFile.Draw of a file whose cases no seed
// regenerates: a user's primitive checked under rapid (check.Op), whose
// cases rapid drew from its own stream. The verifier recomputes every
// claim from the recorded inputs, tangents and cotangents and does not
// bind them to the manifest's seed. A built-in primitive's file never
// carries it: its cases are always drawn from the seed.
const DrawRecorded = "recorded"

// UserOp is a primitive outside the reference registry — a user's own,
// declared with package check — that a Suite certifies and verifies the
// adjointness of (AddOps), exactly as it does a built-in primitive's:
// adjointness/NAME.json, the same cases and claims, the same verifier.
type UserOp struct {
	// Name is the primitive's name (the safe alphabet; no built-in
	// primitive's name).
	Name string
	// Regs are private registries (spec.New + spec.Registry.Register)
	// holding the primitive beside the built-in ones; Rat and Interval are
	// required. The producer decides each case with Regs.CheckAdjointness;
	// the verifier recomputes each claim with the rules of Regs.Rat and
	// Regs.Interval directly, as it does a built-in primitive's.
	Regs obligations.Registries
	// Draw returns case i for the run seed: the instance, one tangent per
	// parent and the cotangent. The verifier calls it to regenerate the
	// recorded inputs of a seeded file (Draw "" in the file); the producer
	// takes its cases from it.
	Draw func(seed uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error)
	// Recorded says that Draw returns cases no seed regenerates (rapid's):
	// the producer marks the file DrawRecorded. The verifier ignores it
	// and reads the mode from the file.
	Recorded bool
}

// OpTable is where a Suite takes primitives' rules from: the reference
// registry, extended by the user's primitives of AddOps. The zero value is
// the reference registry alone.
type OpTable struct {
	user map[string]UserOp
}

// UserOp returns the user's primitive op, if AddOps added it.
func (t *OpTable) UserOp(op string) (UserOp, bool) {
	u, ok := t.user[op]
	return u, ok
}

// Rat is op's primitive over spec.Rat: a user's primitive's rules, or
// the reference registry's.
func (t *OpTable) Rat(op string) (*spec.Prim[spec.Rat], error) {
	if u, ok := t.UserOp(op); ok {
		return u.Regs.Rat.Lookup(op)
	}
	return spec.Default[spec.Rat]().Lookup(op)
}

// Interval is op's primitive over spec.Interval, as Rat.
func (t *OpTable) Interval(op string) (*spec.Prim[spec.Interval], error) {
	if u, ok := t.UserOp(op); ok {
		return u.Regs.Interval.Lookup(op)
	}
	return spec.Default[spec.Interval]().Lookup(op)
}

// Known reports whether op is a built-in or an added primitive.
func (t *OpTable) Known(op string) bool {
	_, err := t.Rat(op)
	return err == nil
}

// Hash is the registry hash of a directory certifying ops: the reference
// registry's (spec.RegistryHash) extended by the facts of the user's
// primitives among ops (spec.RegistryHashWith) — so a directory of
// built-in primitives keeps the reference hash, and a user's directory
// names exactly the primitives it certifies, whatever else AddOps added.
func (t *OpTable) Hash(ops []string) string {
	var extra []*spec.OpInfo
	for _, op := range ops {
		if u, ok := t.UserOp(op); ok {
			if p, err := u.Regs.Rat.Lookup(op); err == nil {
				extra = append(extra, p.OpInfo)
			}
		}
	}
	return spec.RegistryHashWith(extra...)
}

// Draw regenerates case i of op from the seed: the registry's generator
// for a built-in primitive (adjointInstance), the primitive's Draw for a
// user's.
func (t *OpTable) Draw(op string, seed uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
	if u, ok := t.UserOp(op); ok {
		return u.Draw(seed, i)
	}
	return adjointInstance(op, seed, i)
}

// AddOps makes s certify and verify the adjointness of the user's
// primitives ops beside the built-in ones: Certify with Options.Ops
// naming them writes adjointness/NAME.json with their cases (the
// manifest's registry_hash is spec.RegistryHashWith over their facts), and
// verify.Dir recomputes every claim with their rules — the same verifier, only
// the table it takes rules from is extended. It rejects, naming the field,
// an unsafe or built-in name, a name added twice, and registries that lack
// the primitive or a Draw that is nil.
func (s *Suite) AddOps(ops ...UserOp) error {
	for _, u := range ops {
		bad := func(field, format string, args ...any) error {
			return fmt.Errorf("certificates: AddOps %s: field %s: %s", QuoteName(u.Name), field, fmt.Sprintf(format, args...))
		}
		switch {
		case !nameRE.MatchString(u.Name):
			return bad("Name", "not in the safe alphabet [A-Za-z0-9_.:-]{1,128}")
		case spec.Default[spec.Rat]() == u.Regs.Rat || spec.Default[spec.Interval]() == u.Regs.Interval:
			return bad("Regs", "the reference registries are shared; register the primitive into private copies from spec.New")
		case u.Regs.Rat == nil || u.Regs.Interval == nil:
			return bad("Regs", "Rat and Interval registries are required")
		case u.Draw == nil:
			return bad("Draw", "nil: the verifier regenerates seeded cases with it")
		}
		if _, err := spec.Default[spec.Rat]().Lookup(u.Name); err == nil {
			return bad("Name", "%q is a built-in primitive", u.Name)
		}
		if _, dup := s.ops.user[u.Name]; dup {
			return bad("Name", "added twice")
		}
		if _, err := u.Regs.Rat.Lookup(u.Name); err != nil {
			return bad("Regs.Rat", "%v", err)
		}
		if _, err := u.Regs.Interval.Lookup(u.Name); err != nil {
			return bad("Regs.Interval", "%v", err)
		}
		if s.ops.user == nil {
			s.ops.user = map[string]UserOp{}
		}
		s.ops.user[u.Name] = u
	}
	return nil
}

// UnknownOpsError is verify.Dir's error for a directory that certifies
// primitives the verifier does not know — a user's own (package check),
// whose rules are Go code in the user's tests — under a registry hash
// other than the verifier's: no claim about them can be recomputed, so
// the directory is not verified at all (tlcheck verify exits 2, as for any
// directory it cannot read; it is no obligation failure). check.Verify,
// given the primitives, verifies such a directory.
type UnknownOpsError struct {
	Dir string
	Ops []string // as the manifest spells them
}

func (e *UnknownOpsError) Error() string {
	names := make([]string, 0, len(e.Ops))
	for i, op := range e.Ops {
		if i == 4 {
			names = append(names, fmt.Sprintf("and %d more", len(e.Ops)-i))
			break
		}
		names = append(names, QuoteName(op))
	}
	what := "primitive"
	if len(e.Ops) > 1 {
		what = "primitives"
	}
	return fmt.Sprintf("%s: %s certifies the %s %s, unknown to this build: a user's own primitive (package check), whose rules this verifier cannot recompute; verify the directory with check.Verify(dir, primitive) in the go test that declares it",
		QuoteName(e.Dir), ManifestName, what, strings.Join(names, ", "))
}

// UnknownOps lists the manifest ops s does not know, sorted and distinct.
func (s *Suite) UnknownOps(ops []string) []string {
	set := map[string]bool{}
	for _, op := range ops {
		if !s.ops.Known(op) {
			set[op] = true
		}
	}
	out := make([]string, 0, len(set))
	for op := range set {
		out = append(out, op)
	}
	sort.Strings(out)
	return out
}
