package lean4export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/limits"
)

// Kind is the kind of a declaration in an export.
type Kind uint8

// Declaration kinds. An inductive block record expands to one KindInduct
// per type, one KindCtor per constructor and one KindRec per recursor.
const (
	KindAxiom Kind = iota + 1
	KindDef
	KindThm
	KindOpaque
	KindQuot
	KindInduct
	KindCtor
	KindRec
)

var kindNames = [...]string{KindAxiom: "axiom", KindDef: "def", KindThm: "theorem", KindOpaque: "opaque",
	KindQuot: "quot", KindInduct: "inductive", KindCtor: "constructor", KindRec: "recursor"}

func (k Kind) String() string {
	if int(k) < len(kindNames) && kindNames[k] != "" {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// component is one component of a hierarchical name: a string or a
// natural number (kept as its decimal spelling).
type component struct {
	num bool
	s   string
}

type nameRec struct {
	pre  int
	comp component
	key  string // canonical, unambiguous encoding of the whole component list
}

type levelKind uint8

const (
	lvZero levelKind = iota
	lvSucc
	lvMax
	lvIMax
	lvParam
)

type levelRec struct {
	kind levelKind
	a, b int // children (succ: a; max/imax: a, b); param: a = name index
}

type exprKind uint8

const (
	exBVar exprKind = iota + 1
	exSort
	exConst
	exApp
	exLam
	exForall
	exLet
	exProj
	exNat
	exStr
	exMData
)

type exprRec struct {
	kind exprKind
	// children, by kind: app (fn, arg); lam/forallE (type, body);
	// letE (type, value, body); proj (struct); mdata (expr); sort: a =
	// level; const: a = name.
	a, b, c int
	us      []int  // const: universe levels
	lit     string // natVal decimal, strVal text, bvar index, proj index
}

// Decl is one declaration of an export.
type Decl struct {
	// Name is the rendered name (components joined by '.', escaped with
	// «» where a component needs it).
	Name string
	Kind Kind
	// LevelParams are the universe parameter names, rendered.
	LevelParams []string
	// Line is the 1-based line of the record that declared it.
	Line int
	// Unsafe reports isUnsafe, or safety "unsafe".
	Unsafe bool

	key     string
	typ     int
	value   int      // -1 when none (axiom, quot, inductive, ctor, rec)
	refs    []string // name keys of the constants the record names besides its expressions
	extra   []int    // further expressions (recursor rule right-hand sides)
	lpNames []string // level parameter name keys
	// quotKind is a quot declaration's kind ("type", "ctor", "lift",
	// "ind"), "" for every other declaration.
	quotKind string
}

// Meta is the export's first line.
type Meta struct {
	ExporterName    string
	ExporterVersion string
	FormatVersion   string
	LeanVersion     string
	LeanGithash     string
}

// Export is a parsed lean4export NDJSON file: every index checked, every
// declaration by name.
type Export struct {
	Meta  Meta
	names []nameRec
	lvls  []levelRec
	exprs []exprRec
	decls map[string]*Decl // by name key
	order []*Decl          // in file order

	lvlHash []Digest       // level hashes, once computed
	exHash  map[int]Digest // memoised expression hashes
	byKey   map[string]int // name key → first name index
}

// Decls returns the declarations in file order.
func (e *Export) Decls() []*Decl { return e.order }

// Lookup finds a declaration by its dotted name, each component a string
// (a component holding '.' or a numeric component cannot be addressed
// this way; such names are never certified).
func (e *Export) Lookup(dotted string) (*Decl, bool) {
	d, ok := e.decls[dottedKey(dotted)]
	return d, ok
}

// ParseError is a malformed export: the 1-based line and what is wrong.
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string {
	if e.Line == 0 {
		return "lean4export: " + e.Msg
	}
	return fmt.Sprintf("lean4export line %d: %s", e.Line, e.Msg)
}

// SupportedFormat is the format version prefix this reader accepts:
// 3.1.x, i.e. versions in [3.1.0, 3.2.0).
const SupportedFormat = "3.1"

// Parse reads an NDJSON export of format 3.1.x. It checks that the first
// line is the meta record with a supported format version; that every
// line is one JSON object of exactly one record kind with exactly that
// kind's fields; that name, level and expression indices are contiguous
// (name and level indices from 1, expression indices from 0: each record
// carries the next index); that every reference points to an index
// already defined (so the records form a DAG in file order); and that no
// name is declared twice. A line longer than limits' lean-line-bytes or a
// file of more lines than lean-lines is refused before it is buffered
// further.
func Parse(r io.Reader) (*Export, error) {
	lim := limits.Current()
	maxLine, maxLines := lim.LeanLineBytes, lim.LeanLines
	br := bufio.NewReaderSize(r, 64<<10)
	e := &Export{names: []nameRec{{key: ""}}, lvls: []levelRec{{kind: lvZero}}, decls: map[string]*Decl{}}
	p := &parser{e: e, maxHeld: lim.LeanBytes}
	var buf []byte
	for n := 1; ; n++ {
		buf = buf[:0]
		eof := false
		for {
			chunk, err := br.ReadSlice('\n')
			if len(buf)+len(chunk) > maxLine+1 {
				return nil, &ParseError{n, limits.Exceeded("lean-line-bytes", int64(maxLine), "a line of more than %d bytes", maxLine).Error()}
			}
			buf = append(buf, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return nil, &ParseError{n, "read: " + err.Error()}
			}
			break
		}
		if eof && len(buf) == 0 {
			if n == 1 {
				return nil, &ParseError{0, "empty file: no meta line"}
			}
			break
		}
		if n > maxLines {
			return nil, &ParseError{n, limits.Exceeded("lean-lines", int64(maxLines), "more than %d lines", maxLines).Error()}
		}
		if eof {
			return nil, &ParseError{n, "truncated: the last line has no terminating newline"}
		}
		line := bytes.TrimSuffix(buf, []byte{'\n'})
		p.line = n
		if err := p.hold(len(line)); err != nil {
			return nil, &ParseError{n, err.Error()}
		}
		if err := p.record(line); err != nil {
			return nil, &ParseError{n, err.Error()}
		}
		if eof {
			break
		}
	}
	return e, nil
}

type parser struct {
	e       *Export
	line    int
	sawMeta bool
	held    int64 // bytes of input lines and name keys held so far (lean-bytes)
	maxHeld int64
}

// hold charges n bytes the parse keeps (a line, a name key: a name's key
// repeats its prefix's, so a chain of names holds bytes quadratic in its
// lines) against lean-bytes.
func (p *parser) hold(n int) error {
	p.held += int64(n)
	if p.held > p.maxHeld {
		return limits.Exceeded("lean-bytes", p.maxHeld, "the export's lines and name keys hold more than %d bytes", p.maxHeld)
	}
	return nil
}

// object reads one JSON object into its members, refusing duplicate keys
// and trailing data.
func object(data []byte) (map[string]json.RawMessage, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	m := map[string]json.RawMessage{}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("malformed JSON: %v", err)
		}
		k, ok := tok.(string)
		if !ok {
			return nil, nil, errors.New("malformed JSON object key")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, fmt.Errorf("malformed JSON in %s: %v", limits.Quote(k), err)
		}
		if _, dup := m[k]; dup {
			return nil, nil, fmt.Errorf("duplicate key %s", limits.Quote(k))
		}
		m[k] = v
		keys = append(keys, k)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("malformed JSON: %v", err)
	}
	if dec.More() {
		return nil, nil, errors.New("trailing data after the JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, nil, errors.New("trailing data after the JSON object")
	}
	return m, keys, nil
}

// fields reads an object that must have exactly the given keys.
func fields(where string, data json.RawMessage, want ...string) (map[string]json.RawMessage, error) {
	m, keys, err := object(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	for _, k := range keys {
		if !contains(want, k) {
			return nil, fmt.Errorf("%s: unknown field %s", where, limits.Quote(k))
		}
	}
	for _, k := range want {
		if _, ok := m[k]; !ok {
			return nil, fmt.Errorf("%s: missing field %q", where, k)
		}
	}
	return m, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// nat reads a non-negative JSON integer that fits an int.
func nat(where string, v json.RawMessage) (int, error) {
	s := string(v)
	if s == "" || strings.TrimLeft(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%s: %s is not a natural number", where, limits.Quote(s))
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s: %s is out of range", where, limits.Quote(s))
	}
	return int(n), nil
}

func natList(where string, v json.RawMessage) ([]int, error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil || raw == nil {
		return nil, fmt.Errorf("%s: not an array of natural numbers", where)
	}
	out := make([]int, len(raw))
	for i, x := range raw {
		n, err := nat(fmt.Sprintf("%s[%d]", where, i), x)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}

func str(where string, v json.RawMessage) (string, error) {
	var s string
	if len(v) == 0 || v[0] != '"' {
		return "", fmt.Errorf("%s: not a string", where)
	}
	if err := json.Unmarshal(v, &s); err != nil {
		return "", fmt.Errorf("%s: not a string", where)
	}
	return s, nil
}

func boolean(where string, v json.RawMessage) (bool, error) {
	switch string(v) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, fmt.Errorf("%s: not a boolean", where)
}

// name, level and expr check a reference to an index already defined.
func (p *parser) name(where string, v json.RawMessage) (int, error) {
	return ref(where, v, "name", "names", len(p.e.names))
}

func (p *parser) level(where string, v json.RawMessage) (int, error) {
	return ref(where, v, "level", "levels", len(p.e.lvls))
}

func (p *parser) expr(where string, v json.RawMessage) (int, error) {
	return ref(where, v, "expression", "expressions", len(p.e.exprs))
}

// ref reads an index into a table of n entries of the kind (one, many
// spell it), refusing one not defined yet.
func ref(where string, v json.RawMessage, one, many string, n int) (int, error) {
	k, err := nat(where, v)
	if err != nil {
		return 0, err
	}
	if k >= n {
		return 0, fmt.Errorf("%s: %s %d is not defined yet (a forward or dangling reference; %d %s so far)", where, one, k, n, many)
	}
	return k, nil
}

func (p *parser) names(where string, v json.RawMessage) ([]int, error) {
	xs, err := natList(where, v)
	if err != nil {
		return nil, err
	}
	for i, x := range xs {
		if x >= len(p.e.names) {
			return nil, fmt.Errorf("%s[%d]: name %d is not defined yet (a forward or dangling reference)", where, i, x)
		}
	}
	return xs, nil
}

// recordKinds are the kind keys of each record family.
var (
	nameKinds  = []string{"str", "num"}
	levelKinds = []string{"succ", "max", "imax", "param"}
	exprKinds  = []string{"bvar", "sort", "const", "app", "lam", "forallE", "letE", "proj", "natVal", "strVal", "mdata"}
	declKinds  = []string{"axiom", "def", "thm", "opaque", "quot", "inductive"}
)

func (p *parser) record(line []byte) error {
	m, keys, err := object(line)
	if err != nil {
		return err
	}
	if !p.sawMeta {
		if len(keys) != 1 || keys[0] != "meta" {
			return errors.New("the first line must be the meta record {\"meta\":…}")
		}
		p.sawMeta = true
		return p.meta(m["meta"])
	}
	index := func(key string, kinds []string, next int) (string, int, error) {
		if len(keys) != 2 {
			return "", 0, fmt.Errorf("a %q record must have exactly two keys, %q and its kind, got %d", key, key, len(keys))
		}
		kind := keys[0]
		if kind == key {
			kind = keys[1]
		}
		if !contains(kinds, kind) {
			return "", 0, fmt.Errorf("unknown %q record kind %s", key, limits.Quote(kind))
		}
		i, err := nat(key, m[key])
		if err != nil {
			return "", 0, err
		}
		if i != next {
			return "", 0, fmt.Errorf("%s %d out of sequence: the next index is %d (indices must be contiguous)", key, i, next)
		}
		return kind, i, nil
	}
	switch {
	case has(m, "in"):
		kind, _, err := index("in", nameKinds, len(p.e.names))
		if err != nil {
			return err
		}
		return p.nameRecord(kind, m[kind])
	case has(m, "il"):
		kind, _, err := index("il", levelKinds, len(p.e.lvls))
		if err != nil {
			return err
		}
		return p.levelRecord(kind, m[kind])
	case has(m, "ie"):
		kind, _, err := index("ie", exprKinds, len(p.e.exprs))
		if err != nil {
			return err
		}
		return p.exprRecord(kind, m[kind])
	}
	if len(keys) != 1 {
		return fmt.Errorf("a record must have exactly one kind key, got %d keys", len(keys))
	}
	switch keys[0] {
	case "meta":
		return errors.New("a second meta record")
	case "axiom", "def", "thm", "opaque", "quot":
		return p.declRecord(keys[0], m[keys[0]])
	case "inductive":
		return p.inductive(m["inductive"])
	}
	return fmt.Errorf("unknown record kind %s", limits.Quote(keys[0]))
}

func has(m map[string]json.RawMessage, k string) bool { _, ok := m[k]; return ok }

func (p *parser) meta(v json.RawMessage) error {
	var mv struct {
		Exporter struct{ Name, Version string } `json:"exporter"`
		Format   struct {
			Version *string `json:"version"`
		} `json:"format"`
		Lean struct{ Githash, Version string } `json:"lean"`
	}
	if err := json.Unmarshal(v, &mv); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// Name the field and the JSON type, not the Go struct.
			field := te.Field
			if field == "" {
				field = "meta"
			}
			return fmt.Errorf("meta: field %s: a JSON %s where the format has another type", limits.Quote(field), te.Value)
		}
		return fmt.Errorf("meta: %v", err)
	}
	if mv.Format.Version == nil {
		return errors.New("meta: no format.version")
	}
	fv := *mv.Format.Version
	parts := strings.Split(fv, ".")
	if len(parts) != 3 || parts[0]+"."+parts[1] != SupportedFormat || strings.TrimLeft(parts[2], "0123456789") != "" || parts[2] == "" {
		return fmt.Errorf("meta: lean4export format version %s is not supported: this reader reads format 3.1.x only (re-export with a lean4export built for the project's toolchain)", limits.Quote(fv))
	}
	p.e.Meta = Meta{ExporterName: mv.Exporter.Name, ExporterVersion: mv.Exporter.Version, FormatVersion: fv,
		LeanVersion: mv.Lean.Version, LeanGithash: mv.Lean.Githash}
	return nil
}

func (p *parser) nameRecord(kind string, v json.RawMessage) error {
	var f map[string]json.RawMessage
	var err error
	var c component
	if kind == "str" {
		if f, err = fields("str", v, "pre", "str"); err != nil {
			return err
		}
		if c.s, err = str("str.str", f["str"]); err != nil {
			return err
		}
	} else {
		if f, err = fields("num", v, "i", "pre"); err != nil {
			return err
		}
		s := string(f["i"])
		if s == "" || strings.TrimLeft(s, "0123456789") != "" || (len(s) > 1 && s[0] == '0') {
			return fmt.Errorf("num.i: %s is not a natural number", limits.Quote(s))
		}
		c = component{num: true, s: s}
	}
	pre, err := p.name(kind+".pre", f["pre"])
	if err != nil {
		return err
	}
	key := p.e.names[pre].key + encodeComponent(c)
	if err := p.hold(len(key)); err != nil {
		return err
	}
	p.e.names = append(p.e.names, nameRec{pre: pre, comp: c, key: key})
	return nil
}

// encodeComponent is the unambiguous encoding of one component in a name
// key: 's' or 'n', the byte length, ':', the bytes.
func encodeComponent(c component) string {
	t := "s"
	if c.num {
		t = "n"
	}
	return t + strconv.Itoa(len(c.s)) + ":" + c.s
}

// dottedKey is the name key of a dotted name of string components.
func dottedKey(dotted string) string {
	var b strings.Builder
	for _, s := range strings.Split(dotted, ".") {
		b.WriteString(encodeComponent(component{s: s}))
	}
	return b.String()
}

func (p *parser) levelRecord(kind string, v json.RawMessage) error {
	var l levelRec
	var err error
	switch kind {
	case "succ":
		l.kind = lvSucc
		l.a, err = p.level("succ", v)
	case "max", "imax":
		l.kind = lvMax
		if kind == "imax" {
			l.kind = lvIMax
		}
		var xs []int
		if xs, err = natList(kind, v); err == nil && len(xs) != 2 {
			err = fmt.Errorf("%s: want 2 levels, got %d", kind, len(xs))
		}
		if err == nil {
			for _, x := range xs {
				if x >= len(p.e.lvls) {
					err = fmt.Errorf("%s: level %d is not defined yet (a forward or dangling reference)", kind, x)
				}
			}
		}
		if err == nil {
			l.a, l.b = xs[0], xs[1]
		}
	case "param":
		l.kind = lvParam
		l.a, err = p.name("param", v)
	}
	if err != nil {
		return err
	}
	p.e.lvls = append(p.e.lvls, l)
	return nil
}

var binderInfos = []string{"default", "implicit", "strictImplicit", "instImplicit"}

func (p *parser) exprRecord(kind string, v json.RawMessage) error {
	var x exprRec
	var f map[string]json.RawMessage
	var err error
	seq := func(steps ...func() error) error {
		for _, s := range steps {
			if err := s(); err != nil {
				return err
			}
		}
		return nil
	}
	ex := func(dst *int, field string) func() error {
		return func() (err error) { *dst, err = p.expr(kind+"."+field, f[field]); return }
	}
	nm := func(field string) func() error {
		return func() error { _, err := p.name(kind+"."+field, f[field]); return err }
	}
	bi := func() error {
		s, err := str(kind+".binderInfo", f["binderInfo"])
		if err == nil && !contains(binderInfos, s) {
			err = fmt.Errorf("%s.binderInfo: unknown binder info %s", kind, limits.Quote(s))
		}
		return err
	}
	switch kind {
	case "bvar":
		x.kind = exBVar
		var n int
		if n, err = nat("bvar", v); err == nil {
			x.lit = strconv.Itoa(n)
		}
	case "sort":
		x.kind = exSort
		x.a, err = p.level("sort", v)
	case "const":
		x.kind = exConst
		if f, err = fields("const", v, "name", "us"); err == nil {
			if x.a, err = p.name("const.name", f["name"]); err == nil {
				if x.us, err = natList("const.us", f["us"]); err == nil {
					for i, u := range x.us {
						if u >= len(p.e.lvls) {
							err = fmt.Errorf("const.us[%d]: level %d is not defined yet (a forward or dangling reference)", i, u)
							break
						}
					}
				}
			}
		}
	case "app":
		x.kind = exApp
		if f, err = fields("app", v, "arg", "fn"); err == nil {
			err = seq(ex(&x.a, "fn"), ex(&x.b, "arg"))
		}
	case "lam", "forallE":
		x.kind = exLam
		if kind == "forallE" {
			x.kind = exForall
		}
		if f, err = fields(kind, v, "binderInfo", "body", "name", "type"); err == nil {
			err = seq(ex(&x.a, "type"), ex(&x.b, "body"), nm("name"), bi)
		}
	case "letE":
		x.kind = exLet
		if f, err = fields("letE", v, "body", "name", "nondep", "type", "value"); err == nil {
			err = seq(ex(&x.a, "type"), ex(&x.b, "value"), ex(&x.c, "body"), nm("name"),
				func() error { _, err := boolean("letE.nondep", f["nondep"]); return err })
		}
	case "proj":
		x.kind = exProj
		if f, err = fields("proj", v, "idx", "struct", "typeName"); err == nil {
			var i int
			err = seq(ex(&x.b, "struct"), func() (err error) { x.a, err = p.name("proj.typeName", f["typeName"]); return },
				func() (err error) { i, err = nat("proj.idx", f["idx"]); return })
			x.lit = strconv.Itoa(i)
		}
	case "natVal":
		x.kind = exNat
		if x.lit, err = str("natVal", v); err == nil {
			if x.lit == "" || strings.TrimLeft(x.lit, "0123456789") != "" || (len(x.lit) > 1 && x.lit[0] == '0') {
				err = fmt.Errorf("natVal: %s is not a natural number", limits.Quote(x.lit))
			}
		}
	case "strVal":
		x.kind = exStr
		x.lit, err = str("strVal", v)
	case "mdata":
		x.kind = exMData
		if f, err = fields("mdata", v, "data", "expr"); err == nil {
			err = ex(&x.a, "expr")()
		}
	}
	if err != nil {
		return err
	}
	p.e.exprs = append(p.e.exprs, x)
	return nil
}

// addDecl registers a declaration under its name.
func (p *parser) addDecl(d *Decl, nameIdx int, lps []int) error {
	d.key = p.e.names[nameIdx].key
	d.Name = p.render(nameIdx)
	d.Line = p.line
	if nameIdx == 0 {
		return fmt.Errorf("%s declared with the anonymous name", d.Kind)
	}
	for _, l := range lps {
		d.LevelParams = append(d.LevelParams, p.render(l))
		d.lpNames = append(d.lpNames, p.e.names[l].key)
	}
	if old, dup := p.e.decls[d.key]; dup {
		return fmt.Errorf("%s %s declared twice (first on line %d)", d.Kind, Escape(d.Name), old.Line)
	}
	p.e.decls[d.key] = d
	p.e.order = append(p.e.order, d)
	return nil
}

func (p *parser) keys(xs []int) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = p.e.names[x].key
	}
	return out
}

