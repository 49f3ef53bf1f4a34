package obligations

import (
	"fmt"
	"math"
	"strings"

	"github.com/tlcheck/tlcheck/counterexample"
	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/rewrite"
	"github.com/tlcheck/tlcheck/spec"
)

// RewriteAgreement: the optimising path (package rewrite: CSE, the
// algebraic rewrites, dead-node elimination) computes what the
// unoptimised graph computes, node by node.
//
// The verdicts. For every node i of the unoptimised graph G that the
// optimised graph H keeps (rewrite.Result.Map), G's value at i and H's at
// Map[i] are compared
//
//   - over Rat with == when G has exact rational semantics and every
//     rewrite that fired is exact (a difference proves the transform
//     wrong);
//   - over F64 and Binary32 bit for bit (any NaN equal to any NaN) when
//     every rewrite that fired is declared bit-identical (a difference
//     proves the transform or its declaration wrong);
//   - always over spec.Interval: every rewrite is an identity of real
//     functions, so both enclosures contain the same real value and
//     disjoint enclosures prove the transform wrong.
//
// A case holds when no comparison found a difference and at least one
// decided it: the Rat or the bits comparison ran, or every interval
// compared was bounded (then each node of H is within the sum of the two
// widths of G's value). Otherwise it is inconclusive.
const RewriteAgreement Obligation = "rewrite"

// CheckRewrite decides RewriteAgreement for the optimiser opt on the IR
// graph g with payload p at the exact input x. decided is false for an
// inconclusive case.
func CheckRewrite(opt rewrite.Optimizer, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat]) (decided bool, err error) {
	res, err := opt.Optimize(g, p)
	if err != nil {
		return false, err
	}
	var rules []string
	for _, a := range res.Applied {
		rules = append(rules, fmt.Sprintf("%s@%d", a.Rule.Name, a.Node))
	}
	fail := func(scalar string, node, elem int, lhs, rhs string) error {
		f := &counterexample.Failure{Law: string(RewriteAgreement), Sides: "unoptimised vs optimised graph", Scalar: scalar,
			Node: node, Op: string(g.Nodes[node].Kind.Op), Element: elem, LHS: lhs, RHS: rhs,
			Detail: fmt.Sprintf("rewrites fired: %s", strings.Join(rules, " ")), Inputs: []spec.Tensor[spec.Rat]{x}}
		if b, err := irsem.EncodeGraph(g); err == nil {
			f.Extra = "graph: " + string(b)
		}
		return f
	}
	if err := res.Graph.Check(); err != nil {
		return true, fmt.Errorf("optimised graph is malformed: %w", err)
	}
	if err := irsem.CheckPayload(res.Graph, res.Payload); err != nil {
		return true, fmt.Errorf("optimised payload is malformed: %w", err)
	}
	decided = false
	// Over Rat.
	if gv, err := irsem.DenoteAll(g, p, x); err == nil && res.Exact() {
		hv, err := irsem.DenoteAll(res.Graph, res.Payload, x)
		if err != nil {
			return true, fmt.Errorf("optimised graph over Rat: %w", err)
		}
		if f := compareMapped(res, gv, hv, sameRat, fail, "rat"); f != nil {
			return true, f
		}
		decided = true
	}
	// Bit for bit.
	if res.Bits() {
		d, err := bitsMapped[spec.F64](res, g, p, x, fail, "f64")
		if err != nil {
			return true, err
		}
		d2, err := bitsMapped[spec.Binary32](res, g, p, x, fail, "binary32")
		if err != nil {
			return true, err
		}
		decided = decided || d || d2
	}
	// Enclosures.
	xi := spec.Convert(x, irsem.FromRat[spec.Interval])
	gv, gerr := irsem.DenoteAll(g, p, xi)
	hv, herr := irsem.DenoteAll(res.Graph, res.Payload, xi)
	if gerr != nil || herr != nil {
		return decided, nil // an interval rule declined: no verdict from here
	}
	bounded := true
	for i, j := range res.Map {
		if j < 0 {
			continue
		}
		a, b := gv[i], hv[j]
		if !a.Shape.Equal(b.Shape) {
			return true, fail("interval", i, -1, fmt.Sprintf("shape %v", a.Shape), fmt.Sprintf("shape %v", b.Shape))
		}
		for k := range a.Data {
			u, v := a.Data[k], b.Data[k]
			if u.Hi < v.Lo || v.Hi < u.Lo {
				return true, fail("interval", i, k, fmt.Sprintf("[%g, %g]", u.Lo, u.Hi), fmt.Sprintf("[%g, %g] (disjoint)", v.Lo, v.Hi))
			}
			if math.IsInf(u.Lo, 0) || math.IsInf(u.Hi, 0) || math.IsInf(v.Lo, 0) || math.IsInf(v.Hi, 0) {
				bounded = false
			}
		}
	}
	return decided || bounded, nil
}

