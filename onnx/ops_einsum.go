package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// importEinsum: Einsum [12] by decomposition. The equation's terms are
// letters (an ellipsis stands for the leading axes the term's letters do
// not name, aligned from the right across operands); the output is the
// "->" term, or, without one, the letters occurring once in alphabetical
// order after the ellipsis axes. The operands are folded left to right:
// each step first sums (reduce_sum) the letters of an operand that neither
// the other operand, the output nor a later operand uses, then contracts
// the pair by one batched matmul — the shared letters still needed later
// are the batch, the shared ones not needed are the contraction, the
// others the rows and columns:
//
//	A[batch…, rows…, k…] · B[batch…, k…, cols…]  as  [P, M, K] · [P, K, N]
//
// — and the result is permuted to the output's letter order. Every step is
// a sum of products of the operands' elements, so the value is the
// operator's Σ over the summed letters, exactly. An extent-1 axis of a
// letter whose other occurrences are longer is broadcast first. A letter
// repeated within one term takes the diagonal first (einsum.diagonal).
func importEinsum(c *nctx) error {
	if err := c.oneOutput(1, -1); err != nil {
		return err
	}
	eq, err := c.attrString("equation", "")
	if err != nil {
		return err
	}
	eq = strings.ReplaceAll(eq, " ", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	terms := strings.Split(lhs, ",")
	if len(terms) != len(c.n.Inputs) {
		return c.errf(attrField("equation"), "%d terms for %d inputs", len(terms), len(c.n.Inputs))
	}
	e := &einsum{c: c, ops: make([]einsumOperand, len(terms)), extent: map[rune]int{}}
	var dt DataType
	for i, t := range terms {
		v, id, err := c.float(i)
		if err != nil {
			return err
		}
		dt = v.dt
		named := len([]rune(strings.ReplaceAll(t, "...", "")))
		if strings.Contains(t, "...") {
			e.ell = max(e.ell, len(v.shape)-named)
		}
		e.ops[i] = einsumOperand{id: id, shape: v.shape.Clone()}
	}
	count, err := e.label(terms)
	if err != nil {
		return c.errf(attrField("equation"), "%v", err)
	}
	if explicit {
		err = e.explicitOutput(rhs, count)
	} else {
		e.implicitOutput(count)
	}
	if err != nil {
		return c.errf(attrField("equation"), "%v", err)
	}
	e.broadcast()
	acc := e.sumOut(e.ops[0], func(r rune) bool { return e.needed(r, 1) })
	for j := 1; j < len(e.ops); j++ {
		acc = e.contract(acc, j)
	}
	acc = e.sumOut(acc, func(r rune) bool { return hasRune(e.out, r) })
	perm := make([]int, len(e.out))
	for i, r := range e.out {
		for k, l := range acc.labels {
			if l == r {
				perm[i] = k
			}
		}
	}
	id, s := c.b.permute(acc.id, acc.shape, perm)
	c.out(0, id, s, dt)
	return nil
}

// An einsumOperand is a value of the fold: its IR id, shape and one
// letter per axis.
type einsumOperand struct {
	id     int
	shape  spec.Shape
	labels []rune
}

// An einsum is the state of importEinsum's decomposition.
type einsum struct {
	c      *nctx
	ops    []einsumOperand
	ell    int // the ellipsis rank: the most leading axes any term's ellipsis stands for
	extent map[rune]int
	out    []rune // the output's letters
}

// ellLabels returns the letters of the last n ellipsis axes. Ellipsis
// axes are the letters '0', '1', … (no letter of a term), aligned from
// the right.
func (e *einsum) ellLabels(n int) []rune {
	out := make([]rune, n)
	for i := range out {
		out[i] = rune('0' + e.ell - n + i)
	}
	return out
}

// parse returns the letters of term t of an operand of rank rank, its
// ellipsis expanded; what names the term in errors.
func (e *einsum) parse(t string, rank int, what string) ([]rune, error) {
	var out []rune
	pre, post, has := strings.Cut(t, "...")
	named := len([]rune(pre)) + len([]rune(post))
	if has {
		if rank-named < 0 {
			return nil, fmt.Errorf("%s %q names more axes than rank %d", what, t, rank)
		}
		out = append(append(append(out, []rune(pre)...), e.ellLabels(rank-named)...), []rune(post)...)
	} else {
		out = []rune(t)
	}
	if len(out) != rank {
		return nil, fmt.Errorf("%s %q has %d letters for rank %d", what, t, len(out), rank)
	}
	for _, r := range out {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && has) {
			return nil, fmt.Errorf("%s %q: %q is not a letter", what, t, r)
		}
	}
	return out, nil
}

