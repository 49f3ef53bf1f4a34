package casegen

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/tlcheck/tlcheck/spec"
)

// This file holds the second graph generator, the all-primitives stream
// ("wide" graphs). The first generator (graph.go) draws only the
// primitives with a GenHint.Graph place, and its draws name every graph a
// certificate or a transcript refers to; changing it would change every
// drawn graph. So the wide stream is separate: its own generator, its own
// obligations (WideObligations, each with its own case-seed label), used
// by `check --graphs` and the gate in addition to the first, which stays
// byte-identical.
//
// Construction. Every primitive of spec.Infos() is drawable. A step picks
// a primitive uniformly from those the options allow and draws one
// application of it with the primitive's local instance generator
// (Generate: the registry's GenHint for the primitives drawn from their
// hints alone, the structural generators for window ops, normalisations,
// gather, pad, conv, …), which gives attributes and parent shapes that fit
// by construction, plus exact parent values that satisfy the primitive's
// domain. Each parent is then an existing entry of that shape, an
// existing entry adapted to it (reshape for equal size; sum then
// broadcast_to otherwise — a flat tensor, which plants ties in every
// pooling window), an existing entry shifted by one of its own elements
// (sub(x, c) with c filled with x[j]: an exact zero at x's j-th element,
// which plants kinks at relu, abs, sign, clamp, max and min), or a const
// holding the generated value, sometimes with a flat region (equal values:
// ties). The exact value of every entry is tracked over Rat where its
// primitives are exact; a choice whose forward rule fails over Rat (a
// domain error of a Partial primitive: σ = 0 in a normalisation, an
// irrational square root) falls back to the generated consts, which the
// instance generator made valid. So every wide graph is shape-correct by
// construction and its forward evaluation at the drawn inputs succeeds
// over Rat wherever it is exact. TestWideReachesEveryPrimitive checks that
// every registry primitive appears in some wide graph over a few hundred
// seeds — a primitive added without a generator fails it.

// wideGen is the state of one wide generation.
type wideGen struct {
	src    Source
	o      GraphOptions
	ir     bool
	rc     *Recipe
	vals   []*spec.Tensor[spec.Rat] // exact value of every entry, nil where unknown
	deg    []int                    // polynomial degree bound of every entry in the inputs
	dep    []bool                   // whether the entry depends on a context input
	target int
	node   int
	reg    *spec.Registry[spec.Rat]
}

func (w *wideGen) label(s string) string { return fmt.Sprintf("w%d.%s", w.node, s) }

func (w *wideGen) room() int { return w.target - w.rc.Len() }

func (w *wideGen) push(st Step, shape spec.Shape, v *spec.Tensor[spec.Rat], deg int) int {
	if st.Attrs == nil {
		st.Attrs = &spec.Attrs{}
	}
	w.rc.Steps = append(w.rc.Steps, st)
	w.rc.Shapes = append(w.rc.Shapes, shape.Clone())
	w.vals = append(w.vals, v)
	w.deg = append(w.deg, deg)
	d := false
	for _, p := range st.In {
		d = d || w.dep[p]
	}
	w.dep = append(w.dep, d)
	w.node = w.rc.Len()
	return w.rc.Len() - 1
}

// wideIR reports whether a primitive can appear in a wide IR graph: its
// IR tag takes the primitive's own parents and attributes, with no
// payload parameters and no window geometry (Recipe.IRGraph emits those
// attributes only for the first stream's primitives).
func wideIR(info *spec.OpInfo) bool {
	f := info.IR
	if f == nil || len(f.Params) > 0 || f.MinArity != info.MinArity || f.MaxArity != info.MaxArity {
		return false
	}
	return !slices.Contains(info.Attrs, "Window") && !slices.Contains(info.Attrs, "Seed") && info.Name != "hard_masked_softmax"
}

