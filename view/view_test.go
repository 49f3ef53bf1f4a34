package view

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/diffrun"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

func readGraph(t *testing.T, name string) *irsem.Graph {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	g, err := irsem.ReadGraph(f)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func graphOf(t testing.TB, js string) *irsem.Graph {
	t.Helper()
	g, err := irsem.ReadGraph(strings.NewReader(js))
	if err != nil {
		t.Fatalf("%v\n%s", err, js)
	}
	return g
}

// quadX is the chapter's x = (3, −3/2).
func quadX() spec.Tensor[spec.Rat] {
	return spec.Vector(spec.NewRat(3, 1), spec.NewRat(-3, 2))
}

// elem is one parsed SVG element: its name, attributes, the text of its
// <text> children and its own children.
type elem struct {
	Name  string
	Attr  map[string]string
	Texts []string
	Kids  []*elem
}

func (e *elem) class(c string) bool {
	for _, f := range strings.Fields(e.Attr["class"]) {
		if f == c {
			return true
		}
	}
	return false
}

// parseXML parses a whole document strictly with encoding/xml.
func parseXML(t *testing.T, data []byte) *elem {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(data))
	root := &elem{Name: "#doc"}
	stack := []*elem{root}
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
			e := &elem{Name: v.Name.Local, Attr: map[string]string{}}
			for _, a := range v.Attr {
				e.Attr[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.Kids = append(top.Kids, e)
			stack = append(stack, e)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			top := stack[len(stack)-1]
			top.Texts = append(top.Texts, string(v))
		}
	}
	if len(stack) != 1 {
		t.Fatalf("unclosed elements: %d", len(stack)-1)
	}
	return root
}

func (e *elem) all(name, class string) []*elem {
	var out []*elem
	var walk func(*elem)
	walk = func(x *elem) {
		if x.Name == name && (class == "" || x.class(class)) {
			out = append(out, x)
		}
		for _, k := range x.Kids {
			walk(k)
		}
	}
	walk(e)
	return out
}

// text is the concatenated text of every <text> under e, lines joined
// by "|".
func (e *elem) text() string {
	var parts []string
	for _, t := range e.all("text", "") {
		parts = append(parts, strings.Join(t.Texts, ""))
	}
	return strings.Join(parts, "|")
}

// picture is an SVG parsed into its boxes (by data-id) and edges.
type picture struct {
	nodes map[string]*elem
	edges []*elem
}

func svgOf(t *testing.T, m *Model) (picture, []byte) {
	t.Helper()
	var b bytes.Buffer
	if err := SVG(&b, m, Place(m)); err != nil {
		t.Fatal(err)
	}
	root := parseXML(t, b.Bytes())
	p := picture{nodes: map[string]*elem{}}
	for _, n := range root.all("g", "node") {
		p.nodes[n.Attr["data-id"]] = n
	}
	p.edges = root.all("g", "edge")
	return p, b.Bytes()
}

func (p picture) edgesBetween(from, to int) []*elem {
	var out []*elem
	for _, e := range p.edges {
		if e.Attr["data-from"] == fmt.Sprint(from) && e.Attr["data-to"] == fmt.Sprint(to) {
			out = append(out, e)
		}
	}
	return out
}

// The tape view of the chapter's two examples: every node a box, every
// parent slot an edge (x⊙x's two slots as two "dup" curves), the detach
// node and the edge into it drawn distinctly. Expected counts are read off
// the example files by hand.
func TestTapeView(t *testing.T) {
	cases := []struct {
		file         string
		nodes, edges int
		dups, cuts   int
		detach       string
	}{
		// quad: 1:[0,0] 2:[0,0] 3:[1,2] 4:[3] → 2+2+2+1 = 7 edges, 4 of them duplicate slots.
		{"quad.ir.json", 5, 7, 4, 0, ""},
		// quad-detach: 1:[0,0] 2:[0,0] 3:[2] 4:[1,3] 5:[4] → 2+2+1+2+1 = 8 edges, cut 2→3.
		{"quad-detach.ir.json", 6, 8, 4, 1, "3"},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m, err := FromGraph(readGraph(t, c.file), nil)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := svgOf(t, m)
			if len(p.nodes) != c.nodes || len(p.edges) != c.edges {
				t.Fatalf("%d boxes %d edges, want %d %d", len(p.nodes), len(p.edges), c.nodes, c.edges)
			}
			dups, cuts := 0, 0
			for _, e := range p.edges {
				if e.class("dup") {
					dups++
				}
				if e.class("cut") {
					cuts++
					if e.Attr["data-to"] != c.detach || !strings.Contains(e.text(), "cut") {
						t.Errorf("cut edge %v, text %q", e.Attr, e.text())
					}
				}
			}
			if dups != c.dups || cuts != c.cuts {
				t.Errorf("dup %d cut %d, want %d %d", dups, cuts, c.dups, c.cuts)
			}
			// Both slots of node 1 read node 0, and they are drawn apart.
			two := p.edgesBetween(0, 1)
			if len(two) != 2 || two[0].Attr["data-slot"] != "0" || two[1].Attr["data-slot"] != "1" {
				t.Fatalf("edges 0→1: %v", two)
			}
			if two[0].Kids[0].Attr["d"] == two[1].Kids[0].Attr["d"] {
				t.Errorf("the two slots of node 1 are drawn as one curve %q", two[0].Kids[0].Attr["d"])
			}
			for id, n := range p.nodes {
				if n.class("detach") != (id == c.detach) {
					t.Errorf("box %s: detach class %v", id, n.class("detach"))
				}
				if !strings.HasPrefix(n.text(), "#"+id+" ") {
					t.Errorf("box %s label %q", id, n.text())
				}
			}
		})
	}
}

