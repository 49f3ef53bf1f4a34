package harness

import (
	"fmt"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// elementwise reports whether every node of g is an elementwise registry
// primitive (one with a scalar rule) whose arguments all have the
// output's shape: then one element of every input is a case of its own.
func elementwise(c Case) bool {
	reg := spec.Default[spec.Rat]()
	for _, n := range c.Graph.Nodes {
		p, err := reg.Lookup(n.Op)
		if err != nil || (p.Unary == nil && p.Binary == nil) {
			return false
		}
	}
	for _, x := range c.Xs {
		if !x.Shape.Equal(c.Cot.Shape) {
			return false
		}
	}
	return true
}

// element is case c restricted to element k of every input, the
// cotangent and the tangents, as shape-[1] tensors.
func element(c Case, k int) Case {
	pick := func(t spec.Tensor[spec.Rat]) spec.Tensor[spec.Rat] {
		return spec.Tensor[spec.Rat]{Shape: spec.Shape{1}, Data: []spec.Rat{t.Data[k]}}
	}
	d := Case{Name: fmt.Sprintf("%s[%d]", c.Name, k), DAG: c.DAG, Graph: c.Graph, Cot: pick(c.Cot), Tie: c.Tie, random: c.random}
	for _, x := range c.Xs {
		d.Xs = append(d.Xs, pick(x))
	}
	for _, t := range c.Tangents {
		d.Tangents = append(d.Tangents, pick(t))
	}
	if c.Kinks != nil {
		d.Kinks = []*[2]spec.Rat{c.Kinks[k]}
	}
	if c.Singular != nil {
		d.Singular = []bool{c.Singular[k]}
	}
	return d
}

// Shrink returns the smallest counterexample for a failing row of case
// c: for an elementwise case the first single element on which the
// obligation still fails (the row of that one-element case), else the
// row with the case's whole inputs. It reruns the engine.
func Shrink(e Engine, c Case, r Row) Row {
	if !r.Finding() {
		return r
	}
	if c.random {
		return shrinkRandom(e, c, r)
	}
	whole := r
	whole.Detail += "; inputs: " + Inputs(c)
	if !elementwise(c) || r.Obligation == OblMachines {
		return whole
	}
	for k := range c.Cot.Data {
		d := element(c, k)
		for _, s := range runCase(e, d) {
			if s.Obligation == r.Obligation && s.Machine == r.Machine && s.Finding() {
				s.Case = c.Name
				s.Detail = fmt.Sprintf("smallest: element %d: %s; %s", k, Inputs(d), s.Detail)
				return s
			}
		}
	}
	return whole
}

// Inputs prints a case's exact inputs, cotangent and tangents, the data a
// replay needs.
func Inputs(c Case) string {
	var b strings.Builder
	for i, x := range c.Xs {
		fmt.Fprintf(&b, "x%d=%s ", i, tensorString(x))
	}
	fmt.Fprintf(&b, "cot=%s", tensorString(c.Cot))
	return b.String()
}

func tensorString(t spec.Tensor[spec.Rat]) string {
	parts := make([]string, len(t.Data))
	for i, v := range t.Data {
		parts[i] = v.String()
	}
	return fmt.Sprintf("%v[%s]", []int(t.Shape), strings.Join(parts, " "))
}