// wideOps lists the primitives a wide graph may draw under o, in registry
// order. Exact here admits Partial primitives: their domain is guarded by
// evaluation over Rat.
func wideOps(o GraphOptions, ir bool) ([]string, error) {
	allow := map[string]bool{}
	for _, n := range o.Ops {
		allow[n] = true
	}
	var out []string
	for _, info := range spec.Infos() {
		switch {
		case ir && !wideIR(info),
			o.Exact && !info.Exact,
			o.ZeroPreserving && !info.ZeroPreserving,
			o.Polynomial && !info.Polynomial,
			len(allow) > 0 && !allow[info.Name]:
			continue
		}
		if !HasGenerator(info.Name) {
			return nil, fmt.Errorf("wide graph generator: primitive %s has no generator (a GenHint or a structural generator)", info.Name)
		}
		out = append(out, info.Name)
	}
	return out, nil
}

// maxBits bounds the numerator and denominator of every exact value of a
// wide graph, so that rationals stay small.
const maxBits = 96

func small(v spec.Tensor[spec.Rat]) bool {
	for _, x := range v.Data {
		b := x.Big()
		if b.Num().BitLen() > maxBits || b.Denom().BitLen() > maxBits {
			return false
		}
	}
	return true
}

// eval applies op over Rat to the parents' exact values (ok false when a
// value is unknown, the primitive is not exact, or its rule fails).
func (w *wideGen) eval(info *spec.OpInfo, a *spec.Attrs, in []int) (*spec.Tensor[spec.Rat], error) {
	if !info.Exact {
		return nil, nil
	}
	xs := make([]spec.Tensor[spec.Rat], len(in))
	for i, p := range in {
		if w.vals[p] == nil {
			return nil, nil
		}
		xs[i] = *w.vals[p]
	}
	pr, err := w.reg.Lookup(info.Name)
	if err != nil {
		return nil, err
	}
	y, err := pr.Forward(a.Clone(), xs)
	if err != nil {
		return nil, err
	}
	if !small(y) {
		return nil, fmt.Errorf("values too large")
	}
	return &y, nil
}

// constOf appends a const holding v.
func (w *wideGen) constOf(v spec.Tensor[spec.Rat]) int {
	vals := make([]*big.Rat, len(v.Data))
	for i, r := range v.Data {
		vals[i] = r.Big()
	}
	c := v.Clone()
	return w.push(Step{Op: "const", Attrs: &spec.Attrs{Shape: v.Shape.Clone(), Values: vals}}, v.Shape, &c, 0)
}

// flat plants a flat region: a run of equal values (a tie in any window
// over it).
func (w *wideGen) flat(v spec.Tensor[spec.Rat], label string) spec.Tensor[spec.Rat] {
	v = v.Clone()
	n := len(v.Data)
	if n < 2 {
		return v
	}
	start := w.src.Intn(n-1, w.label(label+".start"))
	end := start + 2 + w.src.Intn(n-start-1, w.label(label+".len"))
	for i := start + 1; i < end; i++ {
		v.Data[i] = v.Data[start]
	}
	return v
}

