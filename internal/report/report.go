// Package report renders the release gate's review artefacts: a Markdown
// summary and an SVG picture (drawn here, no plotting library) of the refinement error/bound ratios
// per primitive and provider, so a reviewer can see at a glance how close
// each kernel runs to its proven bound.
package report

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Stage is one gate stage's summary line.
type Stage struct {
	Name     string
	Items    int
	Failures int
	Seconds  float64
}

// Refinement is the refinement record of one (provider, op) pair.
type Refinement struct {
	Provider, Op, Capsule, Policy string
	Cases                         int
	// Ratios holds each case's worst error/bound ratio (0 for bit-exact
	// capsules).
	Ratios []float64
	Worst  float64
	Holds  bool
}

// Data is everything the report shows.
type Data struct {
	Tool, RegistryHash, Certificates string
	Seed                             uint64
	Holds                            bool
	Stages                           []Stage
	Failures                         []string
	Refinements                      []Refinement
}

// PlotName and SummaryName are the files Write creates.
const (
	PlotName    = "ratios.svg"
	SummaryName = "summary.md"
)

// Write creates dir and writes summary.md and ratios.svg into it.
func Write(dir string, d *Data) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, SummaryName))
	if err != nil {
		return err
	}
	if err := Markdown(f, d); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return Plot(filepath.Join(dir, PlotName), d.Refinements)
}

