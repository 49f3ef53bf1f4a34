package compare

import (
	"bytes"
	"testing"

	"github.com/tlcheck/tlcheck/spec"
)

// FuzzReadGrads: the gradient-dump reader (compare-grad --grads) never
// panics, and what it accepts is what compare-grad relies on: the format
// tag, at least one gradient, and every tensor's shape valid and holding
// exactly its values. The seed corpus is testdata/fuzz/FuzzReadGrads.
func FuzzReadGrads(f *testing.F) {
	f.Add([]byte(`{"format":"tlcheck.grads.v1","grads":{"input":{"shape":[3],"values":[2.0,0.0,0.5]}}}`))
	f.Add([]byte(`{"format":"tlcheck.grads.v1","cotangent":{"output":{"shape":[1],"values":[1]}},"grads":{"w":{"shape":[2,1],"values":["NaN","-Infinity"]}}}`))
	f.Add([]byte(`{"format":"tlcheck.grads.v1","grads":{}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := ReadDump(bytes.NewReader(data))
		if err != nil {
			return
		}
		if d.Format != GradsFormat || len(d.Grads) == 0 {
			t.Fatalf("accepted %q: format %q, %d gradients", data, d.Format, len(d.Grads))
		}
		for name, g := range d.Grads {
			s := spec.Shape(g.Shape)
			if _, err := s.Check(0); err != nil || s.Size() != len(g.Values) {
				t.Fatalf("accepted gradient %q of shape %v with %d values (%v)", name, g.Shape, len(g.Values), err)
			}
		}
	})
}
