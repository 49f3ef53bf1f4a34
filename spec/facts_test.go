package spec

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestFactInvariants checks the relations between an entry's facts that
// hold by their definitions.
func TestFactInvariants(t *testing.T) {
	places, tags := map[int]string{}, map[string]string{}
	for _, o := range Infos() {
		if o.Polynomial && (!o.Exact || o.Partial) {
			t.Errorf("%s: Polynomial but Exact=%v Partial=%v", o.Name, o.Exact, o.Partial)
		}
		if hasKinks := !o.Smooth && !o.NoGrad; hasKinks != (o.Ties != "") {
			t.Errorf("%s: Smooth=%v NoGrad=%v but Ties=%q (a non-smooth differentiable op states its tie convention, no other does)", o.Name, o.Smooth, o.NoGrad, o.Ties)
		}
		if o.Gen.Power > 0 && (!o.Polynomial || o.MinArity != 1 || o.MaxArity != 1) {
			t.Errorf("%s: Gen.Power %d on a primitive that is not a unary polynomial", o.Name, o.Gen.Power)
		}
		if p := o.Gen.Graph; p > 0 {
			if prev, dup := places[p]; dup {
				t.Errorf("%s and %s share graph place %d", prev, o.Name, p)
			}
			places[p] = o.Name
		}
		if o.IR != nil {
			if o.IR.Tag == "" || (o.IR.MaxArity >= 0 && o.IR.MaxArity < o.IR.MinArity) || o.IR.Doc == "" {
				t.Errorf("%s: incomplete IR form %+v", o.Name, *o.IR)
			}
			if prev, dup := tags[o.IR.Tag]; dup {
				t.Errorf("%s and %s share IR tag %q", prev, o.Name, o.IR.Tag)
			}
			tags[o.IR.Tag] = o.Name
			for _, r := range o.IR.Required {
				if !strings.Contains(","+strings.Join(o.IR.Params, ",")+",", ","+r+",") {
					t.Errorf("%s: required parameter %q is not among Params %v", o.Name, r, o.IR.Params)
				}
			}
		}
		for _, p := range o.Providers {
			if p != ProviderFastCPU {
				t.Errorf("%s: unknown provider %q", o.Name, p)
			}
			if !o.Accumulates {
				t.Errorf("%s: provider %s implements it, but only accumulating ops have provider kernels (refinement bounds sums)", o.Name, p)
			}
		}
	}
}

// dependsOnMany reports whether some output element of the application has
// non-zero partial derivatives with respect to two or more elements of the
// same parent, measured by JVPs of one-hot tangents over F64 at x.
func dependsOnMany(t *testing.T, p *Prim[F64], a *Attrs, xs []Tensor[F64]) bool {
	t.Helper()
	y, err := p.Apply(a, xs)
	if err != nil {
		t.Fatalf("%s: %v", p.Name, err)
	}
	for j := range xs {
		count := make([]int, len(y.Data))
		for e := range xs[j].Data {
			dxs := make([]Tensor[F64], len(xs))
			for k := range xs {
				dxs[k] = zerosOf[F64](xs[k].Shape)
			}
			dxs[j].Data[e] = 1
			dy, err := p.JVP(a, xs, y, dxs)
			if err != nil {
				t.Fatalf("%s jvp: %v", p.Name, err)
			}
			for i, v := range dy.Data {
				if v != 0 {
					count[i]++
				}
			}
		}
		for _, c := range count {
			if c >= 2 {
				return true
			}
		}
	}
	return false
}

