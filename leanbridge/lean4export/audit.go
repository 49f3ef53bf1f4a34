package lean4export

import (
	"fmt"
	"sort"
	"strings"
)

// AllowedAxioms are the axioms a certified theorem may depend on: Lean's
// three standard axioms, those the external checkers (comparator, nanoda,
// lake check) accept.
var AllowedAxioms = []string{"propext", "Classical.choice", "Quot.sound"}

// forbidden names the axioms refused outright, with why.
var forbidden = map[string]string{
	dottedKey("sorryAx"):            "sorry",
	dottedKey("Lean.ofReduceBool"):  "native_decide / compiled evaluation before Lean 4.29",
	dottedKey("Lean.ofReduceNat"):   "compiled Nat evaluation",
	dottedKey("Lean.trustCompiler"): "trusts the compiler",
}

// Closure is what a declaration depends on.
type Closure struct {
	// Axioms are the axioms reached, rendered and sorted.
	Axioms []string
	// Paths holds, per axiom, a dependency path from the root to it.
	Paths map[string][]string
	// Unsafe are the unsafe declarations reached, rendered and sorted.
	Unsafe []string
	// Missing are constants referenced but not declared in the export.
	Missing []string
	// Decls is the number of declarations in the closure.
	Decls int

	axiomKeys map[string]string // rendered → key
}

// Dependencies computes the dependency closure of d as Lean's
// CollectAxioms does, but more conservatively: from every declaration
// reached it follows the constants of its type, of its value (a def's
// body, a theorem's proof, an opaque's value — so an axiom hidden behind
// an opaque is found), an inductive's block and constructors, a
// constructor's inductive, and a recursor's block, rule constructors and
// rule right-hand sides. The walk is iterative and visits each
// expression once.
func (e *Export) Dependencies(d *Decl) *Closure {
	cl := &Closure{Paths: map[string][]string{}, axiomKeys: map[string]string{}}
	parent := map[string]string{d.key: ""}
	seenExpr := make([]bool, len(e.exprs))
	work := []*Decl{d}
	var from string
	reach := func(key string) {
		if _, ok := parent[key]; ok {
			return
		}
		parent[key] = from
		c, ok := e.decls[key]
		if !ok {
			cl.Missing = append(cl.Missing, e.renderKey(key))
			return
		}
		work = append(work, c)
	}
	for len(work) > 0 {
		c := work[len(work)-1]
		work = work[:len(work)-1]
		cl.Decls++
		from = c.key
		if c.Unsafe {
			cl.Unsafe = append(cl.Unsafe, c.Name)
		}
		if c.Kind == KindAxiom {
			cl.Axioms = append(cl.Axioms, c.Name)
			cl.axiomKeys[c.Name] = c.key
			var path []string
			for k := c.key; k != ""; k = parent[k] {
				path = append(path, e.renderKey(k))
			}
			for l, r := 0, len(path)-1; l < r; l, r = l+1, r-1 {
				path[l], path[r] = path[r], path[l]
			}
			cl.Paths[c.Name] = path
		}
		e.walkConsts(c.typ, seenExpr, reach)
		if c.value >= 0 {
			e.walkConsts(c.value, seenExpr, reach)
		}
		for _, r := range c.refs {
			reach(r)
		}
		for _, x := range c.extra {
			e.walkConsts(x, seenExpr, reach)
		}
	}
	sort.Strings(cl.Axioms)
	sort.Strings(cl.Unsafe)
	sort.Strings(cl.Missing)
	return cl
}

// Verdict is an audit's verdict on one theorem.
type Verdict string

// Verdicts. Accepted means: the theorem is in the export as a theorem,
// its whole dependency closure is in the export, it uses no axiom beyond
// AllowedAxioms and no unsafe declaration, and — where a lock is given —
// its statement hash, its deep hash, the hashes of the allowed axioms it
// uses and the Lean version match the lock. It is a statement about the
// export file, not a kernel check: that the proofs type-check is what
// `lake build` (or a kernel replay of the export) establishes.
const (
	Accepted Verdict = "accepted"
	Rejected Verdict = "rejected"
)

// Finding is the audit of one theorem. Theorem and Axioms are the names
// as given and as the export spells them (pass them through Escape before
// printing them); Problems are sentences ready to print: every name from
// the input in them is already escaped.
type Finding struct {
	Theorem  string
	Axioms   []string
	Hash     string // StatementHash, hex
	Deep     string // DeepHash, hex
	Verdict  Verdict
	Problems []string
}

