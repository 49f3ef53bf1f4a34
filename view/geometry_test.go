package view

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/spec"
)

// textsOutside checks an SVG's geometry without a browser: for every box
// (<g class="node">, its <rect>), every <text> in it must lie inside the
// rect by the conservative metrics of render.go — its left end at x, its
// right end at x + TextWidth(text), its top at y − ascent, its bottom at
// y + descent. It returns one line per text that does not.
func textsOutside(t *testing.T, svg []byte) []string {
	t.Helper()
	root := parseXML(t, svg)
	num := func(e *elem, a string) float64 {
		v, err := strconv.ParseFloat(e.Attr[a], 64)
		if err != nil {
			t.Fatalf("<%s %s=%q>: %v", e.Name, a, e.Attr[a], err)
		}
		return v
	}
	var bad []string
	for _, g := range root.all("g", "node") {
		rects := g.all("rect", "")
		if len(rects) != 1 {
			t.Fatalf("box %s has %d rects", g.Attr["data-id"], len(rects))
		}
		r := rects[0]
		rx, ry, rw, rh := num(r, "x"), num(r, "y"), num(r, "width"), num(r, "height")
		for _, tx := range g.all("text", "") {
			s := strings.Join(tx.Texts, "")
			x, y := num(tx, "x"), num(tx, "y")
			left, right := x, x+TextWidth(s)
			top, bottom := y-ascentEm*fontPx, y+descentEm*fontPx
			if left < rx || right > rx+rw || top < ry || bottom > ry+rh {
				bad = append(bad, fmt.Sprintf("box %s: %q spans x %.1f…%.1f y %.1f…%.1f, the box x %.0f…%.0f y %.0f…%.0f",
					g.Attr["data-id"], s, left, right, top, bottom, rx, rx+rw, ry, ry+rh))
			}
		}
	}
	return bad
}

// TestTextInsideBoxes renders every view — tape, grads and trace of the
// chapter's examples and of the MLP with its parameter boxes, the diff
// view with a planted fault (four lines in the highlighted box), a folded
// chain, random graphs, and a model whose names are long and not ASCII —
// and checks the geometry of every label (textsOutside). It also checks
// that the check catches a planted overflow: the old cut at 30 runes of
// ASCII, 30 × 0.62 × 12 = 223.2 units from x + 6, leaves a 220-unit box.
func TestTextInsideBoxes(t *testing.T) {
	var models []*Model
	for _, f := range []string{"quad.ir.json", "quad-detach.ir.json"} {
		for _, w := range []What{Tape, Grads, Trace} {
			g := readGraph(t, f)
			m, err := FromGraph(g, nil)
			if err != nil {
				t.Fatal(err)
			}
			m.What = w
			if w != Tape {
				if err := AddGrads(m, g, nil, quadX()); err != nil {
					t.Fatal(err)
				}
			}
			if err := AddValues(m, g, nil, quadX()); err != nil {
				t.Fatal(err)
			}
			models = append(models, m)
		}
	}
	for _, w := range []What{Tape, Grads, Trace} {
		m, _, _, _ := mlpModel(t, w)
		models = append(models, m)
	}
	{
		g := graphOf(t, reluGraph)
		m, err := FromGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.What = Diff
		if _, err := AddDiff(m, g, nil, quadX(), diffrun.DiffOptions{RegistryHook: plantReluShift}); err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	for _, src := range []string{chainGraph(300), randomGraph(30, 3)} {
		g := graphOf(t, src)
		m, err := FromGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.What = Grads
		if err := AddGrads(m, g, nil, quadX()); err != nil {
			t.Fatal(err)
		}
		m.Fold(0)
		models = append(models, m)
	}
	{
		g := readGraph(t, "quad.ir.json")
		origin := make([]string, len(g.Nodes))
		for i := range origin {
			origin[i] = strings.Repeat("批量归一化", 10) + "/BatchNormalization_" + strings.Repeat("x", 80)
		}
		m, err := FromGraph(g, origin)
		if err != nil {
			t.Fatal(err)
		}
		m.What = Grads
		big := spec.Vector(spec.NewRat(-123456789, 7), spec.NewRat(987654321, 11))
		if err := AddGrads(m, g, nil, big); err != nil {
			t.Fatal(err)
		}
		if err := AddValues(m, g, nil, big); err != nil {
			t.Fatal(err)
		}
		models = append(models, m)
	}
	texts := 0
	for i, m := range models {
		var b bytes.Buffer
		if err := SVG(&b, m, Place(m)); err != nil {
			t.Fatal(err)
		}
		texts += strings.Count(b.String(), "<text")
		for _, line := range textsOutside(t, b.Bytes()) {
			t.Errorf("model %d (%s): %s", i, m.What, line)
		}
	}
	if texts < 100 {
		t.Fatalf("only %d texts checked", texts)
	}
	// The planted overflow: one label of 30 ASCII characters, as the old
	// cut at lineMax runes left it.
	m, _, _, _ := mlpModel(t, Tape)
	var b bytes.Buffer
	if err := SVG(&b, m, Place(m)); err != nil {
		t.Fatal(err)
	}
	planted := strings.Replace(b.String(), ">#0 input<", ">"+strings.Repeat("8", 30)+"<", 1)
	if bad := textsOutside(t, []byte(planted)); len(bad) != 1 || !strings.Contains(bad[0], "box 0:") {
		t.Errorf("a 30-character label was not caught: %v", bad)
	}
}
