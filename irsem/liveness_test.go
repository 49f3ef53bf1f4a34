package irsem

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// TestDenoteFreesDeadValues: Denote's liveness-freeing evaluation gives
// the output DenoteAll gives, bit for bit, on every op case (over F64
// and Interval), and it really drops the value of every node that a later
// node reads and that is not the output, while keeping the output.
func TestDenoteFreesDeadValues(t *testing.T) {
	freed := 0
	for _, c := range opCases(t) {
		for _, kind := range []string{"f64", "interval"} {
			var all, live [][]float64
			var errAll, errLive error
			switch kind {
			case "f64":
				a, e1 := DenoteAll(c.g, c.p, ConvertTensor[spec.F64](c.x))
				l, e2 := denote(c.g, c.p, ConvertTensor[spec.F64](c.x), true)
				errAll, errLive = e1, e2
				for i := range a {
					all = append(all, f64Bits(a[i].Data))
				}
				for i := range l {
					live = append(live, f64Bits(l[i].Data))
				}
			case "interval":
				a, e1 := DenoteAll(c.g, c.p, ConvertTensor[spec.Interval](c.x))
				l, e2 := denote(c.g, c.p, ConvertTensor[spec.Interval](c.x), true)
				errAll, errLive = e1, e2
				for i := range a {
					all = append(all, ivBits(a[i].Data))
				}
				for i := range l {
					live = append(live, ivBits(l[i].Data))
				}
			}
			if (errAll == nil) != (errLive == nil) || (errAll != nil && errAll.Error() != errLive.Error()) {
				t.Fatalf("%s over %s: errors differ: %v / %v", c.name, kind, errAll, errLive)
			}
			if errAll != nil {
				continue
			}
			last := lastUses(c.g)
			for i := range all {
				switch {
				case i == c.g.OutputID || last[i] < 0:
					if !sameBits(all[i], live[i]) {
						t.Fatalf("%s over %s: node %d differs between DenoteAll and the freeing evaluation", c.name, kind, i)
					}
				case len(live[i]) != 0:
					t.Fatalf("%s over %s: node %d (read last by node %d) was not freed", c.name, kind, i, last[i])
				default:
					freed++
				}
			}
		}
	}
	if freed == 0 {
		t.Fatal("no value was freed in any case")
	}
}

func f64Bits(d []spec.F64) []float64 {
	out := make([]float64, len(d))
	for i, v := range d {
		out[i] = float64(v)
	}
	return out
}

func ivBits(d []spec.Interval) []float64 {
	out := make([]float64, 0, 2*len(d))
	for _, v := range d {
		out = append(out, v.Lo, v.Hi)
	}
	return out
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}
