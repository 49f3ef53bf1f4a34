package rapidtests

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tlcheck/tlcheck/backend"
	"github.com/tlcheck/tlcheck/refine"
	"github.com/tlcheck/tlcheck/spec"
)

// Provider refinement as a rapid property: every fast_cpu kernel (the ops
// of refine.Ops) on drawn shapes and float32 values, bound through the
// fast catalog and checked element by element by refine.Evaluate against
// the exact rational semantics within the capsule's proven rounding bound
// (go doc ./refine). The gate checks the same kernels on refine's own
// generated cases; this harness adds shrinking, so a provider fault
// reduces to the smallest tensor that shows it.

// providerValue draws a float32 that is exact in binary32: 0, ±1, ±2, …,
// ±6, optionally halved or quartered (shrinks toward 0).
func providerValue(t *rapid.T, label string) float32 {
	k := rapid.IntRange(0, 12).Draw(t, label)
	v := float32((k + 1) / 2)
	if k%2 == 0 && k > 0 {
		v = -v
	}
	return v / float32(int(1)<<rapid.IntRange(0, 2).Draw(t, label+".scale"))
}

// providerTensor draws a tensor of shape s.
func providerTensor(t *rapid.T, s spec.Shape, label string) refine.Bits {
	b := refine.Bits{Shape: s, Data: make([]uint32, s.Size())}
	for i := range b.Data {
		b.Data[i] = math.Float32bits(providerValue(t, fmt.Sprintf("%s[%d]", label, i)))
	}
	return b
}

// providerCase draws the parents (and the reduce_sum axis) of one case of
// op: small shapes, with 1-D sums and reduced axes long enough (up to 39)
// to cover every residue of the eight-lane kernels modulo 8 and several
// full rounds of lanes.
func providerCase(t *rapid.T, op string) ([]refine.Bits, int) {
	dim := func(label string, lo, hi int) int { return rapid.IntRange(lo, hi).Draw(t, label) }
	// lanes draws a length 8q + r, q ≤ 4, with the residue r drawn
	// uniformly (each residue of the eight-lane kernels has chance 1/8;
	// shrinks toward q = 0, then r toward lo).
	lanes := func(label string, lo int) int {
		r := dim(label+".mod8", lo, 7)
		return 8*dim(label+".div8", 0, 4) + r
	}
	switch op {
	case "matmul":
		m, k, n := dim("m", 1, 3), dim("k", 0, 20), dim("n", 1, 3)
		return []refine.Bits{providerTensor(t, spec.Shape{m, k}, "a"), providerTensor(t, spec.Shape{k, n}, "b")}, 0
	case "linear":
		b, in, out := dim("batch", 1, 3), dim("in", 0, 20), dim("out", 1, 3)
		return []refine.Bits{providerTensor(t, spec.Shape{b, in}, "x"), providerTensor(t, spec.Shape{out, in}, "W"),
			providerTensor(t, spec.Shape{out}, "b")}, 0
	case "sum":
		return []refine.Bits{providerTensor(t, spec.Shape{lanes("n", 0)}, "x")}, 0
	case "reduce_sum":
		s := spec.Shape{lanes("d0", 1)}
		if rapid.IntRange(0, 1).Draw(t, "rank2") == 1 {
			s = append(s, dim("d1", 1, 12))
		}
		return []refine.Bits{providerTensor(t, s, "x")}, dim("axis", 0, len(s)-1)
	}
	t.Fatalf("no provider case generator for %q: add one (refine.Ops lists it)", op)
	return nil, 0
}

