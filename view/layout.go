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

// Layout places the boxes of m: Layers[v] is the layer of m.Nodes[v],
// Order the boxes of each layer left to right (indices into m.Nodes),
// At their positions, W and H the drawing's size.
type Layout struct {
	Layer []int
	Order [][]int
	At    []Pos
	W, H  int
}

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
	lay := &Layout{Layer: make([]int, n), At: make([]Pos, n)}
	depth := 0
	for i := 0; i < n; i++ { // ids are topological: parents come first
		for _, p := range ups[i] {
			lay.Layer[i] = max(lay.Layer[i], lay.Layer[p]+1)
		}
		depth = max(depth, lay.Layer[i]+1)
	}
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
	widest := 0
	for _, row := range lay.Order {
		widest = max(widest, len(row))
	}
	lay.W = 2*Margin + widest*NodeW + max(widest-1, 0)*GapX
	lay.H = 2*Margin + depth*NodeH + max(depth-1, 0)*GapY
	for l, row := range lay.Order {
		rowW := len(row)*NodeW + max(len(row)-1, 0)*GapX
		x0 := Margin + (lay.W-2*Margin-rowW)/2
		for k, v := range row {
			lay.At[v] = Pos{X: x0 + k*(NodeW+GapX), Y: Margin + l*(NodeH+GapY)}
		}
	}
	return lay
}
