package emit

import (
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/spec"
)

var dropoutLineRE = regexp.MustCompile(`^  \{ shapes := \[(.*)\], xs := \[(.*)\], dxs := \[(.*)\], outShape := \[([0-9, ]*)\], delta := \[(.*)\], c := .*, lhs := (mkRat \(?-?[0-9]+\)? [0-9]+), rhs := (mkRat \(?-?[0-9]+\)? [0-9]+), p := (mkRat [0-9]+ [0-9]+), mask := \[(.*)\] \},?$`)

// dropoutCase is one emitted dropout case read back from its Lean line.
type dropoutCase struct {
	x, dx, delta, mask vec
	out                []int
	p, lhs, rhs        *big.Rat
}

func readDropout(t *testing.T, src string) []dropoutCase {
	t.Helper()
	var out []dropoutCase
	for _, line := range strings.Split(src, "\n") {
		if !strings.HasPrefix(line, "  {") {
			continue
		}
		m := dropoutLineRE.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("unreadable dropout case line %q", line)
		}
		xs, dxs := splitTop(m[2]), splitTop(m[3])
		if len(xs) != 1 || len(dxs) != 1 {
			t.Fatalf("dropout case with %d inputs", len(xs))
		}
		out = append(out, dropoutCase{x: readVec(t, xs[0]), dx: readVec(t, dxs[0]), delta: readVec(t, m[5]),
			mask: readVec(t, "["+m[9]+"]"), out: readInts(t, m[4]), p: readRat(t, m[8]), lhs: readRat(t, m[6]), rhs: readRat(t, m[7])})
	}
	return out
}

// dropoutClaim is shapesOk and Claim of Prim.dropout (Spec.lean's
// dropoutFwd/Jvp/Vjp: smul (1/(1 − p)) (pmul mask ·), Lean's 1/0 = 0);
// nil when they hold.
func dropoutClaim(c dropoutCase) bool {
	k := rat(0, 1)
	if q := new(big.Rat).Sub(rat(1, 1), c.p); q.Sign() != 0 {
		k = new(big.Rat).Inv(q)
	}
	f := func(v vec) vec { return msmul(k, mpmul(c.mask, v)) }
	if n := size(c.out); len(f(c.x)) != n || len(c.delta) != n || len(c.x) != len(c.dx) {
		return false
	}
	l, r := mdot(f(c.dx), c.delta), mdot(c.dx, f(c.delta))
	return l.Cmp(c.lhs) == 0 && r.Cmp(c.rhs) == 0 && c.lhs.Cmp(c.rhs) == 0
}

// TestDropoutEmitted: every emitted dropout case's claim holds at the
// emitted mask; the mask is the seed's draw, derived here from the
// certificate's seed and spec.UniformRat by the documented rule (element
// i kept when the draw is ≥ p), not by the emitter's path; and a mask with
// one element flipped, or the draw of the next seed, makes some claim
// false.
func TestDropoutEmitted(t *testing.T) {
	dir := certDir(t)
	r, err := Emit(dir)
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, m := range r.Modules {
		if m.Path == "Adjointness/dropout.lean" {
			src = string(m.Bytes)
		}
	}
	if src == "" {
		t.Fatal("no dropout module emitted")
	}
	data, err := os.ReadFile(filepath.Join(dir, "adjointness", "dropout.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f certificates.AdjointnessFile
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cases := readDropout(t, src)
	if len(cases) != len(f.Cases) {
		t.Fatalf("%d cases emitted, the certificate has %d", len(cases), len(f.Cases))
	}
	draw := func(seed uint64, p *big.Rat, n int) vec {
		out := make(vec, n)
		for i := range out {
			out[i] = ind(spec.UniformRat(seed, i).Cmp(p) >= 0)
		}
		return out
	}
	flipped, reseeded := 0, 0
	for i, c := range cases {
		if !dropoutClaim(c) {
			t.Errorf("case %d: the claim is false at the emitted mask", i)
		}
		if want := draw(f.Cases[i].Attrs.Seed, c.p, len(c.x)); !sameVec(c.mask, want) {
			t.Errorf("case %d: mask %v, the seed %d draws %v", i, c.mask, f.Cases[i].Attrs.Seed, want)
		}
		for j := range c.mask {
			bad := c
			bad.mask = append(vec(nil), c.mask...)
			bad.mask[j] = new(big.Rat).Sub(rat(1, 1), c.mask[j])
			if !dropoutClaim(bad) {
				flipped++
				break
			}
		}
		bad := c
		bad.mask = draw(f.Cases[i].Attrs.Seed+1, c.p, len(c.x))
		if !dropoutClaim(bad) {
			reseeded++
		}
	}
	if flipped == 0 || reseeded == 0 {
		t.Errorf("planted masks caught: %d flipped, %d reseeded cases (want some of each)", flipped, reseeded)
	}
}

// TestLeanDropoutRejects: a drop probability the registry refuses is
// refused with the field named.
func TestLeanDropoutRejects(t *testing.T) {
	x := certificates.Tensor{Shape: []int{2}, Values: []string{"1", "2"}}
	for _, tc := range []struct{ p, want string }{{"", "p: \"\""}, {"1/x", "p: "}, {"2", "replaying the mask"}, {"-1/2", "replaying the mask"}} {
		_, err := leanDropout(certificates.Attrs{P: tc.p, Seed: 3}, x)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("p %q: %v, want an error naming %q", tc.p, err, tc.want)
		}
	}
}
