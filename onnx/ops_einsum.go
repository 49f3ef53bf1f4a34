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
// repeated within one term (a diagonal) is refused.
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
	type operand struct {
		id     int
		shape  spec.Shape
		labels []rune
	}
	ops := make([]operand, len(terms))
	ell := 0 // the ellipsis rank: the most leading axes any term's ellipsis stands for
	var dt DataType
	for i, t := range terms {
		v, id, err := c.float(i)
		if err != nil {
			return err
		}
		dt = v.dt
		named := len([]rune(strings.ReplaceAll(t, "...", "")))
		if strings.Contains(t, "...") {
			ell = max(ell, len(v.shape)-named)
		}
		ops[i] = operand{id: id, shape: v.shape.Clone()}
	}
	// Ellipsis axes are the letters '0', '1', … (no letter of a term),
	// aligned from the right.
	ellLabels := func(n int) []rune {
		out := make([]rune, n)
		for i := range out {
			out[i] = rune('0' + ell - n + i)
		}
		return out
	}
	parse := func(t string, rank int, what string) ([]rune, error) {
		var out []rune
		pre, post, has := strings.Cut(t, "...")
		named := len([]rune(pre)) + len([]rune(post))
		if has {
			if rank-named < 0 {
				return nil, fmt.Errorf("%s %q names more axes than rank %d", what, t, rank)
			}
			out = append(append(append(out, []rune(pre)...), ellLabels(rank-named)...), []rune(post)...)
		} else {
			out = []rune(t)
		}
		if len(out) != rank {
			return nil, fmt.Errorf("%s %q has %d letters for rank %d", what, t, len(out), rank)
		}
		seen := map[rune]bool{}
		for _, r := range out {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' && has) {
				return nil, fmt.Errorf("%s %q: %q is not a letter", what, t, r)
			}
			if seen[r] {
				return nil, fmt.Errorf("%s %q repeats %q (a diagonal), which is not supported", what, t, r)
			}
			seen[r] = true
		}
		return out, nil
	}
	extent := map[rune]int{}
	count := map[rune]int{}
	for i, t := range terms {
		ls, err := parse(t, len(ops[i].shape), fmt.Sprintf("term %d", i))
		if err != nil {
			return c.errf(attrField("equation"), "%v", err)
		}
		ops[i].labels = ls
		for k, r := range ls {
			count[r]++
			e := ops[i].shape[k]
			if old, ok := extent[r]; ok && old != e && old != 1 && e != 1 {
				return c.errf(attrField("equation"), "letter %q has extents %d and %d", r, old, e)
			}
			extent[r] = max(extent[r], e)
		}
	}
	var out []rune
	if explicit {
		pre, post, has := strings.Cut(rhs, "...")
		out = []rune(pre)
		if has {
			out = append(out, ellLabels(ell)...)
		}
		out = append(out, []rune(post)...)
		seen := map[rune]bool{}
		for _, r := range out {
			if seen[r] {
				return c.errf(attrField("equation"), "output letter %q repeated", r)
			}
			seen[r] = true
		}
		for _, r := range out {
			if count[r] == 0 {
				return c.errf(attrField("equation"), "output letter %q is in no input term", r)
			}
		}
	} else {
		out = ellLabels(ell)
		var once []rune
		for r, n := range count {
			if n == 1 && !(r >= '0' && r <= '9') {
				once = append(once, r)
			}
		}
		sort.Slice(once, func(i, j int) bool { return once[i] < once[j] })
		out = append(out, once...)
	}
	// Broadcast extent-1 axes to the letter's extent.
	for i := range ops {
		to := ops[i].shape.Clone()
		for k, r := range ops[i].labels {
			to[k] = extent[r]
		}
		ops[i].id = c.b.broadcast(ops[i].id, ops[i].shape, to)
		ops[i].shape = to
	}
	needed := func(r rune, from int) bool { // used by the output or an operand from index from on
		for _, o := range out {
			if o == r {
				return true
			}
		}
		for j := from; j < len(ops); j++ {
			for _, l := range ops[j].labels {
				if l == r {
					return true
				}
			}
		}
		return false
	}
	has := func(ls []rune, r rune) bool {
		for _, l := range ls {
			if l == r {
				return true
			}
		}
		return false
	}
	// sumOut reduces the letters of o that keep(r) rejects.
	sumOut := func(o operand, keep func(rune) bool) operand {
		for k := len(o.labels) - 1; k >= 0; k-- {
			if keep(o.labels[k]) {
				continue
			}
			ns := append(o.shape[:k:k].Clone(), o.shape[k+1:]...)
			o.id = c.b.emit(irsem.Kind{Op: irsem.OpReduceSum, Axis: k}, ns, o.id)
			o.shape = ns
			o.labels = append(o.labels[:k:k], o.labels[k+1:]...)
		}
		return o
	}
	// arrange permutes o to the letter order ls and reshapes it to the
	// products of the groups.
	arrange := func(o operand, groups ...[]rune) (int, spec.Shape) {
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
		id, ps := c.b.permute(o.id, o.shape, perm)
		flat := spec.Shape{}
		for _, g := range groups {
			p := 1
			for _, r := range g {
				p *= extent[r]
			}
			flat = append(flat, p)
		}
		return c.b.reshape(id, ps, flat), flat
	}
	acc := sumOut(ops[0], func(r rune) bool { return needed(r, 1) })
	for j := 1; j < len(ops); j++ {
		b := sumOut(ops[j], func(r rune) bool { return has(acc.labels, r) || needed(r, j+1) })
		acc = sumOut(acc, func(r rune) bool { return has(b.labels, r) || needed(r, j+1) })
		var batch, rows, cols, ks []rune
		for _, r := range acc.labels {
			switch {
			case has(b.labels, r) && needed(r, j+1):
				batch = append(batch, r)
			case has(b.labels, r):
				ks = append(ks, r)
			default:
				rows = append(rows, r)
			}
		}
		for _, r := range b.labels {
			if !has(acc.labels, r) {
				cols = append(cols, r)
			}
		}
		ai, as := arrange(acc, batch, rows, ks)
		bi, bs := arrange(b, batch, ks, cols)
		ms := spec.Shape{as[0], as[1], bs[2]}
		m := c.b.binary(irsem.OpMatmul, ai, bi, ms)
		var ls []rune
		var rs spec.Shape
		for _, g := range [][]rune{batch, rows, cols} {
			for _, r := range g {
				ls = append(ls, r)
				rs = append(rs, extent[r])
			}
		}
		acc = operand{id: c.b.reshape(m, ms, rs), shape: rs, labels: ls}
	}
	acc = sumOut(acc, func(r rune) bool { return has(out, r) })
	perm := make([]int, len(out))
	for i, r := range out {
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