// Failed returns the findings whose verdict is not Accepted, in order.
func Failed(fs []Finding) []Finding {
	var out []Finding
	for _, f := range fs {
		if f.Verdict != Accepted {
			out = append(out, f)
		}
	}
	return out
}

// Audit audits the named theorems of e against the axiom policy and, when
// lock is not nil, against the lock. Findings are in the order of names.
func Audit(e *Export, names []string, lock *Lock) []Finding {
	var out []Finding
	for _, n := range names {
		out = append(out, auditOne(e, n, lock))
	}
	return out
}

func auditOne(e *Export, name string, lock *Lock) Finding {
	f := Finding{Theorem: name, Verdict: Rejected}
	bad := func(format string, args ...any) { f.Problems = append(f.Problems, fmt.Sprintf(format, args...)) }
	d, ok := e.Lookup(name)
	if !ok {
		bad("theorem %s is not in the export", Escape(name))
		return f
	}
	if d.Kind != KindThm {
		bad("%s is %s, not a theorem", Escape(name), kindPhrase(d.Kind, d.quotKind))
		return f
	}
	cl := e.Dependencies(d)
	f.Axioms = cl.Axioms
	for _, a := range cl.Axioms {
		key := cl.axiomKeys[a]
		var via []string
		for _, p := range cl.Paths[a] {
			via = append(via, Escape(p))
		}
		switch {
		case forbidden[key] != "":
			bad("uses forbidden axiom %s (%s), via %s", Escape(a), forbidden[key], strings.Join(via, " → "))
		case isNative(e, key):
			bad("uses native_decide axiom %s (compiled code, not the kernel), via %s", Escape(a), strings.Join(via, " → "))
		case !allowed(key):
			bad("uses axiom %s, which is not on the allow-list (%s), via %s", Escape(a), strings.Join(AllowedAxioms, ", "), strings.Join(via, " → "))
		default:
			f.Problems = append(f.Problems, e.checkCore(e.decls[key])...)
		}
	}
	for _, u := range cl.Unsafe {
		bad("depends on unsafe declaration %s", Escape(u))
	}
	for _, m := range cl.Missing {
		bad("depends on %s, which the export does not declare", Escape(m))
	}
	f.Hash = e.StatementHash(d).Hex()
	deep, _ := e.DeepHash(d)
	f.Deep = deep.Hex()
	if lock != nil {
		if lock.Lean != "" && lock.Lean != e.Meta.LeanVersion {
			bad("the lock was written for Lean %s, the export is from Lean %s", lock.Lean, Escape(e.Meta.LeanVersion))
		}
		if ent, ok := lock.Theorems[name]; !ok {
			bad("theorem %s is not in the lock", Escape(name))
		} else {
			if ent.Statement != f.Hash {
				bad("statement hash %s differs from the lock's %s: the statement changed", short(f.Hash), short(ent.Statement))
			}
			if ent.Deep != f.Deep {
				bad("deep hash %s differs from the lock's %s: a definition the statement uses changed", short(f.Deep), short(ent.Deep))
			}
		}
		for _, a := range cl.Axioms {
			if !allowed(cl.axiomKeys[a]) {
				continue
			}
			ax := e.decls[cl.axiomKeys[a]]
			h := e.StatementHash(ax).Hex()
			if want, ok := lock.Axioms[a]; !ok {
				bad("axiom %s is not pinned in the lock", a)
			} else if want != h {
				bad("axiom %s has statement hash %s, the lock's is %s: not Lean's %s", a, short(h), short(want), a)
			}
		}
	}
	if len(f.Problems) == 0 {
		f.Verdict = Accepted
	}
	return f
}

func short(h string) string {
	if len(h) > 16 {
		return h[:16]
	}
	return h
}

func allowed(key string) bool {
	for _, a := range AllowedAxioms {
		if key == dottedKey(a) {
			return true
		}
	}
	return false
}

// isNative reports whether a name has a component "_native" (the axioms
// native_decide adds from Lean 4.29 on: thm._native.native_decide.ax_1_1).
func isNative(e *Export, key string) bool {
	i, ok := e.keyIndex()[key]
	if !ok {
		return false
	}
	for ; i != 0; i = e.names[i].pre {
		if c := e.names[i].comp; !c.num && c.s == "_native" {
			return true
		}
	}
	return false
}

// Theorems lists the theorems of e, rendered, in file order.
func (e *Export) Theorems() []string {
	var out []string
	for _, d := range e.order {
		if d.Kind == KindThm {
			out = append(out, d.Name)
		}
	}
	return out
}
