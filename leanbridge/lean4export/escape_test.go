package lean4export

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Tlcheck.add_adjoint", "Tlcheck.add_adjoint"},
		{"α.«x.y»", "α.«x.y»"},
		{"a\nb", `a\nb`},
		{"a\r\tb", `a\r\tb`},
		{"\x1b[2J\x1b[32maccepted", `\x1b[2J\x1b[32maccepted`},
		{"nul\x00", `nul\x00`},
		{"del\x7f", `del\x7f`},
		{"csi\u009b", `csi\u009b`},
		{"rlo\u202eTXT", `rlo\u202eTXT`},
		{"isolate\u2066x\u2069", `isolate\u2066x\u2069`},
		{"lrm\u200e rlm\u200f alm\u061c", `lrm\u200e rlm\u200f alm\u061c`},
		{"zw\u200b bom\ufeff", `zw\u200b bom\ufeff`},
		{"ls\u2028ps\u2029", `ls\u2028ps\u2029`},
		{"nbsp\u00a0", `nbsp\u00a0`},
		{"pua\U000F0000", `pua\U000f0000`},
		{"bad\xff\xfe", `bad\xff\xfe`},
		{`back\slash`, `back\\slash`},
		{`\x1b`, `\\x1b`}, // the literal text differs from the byte
	} {
		got := Escape(tc.in)
		if got != tc.want {
			t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, r := range got {
			if !unicode.IsPrint(r) || unicode.Is(unicode.Cf, r) {
				t.Errorf("Escape(%q) keeps %U", tc.in, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("Escape(%q) is not UTF-8", tc.in)
		}
	}
	// Injective on a sample: distinct inputs, distinct outputs.
	seen := map[string]string{}
	for _, s := range []string{"\x1b", `\x1b`, "\\\x1b", "\n", `\n`, "\u202e", `\u202e`, "\xff", `\xff`} {
		e := Escape(s)
		if o, dup := seen[e]; dup {
			t.Errorf("Escape(%q) = Escape(%q) = %q", s, o, e)
		}
		seen[e] = s
	}
}

// TestAuditEscapesNames: a theorem, an axiom and a path named with control
// characters appear in the problems only escaped, and a declaration that
// is not a theorem is named with the right article.
func TestAuditEscapesNames(t *testing.T) {
	evil := "X\n\x1b[32mT  none  0000  accepted\u202e"
	f := newFx()
	js, _ := json.Marshal(evil)
	f.names[evil] = len(f.names)
	f.add(fmt.Sprintf(`{"in":%d,"str":{"pre":0,"str":%s}}`, f.names[evil], js))
	prop := f.sort(0)
	f.axiom(evil, prop)
	f.thm("T", prop, f.konst(evil))
	got := Audit(parse(t, f.String()), []string{"T", evil}, nil)
	for _, fd := range got {
		for _, p := range fd.Problems {
			if strings.ContainsAny(p, "\n\x1b\u202e") {
				t.Errorf("problem %q holds a raw control character", p)
			}
		}
	}
	if p := strings.Join(got[0].Problems, ";"); !strings.Contains(p, `uses axiom «X\n\x1b[32mT  none  0000  accepted\u202e», which is not on the allow-list`) {
		t.Errorf("problems %q", p)
	}
	for _, tc := range []struct {
		decl func(f *fx, prop int)
		want string
	}{
		{func(f *fx, prop int) { f.axiom("T", prop) }, "T is an axiom, not a theorem"},
		{func(f *fx, prop int) { f.opaque("T", prop, prop) }, "T is an opaque, not a theorem"},
		{func(f *fx, prop int) { f.def("T", prop, prop) }, "T is a def, not a theorem"},
	} {
		f := newFx()
		tc.decl(f, f.sort(0))
		if p := strings.Join(Audit(parse(t, f.String()), []string{"T"}, nil)[0].Problems, ";"); p != tc.want {
			t.Errorf("problems %q, want %q", p, tc.want)
		}
	}
	if got := kindPhrase(KindInduct, ""); got != "an inductive" {
		t.Errorf("kindPhrase(inductive) = %q", got)
	}
}

func TestPrintable(t *testing.T) {
	for _, tc := range []struct {
		s    string
		want bool
	}{{"plain α «x»", true}, {`already \x1b escaped`, true}, {"raw \x1b", false}, {"nl\n", false}, {"rlo\u202e", false}, {"bad\xff", false}} {
		if got := Printable(tc.s); got != tc.want {
			t.Errorf("Printable(%q) = %v", tc.s, got)
		}
		if Printable(Escape(tc.s)) != true {
			t.Errorf("Escape(%q) is not printable", tc.s)
		}
	}
}
