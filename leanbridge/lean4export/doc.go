// Package lean4export reads the NDJSON files lean4export writes (format
// 3.1.x) and audits the theorems of tlcheck's Lean project in them: that
// each named theorem exists, which axioms its proof depends on, that none
// is forbidden, and that its statement is the one locked in
// lean/statements.lock.
//
// It is the last link of the certificate chain — the check that the
// Lean side which consumes the certificates proves what it claims with
// nothing but the kernel and Lean's three standard axioms — and, like the
// certificate verifier, it trusts nothing it reads: it depends on no
// other tlcheck package but limits. Package leanbridge drives it (lake
// build, lean4export, the audit against the lock).
//
// # Reading
//
// Parse streams the file line by line. The first line must be the meta
// record, and its format.version must be 3.1.x (3.0.0, whose records have
// another shape, and every other version are refused with a message that
// names the version). Every other line is one JSON object holding exactly
// one record: a name ("in" with "str" or "num"), a level ("il" with
// "succ", "max", "imax" or "param"), an expression ("ie" with "bvar",
// "sort", "const", "app", "lam", "forallE", "letE", "proj", "natVal",
// "strVal" or "mdata") or a declaration ("axiom", "def", "thm",
// "opaque", "quot", "inductive"), with exactly the fields the format
// gives that record (unknown, missing and duplicate keys are errors).
// Indices are contiguous — names and levels from 1 (0 is the anonymous
// name and the zero level), expressions from 0, each record carrying the
// next index — and every reference is to an index already defined, so
// the records form a DAG in file order and no walk over them can loop. A
// declared name is declared once. Names are compared as component lists
// (through an unambiguous key), never as dotted strings, so that a
// component holding a '.' or a newline cannot pass for another name. The
// limits lean-lines and lean-line-bytes (package limits) bound the input
// before it is buffered; every walk is iterative.
//
// # Axioms
//
// Dependencies computes a declaration's closure as Lean's
// CollectAxioms.collect does, but conservatively: the constants of every
// reached declaration's type and value (so theorem proofs, and the values
// of opaques, where an axiom could otherwise hide), an inductive's block
// and constructors, a constructor's inductive, a recursor's block and
// rules. Audit rejects a theorem whose closure reaches sorryAx,
// Lean.ofReduceBool, Lean.ofReduceNat, Lean.trustCompiler, an axiom with
// a "_native" component (native_decide from Lean 4.29 on adds
// <thm>._native.native_decide.ax_1_1), any other axiom not among
// propext, Classical.choice and Quot.sound, an unsafe declaration, or a
// constant the export does not declare; each problem names the theorem,
// the axiom and a dependency path to it.
//
// Soundness of "accepted": the closure is a superset of what the kernel
// needs to check the theorem (every constant the kernel may unfold or
// instantiate while checking the type and the proof occurs in one of the
// followed fields, and the closure follows all of them transitively), so
// every axiom the proof can depend on is in it. An allowed axiom is
// recognised by its statement, not its name: the statement hashes of
// propext, Classical.choice and Quot.sound as Lean core states them, and
// of the constants those statements are built from (Iff, Eq, Nonempty,
// Quot, Quot.mk and their constructors, with their kinds and constructor
// lists), are pinned in this package (corePins), so an export that
// declares a "propext" of another type, or over a forged Iff, is rejected
// with or without a lock. Whether the proofs type-check is not decided
// here: that is the kernel's part (lake build, or a kernel replay of the
// export).
//
// # Output
//
// Names read from an export, a lock or the command line may hold any
// bytes. Escape renders them for a terminal (control characters, ESC,
// NUL, bidi overrides, newlines and invalid UTF-8 as Go-style escapes); a
// Finding's Problems are already escaped, its Theorem and Axioms are not.
//
// # Statement hashes
//
// StatementHash is SHA-256 over a tagged, length-prefixed encoding of the
// theorem's level parameter names and its type (exprHash gives the
// encoding): indices, binder names and binder infos are left out, so the
// hash does not depend on how an export numbers its records, and two
// statements equal up to Lean's Expr.eqv hash alike. Constants occur in
// it by name only, so DeepHash adds the canonical form of every constant
// reachable from the type (definitions with their bodies, inductive blocks,
// but theorems by statement only): a statement "checkAll cases = true"
// whose checkAll was weakened keeps its statement hash and changes its
// deep hash. The lock records both, the Lean version and the statement
// hashes of the allowed axioms used; deep hashes depend on Lean core's
// definitions and so on the toolchain, which the lock therefore names.
package lean4export
