package spec

import (
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
		{Name: "shrink2", IR: &IRForm{Tag: "shrink2", Attrs: []string{"eps"}}}, // declared, but not an IR attribute
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
