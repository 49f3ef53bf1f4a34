// Package report renders the release gate's review artefacts: a Markdown
// summary and a PNG plot (gonum/plot) of the refinement error/bound ratios
// per primitive and provider, so a reviewer can see at a glance how close
// each kernel runs to its proven bound.
package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
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
	PlotName    = "ratios.png"
	SummaryName = "summary.md"
)

// Write creates dir and writes summary.md and ratios.png into it.
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

// Plot draws every case's error/bound ratio per (op, provider), one
// column each, with the bound (ratio 1) as a dashed red line, as LayoutOf
// lays it out.
func Plot(path string, rs []Refinement) error {
	lay := LayoutOf(rs)
	p := plot.New()
	p.Title.Text = "refinement: error / proven bound per case"
	p.Y.Label.Text = "|provider − exact| / bound"
	p.Y.Min, p.Y.Max = 0, yMax
	p.Y.Tick.Marker = plot.ConstantTicks([]plot.Tick{{Value: 0, Label: "0"}, {Value: 0.25}, {Value: 0.5, Label: "0.5"}, {Value: 0.75}, {Value: 1, Label: "1"}, {Value: ClipAt, Label: "clip"}})
	green := color.RGBA{R: 40, G: 120, B: 40, A: 255}
	blue := color.RGBA{R: 30, G: 80, B: 200, A: 255}
	red := color.RGBA{R: 200, A: 255}
	glyph := func(c color.Color, shape draw.GlyphDrawer) draw.GlyphStyle {
		return draw.GlyphStyle{Color: c, Radius: vg.Points(2.5), Shape: shape}
	}
	var clipped plotter.XYLabels
	perColumn := make([]int, len(rs))
	for _, pt := range lay.Points {
		perColumn[pt.Column]++
	}
	seen := make([]int, len(rs))
	var onScale [2]plotter.XYs // reference, other
	var cpts plotter.XYs
	for i, note := range lay.Notes {
		if note != "" {
			clipped.XYs = append(clipped.XYs, plotter.XY{X: float64(i) - 0.3, Y: ClipAt})
			clipped.Labels = append(clipped.Labels, note)
		}
	}
	for _, pt := range lay.Points {
		n, j := perColumn[pt.Column], seen[pt.Column]
		seen[pt.Column]++
		jit := 0.0 // spread the points of one column so they do not overlap
		if n > 1 {
			jit = (float64(j)/float64(n-1) - 0.5) * 0.5
		}
		xy := plotter.XY{X: float64(pt.Column) + jit, Y: pt.Y}
		switch {
		case pt.Clipped:
			// Every clipped case gets its triangle; the column's note
			// (below) prints their count and the worst value once.
			cpts = append(cpts, xy)
		case rs[pt.Column].Provider == "reference":
			onScale[0] = append(onScale[0], xy)
		default:
			onScale[1] = append(onScale[1], xy)
		}
	}
	// The legend's marks are drawn even when a kind has no point.
	for k, c := range []color.Color{green, blue} {
		pts := onScale[k]
		if len(pts) == 0 {
			pts = plotter.XYs{{X: -10, Y: -10}}
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle = glyph(c, draw.CircleGlyph{})
		p.Add(s)
		p.Legend.Add(lay.Legend[k], s)
	}
	if len(cpts) == 0 {
		cpts = plotter.XYs{{X: -10, Y: -10}}
	}
	cs, err := plotter.NewScatter(cpts)
	if err != nil {
		return err
	}
	cs.GlyphStyle = glyph(red, draw.TriangleGlyph{})
	p.Add(cs)
	p.Legend.Add(lay.Legend[2], cs)
	if len(clipped.XYs) > 0 {
		labels, err := plotter.NewLabels(clipped)
		if err != nil {
			return err
		}
		for i := range labels.TextStyle {
			labels.TextStyle[i].Color = red
		}
		// Just above the clip line, below LegendFrom: the legend band
		// stays free of labels.
		labels.Offset = vg.Point{Y: vg.Points(6)}
		p.Add(labels)
	}
	bound, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(rs)) - 0.5, Y: 1}})
	if err != nil {
		return err
	}
	bound.Color = red
	bound.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(bound)
	p.Legend.Add(lay.Legend[3], bound)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(6)
	p.X.Min, p.X.Max = -0.5, float64(len(rs))-0.5
	p.NominalX(lay.Columns...)
	width := vg.Length(max(7, len(rs))) * vg.Inch
	return p.Save(width, 5*vg.Inch, path)
}