func gradsModel(t *testing.T, file string) *Model {
	t.Helper()
	g := readGraph(t, file)
	m, err := FromGraph(g, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.What = Grads
	if err := AddGrads(m, g, nil, quadX()); err != nil {
		t.Fatal(err)
	}
	return m
}

// The grads view of the chapter's sentence: in the branched example both
// products contribute to the leaf (each slot of each product carries
// ct⊙x = (3, −3/2), the leaf's cotangent is 4x = (12, −6)); with detach
// the second product is still drawn but unreached, contributes nothing,
// the edge into detach is cut, and the leaf's cotangent is 2x = (6, −3).
// Expected values are the closed forms 4x and 2x at x = (3, −3/2).
func TestGradsView(t *testing.T) {
	cases := []struct {
		file      string
		leaf      string
		unreached []string
		// contributing lists the products whose two slots carry x.
		contributing, silent []int
	}{
		{"quad.ir.json", "[12, -6]", nil, []int{1, 2}, nil},
		{"quad-detach.ir.json", "[6, -3]", []string{"2", "3"}, []int{1}, []int{2}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			p, _ := svgOf(t, gradsModel(t, c.file))
			leaf := p.nodes["0"].text()
			if !strings.Contains(leaf, "ct = "+c.leaf+" (Σ of 4)") && !strings.Contains(leaf, "ct = "+c.leaf) {
				t.Errorf("leaf label %q, want ct = %s", leaf, c.leaf)
			}
			for id, n := range p.nodes {
				want := false
				for _, u := range c.unreached {
					want = want || u == id
				}
				if n.class("unreached") != want || n.class("reached") == want {
					t.Errorf("box %s: unreached %v, want %v (%q)", id, n.class("unreached"), want, n.text())
				}
				if want && (!strings.Contains(n.text(), "unreached") || strings.Contains(n.text(), "ct =")) {
					t.Errorf("unreached box %s label %q", id, n.text())
				}
			}
			for _, prod := range c.contributing {
				es := p.edgesBetween(0, prod)
				for _, e := range es {
					if !e.class("contrib") || e.text() != "+[3, -3/2]" {
						t.Errorf("edge 0→%d slot %s: contrib %v text %q, want +[3, -3/2]", prod, e.Attr["data-slot"], e.class("contrib"), e.text())
					}
				}
			}
			for _, prod := range c.silent {
				for _, e := range p.edgesBetween(0, prod) {
					if e.class("contrib") {
						t.Errorf("edge 0→%d carries %q behind a detach", prod, e.text())
					}
				}
			}
			// The accumulation at the leaf: it received as many
			// contributions as contributing slots, and says so.
			want := fmt.Sprintf("(Σ of %d)", 2*len(c.contributing))
			if !strings.Contains(leaf, want) {
				t.Errorf("leaf label %q lacks %s", leaf, want)
			}
		})
	}
	// The detach's reader had its contribution dropped, and says so.
	p, _ := svgOf(t, gradsModel(t, "quad-detach.ir.json"))
	if es := p.edgesBetween(3, 4); len(es) != 1 || !es[0].class("dropped") || es[0].class("contrib") {
		t.Errorf("edge 3→4: %v", es)
	}
}

