package fpbound

import (
	"math"
	"math/big"
	"testing"

	"github.com/tlcheck/tlcheck/fpbound/nets"
	"github.com/tlcheck/tlcheck/irsem"
	"github.com/tlcheck/tlcheck/spec"
)

// exactSums returns, for every element o of node j of a ReLU MLP (input,
// then linear and relu nodes), Σ_k Σ_i |A_k[o,i]|·ē_{k,i} over big.Rat,
// with A_k = ∂v_j/∂v_k at the exact point — the products of the weights
// and of the relus' 0/1 derivatives, derived here from the exact values,
// not from the code under test (only the local errors ē are its) — and
// false when a relu's exact input is 0 (no single derivative).
func exactSums(g *irsem.Graph, p *irsem.Payload, vals []spec.Tensor[spec.Rat], nodes []foNode, j int) ([]*big.Rat, bool) {
	n := len(vals[j].Data)
	a := make([][]*big.Rat, n) // rows: elements of node j; columns: node k's
	for o := range a {
		a[o] = make([]*big.Rat, n)
		for i := range a[o] {
			a[o][i] = new(big.Rat)
		}
		a[o][o].SetInt64(1)
	}
	sums := make([]*big.Rat, n)
	for o := range sums {
		sums[o] = new(big.Rat)
	}
	for k := j; k >= 0; k-- {
		for o := range a {
			for i, e := range nodes[k].local {
				t := new(big.Rat).Abs(a[o][i])
				sums[o].Add(sums[o], t.Mul(t, new(big.Rat).SetFloat64(e)))
			}
		}
		nd := &g.Nodes[k]
		switch nd.Kind.Op {
		case irsem.OpInput:
			return sums, true
		case irsem.OpRelu:
			for i, v := range vals[nd.Parents[0]].Data {
				s := v.Big().Sign()
				if s == 0 {
					return nil, false
				}
				if s < 0 {
					for o := range a {
						a[o][i].SetInt64(0)
					}
				}
			}
		case irsem.OpLinear:
			w := p.Entries[k].W
			out, in := w.Shape[0], w.Shape[1]
			b := make([][]*big.Rat, n)
			for o := range b {
				b[o] = make([]*big.Rat, in)
				for i := range b[o] {
					b[o][i] = new(big.Rat)
					for m := 0; m < out; m++ {
						b[o][i].Add(b[o][i], new(big.Rat).Mul(a[o][m], w.Data[m*in+i].Big()))
					}
				}
			}
			a = b
		default:
			panic("exactSums: " + nd.Kind.Op)
		}
	}
	return sums, true
}

// checkSweeps runs SharpBounds on a ReLU MLP and checks every dense
// sweep's bounds against exactSums: never below, and, for a sweep without
// a non-diagonal cut (level 0), above by at most a relative 10⁻⁹ (the
// float64 centres' roundings and their residual charges) and never above
// the interval sweep's bound (the reference the dense sweep replaced) by
// more than that. It returns the number of
// violations and of sweeps checked.
func checkSweeps(t *testing.T, seed uint64, depth int) (bad, checked int) {
	t.Helper()
	g, p, x := mlp(seed, 12, 12, depth, 6, irsem.OpRelu)
	vals, err := irsem.DenoteAll(g, p, irsem.ConvertTensor[spec.Rat](x))
	if err != nil {
		t.Fatal(err)
	}
	reg := spec.Default[adj]()
	sweepSeen = func(j int, nodes []foNode, bound []float64) {
		sums, ok := exactSums(g, p, vals, nodes, j)
		if !ok {
			return
		}
		checked++
		cutAt := nodes[j].lvl > 0
		for o, s := range sums {
			b := new(big.Rat).SetFloat64(bound[o])
			hi := new(big.Rat).Mul(s, big.NewRat(1e9+1, 1e9))
			if b.Cmp(s) < 0 || (!cutAt && s.Sign() > 0 && b.Cmp(hi) > 0) {
				bad++
				continue
			}
			if cutAt {
				continue // a cut sweep only bounds the exact sum (doc.go, "Cuts")
			}
			iv, _, reason, err := sweep(g, nodes, j, o, reg)
			if err != nil || reason != "" {
				t.Fatalf("node %d element %d: the interval sweep: %v %s", j, o, err, reason)
			}
			if bound[o] > iv*(1+1e-9) {
				bad++
			}
		}
	}
	defer func() { sweepSeen = nil }()
	if _, err := SharpBounds(g, p, x, Options{}); err != nil {
		t.Fatal(err)
	}
	return bad, checked
}

