package view

import (
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
)

// Limits of the drawing: a picture with more boxes or edges than this is
// refused (fold chains, or view a smaller graph), so that the output size
// is bounded; labels are cut at LabelMax runes in the drawing and at
// TitleMax in the hover text and the table.
const (
	MaxBoxes  = 20000
	MaxEdges  = 60000
	LabelMax  = 44
	TitleMax  = 600
	sliceNote = "…"
	lineMax   = 30 // runes of one line in a box, at most (fitText cuts by width too)
)

// Text metrics of the boxes' labels (12px monospace), conservative: an
// ASCII character is taken as 0.62 em wide (DejaVu Sans Mono, Liberation
// Mono, Menlo, Courier: 0.600–0.602 em; Consolas 0.55), any other rune as
// a full em (a glyph the monospace font lacks falls back to a proportional
// font: ≈, ‖, ₂, …), ascent 0.8 em, descent 0.25 em. A line is cut until
// its estimated width fits the box less padX on each side, and a box
// draws at most maxLines lines, so that every label stays inside its box
// (TestTextInsideBoxes checks the geometry of every view).
const (
	fontPx     = 12
	asciiEm    = 0.62
	otherEm    = 1.0
	ascentEm   = 0.8
	descentEm  = 0.25
	padX       = 6
	lineStep   = 16
	firstLine  = 16 // baseline of the first line below the box's top
	maxLines   = (NodeH-firstLine)/lineStep + 1
	innerWidth = NodeW - 2*padX
)

// TextWidth is the conservative estimate of s's width in user units, set
// in the boxes' font (see the metrics above).
func TextWidth(s string) float64 {
	w := 0.0
	for _, r := range s {
		if r < 0x80 {
			w += asciiEm * fontPx
		} else {
			w += otherEm * fontPx
		}
	}
	return w
}

// fitText cuts s (at most lineMax runes, and then rune by rune, ending in
// "…") until TextWidth says it fits width.
func fitText(s string, width float64) string {
	s = clip(s, lineMax)
	if TextWidth(s) <= width {
		return s
	}
	r := []rune(s)
	for len(r) > 0 && TextWidth(string(r))+TextWidth(sliceNote) > width {
		r = r[:len(r)-1]
	}
	return string(r) + sliceNote
}

// Check refuses a model too large to draw.
func (m *Model) Check() error {
	if len(m.Nodes) > MaxBoxes {
		return fmt.Errorf("view: %d boxes to draw (after folding %d chain nodes), more than the limit %d", len(m.Nodes), m.Folded, MaxBoxes)
	}
	if len(m.Edges) > MaxEdges {
		return fmt.Errorf("view: %d edges to draw, more than the limit %d", len(m.Edges), MaxEdges)
	}
	return nil
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + sliceNote
}

func esc(s string) string { return html.EscapeString(s) }

// accum counts the edges that carried a contribution out of each node
// (into it, in reverse): a node with two or more is an accumulation point.
func (m *Model) accum() map[int]int {
	a := map[int]int{}
	for _, e := range m.Edges {
		if len(e.Contribs) > 0 {
			a[e.From] += len(e.Contribs)
		}
	}
	return a
}

// Labels returns the text lines of a box, first line first: the id and
// op (a parameter: its field and reader), the shape and name, then per
// view the value ("= …", when AddValues or AddParams computed it) and the
// cotangent ("ct = …"; a parameter's "grad = …"), the step, or the two
// sides of a disagreement. At most maxLines lines.
func (m *Model) Labels(n Node, accum map[int]int) []string {
	var l []string
	switch {
	case n.Folded > 0:
		l = append(l, fmt.Sprintf("#%d…#%d %s", n.ID, n.LastID, n.Op))
	case n.Param && n.Op == "param":
		l = append(l, fmt.Sprintf("param %s → #%d", n.Field, n.Reader))
	default:
		l = append(l, fmt.Sprintf("#%d %s", n.ID, n.Op))
	}
	sh := "shape " + n.Shape
	switch {
	case n.Name != "" && n.Param:
		sh += " " + strconv.Quote(n.Name) // an initializer's name
	case n.Name != "":
		sh += " " + n.Name
	}
	l = append(l, sh)
	value := func() {
		if n.Value != "" {
			l = append(l, "= "+n.Value)
		}
	}
	switch m.What {
	case Tape:
		value()
	case Grads:
		value()
		switch {
		case n.Param && n.Grad != "":
			l = append(l, "grad = "+n.Grad)
		case !n.Reached:
			l = append(l, "unreached")
		case n.Folded > 0:
			l = append(l, fmt.Sprintf("ct #%d = %s", n.LastID, n.Cotangent))
		case accum[n.ID] > 1:
			l = append(l, fmt.Sprintf("ct = %s (Σ of %d)", n.Cotangent, accum[n.ID]))
		default:
			l = append(l, "ct = "+n.Cotangent)
		}
	case Trace:
		switch {
		case n.Param:
			value()
		case n.Folded > 0 && n.Trace > 0:
			l = append(l, fmt.Sprintf("steps %d…%d", n.Trace, n.TraceLast))
		case n.Trace > 0:
			l = append(l, fmt.Sprintf("step %d", n.Trace))
		case n.Reached:
			l = append(l, "reached, no backward")
		default:
			l = append(l, "unreached")
		}
	case Diff:
		if n.Highlight && m.Diff != nil {
			l = append(l, m.Diff.A+": "+m.Diff.LHS, m.Diff.B+": "+m.Diff.RHS)
		}
	}
	if len(l) > maxLines {
		l = append(l[:maxLines-1], sliceNote)
	}
	return l
}

