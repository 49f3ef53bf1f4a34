package emit

import (
	"math/big"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// The seeded draws as Spec.lean states them (Prim.rand_uniform,
// bernoulli_mask, keep_mask): the forward is the data Attr.values, the
// JVP zeros of its length, the VJP one zero contribution per input. This
// file re-evaluates shapesOk and Claim on every emitted case, and checks
// the emitted draw against an independent replay from the certificate's
// seed by the documented rules (spec.UniformRat(seed, i); bernoulli_mask
// keeps element i when the draw is ≥ p, keep_mask when it is ≥ 1 − q for
// the scalar input q) — the part Lean cannot check, having no splitmix64.

var drawLineRE = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := .*, values := \[(.*)\], lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+) \},?$`)

type drawCase struct {
	shapes        [][]int
	xs, dxs       []vec
	out           []int
	delta, values vec
	lhs, rhs      *big.Rat
}

func readDraws(t *testing.T, src string) []drawCase {
	t.Helper()
	var out []drawCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := drawLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable draw case line %q", line)
		}
		c := drawCase{out: readInts(t, m[4]), delta: readVec(t, "["+m[5]+"]"), values: readVec(t, "["+m[6]+"]"), lhs: readRat(t, m[7]), rhs: readRat(t, m[8])}
		c.shapes, c.xs, c.dxs = readOperands(t, m[1], m[2], m[3])
		out = append(out, c)
	}
	return out
}

// drawClaim is shapesOk and Claim of a draw: arity, sizes, the forward
// (values) of the output's size, and lhs = ⟨0, δ⟩ = 0 = Σ⟨dx, 0⟩ = rhs.
func drawClaim(op string, c drawCase) bool {
	arity := 1
	if op == "rand_uniform" {
		arity = 0
	}
	if len(c.xs) != arity || len(c.dxs) != arity || len(c.shapes) != arity {
		return false
	}
	for k := range c.xs {
		if len(c.xs[k]) != size(c.shapes[k]) || len(c.dxs[k]) != size(c.shapes[k]) {
			return false
		}
	}
	n := size(c.out)
	return len(c.delta) == n && len(c.values) == n && c.lhs.Sign() == 0 && c.rhs.Sign() == 0
}

// drawReplay is the documented draw of op at seed: rand_uniform's
// UniformRat(seed, i), and the two masks' 0/1 keep rule.
func drawReplay(op string, seed uint64, n int, p *big.Rat) vec {
	out := make(vec, n)
	for i := range out {
		u := spec.UniformRat(seed, i)
		switch {
		case op == "rand_uniform":
			out[i] = u
		case u.Cmp(p) >= 0:
			out[i] = rat(1, 1)
		default:
			out[i] = rat(0, 1)
		}
	}
	return out
}

func TestDrawsEmitted(t *testing.T) {
	for _, op := range []string{"rand_uniform", "bernoulli_mask", "keep_mask"} {
		src, f := emittedModule(t, op)
		cases := readDraws(t, src)
		if len(cases) != len(f.Cases) || len(cases) == 0 {
			t.Fatalf("%s: %d cases emitted, the certificate has %d", op, len(cases), len(f.Cases))
		}
		nextSeed, flipped := 0, 0 // planted faults caught
		for i, c := range cases {
			if !drawClaim(op, c) {
				t.Errorf("%s case %d: shapesOk or the claim is false under the transcription", op, i)
			}
			a := f.Cases[i].Attrs
			p := rat(0, 1)
			switch op {
			case "bernoulli_mask":
				p, _ = new(big.Rat).SetString(a.P)
			case "keep_mask": // keep where the draw is ≥ 1 − q
				p = new(big.Rat).Sub(rat(1, 1), c.xs[0][0])
			}
			want := drawReplay(op, a.Seed, size(c.out), p)
			if !sameVec(c.values, want) {
				t.Errorf("%s case %d: the emitted draw %v, the replay from seed %d %v", op, i, c.values, a.Seed, want)
			}
			// Planted: the next seed's draw (caught by the replay), and no draw.
			if !sameVec(drawReplay(op, a.Seed+1, size(c.out), p), c.values) {
				nextSeed++
			}
			// An emitter that writes the certificate's attrs.values (none)
			// instead of the draw: shapesOk fails, the kernel would refuse.
			unreplayed := c
			unreplayed.values = vec{}
			if !drawClaim(op, unreplayed) {
				flipped++
			}
		}
		if nextSeed == 0 || flipped == 0 {
			t.Errorf("%s: planted draws caught: %d with the next seed, %d with no draw written; want some of each", op, nextSeed, flipped)
		}
	}
}

// TestCompositionDraws: a model whose keep mask is drawn from its input q
// (IR tag bernoulli_mask with a parent, the registry's keep_mask) has its
// mask node written as Prim.keep_mask carrying the recorded draw as its
// values — the forward Lean checks against the recorded value — and the
// case holds under the transcription of the sweeps (the draw's tangent and
// contributions are zero, so the sides are those of the sum alone: 0).
func TestCompositionDraws(t *testing.T) {
	g, err := irsem.DecodeGraph([]byte(`{"format":"torchlean.ir.v1","input_id":0,"output_id":2,"nodes":[
  {"id":0,"kind":"input","parents":[],"shape":[]},
  {"id":1,"kind":"bernoulli_mask","parents":[0],"shape":[4],"seed":7},
  {"id":2,"kind":"sum","parents":[1],"shape":[]}
]}`))
	if err != nil {
		t.Fatal(err)
	}
	x, err := irsem.DecodeTensor([]byte(`{"shape":[],"values":["1/2"]}`))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := certificates.ModelSuite(&certificates.Model{Name: "draw", Graph: g, Input: x}, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "certs")
	if _, err := s.Certify(dir, certificates.Options{Seed: 0, Cases: 3}); err != nil {
		t.Fatal(err)
	}
	cases, skipped := modelComp(t, dir)
	if len(cases) == 0 {
		t.Fatalf("no composition case emitted (skipped: %v)", skipped)
	}
	want := drawReplay("keep_mask", 7, 4, rat(1, 2)) // keep where the draw is ≥ 1 − q = 1/2
	for i, c := range cases {
		if len(c.nodes) != 2 || c.nodes[0].prim != "keep_mask" {
			t.Fatalf("case %d: nodes %+v, want keep_mask then sum", i, c.nodes)
		}
		if !sameVec(c.nodes[0].value, want) || !sameVec(c.nodes[0].attr.values, want) {
			t.Errorf("case %d: the mask node's value %v and values %v, the replayed draw %v", i, c.nodes[0].value, c.nodes[0].attr.values, want)
		}
		if err := compHolds(c); err != nil {
			t.Errorf("case %d: %v", i, err)
		}
		// Planted: the mask node's values not the recorded draw (one
		// element flipped) — Prim.fwd differs from the recorded value.
		bad := c
		bad.nodes = append([]readNode{}, c.nodes...)
		bad.nodes[0].attr.values = append(vec{}, want...)
		bad.nodes[0].attr.values[0] = new(big.Rat).Sub(rat(1, 1), want[0])
		if compHolds(bad) == nil {
			t.Errorf("case %d: a mask node whose values are not its recorded draw passes", i)
		}
		if c.lhs.Sign() != 0 || c.rhs.Sign() != 0 {
			t.Errorf("case %d: sides %s, %s; a drawn mask has zero tangent", i, c.lhs.RatString(), c.rhs.RatString())
		}
	}
}