// The trace view numbers the nodes whose backward ran in the order the
// dense sweep ran them: from the last node down (sum, add, products),
// skipping the unreached ones; the leaf has no backward.
func TestTraceView(t *testing.T) {
	cases := []struct {
		file  string
		steps map[string]string
	}{
		{"quad.ir.json", map[string]string{"4": "step 1", "3": "step 2", "2": "step 3", "1": "step 4", "0": "reached, no backward"}},
		{"quad-detach.ir.json", map[string]string{"5": "step 1", "4": "step 2", "1": "step 3", "3": "unreached", "2": "unreached", "0": "reached, no backward"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			m := gradsModel(t, c.file)
			m.What = Trace
			p, _ := svgOf(t, m)
			for id, want := range c.steps {
				lines := strings.Split(p.nodes[id].text(), "|")
				if lines[len(lines)-1] != want {
					t.Errorf("box %s: %q, want %q", id, lines[len(lines)-1], want)
				}
			}
		})
	}
}

// A folded chain keeps the traversal: input → 5 relus → sum folds the
// relus (ids 1…5) into one box; the sweep runs sum (step 1), then the
// relus from #5 (step 2) down to #1 (step 6).
func TestFoldedTrace(t *testing.T) {
	g := graphOf(t, chainGraph(5))
	m, _ := FromGraph(g, nil)
	m.What = Trace
	if err := AddGrads(m, g, nil, quadX()); err != nil {
		t.Fatal(err)
	}
	if m.Fold(2) != 5 {
		t.Fatal("not folded")
	}
	p, _ := svgOf(t, m)
	if txt := p.nodes["1"].text(); !strings.HasSuffix(txt, "|steps 2…6") {
		t.Errorf("fold box %q", txt)
	}
	if txt := p.nodes["6"].text(); !strings.HasSuffix(txt, "|step 1") {
		t.Errorf("output box %q", txt)
	}
}

// checkSum accepts the contributions the leaf of the chapter's example
// receives and catches a planted wrong one (one slot off by 1/2).
func TestCheckSum(t *testing.T) {
	x := quadX()
	ct := spec.ScaleT(spec.NewRat(4, 1), x)
	good := []spec.Tensor[spec.Rat]{x, x, x, x}
	if err := checkSum(ct, good); err != nil {
		t.Fatalf("good: %v", err)
	}
	bad := []spec.Tensor[spec.Rat]{x, x, x, spec.Vector(spec.NewRat(3, 1), spec.NewRat(-1, 1))}
	if err := checkSum(ct, bad); err == nil || !strings.Contains(err.Error(), "sum to") {
		t.Fatalf("planted: %v", err)
	}
	for _, sc := range []string{"f32", "f64"} {
		g := readGraph(t, "quad.ir.json")
		m, _ := FromGraph(g, nil)
		var err error
		if sc == "f32" {
			err = AddGrads(m, g, nil, spec.Vector(spec.F32(0.1), spec.F32(-0.7)))
		} else {
			err = AddGrads(m, g, nil, spec.Vector(spec.F64(0.1), spec.F64(-0.7)))
		}
		if err != nil {
			t.Errorf("%s: %v", sc, err)
		}
	}
	// Over f64 the drawn contributions of random graphs add up to the
	// sweep's cotangents bit for bit (AddGrads would fail otherwise).
	for seed := int64(1); seed <= 6; seed++ {
		g := graphOf(t, randomGraph(30, seed))
		m, _ := FromGraph(g, nil)
		if err := AddGrads(m, g, nil, spec.Vector(spec.F64(0.1), spec.F64(-0.7))); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
}

// reluGraph is input → relu → sum over [2].
const reluGraph = `{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
 {"id":0,"kind":"input","parents":[],"shape":[2]},
 {"id":1,"kind":"relu","parents":[0],"shape":[2]},
 {"id":2,"kind":"sum","parents":[1],"shape":[]}]}`

// plantReluShift makes relu's forward add 1 on the typed-graph path over
// Rat, so that ir and typed-graph disagree at node 1.
func plantReluShift(scalar, path string, reg any) {
	r, ok := reg.(*spec.Registry[spec.Rat])
	if !ok || path != "typed-graph" {
		return
	}
	p, _ := r.Lookup("relu")
	bad, orig := *p, p.Forward
	bad.Forward = func(a *spec.Attrs, xs []spec.Tensor[spec.Rat]) (spec.Tensor[spec.Rat], error) {
		y, err := orig(a, xs)
		if err != nil {
			return y, err
		}
		return spec.MapPure(y, func(v spec.Rat) spec.Rat { return v.Add(spec.NewRat(1, 1)) }), nil
	}
	r.Override(&bad)
}

// The diff view highlights exactly the node DiffIR names (relu, node 1,
// with x = (3, −3/2): relu gives 3 on the IR path and 3+1 = 4 on the
// planted one), shows both values and lists the agreeing comparisons; with
// no fault planted nothing is highlighted.
func TestDiffView(t *testing.T) {
	x := quadX()
	for _, planted := range []bool{true, false} {
		g := graphOf(t, reluGraph)
		m, err := FromGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.What = Diff
		o := diffrun.DiffOptions{}
		if planted {
			o.RegistryHook = plantReluShift
		}
		rep, err := AddDiff(m, g, nil, x, o)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := svgOf(t, m)
		var hl []string
		for id, n := range p.nodes {
			if n.class("hl") {
				hl = append(hl, id)
			}
		}
		if !planted {
			if len(hl) != 0 || m.Diff.Found || len(m.Diff.Agree) != len(rep.Checks) {
				t.Errorf("no fault: highlighted %v, found %v", hl, m.Diff.Found)
			}
			continue
		}
		if len(hl) != 1 || hl[0] != "1" || rep.First().Failure.Node != 1 {
			t.Fatalf("highlighted %v, DiffIR names %d", hl, rep.First().Failure.Node)
		}
		txt := p.nodes["1"].text()
		if !strings.Contains(txt, "ir: ") || !strings.Contains(txt, "typed-graph: ") || !strings.Contains(m.Diff.LHS+m.Diff.RHS, "4") {
			t.Errorf("highlighted label %q, values %q %q", txt, m.Diff.LHS, m.Diff.RHS)
		}
		if len(m.Diff.Agree) == 0 || len(m.Diff.Agree) != len(rep.Checks)-1 {
			t.Errorf("agree %v of %d checks", m.Diff.Agree, len(rep.Checks))
		}
	}
}

// chainGraph is input → n relu nodes → sum.
func chainGraph(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":"torchlean.ir.v1","input_id":0,"output_id":%d,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]}`, n+1)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `,{"id":%d,"kind":"relu","parents":[%d],"shape":[2]}`, i, i-1)
	}
	fmt.Fprintf(&b, `,{"id":%d,"kind":"sum","parents":[%d],"shape":[]}]}`, n+1, n)
	return b.String()
}

