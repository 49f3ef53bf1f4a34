package spec

import (
	"fmt"
	"math/big"
	"reflect"
	"strings"
	"testing"
)

// TestAttrSpecsDeclareEveryField checks the declaration against the
// holders: the Fields of AttrSpecs are the fields of Attrs and then of
// Window, each once and in field order, and a Window field's JSON name
// (its certificate encoding) is its attribute's name, or "-" for the
// IR's own spelling.
func TestAttrSpecsDeclareEveryField(t *testing.T) {
	var attrs, window []string
	names := map[string]bool{}
	for _, a := range AttrSpecs() {
		if names[a.Name] {
			t.Errorf("attribute %q declared twice", a.Name)
		}
		names[a.Name] = true
		if a.Type == "" || a.Doc == "" {
			t.Errorf("attribute %q: missing type or doc", a.Name)
		}
		switch {
		case strings.HasPrefix(a.Field, "Window."):
			f, ok := reflect.TypeFor[Window]().FieldByName(strings.TrimPrefix(a.Field, "Window."))
			if !ok {
				t.Errorf("attribute %q: Window has no field %s", a.Name, a.Field)
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag != a.Name && tag != "-" {
				t.Errorf("attribute %q: Window.%s is spelled %q in a certificate", a.Name, f.Name, tag)
			}
			window = append(window, f.Name)
		case a.Field != "":
			attrs = append(attrs, a.Field)
		case !a.IR:
			t.Errorf("attribute %q is held nowhere (no Field) and is not an IR attribute", a.Name)
		}
	}
	fieldNames := func(rt reflect.Type) []string {
		var out []string
		for i := range rt.NumField() {
			out = append(out, rt.Field(i).Name)
		}
		return out
	}
	if want := fieldNames(reflect.TypeFor[Attrs]()); !reflect.DeepEqual(attrs, want) {
		t.Errorf("AttrSpecs declares the Attrs fields\n%v\nbut Attrs has\n%v", attrs, want)
	}
	if want := fieldNames(reflect.TypeFor[Window]()); !reflect.DeepEqual(window, want) {
		t.Errorf("AttrSpecs declares the Window fields\n%v\nbut Window has\n%v", window, want)
	}
}

// TestRegistryAttrsDeclared checks every built-in entry against the
// declaration (build panics on a miss; this names it).
func TestRegistryAttrsDeclared(t *testing.T) {
	for _, o := range Infos() {
		if err := checkAttrs(o); err != nil {
			t.Error(err)
		}
	}
}

// TestUndeclaredAttrRejected plants attributes that AttrSpecs does not
// declare, in an entry's Attrs and in its IR form, and sees each refused.
func TestUndeclaredAttrRejected(t *testing.T) {
	for _, o := range []*OpInfo{
		{Name: "shrink2", Attrs: []string{"Lambda"}},
		{Name: "shrink2", Attrs: []string{"Lambd"}, IR: &IRForm{Tag: "shrink2", Attrs: []string{"lambda"}}},
		{Name: "shrink2", IR: &IRForm{Tag: "shrink2", Attrs: []string{"p"}}}, // declared, but not an IR attribute
	} {
		if err := checkAttrs(o); err == nil {
			t.Errorf("%+v: undeclared attribute accepted", o)
		}
	}
	if err := checkAttrs(&OpInfo{Name: "shrink2", Attrs: []string{"Lambd", "Bias"}, IR: &IRForm{Tag: "shrink2", Attrs: []string{"lambd", "bias"}}}); err != nil {
		t.Errorf("declared attributes refused: %v", err)
	}
	if _, ok := LookupAttr("lambd"); !ok {
		t.Error("lambd is not declared")
	}
}

// attrGoType is the Go type that holds an attribute of each declared type
// in Attrs (and Window), written here from the type's definition.
var attrGoType = map[AttrType]reflect.Type{
	AttrNat: reflect.TypeFor[int](), AttrUint64: reflect.TypeFor[uint64](), AttrNats: reflect.TypeFor[[]int](),
	AttrShape: reflect.TypeFor[Shape](), AttrRat: reflect.TypeFor[*big.Rat](), AttrRats: reflect.TypeFor[[]*big.Rat](),
	AttrString: reflect.TypeFor[string](), AttrBool: reflect.TypeFor[bool](), AttrBools: reflect.TypeFor[[]bool](),
	AttrWindow: reflect.TypeFor[*Window](),
}

// checkAttrTypes reports the first declared attribute whose holding field
// has another Go type than its declared type's, or whose limit does not
// fit its type.
func checkAttrTypes(decl []AttrSpec) error {
	for _, a := range decl {
		want, ok := attrGoType[a.Type]
		if !ok {
			return fmt.Errorf("attribute %q: unknown type %q", a.Name, a.Type)
		}
		if a.Type == AttrString && len(a.Limit.Values) == 0 {
			return fmt.Errorf("attribute %q: a string declares its values", a.Name)
		}
		if a.Type != AttrString && a.Limit.Values != nil {
			return fmt.Errorf("attribute %q: only a string has values", a.Name)
		}
		if a.Field == "" {
			continue
		}
		holder, name := reflect.TypeFor[Attrs](), a.Field
		if w, ok := strings.CutPrefix(a.Field, "Window."); ok {
			holder, name = reflect.TypeFor[Window](), w
		}
		f, ok := holder.FieldByName(name)
		if !ok {
			return fmt.Errorf("attribute %q: no field %s", a.Name, a.Field)
		}
		if f.Type != want {
			return fmt.Errorf("attribute %q is declared %s, but %s is a %v", a.Name, a.Type, a.Field, f.Type)
		}
	}
	return nil
}

// TestAttrTypesDeclared holds every declared type to the field that holds
// it, and plants swapped types and misplaced limits to see each caught.
func TestAttrTypesDeclared(t *testing.T) {
	if err := checkAttrTypes(AttrSpecs()); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		edit func(*AttrSpec)
	}{
		{"lambd", func(a *AttrSpec) { a.Type = AttrNat }},
		{"axis", func(a *AttrSpec) { a.Type = AttrUint64 }},
		{"seed", func(a *AttrSpec) { a.Type = AttrNat }},
		{"shape", func(a *AttrSpec) { a.Type = AttrNats }},
		{"values", func(a *AttrSpec) { a.Type = AttrRat }},
		{"ceil_mode", func(a *AttrSpec) { a.Type = AttrBools }},
		{"mode", func(a *AttrSpec) { a.Limit.Values = nil }},
		{"size", func(a *AttrSpec) { a.Limit.Values = []string{"1"} }},
	} {
		d := AttrSpecs()
		for i := range d {
			if d[i].Name == c.name {
				c.edit(&d[i])
			}
		}
		if err := checkAttrTypes(d); err == nil {
			t.Errorf("planted fault in %s not caught", c.name)
		}
	}
}
