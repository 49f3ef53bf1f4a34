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
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %d | %.3g | %.3g | %t |\n", r.Provider, r.Op, r.Capsule, r.Policy, r.Cases, r.Worst, median(r.Ratios), r.Holds)
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

// Plot draws every case's error/bound ratio per (op, provider), one
// column each, with the bound (ratio 1) as a red line.
func Plot(path string, rs []Refinement) error {
	p := plot.New()
	p.Title.Text = "refinement: error / proven bound per case"
	p.Y.Label.Text = "|provider − exact| / bound"
	p.Y.Min, p.Y.Max = 0, 1.1
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Provider + "\n" + r.Op
		pts := make(plotter.XYs, len(r.Ratios))
		for j, v := range r.Ratios {
			// spread the points of one column so they do not overlap
			jit := 0.0
			if len(r.Ratios) > 1 {
				jit = (float64(j)/float64(len(r.Ratios)-1) - 0.5) * 0.5
			}
			pts[j] = plotter.XY{X: float64(i) + jit, Y: math.Min(v, 1.1)}
		}
		s, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		s.GlyphStyle.Radius = vg.Points(2)
		s.GlyphStyle.Shape = draw.CircleGlyph{}
		if r.Provider == "reference" {
			s.GlyphStyle.Color = color.RGBA{R: 40, G: 120, B: 40, A: 255}
		} else {
			s.GlyphStyle.Color = color.RGBA{R: 30, G: 80, B: 200, A: 255}
		}
		p.Add(s)
	}
	bound, err := plotter.NewLine(plotter.XYs{{X: -0.5, Y: 1}, {X: float64(len(rs)) - 0.5, Y: 1}})
	if err != nil {
		return err
	}
	bound.Color = color.RGBA{R: 200, A: 255}
	bound.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(bound)
	p.Legend.Add("proven bound (ratio 1)", bound)
	p.Legend.Top = true
	p.X.Min, p.X.Max = -0.5, float64(len(rs))-0.5
	p.NominalX(names...)
	width := vg.Length(max(6, len(rs))) * vg.Inch
	return p.Save(width, 4*vg.Inch, path)
}