// Markdown writes the summary.
func Markdown(w io.Writer, d *Data) error {
	verdict := "**holds** — every obligation checked, every certificate verified"
	if !d.Holds {
		verdict = "**FAILS**"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# tlcheck release gate\n\n%s\n\n", verdict)
	fmt.Fprintf(&b, "* tool: %s\n* registry: `%s`\n* seed: %d\n* certificates: `%s`\n\n", d.Tool, d.RegistryHash, d.Seed, d.Certificates)
	b.WriteString("## Stages\n\n| stage | items | failures | seconds |\n|---|---:|---:|---:|\n")
	for _, s := range d.Stages {
		fmt.Fprintf(&b, "| %s | %d | %d | %.2f |\n", s.Name, s.Items, s.Failures, s.Seconds)
	}
	if len(d.Failures) > 0 {
		b.WriteString("\n## Failures\n\n")
		for _, f := range d.Failures {
			fmt.Fprintf(&b, "* %s\n", strings.ReplaceAll(f, "\n", " "))
		}
	}
	if len(d.Refinements) > 0 {
		b.WriteString("\n## Provider refinement\n\nEach case's error is measured against the exact rational result and divided by the proven a-priori bound for the capsule's reduction policy (bit-exact capsules must match the binary32 replay, ratio 0). A ratio ≤ 1 holds.\n\n")
		b.WriteString("| provider | op | capsule | policy | cases | worst ratio | median ratio | holds |\n|---|---|---|---|---:|---:|---:|---|\n")
		for _, r := range d.Refinements {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %s | %s | %t |\n", r.Provider, r.Op, r.Capsule, r.Policy, r.Cases, FormatRatio(r.Worst), FormatRatio(median(r.Ratios)), r.Holds)
		}
		fmt.Fprintf(&b, "\n![error/bound ratios](%s)\n", PlotName)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// The plot's vertical layout, in ratio units: points on scale are drawn
// at their ratio (≤ ClipAt); a ratio above ClipAt (a planted fault gives
// 4.3e5, a non-finite result +Inf or NaN) is drawn at ClipAt as a red
// triangle, with the column's count of them and its worst value printed
// above the clip line (Layout.Notes); the band above LegendFrom
// holds the legend and nothing else, so the legend never covers a point
// or a clipped value's label.
const (
	ClipAt     = 1.2
	LegendFrom = 1.4
	yMax       = 1.95
)

// FormatRatio is the one spelling of a ratio that the summary and the
// plot both print, so that they agree on every worst value: three
// significant digits, "+Inf" and "NaN" for non-finite ratios.
func FormatRatio(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return fmt.Sprintf("%.3g", v)
}

// offScale reports whether a ratio is drawn clipped at the top edge.
func offScale(v float64) bool { return math.IsNaN(v) || v > ClipAt }

// Point is one drawn case: its column, its height in the plot and, for a
// clipped case, the printed value.
type Point struct {
	Column  int
	Y       float64
	Clipped bool
	Label   string
}

// Layout is what Plot draws, computed without drawing so that tests can
// check it: the column labels (provider, op and the worst ratio as
// FormatRatio spells it), every point, and the legend entries.
type Layout struct {
	Columns []string
	Points  []Point
	// Notes holds, per column with clipped cases, the line printed above
	// the clip line: "K clipped, worst W" (W as the summary spells it);
	// "" for a column without.
	Notes  []string
	Legend []string
}

// Legend entries, one per colour and mark.
const (
	legendReference = "reference provider: bit-exact capsules (ratio 0)"
	legendOther     = "other providers: |provider − exact| / bound per case"
	legendClipped   = "off scale (ratio > 1.2, +Inf or NaN): drawn at the clip line, count and worst printed"
	legendBound     = "proven bound (ratio 1): a point above it fails"
)

// LayoutOf computes the plot's layout for rs.
func LayoutOf(rs []Refinement) Layout {
	var l Layout
	for i, r := range rs {
		l.Columns = append(l.Columns, r.Provider+"\n"+r.Op+"\nworst "+FormatRatio(r.Worst))
		n := 0
		for _, v := range r.Ratios {
			if offScale(v) {
				n++
			}
		}
		note := ""
		if n > 0 {
			note = fmt.Sprintf("%d clipped, worst %s", n, FormatRatio(r.Worst))
		}
		l.Notes = append(l.Notes, note)
		for _, v := range r.Ratios {
			p := Point{Column: i, Y: v}
			if offScale(v) {
				p.Y, p.Clipped, p.Label = ClipAt, true, FormatRatio(v)
			} else if v < 0 {
				p.Y = 0
			}
			l.Points = append(l.Points, p)
		}
	}
	l.Legend = []string{legendReference, legendOther, legendClipped, legendBound}
	return l
}

// Plot writes the ratio picture as a self-contained SVG, drawn here from
// LayoutOf (no plotting library): one column per (provider, op) with its
// three-line label under the axis, every case's ratio as a point spread
// across the column, the proven bound (ratio 1) as a dashed red line, the
// clip line with each column's note above it, and the legend in its own
// band below the column labels, so it never covers a point.
func Plot(path string, rs []Refinement) error {
	return os.WriteFile(path, []byte(SVG(rs)), 0o644)
}

// The SVG's geometry, in pixels.
const (
	svgLeft, svgRight, svgTop = 70, 20, 48
	svgPlotH, svgColW         = 300, 150
	svgLabelH, svgLegendRow   = 64, 18
	svgTopRatio               = ClipAt + 0.18 // room for the notes above the clip line
)

// SVG renders the picture Plot writes.
func SVG(rs []Refinement) string {
	lay := LayoutOf(rs)
	cols := max(len(rs), 1)
	plotW := svgColW * cols
	width := svgLeft + plotW + svgRight
	height := svgTop + svgPlotH + svgLabelH + svgLegendRow*len(lay.Legend) + 16
	y := func(r float64) float64 { return svgTop + svgPlotH*(1-r/svgTopRatio) }
	x := func(col int, jit float64) float64 { return svgLeft + svgColW*(float64(col)+0.5+jit) }
	esc := func(s string) string {
		return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15" font-weight="bold">refinement: error / proven bound per case</text>`+"\n", svgLeft)
	// Axes and ticks.
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#444"/>`+"\n", svgLeft, svgTop, plotW, svgPlotH)
	for _, t := range []struct {
		v     float64
		label string
	}{{0, "0"}, {0.25, "0.25"}, {0.5, "0.5"}, {0.75, "0.75"}, {1, "1"}, {ClipAt, "clip"}} {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle">%s</text>`+"\n",
			svgLeft, svgLeft+plotW, y(t.v), y(t.v), svgLeft-6, y(t.v), t.label)
	}
	fmt.Fprintf(&b, `<text transform="translate(16 %.1f) rotate(-90)" text-anchor="middle">|provider − exact| / bound</text>`+"\n", svgTop+svgPlotH/2.0)
	// The bound and the clip line.
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c00" stroke-width="1.5" stroke-dasharray="6 4"/>`+"\n", svgLeft, svgLeft+plotW, y(1), y(1))
	fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#c00" stroke-width="0.8" stroke-dasharray="2 3"/>`+"\n", svgLeft, svgLeft+plotW, y(ClipAt), y(ClipAt))
	perColumn := make([]int, len(rs))
	for _, pt := range lay.Points {
		perColumn[pt.Column]++
	}
	seen := make([]int, len(rs))
	for _, pt := range lay.Points {
		n, j := perColumn[pt.Column], seen[pt.Column]
		seen[pt.Column]++
		jit := 0.0 // spread a column's points so they do not overlap
		if n > 1 {
			jit = (float64(j)/float64(n-1) - 0.5) * 0.6
		}
		px, py := x(pt.Column, jit), y(pt.Y)
		switch {
		case pt.Clipped:
			fmt.Fprintf(&b, `<path d="M%.1f %.1f l4 7 h-8 z" fill="#c00"><title>%s</title></path>`+"\n", px, py-4, esc(pt.Label))
		case rs[pt.Column].Provider == "reference":
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#287828"/>`+"\n", px, py)
		default:
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#1e50c8"/>`+"\n", px, py)
		}
	}
	for i, note := range lay.Notes {
		if note != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#c00" font-size="11">%s</text>`+"\n", x(i, 0), y(ClipAt)-9, esc(note))
		}
	}
	// Column labels: provider, op, worst ratio on three lines.
	for i, c := range lay.Columns {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">`, x(i, 0), svgTop+svgPlotH+16)
		for k, line := range strings.Split(c, "\n") {
			dy := "0"
			if k > 0 {
				dy = "15"
			}
			fmt.Fprintf(&b, `<tspan x="%.1f" dy="%s">%s</tspan>`, x(i, 0), dy, esc(line))
		}
		b.WriteString("</text>\n")
	}
	// The legend, in its own band below the labels.
	marks := []string{
		`<circle cx="%d" cy="%d" r="3" fill="#287828"/>`,
		`<circle cx="%d" cy="%d" r="3" fill="#1e50c8"/>`,
		`<path d="M%d %d l4 7 h-8 z" fill="#c00"/>`,
		`<line x1="%d" x2="%d" y1="%d" y2="%[2]d" stroke="#c00" stroke-dasharray="6 4"/>`,
	}
	for k, text := range lay.Legend {
		ly := svgTop + svgPlotH + svgLabelH + svgLegendRow*k
		switch k {
		case 2:
			fmt.Fprintf(&b, marks[k], svgLeft+6, ly-4)
		case 3:
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#c00" stroke-dasharray="6 4"/>`, svgLeft-4, svgLeft+16, ly, ly)
		default:
			fmt.Fprintf(&b, marks[k], svgLeft+6, ly)
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" dominant-baseline="middle">%s</text>`+"\n", svgLeft+24, ly, esc(text))
	}
	b.WriteString("</svg>\n")
	return b.String()
}