// A 10⁴-node chain folds into input, one box for the 10⁴ relus, and the
// output: three boxes, two edges, and the page says 10000 were folded.
// Small graphs are not folded by default.
func TestChainFolds(t *testing.T) {
	cases := []struct {
		n, run         int
		boxes, folded  int
		summaryFolding bool
	}{
		{10000, 0, 3, 10000, true},
		{5, 0, 7, 0, false},  // below FoldAuto: nothing folded
		{5, 2, 3, 5, true},   // forced
		{5, -1, 7, 0, false}, // off
		{2, 3, 4, 0, false},  // run shorter than asked
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.n, "/", c.run), func(t *testing.T) {
			g := graphOf(t, chainGraph(c.n))
			m, err := FromGraph(g, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Fold(c.run); got != c.folded {
				t.Fatalf("folded %d, want %d", got, c.folded)
			}
			var b bytes.Buffer
			if err := HTML(&b, m, Place(m)); err != nil {
				t.Fatal(err)
			}
			root := parseXML(t, b.Bytes())
			boxes := root.all("g", "node")
			if len(boxes) != c.boxes || len(root.all("g", "edge")) != c.boxes-1 {
				t.Fatalf("%d boxes %d edges, want %d %d", len(boxes), len(root.all("g", "edge")), c.boxes, c.boxes-1)
			}
			if got := strings.Contains(b.String(), fmt.Sprintf("%d nodes folded", c.folded)); got != c.summaryFolding {
				t.Errorf("summary mentions folding: %v", got)
			}
			if c.folded > 0 {
				f := root.all("g", "fold")
				if len(f) != 1 || !strings.Contains(strings.Join(f[0].all("title", "")[0].Texts, ""), fmt.Sprintf("%d × relu folded", c.folded)) {
					t.Errorf("fold box: %v", f)
				}
			}
			if b.Len() > 64<<10 && c.n == 10000 {
				t.Errorf("folded chain page is %d bytes", b.Len())
			}
		})
	}
}