func compareMapped[T spec.Scalar[T]](res *rewrite.Result, gv, hv []spec.Tensor[T], same func(a, b T) bool,
	fail func(scalar string, node, elem int, lhs, rhs string) error, scalar string) error {
	for i, j := range res.Map {
		if j < 0 {
			continue
		}
		a, b := gv[i], hv[j]
		if !a.Shape.Equal(b.Shape) || len(a.Data) != len(b.Data) {
			return fail(scalar, i, -1, fmt.Sprintf("shape %v", a.Shape), fmt.Sprintf("shape %v", b.Shape))
		}
		for k := range a.Data {
			if !same(a.Data[k], b.Data[k]) {
				return fail(scalar, i, k, a.Data[k].String(), b.Data[k].String())
			}
		}
	}
	return nil
}

func bitsMapped[T spec.Scalar[T]](res *rewrite.Result, g *irsem.Graph, p *irsem.Payload, x spec.Tensor[spec.Rat],
	fail func(scalar string, node, elem int, lhs, rhs string) error, scalar string) (bool, error) {
	xt := spec.Convert(x, irsem.FromRat[T])
	gv, err := irsem.DenoteAll(g, p, xt)
	if err != nil {
		return false, nil // the unoptimised graph has no value here
	}
	hv, err := irsem.DenoteAll(res.Graph, res.Payload, xt)
	if err != nil {
		return true, fmt.Errorf("optimised graph over %s: %w", scalar, err)
	}
	return true, compareMapped(res, gv, hv, diffrun.SameBits[T], fail, scalar)
}

// checkRewriteCase draws a graph from either stream (exact or not),
// plants rewrite opportunities and decides RewriteAgreement for the
// default optimiser, keeping dead nodes (every node compared) and
// dropping them (the output compared).
func checkRewriteCase(src casegen.Source) (bool, error) {
	return checkRewriteCaseWith(src, rewrite.Optimizer{})
}

func checkRewriteCaseWith(src casegen.Source, opt rewrite.Optimizer) (bool, error) {
	var gc *casegen.GraphCase
	var err error
	exact := src.Intn(2, "rewrite.exact") == 0
	wide := src.Intn(2, "rewrite.wide") == 1
	switch {
	case wide && exact:
		gc, err = casegen.GenWideGraph(src, wideExact)
	case wide:
		gc, err = casegen.GenWideGraph(src, wideFloat)
	case exact:
		gc, err = casegen.GenGraph(src, globalExact)
	default:
		gc, err = casegen.GenGraph(src, globalFloat)
	}
	if err != nil {
		return false, fmt.Errorf("generator: %w", err)
	}
	g, p, _ := casegen.PlantRedundancy(src, gc.Graph, gc.Payload, exact)
	if err := g.Check(); err != nil {
		return false, fmt.Errorf("planted graph is malformed: %w", err)
	}
	d1, err := CheckRewrite(opt, g, p, gc.Input)
	if err != nil {
		return true, err
	}
	opt.DropDead = true
	d2, err := CheckRewrite(opt, g, p, gc.Input)
	return d1 || d2, err
}
