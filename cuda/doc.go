// Package cuda is the CUDA provider on gorgonia.org/cu. The real provider
// builds only with the tags `cuda` and cgo enabled (gorgonia.org/cu calls
// cuInit in its package init and exits the process on a machine without a
// GPU, so it must never be linked into an ordinary build); every other
// build gets a stub whose constructor returns ErrNotBuilt.
package cuda