func (p *parser) declRecord(kind string, v json.RawMessage) error {
	var want []string
	d := &Decl{value: -1}
	switch kind {
	case "axiom":
		d.Kind, want = KindAxiom, []string{"isUnsafe", "levelParams", "name", "type"}
	case "def":
		d.Kind, want = KindDef, []string{"all", "hints", "levelParams", "name", "safety", "type", "value"}
	case "thm":
		d.Kind, want = KindThm, []string{"all", "levelParams", "name", "type", "value"}
	case "opaque":
		d.Kind, want = KindOpaque, []string{"all", "isUnsafe", "levelParams", "name", "type", "value"}
	case "quot":
		d.Kind, want = KindQuot, []string{"kind", "levelParams", "name", "type"}
	}
	f, err := fields(kind, v, want...)
	if err != nil {
		return err
	}
	n, err := p.name(kind+".name", f["name"])
	if err != nil {
		return err
	}
	lps, err := p.names(kind+".levelParams", f["levelParams"])
	if err != nil {
		return err
	}
	if d.typ, err = p.expr(kind+".type", f["type"]); err != nil {
		return err
	}
	if _, ok := f["value"]; ok {
		if d.value, err = p.expr(kind+".value", f["value"]); err != nil {
			return err
		}
	}
	if _, ok := f["all"]; ok {
		all, err := p.names(kind+".all", f["all"])
		if err != nil {
			return err
		}
		d.refs = p.keys(all)
	}
	if _, ok := f["isUnsafe"]; ok {
		if d.Unsafe, err = boolean(kind+".isUnsafe", f["isUnsafe"]); err != nil {
			return err
		}
	}
	if _, ok := f["safety"]; ok {
		s, err := str("def.safety", f["safety"])
		if err != nil {
			return err
		}
		if !contains([]string{"safe", "unsafe", "partial"}, s) {
			return fmt.Errorf("def.safety: unknown safety %s", limits.Quote(s))
		}
		d.Unsafe = s == "unsafe"
	}
	if _, ok := f["kind"]; ok {
		s, err := str("quot.kind", f["kind"])
		if err != nil {
			return err
		}
		if !contains([]string{"type", "ctor", "lift", "ind"}, s) {
			return fmt.Errorf("quot.kind: unknown quotient kind %s", limits.Quote(s))
		}
		d.quotKind = s
	}
	if h, ok := f["hints"]; ok {
		if err := hints(h); err != nil {
			return err
		}
	}
	return p.addDecl(d, n, lps)
}

