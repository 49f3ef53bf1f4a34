package irsem

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestWireAttrsDeclared holds the IR codec to the registry's declaration
// of attributes: every attribute name the codec spells (the Attr…
// constants of ops.go) is declared in spec.AttrSpecs as an IR attribute,
// every declared IR attribute has its constant, and every tag's
// attributes are declared.
func TestWireAttrsDeclared(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "ops.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var codec []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, sp := range g.Specs {
			vs := sp.(*ast.ValueSpec)
			for i, n := range vs.Names {
				if !strings.HasPrefix(n.Name, "Attr") || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok {
					t.Fatalf("%s is not a string literal", n.Name)
				}
				s, _ := strconv.Unquote(lit.Value)
				codec = append(codec, s)
			}
		}
	}
	if len(codec) == 0 {
		t.Fatal("no Attr constants found in ops.go")
	}
	for _, name := range codec {
		if !isAttrName(name) {
			t.Errorf("the IR codec spells attribute %q, which spec.AttrSpecs does not declare as an IR attribute", name)
		}
	}
	for _, a := range spec.AttrSpecs() {
		if a.IR && !slices.Contains(codec, a.Name) {
			t.Errorf("spec.AttrSpecs declares IR attribute %q, which the codec does not spell", a.Name)
		}
	}
	for _, o := range Ops() {
		for _, a := range o.Attrs {
			if !isAttrName(a) {
				t.Errorf("tag %s has undeclared attribute %q", o.Op, a)
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
