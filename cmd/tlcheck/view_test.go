package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// svgBoxes parses a page or an SVG with encoding/xml and returns, per
// box id, its class attribute and its text, and the edges' classes keyed
// "from>to".
func svgBoxes(t *testing.T, data []byte) (map[string]string, map[string]string, map[string][]string) {
	t.Helper()
	class, text, edges := map[string]string{}, map[string]string{}, map[string][]string{}
	d := xml.NewDecoder(bytes.NewReader(data))
	cur := ""
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed: %v", err)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			a := map[string]string{}
			for _, at := range v.Attr {
				a[at.Name.Local] = at.Value
			}
			if v.Name.Local == "g" && strings.HasPrefix(a["class"], "node") {
				cur, depth = a["data-id"], 0
				class[cur] = a["class"]
			}
			if v.Name.Local == "g" && strings.HasPrefix(a["class"], "edge") {
				k := a["data-from"] + ">" + a["data-to"]
				edges[k] = append(edges[k], a["class"])
			}
			if cur != "" {
				depth++
			}
		case xml.EndElement:
			if cur != "" {
				if depth--; depth == 0 {
					cur = ""
				}
			}
		case xml.CharData:
			if cur != "" {
				text[cur] += string(v) + "|"
			}
		}
	}
	return class, text, edges
}

// The done-when command: the detached product is drawn cut and
// the leaf's gradient 2x = (6, −3) at x = (3, −3/2) is on the page; the
// same command gives the same bytes twice.
func TestViewDoneWhen(t *testing.T) {
	dir := t.TempDir()
	var pages [][]byte
	for i := 0; i < 2; i++ {
		out := filepath.Join(dir, "p.html")
		code, so, errs := runCmd("view", "--graph", examplePath("quad-detach.ir.json"), "--input", examplePath("quad.input.json"), "--what", "grads", "--out", out)
		if code != 0 || so != "" {
			t.Fatalf("exit %d\n%s\n%s", code, so, errs)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, b)
	}
	if !bytes.Equal(pages[0], pages[1]) {
		t.Fatal("the same command wrote different bytes")
	}
	class, text, edges := svgBoxes(t, pages[0])
	if !strings.Contains(text["0"], "ct = [6, -3]") {
		t.Errorf("leaf text %q", text["0"])
	}
	if !strings.Contains(class["3"], "detach") || !strings.Contains(class["2"], "unreached") {
		t.Errorf("detach box %q, product box %q", class["3"], class["2"])
	}
	if c := edges["2>3"]; len(c) != 1 || !strings.Contains(c[0], "cut") {
		t.Errorf("edge into detach: %v", c)
	}
}

