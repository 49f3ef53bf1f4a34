package lean4export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// coreDecls writes into f, in the export format, the declarations Lean
// core makes for the three allowed axioms and the constants their
// statements use (see corePins for the statements, transcribed from
// Init/Prelude.lean, Init/Core.lean and the kernel's quotient module).
// forge, when not nil, may replace a statement before it is declared: it
// gets the name and the honest type and returns the type to declare.
// Recursors are left out (the pins do not cover them: the kernel
// generates them).
func coreDecls(f *fx, forge func(name string, typ int) int) {
	if forge == nil {
		forge = func(_ string, t int) int { return t }
	}
	u := f.name("u")
	u1 := f.name("u_1")
	one := f.level("succ", "0")
	lu := f.level("param", fmt.Sprint(u))
	lu1 := f.level("param", fmt.Sprint(u1))
	prop := f.sort(0)
	sortU := f.sort(lu)
	sortU1 := f.sort(lu1)
	b := f.bvar
	app := func(fn int, args ...int) int {
		for _, a := range args {
			fn = f.app(fn, a)
		}
		return fn
	}
	induct := func(name, ctor string, lps []string, typ, ctyp int) {
		n, c := f.name(name), f.name(ctor)
		f.add(fmt.Sprintf(`{"inductive":{"ctors":[{"cidx":0,"induct":%d,"isUnsafe":false,"levelParams":%s,"name":%d,"numFields":1,"numParams":1,"type":%d}],"recs":[],"types":[{"all":[%d],"ctors":[%d],"isRec":false,"isReflexive":false,"isUnsafe":false,"levelParams":%s,"name":%d,"numIndices":0,"numNested":0,"numParams":1,"type":%d}]}}`,
			n, f.lps(lps), c, forge(ctor, ctyp), n, c, f.lps(lps), n, forge(name, typ)))
	}
	quot := func(name, kind string, typ int) {
		f.add(fmt.Sprintf(`{"quot":{"kind":%q,"levelParams":%s,"name":%d,"type":%d}}`, kind, f.lps([]string{"u"}), f.name(name), forge(name, typ)))
	}

	// Eq.{u_1} : ∀ {α : Sort u_1}, α → α → Prop
	eqT := f.pi("α", sortU1, f.pi("a", b(0), f.pi("a", b(1), prop)))
	// Eq.refl.{u_1} : ∀ {α : Sort u_1} (a : α), @Eq.{u_1} α a a
	eqRefl := f.pi("α", sortU1, f.pi("a", b(0), app(f.konst("Eq", lu1), b(1), b(0), b(0))))
	induct("Eq", "Eq.refl", []string{"u_1"}, eqT, eqRefl)

	// Iff : Prop → Prop → Prop
	iffT := f.pi("a", prop, f.pi("b", prop, prop))
	// Iff.intro : ∀ {a b : Prop}, (a → b) → (b → a) → Iff a b
	iff := f.konst("Iff")
	iffIntro := f.pi("a", prop, f.pi("b", prop,
		f.pi("mp", f.pi("x", b(1), b(1)),
			f.pi("mpr", f.pi("x", b(1), b(3)), app(iff, b(3), b(2))))))
	induct("Iff", "Iff.intro", nil, iffT, iffIntro)

	// propext : ∀ {a b : Prop}, (a ↔ b) → @Eq.{1} Prop a b
	propext := f.pi("a", prop, f.pi("b", prop,
		f.pi("h", app(iff, b(1), b(0)), app(f.konst("Eq", one), prop, b(2), b(1)))))
	f.axiom("propext", forge("propext", propext))

	// Nonempty.{u} : Sort u → Prop
	nonemptyT := f.pi("α", sortU, prop)
	// Nonempty.intro.{u} : ∀ {α : Sort u}, α → Nonempty.{u} α
	nonempty := f.konst("Nonempty", lu)
	nonemptyIntro := f.pi("α", sortU, f.pi("val", b(0), app(nonempty, b(1))))
	induct("Nonempty", "Nonempty.intro", []string{"u"}, nonemptyT, nonemptyIntro)

	// Classical.choice.{u} : ∀ {α : Sort u}, Nonempty.{u} α → α
	choice := f.pi("α", sortU, f.pi("h", app(nonempty, b(0)), b(1)))
	f.axiom("Classical.choice", forge("Classical.choice", choice), "u")

	// Quot.{u} : ∀ {α : Sort u}, (α → α → Prop) → Sort u
	rel := func(alpha int) int { return f.pi("x", alpha, f.pi("y", alpha+0, prop)) }
	_ = rel
	quotT := f.pi("α", sortU, f.pi("r", f.pi("x", b(0), f.pi("y", b(1), prop)), sortU))
	quot("Quot", "type", quotT)
	// Quot.mk.{u} : ∀ {α : Sort u} (r : α → α → Prop), α → @Quot.{u} α r
	quotC := f.konst("Quot", lu)
	quotMk := f.pi("α", sortU, f.pi("r", f.pi("x", b(0), f.pi("y", b(1), prop)),
		f.pi("a", b(1), app(quotC, b(2), b(1)))))
	quot("Quot.mk", "ctor", quotMk)

	// Quot.sound.{u} : ∀ {α : Sort u} {r : α → α → Prop} {a b : α},
	//   r a b → @Eq.{u} (@Quot.{u} α r) (@Quot.mk.{u} α r a) (@Quot.mk.{u} α r b)
	mk := f.konst("Quot.mk", lu)
	sound := f.pi("α", sortU, f.pi("r", f.pi("x", b(0), f.pi("y", b(1), prop)),
		f.pi("a", b(1), f.pi("b", b(2),
			f.pi("h", app(b(2), b(1), b(0)),
				app(f.konst("Eq", lu), app(quotC, b(4), b(3)), app(mk, b(4), b(3), b(2)), app(mk, b(4), b(3), b(1))))))))
	f.axiom("Quot.sound", forge("Quot.sound", sound), "u")
}