func hints(v json.RawMessage) error {
	if s, err := str("def.hints", v); err == nil {
		if s != "opaque" && s != "abbrev" {
			return fmt.Errorf("def.hints: unknown hint %s", limits.Quote(s))
		}
		return nil
	}
	f, err := fields("def.hints", v, "regular")
	if err != nil {
		return err
	}
	_, err = nat("def.hints.regular", f["regular"])
	return err
}

// inductive reads an inductive block record: its types, then its
// constructors, then its recursors, each a declaration of its own.
func (p *parser) inductive(v json.RawMessage) error {
	f, err := fields("inductive", v, "ctors", "recs", "types")
	if err != nil {
		return err
	}
	parts := []struct {
		field string
		read  func(where string, x json.RawMessage) error
		xs    []json.RawMessage
	}{{"types", p.inductType, nil}, {"ctors", p.inductCtor, nil}, {"recs", p.inductRec, nil}}
	for k := range parts {
		if err := json.Unmarshal(f[parts[k].field], &parts[k].xs); err != nil || parts[k].xs == nil {
			return fmt.Errorf("inductive.%s: not an array", parts[k].field)
		}
	}
	if len(parts[0].xs) == 0 {
		return errors.New("inductive: a block without types")
	}
	for _, part := range parts {
		for i, x := range part.xs {
			if err := part.read(fmt.Sprintf("inductive.%s[%d]", part.field, i), x); err != nil {
				return err
			}
		}
	}
	return nil
}

