package irsem

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestWireAttrsDeclared holds the Go names of attributes (the Attr…
// constants of ops.go) to the registry's declaration: each names an
// attribute spec.AttrSpecs declares as an IR attribute, and every tag's
// attributes are declared.
func TestWireAttrsDeclared(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ops.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if !strings.HasPrefix(id.Name, "Attr") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", id.Name)
				}
				s, _ := strconv.Unquote(lit.Value)
				if n++; !isAttrName(s) {
					t.Errorf("%s spells attribute %q, which spec.AttrSpecs does not declare as an IR attribute", id.Name, s)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no Attr constants found in ops.go")
	}
	for _, o := range Ops() {
		for _, a := range o.Attrs {
			if !isAttrName(a) {
				t.Errorf("tag %s has undeclared attribute %q", o.Op, a)
			}
		}
	}
}

// TestKindHoldsEveryIRAttr checks that the codec's slots are exactly
// Kind's attribute fields: every declared IR attribute has one (slotsFor
// of the build's declaration succeeds), and every field of Kind (but Op
// and Window) and of spec.Window is some declared attribute's, so that
// Clone, Equal and the stray-attribute check, which go by the slots, see
// every field.
func TestKindHoldsEveryIRAttr(t *testing.T) {
	slots, err := slotsFor(spec.AttrSpecs())
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{}
	for _, s := range slots {
		if s.window {
			held["Window."+reflect.TypeFor[spec.Window]().Field(s.index).Name] = true
		} else {
			held["Kind."+reflect.TypeFor[Kind]().Field(s.index).Name] = true
		}
	}
	for _, c := range []struct {
		prefix string
		rt     reflect.Type
	}{{"Kind.", reflect.TypeFor[Kind]()}, {"Window.", reflect.TypeFor[spec.Window]()}} {
		for i := range c.rt.NumField() {
			name := c.prefix + c.rt.Field(i).Name
			if name == "Kind.Op" || name == "Kind.Window" {
				continue
			}
			if !held[name] {
				t.Errorf("%s holds no declared IR attribute", name)
			}
		}
	}
}

