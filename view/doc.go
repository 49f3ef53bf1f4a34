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
// x = (3, −3/2). AddDiff runs diffrun.DiffIR (the comparisons of
// tlcheck diff; nothing is re-implemented here) and highlights the node
// of the first disagreement, with both sides' values and the comparisons
// that agreed. Values print as the scalar prints them: exact p/q over
// spec.Rat, shortest round-tripping decimals over spec.F32 and spec.F64.
//
// # Parameters and values
//
// AddValues records every node's forward value at the input (the "= …"
// line of each box, the value column of the page's table; the tape view
// included). AddParams, called after Fold, draws each payload parameter
// (a linear's W and b, a norm's γ, β and statistics) and, for an imported
// ONNX model (ConstParams), each initializer, as a box of its own with
// one edge (slot −1) into the box that reads it, placed one layer above
// that box, with its value and, for the grads view, its gradient: the
// cotangent of the parameter in the reverse pass from the output seeded
// with ones, with every parameter a leaf (irgrad.LowerWith, VJP along the
// tape path) — what tlcheck grad reports. A const node that is an
// initializer is its own parameter box.
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
// Labels stay inside their boxes: each line is cut, ending in "…", until
// TextWidth — a conservative estimate of its width in the boxes' 12px
// monospace, 0.62 em an ASCII character and 1 em any other rune (a glyph
// the monospace font lacks falls back to a wider proportional one) — fits
// the box less its padding, and a box holds at most four lines, whose
// extents (baseline − 0.8 em to baseline + 0.25 em) lie within its height.
// The full text is in each box's <title> and the page's table.
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
