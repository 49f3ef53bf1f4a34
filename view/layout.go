package view

import (
	"sort"
)

// Layout geometry, in SVG user units.
const (
	NodeW  = 220 // box width: about 30 characters of 12px monospace
	NodeH  = 72  // box height: four label lines
	GapX   = 40  // horizontal gap between boxes
	GapY   = 70  // vertical gap between layers
	Margin = 20
)

// Pos is a box's top-left corner.
type Pos struct{ X, Y int }

// Layout places the boxes of m: Layer[v] is the layer of vertex v,
// Order the vertices of each layer left to right, At their top-left
// corners, W and H the drawing's size. Vertices 0…len(m.Nodes)-1 are the
// boxes (in m.Nodes order); the others are waypoints of long edges:
// Route[i] lists, top to bottom, the waypoints edge m.Edges[i] passes
// through (one per layer it crosses), so that it runs between the boxes of
// those layers rather than through them.
type Layout struct {
	Layer []int
	Order [][]int
	At    []Pos
	Route [][]int
	W, H  int
}

// DummyW is the width a waypoint takes in its layer.
const DummyW = 24

// Waypoints are made for edges crossing at most maxSpan layers, and at
// most maxDummies per box in all, so that the layout stays linear in the
// size of the model; a longer edge is drawn straight.
const (
	maxSpan    = 12
	maxDummies = 4
)

// sweeps is the number of barycentre passes (down and up count one each).
const sweeps = 8

// Place lays m out, deterministically: longest-path layering (a node's
// layer is one more than its deepest parent's; sources are layer 0), then
// barycentre ordering — starting from id order, each pass sorts every
// layer by the mean position of each box's neighbours in the layer above
// (downward passes) or below (upward passes), a box without such
// neighbours keeping its position, ties broken by the previous position —
// and finally layers centred horizontally. Cost: O(sweeps·(V+E)·log V).
func Place(m *Model) *Layout {
	n := len(m.Nodes)
	idx := make(map[int]int, n)
	for i, nd := range m.Nodes {
		idx[nd.ID] = i
	}
	ups := make([][]int, n)   // parents (indices), duplicates kept
	downs := make([][]int, n) // children
	for _, e := range m.Edges {
		f, t := idx[e.From], idx[e.To]
		ups[t] = append(ups[t], f)
		downs[f] = append(downs[f], t)
	}
	lay := &Layout{Layer: make([]int, n)}
	depth := 0
	for i := 0; i < n; i++ { // ids are topological: parents come first
		for _, p := range ups[i] {
			lay.Layer[i] = max(lay.Layer[i], lay.Layer[p]+1)
		}
		depth = max(depth, lay.Layer[i]+1)
	}
	// A parameter box has no parents; it sits one layer above its
	// reader rather than at the top, so that its edge spans one layer.
	for i, nd := range m.Nodes {
		if nd.Param && len(ups[i]) == 0 && len(downs[i]) > 0 {
			l := lay.Layer[downs[i][0]]
			for _, d := range downs[i] {
				l = min(l, lay.Layer[d])
			}
			lay.Layer[i] = max(l-1, 0)
		}
	}
	lay.Route = make([][]int, len(m.Edges))
	budget := maxDummies * n
	for i, e := range m.Edges {
		f, t := idx[e.From], idx[e.To]
		span := lay.Layer[t] - lay.Layer[f]
		if span < 2 || span > maxSpan || budget < span-1 {
			continue
		}
		budget -= span - 1
		// Replace f→t by f→d1→…→d(span-1)→t in the ordering graph.
		prev := f
		for l := lay.Layer[f] + 1; l < lay.Layer[t]; l++ {
			d := len(lay.Layer)
			lay.Layer = append(lay.Layer, l)
			ups = append(ups, []int{prev})
			downs = append(downs, nil)
			downs[prev] = append(downs[prev], d)
			lay.Route[i] = append(lay.Route[i], d)
			prev = d
		}
		downs[prev] = append(downs[prev], t)
		ups[t] = append(ups[t], prev)
		downs[f] = removeOne(downs[f], t)
		ups[t] = removeOne(ups[t], f)
	}
	n = len(lay.Layer)
	lay.At = make([]Pos, n)
	lay.Order = make([][]int, depth)
	for i := 0; i < n; i++ {
		lay.Order[lay.Layer[i]] = append(lay.Order[lay.Layer[i]], i)
	}
	pos := make([]float64, n)
	setPos := func() {
		for _, row := range lay.Order {
			for k, v := range row {
				pos[v] = float64(k)
			}
		}
	}
	setPos()
	key := make([]float64, n)
	for s := 0; s < sweeps; s++ {
		down := s%2 == 0
		for li := range lay.Order {
			l := li
			if !down {
				l = len(lay.Order) - 1 - li
			}
			row := lay.Order[l]
			for _, v := range row {
				nb := ups[v]
				if !down {
					nb = downs[v]
				}
				key[v] = pos[v]
				if len(nb) > 0 {
					sum := 0.0
					for _, u := range nb {
						sum += pos[u]
					}
					key[v] = sum / float64(len(nb))
				}
			}
			sort.SliceStable(row, func(a, b int) bool {
				if key[row[a]] != key[row[b]] {
					return key[row[a]] < key[row[b]]
				}
				return pos[row[a]] < pos[row[b]]
			})
			for k, v := range row {
				pos[v] = float64(k)
			}
		}
	}
	boxes := len(m.Nodes)
	width := func(v int) int {
		if v < boxes {
			return NodeW
		}
		return DummyW
	}
	rowW := make([]int, depth)
	widest := 0
	for l, row := range lay.Order {
		for k, v := range row {
			rowW[l] += width(v)
			if k > 0 {
				rowW[l] += GapX
			}
		}
		widest = max(widest, rowW[l])
	}
	lay.W = 2*Margin + widest
	lay.H = 2*Margin + depth*NodeH + max(depth-1, 0)*GapY
	for l, row := range lay.Order {
		x := Margin + (widest-rowW[l])/2
		for _, v := range row {
			lay.At[v] = Pos{X: x, Y: Margin + l*(NodeH+GapY)}
			x += width(v) + GapX
		}
	}
	return lay
}

// removeOne removes the first v from s.
func removeOne(s []int, v int) []int {
	for i, x := range s {
		if x == v {
			return append(s[:i:i], s[i+1:]...)
		}
	}
	return s
}
