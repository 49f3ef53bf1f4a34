package cuda

import (
	"errors"

	"github.com/tlcheck/tlcheck/backend"
)

// ErrNotBuilt is returned by NewProvider in builds without the CUDA
// provider. This version of tlcheck ships none yet: the gorgonia.org/cu
// provider will live behind the build constraint `cuda && cgo`, and this
// stub behind its negation.
var ErrNotBuilt = errors.New("CUDA provider not built (rebuild with -tags cuda and CGO_ENABLED=1)")

// Built reports whether this binary contains the CUDA provider.
const Built = false

// NewProvider returns the CUDA provider; in this build it is not
// available.
func NewProvider() (backend.Provider, error) { return nil, ErrNotBuilt }