// providerProperty checks one drawn case of a drawn fast_cpu op (of op
// when it is not "") with the providers ps.
func providerProperty(ps *backend.Providers, op string) func(*rapid.T) {
	ops := refine.Ops()
	cat := backend.FastCatalog()
	return func(t *rapid.T) {
		name := op
		if name == "" {
			name = ops[rapid.IntRange(0, len(ops)-1).Draw(t, "op")]
		}
		capsule, ok := cat.Lookup(backend.ProviderFastCPU + "." + name)
		if !ok {
			t.Fatalf("no capsule %s.%s in the fast catalog", backend.ProviderFastCPU, name)
		}
		b, err := ps.Bind(capsule)
		if err != nil {
			t.Fatal(err)
		}
		in, axis := providerCase(t, name)
		c, err := refine.Evaluate(b, name, axis, in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Failure != nil {
			t.Fatalf("%v; inputs %v", c.Failure, in)
		}
	}
}

// TestProviderRefinement discharges provider refinement as a property:
// every fast_cpu kernel holds its capsule's contract on drawn cases.
func TestProviderRefinement(t *testing.T) {
	for _, op := range refine.Ops() {
		t.Run(op, rapid.MakeCheck(providerProperty(backend.FastProviders(), op)))
	}
}

// droppedTail is fast_cpu with fastcpu's chunkSum bug planted: a chunk
// whose length is ≡ 7 (mod 8) loses its last element (the s6 += x[6] of
// the tail). Chunks are fastcpu.ChunkLen long, a multiple of 8, so the
// chunk that can end in such a tail is the last, and the bug is exactly
// "Sum of n elements with n % 8 = 7 ignores x[n−1]": the wrapper runs
// the real kernel without that element, which gives the buggy kernel's
// bits (the same lanes, minus one term). sum calls Sum on the whole
// tensor, and reduce_sum on every contiguous lane (innermost extent 1).
type droppedTail struct{ backend.Provider }

func (p droppedTail) Execute(op string, a *spec.Attrs, xs []spec.Tensor[spec.F32]) (spec.Tensor[spec.F32], error) {
	if len(xs) != 1 {
		return p.Provider.Execute(op, a, xs)
	}
	x := xs[0]
	switch op {
	case "sum":
		if n := len(x.Data); n%8 == 7 {
			return p.Provider.Execute(op, a, []spec.Tensor[spec.F32]{{Shape: spec.Shape{n - 1}, Data: x.Data[:n-1]}})
		}
	case "reduce_sum":
		axis := 0
		if a != nil {
			axis = a.Axis
		}
		if axis < 0 {
			axis += x.Shape.Rank()
		}
		if axis < 0 || axis >= x.Shape.Rank() || x.Shape[axis+1:].Size() != 1 || x.Shape[axis]%8 != 7 {
			break
		}
		n := x.Shape[axis]
		s := x.Shape.Clone()
		s[axis] = n - 1
		d := make([]spec.F32, 0, len(x.Data))
		for o := 0; o+n <= len(x.Data); o += n {
			d = append(d, x.Data[o:o+n-1]...)
		}
		return p.Provider.Execute(op, a, []spec.Tensor[spec.F32]{{Shape: s, Data: d}})
	}
	return p.Provider.Execute(op, a, xs)
}

// droppedTailProviders are the fast providers with droppedTail in place
// of fast_cpu.
func droppedTailProviders() *backend.Providers {
	ps, err := backend.NewProviders(backend.NewReferenceProvider(nil), droppedTail{backend.NewFastCPUProvider()})
	if err != nil {
		panic(err) // two distinct, named providers: cannot fail
	}
	return ps
}

// TestDroppedTailEmulatesChunkSumBug pins the emulation against an
// independent statement of the bug: on sums of every length 0…40 with
// the elements 1, 2, 3, …, the planted provider returns n(n+1)/2 − n when
// n % 8 = 7 and n(n+1)/2 otherwise (every partial sum is a small integer,
// exact in binary32).
func TestDroppedTailEmulatesChunkSumBug(t *testing.T) {
	p := droppedTail{backend.NewFastCPUProvider()}
	for n := range 41 {
		x := spec.Tensor[spec.F32]{Shape: spec.Shape{n}, Data: make([]spec.F32, n)}
		for i := range x.Data {
			x.Data[i] = spec.F32(i + 1)
		}
		want := n * (n + 1) / 2
		if n%8 == 7 {
			want -= n
		}
		y, err := p.Execute("sum", nil, []spec.Tensor[spec.F32]{x})
		if err != nil {
			t.Fatal(err)
		}
		if got := float32(y.Data[0]); got != float32(want) {
			t.Errorf("n=%d: planted sum %v, want %d", n, got, want)
		}
	}
}

// TestPlantedProviderChunkSum: fastcpu's chunkSum dropping its last
// element when n % 8 = 7 is caught by sum's provider property and shrinks
// to a sum of 7 elements (the shortest length with the bug) or 15.
// (Drawn over every fast_cpu op the property finds it too, through sum
// or reduce_sum, but may shrink to many lanes of 7, so the self-test
// fixes the op.)
func TestPlantedProviderChunkSum(t *testing.T) {
	failed, out := expectPlanted("PlantedProviderChunkSum", nil)
	if !failed {
		t.Fatal("a chunkSum that drops its last element at n % 8 = 7 went undetected")
	}
	if !strings.Contains(out, "refine: sum on provider fast_cpu") {
		t.Fatalf("counterexample does not name the op and provider:\n%s", out)
	}
	// Shrunk: one tensor of at most 15 elements (7, or 15 when the
	// shrinker stops at the next length with the bug) with an axis of
	// length ≡ 7 (mod 8).
	m := shrunkShape.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("counterexample prints no input shape:\n%s", out)
	}
	size, lane7 := 1, false
	for _, d := range strings.Split(m[1], ",") {
		n, err := strconv.Atoi(d)
		if err != nil {
			t.Fatalf("shape %q: %v", m[1], err)
		}
		size *= n
		lane7 = lane7 || n%8 == 7
	}
	if size > 15 || !lane7 {
		t.Fatalf("counterexample not shrunk to a lane of 7 or 15 elements: shape [%s]\n%s", m[1], out)
	}
	t.Logf("%s", firstLine(out))
}

// shrunkShape finds the shape of the first input in a provider failure.
var shrunkShape = regexp.MustCompile(`; inputs \[\{\[([0-9,]+)\] `)