// label sets each operand's letters from its term and each letter's
// extent (the longest; extents must agree or be 1), and returns how many
// times the terms name each letter (a repeat within a term counted).
func (e *einsum) label(terms []string) (map[rune]int, error) {
	count := map[rune]int{}
	for i, t := range terms {
		ls, err := e.parse(t, len(e.ops[i].shape), fmt.Sprintf("term %d", i))
		if err != nil {
			return nil, err
		}
		for _, r := range ls { // occurrences: a letter repeated in one term is not implicitly output
			count[r]++
		}
		if ls, err = e.diagonal(i, ls); err != nil {
			return nil, fmt.Errorf("term %d %q: %v", i, t, err)
		}
		e.ops[i].labels = ls
		for k, r := range ls {
			x := e.ops[i].shape[k]
			if old, ok := e.extent[r]; ok && old != x && old != 1 && x != 1 {
				return nil, fmt.Errorf("letter %q has extents %d and %d", r, old, x)
			}
			e.extent[r] = max(e.extent[r], x)
		}
	}
	return count, nil
}

// explicitOutput sets the output's letters from the "->" term rhs: no
// letter repeated, each in some input term.
func (e *einsum) explicitOutput(rhs string, count map[rune]int) error {
	pre, post, has := strings.Cut(rhs, "...")
	e.out = []rune(pre)
	if has {
		e.out = append(e.out, e.ellLabels(e.ell)...)
	}
	e.out = append(e.out, []rune(post)...)
	seen := map[rune]bool{}
	for _, r := range e.out {
		if seen[r] {
			return fmt.Errorf("output letter %q repeated", r)
		}
		seen[r] = true
	}
	for _, r := range e.out {
		if count[r] == 0 {
			return fmt.Errorf("output letter %q is in no input term", r)
		}
	}
	return nil
}

// implicitOutput sets the output's letters without a "->" term: the
// ellipsis axes, then the letters occurring once in alphabetical order.
func (e *einsum) implicitOutput(count map[rune]int) {
	e.out = e.ellLabels(e.ell)
	var once []rune
	for r, n := range count {
		if n == 1 && !(r >= '0' && r <= '9') {
			once = append(once, r)
		}
	}
	sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
	e.out = append(e.out, once...)
}

// broadcast broadcasts the operands' extent-1 axes to their letter's
// extent.
func (e *einsum) broadcast() {
	for i := range e.ops {
		to := e.ops[i].shape.Clone()
		for k, r := range e.ops[i].labels {
			to[k] = e.extent[r]
		}
		e.ops[i].id = e.c.b.broadcast(e.ops[i].id, e.ops[i].shape, to)
		e.ops[i].shape = to
	}
}

// needed reports whether letter r is used by the output or an operand
// from index from on.
func (e *einsum) needed(r rune, from int) bool {
	if hasRune(e.out, r) {
		return true
	}
	for j := from; j < len(e.ops); j++ {
		if hasRune(e.ops[j].labels, r) {
			return true
		}
	}
	return false
}

func hasRune(ls []rune, r rune) bool {
	for _, l := range ls {
		if l == r {
			return true
		}
	}
	return false
}

// sumOut reduces the letters of o that keep(r) rejects.
func (e *einsum) sumOut(o einsumOperand, keep func(rune) bool) einsumOperand {
	for k := len(o.labels) - 1; k >= 0; k-- {
		if keep(o.labels[k]) {
			continue
		}
		ns := append(o.shape[:k:k].Clone(), o.shape[k+1:]...)
		o.id = e.c.b.emit(irsem.Kind{Op: irsem.OpReduceSum, Axis: k}, ns, o.id)
		o.shape = ns
		o.labels = append(o.labels[:k:k], o.labels[k+1:]...)
	}
	return o
}

