package fpbound

import (
	"math"
	"testing"

	"github.com/tlcheck/tlcheck/irsem"
)

// TestGradCombinedProbe logs the three bounds of the largest input-gradient element.
func TestGradCombinedProbe(t *testing.T) {
	for _, act := range []irsem.Op{irsem.OpRelu, irsem.OpTanh} {
		for _, depth := range []int{0, 2, 8, 16} {
			gc := newGradCase(t, act, 16, depth, 11, false)
			got := flat32s(mlpGrad32(gc.ls, gc.x, gc.c, orders[0]))
			k := largestInput(gc, len(gc.x))
			s := gc.sharp[k]
			m := (s.Exact.Lo + s.Exact.Hi) / 2
			t.Logf("%s depth %d: reason %q classic %g boxed %g comb %v bound %g actual %g", act, depth, gc.combReason, s.Classic, gc.boxed[k], gc.comb != nil, s.Bound, math.Abs(float64(got[k])-m))
		}
	}
}
