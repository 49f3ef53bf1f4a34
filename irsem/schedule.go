package irsem

import (
	"github.com/tlcheck/tlcheck/internal/par"
	"github.com/tlcheck/tlcheck/limits"
	"github.com/tlcheck/tlcheck/spec"
)

// levels groups the nodes other than the input by depth (the input is at
// depth 0; a node is one deeper than its deepest parent), each level in id
// order. The nodes of one level read only values of earlier levels, so they
// are independent. wide reports whether some level holds two or more nodes.
func levels(g *Graph) (lv [][]int, depth []int, wide bool) {
	depth = make([]int, len(g.Nodes))
	for i := range g.Nodes {
		d := 0
		for _, q := range g.Nodes[i].Parents {
			d = max(d, depth[q]+1)
		}
		if g.Nodes[i].Kind.Op != OpInput {
			d = max(d, 1)
		}
		depth[i] = d
		for len(lv) <= d {
			lv = append(lv, nil)
		}
		lv[d] = append(lv[d], i)
		wide = wide || (d > 0 && len(lv[d]) > 1)
	}
	return lv, depth, wide
}

// denoteLevels is denote's evaluation with independent branches on both
// cores: level by level (lv and depth from levels, computed once by the
// caller), the nodes of a level on par's pool. Each
// node's value is the same function of its parents' values as in the
// sequential loop (the registry's rules are functions of their operands),
// so every value is identical whatever the schedule and GOMAXPROCS. ok is
// false — the values discarded — when some node failed, or the values
// computed exceed the rat-bits-total budget: the caller then runs the
// sequential loop, which reports the error that id order meets first, as
// before. With free, a value is dropped after the level of its last reader.
func denoteLevels[T spec.Scalar[T]](g *Graph, p *Payload, input spec.Tensor[T], reg *spec.Registry[T], free bool, lv [][]int, depth []int) (vals []spec.Tensor[T], ok bool) {
	vals = make([]spec.Tensor[T], len(g.Nodes))
	// lastLv[q]: the deepest level that reads q (−1: none).
	lastLv := make([]int, len(g.Nodes))
	for i := range lastLv {
		lastLv[i] = -1
	}
	for i := range g.Nodes {
		for _, q := range g.Nodes[i].Parents {
			lastLv[q] = max(lastLv[q], depth[i])
		}
	}
	budget, bits := limits.Current().RatBitsTotal, int64(0)
	for d, ids := range lv {
		if d == 0 {
			for _, i := range ids {
				if g.Nodes[i].Kind.Op == OpInput {
					vals[i] = input
				}
			}
			continue
		}
		res, err := par.MapErr(len(ids), par.Workers(), func(k int) (spec.Tensor[T], error) {
			return evalNode(g, p, reg, vals, ids[k])
		}, nil)
		if err != nil {
			return nil, false
		}
		for k, i := range ids {
			if bits += spec.RatBitsOf(res[k]); bits > budget {
				return nil, false
			}
			vals[i] = res[k]
		}
		if free {
			for _, i := range ids {
				for _, q := range g.Nodes[i].Parents {
					if lastLv[q] == d && q != g.OutputID {
						vals[q] = spec.Tensor[T]{}
					}
				}
			}
		}
	}
	return vals, true
}

// evalNode computes node i from the values of its parents in vals, with
// the checks of the sequential loop (denote).
func evalNode[T spec.Scalar[T]](g *Graph, p *Payload, reg *spec.Registry[T], vals []spec.Tensor[T], i int) (spec.Tensor[T], error) {
	n := &g.Nodes[i]
	st, err := buildStep(reg, g, n, p.Entry(i), modeDenote)
	if err != nil {
		return spec.Tensor[T]{}, err
	}
	xs := make([]spec.Tensor[T], 0, len(n.Parents))
	for _, q := range n.Parents {
		xs = append(xs, vals[q])
	}
	v, err := st(xs)
	if err != nil {
		return spec.Tensor[T]{}, wrapNode(i, n.Kind.Op, "", err)
	}
	if err := checkResult(n, v); err != nil {
		return spec.Tensor[T]{}, err
	}
	return v, nil
}