// --what diff highlights the node that tlcheck diff names (the planted
// relu shift on the MLP example: node 2), exits 1 like diff, and still
// writes the page.
func TestViewDiffHighlightsDiffsNode(t *testing.T) {
	withHook(t, plantReluShift)
	viewDiffHook = plantReluShift
	t.Cleanup(func() { viewDiffHook = nil })
	args := []string{"--graph", examplePath("mlp.ir.json"), "--payload", examplePath("mlp.payload.json"), "--input", examplePath("mlp.input.json")}
	code, _, errs := runCmd(append([]string{"diff"}, args...)...)
	m := regexp.MustCompile(`at node (\d+) `).FindStringSubmatch(errs)
	if code != 1 || m == nil {
		t.Fatalf("diff: exit %d %q", code, errs)
	}
	out := filepath.Join(t.TempDir(), "d.svg")
	code, _, verrs := runCmd(append([]string{"view", "--what", "diff", "--format", "svg", "--out", out}, args...)...)
	if code != 1 || strings.Count(verrs, "\n") != 1 || !strings.Contains(verrs, "at node "+m[1]+" ") {
		t.Fatalf("view: exit %d %q (diff said node %s)", code, verrs, m[1])
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	class, text, _ := svgBoxes(t, b)
	var hl []string
	for id, c := range class {
		if strings.Contains(c, " hl") {
			hl = append(hl, id)
		}
	}
	if len(hl) != 1 || hl[0] != m[1] {
		t.Fatalf("highlighted %v, diff names node %s", hl, m[1])
	}
	// The first relu output is 5/16 on the IR path, 21/16 planted.
	if !strings.Contains(text[m[1]], "5/16") || !strings.Contains(text[m[1]], "21/16") {
		t.Errorf("highlighted box text %q", text[m[1]])
	}
}

// A disagreement nobody planted: x ⊙ detach(1/x) at x = (0, 2). Over f32
// the eager tape gives the input the cotangent detach(1/x) = +Inf at
// element 0, the lowered tape (which runs inv's VJP on a synthetic zero
// cotangent behind the detach) NaN; the view highlights the node diff
// names, with both values.
func TestViewDiffSingularPoint(t *testing.T) {
	args := []string{"--graph", filepath.Join("..", "..", "view", "testdata", "singular-detach.ir.json"), "--input", filepath.Join("..", "..", "view", "testdata", "singular.input.json")}
	code, _, errs := runCmd(append([]string{"diff"}, args...)...)
	m := regexp.MustCompile(`at node (\d+) `).FindStringSubmatch(errs)
	if code != 1 || m == nil || m[1] != "0" {
		t.Fatalf("diff: exit %d %q", code, errs)
	}
	out := filepath.Join(t.TempDir(), "d.html")
	if code, _, errs := runCmd(append([]string{"view", "--what", "diff", "--out", out}, args...)...); code != 1 {
		t.Fatalf("view: exit %d %q", code, errs)
	}
	b, _ := os.ReadFile(out)
	class, text, _ := svgBoxes(t, b)
	for id, c := range class {
		if strings.Contains(c, " hl") != (id == m[1]) {
			t.Errorf("box %s class %q", id, c)
		}
	}
	if !strings.Contains(text["0"], "tape: +Inf") || !strings.Contains(text["0"], "lowered-tape: NaN") {
		t.Errorf("highlighted box %q", text["0"])
	}
	if !bytes.Contains(b, []byte("f32 forward: ir ~ tape")) {
		t.Error("the agreeing comparisons are not listed")
	}
}

// Bad input: exit 2, one line on stderr, nothing written.
func TestViewBadInput(t *testing.T) {
	dir := t.TempDir()
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"format":"torchlean.ir.v1","nodes":[{"id":0,"kind":"frob"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	three := filepath.Join(dir, "three.json")
	if err := os.WriteFile(three, []byte(`{"shape":[3],"values":["1","2","3"]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	q, out := examplePath("quad.ir.json"), filepath.Join(dir, "o.html")
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--graph", q}, "--out is required"},
		{[]string{"--graph", q, "--out", "-"}, "--format dot only"},
		{[]string{"--out", out}, "--graph or --onnx is required"},
		{[]string{"--graph", q, "--onnx", "m.onnx", "--out", out}, "name two models; give one"},
		{[]string{"--graph", q, "--what", "grads", "--out", out}, "--what grads needs --input"},
		{[]string{"--graph", q, "--what", "frob", "--out", out}, "--what: unknown value"},
		{[]string{"--graph", q, "--format", "png", "--out", out}, "--format: unknown value"},
		{[]string{"--graph", q, "--fold", "0", "--out", out}, "--fold: unknown value"},
		{[]string{"--graph", junk, "--out", out}, "--graph " + junk},
		{[]string{"--graph", filepath.Join(dir, "none.json"), "--out", out}, "cannot read"},
		{[]string{"--graph", q, "--input", three, "--what", "grads", "--out", out}, "shape mismatch"},
		{[]string{"--onnx", filepath.Join(dir, "none.onnx"), "--out", out}, "--onnx"},
		{[]string{"--graph", q, "--out", filepath.Join(dir, "no", "such", "o.html")}, "cannot write"},
	}
	for _, c := range cases {
		code, so, errs := runCmd(append([]string{"view"}, c.args...)...)
		if code != 2 || so != "" || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q, want one line with %q", c.args, code, errs, c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a failing command wrote its output")
	}
}

// Every view in every format, on an IR example and on an imported ONNX
// model (when ../shared is there): exit 0, and the SVG and HTML parse.
func TestViewEveryViewAndFormat(t *testing.T) {
	dir := t.TempDir()
	srcs := [][]string{{"--graph", examplePath("quad.ir.json"), "--input", examplePath("quad.input.json")}}
	onnxModel := filepath.Join("..", "..", "..", "shared", "onnx", "simple", "test_gradient_of_add_and_mul", "model.onnx")
	if _, err := os.Stat(onnxModel); err == nil {
		srcs = append(srcs, []string{"--onnx", onnxModel})
	} else {
		t.Logf("skipping the ONNX source: %s not found (../shared is not there)", onnxModel)
	}
	for _, src := range srcs {
		for _, what := range []string{"tape", "grads", "trace", "diff"} {
			if what != "tape" && src[0] == "--onnx" {
				continue // no input tensor file ships for it
			}
			for _, f := range []string{"dot", "svg", "html"} {
				out := filepath.Join(dir, what+"."+f)
				code, _, errs := runCmd(append(append([]string{"view"}, src...), "--what", what, "--format", f, "--out", out)...)
				if code != 0 {
					t.Fatalf("%v %s %s: exit %d %s", src, what, f, code, errs)
				}
				b, _ := os.ReadFile(out)
				if f == "dot" {
					if !bytes.HasPrefix(b, []byte("digraph tlcheck {")) {
						t.Errorf("%s dot: %.40q", what, b)
					}
					continue
				}
				class, _, _ := svgBoxes(t, b)
				if len(class) == 0 {
					t.Errorf("%v %s %s: no boxes", src, what, f)
				}
			}
		}
	}
}

// When Graphviz is installed, every view's DOT file renders with it.
func TestViewDotRendersWithGraphviz(t *testing.T) {
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz dot is not on PATH (apt-get install graphviz): the DOT output is not rendered")
	}
	dir := t.TempDir()
	for _, what := range []string{"tape", "grads", "trace", "diff"} {
		out := filepath.Join(dir, what+".dot")
		if code, _, errs := runCmd("view", "--graph", examplePath("quad-detach.ir.json"), "--input", examplePath("quad.input.json"), "--what", what, "--format", "dot", "--out", out); code != 0 {
			t.Fatalf("%s: %s", what, errs)
		}
		svg, err := exec.Command(dot, "-Tsvg", out).CombinedOutput()
		if err != nil || !bytes.Contains(svg, []byte("<svg")) {
			t.Errorf("%s: dot -Tsvg: %v\n%.300s", what, err, svg)
		}
	}
}

// The done-when page in headless Chromium: its script runs to its end
// (the body is marked data-js="ready" in the DOM Chromium dumps), the
// console logs no error, and the screenshot is not blank. With
// TLCHECK_VIEW_SCREENSHOT=FILE the screenshot is also written there (the
// README's picture is made so).
func TestViewInChromium(t *testing.T) {
	skipUnlessExhaustive(t, "starts Chromium; ci/stage-workflows.sh runs it")
	if testing.Short() {
		t.Skip("short: no browser")
	}
	var browser string
	for _, n := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(n); err == nil {
			browser = p
			break
		}
	}
	if browser == "" {
		t.Skip("no headless Chromium on PATH (apt-get install chromium): the page is not rendered in a browser")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "grads.html")
	if code, _, errs := runCmd("view", "--graph", examplePath("quad-detach.ir.json"), "--input", examplePath("quad.input.json"), "--what", "grads", "--out", page); code != 0 {
		t.Fatal(errs)
	}
	abs, _ := filepath.Abs(page)
	url := "file://" + abs
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	common := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--user-data-dir=" + filepath.Join(dir, "profile")}
	dom, err := exec.CommandContext(ctx, browser, append(common, "--dump-dom", url)...).Output()
	if err != nil {
		t.Skipf("%s cannot run here: %v", browser, err)
	}
	if !bytes.Contains(dom, []byte(`data-js="ready"`)) {
		t.Errorf("the page's script did not run to its end")
	}
	shot := filepath.Join(dir, "shot.png")
	cmd := exec.CommandContext(ctx, browser, append(common, "--enable-logging=stderr", "--v=0", "--window-size=1100,900", "--screenshot="+shot, url)...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Run(); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, logs.String())
	}
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "CONSOLE") && (strings.Contains(l, "ERROR") || strings.Contains(l, "Uncaught")) {
			t.Errorf("console: %s", l)
		}
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// Non-blank: a fair share of pixels differ from the top-left one (the
	// background), as text, boxes and edges do.
	r0, g0, b0, _ := img.At(0, 0).RGBA()
	bd := img.Bounds()
	diff, total := 0, 0
	for y := bd.Min.Y; y < bd.Max.Y; y += 2 {
		for x := bd.Min.X; x < bd.Max.X; x += 2 {
			r, g, b, _ := img.At(x, y).RGBA()
			total++
			if r != r0 || g != g0 || b != b0 {
				diff++
			}
		}
	}
	if diff*100 < total {
		t.Errorf("screenshot looks blank: %d of %d sampled pixels differ from the background", diff, total)
	}
	if dst := os.Getenv("TLCHECK_VIEW_SCREENSHOT"); dst != "" {
		b, _ := os.ReadFile(shot)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Text inside its boxes, as the browser lays it out: the page above
	// and an ONNX model's grads view (long labels, parameter boxes).
	pages := []string{page}
	m, d := onnxFixture(t)
	bn := filepath.Join("..", "..", "..", "shared", "onnx", "pytorch-converted", "test_BatchNorm1d_3d_input_eval")
	if _, err := os.Stat(bn); err == nil {
		m, d = filepath.Join(bn, "model.onnx"), filepath.Join(bn, "test_data_set_0")
	}
	for _, what := range []string{"tape", "grads"} {
		p := filepath.Join(dir, "onnx-"+what+".html")
		if code, _, errs := runCmd("view", "--onnx", m, "--data", d, "--what", what, "--out", p); code != 0 {
			t.Fatal(errs)
		}
		pages = append(pages, p)
	}
	for _, p := range pages {
		n, detail := overflowInChromium(ctx, t, browser, common, p)
		if n != 0 {
			t.Errorf("%s: %d labels leave their boxes in Chromium:\n%s", filepath.Base(p), n, detail)
		}
	}
}

// measureJS measures, in the browser, every label of every box: each
// <text>'s getBBox() (the glyph cells of the fonts Chromium chose) must lie
// inside its box's <rect>. It writes the count to the body's data-overflow
// and the offenders, one a line, into <pre id="overflow">.
const measureJS = `<script>(function(){var bad=[];
document.querySelectorAll('g.node').forEach(function(g){var r=g.querySelector('rect').getBBox();
g.querySelectorAll('text').forEach(function(t){var b=t.getBBox();
if(b.x<r.x||b.y<r.y||b.x+b.width>r.x+r.width||b.y+b.height>r.y+r.height)bad.push(g.getAttribute('data-id')+': '+t.textContent+' ['+[b.x,b.y,b.width,b.height].join(',')+'] in ['+[r.x,r.y,r.width,r.height].join(',')+']');});});
var p=document.createElement('pre');p.id='overflow';p.textContent=bad.join('\n');document.body.appendChild(p);
document.body.setAttribute('data-overflow',String(bad.length));})();</script>`

// overflowInChromium loads page with measureJS added before </body> and
// returns the number of labels outside their boxes and which.
func overflowInChromium(ctx context.Context, t *testing.T, browser string, common []string, page string) (int, string) {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	measured := strings.TrimSuffix(page, ".html") + ".measured.html"
	if err := os.WriteFile(measured, bytes.Replace(b, []byte("</body>"), []byte(measureJS+"</body>"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(measured)
	dom, err := exec.CommandContext(ctx, browser, append(common, "--dump-dom", "file://"+abs)...).Output()
	if err != nil {
		t.Fatalf("%s --dump-dom %s: %v", browser, measured, err)
	}
	mm := regexp.MustCompile(`data-overflow="(\d+)"`).FindSubmatch(dom)
	if mm == nil {
		t.Fatalf("%s: the measuring script did not run", filepath.Base(page))
	}
	n, _ := strconv.Atoi(string(mm[1]))
	detail := ""
	if i := bytes.Index(dom, []byte(`<pre id="overflow">`)); i >= 0 {
		detail = string(dom[i:min(len(dom), i+2000)])
	}
	return n, detail
}
