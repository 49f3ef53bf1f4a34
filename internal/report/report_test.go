package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestWrite(t *testing.T) {
	d := &Data{Tool: "tlcheck x", RegistryHash: "abc", Certificates: "c", Holds: false,
		Stages:      []Stage{{Name: "check", Items: 3, Failures: 1, Seconds: 0.5}},
		Failures:    []string{"check: mul/adjointness: boom\nsecond line"},
		Refinements: []Refinement{{Provider: "fast_cpu", Op: "sum", Capsule: "fast_cpu.sum", Policy: "implementation-defined", Cases: 3, Ratios: []float64{0.1, 0.5, 0.3}, Worst: 0.5, Holds: true}}}
	var b bytes.Buffer
	if err := Markdown(&b, d); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"**FAILS**", "| check | 3 | 1 | 0.50 |", "boom second line", "| fast_cpu | sum | fast_cpu.sum | implementation-defined | 3 | 0.5 | 0.3 | true |"} {
		if !strings.Contains(md, want) {
			t.Errorf("summary lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := Write(dir, d); err != nil {
		t.Fatal(err)
	}
	pic, err := os.ReadFile(filepath.Join(dir, PlotName))
	if err != nil || !bytes.HasPrefix(pic, []byte("<svg ")) {
		t.Fatalf("plot: %v", err)
	}
	checkSVG(t, pic)
}

// TestPlotClipsOffScaleRatios: a planted fault's ratio (4.3e5), a
// non-finite one (+Inf, NaN) are drawn at the clip line with their value,
// every point lies below the legend band, each colour has a legend entry,
// and the summary and the plot print the same worst value.
func TestPlotClipsOffScaleRatios(t *testing.T) {
	rs := []Refinement{
		{Provider: "reference", Op: "sum", Capsule: "reference.sum", Policy: "fixed-left", Cases: 2, Ratios: []float64{0, 0}, Worst: 0, Holds: true},
		{Provider: "fast_cpu", Op: "matmul", Capsule: "fast_cpu.matmul", Policy: "implementation-defined", Cases: 5,
			Ratios: []float64{0.25, 430000, math.Inf(1), math.NaN(), 1.1}, Worst: math.Inf(1), Holds: false},
	}
	lay := LayoutOf(rs)
	var clipped []string
	for _, p := range lay.Points {
		if p.Y > ClipAt || p.Y >= LegendFrom || p.Y < 0 {
			t.Errorf("point %+v outside [0, %v]: it could sit under the legend", p, ClipAt)
		}
		if p.Clipped {
			if p.Y != ClipAt {
				t.Errorf("clipped point %+v not at the clip line", p)
			}
			clipped = append(clipped, p.Label)
		}
	}
	// 1.1 fails but is on scale; 4.3e5, +Inf and NaN are clipped.
	if got, want := strings.Join(clipped, ","), "4.3e+05,+Inf,NaN"; got != want {
		t.Errorf("clipped labels %q, want %q", got, want)
	}
	if lay.Notes[0] != "" || lay.Notes[1] != "3 clipped, worst +Inf" {
		t.Errorf("notes %q, want none for the reference column and \"3 clipped, worst +Inf\"", lay.Notes)
	}
	if len(lay.Legend) != 4 {
		t.Errorf("legend %q: want one entry per colour and mark", lay.Legend)
	}
	var b bytes.Buffer
	if err := Markdown(&b, &Data{Refinements: rs}); err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		w := FormatRatio(r.Worst)
		if !strings.HasSuffix(lay.Columns[i], "worst "+w) {
			t.Errorf("column %q does not show the worst ratio %s", lay.Columns[i], w)
		}
		if row := "| " + r.Provider + " | " + r.Op + " | " + r.Capsule + " | " + r.Policy + " | " + fmt.Sprint(r.Cases) + " | " + w + " |"; !strings.Contains(b.String(), row) {
			t.Errorf("summary lacks %q:\n%s", row, b.String())
		}
	}
	pic := []byte(SVG(rs))
	checkSVG(t, pic)
	if !strings.Contains(string(pic), ">3 clipped, worst +Inf</text>") || strings.Count(string(pic), "<path d=") != 3+1 {
		t.Errorf("the SVG lacks the clipped note or the three clipped marks (+1 in the legend):\n%s", pic)
	}
}

// checkSVG parses the picture as XML and checks that every data point
// (a circle, or a clipped triangle with a title) lies inside the plot
// rectangle, above the column labels and the legend band.
func checkSVG(t *testing.T, pic []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(pic))
	bottom := float64(svgTop + svgPlotH)
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "circle" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local != "cy" {
				continue
			}
			cy, _ := strconv.ParseFloat(a.Value, 64)
			inLegend := cy > bottom+float64(svgLabelH)-svgLegendRow
			if !inLegend && (cy < svgTop || cy > bottom) {
				t.Errorf("a point at y = %v lies outside the plot [%d, %v]", cy, svgTop, bottom)
			}
		}
	}
}

func TestFormatRatio(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.123456, "0.123"}, {430000, "4.3e+05"}, {math.Inf(1), "+Inf"}, {math.NaN(), "NaN"}} {
		if got := FormatRatio(c.v); got != c.want {
			t.Errorf("FormatRatio(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}
