package lean4export

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"sort"
)

// Digest is a SHA-256 digest.
type Digest [32]byte

// Hex is the lowercase hexadecimal spelling of d.
func (d Digest) Hex() string { return hex.EncodeToString(d[:]) }

// enc is a length-prefixed, tagged encoding buffer.
type enc struct{ b []byte }

func (w *enc) tag(t byte) { w.b = append(w.b, t) }
func (w *enc) str(s string) {
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}
func (w *enc) num(n int)    { w.b = binary.AppendUvarint(w.b, uint64(n)) }
func (w *enc) dig(d Digest) { w.b = append(w.b, d[:]...) }
func (w *enc) sum() Digest  { return sha256.Sum256(w.b) }
func (w *enc) reset()       { w.b = w.b[:0] }

// levelHashes hashes every level: zero "z", succ "s" H, max "m" H H,
// imax "i" H H, param "p" name-key. Children have smaller indices.
func (e *Export) levelHashes() []Digest {
	if e.lvlHash != nil {
		return e.lvlHash
	}
	hs := make([]Digest, len(e.lvls))
	var w enc
	for i, l := range e.lvls {
		w.reset()
		switch l.kind {
		case lvZero:
			w.tag('z')
		case lvSucc:
			w.tag('s')
			w.dig(hs[l.a])
		case lvMax, lvIMax:
			w.tag("mi"[l.kind-lvMax])
			w.dig(hs[l.a])
			w.dig(hs[l.b])
		case lvParam:
			w.tag('p')
			w.str(e.names[l.a].key)
		}
		hs[i] = w.sum()
	}
	e.lvlHash = hs
	return hs
}

// exprHash is the structural hash of expression i, memoised in e:
//
//	bvar i          "B" i
//	sort l          "S" H(l)
//	const n us      "C" key(n) len(us) H(u)…
//	app f a         "A" H(f) H(a)
//	lam t b         "L" H(t) H(b)
//	forallE t b     "P" H(t) H(b)
//	letE t v b      "Z" H(t) H(v) H(b)
//	proj S i x      "J" key(S) i H(x)
//	natVal n        "N" decimal
//	strVal s        "T" bytes
//	mdata d x       H(x)
//
// Binder names, binder infos and letE's nondep flag are left out (they do
// not change the term up to Lean's Expr.eqv), and so are all indices: two
// exports that number the same term differently hash it the same. The
// walk is iterative, so a deep term cannot exhaust the stack.
func (e *Export) exprHash(root int) Digest {
	if e.exHash == nil {
		e.exHash = map[int]Digest{}
	}
	if d, ok := e.exHash[root]; ok {
		return d
	}
	lh := e.levelHashes()
	type frame struct {
		i    int
		done bool
	}
	stack := []frame{{root, false}}
	var w enc
	for len(stack) > 0 {
		f := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if _, ok := e.exHash[f.i]; ok {
			continue
		}
		x := &e.exprs[f.i]
		kids := x.children()
		if !f.done {
			stack = append(stack, frame{f.i, true})
			for _, k := range kids {
				if _, ok := e.exHash[k]; !ok {
					stack = append(stack, frame{k, false})
				}
			}
			continue
		}
		w.reset()
		switch x.kind {
		case exBVar:
			w.tag('B')
			w.str(x.lit)
		case exSort:
			w.tag('S')
			w.dig(lh[x.a])
		case exConst:
			w.tag('C')
			w.str(e.names[x.a].key)
			w.num(len(x.us))
			for _, u := range x.us {
				w.dig(lh[u])
			}
		case exApp:
			w.tag('A')
		case exLam:
			w.tag('L')
		case exForall:
			w.tag('P')
		case exLet:
			w.tag('Z')
		case exProj:
			w.tag('J')
			w.str(e.names[x.a].key)
			w.str(x.lit)
		case exNat:
			w.tag('N')
			w.str(x.lit)
		case exStr:
			w.tag('T')
			w.str(x.lit)
		case exMData:
			e.exHash[f.i] = e.exHash[x.a]
			continue
		}
		for _, k := range kids {
			w.dig(e.exHash[k])
		}
		e.exHash[f.i] = w.sum()
	}
	return e.exHash[root]
}

// children lists the sub-expressions of x in hashing order.
func (x *exprRec) children() []int {
	switch x.kind {
	case exApp, exLam, exForall:
		return []int{x.a, x.b}
	case exLet:
		return []int{x.a, x.b, x.c}
	case exProj:
		return []int{x.b}
	case exMData:
		return []int{x.a}
	}
	return nil
}

