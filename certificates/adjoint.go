package certificates

import (
	"fmt"

	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/obligations/casegen"
	"github.com/tlcheck/tlcheck/spec"
)

// AdjointCase is one certified instance of ⟨jvp(x,dx), δ⟩ = ⟨dx, vjp(x,δ)⟩.
// With oracle "rat" the sides are exact rationals that must be equal;
// with oracle "interval" they are enclosures that must overlap.
type AdjointCase struct {
	Attrs  Attrs    `json:"attrs"`
	Inputs []Tensor `json:"inputs"`
	Dx     []Tensor `json:"dx"`
	Delta  Tensor   `json:"delta"`
	Oracle string   `json:"oracle"`
	// Rat oracle.
	LHS string `json:"lhs,omitempty"`
	RHS string `json:"rhs,omitempty"`
	// Interval oracle.
	LHSEnclosure *Enclosure `json:"lhs_enclosure,omitempty"`
	RHSEnclosure *Enclosure `json:"rhs_enclosure,omitempty"`
}

// AdjointnessFile certifies the local adjointness of one primitive.
type AdjointnessFile struct {
	Header
	Op string `json:"op"`
	// Draw says where the cases come from: "" (omitted) for cases drawn
	// from the manifest's seed, case i from spec.CaseSeed(seed, op, i) —
	// the verifier regenerates and compares them; DrawRecorded for a
	// user's primitive's cases that no seed regenerates (rapid's) — the
	// verifier recomputes every claim from the recorded inputs alone.
	Draw  string        `json:"draw,omitempty"`
	Cases []AdjointCase `json:"cases"`
}

// ProduceAdjointness checks cases generated instances of op (case i drawn
// from spec.CaseSeed(seed, op, i), as tlcheck check draws it) and returns
// the certificate; it fails if any case does not hold.
func ProduceAdjointness(op string, cases int, seed uint64) (*AdjointnessFile, error) {
	return produceAdjointness(obligations.DefaultRegistries(), op, cases, "", func(i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
		return adjointInstance(op, seed, i)
	})
}

// produceAdjointness decides cases 0 … cases−1 of op, case i from
// draw(i), with the rules of reg, and returns the certificate marked
// with draw mode mode (AdjointnessFile.Draw); it fails if any case does
// not hold.
func produceAdjointness(reg obligations.Registries, op string, cases int, mode string,
	draw func(i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error)) (*AdjointnessFile, error) {
	f := &AdjointnessFile{Header: Header{Format: Format, Kind: KindAdjointness}, Op: op, Draw: mode}
	for i := 0; i < cases; i++ {
		inst, dxs, d, err := draw(i)
		if err != nil {
			return nil, err
		}
		o, err := reg.CheckAdjointness(inst, dxs, d)
		if err != nil {
			return nil, fmt.Errorf("%s case %d: %w", op, i, err)
		}
		c := AdjointCase{Attrs: EncodeAttrs(inst.Attrs), Delta: RatTensor(d), Oracle: string(o.Oracle)}
		for _, x := range inst.Xs {
			c.Inputs = append(c.Inputs, RatTensor(x))
		}
		for _, x := range dxs {
			c.Dx = append(c.Dx, RatTensor(x))
		}
		if c.Inputs == nil {
			c.Inputs, c.Dx = []Tensor{}, []Tensor{}
		}
		switch o.Oracle {
		case obligations.OracleRat:
			c.LHS, c.RHS = o.RatSides[0].String(), o.RatSides[1].String()
		case obligations.OracleInterval:
			l, r := IntervalEnclosure(o.IntervalSides[0]), IntervalEnclosure(o.IntervalSides[1])
			c.LHSEnclosure, c.RHSEnclosure = &l, &r
		}
		f.Cases = append(f.Cases, c)
	}
	return f, nil
}

// adjointInstance draws case i of op from the run seed exactly as
// tlcheck check draws it: from spec.CaseSeed(seed, op, i), the instance
// first, then its tangents (obligations.CheckOpCases does the same), so a
// certificate case i is replayed by tlcheck check --ops OP --case I.
func adjointInstance(op string, seed uint64, i int) (*casegen.Instance, []spec.Tensor[spec.Rat], spec.Tensor[spec.Rat], error) {
	src := casegen.NewRandSource(spec.CaseSeed(seed, op, i))
	inst, err := casegen.Generate(src, op)
	if err != nil {
		return nil, nil, spec.Tensor[spec.Rat]{}, err
	}
	shape, err := casegen.OutShape(inst)
	if err != nil {
		return nil, nil, spec.Tensor[spec.Rat]{}, err
	}
	dxs, d := casegen.Tangents(src, inst, shape)
	return inst, dxs, d, nil
}