// TestAccumulatesMatchesJacobian derives Accumulates independently: an
// op accumulates exactly when one output element combines several
// elements of one parent, which the Jacobian's sparsity shows at a
// generic point (every sample case has extents ≥ 2 on the reduced axes).
func TestAccumulatesMatchesJacobian(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	reg := Default[F64]()
	seen := map[string]bool{}
	for _, c := range sampleCases() {
		p, _ := reg.Lookup(c.op)
		if p.NoGrad || len(c.shapes) == 0 {
			continue // no Jacobian to read (const, rand_uniform, masks)
		}
		xs := make([]Tensor[F64], len(c.shapes))
		for i, s := range c.shapes {
			xs[i] = zerosOf[F64](s)
			for k := range xs[i].Data {
				xs[i].Data[k] = F64(0.3 + rng.Float64()) // generic, positive, distinct
			}
		}
		got := dependsOnMany(t, p, c.attrs, xs)
		seen[c.op] = seen[c.op] || got
	}
	for op, many := range seen {
		info, _ := Info(op)
		if many != info.Accumulates {
			t.Errorf("%s: Accumulates=%v, but the Jacobian says an output combines several elements of one parent: %v", op, info.Accumulates, many)
		}
	}
}

// vjpOfZero runs the VJP of δ = 0 over F32 at x (every element v) and
// reports whether every contribution is an exact zero; ok is false when
// the forward rule rejects x.
func vjpOfZero(p *Prim[F32], a *Attrs, shapes []Shape, v float32) (zero, ok bool) {
	xs := make([]Tensor[F32], len(shapes))
	for i, s := range shapes {
		xs[i] = zerosOf[F32](s)
		for k := range xs[i].Data {
			xs[i].Data[k] = F32(v)
		}
	}
	y, err := p.Apply(a, xs)
	if err != nil {
		return false, false
	}
	gs, err := p.VJP(a, xs, y, zerosOf[F32](y.Shape))
	if err != nil {
		return false, true
	}
	for _, g := range gs {
		for _, e := range g.Data {
			if e != 0 {
				return false, true
			}
		}
	}
	return true, true
}

// TestZeroPreservingFlag checks the flag both ways over F32: a
// zero-preserving op maps δ = 0 to zeros at moderate points (zero, tiny,
// ±100), and each op that is not zero-preserving has a finite witness
// point where δ = 0 gives a non-zero (NaN) contribution — so neither
// value of the flag is set without cause.
func TestZeroPreservingFlag(t *testing.T) {
	reg := Default[F32]()
	moderate := []float32{0, 1, -1, 0.5, -100, 100, 1e-30, -1e-30}
	witnesses := []float32{0, 100, -100, 1e-30, 1e-45}
	for _, c := range sampleCases() {
		p, _ := reg.Lookup(c.op)
		a := c.attrs
		if p.ZeroPreserving {
			for _, v := range moderate {
				if zero, ok := vjpOfZero(p, a, c.shapes, v); ok && !zero {
					t.Errorf("%s is ZeroPreserving, but VJP(x=%g, δ=0) is not zero", c.op, v)
				}
			}
			continue
		}
		if a != nil && a.Eps != nil { // ε = 0 is allowed and is the bad case
			a = a.Clone()
			a.Eps = new(big.Rat)
		}
		found := false
		for _, v := range witnesses {
			if zero, ok := vjpOfZero(p, a, c.shapes, v); ok && !zero {
				found = true
			}
		}
		if !found {
			t.Errorf("%s is not ZeroPreserving, but no witness point gives VJP(x, δ=0) ≠ 0", c.op)
		}
	}
}

