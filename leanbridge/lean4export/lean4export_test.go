package lean4export

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
)

func parse(t *testing.T, s string) *Export {
	t.Helper()
	e, err := Parse(strings.NewReader(s))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return e
}

// sharedDir finds ../shared/lean4export above the package, or skips.
func sharedDir(t testing.TB) string {
	t.Helper()
	dir, _ := os.Getwd()
	for {
		p := filepath.Join(dir, "..", "shared", "lean4export")
		if st, err := os.Stat(p); err == nil && st.IsDir() {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Skip("no ../shared/lean4export above the repository: the real lean4export exports are not on this machine")
		}
		dir = up
	}
}

func readShared(t *testing.T, name string) []byte {
	data, err := os.ReadFile(filepath.Join(sharedDir(t), name))
	if err != nil {
		t.Skipf("%s: %v", name, err)
	}
	return data
}

func TestRealExports(t *testing.T) {
	t.Run("init-Nat.lt_of_succ_le", func(t *testing.T) {
		e := parse(t, string(readShared(t, "init-Nat.lt_of_succ_le.ndjson")))
		if e.Meta.FormatVersion != "3.1.0" || e.Meta.LeanVersion != "4.29.1" {
			t.Errorf("meta = %+v", e.Meta)
		}
		// The file: one theorem, 5 defs, 4 inductive blocks (Nat, LT, LE, Nat.le).
		if got := e.Theorems(); len(got) != 1 || got[0] != "Nat.lt_of_succ_le" {
			t.Errorf("theorems = %v", got)
		}
		fs := Audit(e, []string{"Nat.lt_of_succ_le"}, nil)
		// Nat.lt_of_succ_le is proved from Nat.le's definition alone:
		// #print axioms reports none.
		if fs[0].Verdict != Accepted || len(fs[0].Axioms) != 0 {
			t.Errorf("finding = %+v", fs[0])
		}
		if d, _ := e.Lookup("Nat.le"); d == nil || d.Kind != KindInduct {
			t.Errorf("Nat.le = %+v", d)
		}
		if d, _ := e.Lookup("Nat.le.refl"); d == nil || d.Kind != KindCtor {
			t.Errorf("Nat.le.refl = %+v", d)
		}
		// A lock of it round-trips and the audit against it accepts.
		l, err := NewLock(e, []string{"Nat.lt_of_succ_le"})
		if err != nil {
			t.Fatal(err)
		}
		l2, err := ReadLock("lock", bytes.NewReader(l.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if f := Audit(e, []string{"Nat.lt_of_succ_le"}, l2)[0]; f.Verdict != Accepted {
			t.Errorf("against its own lock: %+v", f)
		}
	})
	t.Run("axiom-control", func(t *testing.T) {
		e := parse(t, string(readShared(t, "axiom-control.ndjson")))
		d, ok := e.Lookup("letRed")
		if !ok || d.Kind != KindDef {
			t.Fatalf("letRed = %+v", d)
		}
		// letRed's value is the axiom aProp: the closure must hold it.
		cl := e.Dependencies(d)
		if len(cl.Axioms) != 1 || cl.Axioms[0] != "aProp" {
			t.Errorf("axioms of letRed = %v", cl.Axioms)
		}
		f := Audit(e, []string{"letRed"}, nil)[0]
		if f.Verdict != Rejected || !strings.Contains(strings.Join(f.Problems, ";"), "not a theorem") {
			t.Errorf("letRed audit = %+v", f)
		}
	})
	t.Run("Nat.add_succ 3.0.0", func(t *testing.T) {
		_, err := Parse(bytes.NewReader(readShared(t, "Nat.add_succ.ndjson")))
		if err == nil || !strings.Contains(err.Error(), `format version "3.0.0" is not supported`) {
			t.Errorf("err = %v", err)
		}
	})
}

// TestAuditRejects plants every fault of issue 12 in a fixture and
// checks that the audit names the theorem's offending axiom.
func TestAuditRejects(t *testing.T) {
	for _, tc := range []struct {
		name, export, want string
	}{
		{"sorry", withSorry(), "forbidden axiom sorryAx (sorry)"},
		{"native_decide", withAxiom("T._native.native_decide.ax_1_1"), "native_decide axiom T._native.native_decide.ax_1_1"},
		{"ofReduceBool", withAxiom("Lean.ofReduceBool"), "forbidden axiom Lean.ofReduceBool"},
		{"ofReduceNat", withAxiom("Lean.ofReduceNat"), "forbidden axiom Lean.ofReduceNat"},
		{"trustCompiler", withAxiom("Lean.trustCompiler"), "forbidden axiom Lean.trustCompiler"},
		{"custom axiom", withAxiom("myAxiom"), "axiom myAxiom, which is not on the allow-list"},
		{"axiom spelled with a dot inside a component", func() string {
			// One component "Classical.choice" is not the name Classical.choice.
			f := newFx()
			prop := f.sort(0)
			f.names["X"] = len(f.names)
			f.add(`{"in":1,"str":{"pre":0,"str":"Classical.choice"}}`)
			f.add(`{"axiom":{"isUnsafe":false,"levelParams":[],"name":1,"type":0}}`)
			f.add(`{"ie":1,"const":{"name":1,"us":[]}}`)
			f.ne = 2
			f.thm("T", prop, 1)
			return f.String()
		}(), "axiom «Classical.choice», which is not on the allow-list"},
		{"axiom behind an opaque", func() string {
			f := newFx()
			prop := f.sort(0)
			f.axiom("hidden", prop)
			f.opaque("O", prop, f.konst("hidden"))
			f.thm("T", prop, f.konst("O"))
			return f.String()
		}(), "axiom hidden, which is not on the allow-list (propext, Classical.choice, Quot.sound), via T → O → hidden"},
		{"missing constant", func() string {
			f := newFx()
			prop := f.sort(0)
			f.thm("T", prop, f.konst("Ghost"))
			return f.String()
		}(), "depends on Ghost, which the export does not declare"},
		{"not a theorem", func() string {
			f := newFx()
			prop := f.sort(0)
			f.def("T", prop, prop)
			return f.String()
		}(), "T is a def, not a theorem"},
		{"absent", func() string { f := newFx(); f.sort(0); return f.String() }(), "theorem T is not in the export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := Audit(parse(t, tc.export), []string{"T"}, nil)[0]
			if f.Verdict != Rejected || !strings.Contains(strings.Join(f.Problems, "; "), tc.want) {
				t.Errorf("finding %+v, want a problem containing %q", f, tc.want)
			}
		})
	}
}

func TestAllowedAxiomsAccepted(t *testing.T) {
	for _, a := range AllowedAxioms {
		f := Audit(parse(t, usingAxioms(nil, a)), []string{"T"}, nil)[0]
		if f.Verdict != Accepted || len(f.Axioms) != 1 || f.Axioms[0] != a {
			t.Errorf("finding %+v", f)
		}
	}
	// The name alone is not enough: Classical.choice : Prop is not Lean's.
	if f := Audit(parse(t, withAxiom("Classical.choice")), []string{"T"}, nil)[0]; f.Verdict != Rejected {
		t.Errorf("a Classical.choice : Prop was accepted: %+v", f)
	}
}

// TestStatementHash: the hash ignores numbering and binder names, and
// changes with the statement.
func TestStatementHash(t *testing.T) {
	base := newFx()
	base.idThm("T")
	// The same statement, numbered differently: extra names, levels and
	// expressions first, other binder names.
	shifted := newFx()
	shifted.name("Unrelated.name")
	shifted.level("succ", "0")
	shifted.sort(1)
	prop := shifted.sort(0)
	b0, b1 := shifted.bvar(0), shifted.bvar(1)
	inner := shifted.pi("hh", b0, b1)
	typ := shifted.pi("q", prop, inner)
	shifted.thm("T", typ, shifted.lam("q", prop, shifted.lam("hh", b0, b0)))
	// A different statement: ∀ p : Prop, ∀ h : p, ∀ k : p, p.
	other := newFx()
	prop = other.sort(0)
	b0, b1 = other.bvar(0), other.bvar(1)
	b2 := other.bvar(2)
	typ = other.pi("p", prop, other.pi("h", b0, other.pi("k", b1, b2)))
	other.thm("T", typ, other.lam("p", prop, other.lam("h", b0, other.lam("k", b1, b1))))

	h := func(s string) string {
		e := parse(t, s)
		d, _ := e.Lookup("T")
		return e.StatementHash(d).Hex()
	}
	if h(base.String()) != h(shifted.String()) {
		t.Error("renumbering or renaming binders changed the statement hash")
	}
	if h(base.String()) == h(other.String()) {
		t.Error("a different statement has the same hash")
	}

	// Against a lock: the base's lock accepts base and shifted and rejects other.
	lock, err := NewLock(parse(t, base.String()), []string{"T"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    string
		want Verdict
	}{{base.String(), Accepted}, {shifted.String(), Accepted}, {other.String(), Rejected}} {
		f := Audit(parse(t, tc.s), []string{"T"}, lock)[0]
		if f.Verdict != tc.want {
			t.Errorf("verdict %s, want %s: %v", f.Verdict, tc.want, f.Problems)
		}
		if tc.want == Rejected && !strings.Contains(strings.Join(f.Problems, ";"), "statement hash") {
			t.Errorf("problems %v do not name the statement hash", f.Problems)
		}
	}
}

// TestDeepHash: weakening a definition the statement uses changes the
// deep hash but not the statement hash, and the lock catches it.
func TestDeepHash(t *testing.T) {
	mk := func(body func(f *fx) int) string {
		f := newFx()
		prop := f.sort(0)
		f.axiom("True'", prop) // stand-in constants
		f.axiom("False'", prop)
		f.def("check", prop, body(f))
		f.thm("T", f.konst("check"), f.konst("check"))
		return f.String()
	}
	strict := mk(func(f *fx) int { return f.konst("False'") })
	weak := mk(func(f *fx) int { return f.konst("True'") })
	es, ew := parse(t, strict), parse(t, weak)
	ds, _ := es.Lookup("T")
	dw, _ := ew.Lookup("T")
	if es.StatementHash(ds) != ew.StatementHash(dw) {
		t.Fatal("statement hashes differ though the statement's wording is the same")
	}
	a, _ := es.DeepHash(ds)
	b, _ := ew.DeepHash(dw)
	if a == b {
		t.Fatal("deep hash did not change with the definition")
	}
	lock := &Lock{Lean: "4.30.0", Theorems: map[string]LockEntry{"T": {Statement: es.StatementHash(ds).Hex(), Deep: a.Hex()}}, Axioms: map[string]string{}}
	f := Audit(ew, []string{"T"}, lock)[0]
	if !strings.Contains(strings.Join(f.Problems, ";"), "deep hash") {
		t.Errorf("problems %v", f.Problems)
	}
}

func TestLockChecks(t *testing.T) {
	f := newFx()
	f.idThm("T")
	e := parse(t, f.String())
	lock, err := NewLock(e, []string{"T"})
	if err != nil {
		t.Fatal(err)
	}
	lock.Lean = "4.29.0"
	if f := Audit(e, []string{"T"}, lock)[0]; !strings.Contains(strings.Join(f.Problems, ";"), "written for Lean 4.29.0") {
		t.Errorf("problems %v", f.Problems)
	}
	if f := Audit(e, []string{"T"}, &Lock{Lean: "4.30.0"})[0]; !strings.Contains(strings.Join(f.Problems, ";"), "not in the lock") {
		t.Errorf("problems %v", f.Problems)
	}
	// An allowed axiom whose type is not the locked one.
	ec := parse(t, withAxiom("propext"))
	l2 := &Lock{Lean: "4.30.0", Axioms: map[string]string{"propext": strings.Repeat("0", 64)}, Theorems: map[string]LockEntry{}}
	d, _ := ec.Lookup("T")
	deep, _ := ec.DeepHash(d)
	l2.Theorems["T"] = LockEntry{Statement: ec.StatementHash(d).Hex(), Deep: deep.Hex()}
	if f := Audit(ec, []string{"T"}, l2)[0]; !strings.Contains(strings.Join(f.Problems, ";"), "axiom propext has statement hash") {
		t.Errorf("problems %v", f.Problems)
	}
	// Locks refuse non-canonical text.
	for _, bad := range []string{
		"",
		"# other\n",
		LockHeader + "\nlean 4.30.0\ntheorem T 00 11\n",
		LockHeader + "\ntheorem B " + strings.Repeat("a", 64) + " " + strings.Repeat("b", 64) + "\ntheorem A " + strings.Repeat("a", 64) + " " + strings.Repeat("b", 64) + "\n",
		LockHeader + "\ntheorem A;rm " + strings.Repeat("a", 64) + " " + strings.Repeat("b", 64) + "\n",
	} {
		if _, err := ReadLock("x.lock", strings.NewReader(bad)); err == nil {
			t.Errorf("ReadLock accepted %q", bad)
		}
	}
	// A lock refuses to pin an unclean theorem.
	if _, err := NewLock(parse(t, withSorry()), []string{"T"}); err == nil || !strings.Contains(err.Error(), "sorryAx") {
		t.Errorf("NewLock of a sorry theorem: %v", err)
	}
}

// TestParseRejects: malformed files are refused with the line and why.
func TestParseRejects(t *testing.T) {
	good := newFx()
	good.idThm("T")
	lines := good.lines
	join := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "empty file"},
		{"no meta", join(lines[1:]...), "line 1: the first line must be the meta record"},
		{"format 3.0.0", strings.Replace(good.String(), `"format":{"version":"3.1.0"}`, `"format":{"version":"3.0.0"}`, 1), `format version "3.0.0" is not supported`},
		{"format 3.2.0", strings.Replace(good.String(), `"format":{"version":"3.1.0"}`, `"format":{"version":"3.2.0"}`, 1), `format version "3.2.0" is not supported`},
		{"truncated last line", strings.TrimSuffix(good.String(), "\n"), "truncated"},
		{"truncated JSON", join(lines[0], lines[1][:10]), "line 2: malformed JSON"},
		{"name index skipped", join(lines[0], `{"in":2,"str":{"pre":0,"str":"T"}}`), "line 2: in 2 out of sequence: the next index is 1"},
		{"expr index repeated", join(lines[0], `{"ie":0,"sort":0}`, `{"ie":0,"sort":0}`), "line 3: ie 0 out of sequence: the next index is 1"},
		{"level index from 0", join(lines[0], `{"il":0,"succ":0}`), "il 0 out of sequence"},
		{"forward expr reference", join(lines[0], `{"ie":0,"app":{"arg":1,"fn":0}}`), "line 2: app.fn: expression 0 is not defined yet"},
		{"forward name reference", join(lines[0], `{"in":1,"str":{"pre":1,"str":"x"}}`), "str.pre: name 1 is not defined yet"},
		{"forward level reference", join(lines[0], `{"ie":0,"sort":3}`), "sort: level 3 is not defined yet"},
		{"decl forward type", join(lines[0], `{"in":1,"str":{"pre":0,"str":"x"}}`, `{"axiom":{"isUnsafe":false,"levelParams":[],"name":1,"type":0}}`), "axiom.type: expression 0 is not defined yet"},
		{"two kinds", join(lines[0], `{"ie":0,"sort":0,"bvar":0}`), "exactly two keys"},
		{"two decls", join(lines[0], `{"axiom":{},"thm":{}}`), "exactly one kind key"},
		{"unknown kind", join(lines[0], `{"ie":0,"hole":0}`), `unknown "ie" record kind`},
		{"unknown decl", join(lines[0], `{"inductiveVals":[]}`), "unknown record kind"},
		{"unknown field", join(lines[0], `{"in":1,"str":{"pre":0,"str":"x","extra":1}}`), `unknown field "extra"`},
		{"missing field", join(lines[0], `{"in":1,"str":{"pre":0}}`), `missing field "str"`},
		{"duplicate key", join(lines[0], `{"in":1,"in":1}`), "duplicate key"},
		{"negative index", join(lines[0], `{"ie":0,"bvar":-1}`), "not a natural number"},
		{"float index", join(lines[0], `{"ie":0,"bvar":1.0}`), "not a natural number"},
		{"second meta", join(lines[0], lines[0]), "a second meta record"},
		{"duplicate declaration", join(append(append([]string{}, lines...), lines[len(lines)-1])...), "theorem T declared twice"},
		{"trailing data", join(lines[0], `{"ie":0,"sort":0} {}`), "trailing data"},
		{"bad binder info", join(lines[0], `{"in":1,"str":{"pre":0,"str":"x"}}`, `{"ie":0,"sort":0}`, `{"forallE":{"binderInfo":"weird","body":0,"name":1,"type":0},"ie":1}`), "unknown binder info"},
		{"blank line", join(lines[0], ""), "line 2: malformed JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.in))
			var pe *ParseError
			if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseLimits(t *testing.T) {
	defer limits.Set(limits.Limits{LeanLines: 5, LeanLineBytes: 300})()
	f := newFx()
	f.idThm("T") // more than 5 lines
	if _, err := Parse(strings.NewReader(f.String())); err == nil || !strings.Contains(err.Error(), "over the lean-lines limit") {
		t.Errorf("line count: %v", err)
	}
	long := metaLine + "\n" + `{"ie":0,"strVal":"` + strings.Repeat("x", 1000) + `"}` + "\n"
	if _, err := Parse(strings.NewReader(long)); err == nil || !strings.Contains(err.Error(), "over the lean-line-bytes limit") {
		t.Errorf("line length: %v", err)
	}
}
