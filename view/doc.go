// Package view draws a canonical IR graph the way the chapter's editor
// widgets do — #tape_view (nodes and parent edges), #tape_grads_view (the
// reverse pass with its cotangents) and #tape_trace_view (traversal order)
// — plus a disagreement view, as SVG, one self-contained HTML page or
// Graphviz DOT, without Graphviz.
//
// # Model
//
// A Model has one Node per IR node and one Edge per parent slot: a node
// reading the same parent twice (x⊙x, mul_elem with parents [0, 0]) has two
// edges, slots 0 and 1, drawn as two curves. The edge into a detach node is
// Cut: the forward value passes, no cotangent comes back. FromGraph builds
// it (the tape view). AddGrads runs the reverse pass of the eager tape
// (irgrad's PathTape, the dense sweep from the output seeded with ones) and
// records, per node, whether a cotangent reached it and which — an
// unreached node is marked unreached, never shown as zero — the order in
// which the nodes' backward rules ran (the trace view), and, per edge, the
// contributions the sweep sent along it: each reached tape node's recorded
// backward is applied to its final cotangent, and the k-th contribution
// from IR node c to its parent p is put on the k-th slot of c that reads p.
// A contribution that reaches a node that takes no gradient (a detach, a
// const) is dropped by the sweep, and the edge says so. At every node the
// contributions received sum to its cotangent — the tape accumulates
// exactly these, in this order — so in the chapter's x⊙x + x⊙x both
// products contribute x to each slot and the leaf's cotangent is 4x, and
// with the second product detached it is still in the graph, unreached,
// its edge into detach cut, and the leaf's cotangent is 2x = (6, −3) at
// x = (3, −3/2). AddDiff runs obligations.DiffIR (the comparisons of
// tlcheck diff; nothing is re-implemented here) and highlights the node
// of the first disagreement, with both sides' values and the comparisons
// that agreed. Values print as the scalar prints them: exact p/q over
// spec.Rat, shortest round-tripping decimals over spec.F32 and spec.F64.
//
// # Folding
//
// Fold replaces each maximal run of chain nodes (one parent slot, one
// reader reading it once; not the input, output, a detach, its reader or
// the highlighted node) by one box naming the ids and the count, and the
// page says how many nodes were folded. A 10⁴-node chain becomes a handful
// of boxes. What remains to draw is bounded (MaxBoxes, MaxEdges) and
// labels are cut (LabelMax, TitleMax), so the output size is bounded by a
// constant times the number of boxes.
//
// # Layout
//
// Place is deterministic: longest-path layering (IR ids are topological,
// so one pass suffices), then barycentre ordering (alternate downward and
// upward passes sorting each layer by the mean position of the neighbours
// in the layer before, ties by the previous position), then each layer
// centred. Coordinates are integers, iteration is over slices, so the same
// model gives the same bytes.
//
// # Rendering
//
// SVG is written directly: <g class="node …" data-id> boxes and <g
// class="edge …" data-from data-to data-slot> edges, with classes detach,
// unreached, reached, hl (highlighted), fold, cut, dup (one of several
// slots between the same two boxes), contrib and dropped, styled by an
// inline <style>. HTML is one well-formed XHTML-compatible page with the
// SVG inline, inline CSS, a legend, a table of every box (readable without
// JavaScript) and a small inline script for pan, zoom and collapsing what
// feeds a box; it loads nothing from the network. DOT is for users with
// Graphviz.
package view
