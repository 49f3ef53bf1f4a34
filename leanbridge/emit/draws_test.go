package emit

import (
	"math/big"
	"regexp"
	"strings"
	"testing"

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
		for _, s := range splitTop(m[1]) {
			c.shapes = append(c.shapes, readInts(t, strings.Trim(s, "[]")))
		}
		for _, s := range splitTop(m[2]) {
			c.xs = append(c.xs, readVec(t, s))
		}
		for _, s := range splitTop(m[3]) {
			c.dxs = append(c.dxs, readVec(t, s))
		}
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
