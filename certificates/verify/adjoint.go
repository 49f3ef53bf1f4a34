package verify

import (
	"fmt"

	"github.com/tlcheck/tlcheck/certificates"
	"github.com/tlcheck/tlcheck/obligations"
	"github.com/tlcheck/tlcheck/spec"
)

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
func verifyAdjointness(t *certificates.OpTable, file string, f *certificates.AdjointnessFile, m *certificates.Manifest) (int, error) {
	if err := certificates.CheckName(file, "op", f.Op); err != nil {
		return 0, err
	}
	prat, err := t.Rat(f.Op)
	if err != nil {
		return 0, certificates.FieldErr(file, "op", "%v", err)
	}
	piv, err := t.Interval(f.Op)
	if err != nil {
		return 0, certificates.FieldErr(file, "op", "%v", err)
	}
	_, user := t.UserOp(f.Op)
	switch {
	case f.Draw == "":
	case f.Draw == certificates.DrawRecorded && user:
	case f.Draw == certificates.DrawRecorded:
		return 0, certificates.FieldErr(file, "draw", "%q: %s is a built-in primitive, whose cases are always drawn from the manifest's seed", f.Draw, f.Op)
	default:
		return 0, certificates.FieldErr(file, "draw", "unknown draw mode %q (omitted: seeded; %q)", certificates.Truncate(f.Draw), certificates.DrawRecorded)
	}
	if len(f.Cases) == 0 || len(f.Cases) != m.Cases {
		return 0, certificates.FieldErr(file, "cases", "%d cases, the manifest promises %d", len(f.Cases), m.Cases)
	}
	for i := range f.Cases {
		if err := verifyAdjointCase(t, file, f, i, m.Seed, prat, piv); err != nil {
			return 0, err
		}
	}
	return len(f.Cases), nil
}

// adjointValues are a case's attributes, inputs, tangents and cotangent,
// decoded from the file.
type adjointValues struct {
	attrs *spec.Attrs
	xs    []spec.Tensor[spec.Rat]
	dxs   []spec.Tensor[spec.Rat]
	d     spec.Tensor[spec.Rat]
}

// verifyAdjointCase decodes case i, binds it to the seed (or, for a
// recorded draw, requires it to have no attributes) and recomputes its
// oracle's claims.
func verifyAdjointCase(t *certificates.OpTable, file string, f *certificates.AdjointnessFile, i int, seed uint64, prat *spec.Prim[spec.Rat], piv *spec.Prim[spec.Interval]) error {
	c := &f.Cases[i]
	at := fmt.Sprintf("cases[%d]", i)
	v, err := decodeAdjointCase(file, at, c)
	if err != nil {
		return err
	}
	if f.Draw == certificates.DrawRecorded {
		if !sameAttrs(c.Attrs, certificates.EncodeAttrs(nil)) {
			return certificates.FieldErr(file, at+".attrs", "a user's primitive has no attributes")
		}
	} else if err := bindAdjointCase(t, file, at, f.Op, seed, i, c, v); err != nil {
		return err
	}
	// One reading: a case carries exactly its oracle's claims; a
	// claim of the other oracle would be read by other consumers
	// but checked by nobody.
	if err := oracleClaims(file, at, c); err != nil {
		return err
	}
	switch c.Oracle {
	case string(obligations.OracleRat):
		return verifyRatSides(file, at, c, prat, v)
	case string(obligations.OracleInterval):
		return verifyIntervalSides(file, at, c, piv, v)
	}
	return certificates.FieldErr(file, at+".oracle", "unknown oracle %q", certificates.Truncate(c.Oracle))
}

// decodeAdjointCase decodes a case's values and checks that every input
// has a tangent of its shape.
func decodeAdjointCase(file, at string, c *certificates.AdjointCase) (*adjointValues, error) {
	a, err := c.Attrs.Decode(file, at+".attrs")
	if err != nil {
		return nil, err
	}
	xs, err := certificates.DecodeTensors(file, at+".inputs", c.Inputs)
	if err != nil {
		return nil, err
	}
	dxs, err := certificates.DecodeTensors(file, at+".dx", c.Dx)
	if err != nil {
		return nil, err
	}
	d, err := c.Delta.Decode(file, at+".delta")
	if err != nil {
		return nil, err
	}
	if len(dxs) != len(xs) {
		return nil, certificates.FieldErr(file, at+".dx", "%d tangents for %d inputs", len(dxs), len(xs))
	}
	for k := range xs {
		if !xs[k].Shape.Equal(dxs[k].Shape) {
			return nil, certificates.FieldErr(file, fmt.Sprintf("%s.dx[%d].shape", at, k), "tangent shape %v differs from input shape %v", dxs[k].Shape, xs[k].Shape)
		}
	}
	return &adjointValues{attrs: a, xs: xs, dxs: dxs, d: d}, nil
}

