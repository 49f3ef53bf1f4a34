//go:build !cuda || !cgo

package cuda

import (
	"errors"
	"testing"
)

func TestStubSaysHowToBuild(t *testing.T) {
	p, err := NewProvider()
	if p != nil || !errors.Is(err, ErrNotBuilt) || Built {
		t.Fatalf("stub: provider %v, err %v", p, err)
	}
}