// sides recomputes ⟨jvp(x,dx), δ⟩ and ⟨dx, vjp(x,δ)⟩ with the registry's
// rules over T — directly, not through the obligations package.
func sides[T spec.Scalar[T]](p *spec.Prim[T], a *spec.Attrs, xs, dxs []spec.Tensor[T], d spec.Tensor[T]) (T, T, error) {
	var z T
	y, err := p.Apply(a, xs)
	if err != nil {
		return z, z, err
	}
	if !y.Shape.Equal(d.Shape) {
		return z, z, fmt.Errorf("δ has shape %v, the output %v", d.Shape, y.Shape)
	}
	jv, err := p.JVP(a, xs, y, dxs)
	if err != nil {
		return z, z, err
	}
	vj, err := p.VJP(a, xs, y, d)
	if err != nil {
		return z, z, err
	}
	var lhs, rhs T
	for i := range jv.Data {
		lhs = lhs.Add(jv.Data[i].Mul(d.Data[i]))
	}
	if len(vj) != len(dxs) {
		return z, z, fmt.Errorf("vjp gave %d contributions for %d parents", len(vj), len(dxs))
	}
	for k := range dxs {
		if len(vj[k].Data) != len(dxs[k].Data) {
			return z, z, fmt.Errorf("contribution %d has %d elements, dx %d", k, len(vj[k].Data), len(dxs[k].Data))
		}
		// One sum per parent, then their sum (the producer's spec.DotList):
		// over Interval a single running sum over every parent rounds
		// differently, so a recomputed enclosure of a two-parent inexact
		// op (pow) would differ from the recorded one.
		var part T
		for i := range dxs[k].Data {
			part = part.Add(dxs[k].Data[i].Mul(vj[k].Data[i]))
		}
		rhs = rhs.Add(part)
	}
	return lhs, rhs, nil
}

// verifyAdjointness re-derives every case of an adjointness certificate.
//
// It also regenerates each case's inputs from the manifest's seed and
// checks the recorded inputs against them, so that the seed, the case
// count and the inputs are bound to each other.
//
// The rules come from t: the reference registry, extended by a user's
// primitives (Suite.AddOps). A file of a user's primitive marked
// DrawRecorded is not regenerated (no seed draws its cases): its claims
// are recomputed from the recorded inputs alone, and its attributes must
// be empty (a user's primitive has none).
func verifyAdjointness(t *opTable, file string, f *AdjointnessFile, m *Manifest) (int, error) {
	if err := checkName(file, "op", f.Op); err != nil {
		return 0, err
	}
	prat, err := t.rat(f.Op)
	if err != nil {
		return 0, fieldErr(file, "op", "%v", err)
	}
	piv, err := t.interval(f.Op)
	if err != nil {
		return 0, fieldErr(file, "op", "%v", err)
	}
	_, user := t.userOp(f.Op)
	switch {
	case f.Draw == "":
	case f.Draw == DrawRecorded && user:
	case f.Draw == DrawRecorded:
		return 0, fieldErr(file, "draw", "%q: %s is a built-in primitive, whose cases are always drawn from the manifest's seed", f.Draw, f.Op)
	default:
		return 0, fieldErr(file, "draw", "unknown draw mode %q (omitted: seeded; %q)", truncate(f.Draw), DrawRecorded)
	}
	if len(f.Cases) == 0 || len(f.Cases) != m.Cases {
		return 0, fieldErr(file, "cases", "%d cases, the manifest promises %d", len(f.Cases), m.Cases)
	}
	for i, c := range f.Cases {
		at := fmt.Sprintf("cases[%d]", i)
		a, err := c.Attrs.decode(file, at+".attrs")
		if err != nil {
			return 0, err
		}
		xs, err := decodeTensors(file, at+".inputs", c.Inputs)
		if err != nil {
			return 0, err
		}
		dxs, err := decodeTensors(file, at+".dx", c.Dx)
		if err != nil {
			return 0, err
		}
		d, err := c.Delta.decode(file, at+".delta")
		if err != nil {
			return 0, err
		}
		if len(dxs) != len(xs) {
			return 0, fieldErr(file, at+".dx", "%d tangents for %d inputs", len(dxs), len(xs))
		}
		for k := range xs {
			if !xs[k].Shape.Equal(dxs[k].Shape) {
				return 0, fieldErr(file, fmt.Sprintf("%s.dx[%d].shape", at, k), "tangent shape %v differs from input shape %v", dxs[k].Shape, xs[k].Shape)
			}
		}
		if f.Draw == DrawRecorded {
			if !sameAttrs(c.Attrs, EncodeAttrs(nil)) {
				return 0, fieldErr(file, at+".attrs", "a user's primitive has no attributes")
			}
		} else {
			gen, gdx, gd, err := t.draw(f.Op, m.Seed, i)
			if err != nil {
				return 0, fieldErr(file, at, "cannot regenerate the case: %v", err)
			}
			if err := sameTensors(file, at+".inputs", xs, gen.Xs); err != nil {
				return 0, seedErr(err)
			}
			if err := sameTensors(file, at+".dx", dxs, gdx); err != nil {
				return 0, seedErr(err)
			}
			if err := sameTensors(file, at+".delta", []spec.Tensor[spec.Rat]{d}, []spec.Tensor[spec.Rat]{gd}); err != nil {
				return 0, seedErr(err)
			}
			if got, want := c.Attrs, EncodeAttrs(gen.Attrs); !sameAttrs(got, want) {
				return 0, seedErr(fieldErr(file, at+".attrs", "recorded attributes differ from those the seed generates"))
			}
		}
		// One reading: a case carries exactly its oracle's claims; a
		// claim of the other oracle would be read by other consumers
		// but checked by nobody.
		if err := oracleClaims(file, at, &c); err != nil {
			return 0, err
		}
		switch c.Oracle {
		case string(obligations.OracleRat):
			lhs, rhs, err := sides(prat, a, xs, dxs, d)
			if err != nil {
				return 0, fieldErr(file, at, "recomputation failed: %v", err)
			}
			for _, s := range []struct {
				name, rec string
				got       spec.Rat
			}{{"lhs", c.LHS, lhs}, {"rhs", c.RHS, rhs}} {
				rec, err := decodeRat(file, at+"."+s.name, s.rec)
				if err != nil {
					return 0, err
				}
				if !rec.Same(s.got) {
					return 0, fieldErr(file, at+"."+s.name, "recorded %s, recomputed %s", s.rec, s.got)
				}
			}
			if !lhs.Same(rhs) {
				return 0, fieldErr(file, at, "adjointness fails: ⟨jvp,δ⟩ = %s ≠ ⟨dx,vjp⟩ = %s", lhs, rhs)
			}
		case string(obligations.OracleInterval):
			conv := func(ts []spec.Tensor[spec.Rat]) []spec.Tensor[spec.Interval] {
				out := make([]spec.Tensor[spec.Interval], len(ts))
				for k, t := range ts {
					out[k] = spec.Convert(t, func(r spec.Rat) spec.Interval { return spec.Interval{}.FromRat(r.Big()) })
				}
				return out
			}
			lhs, rhs, err := sides(piv, a, conv(xs), conv(dxs), conv([]spec.Tensor[spec.Rat]{d})[0])
			if err != nil {
				return 0, fieldErr(file, at, "recomputation failed: %v", err)
			}
			if c.LHSEnclosure == nil || c.RHSEnclosure == nil {
				return 0, fieldErr(file, at, "interval oracle without enclosures")
			}
			for _, s := range []struct {
				name string
				rec  *Enclosure
				got  spec.Interval
			}{{"lhs_enclosure", c.LHSEnclosure, lhs}, {"rhs_enclosure", c.RHSEnclosure, rhs}} {
				rec, err := s.rec.decode(file, at+"."+s.name)
				if err != nil {
					return 0, err
				}
				if !rec.Same(s.got) {
					return 0, fieldErr(file, at+"."+s.name, "recorded %s, recomputed %s", rec, s.got)
				}
			}
			if lhs.Hi < rhs.Lo || rhs.Hi < lhs.Lo {
				return 0, fieldErr(file, at, "adjointness fails: enclosures %s and %s do not overlap", lhs, rhs)
			}
		default:
			return 0, fieldErr(file, at+".oracle", "unknown oracle %q", truncate(c.Oracle))
		}
	}
	return len(f.Cases), nil
}