// arrange permutes o to the letter order of the groups concatenated and
// reshapes it to the products of the groups.
func (e *einsum) arrange(o einsumOperand, groups ...[]rune) (int, spec.Shape) {
	var order []rune
	for _, g := range groups {
		order = append(order, g...)
	}
	perm := make([]int, len(order))
	for i, r := range order {
		for k, l := range o.labels {
			if l == r {
				perm[i] = k
			}
		}
	}
	id, ps := e.c.b.permute(o.id, o.shape, perm)
	flat := spec.Shape{}
	for _, g := range groups {
		p := 1
		for _, r := range g {
			p *= e.extent[r]
		}
		flat = append(flat, p)
	}
	return e.c.b.reshape(id, ps, flat), flat
}

// contract folds operand j into acc: each first sums the letters nothing
// later needs, then one batched matmul contracts the pair (see
// importEinsum); the result's letters are batch, rows, cols.
func (e *einsum) contract(acc einsumOperand, j int) einsumOperand {
	b := e.sumOut(e.ops[j], func(r rune) bool { return hasRune(acc.labels, r) || e.needed(r, j+1) })
	acc = e.sumOut(acc, func(r rune) bool { return hasRune(b.labels, r) || e.needed(r, j+1) })
	var batch, rows, cols, ks []rune
	for _, r := range acc.labels {
		switch {
		case hasRune(b.labels, r) && e.needed(r, j+1):
			batch = append(batch, r)
		case hasRune(b.labels, r):
			ks = append(ks, r)
		default:
			rows = append(rows, r)
		}
	}
	for _, r := range b.labels {
		if !hasRune(acc.labels, r) {
			cols = append(cols, r)
		}
	}
	ai, as := e.arrange(acc, batch, rows, ks)
	bi, bs := e.arrange(b, batch, ks, cols)
	ms := spec.Shape{as[0], as[1], bs[2]}
	m := e.c.b.binary(irsem.OpMatmul, ai, bi, ms)
	var ls []rune
	var rs spec.Shape
	for _, g := range [][]rune{batch, rows, cols} {
		for _, r := range g {
			ls = append(ls, r)
			rs = append(rs, e.extent[r])
		}
	}
	return einsumOperand{id: e.c.b.reshape(m, ms, rs), shape: rs, labels: ls}
}

// diagonal replaces operand i, whose axes carry the letters ls, by its
// diagonal over each repeated letter: the letters once each, in order of
// first occurrence, and element [j₁, …] = x[the index with every axis of
// letter l at j_l] — a gather of those elements (no arithmetic), so
// Σ over the einsum's letters reads x only where the repeated axes agree,
// which is the operator's meaning of a repeated subscript. The repeated
// axes must have one extent. It returns the new letters.
func (e *einsum) diagonal(i int, ls []rune) ([]rune, error) {
	op := &e.ops[i]
	var uniq []rune
	at := map[rune]int{}
	for k, r := range ls {
		if _, ok := at[r]; ok {
			if op.shape[k] != op.shape[pos(ls, r)] {
				return nil, fmt.Errorf("the diagonal of %q over axes of extents %d and %d", r, op.shape[pos(ls, r)], op.shape[k])
			}
			continue
		}
		at[r] = len(uniq)
		uniq = append(uniq, r)
	}
	if len(uniq) == len(ls) {
		return ls, nil
	}
	ns := make(spec.Shape, len(uniq))
	for u, r := range uniq {
		ns[u] = op.shape[pos(ls, r)]
	}
	st := op.shape.Strides()
	idx := make([]int, ns.Size())
	j := make([]int, len(uniq))
	for f := range idx {
		rem := f
		for u := len(uniq) - 1; u >= 0; u-- {
			j[u] = rem % ns[u]
			rem /= ns[u]
		}
		for k, r := range ls {
			idx[f] += j[at[r]] * st[k]
		}
	}
	flat := spec.Shape{op.shape.Size()}
	id, _, err := e.c.b.gather(e.c.b.reshape(op.id, op.shape, flat), flat, 0, idx, ns)
	if err != nil {
		return nil, err
	}
	op.id, op.shape = id, ns
	return uniq, nil
}

// pos is the first index of r in ls.
func pos(ls []rune, r rune) int {
	for k, l := range ls {
		if l == r {
			return k
		}
	}
	return -1
}
