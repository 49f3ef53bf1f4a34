package onnx

import (
	"slices"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// ifModel encodes y = If(c) { x·two } else { x + two } with the condition
// c a BOOL initializer and two an outer float initializer that both
// branches read by name (the outer-scope rule), through the byte decoder.
func ifModel(cond int64, thenNodes, elseNodes []pb) pb {
	then := graphB{name: "then", nodes: thenNodes, outputs: []pb{valueInfo("t", Float, 2)}}
	els := graphB{name: "else", nodes: elseNodes, outputs: []pb{valueInfo("e", Float, 2)}}
	ifn := node("if", "If", []string{"c"}, []string{"y"},
		pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, then.enc()),
		pb(nil).str(1, "else_branch").int(20, int64(AttrGraph)).msg(6, els.enc()))
	g := graphB{
		nodes:   []pb{ifn},
		inits:   []pb{tensorDims("c", Bool).packedInts(5, cond), floatTensor("two", []int64{1}, 2)},
		inputs:  []pb{valueInfo("x", Float, 2)},
		outputs: []pb{valueInfo("y", Float, 2)},
	}
	return model(21, g.enc())
}

// TestIfDecodeImport: an If decoded from bytes with both branches, the
// taken one inlined. Expected values by hand: x = [1, 3], then x·2 = [2,
// 6], else x + 2 = [3, 5] — an importer that took the other branch, or
// ignored the condition, is caught by the values.
func TestIfDecodeImport(t *testing.T) {
	then := []pb{node("", "Mul", []string{"x", "two"}, []string{"t"})}
	els := []pb{node("", "Add", []string{"x", "two"}, []string{"e"})}
	x := floatsTensor(dims(2), 1, 3)
	for _, c := range []struct {
		cond int64
		want []string
	}{{1, []string{"2", "6"}}, {0, []string{"3", "5"}}} {
		m, err := Decode(ifModel(c.cond, then, els))
		if err != nil {
			t.Fatal(err)
		}
		a := m.Graph.Nodes[0].Attr("then_branch")
		if a == nil || a.G == nil || len(a.G.Nodes) != 1 || a.G.Nodes[0].OpType != "Mul" {
			t.Fatalf("then_branch not decoded: %+v", a)
		}
		_, outs := evalRat(t, m, Options{}, x)
		if w := rats(t, c.want...); !sameRats(outs[0].Data, w) {
			t.Errorf("cond %d: %s, want %s", c.cond, ratStrings(outs[0].Data), ratStrings(w))
		}
	}
}

// TestIfDecodeRejects: a branch reading a name that no enclosing scope
// defines before the If, or one defined after it, is refused naming the
// node and the attribute; subgraphs nested deeper than maxGraphDepth are
// refused.
func TestIfDecodeRejects(t *testing.T) {
	els := []pb{node("", "Add", []string{"x", "two"}, []string{"e"})}
	cases := []struct {
		name string
		enc  pb
		want []string
	}{
		{"unknown name", ifModel(1, []pb{node("", "Mul", []string{"x", "nope"}, []string{"t"})}, els), []string{`node "if" (If)`, `attribute "then_branch"`, `"nope"`}},
		{"branch output not produced", ifModel(1, []pb{node("", "Mul", []string{"x", "two"}, []string{"u"})}, els), []string{`attribute "then_branch"`, `output #0 "t"`}},
		{"too deep", deepIf(maxGraphDepth + 2), []string{"nested more than"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode(c.enc)
			if err == nil {
				t.Fatal("decoded")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q", err, w)
				}
			}
		})
	}
	if _, err := Decode(deepIf(maxGraphDepth)); err != nil {
		t.Errorf("depth %d: %v", maxGraphDepth, err)
	}
}

// deepIf nests depth Ifs, each then_branch holding the next.
func deepIf(depth int) pb {
	inner := graphB{nodes: []pb{node("", "Identity", []string{"x"}, []string{"o0"})}, outputs: []pb{valueInfo("o0", Float, 2)}}
	for k := 1; k < depth; k++ {
		n := node("", "If", []string{"c"}, []string{names("o", k)},
			pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, inner.enc()),
			pb(nil).str(1, "else_branch").int(20, int64(AttrGraph)).msg(6, inner.enc()))
		inner = graphB{nodes: []pb{n}, outputs: []pb{valueInfo(names("o", k), Float, 2)}}
	}
	g := graphB{nodes: []pb{node("", "If", []string{"c"}, []string{"y"},
		pb(nil).str(1, "then_branch").int(20, int64(AttrGraph)).msg(6, inner.enc()),
		pb(nil).str(1, "else_branch").int(20, int64(AttrGraph)).msg(6, inner.enc()))},
		inits: []pb{tensorDims("c", Bool).packedInts(5, 1)}, inputs: []pb{valueInfo("x", Float, 2)},
		outputs: []pb{valueInfo("y", Float, 2)}}
	return model(21, g.enc())
}

