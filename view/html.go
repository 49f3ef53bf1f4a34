package view

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

const pageCSS = `body{font:14px sans-serif;margin:16px;color:#112}
h1{font-size:18px}#canvas{border:1px solid #ccc;overflow:auto;max-height:80vh}
table{border-collapse:collapse;margin-top:12px;font:12px monospace}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}
tr.hl td{background:#ffe0e0}tr.unreached td{color:#888}.legend li{margin:2px 0}
#tools{margin:6px 0}#tools button{margin-right:6px}`

// pageJS adds pan (drag), zoom (wheel, buttons) and collapsing
// (double-click a box to hide or show everything that feeds it), and marks
// the body data-js="ready" when it has run to its end (a headless browser
// test reads that back). Without it the page is the full drawing and the
// table.
const pageJS = `(function(){
var svg=document.getElementById('graph');if(!svg)return;
var vb=svg.viewBox.baseVal,W=vb.width,H=vb.height;
function zoom(f,cx,cy){var nw=vb.width*f,nh=vb.height*f;vb.x=cx-(cx-vb.x)*f;vb.y=cy-(cy-vb.y)*f;vb.width=nw;vb.height=nh;}
function pt(e){var r=svg.getBoundingClientRect();return [vb.x+(e.clientX-r.left)/r.width*vb.width,vb.y+(e.clientY-r.top)/r.height*vb.height];}
svg.addEventListener('wheel',function(e){e.preventDefault();var p=pt(e);zoom(e.deltaY>0?1.15:1/1.15,p[0],p[1]);},{passive:false});
var drag=null;
svg.addEventListener('mousedown',function(e){drag=[e.clientX,e.clientY];});
window.addEventListener('mouseup',function(){drag=null;});
svg.addEventListener('mousemove',function(e){if(!drag)return;var r=svg.getBoundingClientRect();vb.x-=(e.clientX-drag[0])/r.width*vb.width;vb.y-=(e.clientY-drag[1])/r.height*vb.height;drag=[e.clientX,e.clientY];});
document.getElementById('zin').onclick=function(){zoom(1/1.25,vb.x+vb.width/2,vb.y+vb.height/2);};
document.getElementById('zout').onclick=function(){zoom(1.25,vb.x+vb.width/2,vb.y+vb.height/2);};
document.getElementById('zfit').onclick=function(){vb.x=0;vb.y=0;vb.width=W;vb.height=H;};
var ups={},boxes={},edges=svg.querySelectorAll('g.edge');
svg.querySelectorAll('g.node').forEach(function(g){boxes[g.getAttribute('data-id')]=g;});
edges.forEach(function(g){var t=g.getAttribute('data-to');(ups[t]=ups[t]||[]).push(g);});
var folded={};
function feeders(id){var seen={},st=[id],out=[];while(st.length){var v=st.pop();(ups[v]||[]).forEach(function(g){var f=g.getAttribute('data-from');out.push(g);if(!seen[f]){seen[f]=1;out.push(boxes[f]);st.push(f);}});}return out;}
function refresh(){svg.querySelectorAll('.hidden').forEach(function(g){g.classList.remove('hidden');});
Object.keys(folded).forEach(function(id){feeders(id).forEach(function(g){if(g)g.classList.add('hidden');});});}
Object.keys(boxes).forEach(function(id){boxes[id].addEventListener('dblclick',function(){if(folded[id])delete folded[id];else folded[id]=1;refresh();});});
document.getElementById('zall').onclick=function(){folded={};refresh();};
document.body.setAttribute('data-js','ready');
})();`

// gradText is the table's gradient column: a parameter's gradient, a
// node's cotangent (with its Σ count), "unreached", the trace step, or the
// two sides of a disagreement — the box's lines after the value.
func (m *Model) gradText(n Node, acc map[int]int) string {
	lines := m.Labels(n, acc)[2:]
	if len(lines) > 0 && n.Value != "" && lines[0] == "= "+n.Value {
		lines = lines[1:]
	}
	return strings.Join(lines, "; ")
}