// parent draws the entry that feeds a parent of shape s whose generated
// value is x: 0 an existing entry of shape s, 1 an adapted entry, 2 an
// entry shifted to a zero, 3 a const (4 a const with a flat region).
// Only entries whose polynomial degree stays ≤ maxDeg are used.
func (w *wideGen) parent(s spec.Shape, x spec.Tensor[spec.Rat], dom Domain, maxDeg int, label string) int {
	// Only entries that depend on a context input are drawn, so that
	// every primitive's derivative is exercised.
	okDeg := func(id int) bool { return w.dep[id] && w.deg[id] <= maxDeg && (dom == Any || w.vals[id] != nil) }
	kind := w.src.Intn(5, w.label(label+".kind"))
	if kind <= 2 {
		var same, all []int
		for id := w.rc.Len() - 1; id >= 0; id-- {
			if !okDeg(id) {
				continue
			}
			all = append(all, id)
			if w.rc.Shapes[id].Equal(s) {
				same = append(same, id)
			}
		}
		switch {
		case kind == 0 && len(same) > 0:
			return same[w.src.Intn(len(same), w.label(label+".same"))]
		case kind == 2 && len(same) > 0 && w.room() >= 3:
			id := same[w.src.Intn(len(same), w.label(label+".shift"))]
			if v := w.vals[id]; v != nil && len(v.Data) > 0 {
				j := w.src.Intn(len(v.Data), w.label(label+".zero"))
				c, _ := spec.Zeros[spec.Rat](s)
				for i := range c.Data {
					c.Data[i] = v.Data[j]
				}
				ci := w.constOf(c)
				d := v.Clone()
				for i := range d.Data {
					d.Data[i] = d.Data[i].Sub(c.Data[i])
				}
				return w.push(Step{Op: "sub", In: []int{id, ci}}, s, &d, w.deg[id])
			}
		case len(all) > 0 && w.room() >= 3:
			id := all[w.src.Intn(len(all), w.label(label+".adapt"))]
			from := w.rc.Shapes[id]
			if from.Size() == s.Size() && len(s) > 0 {
				var v *spec.Tensor[spec.Rat]
				if w.vals[id] != nil {
					r := spec.Tensor[spec.Rat]{Shape: s.Clone(), Data: slices.Clone(w.vals[id].Data)}
					v = &r
				}
				return w.push(Step{Op: "reshape", In: []int{id}, Attrs: &spec.Attrs{Shape: s.Clone()}}, s, v, w.deg[id])
			}
			var sv *spec.Tensor[spec.Rat]
			if w.vals[id] != nil {
				t, _ := spec.Zeros[spec.Rat](spec.Shape{})
				for _, e := range w.vals[id].Data {
					t.Data[0] = t.Data[0].Add(e)
				}
				sv = &t
			}
			si := w.push(Step{Op: "sum", In: []int{id}}, spec.Shape{}, sv, w.deg[id])
			var bv *spec.Tensor[spec.Rat]
			if sv != nil {
				b, _ := spec.Zeros[spec.Rat](s)
				for i := range b.Data {
					b.Data[i] = sv.Data[0]
				}
				bv = &b
			}
			return w.push(Step{Op: "broadcast_to", In: []int{si}, Attrs: &spec.Attrs{Shape: s.Clone()}}, s, bv, w.deg[id])
		}
	}
	if kind == 4 && dom == Any {
		x = w.flat(x, label)
	}
	return w.constOf(x)
}

