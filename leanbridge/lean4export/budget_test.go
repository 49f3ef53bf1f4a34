package lean4export

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tlcheck/tlcheck/limits"
)

// nameChain is an export of n names, each one component longer than the
// one before: a.a.….a.
func nameChain(n int) string {
	var b strings.Builder
	b.WriteString(metaLine + "\n")
	for k := 1; k <= n; k++ {
		fmt.Fprintf(&b, `{"in":%d,"str":{"pre":%d,"str":"a"}}`+"\n", k, k-1)
	}
	return b.String()
}

// TestParseLeanBytes: the bytes a parse holds — lines and name keys,
// whose total grows quadratically along a chain of names — are held to
// lean-bytes (issue 26 point 1: a 2^22-line chain took 23 GB). The
// expected total is derived from the key encoding: the key of the k-th
// name is k copies of one encoded component.
func TestParseLeanBytes(t *testing.T) {
	const n = 200
	doc := nameChain(n)
	comp := len(encodeComponent(component{s: "a"}))
	held := int64(len(doc) - n - 1) // every line without its newline
	for k := 1; k <= n; k++ {
		held += int64(k * comp)
	}
	for _, c := range []struct {
		budget int64
		ok     bool
	}{{held, true}, {held - 1, false}} {
		func() {
			defer limits.Set(limits.Limits{LeanBytes: c.budget})()
			_, err := Parse(strings.NewReader(doc))
			if c.ok != (err == nil) {
				t.Errorf("budget %d (needed %d): %v", c.budget, held, err)
			}
			if err != nil && !strings.Contains(err.Error(), "over the lean-bytes limit") {
				t.Errorf("budget %d: error %v does not name lean-bytes", c.budget, err)
			}
		}()
	}
}