// HTML writes one self-contained page: title, summary, legend, the inline
// SVG (SVG), zoom buttons and a table of every drawn box. No resource is
// loaded from anywhere; the script only adds pan, zoom and collapsing.
func HTML(w io.Writer, m *Model, lay *Layout) error {
	if err := m.Check(); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>%s</title>\n<style>%s</style></head>\n<body>\n<h1>%s</h1>\n", esc(m.Title), pageCSS, esc(m.Title))
	fmt.Fprintf(&b, "<p id=\"summary\">%d boxes, %d edges", len(m.Nodes), len(m.Edges))
	if m.Folded > 0 {
		fmt.Fprintf(&b, "; %d nodes folded into linear-chain boxes", m.Folded)
	}
	if m.Scalar != "" {
		fmt.Fprintf(&b, "; values over %s", esc(m.Scalar))
	}
	b.WriteString(".</p>\n")
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "<p class=\"note\">%s</p>\n", esc(n))
	}
	if d := m.Diff; d != nil {
		b.WriteString("<div id=\"diff\">")
		if d.Found {
			fmt.Fprintf(&b, "<p><strong>first disagreement</strong>: %s vs %s over %s on %s at node %d (%s)", esc(d.A), esc(d.B), esc(d.Scalar), esc(d.What), d.Node, esc(d.Op))
			if d.Element >= 0 {
				fmt.Fprintf(&b, " element %d", d.Element)
			}
			fmt.Fprintf(&b, ": <code>%s</code> vs <code>%s</code></p>\n<p>%s</p>\n", esc(clip(d.LHS, TitleMax)), esc(clip(d.RHS, TitleMax)), esc(clip(d.Message, TitleMax)))
		} else {
			b.WriteString("<p>all paths agree</p>\n")
		}
		fmt.Fprintf(&b, "<details><summary>%d comparisons agree</summary><ul id=\"agree\">", len(d.Agree))
		for _, a := range d.Agree {
			fmt.Fprintf(&b, "<li>%s</li>", esc(a))
		}
		b.WriteString("</ul></details>\n")
		for _, s := range d.Skipped {
			fmt.Fprintf(&b, "<p class=\"note\">skipped: %s</p>", esc(s))
		}
		b.WriteString("</div>\n")
	}
	b.WriteString(`<ul class="legend"><li>boxes: #id op, shape; green = input, thick = output; dashed orange = detach (stop-gradient); dotted grey = unreached (no cotangent, which is not a zero one); red = first disagreement; dashed grey = linear chain folded; yellow = a parameter (payload tensor or ONNX initializer) with its value and gradient</li>` +
		`<li>edges: parent → reader, one per slot (a parent read twice is two curves); dashed orange ✂ = cut by a detach (no cotangent returns); blue = carried a cotangent contribution (label: the contribution, summed at the parent)</li></ul>` + "\n")
	b.WriteString(`<div id="tools"><button id="zin">zoom in</button><button id="zout">zoom out</button><button id="zfit">fit</button><button id="zall">expand all</button> drag to pan, wheel to zoom, double-click a box to collapse what feeds it</div>` + "\n<div id=\"canvas\">\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	b.Reset()
	if err := SVG(w, m, lay); err != nil {
		return err
	}
	b.WriteString("</div>\n<table id=\"nodes\"><thead><tr><th>id</th><th>op</th><th>shape</th><th>value</th><th>gradient</th><th>contributions received</th></tr></thead><tbody>\n")
	into := map[int][]string{}
	for _, e := range m.Edges {
		for _, c := range e.Contribs {
			into[e.From] = append(into[e.From], fmt.Sprintf("from #%d slot %d: %s", e.To, e.Slot, c))
		}
	}
	acc := m.accum()
	for _, n := range m.Nodes {
		cls := ""
		if n.Highlight {
			cls = "hl"
		} else if (m.What == Grads || m.What == Trace) && !n.Reached && n.Grad == "" {
			cls = "unreached"
		}
		id := fmt.Sprint(n.ID)
		op := n.Op
		switch {
		case n.Folded > 0:
			id = fmt.Sprintf("%d…%d", n.ID, n.LastID)
		case n.Param && n.Op == "param":
			op = fmt.Sprintf("param %s of #%d", n.Field, n.Reader)
		}
		switch {
		case n.Name != "" && n.Param:
			op += " " + strconv.Quote(n.Name)
		case n.Name != "":
			op += " " + n.Name
		}
		fmt.Fprintf(&b, "<tr class=\"%s\" data-id=\"%d\"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", cls, n.ID, id, esc(op), esc(n.Shape),
			esc(clip(n.Value, TitleMax)), esc(clip(m.gradText(n, acc), TitleMax)), esc(clip(strings.Join(into[n.ID], "; "), TitleMax)))
	}
	fmt.Fprintf(&b, "</tbody></table>\n<script>%s</script>\n</body></html>\n", pageJS)
	_, err := io.WriteString(w, b.String())
	return err
}
