package tape

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlcheck/tlcheck/spec"
)

// NodeList prints the recorded graph as the chapter does:
// #[(some "x", #[]), (some "mul", #[0, 0]), ...].
func (t *Tape[T]) NodeList() string {
	var b strings.Builder
	b.WriteString("#[")
	for i, n := range t.nodes {
		if i > 0 {
			b.WriteString(", ")
		}
		if n.Name == "" {
			b.WriteString("(none, #[")
		} else {
			fmt.Fprintf(&b, "(some %s, #[", strconv.Quote(n.Name))
		}
		for j, p := range n.Parents {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(strconv.Itoa(p))
		}
		b.WriteString("])")
	}
	b.WriteString("]")
	return b.String()
}

// GradsView prints one line per node: its id, name, parents and either
// its cotangent or "unreached".
func (t *Tape[T]) GradsView(g *Grads[T]) string {
	var b strings.Builder
	for id, n := range t.nodes {
		fmt.Fprintf(&b, "%d %s %v: ", id, n.Name, n.Parents)
		if v, ok := g.Get(id); ok {
			b.WriteString(v.String())
		} else {
			b.WriteString("unreached")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// TraceView prints the traversal order of a sweep: the ids whose backward
// ran, with their names.
func (t *Tape[T]) TraceView(g *Grads[T]) string {
	parts := make([]string, len(g.Order))
	for i, id := range g.Order {
		parts[i] = fmt.Sprintf("%d:%s", id, t.nodes[id].Name)
	}
	return strings.Join(parts, " -> ")
}

// FormatFixed prints a tensor's elements with six decimals, like C's %f.
func FormatFixed[T spec.Scalar[T]](v spec.Tensor[T]) string {
	return spec.Format(v, func(x T) string { return strconv.FormatFloat(x.Float64(), 'f', 6, 64) })
}
