package lean4export

import (
	"fmt"
	"strings"
)

// fx builds a lean4export 3.1.0 file record by record, numbering names,
// levels and expressions as the exporter does.
type fx struct {
	lines []string
	names map[string]int
	nl    int
	ne    int
}

const metaLine = `{"meta":{"exporter":{"name":"lean4export","version":"3.1.0"},"format":{"version":"3.1.0"},"lean":{"githash":"0000000000000000000000000000000000000000","version":"4.30.0"}}}`

func newFx() *fx {
	return &fx{lines: []string{metaLine}, names: map[string]int{"": 0}}
}

// name returns the index of a dotted name, creating its components.
func (f *fx) name(dotted string) int {
	if i, ok := f.names[dotted]; ok {
		return i
	}
	pre, last := "", dotted
	if k := strings.LastIndex(dotted, "."); k >= 0 {
		pre, last = dotted[:k], dotted[k+1:]
	}
	p := f.name(pre)
	i := len(f.names)
	f.names[dotted] = i
	f.add(fmt.Sprintf(`{"in":%d,"str":{"pre":%d,"str":%q}}`, i, p, last))
	return i
}

func (f *fx) add(s string) { f.lines = append(f.lines, s) }

// level adds {"il":k,KIND:body}.
func (f *fx) level(kind, body string) int {
	f.nl++
	f.add(fmt.Sprintf(`{"il":%d,%q:%s}`, f.nl, kind, body))
	return f.nl
}

// expr adds {"ie":k,KIND:body}.
func (f *fx) expr(kind, body string) int {
	i := f.ne
	f.ne++
	f.add(fmt.Sprintf(`{"ie":%d,%q:%s}`, i, kind, body))
	return i
}

func (f *fx) sort(l int) int      { return f.expr("sort", fmt.Sprint(l)) }
func (f *fx) bvar(i int) int      { return f.expr("bvar", fmt.Sprint(i)) }
func (f *fx) app(fn, arg int) int { return f.expr("app", fmt.Sprintf(`{"arg":%d,"fn":%d}`, arg, fn)) }
func (f *fx) konst(n string, us ...int) int {
	return f.expr("const", fmt.Sprintf(`{"name":%d,"us":%s}`, f.name(n), ints(us)))
}
func (f *fx) pi(binder string, t, b int) int {
	n := f.name(binder)
	return f.expr("forallE", fmt.Sprintf(`{"binderInfo":"default","body":%d,"name":%d,"type":%d}`, b, n, t))
}
func (f *fx) lam(binder string, t, b int) int {
	n := f.name(binder)
	return f.expr("lam", fmt.Sprintf(`{"binderInfo":"default","body":%d,"name":%d,"type":%d}`, b, n, t))
}

func ints(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (f *fx) axiom(name string, typ int, lps ...string) {
	n := f.name(name)
	f.add(fmt.Sprintf(`{"axiom":{"isUnsafe":false,"levelParams":%s,"name":%d,"type":%d}}`, f.lps(lps), n, typ))
}

func (f *fx) thm(name string, typ, val int) {
	n := f.name(name)
	f.add(fmt.Sprintf(`{"thm":{"all":[%d],"levelParams":[],"name":%d,"type":%d,"value":%d}}`, n, n, typ, val))
}

func (f *fx) def(name string, typ, val int) {
	n := f.name(name)
	f.add(fmt.Sprintf(`{"def":{"all":[%d],"hints":"abbrev","levelParams":[],"name":%d,"safety":"safe","type":%d,"value":%d}}`, n, n, typ, val))
}

func (f *fx) opaque(name string, typ, val int) {
	n := f.name(name)
	f.add(fmt.Sprintf(`{"opaque":{"all":[%d],"isUnsafe":false,"levelParams":[],"name":%d,"type":%d,"value":%d}}`, n, n, typ, val))
}

func (f *fx) lps(ls []string) string {
	var xs []int
	for _, l := range ls {
		xs = append(xs, f.name(l))
	}
	if xs == nil {
		return "[]"
	}
	return ints(xs)
}

func (f *fx) String() string { return strings.Join(f.lines, "\n") + "\n" }

// idThm adds theorem name : ∀ p : Prop, ∀ h : p, p := fun p h => h, the
// format notes' example, and returns the type and the Prop expression.
func (f *fx) idThm(name string) (typ, prop int) {
	prop = f.sort(0)
	b0 := f.bvar(0)
	b1 := f.bvar(1)
	inner := f.pi("h", b0, b1)
	typ = f.pi("p", prop, inner)
	l1 := f.lam("h", b0, b0)
	val := f.lam("p", prop, l1)
	f.thm(name, typ, val)
	return typ, prop
}

// withAxiom is an export with theorem T : Prop → Prop… proved through an
// axiom ax : Prop (its value is the constant): T's closure holds ax.
func withAxiom(ax string) string {
	f := newFx()
	prop := f.sort(0)
	f.axiom(ax, prop)
	c := f.konst(ax)
	f.thm("T", prop, c)
	return f.String()
}

// withSorry is an export whose theorem T is proved by sorry, as Lean
// exports it: the Bool block, then sorryAx.{u} : (α : Sort u) → Bool → α.
func withSorry() string {
	f := newFx()
	one := f.level("succ", "0")
	typ0 := f.sort(one)
	boolN, fN, tN, recN := f.name("Bool"), f.name("Bool.false"), f.name("Bool.true"), f.name("Bool.rec")
	boolC := f.konst("Bool")
	u := f.name("u")
	lu := f.level("param", fmt.Sprint(u))
	su := f.sort(lu)
	f.add(fmt.Sprintf(`{"inductive":{"ctors":[{"cidx":0,"induct":%d,"isUnsafe":false,"levelParams":[],"name":%d,"numFields":0,"numParams":0,"type":%d},{"cidx":1,"induct":%d,"isUnsafe":false,"levelParams":[],"name":%d,"numFields":0,"numParams":0,"type":%d}],"recs":[{"all":[%d],"isUnsafe":false,"k":false,"levelParams":[%d],"name":%d,"numIndices":0,"numMinors":2,"numMotives":1,"numParams":0,"rules":[{"ctor":%d,"nfields":0,"rhs":%d},{"ctor":%d,"nfields":0,"rhs":%d}],"type":%d}],"types":[{"all":[%d],"ctors":[%d,%d],"isRec":false,"isReflexive":false,"isUnsafe":false,"levelParams":[],"name":%d,"numIndices":0,"numNested":0,"numParams":0,"type":%d}]}}`,
		boolN, fN, boolC, boolN, tN, boolC, boolN, u, recN, fN, boolC, tN, boolC, su, boolN, fN, tN, boolN, typ0))
	b1 := f.bvar(1)
	inner := f.pi("synthetic", boolC, b1)
	sorryT := f.pi("α", su, inner)
	f.axiom("sorryAx", sorryT, "u")
	prop := f.sort(0)
	s := f.konst("sorryAx", 1) // sorryAx.{1}? levels are indices: use level 1 = succ 0
	sp := f.app(s, prop)
	ff := f.konst("Bool.false")
	v := f.app(sp, ff)
	f.thm("T", prop, v)
	return f.String()
}
