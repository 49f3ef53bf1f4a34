package irsem

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestDenoteAllRat checks every corpus graph over the exact rationals:
// the known output, a named rejection for inexact tags, or the expected
// data-dependent failure.
func TestDenoteAllRat(t *testing.T) {
	for _, c := range opCases(t) {
		t.Run(c.name, func(t *testing.T) {
			vals, err := DenoteAll(c.g, c.p, c.x)
			switch {
			case c.inexact:
				if err == nil || !strings.Contains(err.Error(), "has no exact rational semantics") {
					t.Fatalf("over rat: got %v, want a rejection by name", err)
				}
				var e *Error
				if !errors.As(err, &e) || e.Node < 0 || e.Op == "" || !strings.HasPrefix(err.Error(), "node ") {
					t.Fatalf("error %q does not name the node and tag", err)
				}
				return
			case c.ratErr != "":
				if err == nil || !strings.Contains(err.Error(), c.ratErr) {
					t.Fatalf("over rat: got %v, want %q", err, c.ratErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if len(vals) != len(c.g.Nodes) {
				t.Fatalf("%d values for %d nodes", len(vals), len(c.g.Nodes))
			}
			for i, v := range vals {
				if !v.Shape.Equal(c.g.Nodes[i].Shape) {
					t.Errorf("node %d: shape %v, declared %v", i, v.Shape, c.g.Nodes[i].Shape)
				}
			}
			if c.want != nil {
				if got := vals[c.g.OutputID]; !spec.SameTensor(got, *c.want) {
					t.Errorf("output %s, want %s", tensorString(got), tensorString(*c.want))
				}
			}
		})
	}
}

func relClose(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

// TestDenoteAllF64 checks the inexact tags against package math, and
// every exact result against its rounding.
func TestDenoteAllF64(t *testing.T) {
	for _, c := range opCases(t) {
		t.Run(c.name, func(t *testing.T) {
			out, err := Denote(c.g, c.p, ConvertTensor[spec.F64](c.x))
			if err != nil {
				t.Fatal(err)
			}
			if c.f64 != nil {
				for i, w := range c.f64 {
					if !relClose(float64(out.Data[i]), w, 1e-12) {
						t.Errorf("element %d: %v, want %v", i, out.Data[i], w)
					}
				}
			}
			if c.want != nil {
				for i, w := range c.want.Data {
					if !relClose(float64(out.Data[i]), w.Float64(), 1e-12) {
						t.Errorf("element %d: %v, exact %v", i, out.Data[i], w)
					}
				}
			}
		})
	}
}

// TestQuad is the chapter's worked example: ℓ = Σ(x⊙x + x⊙x) = 22.5 at
// x = (3, −1.5), with and without the detached branch, over four scalars.
func TestQuad(t *testing.T) {
	x := exampleTensor(t, "quad.input.json")
	for _, name := range []string{"quad.ir.json", "quad-detach.ir.json"} {
		g := exampleGraph(t, name)
		r, err := Denote(g, nil, x)
		if err != nil || r.String() != "45/2" {
			t.Errorf("%s over rat: %v, %v; want 45/2", name, r, err)
		}
		f, err := Denote(g, nil, ConvertTensor[spec.F32](x))
		if err != nil || f.Data[0] != 22.5 {
			t.Errorf("%s over f32: %v, %v", name, f, err)
		}
		d, err := Denote(g, nil, ConvertTensor[spec.F64](x))
		if err != nil || d.Data[0] != 22.5 {
			t.Errorf("%s over f64: %v, %v", name, d, err)
		}
		b, err := Denote(g, nil, ConvertTensor[spec.Binary32](x))
		if err != nil || b.Data[0].Float32() != 22.5 {
			t.Errorf("%s over binary32: %v, %v", name, b, err)
		}
	}
}

// TestGraphNotRewritten interprets one *Graph value over several scalars
// and checks that it is unchanged.
func TestGraphNotRewritten(t *testing.T) {
	for _, c := range opCases(t) {
		before := c.g.Clone()
		_, _ = DenoteAll(c.g, c.p, c.x)
		_, _ = DenoteAll(c.g, c.p, ConvertTensor[spec.F32](c.x))
		_, _ = DenoteAll(c.g, c.p, ConvertTensor[spec.F64](c.x))
		_, _ = DenoteAll(c.g, c.p, ConvertTensor[spec.Binary32](c.x))
		_, _ = DenoteAll(c.g, c.p, ConvertTensor[spec.Interval](c.x))
		if !c.g.Equal(before) {
			t.Errorf("%s: DenoteAll modified the graph", c.name)
		}
	}
}

// TestBinary32MatchesF32 checks the bit-level soft-float against the
// hardware float32 on every corpus graph: both round once per operation,
// so the value tables must agree bit for bit.
func TestBinary32MatchesF32(t *testing.T) {
	for _, c := range opCases(t) {
		f, err := DenoteAll(c.g, c.p, ConvertTensor[spec.F32](c.x))
		if err != nil {
			t.Fatalf("%s over f32: %v", c.name, err)
		}
		b, err := DenoteAll(c.g, c.p, ConvertTensor[spec.Binary32](c.x))
		if err != nil {
			t.Fatalf("%s over binary32: %v", c.name, err)
		}
		for i := range f {
			for j := range f[i].Data {
				if math.Float32bits(float32(f[i].Data[j])) != b[i].Data[j].Bits() {
					t.Errorf("%s: node %d element %d: f32 %v, binary32 %v", c.name, i, j, f[i].Data[j], b[i].Data[j])
				}
			}
		}
	}
}

// TestIntervalEnclosesRat checks soundness of the interval semantics on
// the exact graphs: every node's interval contains its exact value.
func TestIntervalEnclosesRat(t *testing.T) {
	for _, c := range opCases(t) {
		if c.inexact || c.ratErr != "" {
			continue
		}
		exact, err := DenoteAll(c.g, c.p, c.x)
		if err != nil {
			t.Fatalf("%s over rat: %v", c.name, err)
		}
		iv, err := DenoteAll(c.g, c.p, ConvertTensor[spec.Interval](c.x))
		if err != nil {
			t.Fatalf("%s over interval: %v", c.name, err)
		}
		for i := range exact {
			for j, r := range exact[i].Data {
				if !iv[i].Data[j].Contains(r.Big()) {
					t.Errorf("%s: node %d element %d: interval %v does not contain %v", c.name, i, j, iv[i].Data[j], r)
				}
			}
		}
	}
}

// TestIntervalInexactOps evaluates the inexact tags over intervals: the
// enclosure must contain the float64 reference.
func TestIntervalInexactOps(t *testing.T) {
	for _, c := range opCases(t) {
		if c.f64 == nil {
			continue
		}
		out, err := Denote(c.g, c.p, ConvertTensor[spec.Interval](c.x))
		if err != nil {
			t.Errorf("%s over interval: %v", c.name, err)
			continue
		}
		for i, w := range c.f64 {
			iv := out.Data[i]
			if !(iv.Lo <= w+1e-12*math.Abs(w) && w-1e-12*math.Abs(w) <= iv.Hi) {
				t.Errorf("%s element %d: %v does not contain ≈%v", c.name, i, iv, w)
			}
		}
	}
}

// TestRegistryRules checks that a tag mapped to a registry primitive gives
// exactly that primitive's result, and that the irsem rules that stand in
// for registry primitives with another signature agree with them.
func TestRegistryRules(t *testing.T) {
	reg := spec.Default[spec.F64]()
	xs := spec.Vector[spec.F64](-1.5, 0, 0.25, 3)
	for _, o := range Ops() {
		if o.Prim == "" || o.MinArity != 1 || len(o.Attrs) > 0 || len(o.Params) > 0 || o.Op == OpSafeLog {
			continue
		}
		in := xs
		if o.Op == OpLog {
			in = spec.Vector[spec.F64](0.5, 1, 2, 3)
		}
		g := graphOf(input(4), nd(o.Op, []int{0}, nil))
		info, _ := spec.Info(o.Prim)
		s, _ := info.InferShape(&spec.Attrs{}, []spec.Shape{{4}})
		g.Nodes[1].Shape = s
		got, err := Denote(g, nil, in)
		if err != nil {
			t.Fatalf("%s: %v", o.Op, err)
		}
		prim, _ := reg.Lookup(o.Prim)
		want, err := prim.Apply(&spec.Attrs{}, []spec.Tensor[spec.F64]{in})
		if err != nil || !spec.SameTensor(got, want) {
			t.Errorf("%s: %v, registry %s gives %v (%v)", o.Op, got, o.Prim, want, err)
		}
		if info.Exact != o.Exact {
			t.Errorf("%s: Exact %v, registry %s says %v", o.Op, o.Exact, o.Prim, info.Exact)
		}
	}
	// safe_log: ε from the graph equals the registry's safe_log with Eps.
	g := graphOf(input(4), nd(OpConst, nil, spec.Shape{}, withValueShape()), nd(OpSafeLog, []int{0, 1}, spec.Shape{4}))
	p := payloadOf(map[int]*Params{1: {Value: rtp(t, nil, "1/1000")}})
	got, err := Denote(g, p, xs)
	if err != nil {
		t.Fatal(err)
	}
	prim, _ := reg.Lookup("safe_log")
	want, _ := prim.Apply(&spec.Attrs{Eps: big.NewRat(1, 1000)}, []spec.Tensor[spec.F64]{xs})
	if !spec.SameTensor(got, want) {
		t.Errorf("safe_log: %v, registry %v", got, want)
	}
	// layernorm over one axis equals the registry's layer_norm.
	g = graphOf(input(2, 4), nd(OpLayerNorm, []int{0}, spec.Shape{2, 4}, withAxis(1)))
	x2 := spec.Tensor[spec.F64]{Shape: spec.Shape{2, 4}, Data: []spec.F64{1, 2, 4, 8, -1, 0, 1, 3}}
	got, err = Denote(g, nil, x2)
	if err != nil {
		t.Fatal(err)
	}
	prim, _ = reg.Lookup("layer_norm")
	want, _ = prim.Apply(&spec.Attrs{Axis: 1}, []spec.Tensor[spec.F64]{x2})
	if !spec.SameTensor(got, want) {
		t.Errorf("layernorm: %v, registry %v", got, want)
	}
}

// TestBernoulliKeepProbability checks the mask against the registry's
// bernoulli_mask with P = 1 − q, for several q, over Rat and F64.
func TestBernoulliKeepProbability(t *testing.T) {
	for _, q := range []string{"0", "1/4", "1/2", "9/10", "1"} {
		g := graphOf(input(2), nd(OpConst, nil, spec.Shape{}, withValueShape()), nd(OpBernoulliMask, []int{1}, spec.Shape{64}, withSeed(5)))
		p := payloadOf(map[int]*Params{1: {Value: rtp(t, nil, q)}})
		got, err := Denote(g, p, ints(spec.Shape{2}, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		prim, _ := spec.Default[spec.Rat]().Lookup("bernoulli_mask")
		drop := new(big.Rat).Sub(big.NewRat(1, 1), rat(t, q).Big())
		want, err := prim.Apply(&spec.Attrs{P: drop, Seed: 5}, []spec.Tensor[spec.Rat]{ints(spec.Shape{64}, make([]int64, 64)...)})
		if err != nil || !spec.SameTensor(got, want) {
			t.Errorf("q=%s: %v, registry %v (%v)", q, got, want, err)
		}
		f, err := Denote(g, p, spec.Vector[spec.F64](0, 0))
		if err != nil {
			t.Fatal(err)
		}
		for i := range f.Data {
			if float64(f.Data[i]) != want.Data[i].Float64() {
				t.Errorf("q=%s over f64: element %d is %v, want %v", q, i, f.Data[i], want.Data[i])
				break
			}
		}
	}
}

// TestDenoteErrors checks the evaluation failures and their messages.
func TestDenoteErrors(t *testing.T) {
	s := func(d ...int) spec.Shape { return spec.Shape(d) }
	linearG := graphOf(input(2), nd(OpLinear, []int{0}, s(3)))
	cases := []struct {
		name string
		run  func() error
		want string
	}{
		{"input shape", func() error {
			_, err := DenoteAll(graphOf(input(2), nd(OpRelu, []int{0}, s(2))), nil, ints(s(3), 1, 2, 3))
			return err
		}, "node 0 (input): shape mismatch: expected [2], got [3]"},
		{"malformed input", func() error {
			_, err := DenoteAll(graphOf(input(2)), nil, spec.Tensor[spec.Rat]{Shape: s(2)})
			return err
		}, "node 0 (input): malformed input tensor"},
		{"missing linear payload", func() error {
			_, err := DenoteAll(linearG, nil, ints(s(2), 1, 2))
			return err
		}, "node 1 (linear): missing linear payload for node 1"},
		{"missing W", func() error {
			_, err := DenoteAll(linearG, payloadOf(map[int]*Params{1: {B: rtp(t, s(3), "1", "2", "3")}}), ints(s(2), 1, 2))
			return err
		}, `node 1 (linear): payload entry missing "W"`},
		{"exp over rat", func() error {
			_, err := DenoteAll(graphOf(input(2), nd(OpExp, []int{0}, s(2))), nil, ints(s(2), 1, 2))
			return err
		}, "node 1 (exp): exp has no exact rational semantics"},
		{"sqrt over rat", func() error {
			_, err := DenoteAll(graphOf(input(1), nd(OpSqrt, []int{0}, s(1))), nil, ints(s(1), 2))
			return err
		}, "node 1 (sqrt): element 0: sqrt over rat: no exact rational square root of 2"},
		{"inv of zero over rat", func() error {
			_, err := DenoteAll(graphOf(input(1), nd(OpInv, []int{0}, s(1))), nil, ints(s(1), 0))
			return err
		}, "node 1 (inv): element 0: div over rat: division by zero"},
		{"raw log of zero", func() error {
			_, err := DenoteAll(graphOf(input(2), nd(OpLog, []int{0}, s(2))), nil, spec.Vector[spec.F64](1, 0))
			return err
		}, "node 1 (log): element 1: log of 0: raw log requires x > 0"},
		{"raw log of negative f32", func() error {
			_, err := DenoteAll(graphOf(input(1), nd(OpLog, []int{0}, s(1))), nil, spec.Vector[spec.F32](-2))
			return err
		}, "use safe_log"},
		{"graph check", func() error {
			_, err := DenoteAll(graphOf(input(2), nd(OpRelu, []int{0}, s(3))), nil, ints(s(2), 1, 2))
			return err
		}, `node 1 (relu): field "shape": declared [3], inferred [2]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

// TestSafeLogDomain: with ε ≤ 0, a softplus(x)+ε ≤ 0 is an error naming
// the node and the element on both IR paths (DenoteAll and the forward
// graph), never a NaN; with ε = 0 deep in the tail the stable form gives
// x itself (safe_log(−800) = −800 − e^-800/2, nearest float −800).
func TestSafeLogDomain(t *testing.T) {
	g := graphOf(input(3), nd(OpConst, nil, spec.Shape{}, withValueShape()), nd(OpSafeLog, []int{0, 1}, spec.Shape{3}))
	p := payloadOf(map[int]*Params{1: {Value: rtp(t, nil, "-1")}})
	x := spec.Vector[spec.F64](50, -50, 0)
	f, err := LowerForward[spec.F64](g, p)
	if err != nil {
		t.Fatal(err)
	}
	_, ferr := f.Run(x)
	_, derr := Denote(g, p, x)
	for name, err := range map[string]error{"DenoteAll": derr, "forward graph": ferr} {
		var ie *Error
		if !errors.As(err, &ie) || ie.Node != 2 || !strings.Contains(err.Error(), "element 1") || !strings.Contains(err.Error(), "softplus(x)+ε") {
			t.Errorf("%s with ε = −1: %v", name, err)
		}
	}
	p = payloadOf(map[int]*Params{1: {Value: rtp(t, nil, "0")}})
	out, err := Denote(g, p, spec.Vector[spec.F64](-800, 0, 50))
	if err != nil || out.Data[0] != -800 || !relClose(float64(out.Data[2]), math.Log(50), 1e-15) {
		t.Errorf("safe_log with ε = 0: %v (%v)", out, err)
	}
}

// TestFromRatFastPath: the small-fraction conversion equals the general
// correctly rounded FromRat for the IEEE scalars.
func TestFromRatFastPath(t *testing.T) {
	var cases []spec.Rat
	for _, q := range []int64{1, 2, 3, 7, 10, 1024, 1 << 24, 16777215, 999983} {
		for _, p := range []int64{0, 1, -1, 2, 5, -93, 1 << 23, -(1 << 24), 16777213, 12345678} {
			cases = append(cases, spec.NewRat(p, q))
		}
	}
	for _, r := range cases {
		var f32 spec.F32
		var f64 spec.F64
		var b32 spec.Binary32
		if got, want := FromRat[spec.F32](r), f32.FromRat(r.Big()); !got.Same(want) {
			t.Errorf("f32 %v: %v, want %v", r, got, want)
		}
		if got, want := FromRat[spec.F64](r), f64.FromRat(r.Big()); !got.Same(want) {
			t.Errorf("f64 %v: %v, want %v", r, got, want)
		}
		if got, want := FromRat[spec.Binary32](r), b32.FromRat(r.Big()); !got.Same(want) {
			t.Errorf("binary32 %v: %v, want %v", r, got, want)
		}
	}
}

// TestReduceMeanEmptyAxis: a reduce_mean over an empty axis is rejected
// by Check, at the node's axis field, before any path evaluates it.
func TestReduceMeanEmptyAxis(t *testing.T) {
	g := graphOf(input(2, 0), nd(OpReduceMean, []int{0}, spec.Shape{2}, withAxis(1)))
	err := g.Check()
	var ie *Error
	if !errors.As(err, &ie) || ie.Node != 1 || ie.Field != AttrAxis || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("Check: %v", err)
	}
	if _, err := Denote(g, nil, spec.Tensor[spec.F64]{Shape: spec.Shape{2, 0}}); err == nil {
		t.Error("DenoteAll accepted a mean over an empty axis")
	}
	if _, err := LowerForward[spec.Rat](g, nil); err == nil {
		t.Error("LowerForward accepted a mean over an empty axis")
	}
	// Along the non-empty axis 0 of [2 0] there are no lanes: fine.
	g = graphOf(input(2, 0), nd(OpReduceMean, []int{0}, spec.Shape{0}, withAxis(0)))
	if err := g.Check(); err != nil {
		t.Errorf("reduce_mean along the non-empty axis 0 of [2 0]: %v", err)
	}
}
