package certificates

import (
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestAttrsDeclared holds the certificate encoding to the registry's
// declaration: every member of a certificate's attrs object is a field of
// spec.Attrs that spec.AttrSpecs declares, under its declared name, in
// its declared order, and nothing else is encoded.
func TestAttrsDeclared(t *testing.T) {
	decl := attrFields()
	rt := reflect.TypeFor[Attrs]()
	if rt.NumField() != len(decl) {
		t.Fatalf("certificates.Attrs has %d fields, spec.AttrSpecs declares %d held by spec.Attrs", rt.NumField(), len(decl))
	}
	for i, at := range decl {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Name != at.Field || name != at.Name {
			t.Errorf("field %d: certificates.Attrs.%s encoded as %q; the declaration is %s as %q", i, f.Name, name, at.Field, at.Name)
		}
		if _, ok := spec.LookupAttr(name); !ok {
			t.Errorf("certificate attribute %q is not declared in the registry", name)
		}
	}
}

// TestAttrsRoundTrip encodes attributes that set every declared field and
// decodes them back unchanged.
func TestAttrsRoundTrip(t *testing.T) {
	q := func(a, b int64) *big.Rat { return big.NewRat(a, b) }
	a := &spec.Attrs{Axis: 1, Axis2: 2, Shape: spec.Shape{2, 3}, Perm: []int{1, 0}, Start: 1, End: 3,
		C: q(1, 2), Lo: q(-1, 1), Hi: q(3, 1), Eps: q(1, 100000), P: q(1, 4), Seed: 7, Values: []*big.Rat{q(1, 3), q(0, 1)},
		Window: &spec.Window{Kernel: []int{2}, Stride: []int{1}, Pads: []int{0, 1}, Dilation: []int{1}, OutputPadding: []int{0}, Groups: 1, CeilMode: true, CountIncludePad: true},
		Widths: []int{1, 1}, Mode: "reflect", Value: q(5, 7), Indices: []int{0, 2}, IndicesShape: spec.Shape{2}, Size: 3,
		Alpha: q(1, 10), Beta: q(3, 4), Bias: q(2, 1), Lambd: q(1, 2), Mask: []bool{true, false}}
	v := reflect.ValueOf(a).Elem()
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("the test leaves spec.Attrs.%s unset", v.Type().Field(i).Name)
		}
	}
	got, err := EncodeAttrs(a).Decode("f", "attrs")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Errorf("round trip\n got %+v\nwant %+v", got, a)
	}
	// gather over scalar indices: indices_shape [] is omitted and read back.
	s := &spec.Attrs{Indices: []int{1}, IndicesShape: spec.Shape{}}
	if got, err := EncodeAttrs(s).Decode("f", "attrs"); err != nil || got.IndicesShape == nil {
		t.Errorf("scalar indices: got %+v, %v", got, err)
	}
}