// inductHeader reads the fields every declaration of an inductive block
// has — name, levelParams, type, isUnsafe — into d, and returns the name
// and the level parameters.
func (p *parser) inductHeader(where string, g map[string]json.RawMessage, d *Decl) (int, []int, error) {
	n, err := p.name(where+".name", g["name"])
	if err != nil {
		return 0, nil, err
	}
	lps, err := p.names(where+".levelParams", g["levelParams"])
	if err != nil {
		return 0, nil, err
	}
	if d.typ, err = p.expr(where+".type", g["type"]); err != nil {
		return 0, nil, err
	}
	if d.Unsafe, err = boolean(where+".isUnsafe", g["isUnsafe"]); err != nil {
		return 0, nil, err
	}
	return n, lps, nil
}

// natFields checks that the fields ks of g are natural numbers.
func natFields(where string, g map[string]json.RawMessage, ks ...string) error {
	for _, k := range ks {
		if _, err := nat(where+"."+k, g[k]); err != nil {
			return err
		}
	}
	return nil
}

// boolFields checks that the fields ks of g are booleans.
func boolFields(where string, g map[string]json.RawMessage, ks ...string) error {
	for _, k := range ks {
		if _, err := boolean(where+"."+k, g[k]); err != nil {
			return err
		}
	}
	return nil
}