// usingAxioms is an export holding Lean core's allowed axioms (through
// coreDecls) and theorem T : Prop proved by a term that mentions each of
// axioms.
func usingAxioms(forge func(string, int) int, axioms ...string) string {
	f := newFx()
	coreDecls(f, forge)
	prop := f.sort(0)
	v := prop
	for _, a := range axioms {
		lv := []int{}
		if a != "propext" {
			lv = append(lv, 1)
		}
		v = f.app(f.konst(a, lv...), v)
	}
	f.thm("T", prop, v)
	return f.String()
}

// TestCorePins: the pinned hashes are those of the statements written out
// in coreDecls; an export with Lean core's axioms is accepted with and
// without a lock.
func TestCorePins(t *testing.T) {
	e := parse(t, usingAxioms(nil, AllowedAxioms...))
	for name, pin := range corePins {
		d, ok := e.Lookup(name)
		if !ok {
			t.Errorf("%s is not in the fixture", name)
			continue
		}
		if h := e.StatementHash(d).Hex(); h != pin.stmt {
			t.Errorf("corePins[%q].stmt = %s, the statement written out hashes to %s", name, pin.stmt, h)
		}
	}
	f := Audit(e, []string{"T"}, nil)[0]
	if f.Verdict != Accepted || strings.Join(f.Axioms, ",") != "Classical.choice,Quot.sound,propext" {
		t.Fatalf("Lean core's axioms: %+v", f)
	}
	lock, err := NewLock(e, []string{"T"})
	if err != nil {
		t.Fatal(err)
	}
	if f := Audit(e, []string{"T"}, lock)[0]; f.Verdict != Accepted {
		t.Fatalf("against its lock: %+v", f)
	}
}

