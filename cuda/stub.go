//go:build !cuda || !cgo

package cuda

import (
	"errors"

	"github.com/tlcheck/tlcheck/backend"
)

// ErrNotBuilt is returned by NewProvider in builds without the CUDA
// provider: the gorgonia.org/cu provider is compiled only with the build
// constraint `cuda && cgo`, and this stub behind its negation.
var ErrNotBuilt = errors.New("CUDA provider not built (rebuild with -tags cuda and CGO_ENABLED=1)")

// Built reports whether this binary contains the CUDA provider.
const Built = false

// NewProvider returns the CUDA provider; in this build it is not
// available.
func NewProvider() (backend.Provider, error) { return nil, ErrNotBuilt }

// NewProviderWith returns the CUDA provider with options o; in this build
// it is not available.
func NewProviderWith(Options) (backend.Provider, error) { return nil, ErrNotBuilt }