// inductType reads one type of an inductive block.
func (p *parser) inductType(where string, t json.RawMessage) error {
	g, err := fields(where, t, "all", "ctors", "isRec", "isReflexive", "isUnsafe", "levelParams", "name", "numIndices", "numNested", "numParams", "type")
	if err != nil {
		return err
	}
	d := &Decl{Kind: KindInduct, value: -1}
	n, lps, err := p.inductHeader(where, g, d)
	if err != nil {
		return err
	}
	all, err := p.names(where+".all", g["all"])
	if err != nil {
		return err
	}
	cs, err := p.names(where+".ctors", g["ctors"])
	if err != nil {
		return err
	}
	if err := natFields(where, g, "numIndices", "numNested", "numParams"); err != nil {
		return err
	}
	if err := boolFields(where, g, "isRec", "isReflexive"); err != nil {
		return err
	}
	d.refs = append(p.keys(all), p.keys(cs)...)
	return p.addDecl(d, n, lps)
}

// inductCtor reads one constructor of an inductive block.
func (p *parser) inductCtor(where string, c json.RawMessage) error {
	g, err := fields(where, c, "cidx", "induct", "isUnsafe", "levelParams", "name", "numFields", "numParams", "type")
	if err != nil {
		return err
	}
	d := &Decl{Kind: KindCtor, value: -1}
	n, lps, err := p.inductHeader(where, g, d)
	if err != nil {
		return err
	}
	ind, err := p.name(where+".induct", g["induct"])
	if err != nil {
		return err
	}
	if err := natFields(where, g, "cidx", "numFields", "numParams"); err != nil {
		return err
	}
	d.refs = []string{p.e.names[ind].key}
	return p.addDecl(d, n, lps)
}

