package tape

import (
	"fmt"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// chain records x → neg → neg → … (n nodes) → sum over F32.
func chain(b *testing.B, n int) (*Tape[spec.F32], int) {
	t := New[spec.F32](nil)
	id, _ := t.Param("x", spec.Vector[spec.F32](1, 2, 3, 4))
	for i := 0; i < n-2; i++ {
		var err error
		if id, err = t.Apply("neg", nil, id); err != nil {
			b.Fatal(err)
		}
	}
	out, err := t.Apply("sum", nil, id)
	if err != nil {
		b.Fatal(err)
	}
	return t, out
}

// fanIn records n leaves feeding a left-deep tree of adds: every leaf
// reaches the output through the accumulation path.
func fanIn(b *testing.B, n int) (*Tape[spec.F32], int) {
	t := New[spec.F32](nil)
	x, _ := t.Param("x", spec.Vector[spec.F32](1, 2, 3, 4))
	acc := x
	for t.Len() < n-1 {
		var err error
		// each add reads x again: wide fan-in on node 0
		if acc, err = t.Apply("add", nil, acc, x); err != nil {
			b.Fatal(err)
		}
	}
	out, err := t.Apply("sum", nil, acc)
	if err != nil {
		b.Fatal(err)
	}
	return t, out
}

// BenchmarkReverseSweep reports ns/node for a chain and a fan-in DAG at
// 10k and 100k nodes; linear cost means ns/node stays flat.
func BenchmarkReverseSweep(b *testing.B) {
	for _, shape := range []struct {
		name  string
		build func(*testing.B, int) (*Tape[spec.F32], int)
	}{{"chain", chain}, {"fanin", fanIn}} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("%s/%d", shape.name, n), func(b *testing.B) {
				t, out := shape.build(b, n)
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := t.BackwardScalar(out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/node")
			})
		}
	}
}
