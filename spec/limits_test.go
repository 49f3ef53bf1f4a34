package spec

import (
	"runtime"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
)

// TestShapeLimits: the per-axis limit and the span (the product of the
// non-zero extents) bound every shape, also one without elements; the
// expected verdicts follow from the definitions in package limits.
func TestShapeLimits(t *testing.T) {
	defer limits.Set(limits.Limits{Axis: 1000, Elements: 4096})()
	cases := []struct {
		s    Shape
		n    int
		want string // "" = accepted with n elements
	}{
		{Shape{1000}, 1000, ""},
		{Shape{1001}, 0, "axis 0 has extent 1001: over the axis limit 1000 (raise it with --max-axis or TLCHECK_MAX_AXIS)"},
		{Shape{0, 2147483647}, 0, "axis 1 has extent 2147483647: over the axis limit 1000"},
		{Shape{0, 1000, 4}, 0, ""}, // span 4000 ≤ 4096
		{Shape{0, 1000, 5}, 0, "has no elements, but its non-zero extents multiply to more than 4096: over the elements limit 4096"},
		{Shape{5, 0, 1000}, 0, "has no elements, but its non-zero extents multiply to more than 4096"},
		{Shape{64, 64}, 4096, ""},
		{Shape{64, 65}, 0, "has more than 4096 elements: over the elements limit 4096 (raise it with --max-elements or TLCHECK_MAX_ELEMENTS)"},
	}
	for _, c := range cases {
		n, err := c.s.Check(0)
		switch {
		case c.want == "" && (err != nil || n != c.n):
			t.Errorf("%v: got %d, %v; want %d", c.s, n, err, c.n)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !limits.IsLimit(err)):
			t.Errorf("%v: got %v, want a limits error containing %q", c.s, err, c.want)
		}
	}
	if got := (Shape{0, 7, 0, 3}).Span(); got != 21 {
		t.Errorf("Span = %d, want 21", got)
	}
}

// allocated runs f and returns the bytes it allocated (runtime.MemStats
// TotalAlloc): an upper bound on its peak heap growth.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// TestEmptyLanesAllocateNothing: a lane-wise rule (softmax, log_softmax,
// layer_norm) on a tensor without elements but with a long lane axis
// allocates no per-position index: before, [0, 2^26] allocated 512 MiB
// of lane indices per call.
func TestEmptyLanesAllocateNothing(t *testing.T) {
	reg := Default[F64]()
	x := Tensor[F64]{Shape: Shape{0, 1 << 26}}
	for _, op := range []string{"softmax", "log_softmax", "layer_norm"} {
		p, err := reg.Lookup(op)
		if err != nil {
			t.Fatal(err)
		}
		for _, axis := range []int{0, 1} {
			var ferr error
			n := allocated(func() { _, ferr = p.Apply(&Attrs{Axis: axis}, []Tensor[F64]{x}) })
			if n > 1<<20 {
				t.Errorf("%s axis %d on %v allocated %d bytes", op, axis, x.Shape, n)
			}
			if op == "layer_norm" && axis == 0 && (ferr == nil || !strings.Contains(ferr.Error(), "empty axis")) {
				t.Errorf("layer_norm over the empty axis: got %v", ferr)
			}
		}
	}
}

// TestRatBitBudget: a rule result over Rat longer than the rat-bits limit
// is refused naming the element and the limit; one at the limit passes.
// (2^k − 1)/1 has k + 1 bits (k for the numerator, 1 for the denominator).
func TestRatBitBudget(t *testing.T) {
	defer limits.Set(limits.Limits{RatBits: 65})()
	mul, err := Default[Rat]().Lookup("mul")
	if err != nil {
		t.Fatal(err)
	}
	two32, _ := ParseRat("4294967296") // 2^32: 33 bits
	x := Tensor[Rat]{Shape: Shape{2}, Data: []Rat{NewRat(1, 1), two32}}
	// 1·1 = 1 (2 bits) and 2^32·2^32 = 2^64 (65 + 1 = 66 bits): element 1 fails.
	_, err = mul.Apply(nil, []Tensor[Rat]{x, x})
	if err == nil || !limits.IsLimit(err) || !strings.Contains(err.Error(), "mul: element 1: forward: a rational of 66 bits: over the rat-bits limit 65") {
		t.Fatalf("got %v", err)
	}
	y := Tensor[Rat]{Shape: Shape{2}, Data: []Rat{NewRat(1, 1), NewRat(1<<31, 1)}} // 2^62: 64 bits
	if _, err := mul.Apply(nil, []Tensor[Rat]{y, y}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
	// The VJP is checked too: δ·x with δ = 2^32.
	yy, _ := mul.Apply(nil, []Tensor[Rat]{y, y})
	_, err = mul.VJP(nil, []Tensor[Rat]{x, x}, yy, x)
	if err == nil || !limits.IsLimit(err) {
		t.Fatalf("vjp: got %v", err)
	}
	if got := RatBitsOf(x); got != 2+34 {
		t.Errorf("RatBitsOf = %d, want 36", got)
	}
}
