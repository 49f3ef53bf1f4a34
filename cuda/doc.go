// Package cuda is the home of the CUDA provider on gorgonia.org/cu. The
// real provider must build only with the tag `cuda` and cgo enabled
// (gorgonia.org/cu calls cuInit in its package init and exits the process on
// a machine without a GPU, so it must never be linked into an ordinary
// build). This version ships only the stub, in every build: NewProvider
// returns ErrNotBuilt, and the checked_cuda capsules are declared in
// package backend but bind to nothing, so --device cuda fails with a clear
// message.
package cuda