// place draws one application of op and appends it (with any consts and
// adapters its parents need). It reports false when op cannot be placed.
func (w *wideGen) place(op string) bool {
	info, err := spec.Info(op)
	if err != nil {
		return false
	}
	inst, err := Generate(w.src, op)
	if err != nil {
		return false
	}
	if info.MinArity == 0 { // const, rand_uniform
		s, err := info.InferShape(inst.Attrs, nil)
		if err != nil || s.Size() > w.o.MaxElements {
			return false
		}
		v, _ := w.eval(info, inst.Attrs, nil)
		w.push(Step{Op: op, Attrs: inst.Attrs}, s, v, 0)
		return true
	}
	for _, x := range inst.Xs {
		if x.Shape.Size() > w.o.MaxElements {
			return false
		}
	}
	if w.ir { // the IR has no negative axes, and its flatten collapses every axis
		if op == "flatten" {
			inst.Attrs.Axis = 0
		} else if inst.Attrs.Axis < 0 && len(inst.Xs) > 0 {
			inst.Attrs.Axis += len(inst.Xs[0].Shape)
		}
	}
	mark := w.rc.Len()
	budget := w.o.MaxDegree
	if info.Polynomial && info.Gen.Combine(1, 1) > 1 {
		budget = w.o.MaxDegree / 2
	}
	in := make([]int, len(inst.Xs))
	for i, x := range inst.Xs {
		if w.room() < 2 {
			in[i] = w.constOf(x)
			continue
		}
		in[i] = w.parent(x.Shape, x, inst.Domains[i], budget, fmt.Sprintf("p%d", i))
	}
	v, ferr := w.eval(info, inst.Attrs, in)
	unknown := false
	for _, p := range in {
		unknown = unknown || w.vals[p] == nil
	}
	if ferr != nil || (info.Partial && unknown) {
		// Back to the generated values, which the instance generator made
		// valid: a parent whose value is known is pinned to its generated
		// value x by adding the const x − value (so it stays a function
		// of the inputs, with derivative 1); any other parent becomes the
		// const x.
		for i, x := range inst.Xs {
			p := in[i]
			if pv := w.vals[p]; pv != nil && w.rc.OpOf(p) != "const" && w.room() >= 2 {
				c := x.Clone()
				for k := range c.Data {
					c.Data[k] = c.Data[k].Sub(pv.Data[k])
				}
				ci := w.constOf(c)
				xv := x.Clone()
				in[i] = w.push(Step{Op: "add", In: []int{p, ci}}, x.Shape, &xv, w.deg[p])
			} else {
				in[i] = w.constOf(x)
			}
		}
		if v, ferr = w.eval(info, inst.Attrs, in); ferr != nil {
			w.truncate(mark)
			return false
		}
	}
	shapes := make([]spec.Shape, len(in))
	deg := 0
	for i, p := range in {
		shapes[i] = w.rc.Shapes[p]
		if i == 0 {
			deg = w.deg[p]
		} else if info.Polynomial {
			deg = info.Gen.Combine(deg, w.deg[p])
		} else {
			deg = max(deg, w.deg[p])
		}
	}
	if len(in) == 1 && info.Polynomial {
		deg = info.Gen.Combine(deg, deg)
	}
	out, err := info.InferShape(inst.Attrs, shapes)
	if err != nil || out.Size() > w.o.MaxElements || deg > w.o.MaxDegree {
		w.truncate(mark)
		return false
	}
	w.push(Step{Op: op, Attrs: inst.Attrs, In: in}, out, v, deg)
	return true
}

// truncate drops the entries from id on.
func (w *wideGen) truncate(id int) {
	k := id - len(w.rc.Ctx)
	w.rc.Steps = w.rc.Steps[:k]
	w.rc.Shapes = w.rc.Shapes[:id]
	w.vals = w.vals[:id]
	w.deg = w.deg[:id]
	w.dep = w.dep[:id]
	w.node = id
}

// Wide generator defaults: smaller than the first stream's (window and
// normalisation steps bring their own consts and adapters).
const (
	wideMinNodes    = 6
	wideMaxNodes    = 16
	wideMaxElements = 48
)

