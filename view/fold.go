package view

import (
	"fmt"
	"strconv"
)

// FoldAuto is the node count above which Fold with minRun 0 folds chains.
const FoldAuto = 200

// autoRun is the shortest run folded when folding is automatic.
const autoRun = 3

// ParseFold reads a --fold value as Fold's minRun: "auto" is 0, "off"
// is -1, and N ≥ 1 is N; ok is false for anything else.
func ParseFold(s string) (minRun int, ok bool) {
	switch s {
	case "auto":
		return 0, true
	case "off":
		return -1, true
	}
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 1
}

// Fold replaces every maximal run of at least minRun chain nodes by one
// box and returns how many nodes were folded. A chain node has exactly
// one parent slot and exactly one reader, which reads it once, and is
// nothing the picture must show on its own: not the input or the output,
// not a detach node, not highlighted, and not the reader of a detach
// node. The run's first node's parent edge and last node's reader edge
// become the box's edges, so the graph's reachability is unchanged.
// minRun 0 means automatic: runs of autoRun when the model has more than
// FoldAuto nodes, nothing otherwise; minRun < 0 folds nothing.
func (m *Model) Fold(minRun int) int {
	if minRun == 0 {
		if len(m.Nodes) <= FoldAuto {
			return 0
		}
		minRun = autoRun
	}
	if minRun < 0 || len(m.Nodes) == 0 {
		return 0
	}
	idx := make(map[int]int, len(m.Nodes)) // IR id → position in m.Nodes
	for i, n := range m.Nodes {
		idx[n.ID] = i
	}
	in := make([][]int, len(m.Nodes))  // edge indices into a node
	out := make([][]int, len(m.Nodes)) // edge indices out of a node
	for i, e := range m.Edges {
		in[idx[e.To]] = append(in[idx[e.To]], i)
		out[idx[e.From]] = append(out[idx[e.From]], i)
	}
	chain := func(i int) bool {
		n := m.Nodes[i]
		if n.Input || n.Output || n.Detach || n.Highlight || n.Folded > 0 || len(in[i]) != 1 || len(out[i]) != 1 {
			return false
		}
		if m.Edges[in[i][0]].Cut || m.Edges[out[i][0]].Cut {
			return false
		}
		return !m.Nodes[idx[m.Edges[in[i][0]].From]].Detach
	}
	next := func(i int) int { return idx[m.Edges[out[i][0]].To] }
	prev := func(i int) int { return idx[m.Edges[in[i][0]].From] }
	drop := make([]bool, len(m.Nodes))
	dropEdge := make([]bool, len(m.Edges))
	var boxes []Node
	boxAt := map[int]int{} // position of the first node of a run → box index
	folded := 0
	for i := range m.Nodes {
		if !chain(i) || (func() bool { p := prev(i); return chain(p) && next(p) == i })() {
			continue // not a chain node, or not the start of a run
		}
		run := []int{i}
		for j := next(i); chain(j) && prev(j) == run[len(run)-1]; j = next(j) {
			run = append(run, j)
		}
		if len(run) < minRun {
			continue
		}
		first, last := m.Nodes[run[0]], m.Nodes[run[len(run)-1]]
		box := Node{ID: first.ID, LastID: last.ID, Folded: len(run), Op: fmt.Sprintf("%d nodes folded", len(run)), Shape: first.Shape + "→" + last.Shape,
			Reached: true, Trace: 0}
		ops := map[string]bool{}
		for _, j := range run {
			n := m.Nodes[j]
			box.Reached = box.Reached && n.Reached
			ops[n.Op] = true
			drop[j] = true
		}
		if len(ops) == 1 {
			box.Op = fmt.Sprintf("%d × %s folded", len(run), first.Op)
		}
		box.Cotangent = last.Cotangent // the cotangent that enters the run
		box.Value = last.Value         // the value that leaves it
		// The sweep visits the run from its last node to its first.
		box.Trace, box.TraceLast = last.Trace, first.Trace
		// The run's internal edges go; its entry edge now ends at the box
		// and its exit edge starts there (the box keeps the first id).
		for k, j := range run {
			if k > 0 {
				dropEdge[in[j][0]] = true
			}
		}
		m.Edges[out[run[len(run)-1]][0]].From = first.ID
		boxAt[run[0]] = len(boxes)
		boxes = append(boxes, box)
		folded += len(run)
	}
	if folded == 0 {
		return 0
	}
	var nodes []Node
	for i, n := range m.Nodes {
		if b, ok := boxAt[i]; ok {
			nodes = append(nodes, boxes[b])
			continue
		}
		if !drop[i] {
			nodes = append(nodes, n)
		}
	}
	var edges []Edge
	for i, e := range m.Edges {
		if !dropEdge[i] {
			edges = append(edges, e)
		}
	}
	m.Nodes, m.Edges = nodes, edges
	m.Folded += folded
	return folded
}