// randomGraph builds a random DAG of n nodes of add, mul_elem, relu,
// detach (shape [2]), ending in sum: parents are earlier nodes, sometimes
// the same one twice.
func randomGraph(n int, seed int64) string {
	r := rand.New(rand.NewSource(seed))
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":"torchlean.ir.v1","input_id":0,"output_id":%d,"nodes":[{"id":0,"kind":"input","parents":[],"shape":[2]}`, n-1)
	for i := 1; i < n-1; i++ {
		switch k := r.Intn(4); k {
		case 0, 1:
			op := []string{"add", "mul_elem"}[k]
			fmt.Fprintf(&b, `,{"id":%d,"kind":"%s","parents":[%d,%d],"shape":[2]}`, i, op, r.Intn(i), r.Intn(i))
		case 2:
			fmt.Fprintf(&b, `,{"id":%d,"kind":"relu","parents":[%d],"shape":[2]}`, i, r.Intn(i))
		default:
			fmt.Fprintf(&b, `,{"id":%d,"kind":"detach","parents":[%d],"shape":[2]}`, i, r.Intn(i))
		}
	}
	fmt.Fprintf(&b, `,{"id":%d,"kind":"sum","parents":[%d],"shape":[]}]}`, n-1, n-2)
	return b.String()
}

// On random graphs the picture has one box per node and one edge per
// parent slot, and the unreached marks are exactly the nodes the tape's
// rules leave without a cotangent, computed here from those rules alone
// (package tape: a node requires a gradient when it is the input leaf or,
// not being a detach, one of its parents does; a cotangent reaches a node
// when it is the output (the seed) or, requiring a gradient, a reached reader other
// than a detach reads it); every reached node other than the output sent a contribution
// along some edge, every unreached one along none; and the bytes do not
// change from one rendering to the next.
func TestRandomGraphs(t *testing.T) {
	for seed := int64(1); seed <= 6; seed++ {
		g := graphOf(t, randomGraph(30, seed))
		m, err := FromGraph(g, nil)
		if err != nil {
			t.Fatal(err)
		}
		m.What = Grads
		if err := AddGrads(m, g, nil, quadX()); err != nil {
			t.Fatal(err)
		}
		slots := 0
		for _, n := range g.Nodes {
			slots += len(n.Parents)
		}
		rg := make([]bool, len(g.Nodes))
		for i, n := range g.Nodes {
			rg[i] = i == g.InputID
			for _, p := range n.Parents {
				rg[i] = rg[i] || (n.Kind.Op != "detach" && rg[p])
			}
		}
		reach := make([]bool, len(g.Nodes))
		reach[g.OutputID] = true // the seed is placed on the output whatever it requires
		for i := len(g.Nodes) - 1; i >= 0; i-- {
			if !reach[i] || g.Nodes[i].Kind.Op == "detach" {
				continue
			}
			for _, p := range g.Nodes[i].Parents {
				reach[p] = reach[p] || rg[p]
			}
		}
		p, first := svgOf(t, m)
		if len(p.nodes) != len(g.Nodes) || len(p.edges) != slots {
			t.Fatalf("seed %d: %d boxes %d edges, want %d %d", seed, len(p.nodes), len(p.edges), len(g.Nodes), slots)
		}
		sent := map[string]bool{}
		for _, e := range p.edges {
			if e.class("contrib") {
				sent[e.Attr["data-to"]] = true
			}
		}
		for i := range g.Nodes {
			id := fmt.Sprint(i)
			n := p.nodes[id]
			if n.class("unreached") == reach[i] {
				t.Errorf("seed %d node %d (%s): unreached mark %v, reachable %v", seed, i, g.Nodes[i].Kind.Op, n.class("unreached"), reach[i])
			}
			if i != g.OutputID && g.Nodes[i].Kind.Op != "detach" && len(g.Nodes[i].Parents) > 0 && sent[id] != reach[i] {
				t.Errorf("seed %d node %d: sent a contribution %v, reachable %v", seed, i, sent[id], reach[i])
			}
		}
		_, again := svgOf(t, m)
		if !bytes.Equal(first, again) {
			t.Errorf("seed %d: two renderings differ", seed)
		}
	}
}