// TestPlantedDeclarationFaults plants faults in a copy of the
// declaration and sees each refused by name: a kind swapped against the
// field that holds it, an IR attribute no Kind field holds, a string
// without its values, a field spec.Attrs lacks.
func TestPlantedDeclarationFaults(t *testing.T) {
	edit := func(name string, f func(*spec.AttrSpec)) []spec.AttrSpec {
		d := spec.AttrSpecs()
		for i := range d {
			if d[i].Name == name {
				f(&d[i])
				return d
			}
		}
		t.Fatalf("%s is not declared", name)
		return nil
	}
	for _, c := range []struct {
		name string
		decl []spec.AttrSpec
		want string
	}{
		{"axis declared rational", edit("axis", func(a *spec.AttrSpec) { a.Type = spec.AttrRat }), `"axis" is declared rational, but Kind.Axis is a int`},
		{"lambd declared natural", edit("lambd", func(a *spec.AttrSpec) { a.Type = spec.AttrNat }), `"lambd" is declared natural`},
		{"seed declared natural", edit("seed", func(a *spec.AttrSpec) { a.Type = spec.AttrNat }), `"seed" is declared natural`},
		{"ceil_mode declared natural", edit("ceil_mode", func(a *spec.AttrSpec) { a.Type = spec.AttrNat }), `Window.CeilMode is a bool`},
		{"mask declared booleans list of the registry", edit("mask", func(a *spec.AttrSpec) { a.Type = spec.AttrNats }), `"mask" is declared naturals`},
		{"p made an IR attribute", edit("p", func(a *spec.AttrSpec) { a.IR = true }), `"p" has no field Kind.P`},
		{"IR-only attribute renamed", edit("from_shape", func(a *spec.AttrSpec) { a.Name = "src_shape" }), `"src_shape" has no field Kind.SrcShape`},
		{"mode without values", edit("mode", func(a *spec.AttrSpec) { a.Limit.Values = nil }), `"mode" declares no values`},
		{"field spec.Attrs lacks", edit("size", func(a *spec.AttrSpec) { a.Field = "Sizes" }), `spec.Attrs.Sizes, which does not exist`},
	} {
		_, err := slotsFor(c.decl)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// randomValue draws a value of a declared attribute within its declared
// limit (the bounds themselves a quarter of the time), of the Go type
// the declared type names (written here, not taken from the codec).
func randomValue(r *rand.Rand, a spec.AttrSpec) any {
	maxInt := a.Limit.Max
	if maxInt == 0 {
		maxInt = spec.DefaultMaxElements
	}
	nat := func() int {
		switch r.IntN(4) {
		case 0:
			return maxInt
		case 1:
			return 0
		}
		return r.IntN(maxInt + 1)
	}
	maxLen := a.Limit.Len
	switch maxLen {
	case 0:
		maxLen = spec.MaxRank
	case spec.LenElements:
		maxLen = 40
	}
	switch a.Type {
	case spec.AttrNat:
		return nat()
	case spec.AttrUint64:
		if r.IntN(4) == 0 {
			return uint64(math.MaxUint64)
		}
		return r.Uint64()
	case spec.AttrNats:
		xs := make([]int, r.IntN(maxLen+1))
		for i := range xs {
			xs[i] = nat()
		}
		return xs
	case spec.AttrShape:
		s := make(spec.Shape, r.IntN(spec.MaxRank+1))
		for i := range s {
			s[i] = r.IntN(math.MaxInt32)
		}
		return s
	case spec.AttrRat:
		return spec.NewRat(r.Int64N(2_000_001)-1_000_000, r.Int64N(1000)+1)
	case spec.AttrString:
		return a.Limit.Values[r.IntN(len(a.Limit.Values))]
	case spec.AttrBool:
		return r.IntN(2) == 0
	case spec.AttrBools:
		m := &HardMask{Shape: spec.Shape{r.IntN(5), 2}}
		m.Allowed = make([]bool, m.Shape[0]*2)
		for i := range m.Allowed {
			m.Allowed[i] = r.IntN(2) == 0
		}
		return m
	}
	panic("no IR spelling for " + string(a.Type))
}

// wireValue is the JSON value a canonical document spells v as, written
// here from the type table of attrs.go's doc.
func wireValue(v any) string {
	ints := func(xs []int) string {
		q := make([]string, len(xs))
		for i, x := range xs {
			q[i] = strconv.Itoa(x)
		}
		return "[" + strings.Join(q, ",") + "]"
	}
	switch v := v.(type) {
	case int:
		return strconv.Itoa(v)
	case uint64:
		return strconv.FormatUint(v, 10)
	case []int:
		return ints(v)
	case spec.Shape:
		return ints(v)
	case spec.Rat:
		return strconv.Quote(v.String())
	case string:
		return strconv.Quote(v)
	case bool:
		return strconv.FormatBool(v)
	case *HardMask:
		q := make([]string, len(v.Allowed))
		for i, x := range v.Allowed {
			q[i] = strconv.FormatBool(x)
		}
		return `{"shape":` + ints(v.Shape) + `,"allowed":[` + strings.Join(q, ",") + "]}"
	}
	panic(fmt.Sprintf("%T", v))
}

// TestAttrRoundTripProperty draws, for every tag, random values of its
// declared attributes within their limits, writes the node with
// attributes set through the Kind fields and reads it back: the node's
// text is the one spelled independently here (the attributes in the tag's
// order), the kind read back equals the one written, and the text
// written again is the same. Every declared IR attribute is exercised.
func TestAttrRoundTripProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	seen := map[string]bool{}
	for trial := range 40 {
		for _, o := range Ops() {
			if len(o.Attrs) == 0 {
				continue
			}
			n := Node{ID: 3, Parents: []int{1, 2}, Shape: spec.Shape{2}, Kind: Kind{Op: o.Op}}
			want := fmt.Sprintf(`{"id":3,"kind":%q,"parents":[1,2],"shape":[2]`, o.Op)
			for _, name := range o.Attrs {
				a, ok := spec.LookupAttr(name)
				if !ok {
					t.Fatalf("%s: %s undeclared", o.Op, name)
				}
				v := randomValue(r, a)
				slotByName(name).field(&n.Kind, true).Set(reflect.ValueOf(v))
				want += fmt.Sprintf(",%q:%s", name, wireValue(v))
				seen[name] = true
			}
			want += "}"
			got := string(appendNode(nil, &n))
			if got != want {
				t.Fatalf("trial %d %s: wrote\n%s\nwant\n%s", trial, o.Op, got, want)
			}
			if !json.Valid([]byte(got)) {
				t.Fatalf("%s: not JSON: %s", o.Op, got)
			}
			var back Node
			if err := decodeNode(3, json.RawMessage(got), &back, newRatBudget(len(got))); err != nil {
				t.Fatalf("trial %d %s: %v\n%s", trial, o.Op, err, got)
			}
			if !back.Kind.Equal(n.Kind) || !n.Kind.Equal(back.Kind.Clone()) {
				t.Fatalf("trial %d %s: read back %+v, wrote %+v", trial, o.Op, back.Kind, n.Kind)
			}
			if again := string(appendNode(nil, &back)); again != got {
				t.Fatalf("trial %d %s: rewritten\n%s\nwas\n%s", trial, o.Op, again, got)
			}
		}
	}
	for _, a := range spec.AttrSpecs() {
		if a.IR && !seen[a.Name] {
			t.Errorf("IR attribute %q is listed by no tag", a.Name)
		}
	}
}

// TestAttrLimitsEnforced reads every declared natural and list attribute
// at its declared limit (accepted) and one past it (refused), and a
// string outside its declared values (refused).
func TestAttrLimitsEnforced(t *testing.T) {
	for _, a := range spec.AttrSpecs() {
		s := slotByName(a.Name)
		if !a.IR || s == nil {
			continue
		}
		maxInt := a.Limit.Max
		if maxInt == 0 {
			maxInt = spec.DefaultMaxElements
		}
		maxLen := a.Limit.Len
		if maxLen == 0 {
			maxLen = spec.MaxRank
		}
		list := func(n, v int) string {
			return "[" + strings.TrimSuffix(strings.Repeat(strconv.Itoa(v)+",", n), ",") + "]"
		}
		var ok, bad []string
		switch a.Type {
		case spec.AttrNat:
			ok, bad = []string{strconv.Itoa(maxInt)}, []string{strconv.Itoa(maxInt + 1), "-1", "1.0"}
		case spec.AttrNats:
			ok, bad = []string{list(1, maxInt)}, []string{list(1, maxInt+1)}
			if maxLen > 0 {
				ok, bad = append(ok, list(maxLen, 0)), append(bad, list(maxLen+1, 0))
			}
		case spec.AttrString:
			ok, bad = []string{strconv.Quote(a.Limit.Values[0])}, []string{`"` + a.Limit.Values[0] + `x"`, "1"}
		default:
			continue
		}
		for _, raw := range ok {
			if err := s.decode(&Kind{}, []byte(raw), newRatBudget(len(raw))); err != nil {
				t.Errorf("%s = %.40s refused: %v", a.Name, raw, err)
			}
		}
		for _, raw := range bad {
			if err := s.decode(&Kind{}, []byte(raw), newRatBudget(len(raw))); err == nil {
				t.Errorf("%s = %.40s accepted", a.Name, raw)
			}
		}
	}
}

// TestUndeclaredWireAttrRejected plants an attribute that no declaration
// names in a node and sees it refused as an unknown field, while a
// declared attribute that the tag does not read is refused by name.
func TestUndeclaredWireAttrRejected(t *testing.T) {
	doc := func(extra string) string {
		return `{"format":"tlcheck.ir.v1","input_id":0,"output_id":1,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[2]},
  {"id":1,"kind":"shrink","parents":[0],"shape":[2],"lambd":"1/2","bias":"0"` + extra + `}
]}
`
	}
	if _, err := DecodeGraph([]byte(doc(""))); err != nil {
		t.Fatalf("control: %v", err)
	}
	for extra, want := range map[string]string{
		`,"lambda":"1/2"`: "unknown field",
		`,"axis":0`:       `takes no "axis" attribute`,
	} {
		_, err := DecodeGraph([]byte(doc(extra)))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", extra, err, want)
		}
	}
}

