package lean4export

import (
	"fmt"
	"strings"
)

// A corePin is what Lean core declares under a name that the statement of
// an allowed axiom mentions (directly or through a constructor): the
// declaration's kind, for a quot declaration its quotient kind, its
// StatementHash and, for an inductive type, its block and constructors in
// order (Decl.refs), for a constructor its inductive type.
type corePin struct {
	kind Kind
	quot string
	stmt string
	refs []string
	// closure, for an axiom, lists the constants its statement may
	// reach (through types and constructors).
	closure []string
}

// corePins pins the statements of Lean's three allowed axioms and of the
// constants those statements are built from, as Lean core (v4.30.0)
// declares them:
//
//	axiom propext.{}          : ∀ {a b : Prop}, (a ↔ b) → @Eq.{1} Prop a b
//	axiom Classical.choice.{u}: ∀ {α : Sort u}, Nonempty.{u} α → α
//	axiom Quot.sound.{u}      : ∀ {α : Sort u} {r : α → α → Prop} {a b : α},
//	                              r a b → @Eq.{u} (@Quot.{u} α r) (@Quot.mk.{u} α r a) (@Quot.mk.{u} α r b)
//	inductive Iff : Prop → Prop → Prop
//	  Iff.intro : ∀ {a b : Prop}, (a → b) → (b → a) → Iff a b
//	inductive Eq.{u_1} : ∀ {α : Sort u_1}, α → α → Prop
//	  Eq.refl.{u_1} : ∀ {α : Sort u_1} (a : α), @Eq.{u_1} α a a
//	inductive Nonempty.{u} : Sort u → Prop
//	  Nonempty.intro.{u} : ∀ {α : Sort u}, α → Nonempty.{u} α
//	quot (type) Quot.{u}   : ∀ {α : Sort u}, (α → α → Prop) → Sort u
//	quot (ctor) Quot.mk.{u}: ∀ {α : Sort u} (r : α → α → Prop), α → @Quot.{u} α r
//
// The hashes were computed from these statements written out in the
// export format (core_test.go builds them, and checks Eq and Eq.refl
// against the real export of Nat.add_succ in ../shared/lean4export); the
// sources read are listed in lean/README.md.
//
// Why this is enough for "the axiom is Lean's": the statement hash fixes
// the axiom's type up to the names of the constants in it; pinning those
// constants' kinds, statement hashes and constructor lists, transitively
// (the set above is closed: every constant in one of these types is in
// it), fixes what the names mean. An inductive type is determined by its
// type and its constructors' types (its recursor is generated from them
// by the kernel, which re-checks it when the export is replayed), and
// Quot and Quot.mk are the kernel's own quotient constants. So an export
// that declares a weaker or stronger "propext", or a "propext" over a
// forged Iff, is rejected, with or without a lock.
var corePins = map[string]corePin{
	"propext":          {kind: KindAxiom, stmt: "8d24c2fb58fbb6c5c651e8de4b1dbb05e5d1cd36051a8198a4d4e1bb490d185a", closure: []string{"Iff", "Iff.intro", "Eq", "Eq.refl"}},
	"Classical.choice": {kind: KindAxiom, stmt: "ae4aec1cd4bab8ea2173396abe0511208c044b467c91e97437618f24d0fd96a7", closure: []string{"Nonempty", "Nonempty.intro"}},
	"Quot.sound":       {kind: KindAxiom, stmt: "49a70d19acf394440719f978b6037ae2a46a86c9214d9426042a7ac7d0044ab8", closure: []string{"Eq", "Eq.refl", "Quot", "Quot.mk"}},
	"Iff":              {kind: KindInduct, stmt: "38f36bb14accc314b1d58fe0af6049492e033a33e489f7f9ea971aa864232298", refs: []string{"Iff", "Iff.intro"}},
	"Iff.intro":        {kind: KindCtor, stmt: "553b754bf6ad15f8fc322d5b492aeddafe9fa6ec33cfcb0b92e5821e23287b18", refs: []string{"Iff"}},
	"Eq":               {kind: KindInduct, stmt: "cc23e5d6c4f93ea3fa14b525b8d49b358602427fcf85c93d18a22f7bf82d502f", refs: []string{"Eq", "Eq.refl"}},
	"Eq.refl":          {kind: KindCtor, stmt: "7a0aee7ffd4ced5282a626ec3e6f3659495e3685e9cde285f0b201613b517ade", refs: []string{"Eq"}},
	"Nonempty":         {kind: KindInduct, stmt: "383ec170fc8587456ee774d23e51695f1df83283f2a659cd84528a6deba8190b", refs: []string{"Nonempty", "Nonempty.intro"}},
	"Nonempty.intro":   {kind: KindCtor, stmt: "4212a59633cb290e4cb87c89bf03cd5be7cd5adc060780ab8f6d5ca66419cf35", refs: []string{"Nonempty"}},
	"Quot":             {kind: KindQuot, quot: "type", stmt: "e9699578a62bb90aa3b1eaf631a7ce0151c62d6d122c19f73904288395683904"},
	"Quot.mk":          {kind: KindQuot, quot: "ctor", stmt: "2e497d68ec1545807b7345efc5db9ceae105f02b36a1fb97a755887518fac4d8"},
}