// The HTML page is well-formed, self-contained (no src or href to
// anything, no URL but the SVG namespace), carries the inline SVG, a
// table row per box and the legend, and is byte-identical across runs.
func TestHTMLSelfContained(t *testing.T) {
	render := func() []byte {
		m := gradsModel(t, "quad-detach.ir.json")
		var b bytes.Buffer
		if err := HTML(&b, m, Place(m)); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	page := render()
	if !bytes.Equal(page, render()) {
		t.Fatal("two renderings differ")
	}
	root := parseXML(t, page)
	var walk func(*elem)
	walk = func(e *elem) {
		for k, v := range e.Attr {
			if k == "src" || k == "href" || (strings.Contains(v, "://") && !(e.Name == "svg" && k == "xmlns")) {
				t.Errorf("<%s %s=%q> refers outside the page", e.Name, k, v)
			}
		}
		for _, c := range e.Kids {
			walk(c)
		}
	}
	walk(root)
	if n := len(root.all("svg", "")); n != 1 {
		t.Errorf("%d inline svg", n)
	}
	if n := len(root.all("script", "")); n != 1 {
		t.Errorf("%d scripts", n)
	}
	rows := root.all("tr", "")
	if len(rows) != 1+6 {
		t.Errorf("%d table rows, want header + 6", len(rows))
	}
	if bytes.Contains(page, []byte("@import")) || bytes.Contains(page, []byte("url(http")) {
		t.Error("page loads a resource")
	}
}

// Model.Check refuses a picture over the size limit, and every renderer
// passes that refusal on instead of writing.
func TestSizeLimit(t *testing.T) {
	m := &Model{What: Tape, Nodes: make([]Node, MaxBoxes+1)}
	for i := range m.Nodes {
		m.Nodes[i].ID = i
	}
	var b bytes.Buffer
	for name, f := range map[string]func() error{
		"dot":  func() error { return DOT(&b, m) },
		"svg":  func() error { return SVG(&b, m, &Layout{}) },
		"html": func() error { return HTML(&b, m, &Layout{}) },
	} {
		if err := f(); err == nil || !strings.Contains(err.Error(), "limit") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if b.Len() != 0 {
		t.Errorf("wrote %d bytes", b.Len())
	}
}

// Layout puts every parent in a layer above its readers (longest-path
// layering), no two boxes or waypoints of a layer on top of each other,
// and gives an edge that crosses layers one waypoint per crossed layer.
func TestLayoutLayers(t *testing.T) {
	g := graphOf(t, randomGraph(200, 7))
	m, _ := FromGraph(g, nil)
	lay := Place(m)
	for _, e := range m.Edges {
		if lay.Layer[e.From] >= lay.Layer[e.To] || lay.At[e.From].Y >= lay.At[e.To].Y {
			t.Fatalf("edge %d→%d: layers %d %d", e.From, e.To, lay.Layer[e.From], lay.Layer[e.To])
		}
	}
	for _, row := range lay.Order {
		for k := 1; k < len(row); k++ {
			w := NodeW
			if row[k-1] >= len(m.Nodes) {
				w = DummyW
			}
			if lay.At[row[k]].X < lay.At[row[k-1]].X+w {
				t.Fatalf("boxes %d and %d overlap", row[k-1], row[k])
			}
		}
	}
	for i, e := range m.Edges {
		span := lay.Layer[e.To] - lay.Layer[e.From]
		if r := lay.Route[i]; len(r) != 0 && len(r) != span-1 {
			t.Errorf("edge %d→%d crosses %d layers with %d waypoints", e.From, e.To, span-1, len(r))
		}
	}
	// quad-detach: #1 (layer 1) feeds #4 (layer 3) past the detach #3
	// (layer 2): one waypoint, beside #3, not over it.
	q, _ := FromGraph(readGraph(t, "quad-detach.ir.json"), nil)
	ql := Place(q)
	for i, e := range q.Edges {
		if e.From != 1 || e.To != 4 {
			continue
		}
		if len(ql.Route[i]) != 1 {
			t.Fatalf("edge 1→4 waypoints %v", ql.Route[i])
		}
		w, box := ql.At[ql.Route[i][0]], ql.At[3]
		if w.Y != box.Y || (w.X+DummyW > box.X && w.X < box.X+NodeW) {
			t.Errorf("waypoint %v over the detach box at %v", w, box)
		}
	}
}

func BenchmarkPlace10k(b *testing.B) {
	g := graphOf(b, randomGraph(10000, 1))
	m, err := FromGraph(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		Place(m)
	}
}

func BenchmarkHTML10k(b *testing.B) {
	g := graphOf(b, randomGraph(10000, 1))
	m, err := FromGraph(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	lay := Place(m)
	b.ReportAllocs()
	for b.Loop() {
		if err := HTML(io.Discard, m, lay); err != nil {
			b.Fatal(err)
		}
	}
}