var updateKind = flag.Bool("update-kind", false, "rewrite kind_gen.go from spec.AttrSpecs")

// kindGoType spells goType's types in Go source.
var kindGoType = map[spec.AttrType]string{
	spec.AttrNat: "int", spec.AttrUint64: "uint64", spec.AttrNats: "[]int", spec.AttrShape: "spec.Shape",
	spec.AttrRat: "spec.Rat", spec.AttrString: "string", spec.AttrBool: "bool", spec.AttrBools: "*HardMask",
}

// generateKind is the source of kind_gen.go for the declaration decl: Op,
// then one field per declared IR attribute in declaration order, named as
// slotsFor finds it, with Window (the holder of the window attributes) at
// the place of the first of them.
func generateKind(decl []spec.AttrSpec) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by go generate from spec.AttrSpecs (attrs_decl_test.go); DO NOT EDIT.

package irsem

import "github.com/tlcheck/tlcheck/spec"

// Kind is a node's operation: the tag and its static attributes, one
// field per IR attribute that spec.AttrSpecs declares, named by the
// declaration's AttrSpec.Field (or, for an attribute only the IR spells,
// by its name in mixed caps) and of its declared type's Go type; the
// window attributes are the fields of Window. Each tag reads only the
// fields its TagInfo.Attrs names; Graph.Check rejects a Kind that sets any
// other field, so that the canonical encoding loses nothing. The codec,
// Clone and Equal go by the declaration (attrs.go).
//
// The window tags (conv, conv_transpose, max_pool, max_pool_nd, avg_pool,
// avg_pool_nd) read these Window fields and leave the others zero:
// Kernel and Stride every one; Padding (symmetric, one entry per spatial
// axis) conv, max_pool and avg_pool (TorchLean's); Pads (every begin,
// then every end) conv_transpose, max_pool_nd and avg_pool_nd; Dilation
// all but max_pool and avg_pool; Groups, InChannels, OutChannels and
// OutputPadding the convolutions (OutputPadding conv_transpose only; the
// channel axis is the one just before the spatial axes); CeilMode
// max_pool_nd and avg_pool_nd; CountIncludePad avg_pool_nd.
type Kind struct {
	// Op is the tag.
	Op Op
`)
	window := false
	for _, a := range decl {
		if !a.IR {
			continue
		}
		if strings.HasPrefix(a.Field, "Window.") {
			if !window {
				b.WriteString("\t// Window is the geometry of the window tags.\n\tWindow *spec.Window\n")
				window = true
			}
			continue
		}
		t, ok := kindGoType[a.Type]
		if !ok {
			return nil, fmt.Errorf("attribute %q: the IR has no spelling of type %s", a.Name, a.Type)
		}
		name := a.Field
		if name == "" {
			name = goName(a.Name)
		}
		fmt.Fprintf(&b, "\t// %s holds %q (%s): %s.\n\t%s %s\n", name, a.Name, a.Type, a.Doc, name, t)
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}

// TestKindGenerated holds kind_gen.go to the declaration: it is what
// generateKind writes for spec.AttrSpecs (with -update-kind, it is
// rewritten so). A planted fault in the declaration (a swapped kind, a
// renamed attribute) generates another file.
func TestKindGenerated(t *testing.T) {
	want, err := generateKind(spec.AttrSpecs())
	if err != nil {
		t.Fatal(err)
	}
	if *updateKind {
		if err := os.WriteFile("kind_gen.go", want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("kind_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("kind_gen.go is not what spec.AttrSpecs generates: run go generate ./irsem")
	}
	for _, c := range []struct {
		name string
		edit func(*spec.AttrSpec)
	}{
		{"lambd", func(a *spec.AttrSpec) { a.Type = spec.AttrNat }},
		{"axis1", func(a *spec.AttrSpec) { a.Name = "axis_1st" }},
		{"seed", func(a *spec.AttrSpec) { a.Type = spec.AttrNat }},
	} {
		d := spec.AttrSpecs()
		for i := range d {
			if d[i].Name == c.name {
				c.edit(&d[i])
			}
		}
		if src, err := generateKind(d); err != nil || bytes.Equal(src, got) {
			t.Errorf("%s: planted fault generates the current file (err %v)", c.name, err)
		}
	}
	d := spec.AttrSpecs()
	for i := range d {
		if d[i].Name == "mode" {
			d[i].Type = spec.AttrRats
		}
	}
	if _, err := generateKind(d); err == nil {
		t.Error("an IR attribute of a type the IR cannot spell was generated")
	}
}