// EdgeLabel is the text drawn on an edge.
func (m *Model) EdgeLabel(e Edge) string {
	var parts []string
	if e.Cut {
		parts = append(parts, "✂ cut")
	}
	if m.What == Grads {
		if len(e.Contribs) > 0 {
			parts = append(parts, "+"+strings.Join(e.Contribs, " +"))
		}
		if e.Dropped {
			parts = append(parts, "dropped")
		}
	}
	return strings.Join(parts, " ")
}

func (m *Model) nodeClass(n Node) string {
	c := []string{"node"}
	if n.Detach {
		c = append(c, "detach")
	}
	if n.Input {
		c = append(c, "input")
	}
	if n.Output {
		c = append(c, "output")
	}
	if n.Folded > 0 {
		c = append(c, "fold")
	}
	if n.Param {
		c = append(c, "param")
	}
	if m.What == Grads || m.What == Trace {
		if n.Reached || n.Grad != "" {
			c = append(c, "reached")
		} else {
			c = append(c, "unreached")
		}
	}
	if n.Highlight {
		c = append(c, "hl")
	}
	return strings.Join(c, " ")
}

func (m *Model) edgeClass(e Edge, dup bool) string {
	c := []string{"edge"}
	if e.Cut {
		c = append(c, "cut")
	}
	if dup {
		c = append(c, "dup")
	}
	if m.What == Grads && len(e.Contribs) > 0 {
		c = append(c, "contrib")
	}
	if m.What == Grads && e.Dropped {
		c = append(c, "dropped")
	}
	return strings.Join(c, " ")
}

// svgStyle is inlined in every SVG, so that a standalone file is styled.
const svgStyle = `.node rect{fill:#f4f6fb;stroke:#334;stroke-width:1.2}
.node text{font:12px monospace;fill:#112}
.node.input rect{fill:#e6f2e6}.node.output rect{stroke-width:2.5}
.node.detach rect{fill:#fff0e0;stroke:#c60;stroke-dasharray:5 3}
.node.fold rect{fill:#eee;stroke:#777;stroke-dasharray:2 2}
.node.param rect{fill:#fdf6dc;stroke:#a80}
.node.unreached rect{fill:#fff;stroke:#999;stroke-dasharray:3 3}.node.unreached text{fill:#888}
.node.hl rect{fill:#ffe0e0;stroke:#d00;stroke-width:3}
.edge path{fill:none;stroke:#556;stroke-width:1.3;marker-end:url(#arrow)}
.edge.contrib path{stroke:#06c;stroke-width:2}
.edge.cut path{stroke:#c60;stroke-width:2;stroke-dasharray:6 4}
.edge.dropped path{stroke:#c60}
.edge text{font:11px monospace;fill:#036}.edge.cut text{fill:#c60;font-weight:bold}
.hidden{display:none}`