// partialWitnesses are, per Partial primitive, data on which its rules
// fail over Rat (or, for log, over every scalar).
var partialWitnesses = map[string]struct {
	attrs *Attrs
	xs    [][]int64 // each parent's elements, as integers, shape [len]
	// shapes, when set, are the parents' shapes instead of [len].
	shapes []Shape
}{
	"div":        {nil, [][]int64{{1}, {0}}, nil},
	"inv":        {nil, [][]int64{{0}}, nil},
	"sqrt":       {nil, [][]int64{{2}}, nil},
	"log":        {nil, [][]int64{{0}}, nil},
	"layer_norm": {&Attrs{Axis: -1, Eps: new(big.Rat)}, [][]int64{{0, 1, 1}}, nil},
	// softplus(−10) − 1 < 0: rejected over every scalar, F64 included
	// (TestSafeLogPartialOverFloats), not only because Rat lacks exp.
	"safe_log": {&Attrs{Eps: big.NewRat(-1, 1)}, [][]int64{{-10}}, nil},
	// sqrt(max(2, 0) + 0) is irrational.
	"batch_norm_eval": {&Attrs{Axis: 0, Eps: new(big.Rat)}, [][]int64{{1}, {0}, {2}}, nil},
	// The lane (0, 1) has σ² = 1/4 and ε = 1/100000: sqrt(1/4 + 1/100000) is irrational.
	"instance_norm": {&Attrs{}, [][]int64{{0, 1}, {1}, {0}}, []Shape{{1, 1, 2}, {1}, {1}}},
	// bias −1: d = −1 + (1/10000)·1 < 0 has no real power (over every scalar).
	"lrn": {&Attrs{Size: 1, Bias: big.NewRat(-1, 1)}, [][]int64{{1}}, []Shape{{1, 1}}},
	// base 0: x^y = exp(y·ln x) is refused for x ≤ 0 over every scalar.
	"pow": {nil, [][]int64{{0}, {2}}, nil},
	// The lane (1, 1) has norm √2, irrational; a zero lane with ε = 0 divides by 0.
	"l2_normalize": {&Attrs{Axis: -1}, [][]int64{{1, 1}}, nil},
	// The sub-tensor x[0, :] = (1, 1) has norm √2 > 1, irrational.
	"renorm": {&Attrs{Axis: 0, Maxnorm: big.NewRat(1, 1)}, [][]int64{{1, 1}}, []Shape{{1, 2}}},
	// A cast at its format's overflow threshold Ω has no real value (IEEE: ±∞);
	// bfloat16's and binary32's lie near 2^128 (partialWitnessScale).
	"round_f16":  {nil, [][]int64{{65520}}, nil},
	"round_bf16": {nil, [][]int64{{1}}, nil},
	"round_f32":  {nil, [][]int64{{1}}, nil},
	// 200 truncates to 200 > 127, outside INT8: ONNX leaves it undefined.
	"trunc_int": {&Attrs{Lo: big.NewRat(-128, 1), Hi: big.NewRat(127, 1)}, [][]int64{{200}}, nil},
}

// partialWitnessScale multiplies a witness's integers, for witnesses
// beyond int64: 2^128 ≥ Ω of bfloat16 and of binary32.
var partialWitnessScale = map[string]Rat{
	"round_bf16": RatFromBig(new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 128))),
	"round_f32":  RatFromBig(new(big.Rat).SetInt(new(big.Int).Lsh(big.NewInt(1), 128))),
}

// TestSafeLogPartialOverFloats: safe_log is Partial for a reason that is
// not Rat's lack of exp — with ε = −1, softplus(−10) + ε ≈ 4.5e-5 − 1 < 0
// has no logarithm, and the F64 rule says so instead of returning NaN.
func TestSafeLogPartialOverFloats(t *testing.T) {
	p, _ := Default[F64]().Lookup("safe_log")
	w := partialWitnesses["safe_log"]
	x := Tensor[F64]{Shape: Shape{1}, Data: []F64{F64(w.xs[0][0])}}
	if y, err := p.Apply(w.attrs, []Tensor[F64]{x}); err == nil {
		t.Errorf("safe_log(−10) with ε = −1 over F64 = %v, want a domain error", y.Data)
	}
}