// TestCorePinsAgainstRealExport: Eq and Eq.refl as lean4export exported
// them (Nat.add_succ.ndjson, Lean 4.27.0-rc1, format 3.0.0: the same
// name, level and expression records, declarations in another shape)
// hash to the pinned statements. The test re-emits the file's name,
// level and expression records under a 3.1.0 meta line and declares Eq's
// block from the 3.0.0 inductive record's own type fields.
func TestCorePinsAgainstRealExport(t *testing.T) {
	data := readShared(t, "Nat.add_succ.ndjson")
	var out []string
	out = append(out, metaLine)
	var eqBlock map[string]json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for first := true; sc.Scan(); first = false {
		line := sc.Text()
		if first {
			continue
		}
		var r map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if _, ok := r["in"]; ok {
			out = append(out, line)
		} else if _, ok := r["il"]; ok {
			out = append(out, line)
		} else if _, ok := r["ie"]; ok {
			out = append(out, line)
		} else if ind, ok := r["inductive"]; ok && strings.Contains(line, `"numIndices":1,"numNested":0,"numParams":2`) {
			if err := json.Unmarshal(ind, &eqBlock); err != nil {
				t.Fatal(err)
			}
		}
	}
	if eqBlock == nil {
		t.Fatal("no Eq block in Nat.add_succ.ndjson")
	}
	// 3.0.0 → 3.1.0: inductiveVals/constructorVals/recursorVals become
	// types/ctors/recs; the records inside are the same.
	out = append(out, fmt.Sprintf(`{"inductive":{"ctors":%s,"recs":%s,"types":%s}}`, eqBlock["constructorVals"], eqBlock["recursorVals"], eqBlock["inductiveVals"]))
	e := parse(t, strings.Join(out, "\n")+"\n")
	for _, n := range []string{"Eq", "Eq.refl"} {
		d, ok := e.Lookup(n)
		if !ok {
			t.Fatalf("%s not in the re-emitted block", n)
		}
		if h := e.StatementHash(d).Hex(); h != corePins[n].stmt {
			t.Errorf("%s from the real export hashes to %s, pinned %s", n, h, corePins[n].stmt)
		}
		if d.Kind != corePins[n].kind || !sameRefs(d.refs, corePins[n].refs) {
			t.Errorf("%s from the real export: kind %s refs %v", n, d.Kind, d.refs)
		}
	}
}

// TestForgedAxiomsRejected: a declaration under an allowed name whose
// statement, or one of whose constants, is not Lean core's is rejected,
// with and without a lock — among them issue 27's forgery (axiom
// Classical.choice : Prop, axiom propext : Classical.choice).
func TestForgedAxiomsRejected(t *testing.T) {
	issue := func() string {
		f := newFx()
		prop := f.sort(0)
		f.axiom("Classical.choice", prop)
		f.axiom("propext", f.konst("Classical.choice"))
		f.thm("T", prop, f.konst("propext"))
		return f.String()
	}()
	for _, tc := range []struct {
		name, export, want string
	}{
		{"issue 27: choice : Prop, propext : choice", issue, "the statement of axiom propext mentions Classical.choice"},
		{"propext stated as False-like ∀ p : Prop, p", usingAxioms(func(n string, t int) int {
			if n == "propext" {
				return 0 // the fixture's first expression: Sort u_1, not the statement
			}
			return t
		}, "propext"), "axiom propext has statement hash"},
		{"Iff forged: its constructor's type changed", usingAxioms(func(n string, t int) int {
			if n == "Iff.intro" {
				return 0
			}
			return t
		}, "propext"), "Iff.intro (in the statement of axiom propext) has statement hash"},
		{"Nonempty forged", usingAxioms(func(n string, t int) int {
			if n == "Nonempty" {
				return 0
			}
			return t
		}, "Classical.choice"), "Nonempty (in the statement of axiom Classical.choice) has statement hash"},
		{"Quot.mk forged", usingAxioms(func(n string, t int) int {
			if n == "Quot.mk" {
				return 0
			}
			return t
		}, "Quot.sound"), "Quot.mk (in the statement of axiom Quot.sound) has statement hash"},
		{"choice declared as Prop", func() string {
			f := newFx()
			prop := f.sort(0)
			f.axiom("Classical.choice", prop)
			f.thm("T", prop, f.konst("Classical.choice"))
			return f.String()
		}(), "axiom Classical.choice has statement hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := parse(t, tc.export)
			f := Audit(e, []string{"T"}, nil)[0]
			if f.Verdict != Rejected || !strings.Contains(strings.Join(f.Problems, "; "), tc.want) {
				t.Errorf("without a lock: %+v, want a problem containing %q", f, tc.want)
			}
			// A lock written from the forged export itself does not help:
			// NewLock refuses it.
			if _, err := NewLock(e, []string{"T"}); err == nil {
				t.Error("NewLock pinned a forged axiom")
			}
			lock := &Lock{Lean: "4.30.0", Theorems: map[string]LockEntry{"T": {Statement: f.Hash, Deep: f.Deep}}, Axioms: map[string]string{}}
			for _, a := range f.Axioms {
				d, _ := e.Lookup(a)
				lock.Axioms[a] = e.StatementHash(d).Hex()
			}
			if f := Audit(e, []string{"T"}, lock)[0]; f.Verdict != Rejected || !strings.Contains(strings.Join(f.Problems, "; "), tc.want) {
				t.Errorf("with a lock matching the forgery: %+v", f)
			}
		})
	}
}