// bindAdjointCase regenerates case i of op from the seed and requires the
// recorded inputs, tangents, cotangent and attributes.
func bindAdjointCase(t *certificates.OpTable, file, at, op string, seed uint64, i int, c *certificates.AdjointCase, v *adjointValues) error {
	gen, gdx, gd, err := t.Draw(op, seed, i)
	if err != nil {
		return certificates.FieldErr(file, at, "cannot regenerate the case: %v", err)
	}
	if err := sameTensors(file, at+".inputs", v.xs, gen.Xs); err != nil {
		return seedErr(err)
	}
	if err := sameTensors(file, at+".dx", v.dxs, gdx); err != nil {
		return seedErr(err)
	}
	if err := sameTensors(file, at+".delta", []spec.Tensor[spec.Rat]{v.d}, []spec.Tensor[spec.Rat]{gd}); err != nil {
		return seedErr(err)
	}
	if got, want := c.Attrs, certificates.EncodeAttrs(gen.Attrs); !sameAttrs(got, want) {
		return seedErr(certificates.FieldErr(file, at+".attrs", "recorded attributes differ from those the seed generates"))
	}
	return nil
}

// verifyRatSides recomputes both sides of a "rat" case exactly and
// requires the recorded values and their equality.
func verifyRatSides(file, at string, c *certificates.AdjointCase, prat *spec.Prim[spec.Rat], v *adjointValues) error {
	lhs, rhs, err := sides(prat, v.attrs, v.xs, v.dxs, v.d)
	if err != nil {
		return certificates.FieldErr(file, at, "recomputation failed: %v", err)
	}
	for _, s := range []struct {
		name, rec string
		got       spec.Rat
	}{{"lhs", c.LHS, lhs}, {"rhs", c.RHS, rhs}} {
		rec, err := certificates.DecodeRat(file, at+"."+s.name, s.rec)
		if err != nil {
			return err
		}
		if !rec.Same(s.got) {
			return certificates.FieldErr(file, at+"."+s.name, "recorded %s, recomputed %s", s.rec, s.got)
		}
	}
	if !lhs.Same(rhs) {
		return certificates.FieldErr(file, at, "adjointness fails: ⟨jvp,δ⟩ = %s ≠ ⟨dx,vjp⟩ = %s", lhs, rhs)
	}
	return nil
}

// verifyIntervalSides recomputes both sides of an "interval" case over
// spec.Interval and requires the recorded enclosures and their overlap.
func verifyIntervalSides(file, at string, c *certificates.AdjointCase, piv *spec.Prim[spec.Interval], v *adjointValues) error {
	conv := func(ts []spec.Tensor[spec.Rat]) []spec.Tensor[spec.Interval] {
		out := make([]spec.Tensor[spec.Interval], len(ts))
		for k, t := range ts {
			out[k] = spec.Convert(t, func(r spec.Rat) spec.Interval { return spec.Interval{}.FromRat(r.Big()) })
		}
		return out
	}
	lhs, rhs, err := sides(piv, v.attrs, conv(v.xs), conv(v.dxs), conv([]spec.Tensor[spec.Rat]{v.d})[0])
	if err != nil {
		return certificates.FieldErr(file, at, "recomputation failed: %v", err)
	}
	if c.LHSEnclosure == nil || c.RHSEnclosure == nil {
		return certificates.FieldErr(file, at, "interval oracle without enclosures")
	}
	for _, s := range []struct {
		name string
		rec  *certificates.Enclosure
		got  spec.Interval
	}{{"lhs_enclosure", c.LHSEnclosure, lhs}, {"rhs_enclosure", c.RHSEnclosure, rhs}} {
		rec, err := s.rec.Decode(file, at+"."+s.name)
		if err != nil {
			return err
		}
		if !rec.Same(s.got) {
			return certificates.FieldErr(file, at+"."+s.name, "recorded %s, recomputed %s", rec, s.got)
		}
	}
	if lhs.Hi < rhs.Lo || rhs.Hi < lhs.Lo {
		return certificates.FieldErr(file, at, "adjointness fails: enclosures %s and %s do not overlap", lhs, rhs)
	}
	return nil
}

// oracleClaims requires a case to carry exactly the claims of its
// oracle: lhs and rhs for "rat", lhs_enclosure and rhs_enclosure for
// "interval", and nothing of the other oracle.
func oracleClaims(file, at string, c *certificates.AdjointCase) error {
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
		return certificates.FieldErr(file, at+".oracle", "unknown oracle %q", certificates.Truncate(c.Oracle))
	}
	for _, f := range foreign {
		if f.present {
			return certificates.FieldErr(file, at+"."+f.name, "a claim of another oracle than the case's %q: not checked, so not allowed", c.Oracle)
		}
	}
	for _, f := range want {
		if !f.present {
			return certificates.FieldErr(file, at+"."+f.name, "missing: oracle %q claims it", c.Oracle)
		}
	}
	return nil
}

func sameTensors(file, field string, got, want []spec.Tensor[spec.Rat]) error {
	if len(got) != len(want) {
		return certificates.FieldErr(file, field, "%d tensors, the seed generates %d", len(got), len(want))
	}
	for k := range got {
		switch i, ok := spec.FirstDiff(got[k], want[k], nil); {
		case ok:
		case i < 0:
			return certificates.FieldErr(file, fmt.Sprintf("%s[%d].shape", field, k), "%v, the seed generates %v", got[k].Shape, want[k].Shape)
		default:
			return certificates.FieldErr(file, fmt.Sprintf("%s[%d].values[%d]", field, k, i), "%s, the seed generates %s", got[k].Data[i], want[k].Data[i])
		}
	}
	return nil
}

func sameAttrs(a, b certificates.Attrs) bool {
	x, err1 := certificates.Encode(a)
	y, err2 := certificates.Encode(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}