// TestDenseSweepExact: on ReLU MLPs (every kink decided, so the adjoint
// over the boxes is the exact adjoint) the dense sweep's bound of every
// node equals Σ|A|·ē computed exactly, up to a relative 10⁻⁹, at depths
// where the interval sweep's adjoints have wrapped; and a dense sweep
// with a transposed Jacobian, with the relus' derivatives dropped, or
// with the linear nodes' weights read transposed (linearIn), is caught.
func TestDenseSweepExact(t *testing.T) {
	skipUnderRace(t)
	for _, c := range []struct {
		seed  uint64
		depth int
	}{{1, 1}, {2, 3}, {3, 8}, {4, 16}} {
		for _, stride := range []int{1, 0, 2} { // every sweep at level 0; the default; non-diagonal cuts too
			if c.depth == 16 && stride != 0 && !exhaustive() {
				continue // depth 16's other strides: TLCHECK_EXHAUSTIVE=1 (ci/exhaustive.sh), 4 s of CPU
			}
			sweepStride, sweepNonDiagonal = stride, stride == 2
			bad, checked := checkSweeps(t, c.seed, c.depth)
			sweepStride, sweepNonDiagonal = 0, false
			if checked < c.depth || bad != 0 {
				t.Errorf("seed %d depth %d stride %d: %d of the elements of %d sweeps off the exact sum", c.seed, c.depth, stride, bad, checked)
			}
		}
	}
	for _, fault := range []int{1, 2, 3} {
		sweepFault = fault
		bad, checked := checkSweeps(t, 5, 4)
		sweepFault = 0
		if checked == 0 || bad == 0 {
			t.Errorf("planted fault %d not caught (%d sweeps checked)", fault, checked)
		}
	}
}

// diagonalPairs reports whether every Jacobian in pairs (interleaved
// intervals, n × n) is diagonal, at least one of them not nil.
func diagonalPairs(pairs [][]float64) bool {
	seen := false
	for _, p := range pairs {
		if p == nil {
			continue
		}
		n := int(math.Sqrt(float64(len(p) / 2)))
		if n*n*2 != len(p) {
			return false
		}
		for e := 0; e < n*n; e++ {
			if e/n != e%n && (p[2*e] != 0 || p[2*e+1] != 0) {
				return false
			}
		}
		seen = true
	}
	return seen
}

// TestLinearInJacobians: on the figures' nets (ReLU and tanh MLPs, the
// GPT-2 stack, whose linear nodes have several rows) every local Jacobian
// that linearIn reads off the weights, and every diagonal one that
// diagonalJac reads from the one VJP run with the cotangent of ones (the
// relu, tanh, add and mul nodes; at least one per net), is bit for bit
// the one the one-hot VJP runs compute, and the whole sharp result (every element's
// first-order bound, estimate and exact enclosure) is bit-identical with
// linearIn off; linearIn reading the weights transposed (planted) is
// caught.
func TestLinearInJacobians(t *testing.T) {
	var cases []*nets.Net
	for _, c := range []struct {
		act   irsem.Op
		init  nets.Init
		depth int
	}{{irsem.OpRelu, nets.Default, 4}, {irsem.OpRelu, nets.Kaiming, 8}, {irsem.OpTanh, nets.Default, 2}} {
		n, err := nets.MLP(uint64(100+c.depth), 64, c.depth, c.act, c.init)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, n)
	}
	n, err := nets.GPT2(301, 4, 8, 2, 1, nets.Default, nets.FinfoMin)
	if err != nil {
		t.Fatal(err)
	}
	cases = append(cases, n)
	defer func() { jacCompare, jacVJPOnly, sweepFault = nil, false, 0 }()
	for _, fault := range []int{0, 3} {
		for _, n := range cases {
			jacVJPOnly, sweepFault = true, 0
			want, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
			if err != nil {
				t.Fatal(err)
			}
			jacVJPOnly, sweepFault = false, fault
			read, diff, diag := 0, 0, 0
			jacCompare = func(k int, li, vjp [][]float64) {
				read++
				if diagonalPairs(vjp) {
					diag++
				}
				for p := range li {
					for i := range li[p] {
						if math.Float64bits(li[p][i]) != math.Float64bits(vjp[p][i]) {
							diff++
							return
						}
					}
				}
			}
			got, err := SharpBounds(n.Graph, n.Payload, n.Input, Options{})
			jacCompare, sweepFault = nil, 0
			if err != nil {
				t.Fatal(err)
			}
			same := len(got) == len(want)
			for i := range got {
				if same && (math.Float64bits(got[i].FirstOrder) != math.Float64bits(want[i].FirstOrder) || math.Float64bits(got[i].Estimate) != math.Float64bits(want[i].Estimate) || got[i].Exact != want[i].Exact) {
					same = false
				}
			}
			switch {
			case read == 0 || diag == 0:
				t.Errorf("%s: %d Jacobians read (%d diagonal)", n.Name, read, diag)
			case fault == 0 && (diff != 0 || !same):
				t.Errorf("%s: %d of %d Jacobians read off the weights differ from VJP's; results identical: %v", n.Name, diff, read, same)
			case fault == 3 && diff == 0:
				t.Errorf("%s: the planted transposed read was not caught", n.Name)
			}
		}
	}
}

// TestMulAddUp: mulAddUp is addUp(acc, mulUp(x, y)) bit for bit on every
// triple of edge values (0, the smallest subnormal, 1, values whose
// product underflows or overflows, +∞) and on random ones.
func TestMulAddUp(t *testing.T) {
	vals := []float64{0, 0x1p-1074, 0x1p-1022, 0x1p-600, 0.3, 1, 1.5, 3, 0x1p600, math.MaxFloat64, inf}
	for i := 0; i < 40; i++ {
		vals = append(vals, math.Ldexp(1+float64(i)/41, i*7-140))
	}
	for _, acc := range vals {
		for _, x := range vals {
			for _, y := range vals {
				want, got := addUp(acc, mulUp(x, y)), mulAddUp(acc, x, y)
				if math.Float64bits(want) != math.Float64bits(got) {
					t.Fatalf("mulAddUp(%g, %g, %g) = %g, addUp(mulUp) = %g", acc, x, y, got, want)
				}
			}
		}
	}
}