// genWideRecipe draws a wide recipe: for the IR when ir (one input, IR
// primitives), else a typed recipe, with one exact value per context
// input.
func genWideRecipe(src Source, o GraphOptions, ir bool) (*Recipe, []spec.Tensor[spec.Rat], error) {
	if o.MaxNodes <= 0 {
		o.MaxNodes = wideMaxNodes
	}
	if o.MinNodes <= 0 {
		o.MinNodes = min(wideMinNodes, o.MaxNodes)
	}
	if o.MaxElements <= 0 {
		o.MaxElements = wideMaxElements
	}
	o = o.withDefaults()
	ops, err := wideOps(o, ir)
	if err != nil {
		return nil, nil, err
	}
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("wide graph generator: no primitive satisfies the options")
	}
	w := &wideGen{src: src, o: o, ir: ir, rc: &Recipe{IR: ir}, reg: spec.Default[spec.Rat]()}
	nctx := 1
	if !ir {
		nctx = 1 + src.Intn(o.Inputs, "inputs")
	}
	var inputs []spec.Tensor[spec.Rat]
	for i := 0; i < nctx; i++ {
		group(src, "ctx", func() {
			s := GenShape(src, 0, o.MaxRank, fmt.Sprintf("ctx%d.shape", i))
			x := GenTensor(src, s, Any, fmt.Sprintf("x%d", i))
			if src.Intn(2, fmt.Sprintf("ctx%d.flat", i)) == 1 {
				x = w.flat(x, fmt.Sprintf("ctx%d", i))
			}
			inputs = append(inputs, x)
			w.rc.Ctx = append(w.rc.Ctx, s)
			w.rc.Shapes = append(w.rc.Shapes, s.Clone())
			xc := x.Clone()
			w.vals = append(w.vals, &xc)
			w.deg = append(w.deg, 1)
			w.dep = append(w.dep, true)
		})
	}
	size := o.MinNodes + src.Intn(o.MaxNodes-o.MinNodes+1, "nodes")
	if ir {
		w.target = size
	} else {
		w.target = nctx + size
	}
	if o.ScalarOutput {
		w.target = max(w.target-1, nctx)
	}
	w.node = w.rc.Len()
	// Two draws in three go to the primitives the first stream never draws
	// (no GenHint.Graph place), so that each of them appears in a few
	// of the gate's graphs.
	var rare []string
	for _, op := range ops {
		if info, _ := spec.Info(op); info.Gen.Graph <= 0 {
			rare = append(rare, op)
		}
	}
	if o.Lead > 0 && len(rare) > 0 && w.rc.Len() < w.target {
		// The run's round robin over the rare primitives (GraphOptions.Lead);
		// one that cannot be placed here leaves the step to the draws below.
		group(src, "lead", func() { w.place(rare[(o.Lead-1)%len(rare)]) })
	}
	for w.rc.Len() < w.target {
		placed := false
		group(src, "node", func() {
			pool := ops
			if len(rare) > 0 && src.Intn(3, w.label("op.rare")) > 0 {
				pool = rare
			}
			placed = w.place(pool[src.Intn(len(pool), w.label("op"))])
			for j := 0; !placed && j < len(ops); j++ {
				placed = w.place(ops[j])
			}
		})
		if !placed {
			return nil, nil, fmt.Errorf("wide graph generator: no allowed primitive can be placed after entry %d", w.rc.Len()-1)
		}
	}
	// The result is the last entry that depends on a context input (the
	// last entry when none does), so the sweeps cross the graph.
	dep := make([]bool, w.rc.Len())
	w.rc.Result = w.rc.Len() - 1
	for id := range dep {
		if id < nctx {
			dep[id] = true
			continue
		}
		for _, p := range w.rc.Steps[id-nctx].In {
			dep[id] = dep[id] || dep[p]
		}
	}
	for id := w.rc.Len() - 1; id >= nctx; id-- {
		if dep[id] {
			w.rc.Result = id
			break
		}
	}
	if o.ScalarOutput && len(w.rc.Shapes[w.rc.Result]) != 0 {
		x := w.rc.Result
		w.push(Step{Op: "sum", In: []int{x}}, spec.Shape{}, nil, w.deg[x])
		w.rc.Result = w.rc.Len() - 1
	}
	return w.rc, inputs, nil
}

// GenWideTyped draws a typed recipe of the all-primitives stream and one
// exact value per context input (see the comment at the top of
// graph_wide.go). o.Exact admits Partial primitives (guarded by
// evaluation over Rat at the drawn inputs).
func GenWideTyped(src Source, o GraphOptions) (*TypedCase, error) {
	rc, in, err := genWideRecipe(src, o, false)
	if err != nil {
		return nil, err
	}
	return &TypedCase{Recipe: rc, Inputs: in}, nil
}

// GenWideGraph draws a canonical IR graph of the all-primitives stream
// (the primitives whose IR tag takes their own parents and attributes),
// its payload and an exact input.
func GenWideGraph(src Source, o GraphOptions) (*GraphCase, error) {
	rc, in, err := genWideRecipe(src, o, true)
	if err != nil {
		return nil, err
	}
	g, p, err := rc.IRGraph()
	if err != nil {
		return nil, err
	}
	return &GraphCase{Recipe: rc, Graph: g, Payload: p, Input: in[0]}, nil
}