// corePinByKey indexes corePins by name key.
var corePinByKey = func() map[string]string {
	m := map[string]string{}
	for n := range corePins {
		m[dottedKey(n)] = n
	}
	return m
}()

// checkCore checks that the allowed axiom ax, and every constant its
// statement depends on, is the one Lean core declares: kind, statement
// hash and constructors as pinned in corePins. It returns the problems
// found, each naming the declaration (escaped) and what differs.
func (e *Export) checkCore(ax *Decl) []string {
	var problems []string
	inClosure := map[string]bool{ax.key: true}
	for _, c := range corePins[ax.Name].closure {
		inClosure[dottedKey(c)] = true
	}
	seen := map[string]bool{ax.key: true}
	work := []*Decl{ax}
	seenExpr := make([]bool, len(e.exprs))
	for len(work) > 0 {
		d := work[len(work)-1]
		work = work[:len(work)-1]
		name, ok := corePinByKey[d.key]
		if !ok || !inClosure[d.key] {
			problems = append(problems, fmt.Sprintf("the statement of axiom %s mentions %s, which is not among the constants of Lean core's statement", Escape(ax.Name), Escape(d.Name)))
			continue
		}
		pin := corePins[name]
		what := func() string {
			if d == ax {
				return "axiom " + name
			}
			return fmt.Sprintf("%s (in the statement of axiom %s)", name, ax.Name)
		}
		if d.Kind != pin.kind || d.quotKind != pin.quot {
			problems = append(problems, fmt.Sprintf("%s is %s, Lean core's is %s: a forged declaration under an allowed name", what(), kindPhrase(d.Kind, d.quotKind), kindPhrase(pin.kind, pin.quot)))
			continue
		}
		if h := e.StatementHash(d).Hex(); h != pin.stmt {
			problems = append(problems, fmt.Sprintf("%s has statement hash %s, Lean core's is %s: a forged declaration under an allowed name", what(), short(h), short(pin.stmt)))
		}
		if !sameRefs(d.refs, pin.refs) {
			var got []string
			for _, r := range d.refs {
				got = append(got, Escape(e.renderKey(r)))
			}
			problems = append(problems, fmt.Sprintf("%s refers to [%s], Lean core's to [%s]: a forged declaration under an allowed name", what(), strings.Join(got, ", "), strings.Join(pin.refs, ", ")))
		}
		next := func(key string) {
			if seen[key] {
				return
			}
			seen[key] = true
			if c, ok := e.decls[key]; ok {
				work = append(work, c)
			} // a missing constant is reported by Dependencies
		}
		e.walkConsts(d.typ, seenExpr, next)
		for _, r := range d.refs {
			next(r)
		}
	}
	return problems
}

func sameRefs(got []string, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != dottedKey(want[i]) {
			return false
		}
	}
	return true
}

// kindPhrase is "an axiom", "a def", "a quot (ctor)", … with the right
// article.
func kindPhrase(k Kind, quot string) string {
	s := k.String()
	if quot != "" {
		s += " (" + quot + ")"
	}
	switch s[0] {
	case 'a', 'e', 'i', 'o', 'u':
		return "an " + s
	}
	return "a " + s
}
