package irsem

import (
	"fmt"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// This file is the IR's attribute codec, derived from the registry's one
// declaration of attributes (spec.AttrSpecs): every attribute an IR tag
// lists is read, written, compared, copied and handed to its primitive by
// its declared type and limit, through the Kind field that holds it. No
// attribute has a case of its own here; a new attribute declared in
// spec.AttrSpecs (and held by a Kind field) is read and written with no
// edit to this package's code.
//
// The Kind field of an attribute is the spec.Attrs field the declaration
// names (AttrSpec.Field: "Axis", or "Window.Kernel" for a field of the
// window geometry, which Kind holds in Kind.Window), or, for an attribute
// only the IR spells (Field ""), its name in Go's mixed caps
// ("value_shape" is Kind.ValueShape). A declared type fixes the field's
// Go type and its JSON spelling:
//
//	natural   int         a JSON natural in [0, Limit.Max]
//	uint64    uint64      a JSON natural below 2^64
//	naturals  []int       an array of at most Limit.Len naturals in [0, Limit.Max]
//	shape     spec.Shape  an array of at most spec.MaxRank extents below 2^31
//	rational  spec.Rat    a JSON string in the payload's rational grammar ("1/2", "-3")
//	string    string      a JSON string, one of Limit.Values
//	boolean   bool        true or false
//	booleans  *HardMask   {"shape":[…],"allowed":[true,…]}: a mask and its shape
//
// Kind itself is generated from the declaration (kind_gen.go): a new IR
// attribute is a row of spec.AttrSpecs, its spec.Attrs field, and go
// generate.

//go:generate go test -run ^TestKindGenerated$ -update-kind

// attrSlot is one declared IR attribute and where a Kind holds it.
type attrSlot struct {
	spec.AttrSpec
	// index is the field's index in Kind, or in spec.Window when window.
	index  int
	window bool
	// registry is the index of the spec.Attrs field that the primitive
	// reads it from, or -1 when only the IR spells it (its tag maps it:
	// primAttrs).
	registry int
}

// attrSlots lists the declared IR attributes in declaration order, and
// slotByName indexes them, built on first use (so that a test binary
// whose Kind is behind the declaration still starts: go generate runs
// one to regenerate kind_gen.go).
var attrSlots = sync.OnceValues(func() ([]attrSlot, map[string]*attrSlot) {
	return mustSlots(spec.AttrSpecs())
})

// slotByName returns the slot of the declared IR attribute called name,
// or nil.
func slotByName(name string) *attrSlot {
	_, by := attrSlots()
	return by[name]
}

// mustSlots is slotsFor of the build's declaration: a declared IR
// attribute that no Kind field holds, or one whose field has another Go
// type, is a defect of the build (TestKindHoldsEveryIRAttr names it; go
// generate mends it), not of an input.
func mustSlots(decl []spec.AttrSpec) ([]attrSlot, map[string]*attrSlot) {
	out, err := slotsFor(decl)
	if err != nil {
		panic(err)
	}
	by := map[string]*attrSlot{}
	for i := range out {
		by[out[i].Name] = &out[i]
	}
	return out, by
}

// slotsFor finds the Kind field of every IR attribute of decl, in order,
// and checks that its Go type is its declared type's.
func slotsFor(decl []spec.AttrSpec) ([]attrSlot, error) {
	kt, wt, at := reflect.TypeFor[Kind](), reflect.TypeFor[spec.Window](), reflect.TypeFor[spec.Attrs]()
	var out []attrSlot
	for _, a := range decl {
		if !a.IR {
			continue
		}
		s := attrSlot{AttrSpec: a, registry: -1}
		holder, name := kt, goName(a.Name)
		if w, ok := strings.CutPrefix(a.Field, "Window."); ok {
			holder, name, s.window = wt, w, true
		} else if a.Field != "" {
			name = a.Field
			f, ok := at.FieldByName(a.Field)
			if !ok {
				return nil, fmt.Errorf("irsem: attribute %q is held by spec.Attrs.%s, which does not exist", a.Name, a.Field)
			}
			s.registry = f.Index[0]
		}
		f, ok := holder.FieldByName(name)
		if !ok {
			return nil, fmt.Errorf("irsem: declared IR attribute %q has no field %s.%s", a.Name, holder.Name(), name)
		}
		if want := goType(a.Type); want == nil || f.Type != want {
			return nil, fmt.Errorf("irsem: attribute %q is declared %s, but %s.%s is a %v", a.Name, a.Type, holder.Name(), name, f.Type)
		}
		if a.Type == spec.AttrString && len(a.Limit.Values) == 0 {
			return nil, fmt.Errorf("irsem: string attribute %q declares no values", a.Name)
		}
		s.index = f.Index[0]
		out = append(out, s)
	}
	return out, nil
}

// goName spells an attribute name in Go's mixed caps: value_shape is
// ValueShape, axis1 is Axis1.
func goName(name string) string {
	var b strings.Builder
	for _, w := range strings.Split(name, "_") {
		if w != "" {
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// goType is the Go type of a Kind field holding an attribute of type t,
// or nil for a type the IR does not spell.
func goType(t spec.AttrType) reflect.Type {
	switch t {
	case spec.AttrNat:
		return reflect.TypeFor[int]()
	case spec.AttrUint64:
		return reflect.TypeFor[uint64]()
	case spec.AttrNats:
		return reflect.TypeFor[[]int]()
	case spec.AttrShape:
		return reflect.TypeFor[spec.Shape]()
	case spec.AttrRat:
		return reflect.TypeFor[spec.Rat]()
	case spec.AttrString:
		return reflect.TypeFor[string]()
	case spec.AttrBool:
		return reflect.TypeFor[bool]()
	case spec.AttrBools:
		return reflect.TypeFor[*HardMask]()
	}
	return nil
}

// field returns the slot's field of k, or an invalid Value when the slot
// is a window field and k has no window. With alloc, a missing window is
// made first.
func (s *attrSlot) field(k *Kind, alloc bool) reflect.Value {
	if !s.window {
		return reflect.ValueOf(k).Elem().Field(s.index)
	}
	if k.Window == nil {
		if !alloc {
			return reflect.Value{}
		}
		k.Window = &spec.Window{}
	}
	return reflect.ValueOf(k.Window).Elem().Field(s.index)
}

// maxInt is the largest integer the slot accepts.
func (s *attrSlot) maxInt() int {
	if s.Limit.Max > 0 {
		return s.Limit.Max
	}
	return MaxAttrInt
}

// decode reads the slot's value from raw into k.
func (s *attrSlot) decode(k *Kind, raw []byte, budget *ratBudget) error {
	var v any
	var err error
	switch s.Type {
	case spec.AttrNat:
		v, err = decodeInt(raw, s.maxInt())
	case spec.AttrUint64:
		v, err = decodeUint(raw, ^uint64(0))
	case spec.AttrNats:
		v, err = s.decodeNats(raw)
	case spec.AttrShape:
		v, err = decodeShape(raw)
	case spec.AttrRat:
		v, err = decodeAttrRational(raw, budget)
	case spec.AttrString:
		v, err = s.decodeString(raw)
	case spec.AttrBool:
		v, err = decodeBool(raw)
	case spec.AttrBools:
		v, err = decodeMask(raw)
	}
	if err != nil {
		return err
	}
	s.field(k, true).Set(reflect.ValueOf(v))
	return nil
}

// decodeNats reads a list of naturals within the slot's limits.
func (s *attrSlot) decodeNats(raw []byte) ([]int, error) {
	switch s.Limit.Len {
	case 0:
		return decodeInts(raw, s.maxInt(), spec.MaxRank)
	case spec.LenElements:
		lim := min(limits.Current().GraphElements, MaxTotalElements)
		xs, err := decodeInts(raw, s.maxInt(), int(lim))
		if isTooMany(err) {
			err = limits.Exceeded("graph-elements", lim, "more than %d %s", lim, s.Name)
		}
		return xs, err
	}
	return decodeInts(raw, s.maxInt(), s.Limit.Len)
}

// decodeString reads a string that is one of the slot's values.
func (s *attrSlot) decodeString(raw []byte) (string, error) {
	v, err := decodeString(raw)
	if err != nil || contains(s.Limit.Values, v) {
		return v, err
	}
	q := make([]string, len(s.Limit.Values))
	for i, x := range s.Limit.Values {
		q[i] = strconv.Quote(x)
	}
	want := q[len(q)-1]
	if len(q) > 1 {
		want = strings.Join(q[:len(q)-1], ", ") + " or " + want
	}
	return "", fmt.Errorf("expected %s, got %s", want, limits.Quote(v))
}

// appendValue writes the slot's value in k (a window field of a kind
// without a window as its zero value).
func (s *attrSlot) appendValue(b []byte, k *Kind) []byte {
	f := s.field(k, false)
	if !f.IsValid() {
		f = reflect.New(goType(s.Type)).Elem()
	}
	switch v := f.Interface().(type) {
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case []int:
		return appendInts(b, v)
	case spec.Shape:
		return appendInts(b, v)
	case spec.Rat:
		return strconv.AppendQuote(b, v.String())
	case string:
		return strconv.AppendQuote(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case *HardMask:
		return appendMask(b, v)
	}
	return b
}

// appendMask writes {"shape":[…],"allowed":[…]}.
func appendMask(b []byte, m *HardMask) []byte {
	if m == nil {
		m = &HardMask{}
	}
	b = append(b, `{"shape":`...)
	b = appendInts(b, m.Shape)
	b = append(b, `,"allowed":[`...)
	for j, v := range m.Allowed {
		if j > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendBool(b, v)
	}
	return append(b, "]}"...)
}

// set reports whether k sets the slot: a nonzero number or rational, a
// nonempty list, true, a mask. Zero is what a tag that does not read the
// attribute holds.
func (s *attrSlot) set(k *Kind) bool {
	f := s.field(k, false)
	if !f.IsValid() {
		return false
	}
	switch v := f.Interface().(type) {
	case spec.Rat:
		return !v.IsZero()
	case []int:
		return len(v) > 0
	case spec.Shape:
		return len(v) > 0
	}
	return !f.IsZero()
}

// equal compares the slot in two kinds: a nil list equals an empty one,
// rationals by value, masks by shape and entries.
func (s *attrSlot) equal(k, o *Kind) bool {
	f, g := s.field(k, false), s.field(o, false)
	if !f.IsValid() || !g.IsValid() {
		return f.IsValid() == g.IsValid()
	}
	switch v := f.Interface().(type) {
	case spec.Rat:
		return v.Same(g.Interface().(spec.Rat))
	case []int:
		return intsEqual(v, g.Interface().([]int))
	case spec.Shape:
		return intsEqual(v, g.Interface().(spec.Shape))
	case *HardMask:
		w := g.Interface().(*HardMask)
		if v == nil || w == nil {
			return v == w
		}
		return intsEqual(v.Shape, w.Shape) && reflect.DeepEqual(append([]bool{}, v.Allowed...), append([]bool{}, w.Allowed...))
	}
	return f.Equal(g)
}

// cloneValue deep-copies the slot's field of c (a copy of k sharing its
// lists) so that it shares nothing with k; a nil list stays nil.
func (s *attrSlot) cloneValue(c *Kind) {
	f := s.field(c, false)
	if !f.IsValid() {
		return
	}
	switch v := f.Interface().(type) {
	case []int:
		f.Set(reflect.ValueOf(cloneInts(v)))
	case spec.Shape:
		f.Set(reflect.ValueOf(cloneShape(v)))
	case *HardMask:
		if v != nil {
			f.Set(reflect.ValueOf(&HardMask{Shape: cloneShape(v.Shape), Allowed: append([]bool{}, v.Allowed...)}))
		}
	}
}

// toRegistry copies the slot's value in k to the spec.Attrs field its
// primitive reads: a list as a fresh non-nil list (a tag that lists the
// attribute has given it, possibly empty), a rational as a *big.Rat, a
// mask as its entries.
func (s *attrSlot) toRegistry(k *Kind, a *spec.Attrs) {
	d := reflect.ValueOf(a).Elem().Field(s.registry)
	switch v := s.field(k, false).Interface().(type) {
	case []int:
		d.Set(reflect.ValueOf(append([]int{}, v...)))
	case spec.Shape:
		d.Set(reflect.ValueOf(shapeOrScalar(v).Clone()))
	case spec.Rat:
		d.Set(reflect.ValueOf(v.Big()))
	case *HardMask:
		if v != nil {
			d.Set(reflect.ValueOf(append([]bool(nil), v.Allowed...)))
		}
	default:
		d.Set(reflect.ValueOf(v))
	}
}

// fromRegistry sets the slot's value in k from the spec.Attrs field its
// primitive reads (a nil rational reads as 0). A mask is left alone: its
// shape is the node's, which the attributes do not carry.
func (s *attrSlot) fromRegistry(k *Kind, a *spec.Attrs) {
	src := reflect.ValueOf(a).Elem().Field(s.registry)
	f := s.field(k, false)
	switch v := src.Interface().(type) {
	case []int:
		f.Set(reflect.ValueOf(cloneInts(v)))
	case spec.Shape:
		f.Set(reflect.ValueOf(cloneShape(v)))
	case *big.Rat:
		r := spec.Rat{}
		if v != nil {
			r = spec.RatFromBig(v)
		}
		f.Set(reflect.ValueOf(r))
	case []bool:
	default:
		f.Set(src)
	}
}

// registrySlots lists the attributes that tag o lists and its primitive
// reads from a spec.Attrs field of the same name (not a window field).
func registrySlots(o *TagInfo) []*attrSlot {
	var out []*attrSlot
	for _, name := range o.Attrs {
		if s := slotByName(name); s != nil && s.registry >= 0 {
			out = append(out, s)
		}
	}
	return out
}

// registryAttrs copies the attributes that tag o lists and its primitive
// reads under the same name from k into a.
func registryAttrs(k *Kind, o *TagInfo, a *spec.Attrs) {
	for _, s := range registrySlots(o) {
		s.toRegistry(k, a)
	}
}

// SetRegistryAttrs sets the attributes of k that its tag lists and its
// primitive reads under the same name (scale's c, pad's widths, mode and
// value, gather's indices, the axis of the reductions, …) from the
// registry attributes a: the inverse of the mapping DenoteAll applies,
// for emitters that build IR graphs from registry applications. Nil
// rationals read as 0; the attributes only the IR spells (transpose's
// axis1, reshape's shapes, the window fields, a mask's shape) are left
// alone.
func (k *Kind) SetRegistryAttrs(a *spec.Attrs) {
	o, ok := lookup(k.Op)
	if !ok || a == nil {
		return
	}
	for _, s := range registrySlots(o) {
		s.fromRegistry(k, a)
	}
}