// TestPartialFlag checks Partial both ways over Rat: each Partial op fails
// on its witness, and every Exact op that is not Partial succeeds
// (forward, JVP and VJP) on random sample inputs that include zeros and
// ties.
func TestPartialFlag(t *testing.T) {
	reg := Default[Rat]()
	for _, o := range Infos() {
		w, has := partialWitnesses[o.Name]
		if o.Partial != has {
			t.Errorf("%s: Partial=%v, witness listed: %v", o.Name, o.Partial, has)
			continue
		}
		if !has {
			continue
		}
		p, _ := reg.Lookup(o.Name)
		xs := make([]Tensor[Rat], len(w.xs))
		for i, vs := range w.xs {
			xs[i] = zerosOf[Rat](Shape{len(vs)})
			if w.shapes != nil {
				xs[i] = zerosOf[Rat](w.shapes[i])
			}
			for k, v := range vs {
				xs[i].Data[k] = NewRat(v, 1)
				if sc, ok := partialWitnessScale[o.Name]; ok {
					xs[i].Data[k] = xs[i].Data[k].Mul(sc)
				}
			}
		}
		y, err := p.Apply(w.attrs, xs)
		if err == nil {
			_, err = p.VJP(w.attrs, xs, y, y)
		}
		if err == nil {
			t.Errorf("%s: Partial, but its witness %v succeeds", o.Name, w.xs)
		}
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range sampleCases() {
		p, _ := reg.Lookup(c.op)
		if !p.Exact || p.Partial {
			continue
		}
		for trial := 0; trial < 40; trial++ {
			xs := make([]Tensor[Rat], len(c.shapes))
			for i, s := range c.shapes {
				xs[i] = randTensor(rng, s, false)
			}
			y, err := p.Apply(c.attrs, xs)
			if err == nil {
				_, err = p.VJP(c.attrs, xs, y, y)
			}
			if err == nil {
				_, err = p.JVP(c.attrs, xs, y, xs)
			}
			if err != nil {
				t.Errorf("%s is Exact and not Partial, but fails: %v", c.op, err)
				break
			}
		}
	}
}

// TestFactStringCoversEveryFact plants a change in each fact of an entry
// and requires the hashed spelling to change.
func TestFactStringCoversEveryFact(t *testing.T) {
	base, err := Info("reduce_sum")
	if err != nil {
		t.Fatal(err)
	}
	mutations := map[string]func(o *OpInfo){
		"Exact":          func(o *OpInfo) { o.Exact = !o.Exact },
		"NoGrad":         func(o *OpInfo) { o.NoGrad = !o.NoGrad },
		"Linear":         func(o *OpInfo) { o.Linear = !o.Linear },
		"Smooth":         func(o *OpInfo) { o.Smooth = !o.Smooth },
		"Ties":           func(o *OpInfo) { o.Ties = "x" },
		"Partial":        func(o *OpInfo) { o.Partial = !o.Partial },
		"ZeroPreserving": func(o *OpInfo) { o.ZeroPreserving = !o.ZeroPreserving },
		"Polynomial":     func(o *OpInfo) { o.Polynomial = !o.Polynomial },
		"Accumulates":    func(o *OpInfo) { o.Accumulates = !o.Accumulates },
		"IR":             func(o *OpInfo) { o.IR = nil },
		"IR.Tag":         func(o *OpInfo) { o.IR.Tag = "other" },
		"IR.MinArity":    func(o *OpInfo) { o.IR.MinArity++ },
		"IR.Attrs":       func(o *OpInfo) { o.IR.Attrs = nil },
		"IR.Params":      func(o *OpInfo) { o.IR.Params = []string{"W"} },
		"IR.Required":    func(o *OpInfo) { o.IR.Required = []string{"W"} },
		"Gen.Domain":     func(o *OpInfo) { o.Gen.Domain = DomainSquare },
		"Gen.Degree":     func(o *OpInfo) { o.Gen.Degree = DegreeSum },
		"Gen.Graph":      func(o *OpInfo) { o.Gen.Graph++ },
		"Gen.Power":      func(o *OpInfo) { o.Gen.Power = 3 },
		"Providers":      func(o *OpInfo) { o.Providers = nil },
		"Rule":           func(o *OpInfo) { o.Rule = "f(x)=x" },
		"Attrs":          func(o *OpInfo) { o.Attrs = nil },
		"MaxArity":       func(o *OpInfo) { o.MaxArity = 2 },
	}
	want := base.factString()
	for name, m := range mutations {
		c := cloneInfo(base)
		m(c)
		if c.factString() == want {
			t.Errorf("changing %s does not change the hashed facts", name)
		}
	}
	if RegistryHash() != RegistryHash() || len(RegistryHash()) != 64 {
		t.Errorf("RegistryHash is not a stable SHA-256 hex string")
	}
}

// TestExprEvaluatesOverEveryScalar evaluates an expression using every
// operation at a point where each is exact or rounds once, against the
// value computed by hand.
func TestExprEvaluatesOverEveryScalar(t *testing.T) {
	// f(x) = (x·x − 3/2)/x + max(x, 1) − |−x| + relu(x) − step(x) + sign(x) + min(x, 0) + √(x·x) + neg(x)
	// at x = 2: (4 − 3/2)/2 + 2 − 2 + 2 − 1 + 1 + 0 + 2 − 2 = 5/4 + 2 = 13/4.
	x := X()
	e := x.Mul(x).Sub(Num(3, 2)).Div(x).Add(x.Max(Num(1, 1))).Sub(x.Neg().Abs()).Add(x.Relu()).Sub(x.Step()).
		Add(x.Sign()).Add(x.Min(Num(0, 1))).Add(x.Mul(x).Sqrt()).Add(x.Neg())
	got, err := evalExpr[Rat](e.n, NewRat(2, 1), Rat{})
	if err != nil || !got.Same(NewRat(13, 4)) {
		t.Errorf("Rat: got %v, %v; want 13/4", got, err)
	}
	gotF, err := evalExpr[F64](e.n, 2, 0)
	if err != nil || gotF != 3.25 {
		t.Errorf("F64: got %v, %v; want 3.25", gotF, err)
	}
	if got := polyDegree(x.Mul(x).Sub(Num(1, 2)).Mul(x.Neg()).Add(x).n); got != 3 {
		t.Errorf("degree of (x·x − 1/2)·(−x) + x = %d, want 3", got)
	}
	d, err := evalExpr[Dual[Rat]](x.Mul(x).Mul(x).n, Dual[Rat]{Re: NewRat(2, 1), Du: NewRat(1, 1)}, Dual[Rat]{})
	if err != nil || !d.Re.Same(NewRat(8, 1)) || !d.Du.Same(NewRat(12, 1)) {
		t.Errorf("Dual: x³ at 2 = %v, %v; want 8 + 12ε", d, err)
	}
	tr := X().Exp().Add(X().Log()).Add(X().Tanh()).Add(X().Sin()).Add(X().Cos())
	v, err := evalExpr[F64](tr.n, 1, 0)
	if want := math.E + 0 + math.Tanh(1) + math.Sin(1) + math.Cos(1); err != nil || math.Abs(float64(v)-want) > 1e-15 {
		t.Errorf("transcendental: %v, %v; want %v", v, err, want)
	}
	if _, err := evalExpr[Rat](X().Exp().n, NewRat(1, 1), Rat{}); err == nil {
		t.Errorf("exp over Rat must fail, not approximate")
	}
	const spelled = "add(add(add(add(sub(add(sub(add(div(sub(mul(x,x),3/2),x),max(x,1)),abs(neg(x))),relu(x)),step(x)),sign(x)),min(x,0)),sqrt(mul(x,x))),neg(x))"
	if s := e.String(); s != spelled {
		t.Errorf("String = %s, want %s", s, spelled)
	}
}

// TestRegisterElementwiseRejects lists malformed registrations; each must
// fail, naming the field, and register nothing.
func TestRegisterElementwiseRejects(t *testing.T) {
	x := X()
	ok := func(o OpInfo) ElementwiseOp {
		o.Smooth = true
		return ElementwiseOp{Info: o, F: x.Mul(x), D: Num(2, 1).Mul(x)}
	}
	smooth := OpInfo{Name: "sq2", Smooth: true}
	cases := []struct {
		name  string
		op    ElementwiseOp
		field string
	}{
		{"empty name", ok(OpInfo{}), "Name"},
		{"unsafe name", ok(OpInfo{Name: "Cube!"}), "Name"},
		{"built-in name", ok(OpInfo{Name: "square"}), "Name"},
		{"taken IR tag", ok(OpInfo{Name: "sq2", IR: &IRForm{Tag: "relu"}}), "IR.Tag"},
		{"empty IR tag", ok(OpInfo{Name: "sq2", IR: &IRForm{}}), "IR.Tag"},
		{"unsafe IR tag", ok(OpInfo{Name: "sq2", IR: &IRForm{Tag: "a\"b"}}), "IR.Tag"},
		{"IR attrs", ok(OpInfo{Name: "sq2", IR: &IRForm{Tag: "sq2", Attrs: []string{"axis"}}}), "IR.Attrs"},
		{"IR arity", ok(OpInfo{Name: "sq2", IR: &IRForm{Tag: "sq2", MinArity: 2, MaxArity: 2}}), "IR.MinArity"},
		{"providers", ok(OpInfo{Name: "sq2", Providers: []string{ProviderFastCPU}}), "Providers"},
		{"taken graph place", ok(OpInfo{Name: "sq2", Gen: GenHint{Graph: 1}}), "Gen.Graph"},
		{"attrs", ok(OpInfo{Name: "sq2", Attrs: []string{"C"}}), "Attrs"},
		{"arity", ok(OpInfo{Name: "sq2", MinArity: 2}), "MinArity"},
		{"accumulates", ok(OpInfo{Name: "sq2", Accumulates: true}), "Accumulates"},
		{"zero expression", ElementwiseOp{Info: smooth, D: x}, "F"},
		{"zero den", ElementwiseOp{Info: smooth, F: Num(1, 0), D: x}, "F"},
		{"forward uses y", ElementwiseOp{Info: smooth, F: Y(), D: x}, "F"},
		{"exact exp", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, Exact: true}, F: x.Exp(), D: Y()}, "Exact"},
		{"exact div not partial", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, Exact: true}, F: Num(1, 1).Div(x), D: x}, "Partial"},
		{"polynomial relu", ElementwiseOp{Info: OpInfo{Name: "sq2", Exact: true, Polynomial: true, Ties: "relu′(0) = 0"}, F: x.Relu(), D: x.Step()}, "Polynomial"},
		{"polynomial inexact", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, Polynomial: true}, F: x, D: Num(1, 1)}, "Polynomial"},
		{"smooth with ties", ok(OpInfo{Name: "sq2", Ties: "x"}), "Ties"},
		{"kink without ties", ElementwiseOp{Info: OpInfo{Name: "sq2"}, F: x.Abs(), D: x.Sign()}, "Ties"},
		{"zero-preserving pole", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, ZeroPreserving: true}, F: x.Log(), D: Num(1, 1).Div(x)}, "ZeroPreserving"},
		{"wrong power", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, Exact: true, Polynomial: true, Gen: GenHint{Power: 3}}, F: x.Mul(x), D: Num(2, 1).Mul(x)}, "Gen.Power"},
		{"power without polynomial", ElementwiseOp{Info: OpInfo{Name: "sq2", Smooth: true, Gen: GenHint{Power: 2}}, F: x.Mul(x), D: Num(2, 1).Mul(x)}, "Gen.Power"},
	}
	// The control: each malformed case differs from a valid entry in the
	// one field it names.
	for _, good := range []ElementwiseOp{
		ok(OpInfo{Name: "sq2", Exact: true, Polynomial: true, ZeroPreserving: true, IR: &IRForm{Tag: "sq2"}, Gen: GenHint{Graph: 1000}}),
		{Info: OpInfo{Name: "sq2", Exact: true, Partial: true, Smooth: true}, F: Num(1, 1).Div(x), D: Num(-1, 1).Div(x.Mul(x))},
		{Info: OpInfo{Name: "sq2", Exact: true, Ties: "abs′(0) = 0", ZeroPreserving: true}, F: x.Abs(), D: x.Sign()},
		{Info: OpInfo{Name: "sq2", Smooth: true}, F: x.Exp(), D: Y()},
	} {
		c, err := checkElementwise(good)
		if err != nil {
			t.Errorf("valid entry %s rejected: %v", good.F, err)
		}
		if good.Info.Polynomial && c.Info.Gen.Power != 2 {
			t.Errorf("x·x: Power %d, want 2", c.Info.Gen.Power)
		}
	}
	g := Generation()
	for _, c := range cases {
		err := RegisterElementwise(c.op)
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: err = %v, want one naming %s", c.name, err, c.field)
		}
	}
	if Generation() != g {
		t.Errorf("a rejected registration advanced the generation")
	}
	if _, err := Info("sq2"); err == nil {
		t.Errorf("a rejected registration is in the registry")
	}
}
