// Package spago runs tlcheck's harness cases on spaGO
// (github.com/nlpodyssey/spago v1.1.0): every registry primitive the
// cases use is built from spago's ag operators over mat.Dense[float64],
// forward and reverse mode are spago's own, and the harness judges the
// values (package harness has the obligations and the bound's theorem).
//
// # Mapping
//
// spago's tensors are matrices. A registry scalar is 1×1, a vector of n
// the column n×1, a matrix itself, and an image [1, 1, H, W] the matrix
// H×W. Elementwise primitives map to one ag operator each (neg Neg,
// square Square, abs Abs, relu ReLU, sigmoid, tanh, exp, log, sqrt, sin,
// cos, gelu, inv Reciprocal, softplus SoftPlus(x, 1, 20), scale
// ProdScalar, add, sub, mul Prod, div, max, min); clamp is
// Min(Max(x, lo), hi) against constant matrices; matmul is Mul; linear is
// Affine(b, W, x) for a vector and Mul(x, T(W)) + Stack(b, …, b) for a
// batch; sum is ReduceSum; reduce_sum and reduce_mean over an axis are
// ReduceSum/ReduceMean of each RowView (or ColView), concatenated;
// mse_loss is ReduceMean(Square(Sub(ŷ, y))) (spago's losses.MSE is half
// of that); reshape Reshape; flatten T(Flatten(x)); transpose T;
// broadcast_to a Stack of copies; slice Slice; concat Concat (vectors) or
// AppendRows (matrices, through T for axis 1); softmax and log_softmax
// Softmax and LogSoftmax of each row; layer_norm the formula of spago's
// nn/normalization/layernorm Model.Forward on each row; conv
// nn/convolution.Conv2D; max_pool MaxPooling; avg_pool ReduceMean of each
// window's Slice; shrink with bias = λ SoftShrink; detach StopGrad;
// gather a Concat of At (vectors) or a Stack of RowView (matrices).
// permute (rank 3) has no spago counterpart.
//
// # Machines
//
// "async" is ag's default execution, where Add, Affine, MulT, ProdScalar
// and ReLU run their forward in goroutines; "sync" is the same graph
// after ag.SetForceSyncExecution(true). Both use ag's concurrent backward
// (one goroutine per operator, gradients accumulated in arrival order).
// The flag is a package variable, so Run holds a mutex.
//
// # Running spago safely
//
// ag reports an error inside a forward or a backward with log.Fatalf,
// which ends the process, and runs the backward in goroutines, where a
// panic cannot be recovered. Run therefore computes every output shape
// with the registry's shape rules first, checks after every operator
// that spago's value has the dimensions the mapping expects, and feeds
// ReduceSum and ReduceMean column vectors only: their backward returns
// an n×1 gradient whatever the operand's dimensions, which the operand's
// producer rejects fatally (TestFindingMSEMatrixExits). Between forward
// and backward it checks every operand of ag.Log (log, log_softmax) for a
// negative or NaN element, on which Log's backward panics in a goroutine
// (TestFindingLogNegativeExits). What is left, a panic in a synchronous
// forward, is recovered into an error.
//
// The output gradient is seeded with the cotangent through AccGrad before
// ag.Backward, ag's documented way to back-propagate from a non-scalar,
// so the loss Σ(y ⊙ c) adds no operator of its own.
package spago