// StatementHash is the stable hash of a declaration's statement:
//
//	SHA-256("lean-stmt-v1" · len(levelParams) · key(p)… · H(type))
//
// with H the structural expression hash (exprHash): independent of the
// export's index numbering, of binder names and binder infos, and of the
// proof. Constants in the statement are identified by name only; DeepHash
// also covers what they mean.
func (e *Export) StatementHash(d *Decl) Digest {
	var w enc
	w.str("lean-stmt-v1")
	w.num(len(d.lpNames))
	for _, p := range d.lpNames {
		w.str(p)
	}
	w.dig(e.exprHash(d.typ))
	return w.sum()
}

// declHash is a declaration's canonical form: its kind, name, level
// parameters, type and — for a def or opaque — its value, the names it
// refers to (an inductive's block and constructors, a constructor's
// inductive, a recursor's block and rules) and a recursor's rule
// right-hand sides. A theorem's proof is left out (proof irrelevance).
func (e *Export) declHash(d *Decl) Digest {
	var w enc
	w.str("lean-decl-v1")
	w.tag(byte(d.Kind))
	w.str(d.key)
	w.num(len(d.lpNames))
	for _, p := range d.lpNames {
		w.str(p)
	}
	w.dig(e.exprHash(d.typ))
	if d.value >= 0 && (d.Kind == KindDef || d.Kind == KindOpaque) {
		w.dig(e.exprHash(d.value))
	}
	w.num(len(d.refs))
	for _, r := range d.refs {
		w.str(r)
	}
	w.num(len(d.extra))
	for _, x := range d.extra {
		w.dig(e.exprHash(x))
	}
	return w.sum()
}

// DeepHash covers a statement together with the meaning of every
// constant it mentions:
//
//	SHA-256("lean-deep-v1" · StatementHash(d) · (key(c) · declHash(c))…)
//
// over the constants c reachable from d's type — through the types of
// everything reached, the values of defs and opaques, inductive blocks,
// constructors and recursor rules, but not theorem proofs — in key order.
// A statement whose wording is unchanged but one of whose definitions
// (a checker, say) was weakened changes its deep hash. A constant the
// export lacks is reported in missing and left out of the hash.
func (e *Export) DeepHash(d *Decl) (Digest, []string) {
	seen := map[string]*Decl{}
	var missing []string
	seenExpr := make([]bool, len(e.exprs))
	work := []*Decl{}
	visit := func(root int, from *Decl) {
		e.walkConsts(root, seenExpr, func(key string) {
			if _, ok := seen[key]; ok {
				return
			}
			c, ok := e.decls[key]
			if !ok {
				seen[key] = nil
				missing = append(missing, e.renderKey(key))
				return
			}
			seen[key] = c
			work = append(work, c)
		})
	}
	push := func(key string) {
		if _, ok := seen[key]; ok {
			return
		}
		c, ok := e.decls[key]
		if !ok {
			seen[key] = nil
			missing = append(missing, e.renderKey(key))
			return
		}
		seen[key] = c
		work = append(work, c)
	}
	visit(d.typ, d)
	for len(work) > 0 {
		c := work[len(work)-1]
		work = work[:len(work)-1]
		visit(c.typ, c)
		if c.value >= 0 && (c.Kind == KindDef || c.Kind == KindOpaque) {
			visit(c.value, c)
		}
		for _, r := range c.refs {
			push(r)
		}
		for _, x := range c.extra {
			visit(x, c)
		}
	}
	keys := make([]string, 0, len(seen))
	for k, c := range seen {
		if c != nil {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var w enc
	w.str("lean-deep-v1")
	w.dig(e.StatementHash(d))
	w.num(len(keys))
	for _, k := range keys {
		w.str(k)
		w.dig(e.declHash(seen[k]))
	}
	sort.Strings(missing)
	return w.sum(), missing
}

// walkConsts calls f on the name key of every constant in expression
// root's DAG not yet marked in seen (iteratively).
func (e *Export) walkConsts(root int, seen []bool, f func(key string)) {
	stack := []int{root}
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[i] {
			continue
		}
		seen[i] = true
		x := &e.exprs[i]
		if x.kind == exConst {
			f(e.names[x.a].key)
		}
		for _, k := range x.children() {
			if !seen[k] {
				stack = append(stack, k)
			}
		}
	}
}

// renderKey renders a name key (for messages).
func (e *Export) renderKey(key string) string {
	if i, ok := e.keyIndex()[key]; ok {
		return e.render(i)
	}
	return key
}

func (e *Export) keyIndex() map[string]int {
	if e.byKey == nil {
		e.byKey = make(map[string]int, len(e.names))
		for i := len(e.names) - 1; i >= 1; i-- {
			e.byKey[e.names[i].key] = i
		}
	}
	return e.byKey
}