// inductRec reads one recursor of an inductive block, with its rules.
func (p *parser) inductRec(where string, r json.RawMessage) error {
	g, err := fields(where, r, "all", "isUnsafe", "k", "levelParams", "name", "numIndices", "numMinors", "numMotives", "numParams", "rules", "type")
	if err != nil {
		return err
	}
	d := &Decl{Kind: KindRec, value: -1}
	n, lps, err := p.inductHeader(where, g, d)
	if err != nil {
		return err
	}
	all, err := p.names(where+".all", g["all"])
	if err != nil {
		return err
	}
	if err := natFields(where, g, "numIndices", "numMinors", "numMotives", "numParams"); err != nil {
		return err
	}
	if err := boolFields(where, g, "k"); err != nil {
		return err
	}
	d.refs = p.keys(all)
	var rules []json.RawMessage
	if err := json.Unmarshal(g["rules"], &rules); err != nil || rules == nil {
		return fmt.Errorf("%s.rules: not an array", where)
	}
	for j, rr := range rules {
		if err := p.recRule(fmt.Sprintf("%s.rules[%d]", where, j), rr, d); err != nil {
			return err
		}
	}
	return p.addDecl(d, n, lps)
}

// recRule reads one rule of a recursor d: the constructor it is for
// (a reference of d) and its right-hand side.
func (p *parser) recRule(where string, rr json.RawMessage, d *Decl) error {
	h, err := fields(where, rr, "ctor", "nfields", "rhs")
	if err != nil {
		return err
	}
	c, err := p.name(where+".ctor", h["ctor"])
	if err != nil {
		return err
	}
	if _, err := nat(where+".nfields", h["nfields"]); err != nil {
		return err
	}
	rhs, err := p.expr(where+".rhs", h["rhs"])
	if err != nil {
		return err
	}
	d.refs = append(d.refs, p.e.names[c].key)
	d.extra = append(d.extra, rhs)
	return nil
}

// render prints a name as Lean does: components joined by '.', a string
// component that is not a plain identifier wrapped in «», a numeric one
// as its digits.
func (p *parser) render(i int) string { return p.e.render(i) }

func (e *Export) render(i int) string {
	if i == 0 {
		return "[anonymous]"
	}
	var comps []string
	for ; i != 0; i = e.names[i].pre {
		c := e.names[i].comp
		s := c.s
		if !c.num && !plainIdent(s) {
			s = "«" + s + "»"
		}
		comps = append(comps, s)
	}
	for l, r := 0, len(comps)-1; l < r; l, r = l+1, r-1 {
		comps[l], comps[r] = comps[r], comps[l]
	}
	return strings.Join(comps, ".")
}

// plainIdent reports whether s prints without «»: a letter or '_' first,
// then letters, digits, '_', '\”, '!', '?' (non-ASCII letters count as
// letters, as Lean's isLetterLike approximates); and no control
// characters, '.', '«' or '»'.
func plainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case r > 127 && r != '«' && r != '»' && r != 0x2028 && r != 0x2029 && r >= 0xa0:
		case i > 0 && (r >= '0' && r <= '9' || r == '\'' || r == '!' || r == '?'):
		default:
			return false
		}
	}
	return true
}
