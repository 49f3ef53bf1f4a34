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
