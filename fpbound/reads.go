package fpbound

import (
	"math/big"

	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// reads is the scalar algebra that counts how often a node's registry
// formula reads each element of one parent (doc.go, "Sums closed before a
// repeated read"). A value is a leaf (cell non-nil: that parent element
// itself, or a copy a move made of it) or derived (cell nil). Every scalar
// operation counts one read per operand slot that holds a leaf, so x + x
// reads x twice and (x − μ)·(x − μ) reads x once (the product reads the
// derived difference). run is shared by every data-dependent value of one
// count; a test of such a value (Compare, IsZero, Same, Float64, String)
// marks the run, since the formula's branches could then read differently
// than the count saw, and a marked count is not used.
type reads struct {
	cell *uint8
	run  *readRun
}

// readRun is one count's shared state: whether the formula tested a
// data-dependent value.
type readRun struct{ tested bool }

// op counts the reads of x and ys and returns their derived result.
func (x reads) op(ys ...reads) reads {
	r := x.run
	x.read()
	for _, y := range ys {
		y.read()
		if r == nil {
			r = y.run
		}
	}
	return reads{run: r}
}

// read counts one read of x if it is a leaf (saturating at 255).
func (x reads) read() {
	if x.cell != nil && *x.cell < 255 {
		*x.cell++
	}
}

// test marks the run of the data-dependent values among x and ys.
func (x reads) test(ys ...reads) {
	for _, v := range append([]reads{x}, ys...) {
		if v.run != nil {
			v.run.tested = true
		}
	}
}

func (x reads) Add(y reads) reads           { return x.op(y) }
func (x reads) Sub(y reads) reads           { return x.op(y) }
func (x reads) Mul(y reads) reads           { return x.op(y) }
func (x reads) Neg() reads                  { return x.op() }
func (x reads) Div(y reads) (reads, error)  { return x.op(y), nil }
func (x reads) Abs() reads                  { return x.op() }
func (x reads) Max(y reads) reads           { return x.op(y) }
func (x reads) Min(y reads) reads           { return x.op(y) }
func (x reads) Relu() reads                 { return x.op() }
func (x reads) Clamp(lo, hi reads) reads    { return x.op(lo, hi) }
func (x reads) Sign() reads                 { return x.op() }
func (x reads) Step() reads                 { return x.op() }
func (x reads) Sqrt() (reads, error)        { return x.op(), nil }
func (x reads) Exp() (reads, error)         { return x.op(), nil }
func (x reads) Log() (reads, error)         { return x.op(), nil }
func (x reads) Log1p() (reads, error)       { return x.op(), nil }
func (x reads) Tanh() (reads, error)        { return x.op(), nil }
func (x reads) Sin() (reads, error)         { return x.op(), nil }
func (x reads) Cos() (reads, error)         { return x.op(), nil }
func (x reads) Compare(y reads) (int, bool) { x.test(y); return 0, false }
func (x reads) IsZero() bool                { x.test(); return false }
func (x reads) Same(y reads) bool           { x.test(y); return false }
func (x reads) FromInt(int64) reads         { return reads{} }
func (x reads) FromRat(*big.Rat) reads      { return reads{} }
func (x reads) Float64() float64            { x.test(); return 0 }
func (x reads) String() string              { x.test(); return "reads" }
func (x reads) Kind() string                { return "reads" }

// readCounts counts, for every element of node c's parent q, how many
// operand slots of the scalar operations of c's registry formula read it,
// over the reads algebra with q's elements as leaves and every other
// parent element derived. ok is false when the counts are not known: the
// formula failed over reads, tested a data-dependent value (a branch
// could read differently), or c is not an application of registry steps.
func readCounts(g *irsem.Graph, apps []irsem.Application, c, q int) (counts []uint8, ok bool) {
	a := &apps[c]
	if a.Source || a.IROnly || len(a.Steps) == 0 || g.Nodes[c].Kind.Op == irsem.OpInput {
		return nil, false
	}
	run := &readRun{}
	var cells []uint8
	parents := make([]spec.Tensor[reads], len(g.Nodes[c].Parents))
	for t, p := range g.Nodes[c].Parents {
		sh := g.Nodes[p].Shape
		d := make([]reads, sh.Size())
		if p == q {
			if cells == nil {
				cells = make([]uint8, len(d))
			}
			for m := range d {
				d[m] = reads{cell: &cells[m], run: run}
			}
		} else {
			for m := range d {
				d[m] = reads{run: run}
			}
		}
		parents[t] = spec.Tensor[reads]{Shape: sh, Data: d}
	}
	reg := spec.Default[reads]()
	_, err := irsem.RunApplication(a, parents, func(_ int, s *irsem.Step, xs []spec.Tensor[reads]) (spec.Tensor[reads], error) {
		pr, err := reg.Lookup(s.Prim)
		if err != nil {
			return spec.Tensor[reads]{}, err
		}
		return pr.Apply(s.Attrs, xs)
	})
	if err != nil || run.tested || cells == nil {
		return nil, false
	}
	return cells, true
}

// rereadsAll reports that node c's formula is known to read every
// element of its parent q in no slot or in two or more, and some element
// in two or more: then q's pending sum is closed at q (doc.go, "Sums
// closed before a repeated read"). An element read in exactly one slot
// could be a term of a longer sum of c (M2(a)), so one such element keeps
// the fusion.
func rereadsAll(g *irsem.Graph, apps []irsem.Application, c, q int) bool {
	counts, ok := readCounts(g, apps, c, q)
	if !ok {
		return false
	}
	again := false
	for _, n := range counts {
		if n == 1 {
			return false
		}
		again = again || n > 1
	}
	return again
}