// oracleClaims requires a case to carry exactly the claims of its
// oracle: lhs and rhs for "rat", lhs_enclosure and rhs_enclosure for
// "interval", and nothing of the other oracle.
func oracleClaims(file, at string, c *AdjointCase) error {
	type claim struct {
		name    string
		present bool
	}
	rat := []claim{{"lhs", c.LHS != ""}, {"rhs", c.RHS != ""}}
	iv := []claim{{"lhs_enclosure", c.LHSEnclosure != nil}, {"rhs_enclosure", c.RHSEnclosure != nil}}
	var want, foreign []claim
	switch c.Oracle {
	case string(obligations.OracleRat):
		want, foreign = rat, iv
	case string(obligations.OracleInterval):
		want, foreign = iv, rat
	default:
		return fieldErr(file, at+".oracle", "unknown oracle %q", truncate(c.Oracle))
	}
	for _, f := range foreign {
		if f.present {
			return fieldErr(file, at+"."+f.name, "a claim of another oracle than the case's %q: not checked, so not allowed", c.Oracle)
		}
	}
	for _, f := range want {
		if !f.present {
			return fieldErr(file, at+"."+f.name, "missing: oracle %q claims it", c.Oracle)
		}
	}
	return nil
}

func sameTensors(file, field string, got, want []spec.Tensor[spec.Rat]) error {
	if len(got) != len(want) {
		return fieldErr(file, field, "%d tensors, the seed generates %d", len(got), len(want))
	}
	for k := range got {
		switch i, ok := spec.FirstDiff(got[k], want[k], nil); {
		case ok:
		case i < 0:
			return fieldErr(file, fmt.Sprintf("%s[%d].shape", field, k), "%v, the seed generates %v", got[k].Shape, want[k].Shape)
		default:
			return fieldErr(file, fmt.Sprintf("%s[%d].values[%d]", field, k, i), "%s, the seed generates %s", got[k].Data[i], want[k].Data[i])
		}
	}
	return nil
}

func sameAttrs(a, b Attrs) bool {
	x, err1 := encode(a)
	y, err2 := encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