// SVG writes the drawing of m as one SVG document. Boxes are <g
// class="node …" data-id="ID"> with a <rect>, one <text> per label line
// and a <title>; edges are <g class="edge …" data-from data-to
// data-slot> with a <path> and, when labelled, a <text>. Edges between
// the same two boxes (duplicate slots) are drawn as separate curves.
func SVG(w io.Writer, m *Model, lay *Layout) error {
	if err := m.Check(); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="graph" width="%d" height="%d" viewBox="0 0 %d %d">`+"\n", lay.W, lay.H, lay.W, lay.H)
	fmt.Fprintf(&b, "<title>%s</title>\n<style>%s</style>\n", esc(m.Title), svgStyle)
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#556"/></marker></defs>` + "\n")
	b.WriteString(`<g id="viewport">` + "\n")
	idx := make(map[int]int, len(m.Nodes))
	for i, n := range m.Nodes {
		idx[n.ID] = i
	}
	pair := map[[2]int]int{}
	for _, e := range m.Edges {
		pair[[2]int{e.From, e.To}]++
	}
	seen := map[[2]int]int{}
	for i, e := range m.Edges {
		k := [2]int{e.From, e.To}
		cnt, j := pair[k], seen[k]
		seen[k]++
		f, t := lay.At[idx[e.From]], lay.At[idx[e.To]]
		x1, y1 := f.X+NodeW/2, f.Y+NodeH
		x2, y2 := t.X+NodeW/2, t.Y
		off := 0
		if cnt > 1 {
			off = (2*j - (cnt - 1)) * 36
		}
		// The first leg ends at the first waypoint's top, or at the reader.
		ex, ey := x2, y2
		var d strings.Builder
		if r := lay.Route[i]; len(r) > 0 {
			ex, ey = lay.At[r[0]].X+DummyW/2, lay.At[r[0]].Y
		}
		cx, cy := (x1+ex)/2+off, (y1+ey)/2
		fmt.Fprintf(&d, "M%d,%d Q%d,%d %d,%d", x1, y1, cx, cy, ex, ey)
		for k, v := range lay.Route[i] {
			px, py := lay.At[v].X+DummyW/2, lay.At[v].Y
			fmt.Fprintf(&d, " L%d,%d", px, py+NodeH)
			nx, ny := x2, y2
			if k+1 < len(lay.Route[i]) {
				nx, ny = lay.At[lay.Route[i][k+1]].X+DummyW/2, lay.At[lay.Route[i][k+1]].Y
			}
			fmt.Fprintf(&d, " L%d,%d", nx, ny)
		}
		fmt.Fprintf(&b, `<g class="%s" data-from="%d" data-to="%d" data-slot="%d"><path d="%s"/>`, m.edgeClass(e, cnt > 1), e.From, e.To, e.Slot, d.String())
		if lbl := m.EdgeLabel(e); lbl != "" {
			lx, ly := (x1+2*cx+ex)/4+4, (y1+2*cy+ey)/4+13*j
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s<title>%s</title></text>`, lx, ly, esc(clip(lbl, LabelMax)), esc(clip(lbl, TitleMax)))
		}
		b.WriteString("</g>\n")
	}
	acc := m.accum()
	for i, n := range m.Nodes {
		p := lay.At[i]
		lines := m.Labels(n, acc)
		h := NodeH
		fmt.Fprintf(&b, `<g class="%s" data-id="%d"><title>%s</title><rect x="%d" y="%d" width="%d" height="%d" rx="5"/>`, m.nodeClass(n), n.ID, esc(clip(strings.Join(lines, "\n"), TitleMax)), p.X, p.Y, NodeW, h)
		for k, l := range lines {
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`, p.X+padX, p.Y+firstLine+lineStep*k, esc(fitText(l, innerWidth)))
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func dotQuote(s string) string { return strconv.Quote(s) }

// Render writes m in format: "dot" (DOT), "svg" (SVG) or else one HTML
// page (HTML), the latter two laid out by Place.
func Render(w io.Writer, m *Model, format string) error {
	switch format {
	case "dot":
		return DOT(w, m)
	case "svg":
		return SVG(w, m, Place(m))
	}
	return HTML(w, m, Place(m))
}

// DOT writes m as a Graphviz digraph: box n<ID> per node (dashed for
// detach and unreached, red for the highlighted one), one edge per slot
// (dashed orange for a cut one), labelled as in the SVG.
func DOT(w io.Writer, m *Model) error {
	if err := m.Check(); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph tlcheck {\n  label=%s;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n  edge [fontname=\"monospace\", fontsize=9];\n", dotQuote(m.Title))
	acc := m.accum()
	for _, n := range m.Nodes {
		attrs := []string{"label=" + dotQuote(clip(strings.Join(m.Labels(n, acc), "\n"), TitleMax))}
		var style []string
		switch {
		case n.Highlight:
			attrs = append(attrs, `color="red"`, "penwidth=3")
		case n.Detach:
			attrs = append(attrs, `color="darkorange"`)
			style = append(style, "dashed")
		}
		if (m.What == Grads || m.What == Trace) && !n.Reached {
			attrs = append(attrs, `fontcolor="gray50"`)
			style = append(style, "dotted")
		}
		if n.Folded > 0 {
			style = append(style, "rounded")
		}
		if len(style) > 0 {
			attrs = append(attrs, "style="+dotQuote(strings.Join(style, ",")))
		}
		fmt.Fprintf(&b, "  n%d [%s];\n", n.ID, strings.Join(attrs, ", "))
	}
	for _, e := range m.Edges {
		head := strconv.Itoa(e.Slot)
		if e.Param {
			head = e.Field
		}
		attrs := []string{fmt.Sprintf("headlabel=%s", dotQuote(head))}
		if lbl := m.EdgeLabel(e); lbl != "" {
			attrs = append(attrs, "label="+dotQuote(clip(lbl, TitleMax)))
		}
		if e.Cut {
			attrs = append(attrs, `style="dashed"`, `color="darkorange"`)
		} else if m.What == Grads && len(e.Contribs) > 0 {
			attrs = append(attrs, `color="blue"`, "penwidth=2")
		}
		fmt.Fprintf(&b, "  n%d -> n%d [%s];\n", e.From, e.To, strings.Join(attrs, ", "))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}