func names(p string, k int) string { return p + strings.Repeat("i", k) }

// TestIfImport: conditions decided at import, as affine_grid's expanded
// body computes them — Equal(Size(s), 4) of a bound INT64 input — with the
// taken branch folding Split of the integer constant s into its extents
// (checked against s itself), and the refusals: a condition computed from
// the float inputs (data-dependent, naming the If), a branch with an
// initializer, a branch with the wrong number of outputs.
func TestIfImport(t *testing.T) {
	branch := func(outs ...string) *Graph {
		g := &Graph{Nodes: []*Node{{Name: "sp", OpType: "Split", Inputs: []string{"s"}, Outputs: []string{outs[0] + "n", outs[0] + "c", outs[0] + "h", outs[0] + "w"}}}}
		for _, o := range outs {
			g.Outputs = append(g.Outputs, &ValueInfo{Name: o})
		}
		return g
	}
	build := func(sdims []int64, then, els *Graph, cond string) *Model {
		m := newMG(20).inT("s", Int64, int64(len(sdims))).initI("four", dims(), 4).
			op("Size", ins("s"), ins("nd")).op("Equal", ins("nd", "four"), ins("c2d"))
		m.g.Nodes = append(m.g.Nodes, &Node{Index: len(m.g.Nodes), Name: "if", OpType: "If", Inputs: []string{cond}, Outputs: []string{"h"},
			Attrs: []*Attribute{{Name: "then_branch", Type: AttrGraph, G: then}, {Name: "else_branch", Type: AttrGraph, G: els}}})
		m.g.Outputs = append(m.g.Outputs, &ValueInfo{Name: "h"})
		return m.model()
	}
	// The then branch returns H (s[2]), the else branch W (s[3]).
	then, els := branch("th"), branch("ew")
	then.Outputs[0].Name, els.Outputs[0].Name = "thh", "eww"
	for _, c := range []struct {
		s    []int64
		want int64
	}{{[]int64{1, 3, 5, 7}, 5}, {[]int64{1, 3, 2, 5, 7}, 7}} {
		els := els
		if len(c.s) == 5 {
			els = &Graph{Nodes: []*Node{{Name: "sp", OpType: "Split", Inputs: []string{"s"}, Outputs: []string{"en", "ec", "ed", "eh", "eww"}}}, Outputs: []*ValueInfo{{Name: "eww"}}}
		}
		s := itensor("s", dims(int64(len(c.s))), c.s...)
		im, err := Import(build(c.s, then, els, "c2d"), Options{Bind: map[string]*Tensor{"s": s}})
		if err != nil {
			t.Fatalf("%v: %v", c.s, err)
		}
		if len(im.Exact) != 1 || !slices.Equal(im.Exact[0].Values, []int64{c.want}) || !im.Exact[0].Shape.Equal(spec.Shape{1}) {
			t.Errorf("%v: %+v, want [%d]", c.s, im.Exact, c.want)
		}
	}
	// Refusals.
	withInit := branch("th")
	withInit.Outputs[0].Name = "thh"
	withInit.Initializers = []*Tensor{itensor("k", dims(1), 1)}
	twoOuts := branch("th", "tc")
	twoOuts.Outputs[0].Name, twoOuts.Outputs[1].Name = "thh", "thc"
	fm := newMG(20).in("x", 1).op("Relu", ins("x"), ins("r"))
	fm.g.Nodes = append(fm.g.Nodes, &Node{Index: 1, Name: "if", OpType: "If", Inputs: []string{"r"}, Outputs: []string{"y"},
		Attrs: []*Attribute{{Name: "then_branch", Type: AttrGraph, G: &Graph{Outputs: []*ValueInfo{{Name: "x"}}}}, {Name: "else_branch", Type: AttrGraph, G: &Graph{Outputs: []*ValueInfo{{Name: "x"}}}}}})
	fm.out("y")
	s4 := map[string]*Tensor{"s": itensor("s", dims(4), 1, 3, 5, 7)}
	bad := []struct {
		name string
		m    *Model
		o    Options
		want []string
	}{
		{"data-dependent condition", fm.model(), Options{}, []string{`node "if" (If)`, `input 0 ("r")`, "data-dependent"}},
		{"branch initializer", build([]int64{1, 3, 5, 7}, withInit, els, "c2d"), Options{Bind: s4}, []string{`node "if" (If)`, `attribute "then_branch"`, `initializer "k"`}},
		{"branch outputs", build([]int64{1, 3, 5, 7}, twoOuts, els, "c2d"), Options{Bind: s4}, []string{`attribute "then_branch"`, "2 outputs, the node has 1"}},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := Import(c.m, c.o)
			if err == nil {
				t.Fatal("imported")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%v: want %q", err, w)
				}
			}
		})
	}
}
